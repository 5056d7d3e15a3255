//! A client's connection under the retry policy shared by every workload: transient DBMS
//! errors are tried again, lost connections reopened, both bounded and counted. A statement
//! is retried alone ([`Session::run`]); the statements of a transaction are retried together
//! ([`Session::transaction`]): after a deadlock or a serialization failure the DBMS has rolled
//! back all of them, so trying only the failed one again would commit half a transaction.

use std::time::Duration;

use anyhow::Result;

use crate::dbms::{ErrorKind, Transactions, error_kind};
use crate::metrics::recorder::{Op, Recorder};

/// Opens one connection of the kind a workload uses (`dyn InsertBenchmarkConnection`, `dyn
/// SqlConnection`).
pub type Connect<'a, C> = &'a (dyn Fn() -> Result<Box<C>> + Sync);

/// A client's connection with the retry policy: transient errors are retried (up to
/// `max_tries` tries per statement), a lost connection is reopened (up to `max_reconnects`
/// times per thread) and the statement tried again; both are counted in the recorder.
pub struct Session<'a, C: ?Sized> {
    connect: Connect<'a, C>,
    conn: Box<C>,
    max_tries: u32,
    reconnects_left: u32,
}

impl<'a, C: ?Sized + Send + 'static> Session<'a, C> {
    /// Connects with `connect`, with `max_tries` tries per statement and `max_reconnects`
    /// reconnects.
    pub fn connect(connect: Connect<'a, C>, max_tries: u32, max_reconnects: u32) -> Result<Self> {
        Ok(Session {
            connect,
            conn: connect()?,
            max_tries: max_tries.max(1),
            reconnects_left: max_reconnects,
        })
    }

    /// Runs `f` on the connection under the retry policy, counting retries of `op`.
    pub fn run<T>(
        &mut self,
        rec: &mut Recorder,
        op: Op,
        mut f: impl FnMut(&mut C) -> Result<T>,
    ) -> Result<T> {
        let mut tries = 1;
        loop {
            let err = match f(&mut self.conn) {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            match error_kind(&err) {
                ErrorKind::Transient if tries < self.max_tries => {
                    // Back off a little, more each time (1, 2, 4 ... 64 ms).
                    crate::mux::sleep(Duration::from_millis(1 << (tries - 1).min(6)));
                }
                ErrorKind::ConnectionLost if self.reconnects_left > 0 && tries < self.max_tries => {
                    self.reconnect(rec).map_err(|e| {
                        e.context(format!("connection lost ({err:#}); reconnecting failed"))
                    })?;
                }
                ErrorKind::Transient => {
                    return Err(err.context(format!("gave up after {tries} tries (--max-tries)")));
                }
                ErrorKind::ConnectionLost => {
                    return Err(err.context("connection lost (--max-reconnects reached)"));
                }
                ErrorKind::Fatal => return Err(err),
            }
            rec.add_retry(op);
            tries += 1;
        }
    }

    /// Runs `f` in one transaction (`writes`: it will change rows) under the retry policy:
    /// begin, `f`, commit; after an error the transaction is rolled back and, when the error
    /// is transient (deadlock, serialization failure, lock wait timeout) or the connection
    /// was lost (and reopened), tried again from its start, as one retry of `op`. `f` must
    /// start afresh on each try (what it counts, it counts again).
    pub fn transaction<T>(
        &mut self,
        rec: &mut Recorder,
        op: Op,
        writes: bool,
        mut f: impl FnMut(&mut C) -> Result<T>,
    ) -> Result<T>
    where
        C: Transactions,
    {
        let done = self.transaction_or_rollback(rec, op, writes, |c| f(c).map(Some))?;
        done.ok_or_else(|| anyhow::anyhow!("transaction rolled back"))
    }

    /// As [`Session::transaction`], but `f` may end the transaction by rolling it back, as
    /// the transaction's logic asks (TPC-C's New-Order with an unused item): `Ok(None)` rolls
    /// back instead of committing, and is returned as it is, not tried again.
    pub fn transaction_or_rollback<T>(
        &mut self,
        rec: &mut Recorder,
        op: Op,
        writes: bool,
        mut f: impl FnMut(&mut C) -> Result<Option<T>>,
    ) -> Result<Option<T>>
    where
        C: Transactions,
    {
        self.run(rec, op, |c| {
            c.begin(writes)?;
            let outcome = f(c).and_then(|v| {
                match v {
                    Some(_) => c.commit()?,
                    None => c.rollback()?,
                }
                Ok(v)
            });
            if outcome.is_err() {
                // What failed decides what happens next; a failed rollback (the connection
                // is gone) changes nothing of that.
                let _ = c.rollback();
            }
            outcome
        })
    }

    /// Opens a new connection, backing off 100 ms doubling, for up to ~6 s.
    fn reconnect(&mut self, rec: &mut Recorder) -> Result<()> {
        self.reconnects_left -= 1;
        let mut last = None;
        for attempt in 0..6 {
            crate::mux::sleep(Duration::from_millis(100 << attempt));
            match (self.connect)() {
                Ok(c) => {
                    self.conn = c;
                    rec.add_reconnect();
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| anyhow::anyhow!("cannot reconnect")))
    }

    /// The connection, to hold open until the step's end is sampled.
    pub fn into_connection(self) -> Box<C> {
        self.conn
    }
}

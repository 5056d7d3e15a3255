//! A client's connection under the retry policy shared by every workload: transient DBMS
//! errors are tried again, lost connections reopened, both bounded and counted.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::dbms::{Connection, Dbms, ErrorKind, error_kind};
use crate::metrics::recorder::{Op, Recorder};

/// A client's connection with the retry policy: transient errors are retried (up to
/// `max_tries` tries per statement), a lost connection is reopened (up to `max_reconnects`
/// times per thread) and the statement tried again; both are counted in the recorder.
pub struct Session<'a> {
    dbms: &'a Arc<dyn Dbms>,
    conn: Box<dyn Connection>,
    max_tries: u32,
    reconnects_left: u32,
}

impl<'a> Session<'a> {
    /// Connects, with `max_tries` tries per statement and `max_reconnects` reconnects.
    pub fn connect(dbms: &'a Arc<dyn Dbms>, max_tries: u32, max_reconnects: u32) -> Result<Self> {
        Ok(Session {
            dbms,
            conn: dbms.connect()?,
            max_tries: max_tries.max(1),
            reconnects_left: max_reconnects,
        })
    }

    /// Runs `f` on the connection under the retry policy, counting retries of `op`.
    pub fn run<T>(
        &mut self,
        rec: &mut Recorder,
        op: Op,
        mut f: impl FnMut(&mut dyn Connection) -> Result<T>,
    ) -> Result<T> {
        let mut tries = 1;
        loop {
            let err = match f(self.conn.as_mut()) {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            match error_kind(&err) {
                ErrorKind::Transient if tries < self.max_tries => {
                    // Back off a little, more each time (1, 2, 4 ... 64 ms).
                    std::thread::sleep(Duration::from_millis(1 << (tries - 1).min(6)));
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

    /// Opens a new connection, backing off 100 ms doubling, for up to ~6 s.
    fn reconnect(&mut self, rec: &mut Recorder) -> Result<()> {
        self.reconnects_left -= 1;
        let mut last = None;
        for attempt in 0..6 {
            std::thread::sleep(Duration::from_millis(100 << attempt));
            match self.dbms.connect() {
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
    pub fn into_connection(self) -> Box<dyn Connection> {
        self.conn
    }
}

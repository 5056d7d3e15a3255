//! The Insert Benchmark's clients as drivers of the generic client loop
//! ([`crate::runner::client_loop`]): the inserter, the deleter and the querier say what to send
//! next; the loop paces, times, records and retries.
//!
//! Hot-path rules: each driver owns its generator and buffers; per op it generates into reused
//! buffers and calls one typed DBMS method. The only state shared is the [`TableState`] of its
//! table (a few atomics).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::TableState;
use super::data::{QueryGenerator, RowGenerator, stream};
use crate::dbms::{Dbms, InsertBenchmarkConnection, POINT_QUERY_IDS, RowBatch, Table};
use crate::metrics::recorder::{Op, Recorder};
use crate::request::InsertBenchmarkSpec;
use crate::runner::client::{ThreadCtx, ThreadSpec};
use crate::runner::client_loop::{self, Driver, Pacing};
use crate::runner::session::Session;

/// The connection the Insert Benchmark's clients send on.
type Conn = dyn InsertBenchmarkConnection;

/// How an inserter paces itself.
#[derive(Clone, Copy, Debug)]
pub enum Pace {
    /// As fast as possible: (rows, batch).
    Rows(u64, usize),
    /// On a schedule: (rows/s, batch, duration).
    Rate(u32, usize, Duration),
}

fn unix_now_s() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The role of a query thread (which reads from replicas when the run does).
const QUERY_ROLE: &str = "query";

/// What every thread of a client works with in a step.
pub struct ClientTable<'s> {
    /// Target.
    pub dbms: &'s Arc<dyn Dbms>,
    /// Workload parameters (value ranges, seed).
    pub spec: &'s InsertBenchmarkSpec,
    /// The client's table.
    pub table: &'s Table,
    /// The table's queue state.
    pub state: Arc<TableState>,
    /// Client number.
    pub client: usize,
    /// Step name (part of the random streams' names).
    pub step: &'s str,
    /// The step's warm-up (zero: none), for every thread of the step.
    pub warmup: Duration,
}

impl ClientTable<'_> {
    /// A thread of this client with `role`, running `driver` at `pacing`.
    fn thread<'s, D>(&self, role: &'static str, driver: D, pacing: Pacing) -> ThreadSpec<'s>
    where
        D: Driver<Conn = Conn> + Send + 's,
        Self: 's,
    {
        let dbms = Arc::clone(self.dbms);
        let tries = (self.spec.max_tries, self.spec.max_reconnects);
        let client = self.client;
        // Queries read where the run reads (the replicas with --read-from replicas).
        let connect = move || {
            if role == QUERY_ROLE {
                dbms.connect_reader(client)
            } else {
                dbms.connect_insert_benchmark()
            }
        };
        client_loop::thread(client, role, connect, tries, driver, pacing, self.warmup)
    }
}

fn wake_deleters(state: &TableState) {
    if let Ok(deleters) = state.deleters.lock() {
        for t in deleters.iter() {
            t.unpark();
        }
    }
}

/// Multi-row INSERTs at the head of the queue.
struct Inserter<'s> {
    table: &'s Table,
    state: Arc<TableState>,
    generator: RowGenerator,
    batch: RowBatch,
    batch_rows: usize,
    /// Rows still to insert (unbounded on a schedule).
    left: u64,
}

impl Driver for Inserter<'_> {
    type Conn = Conn;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        if self.left == 0 {
            return Ok(None);
        }
        let n = (self.batch_rows as u64).min(self.left) as usize;
        self.generator.fill(&mut self.batch, n, unix_now_s());
        Ok(Some(Op::Insert))
    }

    fn send(&mut self, session: &mut Session<'_, Conn>, rec: &mut Recorder) -> Result<u64> {
        let (table, batch) = (self.table, &self.batch);
        let last_id = session
            .run(rec, Op::Insert, |c| c.insert(table, batch))
            .with_context(|| format!("insert into {}", table.name))?;
        let n = batch.len() as u64;
        self.state.head.fetch_max(last_id, Ordering::AcqRel);
        self.state.inserted.fetch_add(n, Ordering::AcqRel);
        wake_deleters(&self.state);
        self.left -= n;
        Ok(n)
    }
}

/// Marks an inserter finished (and wakes the deleters) however its thread ends.
impl Drop for Inserter<'_> {
    fn drop(&mut self) {
        self.state.inserters_running.fetch_sub(1, Ordering::AcqRel);
        wake_deleters(&self.state);
    }
}

/// An inserting thread: multi-row INSERTs at the head of the queue, as fast as possible or on
/// the background writer's schedule.
pub fn inserter(c: ClientTable<'_>, pace: Pace) -> ThreadSpec<'_> {
    let generator = RowGenerator::new(c.spec, stream(c.spec.seed, c.step, c.client));
    let (batch_rows, left, pacing) = match pace {
        Pace::Rows(rows, b) => (b, rows, Pacing::Closed(None)),
        Pace::Rate(rate, b, window) => (
            b,
            u64::MAX,
            Pacing::Scheduled {
                op: Op::Insert,
                rate: rate as u64,
                batch: b as u64,
                window,
                drain: false,
                offset: Duration::ZERO,
            },
        ),
    };
    let driver = Inserter {
        table: c.table,
        state: Arc::clone(&c.state),
        generator,
        batch: RowBatch::default(),
        batch_rows,
        left,
    };
    c.thread("inserter", driver, pacing)
}

/// Claims up to `batch` rows to delete, never more than have been inserted in this step.
/// Waits for the inserters when they are behind; `None` when they are done and nothing is left.
fn claim_delete(state: &TableState, batch: u64, ctx: &ThreadCtx) -> Option<u64> {
    loop {
        // Read `running` before `inserted`: once it is 0, `inserted` is final.
        let running = state.inserters_running.load(Ordering::Acquire);
        let inserted = state.inserted.load(Ordering::Acquire);
        let claimed = state.delete_claimed.load(Ordering::Acquire);
        let available = inserted - claimed;
        let n = if available >= batch {
            batch
        } else if running == 0 {
            available
        } else {
            0
        };
        if n > 0 {
            if state
                .delete_claimed
                .compare_exchange(claimed, claimed + n, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Some(n);
            }
            continue;
        }
        if running == 0 || ctx.should_stop() || ctx.warm_up_over() {
            return None;
        }
        crate::mux::park_timeout(Duration::from_millis(10));
    }
}

/// Deletes of the oldest rows, by id range, at the inserters' pace.
struct Deleter<'s> {
    table: &'s Table,
    state: Arc<TableState>,
    batch: u64,
    /// Rows claimed for the next delete.
    claimed: u64,
    registered: bool,
}

impl Driver for Deleter<'_> {
    type Conn = Conn;

    fn next(&mut self, ctx: &ThreadCtx) -> Result<Option<Op>> {
        if !self.registered {
            if let Ok(mut d) = self.state.deleters.lock() {
                d.push(std::thread::current());
            }
            self.registered = true;
        }
        Ok(claim_delete(&self.state, self.batch, ctx).map(|n| {
            self.claimed = n;
            Op::Delete
        }))
    }

    /// Deletes the claimed rows, claiming further ranges if ids have gaps.
    fn send(&mut self, session: &mut Session<'_, Conn>, rec: &mut Recorder) -> Result<u64> {
        let (table, state) = (self.table, &self.state);
        let mut deleted = 0;
        while deleted < self.claimed {
            let want = (self.claimed - deleted) as i64;
            let lo = state.cursor.fetch_add(want, Ordering::AcqRel);
            let got = session
                .run(rec, Op::Delete, |c| c.delete_range(table, lo, lo + want))
                .with_context(|| format!("delete from {}", table.name))?;
            deleted += got;
            if lo + want > state.head.load(Ordering::Acquire) {
                break; // past the newest row: nothing more to delete
            }
        }
        Ok(deleted)
    }
}

/// A deleting thread: removes the oldest rows at the inserters' pace; with a schedule, also on
/// the background writer's schedule. Once the window closes it only drains what the inserters
/// inserted (their last batches), so the table keeps its size; those deletes are due when they
/// are taken.
pub fn deleter(
    c: ClientTable<'_>,
    batch: usize,
    schedule: Option<(u32, Duration)>,
) -> ThreadSpec<'_> {
    let driver = Deleter {
        table: c.table,
        state: Arc::clone(&c.state),
        batch: batch as u64,
        claimed: 0,
        registered: false,
    };
    let pacing = match schedule {
        Some((rate, window)) => Pacing::Scheduled {
            op: Op::Delete,
            rate: rate as u64,
            batch: batch as u64,
            window,
            drain: true,
            offset: Duration::ZERO,
        },
        None => Pacing::Closed(None),
    };
    c.thread("deleter", driver, pacing)
}

/// What a querier does besides its client's table.
pub struct Query<'s> {
    /// Point queries (qpN) or range queries (qrN).
    pub point: bool,
    /// How long to run.
    pub duration: Duration,
    /// Ids this close to the delete cursor are not asked for (they may be deleted meanwhile).
    pub guard: i64,
    /// Point-query ids not returned although no delete had claimed them, over all queriers.
    pub misses: &'s AtomicU64,
    /// Point-query ids not returned because a delete claimed them after they were drawn.
    pub raced: &'s AtomicU64,
}

/// Range or point queries as fast as possible.
struct Querier<'s> {
    table: &'s Table,
    state: Arc<TableState>,
    query: Query<'s>,
    generator: QueryGenerator,
    ids: Vec<i64>,
    found: Vec<i64>,
    range: (crate::dbms::RangeQuery, f64),
}

impl Driver for Querier<'_> {
    type Conn = Conn;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        if self.query.point {
            let (lo, hi) = self.state.live_ids(self.query.guard);
            self.generator
                .point_ids(lo, hi, POINT_QUERY_IDS, &mut self.ids);
            if self.ids.is_empty() {
                anyhow::bail!(
                    "no rows to ask for in {} (ids {lo}..={hi}): load it first",
                    self.table.name
                );
            }
        } else {
            self.range = self.generator.range();
        }
        Ok(Some(Op::Query))
    }

    /// One query; recorded as one row (a query, whatever it returned).
    fn send(&mut self, session: &mut Session<'_, Conn>, rec: &mut Recorder) -> Result<u64> {
        let table = self.table;
        if !self.query.point {
            let (kind, value) = self.range;
            session
                .run(rec, Op::Query, |c| c.range_query(table, kind, value))
                .with_context(|| format!("range query on {}", table.name))?;
            return Ok(1);
        }
        let (ids, found) = (&self.ids, &mut self.found);
        session
            .run(rec, Op::Query, |c| c.point_query(table, ids, found))
            .with_context(|| format!("point query on {}", table.name))?;
        if found.len() != ids.len() || !found.iter().all(|id| ids.contains(id)) {
            // An id below the delete cursor now was claimed by a deleter after it was drawn
            // (the querier was descheduled for longer than the guard): a race with a delete,
            // not a missing row.
            let cursor = self.state.live_ids(0).0;
            for id in ids.iter().filter(|id| !found.contains(id)) {
                let counter = if *id < cursor {
                    self.query.raced
                } else {
                    self.query.misses
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }
            if found.iter().any(|id| !ids.contains(id)) {
                self.query.misses.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(1)
    }
}

/// A querying thread: range or point queries as fast as possible for the step's duration.
pub fn querier<'s>(c: ClientTable<'s>, query: Query<'s>) -> ThreadSpec<'s> {
    let generator = QueryGenerator::new(c.spec, stream(c.spec.seed, c.step, 1_000_000 + c.client));
    let pacing = Pacing::Closed(Some(query.duration));
    let driver = Querier {
        table: c.table,
        state: Arc::clone(&c.state),
        query,
        generator,
        ids: Vec::with_capacity(POINT_QUERY_IDS),
        found: Vec::with_capacity(POINT_QUERY_IDS),
        range: (crate::dbms::RangeQuery::Market, 0.0),
    };
    c.thread(QUERY_ROLE, driver, pacing)
}

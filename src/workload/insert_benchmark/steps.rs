//! The loops of the Insert Benchmark's client threads: inserter, deleter and querier.
//!
//! Hot-path rules: each thread owns its connection, generator and buffers; per op it generates
//! into reused buffers, calls one typed DBMS method, takes two timestamps and records them. The
//! only state shared is the [`TableState`] of its table (a few atomics).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::TableState;
use super::data::{QueryGenerator, RowGenerator, stream};
use crate::dbms::{Dbms, POINT_QUERY_IDS, RowBatch, Table};
use crate::metrics::recorder::{Op, Recorder};
use crate::runner::client::{ThreadCtx, ThreadSpec};
use crate::runner::rate::{Pacer, wait_until};
use crate::runner::session::Session;
use crate::spec::InsertBenchmarkSpec;

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
}

/// Marks an inserter finished (and wakes the deleters) however its loop ends.
struct InserterDone<'a>(&'a TableState);

impl Drop for InserterDone<'_> {
    fn drop(&mut self) {
        self.0.inserters_running.fetch_sub(1, Ordering::AcqRel);
        wake_deleters(self.0);
    }
}

fn wake_deleters(state: &TableState) {
    if let Ok(deleters) = state.deleters.lock() {
        for t in deleters.iter() {
            t.unpark();
        }
    }
}

/// An inserting thread: multi-row INSERTs at the head of the queue.
pub fn inserter(c: ClientTable<'_>, pace: Pace) -> ThreadSpec<'_> {
    let ClientTable {
        dbms,
        spec,
        table,
        state,
        client,
        step,
    } = c;
    ThreadSpec {
        client,
        role: "inserter",
        body: Box::new(move |ctx: &mut ThreadCtx| {
            let _done = InserterDone(&state);
            let mut session = Session::connect(dbms, spec.max_tries, spec.max_reconnects)?;
            let mut generator = RowGenerator::new(spec, stream(spec.seed, step, client));
            let mut batch = RowBatch::default();
            let start = ctx.start();
            let (mut pacer, batch_rows, total) = match pace {
                Pace::Rows(rows, b) => (None, b, rows),
                Pace::Rate(rate, b, d) => (
                    Some(Pacer::new(start, rate as u64, b as u64, d)),
                    b,
                    u64::MAX,
                ),
            };
            let mut done = 0u64;
            while done < total && !ctx.should_stop() {
                let due = match &mut pacer {
                    Some(p) => match p.next_due() {
                        Some(due) => Some(due),
                        None => break,
                    },
                    None => None,
                };
                let n = (batch_rows as u64).min(total - done) as usize;
                generator.fill(&mut batch, n, unix_now_s());
                if let Some(due) = due {
                    wait_until(due);
                }
                let sent = Instant::now();
                let last_id = session
                    .run(&mut ctx.rec, Op::Insert, |c| c.insert(table, &batch))
                    .with_context(|| format!("insert into {}", table.name))?;
                let end = Instant::now();
                ctx.rec.record_op(Op::Insert, n as u64, due, sent, end);
                state.head.fetch_max(last_id, Ordering::AcqRel);
                state.inserted.fetch_add(n as u64, Ordering::AcqRel);
                wake_deleters(&state);
                done += n as u64;
            }
            if let Some(p) = &pacer {
                ctx.rec.add_missed(Op::Insert, p.missed());
            }
            ctx.hold(session.into_connection());
            Ok(())
        }),
    }
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
        if running == 0 || ctx.should_stop() {
            return None;
        }
        std::thread::park_timeout(Duration::from_millis(10));
    }
}

/// Deletes the `n` oldest rows by id range, claiming further ranges if ids have gaps.
fn delete_oldest(
    session: &mut Session,
    rec: &mut Recorder,
    table: &Table,
    state: &TableState,
    n: u64,
) -> Result<u64> {
    let mut deleted = 0;
    while deleted < n {
        let want = (n - deleted) as i64;
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

/// A deleting thread: removes the oldest rows at the inserters' pace; with a schedule, also on
/// the background writer's schedule.
pub fn deleter(
    c: ClientTable<'_>,
    batch: usize,
    schedule: Option<(u32, Duration)>,
) -> ThreadSpec<'_> {
    let ClientTable {
        dbms,
        spec,
        table,
        state,
        client,
        ..
    } = c;
    ThreadSpec {
        client,
        role: "deleter",
        body: Box::new(move |ctx: &mut ThreadCtx| {
            let mut session = Session::connect(dbms, spec.max_tries, spec.max_reconnects)?;
            if let Ok(mut d) = state.deleters.lock() {
                d.push(std::thread::current());
            }
            let start = ctx.start();
            let mut pacer =
                schedule.map(|(rate, d)| Pacer::new(start, rate as u64, batch as u64, d));
            while !ctx.should_stop() {
                // Once the window closes, the deleter only drains what the inserters
                // inserted (their last batches), so the table keeps its size; those deletes
                // are due when they are taken.
                let due = pacer
                    .as_mut()
                    .map(|p| p.next_due().unwrap_or_else(Instant::now));
                if let Some(due) = due {
                    wait_until(due);
                }
                let Some(n) = claim_delete(&state, batch as u64, ctx) else {
                    break;
                };
                let sent = Instant::now();
                let deleted = delete_oldest(&mut session, &mut ctx.rec, table, &state, n)?;
                let end = Instant::now();
                ctx.rec.record_op(Op::Delete, deleted, due, sent, end);
            }
            ctx.hold(session.into_connection());
            Ok(())
        }),
    }
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

/// A querying thread: range or point queries as fast as possible for the step's duration.
pub fn querier<'s>(c: ClientTable<'s>, query: Query<'s>) -> ThreadSpec<'s> {
    let ClientTable {
        dbms,
        spec,
        table,
        state,
        client,
        step,
    } = c;
    let Query {
        point,
        duration,
        guard,
        misses,
        raced,
    } = query;
    ThreadSpec {
        client,
        role: "query",
        body: Box::new(move |ctx: &mut ThreadCtx| {
            let mut session = Session::connect(dbms, spec.max_tries, spec.max_reconnects)?;
            let mut generator =
                QueryGenerator::new(spec, stream(spec.seed, step, 1_000_000 + client));
            let mut ids = Vec::with_capacity(POINT_QUERY_IDS);
            let mut found = Vec::with_capacity(POINT_QUERY_IDS);
            let start = ctx.start();
            let deadline = start + duration;
            let mut now = start;
            while now < deadline && !ctx.should_stop() {
                let sent;
                if point {
                    let (lo, hi) = state.live_ids(guard);
                    generator.point_ids(lo, hi, POINT_QUERY_IDS, &mut ids);
                    if ids.is_empty() {
                        anyhow::bail!(
                            "no rows to ask for in {} (ids {lo}..={hi}): load it first",
                            table.name
                        );
                    }
                    sent = Instant::now();
                    session
                        .run(&mut ctx.rec, Op::Query, |c| {
                            c.point_query(table, &ids, &mut found)
                        })
                        .with_context(|| format!("point query on {}", table.name))?;
                    now = Instant::now();
                    if found.len() != ids.len() || !found.iter().all(|id| ids.contains(id)) {
                        // An id below the delete cursor now was claimed by a deleter after it
                        // was drawn (the querier was descheduled for longer than the guard):
                        // a race with a delete, not a missing row.
                        let cursor = state.live_ids(0).0;
                        for id in ids.iter().filter(|id| !found.contains(id)) {
                            let counter = if *id < cursor { raced } else { misses };
                            counter.fetch_add(1, Ordering::Relaxed);
                        }
                        if found.iter().any(|id| !ids.contains(id)) {
                            misses.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                } else {
                    let (kind, value) = generator.range();
                    sent = Instant::now();
                    session
                        .run(&mut ctx.rec, Op::Query, |c| {
                            c.range_query(table, kind, value)
                        })
                        .with_context(|| format!("range query on {}", table.name))?;
                    now = Instant::now();
                }
                ctx.rec.record(Op::Query, 1, sent, now);
            }
            ctx.hold(session.into_connection());
            Ok(())
        }),
    }
}

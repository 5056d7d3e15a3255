//! The per-thread recorder on the hot path: response-time histograms, per-second series and
//! live counters for the progress display.
//!
//! Each client thread owns one [`Recorder`]; nothing in it is shared with other clients except
//! [`LiveCounters`], which only this thread writes (relaxed atomics on its own cache line) and the
//! progress thread reads, and the step's [`SecondHistograms`], which it adds its response
//! times into once per second and op type (`metrics/seconds.rs`). Recorders are merged after
//! the step (see `runner`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::metrics::compact::CompactHistogram;
use crate::metrics::seconds::{LIVE_BUCKETS, OpenSecond, SecondHistograms, live_bucket};
pub use crate::results::model::Op;

/// Counters one thread publishes for the progress display.
#[derive(Debug)]
#[repr(align(64))]
pub struct LiveCounters {
    rows: [AtomicU64; Op::COUNT],
    ops: [AtomicU64; Op::COUNT],
    /// Response times of every op so far, in [`live_bucket`]s: the progress line's p95.
    latency: [AtomicU64; LIVE_BUCKETS],
}

impl Default for LiveCounters {
    fn default() -> Self {
        LiveCounters {
            rows: Default::default(),
            ops: Default::default(),
            latency: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl LiveCounters {
    /// Ops so far whose response time fell in live bucket `b`.
    pub fn latency(&self, b: usize) -> u64 {
        self.latency[b].load(Ordering::Relaxed)
    }

    /// Rows affected so far by `op`.
    pub fn rows(&self, op: Op) -> u64 {
        self.rows[op.index()].load(Ordering::Relaxed)
    }

    /// Statements of type `op` completed so far.
    pub fn ops(&self, op: Op) -> u64 {
        self.ops[op.index()].load(Ordering::Relaxed)
    }
}

/// One second of one thread's statements of one op type: 12 bytes, kept only for the op
/// types the thread runs (with 1,024 clients for an hour, 96 bytes a second for every op type
/// came to ~340 MiB).
#[derive(Clone, Copy, Debug, Default)]
pub struct OpSecond {
    /// Statements completed (one thread completes far fewer than 2^32 a second).
    pub ops: u32,
    /// Rows affected (inserted, deleted; a query counts 1), saturating at 2^32 - 1.
    pub rows: u32,
    /// Largest response time in the second, microseconds (saturating at 2^32 - 1, 71 min).
    pub max_us: u32,
}

/// What one client thread measured in one step.
pub struct Recorder {
    /// Client number (0-based) this thread belongs to; a client has up to three threads.
    pub client: usize,
    start: Option<Instant>,
    /// Response time from when each op was due (equals service time for unthrottled ops).
    hist: [Option<CompactHistogram>; Op::COUNT],
    /// Service time (from when the op was sent), kept for rate-limited ops only.
    service: [Option<CompactHistogram>; Op::COUNT],
    ops: [u64; Op::COUNT],
    rows: [u64; Op::COUNT],
    seconds: [Vec<OpSecond>; Op::COUNT],
    last_end: Option<Instant>,
    missed: [u64; Op::COUNT],
    retries: [u64; Op::COUNT],
    reconnects: u64,
    live: Arc<LiveCounters>,
    /// Ops and rows of the warm-up (not in any figure above).
    warmup_ops: [u64; Op::COUNT],
    warmup_rows: [u64; Op::COUNT],
    /// From the warm-up's start to the step's start, when the thread warmed up.
    warmup_span: Option<Duration>,
    /// The step's response times per second, all threads together (`None`: not kept, as for
    /// a warm-up's scratch recorder), and this thread's current second of each op type.
    shared: Option<Arc<SecondHistograms>>,
    open: [Option<OpenSecond>; Op::COUNT],
}

impl Recorder {
    /// A recorder for a thread of `client`.
    pub fn new(client: usize) -> Self {
        Recorder {
            client,
            start: None,
            hist: Default::default(),
            service: Default::default(),
            ops: [0; Op::COUNT],
            rows: [0; Op::COUNT],
            seconds: Default::default(),
            last_end: None,
            missed: [0; Op::COUNT],
            retries: [0; Op::COUNT],
            reconnects: 0,
            live: Arc::new(LiveCounters::default()),
            warmup_ops: [0; Op::COUNT],
            warmup_rows: [0; Op::COUNT],
            warmup_span: None,
            shared: None,
            open: Default::default(),
        }
    }

    /// This recorder, adding its response times per second into `shared` (the step's, one
    /// for all its threads; see [`Recorder::flush_seconds`]).
    pub fn with_seconds(mut self, shared: Arc<SecondHistograms>) -> Self {
        self.shared = Some(shared);
        self
    }

    /// The step's response times per second this recorder adds into, if any.
    pub fn second_histograms(&self) -> Option<&Arc<SecondHistograms>> {
        self.shared.as_ref()
    }

    /// Adds the seconds still open into the step's response times per second: call it once
    /// the thread is done.
    pub fn flush_seconds(&mut self) {
        let Some(shared) = &self.shared else {
            return;
        };
        for op in Op::ALL {
            if let Some(open) = self.open[op.index()].take() {
                shared.add(op, &open);
            }
        }
    }

    /// The live counters of this thread, for the progress display.
    pub fn live(&self) -> Arc<LiveCounters> {
        Arc::clone(&self.live)
    }

    /// Sets the step's start; per-second series count from here. Ops recorded before it (set-up
    /// work such as select-min) go into histograms and totals but not into the series.
    pub fn set_start(&mut self, start: Instant) {
        self.start = Some(start);
    }

    /// Records an unthrottled op that started at `start` and ended at `end`.
    #[inline]
    pub fn record(&mut self, op: Op, rows: u64, start: Instant, end: Instant) {
        let latency = end.saturating_duration_since(start);
        self.record_latency(op, rows, latency, end);
    }

    /// Records an op: rate-limited when `due` is given (see [`Recorder::record_scheduled`]),
    /// unthrottled otherwise.
    #[inline]
    pub fn record_op(
        &mut self,
        op: Op,
        rows: u64,
        due: Option<Instant>,
        sent: Instant,
        end: Instant,
    ) {
        match due {
            Some(due) => self.record_scheduled(op, rows, due, sent, end),
            None => self.record(op, rows, sent, end),
        }
    }

    /// Counts `batches` of a rate-limited `op` that were due in the step but never sent.
    pub fn add_missed(&mut self, op: Op, batches: u64) {
        self.missed[op.index()] += batches;
    }

    /// Counts a retry of `op` after a transient error or a reconnect.
    pub fn add_retry(&mut self, op: Op) {
        self.retries[op.index()] += 1;
    }

    /// Retries of `op`.
    pub fn retries(&self, op: Op) -> u64 {
        self.retries[op.index()]
    }

    /// Counts a reconnect after a lost connection.
    pub fn add_reconnect(&mut self) {
        self.reconnects += 1;
    }

    /// Reconnects after lost connections.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// Batches of `op` due in the step but never sent.
    pub fn missed(&self, op: Op) -> u64 {
        self.missed[op.index()]
    }

    /// Records a rate-limited op: due at `due`, sent at `sent`, done at `end`. Its response
    /// time counts from `due` (no coordinated omission); service time is kept apart.
    #[inline]
    pub fn record_scheduled(
        &mut self,
        op: Op,
        rows: u64,
        due: Instant,
        sent: Instant,
        end: Instant,
    ) {
        let service_us = end.saturating_duration_since(sent).as_micros() as u64;
        self.service[op.index()]
            .get_or_insert_with(CompactHistogram::new)
            .record(service_us);
        self.record_latency(op, rows, end.saturating_duration_since(due), end);
    }

    #[inline]
    fn record_latency(&mut self, op: Op, rows: u64, latency: Duration, end: Instant) {
        let i = op.index();
        let us = latency.as_micros() as u64;
        self.hist[i]
            .get_or_insert_with(CompactHistogram::new)
            .record(us);
        self.ops[i] += 1;
        self.rows[i] += rows;
        self.live.ops[i].fetch_add(1, Ordering::Relaxed);
        self.live.rows[i].fetch_add(rows, Ordering::Relaxed);
        self.live.latency[live_bucket(us)].fetch_add(1, Ordering::Relaxed);
        self.last_end = Some(end);
        if let Some(start) = self.start
            && let Some(since) = end.checked_duration_since(start)
        {
            let s = since.as_secs() as usize;
            let seconds = &mut self.seconds[i];
            if seconds.len() <= s {
                seconds.resize(s + 1, OpSecond::default());
            }
            let sec = &mut seconds[s];
            sec.ops += 1;
            sec.rows = sec
                .rows
                .saturating_add(u32::try_from(rows).unwrap_or(u32::MAX));
            sec.max_us = sec.max_us.max(u32::try_from(us).unwrap_or(u32::MAX));
            if let Some(shared) = &self.shared {
                let open = &mut self.open[i];
                if open.as_ref().is_some_and(|o| o.second != s) {
                    // A later second: the one before is complete for this thread.
                    if let Some(done) = open.take() {
                        shared.add(op, &done);
                    }
                }
                open.get_or_insert_with(|| OpenSecond {
                    second: s,
                    hist: Box::default(),
                })
                .hist
                .record(us);
            }
        }
    }

    /// Statements of `op` recorded.
    pub fn ops(&self, op: Op) -> u64 {
        self.ops[op.index()]
    }

    /// Rows recorded for `op`.
    pub fn rows(&self, op: Op) -> u64 {
        self.rows[op.index()]
    }

    /// Response-time histogram of `op`, if any op of that type was recorded.
    pub fn histogram(&self, op: Op) -> Option<&CompactHistogram> {
        self.hist[op.index()].as_ref()
    }

    /// Service-time histogram of a rate-limited `op`.
    pub fn service_histogram(&self, op: Op) -> Option<&CompactHistogram> {
        self.service[op.index()].as_ref()
    }

    /// When the last recorded op ended.
    pub fn last_end(&self) -> Option<Instant> {
        self.last_end
    }

    /// Per-second activity of `op` since the step start.
    pub fn seconds(&self, op: Op) -> &[OpSecond] {
        &self.seconds[op.index()]
    }

    /// Counts an op of the warm-up: in no histogram, series or total, only in the warm-up's
    /// own counts.
    pub fn count_warmup(&mut self, op: Op, rows: u64) {
        self.warmup_ops[op.index()] += 1;
        self.warmup_rows[op.index()] += rows;
    }

    /// Records how long the warm-up lasted (from its start to the step's start).
    pub fn set_warmup_span(&mut self, span: Duration) {
        self.warmup_span = Some(span);
    }

    /// How long this thread's warm-up lasted, when it warmed up.
    pub fn warmup_span(&self) -> Option<Duration> {
        self.warmup_span
    }

    /// Ops of `op` in the warm-up.
    pub fn warmup_ops(&self, op: Op) -> u64 {
        self.warmup_ops[op.index()]
    }

    /// Rows of `op` in the warm-up.
    pub fn warmup_rows(&self, op: Op) -> u64 {
        self.warmup_rows[op.index()]
    }

    /// Seconds since the step start in which this thread completed anything.
    pub fn seconds_len(&self) -> usize {
        self.seconds.iter().map(Vec::len).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_kept_per_op_type_and_only_for_those_recorded() {
        let start = Instant::now();
        let mut rec = Recorder::new(0);
        rec.set_start(start);
        let at = |ms: u64| start + Duration::from_millis(ms);
        rec.record(Op::Insert, 10, at(100), at(300));
        rec.record(Op::Insert, 10, at(1_100), at(1_150));
        rec.record(Op::Insert, 5, at(1_200), at(1_900));
        rec.record(Op::Query, 1, at(2_000), at(2_500));
        let ins = rec.seconds(Op::Insert);
        assert_eq!(ins.len(), 2);
        assert_eq!((ins[0].ops, ins[0].rows, ins[0].max_us), (1, 10, 200_000));
        assert_eq!((ins[1].ops, ins[1].rows, ins[1].max_us), (2, 15, 700_000));
        assert_eq!(rec.seconds(Op::Query).len(), 3);
        assert_eq!(rec.seconds(Op::Query)[2].ops, 1);
        assert!(rec.seconds(Op::Delete).is_empty());
        assert_eq!(rec.seconds_len(), 3);
        // A response time beyond 2^32 us (71 minutes) saturates in the series, not in the
        // histogram.
        rec.record(Op::Delete, 1, at(0), at(2_000) + Duration::from_secs(5_000));
        assert_eq!(rec.seconds(Op::Delete)[5_002].max_us, u32::MAX);
        assert_eq!(rec.ops(Op::Delete), 1);
    }
}

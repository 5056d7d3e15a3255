//! Turns what a step's threads recorded into its [`StepResult`]: merged and per-client
//! histograms, rates, per-second series, rate percentiles and the background-writer SLA.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::metrics::compact::CompactHistogram;
use crate::metrics::histogram::{self, BUCKET_LABELS, Percentiles, new_histogram};
use crate::metrics::outcome::StepOutcome;
use crate::metrics::recorder::{Op, Recorder};
use crate::results::model::{
    ClientHistogram, OpResult, PerSecond, RatePercentiles, RunStatus, Series, SeriesSet, Sla,
    StepResult,
};

/// An SLA fails when the background insert rate averages below this share of its target.
pub const SLA_MIN_RATIO: f64 = 0.95;

/// The SLA of a query step's writers, whose `met.0` of `met.1` full seconds inserted the rows
/// due in them: it passes when the writers averaged [`SLA_MIN_RATIO`] of their target and the
/// step ran its course (a step that did not, did not meet its SLA; see `sla_verdict`).
pub(crate) fn sla_of(
    target_inserts_per_s: f64,
    missed_insert_batches: u64,
    inserts_per_s: f64,
    deletes_per_s: f64,
    met: (usize, usize),
    status: RunStatus,
) -> Sla {
    let ratio = if target_inserts_per_s > 0.0 {
        inserts_per_s / target_inserts_per_s
    } else {
        0.0
    };
    let (met, full_seconds) = met;
    Sla {
        target_inserts_per_s,
        missed_insert_batches,
        inserts_per_s,
        deletes_per_s,
        ratio,
        seconds_met_share: if full_seconds > 0 {
            met as f64 / full_seconds as f64
        } else {
            0.0
        },
        pass: ratio >= SLA_MIN_RATIO && status == RunStatus::Complete,
    }
}

/// Target of a query step's background writers.
#[derive(Clone, Copy, Debug)]
pub struct SlaTarget {
    /// Rows/s of each writer.
    pub rate_per_writer: u64,
    /// Rows per batch.
    pub batch: u64,
    /// Writers (one per client).
    pub writers: u64,
}

impl SlaTarget {
    /// Rows/s over all writers.
    pub fn inserts_per_s(&self) -> f64 {
        (self.rate_per_writer * self.writers) as f64
    }

    /// Rows whose batches fall due in second `s` of the step, over all writers.
    pub fn rows_due_in_second(&self, s: u64) -> u64 {
        // Batches due before time t: ceil(t * rate / batch).
        let due_before = |t: u64| (t * self.rate_per_writer).div_ceil(self.batch);
        (due_before(s + 1) - due_before(s)) * self.batch * self.writers
    }
}

fn op_result(
    recorders: &[Recorder],
    op: Op,
    clients: usize,
    hist_of: impl Fn(&Recorder) -> Option<&CompactHistogram>,
) -> Option<OpResult> {
    // One client's histogram at a time (a client has up to three threads): with 1,024
    // clients, their histograms with u64 counts all at once would outweigh the run.
    let mut by_client: Vec<Vec<&CompactHistogram>> = vec![Vec::new(); clients];
    let mut rows = 0;
    for rec in recorders {
        let Some(h) = hist_of(rec) else { continue };
        rows += rec.rows(op);
        by_client[rec.client].push(h);
    }
    let mut merged = new_histogram();
    let mut clients_out = Vec::new();
    for (client, hists) in by_client.iter().enumerate() {
        if hists.is_empty() {
            continue;
        }
        let mut h = new_histogram();
        for part in hists {
            part.add_to(&mut h);
        }
        merged.add(&h).expect("auto-resizing histograms always add");
        clients_out.push(ClientHistogram {
            client,
            count: h.len(),
            histogram: histogram::encode(&h),
        });
    }
    if merged.is_empty() {
        return None;
    }
    let counts = histogram::bucket_counts(&merged);
    let total = merged.len() as f64;
    Some(OpResult {
        count: merged.len(),
        rows,
        percentiles_us: Percentiles::of(&merged),
        buckets_pct: counts.iter().map(|&c| 100.0 * c as f64 / total).collect(),
        bucket_labels: BUCKET_LABELS.iter().map(|s| s.to_string()).collect(),
        histogram: histogram::encode(&merged),
        per_client: clients_out,
    })
}

/// Adds `rec`'s seconds into `set` (sums of counts, max of maxima).
fn add_seconds(set: &mut SeriesSet, rec: &Recorder, len: usize) {
    for op in Op::ALL {
        let seconds = rec.seconds(op);
        if rec.ops(op) == 0 || seconds.iter().all(|s| s.ops == 0) {
            continue;
        }
        let series = set
            .ops
            .entry(op.name().to_string())
            .or_insert_with(|| Series {
                ops: vec![0; len],
                rows: vec![0; len],
                max_us: vec![0; len],
            });
        for (s, sec) in seconds.iter().enumerate().take(len) {
            series.ops[s] += u64::from(sec.ops);
            series.rows[s] += u64::from(if op == Op::Query { sec.ops } else { sec.rows });
            series.max_us[s] = series.max_us[s].max(u64::from(sec.max_us));
        }
    }
}

/// The rate met or exceeded in x% of `seconds`.
pub fn rate_percentiles(seconds: &[u64]) -> Option<RatePercentiles> {
    if seconds.is_empty() {
        return None;
    }
    let mut sorted = seconds.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    // Met or exceeded in x% of seconds: the value at rank ceil(x% * n) in descending order.
    let at = |pct: f64| {
        let rank = ((pct / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    };
    Some(RatePercentiles {
        p50: at(50.0),
        p90: at(90.0),
        p95: at(95.0),
        p99: at(99.0),
        min: *sorted.last().unwrap_or(&0),
        seconds: sorted.len(),
    })
}

/// Summarises a step. `extra` holds recorders of set-up ops (select-min) that belong in the
/// histograms but not in the per-second series; `window` is a query step's fixed duration (its
/// rates are over the window, not over the writers' last batches); `sla` is the
/// background-writer target.
pub fn summarize(
    name: &str,
    clients: usize,
    outcome: StepOutcome,
    extra: Vec<Recorder>,
    window: Option<Duration>,
    sla: Option<SlaTarget>,
) -> StepResult {
    let duration = match window {
        Some(w) => outcome.duration.min(w),
        None => outcome.duration,
    };
    let duration_s = duration.as_secs_f64();
    let mut recorders = outcome.recorders;
    let timed = recorders.len();
    recorders.extend(extra);
    let timed_recorders = &recorders[..timed];
    let sum = |op: Op| timed_recorders.iter().map(|r| r.rows(op)).sum::<u64>();
    let count = |op: Op| timed_recorders.iter().map(|r| r.ops(op)).sum::<u64>();
    let per_s = |v: u64| {
        if duration_s > 0.0 {
            v as f64 / duration_s
        } else {
            0.0
        }
    };
    let (rows_inserted, rows_deleted, queries) =
        (sum(Op::Insert), sum(Op::Delete), count(Op::Query));

    let mut ops = BTreeMap::new();
    let mut service_time = BTreeMap::new();
    for op in Op::ALL {
        if let Some(r) = op_result(&recorders, op, clients, |rec| rec.histogram(op)) {
            ops.insert(op.name().to_string(), r);
        }
        if let Some(r) = op_result(&recorders, op, clients, |rec| rec.service_histogram(op)) {
            service_time.insert(op.name().to_string(), r);
        }
    }

    // Series cover every second in which an op completed; full seconds feed the percentiles.
    let len = timed_recorders
        .iter()
        .map(|r| r.seconds_len())
        .max()
        .unwrap_or(0);
    let full_seconds = (duration.as_secs() as usize).min(len);
    let mut per_second = PerSecond {
        total: SeriesSet::default(),
        clients: vec![SeriesSet::default(); clients],
    };
    for rec in timed_recorders {
        add_seconds(&mut per_second.total, rec, len);
        add_seconds(&mut per_second.clients[rec.client], rec, len);
    }
    let rate_pcts: BTreeMap<String, RatePercentiles> = per_second
        .total
        .ops
        .iter()
        .filter_map(|(op, s)| Some((op.clone(), rate_percentiles(&s.rows[..full_seconds])?)))
        .collect();

    let status = if outcome.error.is_some() {
        RunStatus::Failed
    } else if outcome.interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    let sla = sla.map(|target| {
        let inserts_per_s = per_s(rows_inserted);
        let inserted = per_second.total.ops.get(Op::Insert.name());
        // A second meets the target when the rows of the batches due in it were inserted in it.
        let met = (0..full_seconds)
            .filter(|&s| {
                let done = inserted.map_or(0, |series| series.rows[s]);
                done as f64 >= SLA_MIN_RATIO * target.rows_due_in_second(s as u64) as f64
            })
            .count();
        sla_of(
            target.inserts_per_s(),
            timed_recorders.iter().map(|r| r.missed(Op::Insert)).sum(),
            inserts_per_s,
            per_s(rows_deleted),
            (met, full_seconds),
            status,
        )
    });

    let (engine_status, wait_events, profile) = outcome
        .costs
        .as_ref()
        .map(|c| {
            (
                c.engine_status.clone(),
                c.wait_events.clone(),
                c.profile.clone(),
            )
        })
        .unwrap_or_default();
    let (efficiency, dbms_counters) = match &outcome.costs {
        Some(costs) => {
            let (per, ops) = if window.is_some() {
                ("query", queries)
            } else {
                ("insert", rows_inserted)
            };
            (
                Some(crate::metrics::efficiency::efficiency(costs, per, ops)),
                costs.counter_deltas(),
            )
        }
        None => (None, BTreeMap::new()),
    };
    StepResult {
        name: name.to_string(),
        status,
        error: outcome.error,
        started_at: outcome.started_at,
        duration_s,
        clients,
        rows_inserted,
        rows_deleted,
        queries,
        inserts_per_s: per_s(rows_inserted),
        deletes_per_s: per_s(rows_deleted),
        queries_per_s: per_s(queries),
        ops,
        service_time,
        per_second,
        rate_percentiles: rate_pcts,
        sla,
        select_min: None,
        index_build: None,
        scans: Vec::new(),
        point_query_misses: None,
        point_query_raced: None,
        retries: Op::ALL
            .iter()
            .map(|&op| {
                (
                    op,
                    timed_recorders.iter().map(|r| r.retries(op)).sum::<u64>(),
                )
            })
            .filter(|(_, n)| *n > 0)
            .map(|(op, n)| (op.name().to_string(), n))
            .collect(),
        reconnects: timed_recorders.iter().map(|r| r.reconnects()).sum(),
        efficiency,
        dbms_counters,
        engine_status,
        wait_events,
        profile,
        queue_check: None,
        notes: Vec::new(),
    }
}

/// Fails a completed step whose retried statements exceed `max_pct` percent of its
/// statements (as pgbench reports failures), with the counts in the error.
pub fn check_error_rate(result: &mut StepResult, max_pct: f64) {
    let retries: u64 = result.retries.values().sum();
    let statements: u64 = result.ops.values().map(|o| o.count).sum();
    if result.status != crate::results::model::RunStatus::Complete || retries == 0 {
        return;
    }
    let pct = 100.0 * retries as f64 / statements.max(1) as f64;
    if pct > max_pct {
        result.status = crate::results::model::RunStatus::Failed;
        if let Some(sla) = result.sla.as_mut() {
            sla.pass = false;
        }
        result.error = Some(format!(
            "error rate {pct:.1}% above --max-error-rate {max_pct}%: {retries} retries \
             ({:?}) over {statements} statements, {} reconnects",
            result.retries, result.reconnects
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_due_per_second_follow_the_schedule() {
        let slow = SlaTarget {
            rate_per_writer: 5,
            batch: 10,
            writers: 1,
        };
        // One batch every 2 s: due at 0 s, 2 s, 4 s.
        assert_eq!(
            (0..4)
                .map(|s| slow.rows_due_in_second(s))
                .collect::<Vec<_>>(),
            [10, 0, 10, 0]
        );
        let fast = SlaTarget {
            rate_per_writer: 100,
            batch: 10,
            writers: 2,
        };
        assert_eq!(fast.rows_due_in_second(7), 200);
        assert_eq!(fast.inserts_per_s(), 200.0);
    }

    #[test]
    fn rate_percentiles_are_rates_met_in_share_of_seconds() {
        let secs: Vec<u64> = (1..=100).collect();
        let p = rate_percentiles(&secs).unwrap();
        assert_eq!(p.p50, 51); // 50 seconds had >= 51
        assert_eq!(p.p90, 11);
        assert_eq!(p.p99, 2);
        assert_eq!(p.min, 1);
        assert_eq!(p.seconds, 100);
        assert!(rate_percentiles(&[]).is_none());
    }
}

//! Turns what a step's threads recorded into its [`StepResult`]: merged and per-client
//! histograms, rates, per-second series, rate percentiles and the background-writer SLA.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::metrics::compact::CompactHistogram;
use crate::metrics::efficiency::StepCosts;
use crate::metrics::histogram::{self, BUCKET_LABELS, Percentiles, new_histogram};
use crate::metrics::outcome::StepOutcome;
use crate::metrics::recorder::{Op, Recorder};
use crate::metrics::series::{self, rate_percentiles};
use crate::results::model::{
    ClientHistogram, OpResult, PerSecond, RatePercentiles, RunStatus, Sla, StepResult,
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

/// The step's status: failed on an error, interrupted, else complete.
fn status_of(outcome: &StepOutcome) -> RunStatus {
    if outcome.error.is_some() {
        RunStatus::Failed
    } else if outcome.interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    }
}

/// Response time and service time of every op type `recorders` recorded.
fn op_results(
    recorders: &[Recorder],
    clients: usize,
) -> (BTreeMap<String, OpResult>, BTreeMap<String, OpResult>) {
    let mut ops = BTreeMap::new();
    let mut service_time = BTreeMap::new();
    for op in Op::ALL {
        if let Some(r) = op_result(recorders, op, clients, |rec| rec.histogram(op)) {
            ops.insert(op.name().to_string(), r);
        }
        if let Some(r) = op_result(recorders, op, clients, |rec| rec.service_histogram(op)) {
            service_time.insert(op.name().to_string(), r);
        }
    }
    (ops, service_time)
}

/// The writers' SLA against `target`: a second meets it when the rows of the batches due in
/// it were inserted in it.
fn step_sla(
    target: SlaTarget,
    per_second: &PerSecond,
    recorders: &[Recorder],
    (inserts_per_s, deletes_per_s): (f64, f64),
    full_seconds: usize,
    status: RunStatus,
) -> Sla {
    let inserted = per_second.total.ops.get(Op::Insert.name());
    let met = (0..full_seconds)
        .filter(|&s| {
            let done = inserted.map_or(0, |series| series.rows[s]);
            done as f64 >= SLA_MIN_RATIO * target.rows_due_in_second(s as u64) as f64
        })
        .count();
    sla_of(
        target.inserts_per_s(),
        recorders.iter().map(|r| r.missed(Op::Insert)).sum(),
        inserts_per_s,
        deletes_per_s,
        (met, full_seconds),
        status,
    )
}

/// Retried statements per op type that had any.
fn retries_of(recorders: &[Recorder]) -> BTreeMap<String, u64> {
    Op::ALL
        .iter()
        .map(|&op| {
            (
                op.name().to_string(),
                recorders.iter().map(|r| r.retries(op)).sum(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// What a step cost, as its results hold it.
#[derive(Default)]
struct CostFigures {
    efficiency: Option<crate::results::model::Efficiency>,
    dbms_counters: BTreeMap<String, f64>,
    engine_status: BTreeMap<String, String>,
    wait_events: BTreeMap<String, f64>,
    profile: Option<String>,
}

/// The figures of `costs`, per query for a step with a `window` (a query step), else per
/// row inserted.
fn cost_figures(
    costs: Option<StepCosts>,
    window: Option<Duration>,
    queries: u64,
    rows_inserted: u64,
) -> CostFigures {
    let Some(costs) = costs else {
        return CostFigures::default();
    };
    let (per, ops) = if window.is_some() {
        ("query", queries)
    } else {
        ("insert", rows_inserted)
    };
    CostFigures {
        efficiency: Some(crate::metrics::efficiency::efficiency(&costs, per, ops)),
        dbms_counters: costs.counter_deltas(),
        engine_status: costs.engine_status,
        wait_events: costs.wait_events,
        profile: costs.profile,
    }
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
    let status = status_of(&outcome);
    let mut recorders = outcome.recorders;
    let timed = recorders.len();
    recorders.extend(extra);
    let timed_recorders = &recorders[..timed];
    let sum = |op: Op| timed_recorders.iter().map(|r| r.rows(op)).sum::<u64>();
    let per_s = |v: u64| {
        if duration_s > 0.0 {
            v as f64 / duration_s
        } else {
            0.0
        }
    };
    let (rows_inserted, rows_deleted) = (sum(Op::Insert), sum(Op::Delete));
    let queries = timed_recorders
        .iter()
        .flat_map(|r| Op::ALL.map(|op| if op.counts_as_query() { r.ops(op) } else { 0 }))
        .sum::<u64>();
    let (ops, service_time) = op_results(&recorders, clients);

    // OpSeries cover every second in which an op completed; full seconds feed the percentiles.
    let len = timed_recorders
        .iter()
        .map(|r| r.seconds_len())
        .max()
        .unwrap_or(0);
    let full_seconds = (duration.as_secs() as usize).min(len);
    let per_second = series::per_second(
        timed_recorders,
        clients,
        len,
        full_seconds,
        outcome.per_client_series,
    );
    let rate_pcts: BTreeMap<String, RatePercentiles> = per_second
        .total
        .ops
        .iter()
        .filter_map(|(op, s)| Some((op.clone(), rate_percentiles(&s.rows[..full_seconds])?)))
        .collect();
    let rates = (per_s(rows_inserted), per_s(rows_deleted));
    let sla = sla.map(|t| step_sla(t, &per_second, timed_recorders, rates, full_seconds, status));
    let costs = cost_figures(outcome.costs, window, queries, rows_inserted);
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
        inserts_per_s: rates.0,
        deletes_per_s: rates.1,
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
        retries: retries_of(timed_recorders),
        reconnects: timed_recorders.iter().map(|r| r.reconnects()).sum(),
        efficiency: costs.efficiency,
        dbms_counters: costs.dbms_counters,
        engine_status: costs.engine_status,
        wait_events: costs.wait_events,
        profile: costs.profile,
        queue_check: None,
        tpcc: None,
        replication: Vec::new(),
        notes: Vec::new(),
        warmup: warmup_of(timed_recorders),
        cooldown_s: None,
        node_failures: Vec::new(),
        errors: BTreeMap::new(),
    }
}

/// The step's warm-up, from its threads' counts: `None` when no thread warmed up.
fn warmup_of(recorders: &[Recorder]) -> Option<crate::results::model::Warmup> {
    let seconds = recorders
        .iter()
        .filter_map(Recorder::warmup_span)
        .max()?
        .as_secs_f64();
    let sum = |f: &dyn Fn(&Recorder) -> u64| recorders.iter().map(f).sum::<u64>();
    let ops = Op::ALL
        .into_iter()
        .map(|op| (op.name().to_string(), sum(&|r| r.warmup_ops(op))))
        .filter(|(_, n)| *n > 0)
        .collect();
    Some(crate::results::model::Warmup {
        seconds,
        ops,
        rows_inserted: sum(&|r| r.warmup_rows(Op::Insert)),
        rows_deleted: sum(&|r| r.warmup_rows(Op::Delete)),
    })
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
}

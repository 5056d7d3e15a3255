//! One configuration's figures for one step ([`GroupStep`]), read from its runs: throughput
//! and cost figures as median, min and max over the runs (`figures.rs`), response times of
//! the merged histograms, the writer's SLA, counters and waits, and what else was measured
//! (`measured.rs`). `model.rs` assembles them into the report.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;

use crate::error::UsageError;
use crate::metrics::histogram::{self, Percentiles};
use crate::report::figures::{EFFICIENCY, MICRO, MetricDef, THROUGHPUT};
use crate::report::model::{GroupStep, OpAgg, SlaAgg};
use crate::report::select::Group;
use crate::report::stat::Stat;
use crate::results::model::{RunResult, RunStatus, StepResult};

/// Quantiles at which percentile curves are drawn (up to 99.999%).
fn curve_quantiles() -> Vec<f64> {
    let mut q = Vec::new();
    // Evenly spaced on the log(1 / (1 - q)) axis the chart uses.
    let steps = 100;
    for i in 0..=steps {
        let x = 5.0 * i as f64 / steps as f64; // 10^0 .. 10^5
        q.push(1.0 - 10f64.powf(-x));
    }
    q
}

/// `runs[i]` is the run of `steps[i]` (named when its histogram cannot be read).
fn op_agg(runs: &[&RunResult], steps: &[&StepResult], op: &str) -> Result<Option<OpAgg>> {
    let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
    for (run, s) in runs.iter().zip(steps) {
        let Some(r) = s.ops.get(op) else { continue };
        let h = histogram::decode(&r.histogram).map_err(|e| {
            UsageError::new(format!(
                "run {} is damaged: the {op} histogram of step {}: {e:#}",
                run.run_id, s.name
            ))
        })?;
        // A growing histogram, so runs with different ranges merge.
        merged
            .get_or_insert_with(crate::metrics::histogram::new_histogram)
            .add(&h)
            .map_err(|e| anyhow::anyhow!("cannot merge {op} histograms: {e:?}"))?;
    }
    let Some(h) = merged else { return Ok(None) };
    let total = h.len();
    let counts = histogram::bucket_counts(&h);
    let curve = if total == 0 {
        Vec::new()
    } else {
        curve_quantiles()
            .into_iter()
            .map(|q| (q, h.value_at_quantile(q).max(1) as f64))
            .collect()
    };
    Ok(Some(OpAgg {
        count: total,
        percentiles_us: Percentiles::of(&h),
        p95_us: h.value_at_quantile(0.95),
        buckets_pct: counts
            .iter()
            .map(|&c| {
                if total == 0 {
                    0.0
                } else {
                    100.0 * c as f64 / total as f64
                }
            })
            .collect(),
        curve,
    }))
}

fn metric_stats(defs: &[MetricDef], steps: &[&StepResult]) -> BTreeMap<String, Stat> {
    let mut out = BTreeMap::new();
    for d in defs {
        let values: Vec<f64> = steps.iter().filter_map(|s| (d.get)(s)).collect();
        if let Some(stat) = Stat::of(&values) {
            out.insert(d.key.to_string(), stat);
        }
    }
    out
}

pub(crate) fn group_step(group: &Group, step: &str) -> Result<GroupStep> {
    let (runs, steps): (Vec<&RunResult>, Vec<&StepResult>) = group
        .runs
        .iter()
        .filter_map(|r| Some((r, r.steps.iter().find(|s| s.name == step)?)))
        .unzip();
    let node_failures = crate::report::replication::node_failure_lines(&runs, &steps);
    let (all_runs, all_steps) = (runs.clone(), steps.clone());
    let incomplete = steps
        .iter()
        .filter(|s| s.status != RunStatus::Complete)
        .map(|s| format!("{:?}", s.status).to_lowercase())
        .collect();
    // A failed or interrupted step's figures cover only part of the step: they go into the
    // aggregate only when no repeat completed it (and the step is marked either way).
    let (runs, steps): (Vec<&RunResult>, Vec<&StepResult>) =
        if steps.iter().any(|s| s.status == RunStatus::Complete) {
            runs.into_iter()
                .zip(steps)
                .filter(|(_, s)| s.status == RunStatus::Complete)
                .unzip()
        } else {
            (runs, steps)
        };
    let select_min_us = Stat::of(
        &steps
            .iter()
            .filter_map(|s| s.select_min.as_ref().map(|m| m.max_us as f64))
            .collect::<Vec<_>>(),
    );
    let op_names: BTreeSet<&String> = steps.iter().flat_map(|s| s.ops.keys()).collect();
    let mut ops = BTreeMap::new();
    for op in op_names {
        if let Some(agg) = op_agg(&runs, &steps, op)? {
            ops.insert(op.clone(), agg);
        }
    }
    let flags = runs
        .iter()
        .zip(&steps)
        .filter_map(|(r, s)| crate::report::compare::steady::run_flag(&r.run_id, s))
        .collect();
    Ok(GroupStep {
        group: group.name.clone(),
        pacing: crate::report::pacing::Pacing::of(&steps),
        measured: crate::report::measured::Measured::of((&all_runs, &all_steps), &runs, &steps),
        flags,
        servers: crate::report::replication::server_stats(&steps),
        counters: counter_stats(&steps),
        waits: wait_stats(&steps),
        incomplete,
        node_failures,
        throughput: metric_stats(THROUGHPUT, &steps),
        efficiency: metric_stats(EFFICIENCY, &steps),
        micro: if crate::report::names::parse_step(step).is_some() {
            metric_stats(MICRO, &steps)
        } else {
            BTreeMap::new()
        },
        sla: sla_agg(&steps),
        select_min_us,
        ops,
    })
}

/// The writer SLA of a query step over `steps` (only a completed step's was evaluated: older
/// documents say `pass` for the others).
fn sla_agg(steps: &[&StepResult]) -> Option<SlaAgg> {
    let slas: Vec<_> = steps
        .iter()
        .filter(|s| s.status == RunStatus::Complete)
        .filter_map(|s| s.sla.as_ref())
        .collect();
    slas.first().map(|first| SlaAgg {
        target: first.target_inserts_per_s,
        inserts_per_s: Stat::of(&slas.iter().map(|s| s.inserts_per_s).collect::<Vec<_>>())
            .unwrap_or_default(),
        seconds_met_pct: Stat::of(
            &slas
                .iter()
                .map(|s| 100.0 * s.seconds_met_share)
                .collect::<Vec<_>>(),
        )
        .unwrap_or_default(),
        passed: slas.iter().filter(|s| s.pass).count(),
        runs: slas.len(),
    })
}

/// The DBMS's key counters over `steps`, median over the runs.
fn counter_stats(steps: &[&StepResult]) -> BTreeMap<String, Stat> {
    let counter_names: BTreeSet<&String> = steps
        .iter()
        .filter_map(|s| s.efficiency.as_ref())
        .flat_map(|e| e.counters_per_op.keys())
        .collect();
    counter_names
        .into_iter()
        .filter_map(|name| {
            let values: Vec<f64> = steps
                .iter()
                .filter_map(|s| s.dbms_counters.get(name).copied())
                .collect();
            Some((name.clone(), Stat::of(&values)?))
        })
        .collect()
}

/// Seconds in each wait event over `steps`, median over the runs that recorded waits.
fn wait_stats(steps: &[&StepResult]) -> BTreeMap<String, Stat> {
    let wait_names: BTreeSet<&String> = steps.iter().flat_map(|s| s.wait_events.keys()).collect();
    wait_names
        .into_iter()
        .filter_map(|name| {
            // A run that recorded waits but not this one spent no time in it.
            let values: Vec<f64> = steps
                .iter()
                .filter(|s| !s.wait_events.is_empty())
                .map(|s| s.wait_events.get(name).copied().unwrap_or(0.0))
                .collect();
            Some((name.clone(), Stat::of(&values)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_reaches_five_nines() {
        let q = curve_quantiles();
        assert_eq!(q[0], 0.0);
        assert!((q.last().unwrap() - 0.99999).abs() < 1e-12);
    }
}

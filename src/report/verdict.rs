//! The verdict's figures per configuration (the model's [`ConfigVerdict`]): what the report's
//! other figures lack, read from the runs: rows and duration, per step the seconds without an
//! op of its main type and how stable its rate was, and the steps a neighbour disturbed. The
//! verdict section (`sections/verdict.rs`) is made from them and the steps' figures.

use crate::report::compare::stats::MIN_SECONDS;
use crate::report::model::{ConfigVerdict, StepSteadiness};
use crate::report::per_second;
use crate::report::select::Group;
use crate::report::stat::Stat;
use crate::results::model::RunResult;

fn step_steadiness(group: &Group, step: &str) -> Option<StepSteadiness> {
    let mut op = None;
    let (mut zero, mut full) = (0, 0);
    let mut stable = Vec::new();
    for r in &group.runs {
        let Some(s) = r.steps.iter().find(|s| s.name == step) else {
            continue;
        };
        let ops = &s.per_second.total.ops;
        let name = ["query", "insert"]
            .into_iter()
            .find(|o| ops.contains_key(*o))
            .or_else(|| {
                ops.keys()
                    .find(|o| o.as_str() != "getmin")
                    .map(|o| o.as_str())
            })?;
        let series = &ops[name];
        let mut run_full = 0;
        for p in per_second::rates(&series.rows, s.duration_s).samples {
            if !p.partial {
                run_full += 1;
                zero += usize::from(p.value == Some(0.0));
            }
        }
        full += run_full;
        // Percentiles of one or two seconds say nothing of stability.
        if let Some(rp) = s
            .rate_percentiles
            .get(name)
            .filter(|rp| rp.p50 > 0 && run_full >= MIN_SECONDS)
        {
            stable.push(100.0 * rp.p99 as f64 / rp.p50 as f64);
        }
        op = Some(name.to_string());
    }
    Some(StepSteadiness {
        step: step.to_string(),
        op: op?,
        zero_seconds: zero,
        full_seconds: full,
        p99_of_p50_pct: Stat::of(&stable).map(|s| s.median),
    })
}

/// The verdict figures of each group over `steps`.
pub fn build(groups: &[Group], steps: &[String]) -> Vec<ConfigVerdict> {
    groups
        .iter()
        .map(|g| {
            let rows: Vec<f64> = g
                .runs
                .iter()
                .map(|r| {
                    let ins: u64 = r.steps.iter().map(|s| s.rows_inserted).sum();
                    let del: u64 = r.steps.iter().map(|s| s.rows_deleted).sum();
                    ins.saturating_sub(del) as f64
                })
                .collect();
            let durations: Vec<f64> = g
                .runs
                .iter()
                .filter_map(|r| {
                    let end = r.finished_at?;
                    Some((end - r.started_at).num_milliseconds() as f64 / 1e3)
                })
                .collect();
            ConfigVerdict {
                config: g.name.clone(),
                rows: Stat::of(&rows),
                duration_s: Stat::of(&durations),
                steps: steps.iter().filter_map(|s| step_steadiness(g, s)).collect(),
                disturbed: {
                    let runs: Vec<&RunResult> = g.runs.iter().collect();
                    steps
                        .iter()
                        .flat_map(|s| {
                            crate::report::interference::disturbed_runs(&runs, s)
                                .into_iter()
                                .map(move |(run, why)| (s.clone(), run, why))
                        })
                        .collect()
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::model::{OpSeries, RunResult};

    #[test]
    fn a_full_second_without_an_op_of_the_main_type_is_counted() {
        let text = include_str!("../../tests/fixtures/results-v1.json");
        let mut run: RunResult = serde_json::from_str(text).unwrap();
        let step = &mut run.steps[0];
        step.duration_s = 4.5;
        // Queries are the main op: 0 in seconds 1 and 2; the partial last second is not full.
        let queries = vec![10, 0, 0, 10, 0];
        step.per_second.total.ops = [
            (
                "query".to_string(),
                OpSeries {
                    ops: queries.clone(),
                    rows: queries,
                    max_us: vec![9; 5],
                    ..Default::default()
                },
            ),
            (
                "insert".to_string(),
                OpSeries {
                    ops: vec![1; 5],
                    rows: vec![1; 5],
                    max_us: vec![9; 5],
                    ..Default::default()
                },
            ),
        ]
        .into();
        let g = Group {
            name: "x".to_string(),
            runs: vec![run],
        };
        let s = step_steadiness(&g, "l.i0").unwrap();
        assert_eq!(
            (s.op.as_str(), s.zero_seconds, s.full_seconds),
            ("query", 2, 4)
        );
        let v = &build(&[g], &["l.i0".to_string()])[0];
        assert_eq!(v.rows.as_ref().unwrap().median, 2_000.0);
    }
}

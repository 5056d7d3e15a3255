//! The rows of a comparison before their tests: per step both sides ran, each figure's
//! estimates on A and B, its values by round where pairing pays, its resolution, the step's
//! flags, the changes inside the DBMS, and the runs a neighbour disturbed in it (left out of
//! the step when two or more a side remain, else named to withhold its changes).

use std::collections::BTreeMap;

use super::pool::{self, Pending};
use super::stats::{self, Second, Side};
use super::withheld::{self, step_flag};
use super::{ADVISED_RUNS, Unit, explain, metrics};
use crate::report::stat::StepFlag;
use crate::results::model::{RunResult, RunStatus, StepResult};

/// What [`steps`] gathers.
pub(super) struct Gathered {
    /// A row per step and figure, untested.
    pub rows: Vec<Pending>,
    /// Per step, the DBMS's gauges and wait events that changed most.
    pub explained: Vec<explain::Change>,
    /// The first flag of each step flagged in a run.
    pub flags: BTreeMap<String, StepFlag>,
    /// Per (step, figure key), the coarsest run's resolution.
    pub resolution: BTreeMap<(String, String), f64>,
    /// Step, run, why: a neighbour disturbed the step there, too few runs left to judge it.
    pub disturbed: Vec<(String, String, String)>,
    /// Step, run, why: left out of the step's test, two or more runs a side remaining.
    pub left_out: Vec<(String, String, String)>,
}

/// The rows of every step of A's first run that both sides ran (`runs`: A, B), their samples
/// being `unit`, paired by round as `pairs` says where pairing pays at `1 - alpha`.
pub(super) fn steps(
    runs: (&[RunResult], &[RunResult]),
    unit: Unit,
    pairs: Option<&[(usize, usize)]>,
    alpha: f64,
) -> Gathered {
    let (all_a, all_b) = runs;
    let mut g = Gathered {
        rows: Vec::new(),
        explained: Vec::new(),
        flags: BTreeMap::new(),
        resolution: BTreeMap::new(),
        disturbed: Vec::new(),
        left_out: Vec::new(),
    };
    let steps = match (all_a.first(), all_b.is_empty()) {
        (Some(first), false) => first.steps.as_slice(),
        _ => &[],
    };
    for step in steps {
        // A step a neighbour disturbed in some runs is judged on the others when two or more
        // a side remain (no rounds to pair then); else a change in it is not called.
        let hit = withheld::disturbed_in(all_a, all_b, &step.name);
        let kept = (unit == Unit::Runs)
            .then(|| withheld::undisturbed(all_a, all_b, &step.name, &hit))
            .flatten();
        let named = hit
            .into_iter()
            .map(|(run, why)| (step.name.clone(), run, why));
        let (a, b, pairs) = match &kept {
            Some((ka, kb)) => {
                g.left_out.extend(named);
                (ka.as_slice(), kb.as_slice(), None)
            }
            None => {
                g.disturbed.extend(named);
                (all_a, all_b, pairs)
            }
        };
        // Steps every run has; of those, only the runs that completed the step count.
        let (Some(sa), Some(sb)) = (completed(a, &step.name), completed(b, &step.name)) else {
            continue;
        };
        g.explained
            .extend(explain::step_changes(&step.name, &sa, &sb));
        if let Some(f) = step_flag(a, b, &step.name) {
            g.flags.insert(step.name.clone(), f);
        }
        for metric in metrics::for_step(step) {
            let coarsest = sa.iter().chain(&sb).map(|s| (metric.quantum)(s));
            g.resolution.insert(
                (step.name.clone(), metric.key.clone()),
                coarsest.fold(0.0, f64::max),
            );
            let estimates = sides(&metric, &sa, &sb, unit);
            let by_round = pool::by_round(&metric, &step.name, (a, b), (pairs, alpha), &estimates);
            // The steps a figure's noise is pooled over: rate-limited query steps (the
            // background writer) apart from free-running ones, paired rows apart.
            let pool = (metric.key.clone(), step.sla.is_some(), by_round.is_some());
            g.rows
                .push((step.name.clone(), metric, estimates, pool, by_round));
        }
    }
    g
}

/// The step `name` of each run that completed it; `None` when some run does not have it.
fn completed<'a>(runs: &'a [RunResult], name: &str) -> Option<Vec<&'a StepResult>> {
    let steps: Vec<&StepResult> = runs
        .iter()
        .map(|r| r.steps.iter().find(|s| s.name == name))
        .collect::<Option<_>>()?;
    Some(
        steps
            .into_iter()
            .filter(|s| s.status == RunStatus::Complete)
            .collect(),
    )
}

/// Each side's estimate of `metric`, or why there is none.
fn sides(
    metric: &metrics::Metric,
    a: &[&StepResult],
    b: &[&StepResult],
    unit: Unit,
) -> Result<(Side, Side), String> {
    let side = |steps: &[&StepResult], name: &str| -> Result<Side, String> {
        if steps.is_empty() {
            return Err(format!("no run of {name} completed the step"));
        }
        match unit {
            Unit::Runs => {
                let values: Vec<f64> = steps.iter().filter_map(|s| metric.run_value(s)).collect();
                if values.len() < steps.len() {
                    let needs = match metric.needs {
                        "" => String::new(),
                        n => format!(": it needs {n}"),
                    };
                    return Err(format!("not measured in every run of {name}{needs}"));
                }
                let quantum =
                    steps.iter().map(|s| (metric.quantum)(s)).sum::<f64>() / steps.len() as f64;
                stats::from_quantized_runs(&values, quantum)
                    .ok_or_else(|| format!("fewer than 2 runs of {name} completed the step"))
            }
            Unit::Seconds => {
                let seconds: Vec<Vec<Second>> = steps
                    .iter()
                    .map(|s| metric.seconds(s))
                    .collect::<Option<_>>()
                    .ok_or_else(|| {
                        format!(
                            "one value per run: needs repeated runs ({ADVISED_RUNS} a side \
                             advised)"
                        )
                    })?;
                stats::from_seconds(&seconds).ok_or_else(|| {
                    format!(
                        "fewer than {} full seconds in {name}: a short step needs repeated \
                         runs ({ADVISED_RUNS} a side advised)",
                        stats::MIN_SECONDS
                    )
                })
            }
        }
    };
    Ok((side(a, "A")?, side(b, "B")?))
}

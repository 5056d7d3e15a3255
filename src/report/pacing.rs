//! The terminal summary's section on each step's warm-up and cool-down (`--warmup`,
//! `--cooldown`): what ran before the measured part and is in none of its figures, and the
//! pause the run took before the step; and the same per step and configuration in the HTML
//! and Markdown reports.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::output::format::seconds;
use crate::report::stat::Stat;
use crate::report::table::Table;
use crate::results::model::{RunResult, StepResult, Warmup};

/// A table of the steps that warmed up or paused before; empty for a run with neither.
pub fn section(run: &RunResult) -> String {
    let mut t = Table::new(["step", "cool-down", "warm-up", "warm-up ops (not counted)"]);
    for s in &run.steps {
        if s.warmup.is_none() && s.cooldown_s.is_none() {
            continue;
        }
        let (warm, ops) = match &s.warmup {
            Some(w) => (
                seconds(w.seconds),
                w.ops
                    .iter()
                    .map(|(op, n)| format!("{n} {op}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            None => ("-".to_string(), "-".to_string()),
        };
        let cool = s.cooldown_s.map_or_else(|| "-".to_string(), seconds);
        t.row([
            crate::output::escape::line(&s.name).into_owned(),
            cool,
            warm,
            ops,
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    format!(
        "\nBefore each step: the pause (--cooldown) and the warm-up (--warmup), in no figure \
         above\n\n{}",
        t.to_text()
    )
}

/// The maintenance pauses before steps (after the load, after writes), each in one line: how
/// long, what was done and what it waited for; empty for a run without one.
pub fn pauses_section(run: &RunResult) -> String {
    if run.maintenance.is_empty() {
        return String::new();
    }
    let mut out = "\nMaintenance pauses (in no step's figures)\n".to_string();
    for m in &run.maintenance {
        out.push_str(&format!(
            "  before {} ({}): {}\n",
            crate::output::escape::line(&m.before_step),
            seconds(m.duration_s),
            crate::output::escape::line(&m.actions)
        ));
    }
    out
}

/// A step's warm-up and the pause before it over a group's runs (medians over the runs that
/// had one): what a reader must know was left out of the step's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pacing {
    /// Runs of the group whose step warmed up.
    pub warmed_runs: usize,
    /// Seconds of the warm-up, median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    /// Statements per op type in the warm-up, medians (not counted in the step).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub warmup_ops: BTreeMap<String, f64>,
    /// Rows the warm-up inserted and deleted, medians (a load step's warm-up rows count
    /// towards its rows, not its rates).
    pub warmup_rows: (f64, f64),
    /// Seconds of the pause before the step (`--cooldown`), median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_s: Option<f64>,
}

impl Pacing {
    /// The pacing of `steps` (one per run of a group), `None` when none warmed up or paused.
    pub fn of(steps: &[&StepResult]) -> Option<Pacing> {
        let warm: Vec<&Warmup> = steps.iter().filter_map(|s| s.warmup.as_ref()).collect();
        let cool: Vec<f64> = steps.iter().filter_map(|s| s.cooldown_s).collect();
        if warm.is_empty() && cool.is_empty() {
            return None;
        }
        let median = |v: Vec<f64>| Stat::of(&v).map(|s| s.median);
        let ops: BTreeSet<&String> = warm.iter().flat_map(|w| w.ops.keys()).collect();
        let warmup_ops = ops
            .into_iter()
            .filter_map(|op| {
                let counts = warm.iter().map(|w| *w.ops.get(op).unwrap_or(&0) as f64);
                Some((op.clone(), median(counts.collect())?))
            })
            .collect();
        let rows = |f: fn(&Warmup) -> u64| {
            median(warm.iter().map(|w| f(w) as f64).collect()).unwrap_or(0.0)
        };
        Some(Pacing {
            warmed_runs: warm.len(),
            warmup_s: median(warm.iter().map(|w| w.seconds).collect()),
            warmup_ops,
            warmup_rows: (rows(|w| w.rows_inserted), rows(|w| w.rows_deleted)),
            cooldown_s: median(cool),
        })
    }

    /// The warm-up in words: `2.0 s (1234 query; +10 -10 rows)`, or `-`.
    pub(crate) fn warmup_text(&self) -> String {
        let Some(secs) = self.warmup_s else {
            return "-".to_string();
        };
        let mut parts: Vec<String> = self
            .warmup_ops
            .iter()
            .map(|(op, n)| format!("{n:.0} {op}"))
            .collect();
        let (ins, del) = self.warmup_rows;
        if ins > 0.0 || del > 0.0 {
            parts.push(format!("rows +{ins:.0} -{del:.0}"));
        }
        if parts.is_empty() {
            seconds(secs)
        } else {
            format!("{} ({})", seconds(secs), parts.join(", "))
        }
    }
}

//! What changed most inside the DBMS between A and B, step by step: the gauges
//! (`efficiency.per_second.gauges`) and the wait events (`wait_events`) whose means moved
//! most. Descriptive, not tested: these point at where to look, the metrics' tests above say
//! whether the change is real.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::report::gauges::is_cumulative;
use crate::results::model::StepResult;

/// Changes named per step (gauges and waits together).
pub const PER_STEP: usize = 5;
/// Wait events below this many sessions waiting on average on both sides are left out.
const MIN_SESSIONS: f64 = 0.05;

/// One figure that changed between A and B.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// Step name.
    pub step: String,
    /// `gauge` or `wait`.
    pub kind: &'static str,
    /// The gauge's or wait event's name.
    pub name: String,
    /// What the values are.
    pub unit: &'static str,
    /// Mean over A's runs.
    pub a: f64,
    /// Mean over B's runs.
    pub b: f64,
    /// `b / a - 1`, percent; `None` when `a` is 0.
    pub change_pct: Option<f64>,
}

/// A gauge's value for a step: the mean of its readings, or for a cumulative gauge its
/// increase per second.
fn gauge_value(readings: &[Option<f64>], cumulative: bool) -> Option<f64> {
    let v: Vec<f64> = readings.iter().flatten().copied().collect();
    if cumulative {
        let (first, last) = (v.first()?, v.last()?);
        (v.len() >= 2).then(|| (last - first) / (v.len() - 1) as f64)
    } else if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// Each figure of one step, by (kind, name): gauges and waits (sessions waiting on average:
/// seconds waited over the step's length).
fn figures(s: &StepResult) -> BTreeMap<(&'static str, String), f64> {
    let mut out = BTreeMap::new();
    if let Some(e) = &s.efficiency {
        for (name, readings) in &e.per_second.gauges {
            if let Some(v) = gauge_value(readings, is_cumulative(name)) {
                out.insert(("gauge", name.clone()), v);
            }
        }
    }
    if s.duration_s > 0.0 {
        for (name, secs) in &s.wait_events {
            out.insert(("wait", name.clone()), secs / s.duration_s);
        }
    }
    out
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The figures of `step` that changed most from A's runs to B's, at most [`PER_STEP`],
/// largest relative change first (a figure that was 0 on one side first of all).
pub fn step_changes(step: &str, a: &[&StepResult], b: &[&StepResult]) -> Vec<Change> {
    let fa: Vec<_> = a.iter().map(|s| figures(s)).collect();
    let fb: Vec<_> = b.iter().map(|s| figures(s)).collect();
    let keys: BTreeSet<&(&'static str, String)> =
        fa.iter().chain(&fb).flat_map(|f| f.keys()).collect();
    let side = |f: &[BTreeMap<(&'static str, String), f64>], k: &(&'static str, String)| {
        // A run that recorded waits but not this one waited 0 in it.
        let v: Vec<f64> = f
            .iter()
            .filter_map(|m| match m.get(k) {
                Some(v) => Some(*v),
                None if k.0 == "wait" && m.keys().any(|x| x.0 == "wait") => Some(0.0),
                None => None,
            })
            .collect();
        (!v.is_empty()).then(|| mean(&v))
    };
    // Ranked by relative change; among equal ones (every figure that appeared or vanished
    // scores 1), the larger one first: a lock wait of a whole session that appeared outranks
    // a trace of client reads that vanished.
    let mut out: Vec<(f64, f64, Change)> = keys
        .into_iter()
        .filter_map(|k| {
            let (a, b) = (side(&fa, k)?, side(&fb, k)?);
            let most = a.abs().max(b.abs());
            if most == 0.0 || a == b || (k.0 == "wait" && most < MIN_SESSIONS) {
                return None;
            }
            let score = (b - a).abs() / most;
            Some((
                score,
                most,
                Change {
                    step: step.to_string(),
                    kind: k.0,
                    name: k.1.clone(),
                    unit: match k.0 {
                        "wait" => "sessions waiting",
                        _ if is_cumulative(&k.1) => "per second",
                        _ => "mean level",
                    },
                    a,
                    b,
                    change_pct: (a != 0.0).then(|| (b / a - 1.0) * 100.0),
                },
            ))
        })
        .collect();
    out.sort_by(|x, y| {
        y.0.total_cmp(&x.0)
            .then(y.1.total_cmp(&x.1))
            .then(x.2.name.cmp(&y.2.name))
    });
    out.into_iter().take(PER_STEP).map(|(_, _, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauge_values_are_means_or_rates() {
        let r = [Some(2.0), None, Some(4.0), Some(10.0)];
        assert_eq!(gauge_value(&r, false), Some(16.0 / 3.0));
        assert_eq!(gauge_value(&r, true), Some(4.0));
        assert_eq!(gauge_value(&[Some(1.0)], true), None);
        assert_eq!(gauge_value(&[], false), None);
    }
}

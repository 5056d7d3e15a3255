//! A figure's pools over steps and the test of a row: a row's noise is moderated (Smyth 2004,
//! `moderate.rs`) towards the prior fitted to the same figure's noise over the other steps of
//! its kind (rate-limited steps apart, rows paired by round apart: their variance is of a log
//! ratio, not of one run's log value).

use std::collections::BTreeMap;

use super::stats::{self, Side, Test};
use super::{metrics, moderate, paired};

/// A row before its test: step, metric, each side's estimate, the pool its noise is
/// moderated in (metric key, rate-limited step, paired by round) and its values by round.
pub(super) type Pending = (
    String,
    metrics::Metric,
    Result<(Side, Side), String>,
    Pool,
    Option<paired::Paired>,
);

/// A figure's pool over steps: metric key, rate-limited step, paired by round.
pub(super) type Pool = (String, bool, bool);

/// Step `step`'s `metric` paired by round (`pairs`, of runs A and B), when the runs can be
/// paired and pairing pays against the unpaired test on `estimates` (at `1 - alpha`).
pub(super) fn by_round(
    metric: &metrics::Metric,
    step: &str,
    runs: (
        &[crate::results::model::RunResult],
        &[crate::results::model::RunResult],
    ),
    (pairs, alpha): (Option<&[(usize, usize)]>, f64),
    estimates: &Result<(Side, Side), String>,
) -> Option<paired::Paired> {
    let p = paired::values(metric, step, runs, pairs?)?;
    let Ok((a, b)) = estimates else {
        return None;
    };
    paired::pays(&p, a, b, alpha).then_some(p)
}

/// The test of one row: paired by round when it has rounds, else on the sides; moderated
/// by `prior` when its pool has one. `None` when a side's value is 0.
pub(super) fn test_row(
    (a, b): (Side, Side),
    by_round: Option<&paired::Paired>,
    prior: Option<&moderate::Prior>,
) -> Option<Test> {
    match by_round {
        Some(p) => paired::test(p, prior, (&a, &b)),
        None => prior
            .and_then(|prior| stats::moderated_test(&a, &b, prior))
            .or_else(|| stats::ratio_test(&a, &b)),
    }
}

/// Per pool of rows (one figure over the steps of one kind), the prior of the moderated t
/// (`moderate.rs`), where enough steps measured a spread.
pub(super) fn priors(rows: &[Pending]) -> BTreeMap<Pool, moderate::Prior> {
    let mut pools: BTreeMap<Pool, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (_, _, estimates, pool, by_round) in rows {
        let variance = match by_round {
            Some(p) => Some(p.variance()),
            None => estimates
                .as_ref()
                .ok()
                .and_then(|(a, b)| stats::pooled_log_variance(a, b)),
        };
        if let Some((s2, d)) = variance {
            let entry = pools.entry(pool.clone()).or_default();
            entry.0.push(s2);
            entry.1.push(d);
        }
    }
    pools
        .into_iter()
        .filter_map(|(pool, (s2, d))| Some((pool, moderate::fit_prior(&s2, &d)?)))
        .collect()
}

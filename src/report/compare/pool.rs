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
/// by `prior` when its pool has one; else, with as many runs on each side, Student's t on the
/// variance of one run's log value pooled over both sides ([`NO_PRIOR`]: with equal sizes its
/// standard error is Welch's, and its `2n - 2` degrees of freedom hold its level even when one
/// side is five times noisier than the other, where Welch's fall towards `n - 1` and its
/// interval widens fivefold; see the test below); else Welch's t. `None` when a side's
/// value is 0.
pub(super) fn test_row(
    (a, b): (Side, Side),
    by_round: Option<&paired::Paired>,
    prior: Option<&moderate::Prior>,
) -> Option<Test> {
    match by_round {
        Some(p) => paired::test(p, prior, (&a, &b)),
        None => prior
            .and_then(|prior| stats::moderated_test(&a, &b, prior))
            .or_else(|| {
                (a.n == b.n && a.n_eff == a.n as f64 && b.n_eff == b.n as f64)
                    .then(|| stats::moderated_test(&a, &b, &NO_PRIOR))
                    .flatten()
            })
            .or_else(|| stats::ratio_test(&a, &b)),
    }
}

/// A prior that lends nothing: the moderated t with it is Student's pooled t.
pub(super) const NO_PRIOR: moderate::Prior = moderate::Prior { s2: 0.0, df: 0.0 };

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

#[cfg(test)]
mod tests {
    use super::*;

    /// Log-normal runs: `n` a side, relative noise `cv_a` and `cv_b`, B's level `ratio` times
    /// A's; the share of `trials` in which the row's test (no prior) has p < `alpha`.
    fn rejections(n: usize, (cv_a, cv_b): (f64, f64), ratio: f64, alpha: f64) -> f64 {
        let mut z = stats::normals(0x9e3779b97f4a7c15);
        let trials = 4000;
        let mut hits = 0;
        for _ in 0..trials {
            let a: Vec<f64> = (0..n).map(|_| 1000.0 * (cv_a * z()).exp()).collect();
            let b: Vec<f64> = (0..n)
                .map(|_| 1000.0 * ratio * (cv_b * z()).exp())
                .collect();
            let sides = (stats::from_runs(&a).unwrap(), stats::from_runs(&b).unwrap());
            hits += usize::from(test_row(sides, None, None).unwrap().p < alpha);
        }
        hits as f64 / trials as f64
    }

    #[test]
    fn equal_sizes_hold_the_level_and_decide_with_three_runs() {
        // A/A (one configuration twice: its noise alike on both sides), three runs a side:
        // at p < 0.05, 5% of the trials, as the level says.
        let r = rejections(3, (0.1, 0.1), 1.0, 0.05);
        assert!(r < 0.065, "A/A rejected {r}");
        // Two configurations with the same mean but noise fivefold apart (synchronous=OFF at
        // 20% against FULL at 4%): 8.9% at p < 0.05, the price of the pooled variance (the
        // Behrens-Fisher problem); A/A, what the false-alarm rate is about, is exact.
        let r = rejections(3, (0.2, 0.04), 1.0, 0.05);
        assert!(r < 0.1, "same mean, unequal noise: rejected {r}");
        // A 2.6x drop with that noise: Student's pooled t finds it at p < 0.01 in nearly
        // every trial; Welch's (about 2 degrees of freedom) in far fewer.
        let found = rejections(3, (0.2, 0.04), 1.0 / 2.6, 0.01);
        assert!(found > 0.9, "found {found}");
    }

    /// Simulated comparisons of `n` runs a side over steps with log-normal noise of relative
    /// size `cvs`, B's first step `ratio` times A's: the share in which step 0 has p < 0.01,
    /// moderated (as `compare` does) and by Welch's t alone.
    fn moderated_rejections(cvs: &[f64], n: usize, ratio: f64, trials: usize) -> (f64, f64) {
        use stats::{from_runs, moderated_test, pooled_log_variance, ratio_test};
        let mut z = stats::normals(7);
        let (mut moderated, mut welch) = (0, 0);
        for _ in 0..trials {
            let sides: Vec<_> = cvs
                .iter()
                .enumerate()
                .map(|(i, &cv)| {
                    let mut draw = |m: f64| {
                        let v: Vec<f64> = (0..n).map(|_| m * (cv * z()).exp()).collect();
                        from_runs(&v).unwrap()
                    };
                    let b = if i == 0 { ratio } else { 1.0 };
                    (draw(1000.0), draw(1000.0 * b))
                })
                .collect();
            let (s2, df): (Vec<f64>, Vec<f64>) = sides
                .iter()
                .map(|(a, b)| pooled_log_variance(a, b).unwrap())
                .unzip();
            let (a, b) = &sides[0];
            let t = match moderate::fit_prior(&s2, &df) {
                Some(prior) => moderated_test(a, b, &prior).unwrap(),
                None => ratio_test(a, b).unwrap(),
            };
            moderated += usize::from(t.p < 0.01);
            welch += usize::from(ratio_test(a, b).unwrap().p < 0.01);
        }
        (
            moderated as f64 / trials as f64,
            welch as f64 / trials as f64,
        )
    }

    #[test]
    fn moderation_keeps_a_a_at_its_level_and_finds_a_halving_more_often_than_welch() {
        // A/A with steps alike, and with the noisiest of steps whose noise differs sixfold
        // tested: 0.8% and 1.2% at p < 0.01 (plain limma: 1.5% and 3.9%).
        for cvs in [[0.1; 4], [0.3, 0.1, 0.2, 0.05]] {
            let (m, _) = moderated_rejections(&cvs, 3, 1.0, 4000);
            assert!(m < 0.018, "A/A at p<0.01 rejected {m} with noise {cvs:?}");
        }
        // Halved, 30% noise between runs, three runs a side: Welch's t finds it 13% of the
        // time at p < 0.01, moderated about twice as often.
        let (m, w) = moderated_rejections(&[0.3, 0.3, 0.25, 0.35], 3, 0.5, 2000);
        assert!(m > w + 0.07, "moderated {m}, Welch {w}");
        // Two runs a side, 20% noise: Welch about 4%, moderated over three times that.
        let (m, w) = moderated_rejections(&[0.2; 4], 2, 0.5, 2000);
        assert!(m > w + 0.06, "moderated {m}, Welch {w}");
    }
}

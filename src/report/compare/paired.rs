//! Rounds as blocks: when both sides ran in the same rounds of one experiment (every cell
//! once a round, `experiment.round` in the results), a run of A and a run of B of one round
//! ran minutes apart on the same host state, and the figure is tested on the per-round log
//! ratios `d_r = ln(B_r / A_r)`: a paired t on their mean, so that drift from round to round
//! (a host getting busier, a disk filling) cancels instead of widening the interval.
//! The change is `exp(mean d) - 1` (the geometric mean of the rounds' ratios) and its interval
//! `exp(mean d +- t se)`, `se = s_d / sqrt(n)` on `n - 1` degrees of freedom, or with `s_d^2`
//! moderated as the unpaired test's variance is (`moderate.rs`, the prior fitted to the same
//! figure's paired variances over the other steps).
//!
//! Pairing spends degrees of freedom (`n - 1` against the unpaired `2n - 2`): with three
//! rounds, 2 instead of 4, and at the levels of a table of many tests the t quantile on 2
//! degrees of freedom is more than twice that on 4. It pays only when the rounds share
//! enough of the noise, so a row is tested paired only when its interval at `1 - alpha` would
//! be narrower than the unpaired one (t quantile times standard error, each on its own degrees
//! of freedom, [`pays`]): a choice made from the two sides' spreads and how they move
//! together, not from the change tested. Measured on a shared host
//! (tests/experiment_order.rs), l.i1 of synchronous=OFF against FULL over 3 rounds: FULL's
//! fsync noise is its own, the rounds' log ratios spread as much as the runs do, and always
//! paired its interval was [-94%, -31%] in one experiment (the same runs unpaired: [-86%,
//! -69%]) and inconclusive in two others (p 0.036, and [-99%, +391%] at p 0.011), where
//! Fisher's relative efficiency (Cochran and Cox, a variance on `f` degrees of freedom
//! weighing `(f + 1) / ((f + 3) s^2)`) had chosen pairing.
//!
//! Otherwise (runs outside an experiment, sides from different experiments, a round twice on
//! a side, fewer than 2 rounds in common) the unpaired test stands.

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::metrics::Metric;
use super::moderate::{self, Prior};
use super::stats::{self, Side, Test};
use crate::results::model::{RunResult, RunStatus, StepResult};

/// The runs of A and B paired by round: (index into A, index into B), by round; `None` unless
/// every run of both sides is of one experiment with its round recorded, no round is on a
/// side twice, and at least 2 rounds are on both sides.
pub fn rounds(a: &[RunResult], b: &[RunResult]) -> Option<Vec<(usize, usize)>> {
    let name = a.first()?.experiment.as_ref()?.name.clone();
    let by_round = |runs: &[RunResult]| -> Option<BTreeMap<u32, usize>> {
        let mut map = BTreeMap::new();
        for (i, r) in runs.iter().enumerate() {
            let tag = r.experiment.as_ref().filter(|t| t.name == name)?;
            if map.insert(tag.round?, i).is_some() {
                return None;
            }
        }
        Some(map)
    };
    let (ra, rb) = (by_round(a)?, by_round(b)?);
    let pairs: Vec<(usize, usize)> = ra
        .iter()
        .filter_map(|(round, &i)| Some((i, *rb.get(round)?)))
        .collect();
    (pairs.len() >= 2).then_some(pairs)
}

/// How many of the round `pairs` (indices into `a` and `b`) ran their two runs at the same
/// time (`ibench experiment --duet`): either run names the other as its partner.
pub fn in_duet(a: &[RunResult], b: &[RunResult], pairs: &[(usize, usize)]) -> usize {
    let names = |x: &RunResult, y: &RunResult| {
        x.experiment
            .as_ref()
            .and_then(|e| e.duet.as_ref())
            .is_some_and(|d| d.partner_run.as_deref() == Some(y.run_id.as_str()))
    };
    pairs
        .iter()
        .filter(|&&(i, j)| names(&a[i], &b[j]) || names(&b[j], &a[i]))
        .count()
}

/// One figure of one step over the rounds both sides completed it in.
#[derive(Clone, Debug)]
pub struct Paired {
    /// A's values, round by round.
    pub a: Vec<f64>,
    /// B's values, the same rounds.
    pub b: Vec<f64>,
    /// The least variance of one log ratio: where a figure is read in steps (`quantum`,
    /// clock ticks), each side's rounding error, as the unpaired test floors it.
    floor: f64,
}

impl Paired {
    /// The per-round log ratios.
    fn logs(&self) -> Vec<f64> {
        self.a
            .iter()
            .zip(&self.b)
            .map(|(a, b)| (b / a).ln())
            .collect()
    }

    /// The variance of one round's log ratio and its degrees of freedom (`n - 1`).
    pub fn variance(&self) -> (f64, f64) {
        let d = self.logs();
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let s2 = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (s2.max(self.floor), n - 1.0)
    }
}

/// `metric` of step `step` in each pair of runs (`pairs`, from [`rounds`]) where both
/// completed the step and measured a positive value; `None` with fewer than 2 such rounds.
pub fn values(
    metric: &Metric,
    step: &str,
    (a, b): (&[RunResult], &[RunResult]),
    pairs: &[(usize, usize)],
) -> Option<Paired> {
    let value = |run: &RunResult| -> Option<(f64, f64)> {
        let s: &StepResult = run
            .steps
            .iter()
            .find(|s| s.name == step && s.status == RunStatus::Complete)?;
        let v = metric.run_value(s).filter(|v| *v > 0.0)?;
        Some((v, (metric.quantum)(s)))
    };
    let mut p = Paired {
        a: Vec::new(),
        b: Vec::new(),
        floor: 0.0,
    };
    for &(i, j) in pairs {
        if let (Some((va, qa)), Some((vb, qb))) = (value(&a[i]), value(&b[j])) {
            p.a.push(va);
            p.b.push(vb);
            // Var ln v ~ var v / v^2; a reading rounded in steps of q has var >= q^2 / 3.
            p.floor += (qa / va).powi(2) / 3.0 + (qb / vb).powi(2) / 3.0;
        }
    }
    let n = p.a.len();
    p.floor /= n.max(1) as f64;
    (n >= 2).then_some(p)
}

/// Whether testing `paired` by round beats the unpaired test on the sides `a` and `b`: the
/// half-width of its interval at `1 - alpha`, `t(df) se` of the mean log ratio, below the
/// unpaired one's (both unmoderated).
pub fn pays(paired: &Paired, a: &Side, b: &Side, alpha: f64) -> bool {
    let Some((s2_u, df_u)) = stats::pooled_log_variance(a, b) else {
        return false;
    };
    let (s2_p, df_p) = paired.variance();
    let se_u = (s2_u * (1.0 / a.n as f64 + 1.0 / b.n as f64)).sqrt();
    let se_p = (s2_p / paired.a.len() as f64).sqrt();
    let q = 1.0 - alpha / 2.0;
    stats::t_quantile(df_p, q) * se_p < stats::t_quantile(df_u, q) * se_u
}

/// The paired test of `paired`: the mean log ratio over its standard error, the variance
/// squeezed towards `prior` when there is one; the sides' spreads (`sides`, of every run)
/// stay for the advice on how many runs would tell.
pub fn test(paired: &Paired, prior: Option<&Prior>, sides: (&Side, &Side)) -> Option<Test> {
    let d = paired.logs();
    let n = d.len();
    let log_ratio = d.iter().sum::<f64>() / n as f64;
    let (s2, df) = paired.variance();
    let (s2, df, prior_df) = match prior {
        Some(p) => (moderate::squeeze(s2, df, p), df + p.df, p.df),
        None => (s2, df, 0.0),
    };
    let se = (s2 / n as f64).sqrt();
    let (t, p) = if se > 0.0 {
        let t = log_ratio / se;
        let dist = StudentsT::new(0.0, 1.0, df).ok()?;
        (t, (2.0 * dist.sf(t.abs())).clamp(0.0, 1.0))
    } else if log_ratio == 0.0 {
        (0.0, 1.0)
    } else {
        (f64::INFINITY.copysign(log_ratio), 0.0)
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (side_a, side_b) = sides;
    if !log_ratio.is_finite() {
        return None;
    }
    Some(Test {
        mean_a: mean(&paired.a),
        mean_b: mean(&paired.b),
        change_pct: (log_ratio.exp() - 1.0) * 100.0,
        se_a: side_a.se,
        se_b: side_b.se,
        n_a: n,
        n_eff_a: n as f64,
        n_b: n,
        n_eff_b: n as f64,
        sd_run_a: side_a.sd_run,
        sd_run_b: side_b.sd_run,
        log_ratio,
        se_log_ratio: se,
        t,
        df,
        p,
        prior_df,
        paired_rounds: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::stats;

    fn paired(a: &[f64], b: &[f64]) -> Paired {
        Paired {
            a: a.to_vec(),
            b: b.to_vec(),
            floor: 0.0,
        }
    }

    /// Rounds that drift together: unpaired, the drift is noise and hides a 10% drop;
    /// paired by round it cancels and the drop is clear, its interval around 10%.
    #[test]
    fn pairing_cancels_drift_between_rounds() {
        let a = [100.0, 150.0, 200.0, 130.0];
        let b: Vec<f64> = a.iter().map(|v| v * 0.9).collect();
        let (sa, sb) = (stats::from_runs(&a).unwrap(), stats::from_runs(&b).unwrap());
        let unpaired = stats::ratio_test(&sa, &sb).unwrap();
        assert!(unpaired.p > 0.5, "{unpaired:?}");
        let b_noisy = [90.5, 134.0, 181.0, 116.5];
        let t = test(&paired(&a, &b_noisy), None, (&sa, &sb)).unwrap();
        assert!(t.p < 0.001, "{t:?}");
        assert_eq!((t.paired_rounds, t.df), (4, 3.0));
        let (lo, hi) = stats::ratio_interval(&t, 0.99);
        assert!(lo > 0.85 && hi < 0.95, "[{lo}, {hi}]");
        assert!((t.change_pct + 10.0).abs() < 1.0, "{}", t.change_pct);
        assert!(pays(&paired(&a, &b_noisy), &sa, &sb, 0.01));
        // Rounds that do not move together: pairing spends degrees of freedom for nothing.
        let c = [100.0, 102.0, 98.0, 101.0];
        let d = [91.0, 89.0, 90.5, 89.5];
        let (sc, sd) = (stats::from_runs(&c).unwrap(), stats::from_runs(&d).unwrap());
        assert!(!pays(&paired(&c, &d), &sc, &sd, 0.01));
        // Three rounds whose logs correlate at 0.63: Fisher's relative efficiency would pair
        // them (paired variance 0.0024 against 0.0054, weighed), but on 2 degrees of freedom
        // instead of 4 the interval at 99% is wider (+-0.38 against +-0.29 on the log scale).
        let e = [100.0, 110.0, 95.0];
        let f = [84.9, 82.4, 73.1];
        let (se, sf) = (stats::from_runs(&e).unwrap(), stats::from_runs(&f).unwrap());
        assert!(!pays(&paired(&e, &f), &se, &sf, 0.01));
        // Identical sides: no change, p 1.
        let same = test(&paired(&a, &a), None, (&sa, &sa)).unwrap();
        assert_eq!((same.log_ratio, same.p), (0.0, 1.0));
    }
}

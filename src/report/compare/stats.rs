//! The statistics of `ibench compare`, free of results and metrics: one side's estimate and
//! its standard error (from runs, or from one run's seconds corrected for autocorrelation),
//! Welch's t-test, the test and confidence interval of a ratio of two means (delta method on
//! the log scale), Benjamini–Hochberg adjusted p-values, and how many runs would settle an
//! inconclusive change.
//!
//! What is compared lives in `metrics.rs`; verdicts and wording in `compare.rs`.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// One second of a run: `num / den` is the second's value. Rates and response times have
/// `den = 1`; a cost per op has the second's cost in `num` and its ops in `den`, so that a
/// run's value is its total cost over its total ops (a ratio of sums), not a mean of ratios
/// in which a second with few ops weighs as much as a busy one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Second {
    /// Numerator (the value itself when `den` is 1).
    pub num: f64,
    /// Denominator, positive.
    pub den: f64,
}

impl Second {
    /// A plain value (`den = 1`).
    pub fn value(v: f64) -> Self {
        Second { num: v, den: 1.0 }
    }
}

/// One side's estimate of a metric, and how precise it is.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    /// The estimate: the mean of the runs' values, or the seconds' ratio of sums.
    pub mean: f64,
    /// Standard error of `mean`.
    pub se: f64,
    /// Samples: runs, or seconds.
    pub n: usize,
    /// Effective number of independent samples (runs: `n`; seconds: corrected for
    /// autocorrelation, summed over runs).
    pub n_eff: f64,
    /// Standard deviation of one run's value: measured between runs, or (from seconds) the
    /// standard error of one run's value, a lower bound of it.
    pub sd_run: f64,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Lag-1 autocorrelation of `v` (0 when undefined).
pub fn lag1_autocorrelation(v: &[f64]) -> f64 {
    if v.len() < 3 {
        return 0.0;
    }
    let m = mean(v);
    let var: f64 = v.iter().map(|x| (x - m).powi(2)).sum();
    if var == 0.0 {
        return 0.0;
    }
    let cov: f64 = v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    cov / var
}

/// Effective sample size of one run's series. The lag-1 autocorrelation counts only when it
/// exceeds Bartlett's bound `2 / sqrt(n)` (what white noise reaches by chance 5% of the time):
/// a few seconds of samples cannot tell drift from noise.
pub fn effective_n(v: &[f64]) -> f64 {
    let r1 = lag1_autocorrelation(v);
    let bound = 2.0 / (v.len().max(1) as f64).sqrt();
    let r = if r1 > bound { r1.min(0.99) } else { 0.0 };
    (v.len() as f64 * (1.0 - r) / (1.0 + r)).max(1.0)
}

/// One side from its runs' values (the run is the unit). `None` with fewer than 2 runs.
pub fn from_runs(values: &[f64]) -> Option<Side> {
    from_quantized_runs(values, 0.0)
}

/// [`from_runs`] for values read in steps of `quantum` (a CPU time in clock ticks, over the
/// ops): the variance of one run's value is at least `quantum^2 / 3`, that of two counters
/// (user and system time) each read at the start and the end with an even rounding error.
/// Otherwise runs that read the same number of ticks would claim a precision they do not have.
pub fn from_quantized_runs(values: &[f64], quantum: f64) -> Option<Side> {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let m = mean(values);
    let var = values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    let var = var.max(quantum * quantum / 3.0);
    Some(Side {
        mean: m,
        se: (var / n as f64).sqrt(),
        n,
        n_eff: n as f64,
        sd_run: var.sqrt(),
    })
}

/// Full seconds (the first and last of a step's series dropped) a side needs when the
/// seconds are the samples (a side of one run); a step with fewer is too short to compare on
/// its own (`steady.rs` flags it).
pub const MIN_SECONDS: usize = 3;

/// One side from the seconds of its runs, pooled (noise within runs only). The estimate is
/// the ratio of sums; its variance comes from the linearised residuals
/// `z = (num - mean * den) / mean(den)` (the delta method; for `den = 1` these are the
/// values minus their mean), over the effective sample size of each run's residuals, summed.
/// `None` with fewer than [`MIN_SECONDS`] seconds.
pub fn from_seconds(runs: &[Vec<Second>]) -> Option<Side> {
    let all: Vec<Second> = runs.iter().flatten().copied().collect();
    let n = all.len();
    let (sum_num, sum_den) = all
        .iter()
        .fold((0.0, 0.0), |(a, b), s| (a + s.num, b + s.den));
    if n < MIN_SECONDS || sum_den <= 0.0 || !sum_num.is_finite() {
        return None;
    }
    let m = sum_num / sum_den;
    let den_mean = sum_den / n as f64;
    let z =
        |r: &[Second]| -> Vec<f64> { r.iter().map(|s| (s.num - m * s.den) / den_mean).collect() };
    let var = all
        .iter()
        .map(|s| ((s.num - m * s.den) / den_mean).powi(2))
        .sum::<f64>()
        / (n - 1) as f64;
    let n_eff: f64 = runs
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| effective_n(&z(r)))
        .sum();
    let se = (var / n_eff).sqrt();
    let runs_with_seconds = runs.iter().filter(|r| !r.is_empty()).count().max(1);
    Some(Side {
        mean: m,
        se,
        n,
        n_eff,
        sd_run: se * (runs_with_seconds as f64).sqrt(),
    })
}

/// Welch's t-test of a difference `d` between two independent estimates with variances
/// `var_a`, `var_b` (squared standard errors) from `n_a`, `n_b` effective samples: the t
/// statistic, the Welch–Satterthwaite degrees of freedom and the two-sided p-value. With
/// both variances 0, p is 1 for `d = 0` and 0 otherwise.
pub fn welch_t(d: f64, var_a: f64, n_a: f64, var_b: f64, n_b: f64) -> (f64, f64, f64) {
    let var = var_a + var_b;
    if var <= 0.0 {
        let df = (n_a + n_b - 2.0).max(1.0);
        return if d == 0.0 {
            (0.0, df, 1.0)
        } else {
            (f64::INFINITY.copysign(d), df, 0.0)
        };
    }
    let t = d / var.sqrt();
    let df_den = var_a * var_a / (n_a - 1.0).max(1.0) + var_b * var_b / (n_b - 1.0).max(1.0);
    let df = if df_den > 0.0 {
        (var * var / df_den).max(1.0)
    } else {
        1.0
    };
    let p = match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => 2.0 * dist.sf(t.abs()),
        Err(_) => f64::NAN,
    };
    (t, df, p.clamp(0.0, 1.0))
}

/// The test of the ratio `mean_b / mean_a`: Welch's t on its logarithm, with the variance of
/// `ln mean` from the delta method, `(se / mean)^2`. Working on the log scale keeps the
/// interval of a ratio positive and asymmetric (a rate can halve or double, not fall below
/// -100%), and puts noise that scales with the mean (the usual kind) on one footing on both
/// sides, so a large change is not tested with the degrees of freedom of the noisier side
/// alone.
#[derive(Clone, Debug, Serialize)]
pub struct Test {
    /// A's estimate.
    pub mean_a: f64,
    /// B's estimate.
    pub mean_b: f64,
    /// `(mean_b / mean_a - 1) * 100`.
    pub change_pct: f64,
    /// Standard error of A's estimate.
    pub se_a: f64,
    /// Standard error of B's estimate.
    pub se_b: f64,
    /// Samples of A (runs or seconds).
    pub n_a: usize,
    /// Effective samples of A.
    pub n_eff_a: f64,
    /// Samples of B.
    pub n_b: usize,
    /// Effective samples of B.
    pub n_eff_b: f64,
    /// Standard deviation of one run's value, A (see [`Side::sd_run`]).
    pub sd_run_a: f64,
    /// Same for B.
    pub sd_run_b: f64,
    /// `ln(mean_b / mean_a)`.
    pub log_ratio: f64,
    /// Its standard error, `sqrt((se_a / mean_a)^2 + (se_b / mean_b)^2)`.
    pub se_log_ratio: f64,
    /// Welch's t of the log ratio.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value of "no change".
    pub p: f64,
    /// Degrees of freedom borrowed from the other steps of the same figure (the moderated
    /// t, `moderate.rs`); 0 for Welch's t on this step's runs alone.
    pub prior_df: f64,
    /// Rounds the runs were paired by (`paired.rs`): the test is on the per-round log
    /// ratios; 0 for the unpaired test.
    pub paired_rounds: usize,
}

/// Tests `mean_b / mean_a = 1`. `None` when a side's estimate is not positive (no ratio).
pub fn ratio_test(a: &Side, b: &Side) -> Option<Test> {
    let (ma, mb) = (a.mean, b.mean);
    if !(ma > 0.0 && mb > 0.0 && ma.is_finite() && mb.is_finite()) {
        return None;
    }
    let (va, vb) = ((a.se / ma).powi(2), (b.se / mb).powi(2));
    let log_ratio = (mb / ma).ln();
    let (t, df, p) = welch_t(log_ratio, va, a.n_eff, vb, b.n_eff);
    Some(Test {
        mean_a: ma,
        mean_b: mb,
        change_pct: (mb / ma - 1.0) * 100.0,
        se_a: a.se,
        se_b: b.se,
        n_a: a.n,
        n_eff_a: a.n_eff,
        n_b: b.n,
        n_eff_b: b.n_eff,
        sd_run_a: a.sd_run,
        sd_run_b: b.sd_run,
        log_ratio,
        se_log_ratio: (va + vb).sqrt(),
        t,
        df,
        p,
        prior_df: 0.0,
        paired_rounds: 0,
    })
}

/// The variance of the log of one run's value, pooled over both sides, and its degrees of
/// freedom: `((n_a - 1) cv_a^2 + (n_b - 1) cv_b^2) / (n_a + n_b - 2)` with `cv` the
/// relative standard deviation of one run (the delta method). `None` unless both sides
/// have two runs and a positive mean.
pub fn pooled_log_variance(a: &Side, b: &Side) -> Option<(f64, f64)> {
    if a.n < 2 || b.n < 2 || !(a.mean > 0.0 && b.mean > 0.0) {
        return None;
    }
    let (da, db) = ((a.n - 1) as f64, (b.n - 1) as f64);
    let (ca, cb) = (a.sd_run / a.mean, b.sd_run / b.mean);
    Some(((da * ca * ca + db * cb * cb) / (da + db), da + db))
}

/// The moderated t-test of `mean_b / mean_a = 1` (Smyth 2004; `moderate.rs`): the pooled
/// variance of the log of one run's value squeezed towards `prior`, on `prior.df + d`
/// degrees of freedom. `None` as for [`ratio_test`], or when the runs' spread is 0 (no
/// evidence of noise to squeeze: Welch's exact answer stands).
pub fn moderated_test(a: &Side, b: &Side, prior: &super::moderate::Prior) -> Option<Test> {
    let welch = ratio_test(a, b)?;
    let (s2, d) = pooled_log_variance(a, b)?;
    if s2 <= 0.0 {
        return None;
    }
    let post = super::moderate::squeeze(s2, d, prior);
    let se = (post * (1.0 / a.n as f64 + 1.0 / b.n as f64)).sqrt();
    let df = prior.df + d;
    let t = welch.log_ratio / se;
    let p = match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * dist.sf(t.abs())).clamp(0.0, 1.0),
        Err(_) => return None,
    };
    Some(Test {
        se_log_ratio: se,
        t,
        df,
        p,
        prior_df: prior.df,
        ..welch
    })
}

/// The `q` quantile of Student's t with `df` degrees of freedom.
pub fn t_quantile(df: f64, q: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.inverse_cdf(q),
        Err(_) => f64::NAN,
    }
}

/// The confidence interval, at `level` (e.g. 0.99), of the ratio `mean_b / mean_a`:
/// `exp(ln ratio +- t(df) se)`, with the test's own t quantile, so that it excludes 1
/// exactly when `test.p < 1 - level`.
pub fn ratio_interval(test: &Test, level: f64) -> (f64, f64) {
    let half = t_quantile(test.df, 0.5 + level / 2.0) * test.se_log_ratio;
    let half = if half.is_finite() {
        half
    } else {
        f64::INFINITY
    };
    ((test.log_ratio - half).exp(), (test.log_ratio + half).exp())
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the order given: `q_(i) = min over
/// j >= i of m p_(j) / j`, at most 1. Rejecting `q <= alpha` controls the false discovery
/// rate at `alpha` (Benjamini and Hochberg 1995).
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut q = vec![1.0; m];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

/// The confidence level at which intervals are shown after `discoveries` of `tests` were
/// selected by Benjamini–Hochberg at `alpha`: `1 - max(R, 1) alpha / m`. Intervals at this
/// level over the selected tests have a false coverage-statement rate of at most `alpha`
/// (Benjamini and Yekutieli 2005), and an interval excludes "no change" exactly when its
/// test is a discovery.
pub fn fcr_level(alpha: f64, tests: usize, discoveries: usize) -> f64 {
    if tests == 0 {
        return 1.0 - alpha;
    }
    1.0 - discoveries.max(1) as f64 * alpha / tests as f64
}

/// Runs per side (2 to `max`) after which the interval at `level`, with the runs' relative
/// standard deviations as measured (`cv_a`, `cv_b`: sd of one run's value / its mean), would
/// reach `half_width` on the log scale: `t(df) sqrt((cv_a^2 + cv_b^2) / n) <= half_width`,
/// with Welch's df for `n` runs a side. `None` when more than `max` would be needed.
pub fn runs_needed(cv_a: f64, cv_b: f64, half_width: f64, level: f64, max: usize) -> Option<usize> {
    if half_width.is_nan() || half_width <= 0.0 {
        return None;
    }
    let (va, vb) = (cv_a * cv_a, cv_b * cv_b);
    (2..=max).find(|&n| {
        let n_f = n as f64;
        let df = if va + vb > 0.0 {
            (n_f - 1.0) * (va + vb).powi(2) / (va * va + vb * vb)
        } else {
            n_f - 1.0
        };
        let t = t_quantile(df, 0.5 + level / 2.0);
        t.is_finite() && t * ((va + vb) / n_f).sqrt() <= half_width
    })
}

/// Deterministic standard normal draws for the statistics' tests: xorshift64 from `seed`
/// and the Box-Muller transform.
#[cfg(test)]
pub(crate) fn normals(seed: u64) -> impl FnMut() -> f64 {
    let mut x = seed.max(1);
    move || {
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let (u, v) = (next().max(1e-12), next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: &[f64]) -> Vec<Second> {
        v.iter().copied().map(Second::value).collect()
    }

    fn noise(n: usize, seed: u64, mean: f64, sd: f64) -> Vec<f64> {
        let mut z = normals(seed);
        (0..n).map(|_| mean + sd * z()).collect()
    }

    fn seconds_test(a: &[f64], b: &[f64]) -> Test {
        let sa = from_seconds(&[values(a)]).unwrap();
        let sb = from_seconds(&[values(b)]).unwrap();
        ratio_test(&sa, &sb).unwrap()
    }

    // Welch's t-test, example 1 of its Wikipedia article (t 2.46, df 24.99, p 0.021).
    const WIKI_A: [f64; 15] = [
        27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
    ];
    const WIKI_B: [f64; 15] = [
        27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
    ];

    #[test]
    fn welch_matches_a_published_example() {
        let check = |a: &Side, b: &Side| {
            let (t, df, p) = welch_t(b.mean - a.mean, a.se * a.se, a.n_eff, b.se * b.se, b.n_eff);
            assert!((t - 2.455356).abs() < 1e-5, "t = {t}");
            assert!((df - 24.988529).abs() < 1e-5, "df = {df}");
            assert!((p - 0.021378).abs() < 1e-5, "p = {p}");
        };
        // As 15 runs a side.
        check(&from_runs(&WIKI_A).unwrap(), &from_runs(&WIKI_B).unwrap());
        // As 15 seconds of one run a side: neither series' lag-1 autocorrelation reaches
        // Bartlett's bound, so n_eff = n and the standard errors are the textbook ones.
        let (a, b) = (
            from_seconds(&[values(&WIKI_A)]).unwrap(),
            from_seconds(&[values(&WIKI_B)]).unwrap(),
        );
        assert_eq!((a.n_eff, b.n_eff), (15.0, 15.0));
        check(&a, &b);
    }

    #[test]
    fn equal_tick_counts_do_not_claim_precision() {
        // Four runs that each read 4 ticks over the same ops: no spread, but each reading is
        // only good to a tick.
        let exact = from_runs(&[4.0; 4]).unwrap();
        assert_eq!(exact.se, 0.0);
        let ticks = from_quantized_runs(&[4.0; 4], 1.0).unwrap();
        assert!(
            (ticks.se - (1.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-12,
            "{}",
            ticks.se
        );
        // A spread larger than the floor is kept as measured.
        let spread = from_quantized_runs(&[2.0, 6.0], 1.0).unwrap();
        assert!((spread.sd_run - 8.0f64.sqrt()).abs() < 1e-12);
        // A/A on tick counts (4 against 5 ticks in every run) is not a sure change.
        let t = ratio_test(&ticks, &from_quantized_runs(&[5.0; 4], 1.0).unwrap()).unwrap();
        assert!(t.p > 0.01, "p {}", t.p);
    }

    #[test]
    fn interval_of_a_ratio_by_hand() {
        // Runs 100, 110, 90 against 50, 55, 45: both sides have sd 10% of their mean, so
        // se(ln mean) = 0.1 / sqrt(3) each, se of the log ratio sqrt(2) times that, df 4,
        // t(0.975, 4) = 2.776445: 95% interval exp(ln 0.5 +- 0.226698) = [0.398582, 0.627224].
        let a = from_runs(&[100.0, 110.0, 90.0]).unwrap();
        let b = from_runs(&[50.0, 55.0, 45.0]).unwrap();
        let t = ratio_test(&a, &b).unwrap();
        assert!((t.change_pct + 50.0).abs() < 1e-9);
        assert!((t.df - 4.0).abs() < 1e-9, "df {}", t.df);
        assert!((t.t + 8.489285).abs() < 1e-5, "t {}", t.t);
        let (lo, hi) = ratio_interval(&t, 0.95);
        assert!((lo - 0.398582).abs() < 1e-6, "{lo}");
        assert!((hi - 0.627224).abs() < 1e-6, "{hi}");
        // No ratio without a positive mean on both sides.
        let zero = from_runs(&[0.0, 0.0]).unwrap();
        assert!(ratio_test(&zero, &b).is_none() && ratio_test(&a, &zero).is_none());
    }

    #[test]
    fn the_interval_excludes_one_exactly_when_the_test_rejects() {
        let t = ratio_test(&from_runs(&WIKI_A).unwrap(), &from_runs(&WIKI_B).unwrap()).unwrap();
        assert!(t.p > 0.01 && t.p < 0.05, "p {}", t.p);
        let (lo, hi) = ratio_interval(&t, 1.0 - t.p + 1e-6);
        assert!(lo < 1.0 && hi > 1.0, "[{lo}, {hi}]");
        let (lo, _) = ratio_interval(&t, 1.0 - t.p - 1e-6);
        assert!(lo > 1.0, "{lo}");
        // At exactly 1 - p, 1 is the lower end.
        let (lo, _) = ratio_interval(&t, 1.0 - t.p);
        assert!((lo - 1.0).abs() < 1e-9, "{lo}");
        // The estimate lies inside, and the interval is not symmetric about it: a ratio.
        let (lo, hi) = ratio_interval(&t, 0.95);
        let r = t.mean_b / t.mean_a;
        assert!(lo < r && r < hi);
        assert!(((hi / r) - (r / lo)).abs() < 1e-12);
    }

    #[test]
    fn t_quantiles_match_tables() {
        for (df, q, want) in [
            (10.0, 0.975, 2.228139),
            (2.0, 0.995, 9.924843),
            (1.0, 0.975, 12.706205),
            (30.0, 0.995, 2.749996),
        ] {
            let got = t_quantile(df, q);
            assert!(
                (got - want).abs() < 1e-5,
                "t({q}, {df}) = {got}, not {want}"
            );
        }
    }

    #[test]
    fn benjamini_hochberg_on_the_papers_example() {
        // The 15 p-values of Benjamini and Hochberg (1995), section 4.3: at q = 0.05 the
        // procedure rejects the four smallest. Adjusted values as R's p.adjust(p, "BH").
        let p = [
            0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
            0.5719, 0.6528, 0.7590, 1.0000,
        ];
        let q = benjamini_hochberg(&p);
        let want = [
            0.0015, 0.0030, 0.0095, 0.035625, 0.0603, 0.06385714, 0.06385714, 0.0645, 0.0765,
            0.486, 0.58118182, 0.714875, 0.75323077, 0.81321429, 1.0,
        ];
        for (i, (got, want)) in q.iter().zip(want).enumerate() {
            assert!((got - want).abs() < 1e-6, "q[{i}] = {got}, not {want}");
        }
        assert_eq!(q.iter().filter(|&&q| q <= 0.05).count(), 4);
        // Order does not matter.
        let mut rev = p;
        rev.reverse();
        let mut q_rev = benjamini_hochberg(&rev);
        q_rev.reverse();
        assert_eq!(q, q_rev);
        assert!(benjamini_hochberg(&[]).is_empty());
    }

    #[test]
    fn fcr_level_and_discoveries_agree() {
        // With R discoveries, every discovery has p <= R alpha / m and every other test has
        // p > R alpha / m, so intervals at 1 - R alpha / m exclude 1 exactly for the
        // discoveries.
        let p = [
            0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240,
        ];
        let q = benjamini_hochberg(&p);
        let r = q.iter().filter(|&&q| q <= 0.05).count();
        let level = fcr_level(0.05, p.len(), r);
        for (p, q) in p.iter().zip(&q) {
            assert_eq!(*q <= 0.05, *p < 1.0 - level, "p {p}, q {q}, level {level}");
        }
        assert!((fcr_level(0.01, 20, 0) - 0.9995).abs() < 1e-12);
    }

    #[test]
    fn same_distribution_is_not_significant_and_a_shift_is() {
        let a = noise(200, 1, 1000.0, 50.0);
        let t = seconds_test(&a, &noise(200, 2, 1000.0, 50.0));
        assert!(t.p > 0.01, "p = {}", t.p);
        let t = seconds_test(&a, &noise(200, 3, 930.0, 50.0));
        assert!(t.p < 0.001, "p = {}", t.p);
        assert!((t.change_pct + 7.0).abs() < 2.0, "{}", t.change_pct);
        let (lo, hi) = ratio_interval(&t, 0.99);
        assert!(lo < 0.93 && 0.93 < hi && hi < 1.0, "[{lo}, {hi}]");
    }

    #[test]
    fn autocorrelation_shrinks_the_sample() {
        // A slowly drifting series: each value repeats 10 times.
        let v: Vec<f64> = noise(30, 5, 100.0, 10.0)
            .into_iter()
            .flat_map(|x| std::iter::repeat_n(x, 10))
            .collect();
        let r = lag1_autocorrelation(&v);
        assert!(r > 0.8, "r1 = {r}");
        assert!(effective_n(&v) < 30.0);
        let white = noise(300, 9, 100.0, 10.0);
        assert!(effective_n(&white) > 200.0);
    }

    #[test]
    fn effective_size_by_hand() {
        // Five 1s then five 2s: r1 = 1.75 / 2.5 = 0.7 > 2 / sqrt(10), so
        // n_eff = 10 * 0.3 / 1.7.
        let v = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0];
        assert!((lag1_autocorrelation(&v) - 0.7).abs() < 1e-12);
        assert!((effective_n(&v) - 3.0 / 1.7).abs() < 1e-12);
        // Alternating values: negative r1 does not enlarge the sample.
        let alt = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0];
        assert!(lag1_autocorrelation(&alt) < 0.0);
        assert_eq!(effective_n(&alt), 8.0);
    }

    #[test]
    fn a_cost_per_op_is_a_ratio_of_sums() {
        // 10 us of CPU over 1 op, then 100 us over 100 ops: 110 / 101 us per op, not the
        // mean of 10 and 1.
        let s = from_seconds(&[vec![
            Second {
                num: 10.0,
                den: 1.0,
            },
            Second {
                num: 100.0,
                den: 100.0,
            },
            Second {
                num: 50.0,
                den: 50.0,
            },
        ]])
        .unwrap();
        assert!((s.mean - 160.0 / 151.0).abs() < 1e-12, "{}", s.mean);
        // Constant per-op cost: no variance at all, whatever the ops per second.
        let flat = from_seconds(&[vec![
            Second { num: 2.0, den: 1.0 },
            Second {
                num: 20.0,
                den: 10.0,
            },
            Second { num: 8.0, den: 4.0 },
        ]])
        .unwrap();
        assert_eq!((flat.mean, flat.se), (2.0, 0.0));
    }

    #[test]
    fn constant_equal_sides_are_no_change() {
        let a = from_seconds(&[values(&[10.0; 20])]).unwrap();
        let t = ratio_test(&a, &a.clone()).unwrap();
        assert_eq!(t.p, 1.0);
        assert_eq!(ratio_interval(&t, 0.99), (1.0, 1.0));
    }

    #[test]
    fn runs_needed_shrinks_the_interval_to_the_width_asked() {
        // sd 10% of the mean on both sides, +-0.05 on the log scale at 95%: the smallest n
        // with t(0.975, 2 (n - 1)) <= 0.05 sqrt(n / 0.02): n = 31 gives t(60) = 2.0003 >
        // 1.9685, n = 32 gives t(62) = 1.9990 <= 2.0000.
        assert_eq!(runs_needed(0.1, 0.1, 0.05, 0.95, 100), Some(32));
        // No noise needs the minimum; too little room, more than max.
        assert_eq!(runs_needed(0.0, 0.0, 0.1, 0.99, 100), Some(2));
        assert_eq!(runs_needed(0.1, 0.1, 0.001, 0.99, 100), None);
        assert_eq!(runs_needed(0.1, 0.1, 0.0, 0.99, 100), None);
    }
}

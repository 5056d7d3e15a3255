//! Significance of a split: Student's t-test of the two segments (as Otava computes it), or
//! Matteson & James's permutation test of Q̂.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::divisive::{self, Distances};

/// The two segments either side of a split: their sizes, means and population standard
/// deviations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segments {
    /// Points before.
    pub n_1: usize,
    /// Points after.
    pub n_2: usize,
    /// Mean before.
    pub mean_1: f64,
    /// Mean after.
    pub mean_2: f64,
    /// Standard deviation before (population, as numpy's default).
    pub std_1: f64,
    /// Standard deviation after.
    pub std_2: f64,
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, if v.len() >= 2 { var.sqrt() } else { 0.0 })
}

impl Segments {
    /// The statistics of `left` and `right`.
    pub fn of(left: &[f64], right: &[f64]) -> Self {
        let (mean_1, std_1) = mean_std(left);
        let (mean_2, std_2) = mean_std(right);
        Segments {
            n_1: left.len(),
            n_2: right.len(),
            mean_1,
            mean_2,
            std_1,
            std_2,
        }
    }

    /// Two-sided p-value of Student's t-test (pooled variance) from these statistics, as
    /// Otava computes it (scipy's ttest_ind_from_stats given the population deviations);
    /// 1 for fewer than 3 points.
    pub fn t_test(&self) -> f64 {
        t_test(self)
    }
}

/// See [`Segments::t_test`].
pub fn t_test(s: &Segments) -> f64 {
    if s.n_1 == 0 || s.n_2 == 0 || s.n_1 + s.n_2 <= 2 {
        return 1.0;
    }
    let (n1, n2) = (s.n_1 as f64, s.n_2 as f64);
    let df = n1 + n2 - 2.0;
    let pooled = ((n1 - 1.0) * s.std_1.powi(2) + (n2 - 1.0) * s.std_2.powi(2)) / df;
    let denom = (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
    let diff = s.mean_1 - s.mean_2;
    if denom == 0.0 {
        // Constant segments: equal means are no change, different ones are certain.
        return if diff == 0.0 { 1.0 } else { 0.0 };
    }
    let t = (diff / denom).abs();
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * dist.sf(t)).min(1.0),
        Err(_) => 1.0,
    }
}

/// The permutation p-value of a candidate of divergence `qhat` in `z` whose change points so
/// far are `cps`: the share of `b` shuffles (each interval's points shuffled within it) whose
/// best candidate reaches `qhat`, as (count + 1) / (b + 1) (Matteson & James). Stops as soon
/// as the p-value cannot be at most `max_pvalue` any more (the decision is the same).
/// Deterministic for a `seed`.
pub fn permutation_pvalue(
    z: &[f64],
    _d: &Distances,
    cps: &[usize],
    qhat: f64,
    b: u32,
    max_pvalue: f64,
    seed: u64,
) -> f64 {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed ^ 0x1b3e_4c11);
    let limit = (max_pvalue * (f64::from(b) + 1.0)).floor() as u64;
    let mut reached = 0u64;
    let mut shuffled = z.to_vec();
    for done in 1..=u64::from(b) {
        for (s, e) in divisive::intervals(cps, z.len()) {
            shuffled[s..e].shuffle(&mut rng);
        }
        let d = Distances::new(&shuffled);
        if divisive::next_candidate(&d, cps, z.len()).is_some_and(|c| c.qhat >= qhat) {
            reached += 1;
            if reached + 1 > limit {
                // p >= (reached + 1) / (b + 1) > max_pvalue whatever the rest give.
                let _ = done;
                return (reached + 1) as f64 / (f64::from(b) + 1.0);
            }
        }
    }
    (reached + 1) as f64 / (f64::from(b) + 1.0)
}

//! E-divisive means (Matteson & James 2014): the divergence Q̂ of two adjacent slices of a
//! series, the best split of an interval, and the hierarchical detector that splits while
//! a significance test accepts the split (Otava's `ChangePointDetector`).

/// A candidate split: `index` is the first point of the second slice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// First point after the change.
    pub index: usize,
    /// The divergence Q̂ of the split.
    pub qhat: f64,
}

/// Column prefix sums of the distance matrix of a slice: `prefix[c][r]` = Σ_{i<r} |z_i - z_c|,
/// for every column c and r <= c (only the upper triangle is needed).
pub struct Distances {
    prefix: Vec<Vec<f64>>,
}

impl Distances {
    /// The distances of `z` (α = 1).
    pub fn new(z: &[f64]) -> Self {
        let prefix = (0..z.len())
            .map(|c| {
                let mut col = Vec::with_capacity(c + 1);
                let mut sum = 0.0;
                col.push(0.0);
                for zi in &z[..c] {
                    sum += (zi - z[c]).abs();
                    col.push(sum);
                }
                col
            })
            .collect();
        Distances { prefix }
    }

    /// Σ_{i in [from, to)} |z_i - z_c|, for to <= c.
    fn column(&self, c: usize, from: usize, to: usize) -> f64 {
        self.prefix[c][to] - self.prefix[c][from]
    }

    /// The best split of `[start, end)`: the τ (start < τ < end) and κ (τ < κ <= end) that
    /// maximise Q̂(z[start..τ], z[τ..κ]); the first maximum in (τ, κ) order, as Otava. `None`
    /// for an interval of fewer than 2 points.
    pub fn best_split(&self, start: usize, end: usize) -> Option<Candidate> {
        if end < start + 2 {
            return None;
        }
        let mut best: Option<Candidate> = None;
        // Within-X sum for X = z[start..tau].
        let mut within_x = 0.0;
        for tau in start + 1..end {
            within_x += self.column(tau - 1, start, tau - 1);
            let n = (tau - start) as f64;
            let (mut between, mut within_y) = (0.0, 0.0);
            for kappa in tau + 1..=end {
                let last = kappa - 1;
                between += self.column(last, start, tau);
                within_y += self.column(last, tau, last);
                let m = (kappa - tau) as f64;
                let q = q_hat(n, m, between, within_x, within_y);
                if best.is_none_or(|b| q > b.qhat) {
                    best = Some(Candidate {
                        index: tau,
                        qhat: q,
                    });
                }
            }
        }
        best
    }
}

/// Q̂ = 2/(n+m) Σ|x-y| - 2m/((n+m)(n-1)) Σ|x-x'| - 2n/((n+m)(m-1)) Σ|y-y'| (α = 1), the
/// within sums over unordered pairs; a within term of one point is 0.
pub fn q_hat(n: f64, m: f64, between: f64, within_x: f64, within_y: f64) -> f64 {
    let a = 2.0 / (n + m) * between;
    let b = if n > 1.0 {
        2.0 * m / ((n + m) * (n - 1.0)) * within_x
    } else {
        0.0
    };
    let c = if m > 1.0 {
        2.0 * n / ((n + m) * (m - 1.0)) * within_y
    } else {
        0.0
    };
    a - b - c
}

/// The intervals the sorted change points `cps` cut `[0, len)` into.
pub fn intervals(cps: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cps);
    bounds.push(len);
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

/// The best candidate over the intervals of `cps` (the first of equal ones).
pub fn next_candidate(d: &Distances, cps: &[usize], len: usize) -> Option<Candidate> {
    let mut best: Option<Candidate> = None;
    for (s, e) in intervals(cps, len) {
        if let Some(c) = d.best_split(s, e)
            && best.is_none_or(|b| c.qhat > b.qhat)
        {
            best = Some(c);
        }
    }
    best
}

/// Hierarchical E-divisive over `z`: adds the best candidate while `significant` accepts it
/// (given the candidate and the change points so far); the change points found, sorted.
pub fn detect(z: &[f64], mut significant: impl FnMut(Candidate, &[usize]) -> bool) -> Vec<usize> {
    let d = Distances::new(z);
    let mut cps: Vec<usize> = Vec::new();
    while let Some(c) = next_candidate(&d, &cps, z.len()) {
        if !significant(c, &cps) {
            break;
        }
        let at = cps.partition_point(|&i| i < c.index);
        cps.insert(at, c.index);
    }
    cps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Otava's tests/change_point_divisive_test.py SEQUENCE.
    pub const SEQUENCE: [f64; 14] = [
        0.3, 2.4, 1.5, -0.9, -0.5, 99.7, 98.3, 99.1, 149.0, 149.7, 149.5, 149.1, 148.8, 150.0,
    ];

    /// Q̂ by its definition (Otava's compute_Q_and_candidate_slow).
    fn slow_q(x: &[f64], y: &[f64]) -> f64 {
        let (n, m) = (x.len() as f64, y.len() as f64);
        let between: f64 = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| (a - b).abs()))
            .sum();
        let pairs = |v: &[f64]| -> f64 {
            (0..v.len())
                .flat_map(|i| (i + 1..v.len()).map(move |j| (i, j)))
                .map(|(i, j)| (v[i] - v[j]).abs())
                .sum()
        };
        q_hat(n, m, between, pairs(x), pairs(y))
    }

    #[test]
    fn fast_q_matches_its_definition() {
        let z = SEQUENCE;
        let mut best = (0, f64::MIN);
        for tau in 1..z.len() {
            for kappa in tau + 1..=z.len() {
                let q = slow_q(&z[..tau], &z[tau..kappa]);
                if q > best.1 {
                    best = (tau, q);
                }
            }
        }
        let c = Distances::new(&z).best_split(0, z.len()).unwrap();
        assert_eq!(c.index, best.0);
        assert!(
            (c.qhat - best.1).abs() < 1e-9 * best.1.abs(),
            "{c:?} {best:?}"
        );
        assert_eq!(c.index, 5);
        // A sub-interval, as the detector asks for after the first split.
        let sub = Distances::new(&z).best_split(5, 14).unwrap();
        assert_eq!(sub.index, 8);
    }
}

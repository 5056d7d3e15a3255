//! The families of tests Benjamini–Hochberg adjusts apart: a step's throughput, the figure a
//! verdict, a report's mark and `--until-decided` are about, and every other figure (CPU, IO,
//! space and response times per op...).
//!
//! Adjusting a comparison's 2-5 throughput rows together with its dozen other figures made a
//! clear halving at 3 runs a side wait for q <= 1% over about 15 tests (p 0.002 gives q 0.02):
//! the other figures, most of them unchanged, diluted the one the user asked about. Each
//! family keeps its false discovery rate at alpha on its own (Benjamini and Hochberg 1995),
//! so under no change at all the chance that a comparison calls anything is at most alpha per
//! family: 2% at the default 1%. Intervals take their family's level (`1 - max(R, 1) alpha /
//! m` over the family's `m` tests and `R` discoveries; Benjamini and Yekutieli 2005), so an
//! interval still excludes 0 exactly for a discovery.

use serde::Serialize;

use super::stats;

/// The throughput family's name.
pub const THROUGHPUT: &str = "throughput";
/// The other figures' family's name.
pub const OTHERS: &str = "other figures";

/// Whether `key` is a main figure: a step's throughput (`inserts_per_s`, `queries_per_s`,
/// `deletes_per_s`, ...), the figures verdicts and decisions wait for.
pub fn main_figure(key: &str) -> bool {
    key.ends_with("_per_s")
}

/// One family's tests and what Benjamini–Hochberg found in them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Family {
    /// [`THROUGHPUT`] or [`OTHERS`].
    pub name: &'static str,
    /// Rows tested (`m`).
    pub tests: usize,
    /// Discoveries at alpha (`R`).
    pub discoveries: usize,
    /// Confidence level of the family's intervals: `1 - max(R, 1) alpha / m`.
    pub ci_level: f64,
}

/// Each tested row's adjusted p-value and interval level, in the order of `tested` (each a
/// figure's key and its p-value), and the families that had a test.
pub fn adjust(tested: &[(&str, f64)], alpha: f64) -> (Vec<(f64, f64)>, Vec<Family>) {
    let mut out = vec![(1.0, 1.0); tested.len()];
    let mut families = Vec::new();
    for (name, main) in [(THROUGHPUT, true), (OTHERS, false)] {
        let members: Vec<usize> = (0..tested.len())
            .filter(|&i| main_figure(tested[i].0) == main)
            .collect();
        if members.is_empty() {
            continue;
        }
        let p: Vec<f64> = members.iter().map(|&i| tested[i].1).collect();
        let q = stats::benjamini_hochberg(&p);
        let discoveries = q.iter().filter(|&&q| q <= alpha).count();
        let ci_level = stats::fcr_level(alpha, p.len(), discoveries);
        for (&i, q) in members.iter().zip(q) {
            out[i] = (q, ci_level);
        }
        families.push(Family {
            name,
            tests: p.len(),
            discoveries,
            ci_level,
        });
    }
    (out, families)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_halving_in_throughput_is_not_diluted_by_the_other_figures() {
        // Two throughput rows, one at p 0.002, among 13 other figures none of which changed.
        let mut tested = vec![("inserts_per_s", 0.002), ("queries_per_s", 0.6)];
        for _ in 0..13 {
            tested.push(("dbms_cpu_us_per_op", 0.5));
        }
        let all = stats::benjamini_hochberg(&tested.iter().map(|t| t.1).collect::<Vec<_>>());
        assert!(all[0] > 0.01, "over the whole table it waits: q {}", all[0]);
        let (q, families) = adjust(&tested, 0.01);
        assert!((q[0].0 - 0.004).abs() < 1e-12, "{q:?}");
        assert_eq!(families[0].name, THROUGHPUT);
        assert_eq!((families[0].tests, families[0].discoveries), (2, 1));
        assert!((families[0].ci_level - 0.995).abs() < 1e-12);
        assert_eq!((families[1].tests, families[1].discoveries), (13, 0));
        // Every row carries its family's level; none of the others is called.
        assert!(
            q[2..]
                .iter()
                .all(|&(q, l)| q > 0.01 && l == families[1].ci_level)
        );
    }

    #[test]
    fn a_family_without_tests_is_left_out() {
        let (q, families) = adjust(&[("dbms_cpu_us_per_op", 0.03)], 0.01);
        assert_eq!(q, vec![(0.03, stats::fcr_level(0.01, 1, 0))]);
        assert_eq!(families.len(), 1);
        assert_eq!(families[0].name, OTHERS);
        assert!(adjust(&[], 0.01).1.is_empty());
    }
}

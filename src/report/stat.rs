//! A figure over a group's runs ([`Stat`]: median, min, max, relative to the base) and how a
//! relative value is judged ([`Judged`], its [`Mark`]; a step flagged in a run, [`StepFlag`]):
//! the smallest types of the report's model, which every layer above reads. Nothing here
//! imports the rest of `report/`: the statistics that judge (`marks.rs`, `compare/` with its
//! drift test `compare/steady.rs`) sit above.

use serde::Serialize;

use crate::metrics::figures::Better;

/// Ratios below this are marked as a drop relative to the base.
pub const LOW_RATIO: f64 = 0.95;
/// Ratios above this are marked as a rise relative to the base.
pub const HIGH_RATIO: f64 = 1.05;

/// Median, min and max of one figure over a group's runs, and the median relative to the
/// base group's median.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stat {
    /// Median over the runs that have the figure.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Runs that have the figure.
    pub n: usize,
    /// `median / base median`; `None` for the base itself or when the base lacks the figure.
    pub relative: Option<f64>,
    /// Whether the runs support a change of the relative value (`marks.rs`: the test of
    /// `ibench compare`); set with `relative`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged: Option<Judged>,
}

impl Stat {
    /// Aggregates `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: v[0],
            max: v[n - 1],
            n,
            relative: None,
            judged: None,
        })
    }
}

/// How a relative value compares with the thresholds.
pub fn mark(relative: f64, better: Better) -> &'static str {
    let (low, high) = match better {
        Better::Higher => ("worse", "better"),
        Better::Lower => ("better", "worse"),
    };
    if relative < LOW_RATIO {
        low
    } else if relative > HIGH_RATIO {
        high
    } else {
        ""
    }
}

/// What a relative cell may say about its change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Better, as the test calls it (or, one run a side, beyond the threshold).
    Better,
    /// Worse, likewise.
    Worse,
    /// No change called and the ratio within the 0.95/1.05 threshold.
    Unchanged,
    /// The ratio is beyond the threshold, but the runs do not support a change.
    TooNoisy,
    /// `compare` does not test this figure (one value per step it has no test for).
    Untested,
    /// A change the test (or the one-run threshold) calls, in a step flagged in a run of
    /// either side as not steady (`compare/steady.rs`): not marked, the note says why.
    Flagged,
    /// Both sides under the figure's floor (`figures::negligible`: KB/op under 0.1, cs/op
    /// under 0.01): not marked, shown as `~0`, counted as unchanged in the headline.
    Negligible,
}

/// The judgement of one relative cell.
#[derive(Clone, Debug, Serialize)]
pub struct Judged {
    /// The mark.
    pub mark: Mark,
    /// A side has one run: marked by the threshold, no noise estimate.
    pub one_run: bool,
    /// The change's interval, percent, from `compare` (its level in the headline's note).
    pub ci_pct: Option<[f64; 2]>,
    /// Benjamini–Hochberg adjusted p-value from `compare`.
    pub q: Option<f64>,
    /// Why, in one sentence (compare's row, or what is missing).
    pub note: String,
}

/// A run's step flagged, as a report records it beside the step's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepFlag {
    /// The run.
    pub run: String,
    /// Too short to compare (else: not steady).
    pub too_short: bool,
    /// The flag in one line.
    pub text: String,
}

impl StepFlag {
    /// Whether a change of the step cannot be marked or called: a step that was not steady
    /// never. A step too short blocks nothing it is not already kept from: with runs as the
    /// unit the runs are the samples, compare's one-run test already finds it untestable
    /// (fewer than `compare::stats::MIN_SECONDS`), and the one-run threshold mark says it has
    /// no noise estimate; the flag is said beside it.
    pub fn blocks(&self) -> bool {
        !self.too_short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let s = Stat::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        let s = Stat::of(&[4.0, 1.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!(Stat::of(&[]).is_none());
    }

    #[test]
    fn marks_follow_the_better_direction() {
        assert_eq!(mark(0.9, Better::Higher), "worse");
        assert_eq!(mark(0.9, Better::Lower), "better");
        assert_eq!(mark(1.1, Better::Higher), "better");
        assert_eq!(mark(1.1, Better::Lower), "worse");
        assert_eq!(mark(1.0, Better::Lower), "");
        assert_eq!(mark(0.95, Better::Higher), "");
        assert_eq!(mark(1.05, Better::Higher), "");
    }
}

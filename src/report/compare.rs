//! `ibench compare`: per step and metric, the change from A to B with a confidence interval,
//! and a verdict an engineer can act on (better, worse, no change, inconclusive).
//!
//! **The unit.** With two or more runs on each side the run is the unit: each run's figure
//! for the step is one sample, so the variation between runs (a new process, server, file
//! layout; Kalibera and Jones 2013) is in the error. With a single run on a side the samples
//! are the run's seconds, their number corrected for autocorrelation, and the output says
//! that only the noise within runs is accounted for.
//!
//! **The test.** The change is `mean_b / mean_a - 1`; its test and interval are on
//! `ln(mean_b / mean_a)`: with runs as the unit, the moderated t of Smyth (2004), whose
//! variance of one run's log value is pooled over both sides and shrunk towards the same
//! figure's over the other steps of its kind (`moderate.rs`); where too few steps measured a
//! spread, and with seconds as the unit, Welch's t with the delta-method standard error
//! `sqrt((se_a/mean_a)^2 + (se_b/mean_b)^2)` (`stats.rs`). p two-sided. Benjamini–Hochberg controls the
//! false discovery rate in two families of the step x metric table, the throughput and the
//! other figures (`families.rs`), and intervals are shown at the level that keeps the false
//! coverage-statement rate of the family's discoveries at alpha (Benjamini and Yekutieli
//! 2005), so an interval excludes 0 exactly for a discovery.
//!
//! **Rounds as blocks.** Runs of one experiment sharing 2+ rounds: a row is tested on the
//! rounds' log ratios where that pays (`paired.rs`); the report's marks follow (one rule).
//!
//! **The verdict.** Better or worse only when the interval lies beyond the noise threshold
//! (criterion's noise threshold); no change only when it lies within it; otherwise
//! inconclusive, with the number of runs that would likely settle it.

pub mod explain;
pub mod families;
pub mod flames;
pub mod format;
mod gather;
pub mod method;
pub mod metrics;
pub mod moderate;
pub mod noise;
pub mod paired;
mod pool;
pub mod stats;
pub mod steady;
mod withheld;

use serde::Serialize;

pub use format::{fmt_ci, fmt_level, fmt_num, fmt_p, fmt_pct, fmt_q};
use gather::Gathered;
pub use metrics::Better;
use pool::{priors, test_row};
use stats::Test;
use withheld::{coarse, flagged};

use crate::results::model::RunResult;

/// Default false discovery rate over the table: 1%, which under no change at all (A/A) bounds
/// the chance that any row is called (Benjamini and Hochberg 1995): one comparison in 100.
pub const DEFAULT_ALPHA: f64 = 0.01;
/// Default noise threshold, percent: changes within +-this are not called a change.
pub const DEFAULT_NOISE_PCT: f64 = 3.0;
/// Runs per side advised before anything is tested on runs (with 2 the test has 1-2
/// degrees of freedom and its intervals are very wide).
pub const ADVISED_RUNS: usize = 3;
/// Estimates of the runs needed stop here.
const MAX_RUNS: usize = 100;

/// How to compare.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Options {
    /// False discovery rate over the step x metric table (Benjamini–Hochberg).
    pub alpha: f64,
    /// Noise threshold, percent of A's value.
    pub noise_pct: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            alpha: DEFAULT_ALPHA,
            noise_pct: DEFAULT_NOISE_PCT,
        }
    }
}

/// What one sample is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Each run's figure for the step (two or more runs on each side).
    Runs,
    /// The seconds of the runs (a side has one run): noise within runs only.
    Seconds,
}

/// The verdict on one step and metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval lies beyond the noise threshold, on the better side.
    Better,
    /// The interval lies beyond the noise threshold, on the worse side.
    Worse,
    /// The interval lies within the noise threshold.
    NoChange,
    /// Neither: more runs are needed.
    Inconclusive,
    /// Not enough data to test.
    Untestable,
    /// Better or worse as tested, but in a step flagged not steady in a run
    /// (`steady.rs`): not called a change, the note says why.
    Flagged,
    /// Better or worse as tested, but in a step a neighbour disturbed in a run
    /// (`report/interference.rs`): not called a change, the note names the runs.
    Disturbed,
}

impl Verdict {
    /// Whether the verdict is a significant change (what a report may mark).
    pub fn is_significant(self) -> bool {
        matches!(self, Verdict::Better | Verdict::Worse)
    }

    /// The verdict in words.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Untestable => "untestable",
            Verdict::Flagged => "flagged step",
            Verdict::Disturbed => "disturbed",
        }
    }
}

/// One row of the comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Step name.
    pub step: String,
    /// Metric name.
    pub metric: String,
    /// Metric key (the report's key for the same figure).
    pub key: String,
    /// Which direction is better.
    pub better: Better,
    /// The test, when both sides had enough samples.
    pub test: Option<Test>,
    /// Benjamini–Hochberg adjusted p-value, within the row's family (`families.rs`).
    pub q: Option<f64>,
    /// The change's interval, percent, at `ci_level`; `None` when untested.
    pub ci_pct: Option<[f64; 2]>,
    /// The interval's confidence level: its family's ([`families::Family::ci_level`]).
    pub ci_level: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Whether the verdict is better or worse.
    pub significant: bool,
    /// Why, or what to do (e.g. how many runs would tell).
    pub note: String,
    /// The row in one sentence: change, interval, p, verdict and note.
    pub text: String,
    /// The verdict a flagged or disturbed step kept from the row (`would be worse, but ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withheld: Option<Verdict>,
}

/// A comparison of A with B.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Runs of A.
    pub runs_a: usize,
    /// Runs of B.
    pub runs_b: usize,
    /// Rounds of one experiment both sides ran in (`paired.rs`), at least 2; 0 when the
    /// runs cannot be paired by round.
    pub rounds: usize,
    /// Of those rounds, the ones whose two runs ran at the same time (`ibench experiment
    /// --duet`), so that what the host did to one it did to the other.
    #[serde(skip_serializing_if = "crate::serde_skip::is_zero")]
    pub duet_rounds: usize,
    /// What one sample is.
    pub unit: Unit,
    /// False discovery rate.
    pub alpha: f64,
    /// Noise threshold, percent.
    pub noise_pct: f64,
    /// Rows tested, over both families.
    pub tests: usize,
    /// Benjamini–Hochberg discoveries at `alpha`, over both families.
    pub discoveries: usize,
    /// The families adjusted apart (throughput, other figures), each with its tests,
    /// discoveries and intervals' level; only those with a test.
    pub families: Vec<families::Family>,
    /// One row per step and metric.
    pub rows: Vec<Row>,
    /// Per step, the DBMS's gauges and wait events that changed most (descriptive, untested).
    pub explain: Vec<explain::Change>,
    /// Steps flagged in a run of either side (`steady.rs`), the first flag of each:
    /// a change in them is not called (verdict `flagged step`).
    pub flags: Vec<(String, crate::report::stat::StepFlag)>,
    /// Steps a neighbour disturbed in a run of either side (`report/interference.rs`) with
    /// fewer than two undisturbed runs left on a side: step, run id, why. A change in them is
    /// not called (verdict `disturbed`).
    pub disturbed: Vec<(String, String, String)>,
    /// Runs left out of a step's test because a neighbour disturbed the step in them, where
    /// at least two undisturbed runs a side remained to judge it (as the history gate judges
    /// the undisturbed runs): step, run id, why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<(String, String, String)>,
    /// Earlier runs of the compared configurations on this host whose noise was lent
    /// (`noise.rs`); 0 when none.
    pub history_runs: usize,
    /// Rows whose noise came from those runs.
    pub history_rows: usize,
    /// The comparison in one line: rows by verdict and the largest changes called
    /// ([`format::headline`]), what the terminal shows above the table.
    pub headline: String,
}

impl Comparison {
    /// The row of `step` and metric `key` (e.g. `queries_per_s`): what a report looks up to
    /// mark a change.
    pub fn row(&self, step: &str, key: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.step == step && r.key == key)
    }

    /// The rows tested paired by round.
    pub fn paired_rows(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.test.as_ref().is_some_and(|t| t.paired_rounds > 0))
            .count()
    }
}

/// Compares the runs of A with the runs of B, step by step over the steps every run has.
pub fn compare(a: &[RunResult], b: &[RunResult], opts: &Options) -> Comparison {
    compare_with(a, b, opts, None)
}

/// [`compare`], with the noise `learned` from earlier runs of the same configurations on the
/// same host (`noise.rs`) lent to the rows it knows, in place of the other steps' prior.
pub fn compare_with(
    a: &[RunResult],
    b: &[RunResult],
    opts: &Options,
    learned: Option<&noise::Learned>,
) -> Comparison {
    let unit = if a.len() >= 2 && b.len() >= 2 {
        Unit::Runs
    } else {
        Unit::Seconds
    };
    // Rounds as blocks when both sides ran in the same rounds (`paired.rs`).
    let pairs = (unit == Unit::Runs).then(|| paired::rounds(a, b)).flatten();
    let Gathered {
        rows,
        explained,
        flags,
        resolution,
        disturbed,
        left_out,
    } = gather::steps((a, b), unit, pairs.as_deref(), opts.alpha);
    let priors = match unit {
        Unit::Runs => priors(&rows),
        Unit::Seconds => Default::default(),
    };
    let mut history_rows = 0;
    let rows: Vec<_> = rows
        .into_iter()
        .map(|(step, metric, estimates, pool, by_round)| {
            // History knows one run's noise: for rows tested on runs, unpaired.
            let lent = learned
                .filter(|_| unit == Unit::Runs && by_round.is_none())
                .and_then(|l| l.prior(&step, &metric.key));
            history_rows += usize::from(lent.is_some() && estimates.is_ok());
            let test = estimates.and_then(|sides| {
                test_row(sides, by_round.as_ref(), lent.or(priors.get(&pool)))
                    .ok_or_else(|| "a side's value is 0: no ratio to test".to_string())
            });
            (step, metric, test)
        })
        .collect();
    let tested: Vec<(&str, f64)> = rows
        .iter()
        .filter_map(|(_, m, t)| t.as_ref().ok().map(|t| (m.key.as_str(), t.p)))
        .collect();
    let (adjusted, families) = families::adjust(&tested, opts.alpha);
    let mut cmp = Comparison {
        runs_a: a.len(),
        runs_b: b.len(),
        rounds: pairs.as_ref().map_or(0, Vec::len),
        duet_rounds: pairs.as_ref().map_or(0, |p| paired::in_duet(a, b, p)),
        unit,
        alpha: opts.alpha,
        noise_pct: opts.noise_pct,
        tests: tested.len(),
        discoveries: families.iter().map(|f| f.discoveries).sum(),
        families,
        rows: Vec::new(),
        explain: explained,
        flags: flags.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        disturbed,
        left_out,
        history_runs: if history_rows > 0 {
            learned.map_or(0, |l| l.runs)
        } else {
            0
        },
        history_rows,
        headline: String::new(),
    };
    let mut adjusted = adjusted.into_iter();
    for (step, metric, test) in rows {
        let row = match test {
            Ok(t) => {
                let what = (metric.name.as_str(), metric.key.as_str(), metric.better);
                let res = resolution.get(&(step.clone(), metric.key.clone()));
                let (q, level) = adjusted.next().unwrap_or((1.0, 1.0));
                let row = judge(&cmp, step, what, t, (q, level));
                let row = coarse(row, res.copied().unwrap_or(0.0));
                let row = withheld::disturbed(row, &cmp.disturbed);
                match flags.get(&row.step) {
                    Some(f) if row.significant => flagged(row, f),
                    _ => row,
                }
            }
            Err(why) => Row {
                step,
                metric: metric.name.clone(),
                key: metric.key.clone(),
                better: metric.better,
                test: None,
                q: None,
                ci_pct: None,
                ci_level: None,
                verdict: Verdict::Untestable,
                significant: false,
                text: format!("{}: untestable: {why}", metric.name),
                note: why,
                withheld: None,
            },
        };
        cmp.rows.push(row);
    }
    cmp.headline = format::headline(&cmp);
    cmp
}

/// The verdict on one tested row of metric `(name, key, better)`, whose adjusted p-value and
/// interval level are `(q, level)`.
fn judge(
    cmp: &Comparison,
    step: String,
    what: (&str, &str, Better),
    t: Test,
    (q, level): (f64, f64),
) -> Row {
    let (name, key, better) = what;
    let band = cmp.noise_pct / 100.0;
    let (lo, hi) = stats::ratio_interval(&t, level);
    let (lo, hi) = (lo - 1.0, hi - 1.0);
    let within_runs = match cmp.unit {
        Unit::Seconds => " (within-run noise only)",
        Unit::Runs => "",
    };
    let threshold = format!("+-{}%", fmt_num(cmp.noise_pct));
    let (verdict, note) = if crate::report::figures::negligible(key, t.mean_a, t.mean_b) {
        // The one rule of the reports' marks: no change between two negligible values.
        (
            Verdict::NoChange,
            "negligible: both sides under the figure's floor".to_string(),
        )
    } else if (lo > band || hi < -band) && q <= cmp.alpha {
        let up = lo > 0.0;
        let improved = up == (better == Better::Higher);
        (
            if improved {
                Verdict::Better
            } else {
                Verdict::Worse
            },
            format!("beyond the {threshold} noise threshold{within_runs}"),
        )
    } else if lo >= -band && hi <= band {
        let small = if lo > 0.0 || hi < 0.0 {
            " (a small change, but not 0)"
        } else {
            ""
        };
        (
            Verdict::NoChange,
            format!("within the {threshold} noise threshold{small}{within_runs}"),
        )
    } else if lo > 0.0 || hi < 0.0 {
        (
            Verdict::Inconclusive,
            format!(
                "changed, but not clearly beyond the {threshold} noise threshold; {}",
                advice(cmp, &t, level)
            ),
        )
    } else {
        (
            Verdict::Inconclusive,
            format!(
                "not significant at FDR {}% with {}; {}",
                fmt_num(cmp.alpha * 100.0),
                samples(cmp, &t),
                advice(cmp, &t, level)
            ),
        )
    };
    let ci_pct = [lo * 100.0, hi * 100.0];
    let text = format!(
        "{name} {:+.1}% {} ({} CI), {}: {}: {note}",
        t.change_pct,
        fmt_ci(Some(ci_pct)),
        fmt_level(level),
        fmt_p(t.p),
        verdict.as_str(),
    );
    Row {
        step,
        metric: name.to_string(),
        key: key.to_string(),
        better,
        q: Some(q),
        ci_pct: Some(ci_pct),
        ci_level: Some(level),
        significant: verdict.is_significant(),
        verdict,
        note,
        text,
        test: Some(t),
        withheld: None,
    }
}

/// "3 runs a side", "3 and 4 runs", "14 and 15 seconds of one run a side".
fn samples(cmp: &Comparison, t: &Test) -> String {
    match cmp.unit {
        Unit::Runs if t.paired_rounds > 0 => format!("{} rounds paired", t.paired_rounds),
        Unit::Runs if t.n_a == t.n_b => format!("{} runs a side", t.n_a),
        Unit::Runs => format!("{} and {} runs", t.n_a, t.n_b),
        Unit::Seconds if cmp.runs_a == 1 && cmp.runs_b == 1 => {
            format!("{} and {} seconds of one run a side", t.n_a, t.n_b)
        }
        Unit::Seconds => format!(
            "{} and {} seconds of {} and {} runs",
            t.n_a, t.n_b, cmp.runs_a, cmp.runs_b
        ),
    }
}

/// How many runs would likely settle an inconclusive row, from the noise measured so far,
/// for an interval at `level`.
fn advice(cmp: &Comparison, t: &Test, level: f64) -> String {
    let band = cmp.noise_pct / 100.0;
    let (low, high) = ((1.0 - band).ln(), (1.0 + band).ln());
    // On the log scale: to call it a change the interval must clear the threshold on the
    // estimate's side; to call it no change it must fit inside.
    let d = t.log_ratio;
    let half_width = if d > high {
        d - high
    } else if d < low {
        low - d
    } else {
        (high - d).min(d - low)
    };
    let cv = |sd: f64, mean: f64| sd / mean;
    let needed = stats::runs_needed(
        cv(t.sd_run_a, t.mean_a),
        cv(t.sd_run_b, t.mean_b),
        half_width,
        level,
        MAX_RUNS,
    );
    match (cmp.unit, needed) {
        (Unit::Runs, Some(n)) => format!(
            "about {} runs a side would tell, at the noise measured",
            n.max(cmp.runs_a.max(cmp.runs_b) + 1)
        ),
        (Unit::Seconds, Some(n)) => format!(
            "repeat each side at least {} times (same --label)",
            n.max(ADVISED_RUNS)
        ),
        (_, None) => format!("over {MAX_RUNS} runs a side would be needed at this noise"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(unit: Unit, tests: usize) -> Comparison {
        Comparison {
            runs_a: 3,
            runs_b: 3,
            rounds: 0,
            duet_rounds: 0,
            unit,
            alpha: 0.01,
            noise_pct: 3.0,
            tests,
            discoveries: 0,
            families: Vec::new(),
            rows: Vec::new(),
            explain: Vec::new(),
            flags: Vec::new(),
            disturbed: Vec::new(),
            left_out: Vec::new(),
            history_runs: 0,
            history_rows: 0,
            headline: String::new(),
        }
    }

    fn test_of(a: &[f64], b: &[f64]) -> Test {
        stats::ratio_test(&stats::from_runs(a).unwrap(), &stats::from_runs(b).unwrap()).unwrap()
    }

    #[test]
    fn a_large_change_on_few_samples_is_inconclusive_not_no_change() {
        // Issue #14: an 88% drop measured on too few, too noisy runs.
        let cmp = shell(Unit::Runs, 20);
        let level = stats::fcr_level(0.01, 20, 0);
        let t = test_of(&[1000.0, 400.0, 1600.0], &[120.0, 130.0, 110.0]);
        assert!(t.p > 0.0005, "p {}", t.p);
        let row = judge(
            &cmp,
            "qr1000".into(),
            ("q/s", "queries_per_s", Better::Higher),
            t,
            (1.0, level),
        );
        assert_eq!(row.verdict, Verdict::Inconclusive, "{}", row.text);
        assert!(row.text.starts_with("q/s -88.0% [-"), "{}", row.text);
        assert!(row.text.contains("(99.95% CI), p="), "{}", row.text);
        assert!(
            row.note
                .starts_with("not significant at FDR 1% with 3 runs a side; about ")
                && row
                    .note
                    .ends_with("runs a side would tell, at the noise measured"),
            "{}",
            row.note
        );
        assert!(!row.text.contains("no change"));
    }

    #[test]
    fn verdicts_follow_the_interval_and_the_better_direction() {
        let cmp = shell(Unit::Runs, 1);
        let level = stats::fcr_level(0.01, 1, 0);
        let what = |better| ("x", "x", better);
        // The row of test `t` judged at its own p, for a figure where `better` is better.
        let j = |better, t: &Test| judge(&cmp, "s".into(), what(better), t.clone(), (t.p, level));
        // A clear 50% drop: worse for a rate, better for a cost.
        let drop = test_of(&[100.0, 101.0, 99.0], &[50.0, 50.5, 49.5]);
        let r = j(Better::Higher, &drop);
        assert_eq!(r.verdict, Verdict::Worse, "{}", r.text);
        let r = j(Better::Lower, &drop);
        assert_eq!(r.verdict, Verdict::Better, "{}", r.text);
        // Tight and near 0: no change.
        let same = test_of(&[100.0, 100.1, 99.9], &[100.05, 100.0, 99.95]);
        let r = j(Better::Higher, &same);
        assert_eq!(r.verdict, Verdict::NoChange, "{}", r.text);
        // A tight 2% change: not 0, but within the threshold.
        let small = test_of(&[100.0, 100.1, 99.9], &[102.0, 102.1, 101.9]);
        let r = j(Better::Higher, &small);
        assert_eq!(r.verdict, Verdict::NoChange, "{}", r.text);
        assert!(r.note.contains("but not 0"), "{}", r.note);
        // A 3% change whose interval excludes 0 but reaches into the threshold.
        let edge = test_of(&[100.0, 100.5, 99.5], &[103.0, 103.2, 102.8]);
        let r = j(Better::Higher, &edge);
        assert_eq!(r.verdict, Verdict::Inconclusive, "{}", r.text);
        assert!(
            r.note
                .starts_with("changed, but not clearly beyond the +-3%"),
            "{}",
            r.note
        );
        // One run a side: every verdict says that only noise within runs counts.
        let seconds = shell(Unit::Seconds, 1);
        let what = ("x", "x", Better::Higher);
        let r = judge(&seconds, "s".into(), what, same.clone(), (same.p, level));
        assert!(r.note.ends_with("(within-run noise only)"), "{}", r.note);
    }
}

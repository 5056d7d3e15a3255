//! Changes the test calls that a row does not call, and why: the step was flagged not steady
//! in a run (`steady.rs`), a neighbour disturbed it in a run
//! (`report/interference.rs`), or the change is under twice the figure's resolution.

use super::{Row, Verdict, fmt_num};
use crate::results::model::{RunResult, RunStatus};

/// The first flag, of a run of A or B that completed step `step`, that keeps a change of the
/// step from being called (not steady).
pub(super) fn step_flag(
    a: &[RunResult],
    b: &[RunResult],
    step: &str,
) -> Option<crate::report::stat::StepFlag> {
    a.iter().chain(b).find_map(|r| {
        let s = r
            .steps
            .iter()
            .find(|s| s.name == step && s.status == RunStatus::Complete)?;
        super::steady::run_flag(&r.run_id, s).filter(|f| f.blocks())
    })
}

/// `row`, a change called in a step flagged `f`: not called, and said why.
pub(super) fn flagged(mut row: Row, f: &crate::report::stat::StepFlag) -> Row {
    let would = row.verdict.as_str();
    row.note = format!(
        "would be {would}, but the step is flagged in run {}: {}",
        f.run, f.text
    );
    row.withheld = Some(row.verdict);
    row.verdict = Verdict::Flagged;
    row.significant = false;
    if let Some((head, _)) = row.text.rsplit_once(&format!(": {would}: ")) {
        row.text = format!("{head}: {}: {}", row.verdict.as_str(), row.note);
    }
    row
}

/// `row`, a change called that is under twice the figure's `resolution` (the step in which
/// its values are read: one CPU tick over the step's ops): not called, and said why.
pub(super) fn coarse(mut row: Row, resolution: f64) -> Row {
    let Some(t) = row.test.as_ref() else {
        return row;
    };
    let change = (t.mean_b - t.mean_a).abs();
    if !row.significant || change >= 2.0 * resolution {
        return row;
    }
    let would = row.verdict.as_str();
    row.note = format!(
        "would be {would}, but the change ({}) is under twice the figure's resolution ({} in \
         the coarsest run: one CPU tick over the step's ops): too coarse to call; longer \
         steps read it finer",
        fmt_num(change),
        fmt_num(resolution)
    );
    row.verdict = Verdict::Inconclusive;
    row.significant = false;
    if let Some((head, _)) = row.text.rsplit_once(&format!(": {would}: ")) {
        row.text = format!("{head}: {}: {}", row.verdict.as_str(), row.note);
    }
    row
}

/// The runs of A and B in which a neighbour disturbed step `step`: run id, why.
pub(super) fn disturbed_in(a: &[RunResult], b: &[RunResult], step: &str) -> Vec<(String, String)> {
    let both: Vec<&RunResult> = a.iter().chain(b).collect();
    crate::report::interference::disturbed_runs(&both, step)
}

/// A and B without the runs of `hit` (step `step` disturbed in them), when `hit` is not empty
/// and each side keeps at least two runs that completed the step: the runs to judge the step
/// on. `None` otherwise (nothing to leave out, or too few left: the change is withheld).
pub(super) fn undisturbed(
    a: &[RunResult],
    b: &[RunResult],
    step: &str,
    hit: &[(String, String)],
) -> Option<(Vec<RunResult>, Vec<RunResult>)> {
    if hit.is_empty() {
        return None;
    }
    let keep = |runs: &[RunResult]| -> Vec<RunResult> {
        runs.iter()
            .filter(|r| !hit.iter().any(|(id, _)| *id == r.run_id))
            .cloned()
            .collect()
    };
    let completed = |runs: &[RunResult]| {
        runs.iter()
            .filter(|r| {
                r.steps
                    .iter()
                    .any(|s| s.name == step && s.status == RunStatus::Complete)
            })
            .count()
    };
    let (ka, kb) = (keep(a), keep(b));
    (completed(&ka) >= 2 && completed(&kb) >= 2).then_some((ka, kb))
}

/// `row`, a change called in a step that a neighbour disturbed in some run (`disturbed`: step,
/// run, why, over the comparison): not called, and the runs named.
pub(super) fn disturbed(mut row: Row, disturbed: &[(String, String, String)]) -> Row {
    let runs: Vec<&str> = disturbed
        .iter()
        .filter(|(step, _, _)| *step == row.step)
        .map(|(_, run, _)| run.as_str())
        .collect();
    if !row.significant || runs.is_empty() {
        return row;
    }
    let would = row.verdict.as_str();
    let named = match runs.as_slice() {
        [one] => format!("run {one}"),
        more => format!("{} runs (named below)", more.len()),
    };
    row.note = format!(
        "would be {would}, but a neighbour disturbed the step in {named}: the host, not the \
         DBMS, may have moved it"
    );
    row.withheld = Some(row.verdict);
    row.verdict = Verdict::Disturbed;
    row.significant = false;
    if let Some((head, _)) = row.text.rsplit_once(&format!(": {would}: ")) {
        row.text = format!("{head}: {}: {}", row.verdict.as_str(), row.note);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::super::stats;
    use super::*;
    use crate::report::compare::Better;

    /// A row called worse: `a` against `b` as runs, CPU us/op.
    fn called(a: &[f64], b: &[f64]) -> Row {
        let t = stats::ratio_test(&stats::from_runs(a).unwrap(), &stats::from_runs(b).unwrap())
            .unwrap();
        Row {
            step: "l.i1".into(),
            metric: "dbms CPU us/op".into(),
            key: "dbms_cpu_us_per_op".into(),
            better: Better::Lower,
            test: Some(t),
            q: Some(0.001),
            ci_pct: Some([20.0, 40.0]),
            ci_level: Some(0.999),
            verdict: Verdict::Worse,
            significant: true,
            note: "beyond the +-3% noise threshold".into(),
            text: "dbms CPU us/op +30%: worse: beyond the +-3% noise threshold".into(),
            withheld: None,
        }
    }

    #[test]
    fn a_change_under_twice_the_resolution_is_never_called() {
        // 1.0 against 1.3 us/op, read in steps of 0.2 (one tick over the ops): 0.3 < 0.4.
        let row = coarse(called(&[1.0, 1.0, 1.0], &[1.3, 1.3, 1.3]), 0.2);
        assert_eq!(row.verdict, Verdict::Inconclusive);
        assert!(!row.significant);
        assert!(row.note.contains("too coarse to call"), "{}", row.note);
        assert!(
            row.text.contains(": inconclusive: would be worse"),
            "{}",
            row.text
        );
        // Twice the resolution or more stands.
        let row = coarse(called(&[1.0, 1.0, 1.0], &[1.5, 1.5, 1.5]), 0.2);
        assert_eq!(row.verdict, Verdict::Worse);
    }

    #[test]
    fn a_change_in_a_disturbed_step_is_not_called_and_names_the_run() {
        let d = [(
            "l.i1".to_string(),
            "r7".to_string(),
            "other processes used 1.6 cores".to_string(),
        )];
        let row = disturbed(called(&[1.0; 3], &[2.0; 3]), &d);
        assert_eq!(row.verdict, Verdict::Disturbed);
        assert!(!row.significant);
        assert!(row.note.starts_with("would be worse") && row.note.contains("run r7"));
        // Another step's neighbour does not touch it.
        let other = [("l.i0".to_string(), "r7".to_string(), "x".to_string())];
        assert_eq!(
            disturbed(called(&[1.0; 3], &[2.0; 3]), &other).verdict,
            Verdict::Worse
        );
    }
}

//! Honest marks: a report's relative cell is marked better or worse only where `ibench
//! compare`'s test, on the same runs, calls the change (docs/reports.md). With one run on a
//! side there is no estimate of the noise between runs: the cell is then marked by the
//! 0.95/1.05 threshold and says "one run: no noise estimate". A ratio beyond the threshold
//! that the runs do not support says "too noisy" instead of being marked. The headline counts
//! the marks per configuration and names the largest supported changes.

use crate::report::compare::{self, Comparison, Verdict};
use crate::report::figures::{self, Better};
use crate::report::model::{Headline, StepReport, TopChange};
use crate::report::select::Group;
use crate::report::stat::{HIGH_RATIO, Judged, LOW_RATIO, Mark, Stat, StepFlag, mark};

/// How relative values are marked, in one sentence for every format.
pub const LEGEND: &str = "A relative value is marked better or worse only where the runs \
    support the change (the test of ibench compare: a moderated t on the runs, false discovery \
    rate 1%, interval beyond +-3%); a ratio below 0.95 or above 1.05 they do not support says \
    'too noisy'; with one run on a side, values below 0.95 or above 1.05 are marked and say \
    'one run: no noise estimate'.";

/// How negligible figures are shown, in one sentence for every format.
pub const NEGLIGIBLE_LEGEND: &str = "A per-op figure under its floor on both sides (KB read or \
    written per op under 0.1, reads or writes per op under 0.01, context switches per op under \
    0.01) is negligible: shown as ~0, not marked, counted as unchanged.";

/// The note of a cell marked by the threshold because a side has one run.
pub const ONE_RUN: &str = "one run: no noise estimate";

/// Judges a relative value `relative` of figure `key` (better `better`) in `step`.
pub fn judge(
    cmp: &Comparison,
    step: &str,
    key: &str,
    better: Better,
    relative: f64,
    one_run: bool,
) -> Judged {
    let beyond = mark(relative, better);
    if one_run {
        return Judged {
            mark: match beyond {
                "better" => Mark::Better,
                "worse" => Mark::Worse,
                _ => Mark::Unchanged,
            },
            one_run,
            ci_pct: None,
            q: None,
            note: format!("{ONE_RUN}: marked beyond {LOW_RATIO}/{HIGH_RATIO}"),
        };
    }
    let Some(row) = cmp.row(step, figures::tested_key(key)) else {
        return Judged {
            mark: Mark::Untested,
            one_run,
            ci_pct: None,
            q: None,
            note: "not tested (ibench compare has no test for this figure)".to_string(),
        };
    };
    let mark = match row.verdict {
        Verdict::Better => Mark::Better,
        Verdict::Worse => Mark::Worse,
        Verdict::Untestable => Mark::Untested,
        Verdict::Flagged | Verdict::Disturbed => Mark::Flagged,
        Verdict::NoChange => Mark::Unchanged,
        Verdict::Inconclusive if beyond.is_empty() => Mark::Unchanged,
        Verdict::Inconclusive => Mark::TooNoisy,
    };
    Judged {
        mark,
        one_run,
        ci_pct: row.ci_pct,
        q: row.q,
        note: row.text.clone(),
    }
}

/// The judgement of a figure negligible on both sides (`figures::negligible`).
fn negligible(def: &figures::MetricDef) -> Judged {
    Judged {
        mark: Mark::Negligible,
        one_run: false,
        ci_pct: None,
        q: None,
        note: format!(
            "negligible: under {} {} on both sides, not marked",
            def.floor, def.unit
        ),
    }
}

fn judge_map(
    stats: &mut std::collections::BTreeMap<String, Stat>,
    base: &std::collections::BTreeMap<String, Stat>,
    (cmp, step): (&Comparison, &str),
    one_run: bool,
    flag: Option<&StepFlag>,
) {
    for (key, s) in stats.iter_mut() {
        let (Some(r), Some(def)) = (s.relative, figures::find(key)) else {
            continue;
        };
        if base
            .get(key)
            .is_some_and(|b| figures::negligible(key, b.median, s.median))
        {
            s.judged = Some(negligible(def));
            continue;
        }
        let mut j = judge(cmp, step, key, def.better, r, one_run);
        if let Some(f) = flag
            && matches!(j.mark, Mark::Better | Mark::Worse)
        {
            j.mark = Mark::Flagged;
            j.note = format!("not marked: step flagged in run {}: {}", f.run, f.text);
        }
        s.judged = Some(j);
    }
}

/// Judges every relative figure of `steps` (groups in the order of `groups`, base first)
/// with one comparison of each configuration against the base.
pub fn judge_all(groups: &[Group], steps: &mut [StepReport]) {
    let Some((base, rest)) = groups.split_first() else {
        return;
    };
    for (i, g) in rest.iter().enumerate() {
        let cmp = compare::compare(&base.runs, &g.runs, &compare::Options::default());
        let one_run = base.runs.len() < 2 || g.runs.len() < 2;
        for step in steps.iter_mut() {
            if step.groups.len() <= i + 1 {
                continue;
            }
            let (base_gs, rest_gs) = step.groups.split_at_mut(1);
            let gs = &mut rest_gs[i];
            // A flag of the base's runs or of this configuration's.
            let flag = base_gs[0]
                .flags
                .iter()
                .chain(&gs.flags)
                .find(|f| f.blocks())
                .cloned();
            let flag = flag.as_ref();
            let b = &base_gs[0];
            let at = (&cmp, step.name.as_str());
            judge_map(&mut gs.throughput, &b.throughput, at, one_run, flag);
            judge_map(&mut gs.efficiency, &b.efficiency, at, one_run, flag);
            judge_map(&mut gs.micro, &b.micro, at, one_run, flag);
        }
    }
}

/// How many largest changes the headline names.
pub const TOP: usize = 5;

/// The headline of every configuration but the base (`names[i]` is group `i`).
pub fn headlines(names: &[String], steps: &[StepReport], micro: bool) -> Vec<Headline> {
    (1..names.len())
        .map(|gi| {
            let mut h = Headline {
                group: names[gi].clone(),
                one_run: false,
                better: 0,
                worse: 0,
                unchanged: 0,
                too_noisy: 0,
                flagged: 0,
                untested: 0,
                largest: Vec::new(),
            };
            for step in steps {
                let Some(gs) = step.groups.get(gi) else {
                    continue;
                };
                // A microbenchmark step's figures are in `micro` (its throughput and
                // efficiency maps hold the same figures again under the step's keys).
                let maps = if micro {
                    vec![&gs.micro]
                } else {
                    vec![&gs.throughput, &gs.efficiency]
                };
                for (key, s) in maps.into_iter().flatten() {
                    let (Some(j), Some(r)) = (&s.judged, s.relative) else {
                        continue;
                    };
                    h.one_run |= j.one_run;
                    match j.mark {
                        Mark::Better => h.better += 1,
                        Mark::Worse => h.worse += 1,
                        Mark::Unchanged | Mark::Negligible => h.unchanged += 1,
                        Mark::TooNoisy => h.too_noisy += 1,
                        Mark::Flagged => h.flagged += 1,
                        Mark::Untested => h.untested += 1,
                    }
                    if matches!(j.mark, Mark::Better | Mark::Worse) && r > 0.0 {
                        h.largest.push(TopChange {
                            step: step.name.clone(),
                            key: key.clone(),
                            figure: figures::label(key),
                            relative: r,
                            mark: j.mark,
                            ci_pct: j.ci_pct,
                        });
                    }
                }
            }
            h.largest
                .sort_by(|a, b| b.relative.ln().abs().total_cmp(&a.relative.ln().abs()));
            h.largest.truncate(TOP);
            h
        })
        .collect()
}

/// What a relative table adds to its title when a configuration or the base has one run:
/// `""` otherwise.
pub fn one_run_note(r: &crate::report::model::Report) -> String {
    let names: Vec<&str> = r
        .headline
        .iter()
        .filter(|h| h.one_run)
        .map(|h| h.group.as_str())
        .collect();
    if names.is_empty() {
        return String::new();
    }
    format!(
        "; {}: a side has one run, marked below {LOW_RATIO} or above {HIGH_RATIO} ({ONE_RUN})",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::{Row, Unit};

    fn cmp(verdict: Verdict) -> Comparison {
        Comparison {
            runs_a: 3,
            runs_b: 3,
            rounds: 0,
            duet_rounds: 0,
            unit: Unit::Runs,
            alpha: 0.01,
            noise_pct: 3.0,
            tests: 1,
            discoveries: 0,
            families: Vec::new(),
            rows: vec![Row {
                step: "l.i1".into(),
                metric: "ins/s".into(),
                key: "inserts_per_s".into(),
                better: Better::Higher,
                test: None,
                q: Some(0.5),
                ci_pct: Some([-60.0, 10.0]),
                ci_level: Some(0.99),
                verdict,
                significant: verdict.is_significant(),
                note: String::new(),
                text: "ins/s ...".into(),
                withheld: None,
            }],
            explain: Vec::new(),
            flags: Vec::new(),
            disturbed: Vec::new(),
            left_out: Vec::new(),
            history_runs: 0,
            history_rows: 0,
            headline: String::new(),
        }
    }

    #[test]
    fn a_cell_is_marked_only_as_compare_calls_it() {
        let j = |v, r| judge(&cmp(v), "l.i1", "inserts_per_s", Better::Higher, r, false).mark;
        // A 0.60 ratio the runs do not support is too noisy, not worse.
        assert_eq!(j(Verdict::Inconclusive, 0.6), Mark::TooNoisy);
        assert_eq!(j(Verdict::Inconclusive, 0.98), Mark::Unchanged);
        assert_eq!(j(Verdict::Worse, 0.6), Mark::Worse);
        assert_eq!(j(Verdict::Better, 1.6), Mark::Better);
        assert_eq!(j(Verdict::NoChange, 1.01), Mark::Unchanged);
        // A figure compare does not test is not marked, whatever its ratio.
        let c = cmp(Verdict::Worse);
        let kb = judge(&c, "l.i1", "kb_read_per_op", Better::Lower, 3.0, false);
        assert_eq!(kb.mark, Mark::Untested);
        // One run a side: the threshold, said so.
        let one = judge(&c, "l.i1", "kb_read_per_op", Better::Lower, 3.0, true);
        assert_eq!((one.mark, one.one_run), (Mark::Worse, true));
        assert!(one.note.starts_with(ONE_RUN), "{}", one.note);
        let one = judge(&c, "l.i1", "inserts_per_s", Better::Higher, 1.03, true);
        assert_eq!(one.mark, Mark::Unchanged);
    }
}

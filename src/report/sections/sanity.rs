//! The report's section of flagged steps: the steps whose rate was not steady or that were too
//! short to compare, from the model's flags (`StepFlag`, judged by `compare/steady.rs`).

use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::compare::stats::MIN_SECONDS;
use crate::report::compare::steady::DRIFT_PCT;
use crate::report::model::Report;

/// The report's section of flagged steps: a row per step, configuration and run flagged;
/// `None` when no step is.
pub fn section(r: &Report) -> Option<Section> {
    let rows: Vec<Vec<Cell>> = r
        .step_reports
        .iter()
        .flat_map(|s| {
            s.groups.iter().flat_map(move |g| {
                g.flags.iter().map(move |f| {
                    vec![
                        Cell::plain(s.name.clone()),
                        Cell::plain(g.group.clone()),
                        Cell::plain(f.run.clone()),
                        Cell::marked(f.text.clone(), "noisy"),
                    ]
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "sanity".to_string(),
        title: "Step sanity".to_string(),
        note: format!(
            "Steps whose rate was not steady (the last third's mean rate beyond \
             {DRIFT_PCT}% of the first's and beyond the noise of its seconds) or that were too \
             short to compare (fewer than {MIN_SECONDS} full seconds, what a one-run comparison \
             needs); docs/reports.md. A change in a step that was not steady is not marked (flagged step)."
        ),
        tables: vec![ViewTable {
            title: "flagged steps".to_string(),
            header: ["step", "config", "run", "flag"].map(String::from).to_vec(),
            rows,
        }],
    })
}

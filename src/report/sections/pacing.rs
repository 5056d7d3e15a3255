//! The report's section on what ran before each step's measured part: warm-ups and
//! cool-downs, from the model's `pacing` (`pacing.rs`).

use crate::output::format::seconds;
use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::model::Report;

/// The report's section on warm-ups and cool-downs: a row per step and configuration that had
/// either; `None` when no step had.
pub fn section(r: &Report) -> Option<Section> {
    let rows: Vec<Vec<Cell>> = r
        .step_reports
        .iter()
        .flat_map(|s| {
            s.groups.iter().filter_map(move |g| {
                let p = g.pacing.as_ref()?;
                Some(vec![
                    Cell::plain(s.name.clone()),
                    Cell::plain(g.group.clone()),
                    Cell::plain(p.cooldown_s.map_or_else(|| "-".to_string(), seconds)),
                    Cell::plain(p.warmup_text()),
                ])
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "pacing".to_string(),
        title: "Warm-up and cool-down".to_string(),
        note: "Before each step's measured part: the pause the run took (--cooldown) and the \
               warm-up (--warmup: its seconds, statements per op type and rows), medians over \
               the configuration's runs. Neither is in any figure of this report (rates, \
               response times, costs); a load step's warm-up rows count towards its rows, \
               not its rates."
            .to_string(),
        tables: vec![ViewTable {
            title: "warm-up and cool-down (not counted)".to_string(),
            header: ["step", "config", "cool-down", "warm-up (not counted)"]
                .map(String::from)
                .to_vec(),
            rows,
        }],
    })
}

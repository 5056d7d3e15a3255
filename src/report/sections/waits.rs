//! The report's wait-event tables: per step, the events the DBMS's sessions spent most time
//! in (`steps[].wait_events`), median seconds over each group's repeats and the share of all
//! waits (including `CPU:running` on PostgreSQL) each is.

use std::collections::BTreeSet;

use crate::report::cells::{Cell, Section, ViewTable, fmt_value};
use crate::report::model::{GroupStep, Report, StepReport};

/// Rows of a step's table: the events with the most time in any group.
pub const TOP: usize = 10;

/// The top events of `step` by their largest median over the groups, largest first.
pub fn top_events(step: &StepReport, n: usize) -> Vec<String> {
    let names: BTreeSet<&String> = step.groups.iter().flat_map(|g| g.waits.keys()).collect();
    let mut ranked: Vec<(f64, &String)> = names
        .into_iter()
        .map(|name| {
            let most = step
                .groups
                .iter()
                .filter_map(|g| g.waits.get(name))
                .map(|s| s.median)
                .fold(0.0, f64::max);
            (most, name)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    ranked
        .into_iter()
        .take(n)
        .map(|(_, name)| name.clone())
        .collect()
}

/// The share of `g`'s waits that `name` is, percent.
fn share(g: &GroupStep, name: &str) -> Option<f64> {
    let total: f64 = g.waits.values().map(|s| s.median).sum();
    let s = g.waits.get(name)?;
    (total > 0.0).then(|| 100.0 * s.median / total)
}

/// The top wait events of `step`, one column per group: median seconds (min-max of repeats)
/// and share of the group's waits.
pub fn waits_table(r: &Report, step: &StepReport) -> Option<ViewTable> {
    let top = top_events(step, TOP);
    if top.is_empty() {
        return None;
    }
    let mut header = vec!["wait event".to_string()];
    header.extend(r.groups.iter().map(|g| format!("{} (s, share)", g.name)));
    let rows = top
        .iter()
        .map(|name| {
            let mut row = vec![Cell::plain(name.clone())];
            row.extend(step.groups.iter().map(|g| match g.waits.get(name) {
                Some(s) => {
                    let mut c = Cell::stat(s, 2);
                    if let Some(p) = share(g, name) {
                        c.text = format!("{} ({}%)", c.text, fmt_value(p, 0));
                    }
                    c
                }
                None => Cell::plain("-"),
            }));
            row
        })
        .collect();
    Some(ViewTable {
        title: format!("{}: top wait events", step.name),
        header,
        rows,
    })
}

/// The wait-events section, when any step recorded waits.
pub fn section(r: &Report) -> Option<Section> {
    let tables: Vec<ViewTable> = r
        .step_reports
        .iter()
        .filter_map(|s| waits_table(r, s))
        .collect();
    if tables.is_empty() {
        return None;
    }
    Some(Section {
        id: "waits".to_string(),
        title: "Wait events".to_string(),
        note: format!(
            "Seconds the DBMS's sessions spent in each wait event over the step, the top {TOP} \
             (median over repeats), and each one's share of all recorded waits. PostgreSQL: \
             the wait event of every active backend sampled ten times a second (CPU:running: \
             active with no wait event); MariaDB: performance_schema's \
             events_waits_summary_global_by_event_name, end minus start, when \
             performance_schema is on (docs/metrics.md)."
        ),
        tables,
    })
}

//! The storage engine's perf context counters over each step's select-min (MyRocks'
//! rocksdb_perf_context_global, embedded RocksDB's thread perf context: what the query that
//! finds the oldest row had to step over, such as the tombstones deletes left,
//! `INTERNAL_DELETE_SKIPPED_COUNT`), stored as `steps[].select_min.perf_context`.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::model::{Report, Stat};
use crate::report::table::Table;
use crate::results::model::{RunResult, StepResult};

/// The counters of `steps` (a group's runs) that are not zero in every run, median over the
/// runs that recorded any (a run without a counter counted none of it).
pub fn stats(steps: &[&StepResult]) -> BTreeMap<String, Stat> {
    let recorded: Vec<&BTreeMap<String, f64>> = steps
        .iter()
        .filter_map(|s| s.select_min.as_ref().map(|m| &m.perf_context))
        .filter(|p| !p.is_empty())
        .collect();
    let names: BTreeSet<&String> = recorded.iter().flat_map(|p| p.keys()).collect();
    names
        .into_iter()
        // An id (`IO_THREAD_POOL_ID`) is no count: its difference means nothing.
        .filter(|name| !name.ends_with("_ID"))
        .filter_map(|name| {
            let values: Vec<f64> = recorded
                .iter()
                .map(|p| p.get(name).copied().unwrap_or(0.0))
                .collect();
            let s = Stat::of(&values)?;
            (s.max != 0.0).then(|| (name.clone(), s))
        })
        .collect()
}

fn short(name: &str) -> &str {
    name.strip_prefix("perf_context.").unwrap_or(name)
}

/// The terminal summary's table: per step, each counter that is not zero; empty for a run
/// without any.
pub fn section(run: &RunResult) -> String {
    let mut t = Table::new(["step", "perf context counter", "over select-min"]);
    for s in &run.steps {
        for (name, s_) in stats(&[s]) {
            t.row([
                crate::output::escape::line(&s.name).into_owned(),
                short(&name).to_string(),
                format!("{:.0}", s_.median),
            ]);
        }
    }
    if t.is_empty() {
        return String::new();
    }
    format!(
        "\nThe engine's perf context over each step's select-min (counters not zero)\n\n{}",
        t.to_text()
    )
}

/// A count's cell: the median, and the min-max of the repeats when they differ.
fn count(s: &Stat) -> Cell {
    Cell {
        text: format!("{:.0}", s.median),
        sub: if s.min != s.max {
            format!("{:.0}-{:.0}", s.min, s.max)
        } else {
            String::new()
        },
        ..Cell::default()
    }
}

/// The report's section: per step, a row per counter and a column per configuration.
pub fn report_section(r: &Report) -> Option<Section> {
    let mut tables = Vec::new();
    for step in &r.step_reports {
        let names: BTreeSet<&String> = step
            .groups
            .iter()
            .flat_map(|g| g.measured.perf_context.keys())
            .collect();
        if names.is_empty() {
            continue;
        }
        let mut header = vec!["counter".to_string()];
        header.extend(r.groups.iter().map(|g| g.name.clone()));
        let rows = names
            .into_iter()
            .map(|name| {
                let mut row = vec![Cell::plain(short(name))];
                row.extend(step.groups.iter().map(|g| {
                    g.measured
                        .perf_context
                        .get(name)
                        .map_or_else(|| Cell::plain("-"), count)
                }));
                row
            })
            .collect();
        tables.push(ViewTable {
            title: format!("{}: perf context over the select-min", step.name),
            header,
            rows,
        });
    }
    if tables.is_empty() {
        return None;
    }
    Some(Section {
        id: "perf-context".to_string(),
        title: "Perf context at select-min".to_string(),
        note: "The storage engine's perf context counters over the step's select-min (MyRocks: \
               information_schema.rocksdb_perf_context_global, read before and after; embedded \
               RocksDB: the querying thread's perf context), the counters not zero; median over \
               repeats. INTERNAL_DELETE_SKIPPED_COUNT: tombstones stepped over."
            .to_string(),
        tables,
    })
}

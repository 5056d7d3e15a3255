//! The report's section on the storage engine's perf context over each step's select-min,
//! from the model's `measured.perf_context` (`perf_context.rs`).

use std::collections::BTreeSet;

use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::model::Report;
use crate::report::perf_context::short;
use crate::report::stat::Stat;

/// The report's section: per step, a row per counter and a column per configuration.
pub fn section(r: &Report) -> Option<Section> {
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

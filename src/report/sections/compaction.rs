//! The report's section on MyRocks' compaction statistics at each step's end, from the
//! model's `measured.compaction` (`compaction.rs` reads them from the runs).

use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::compaction::{header, row};
use crate::report::model::Report;

/// The report's section: per step and configuration, the last run's tables.
pub fn section(r: &Report) -> Option<Section> {
    let mut tables = Vec::new();
    for step in &r.step_reports {
        for (g, gs) in r.groups.iter().zip(&step.groups) {
            let Some(last) = gs.measured.compaction.last() else {
                continue;
            };
            for t in &last.tables {
                tables.push(ViewTable {
                    title: format!(
                        "{} {}: compaction statistics [{}], run {}",
                        step.name, g.name, t.column_family, last.run_id
                    ),
                    header: header(),
                    rows: t
                        .rows
                        .iter()
                        .map(|x| row(x).into_iter().map(Cell::plain).collect())
                        .collect(),
                });
            }
        }
    }
    if tables.is_empty() {
        return None;
    }
    Some(Section {
        id: "compaction".to_string(),
        title: "Compaction statistics (MyRocks)".to_string(),
        note: "SHOW ENGINE ROCKSDB STATUS at each step's end, its ** Compaction Stats ** block \
               per level: files (being compacted), size, score, GB read and written by \
               compaction, write amplification, MB/s, compaction seconds and count, keys in \
               and dropped. Cumulative since the server started (Int: since the previous \
               status); the last run of each configuration."
            .to_string(),
        tables,
    })
}

//! MyRocks' compaction statistics per level at each step's end (parsed from the stored
//! `SHOW ENGINE ROCKSDB STATUS` text by `dbms::mysql::compaction`), in the terminal summary
//! and the reports.

use serde::Serialize;

use crate::dbms::mysql::compaction::{CompactionStats, LevelRow, of_step};
use crate::report::table::Table;
use crate::results::model::RunResult;

/// The columns shown beside level, files and size: RocksDB's header names.
pub const COLUMNS: &[&str] = &[
    "Score",
    "Read(GB)",
    "Write(GB)",
    "W-Amp",
    "Rd(MB/s)",
    "Wr(MB/s)",
    "Comp(sec)",
    "Comp(cnt)",
    "KeyIn",
    "KeyDrop",
];

/// One run's tables at a step's end.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunCompaction {
    /// The run.
    pub run_id: String,
    /// One table per column family.
    pub tables: Vec<CompactionStats>,
}

pub(crate) fn header() -> Vec<String> {
    let mut h: Vec<String> = ["level", "files", "size MiB"].map(String::from).to_vec();
    h.extend(COLUMNS.iter().map(|c| c.to_string()));
    h
}

pub(crate) fn row(r: &LevelRow) -> Vec<String> {
    let mut out = vec![
        r.level.clone(),
        if r.compacting > 0 {
            format!("{} ({} compacting)", r.files, r.compacting)
        } else {
            r.files.to_string()
        },
        format!("{:.2}", r.size_bytes / 1048576.0),
    ];
    out.extend(COLUMNS.iter().map(|c| match r.get(c) {
        // As the status printed it (`0.1`, `8.36`; `2505K` as 2505000).
        Some(v) => format!("{}", (v * 1000.0).round() / 1000.0),
        None => "-".to_string(),
    }));
    out
}

/// The terminal summary's tables: per step, each column family's levels; empty for a run
/// without them (any DBMS but MyRocks).
pub fn section(run: &RunResult) -> String {
    let mut out = String::new();
    for s in &run.steps {
        for t in of_step(&s.engine_status) {
            let mut table = Table::new(header());
            for r in &t.rows {
                table.row(row(r));
            }
            out.push_str(&format!(
                "\n{}: compaction statistics [{}] at the step's end (cumulative since the \
                 server started; Int: since the previous status)\n\n{}",
                crate::output::escape::line(&s.name),
                crate::output::escape::line(&t.column_family),
                table.to_text()
            ));
        }
    }
    out
}

//! The storage engine's perf context counters over each step's select-min (MyRocks'
//! rocksdb_perf_context_global, embedded RocksDB's thread perf context: what the query that
//! finds the oldest row had to step over, such as the tombstones deletes left,
//! `INTERNAL_DELETE_SKIPPED_COUNT`), stored as `steps[].select_min.perf_context`.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::stat::Stat;
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

pub(crate) fn short(name: &str) -> &str {
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

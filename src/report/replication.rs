//! The terminal summary's replication section: per step and replica, the replay lag (max
//! and p99 of the per-second readings), the most bytes behind, and how long the replica took
//! to catch up with the primary's WAL position at the step's end (docs/replication.md).

use crate::output::escape;
use crate::report::table::Table;
use crate::results::model::RunResult;

/// The section, empty for a run without replicas.
pub fn section(run: &RunResult) -> String {
    let mut t = Table::new([
        "step",
        "replica",
        "max lag s",
        "p99 lag s",
        "max MB behind",
        "catch-up s",
    ]);
    let mut any = false;
    for s in &run.steps {
        for r in &s.replication {
            any = true;
            t.row([
                escape::line(&s.name).into_owned(),
                escape::line(&r.name).into_owned(),
                format!("{:.3}", r.max_replay_lag_s),
                format!("{:.3}", r.p99_replay_lag_s),
                format!("{:.2}", r.max_bytes_behind / 1e6),
                r.catch_up_s
                    .map_or_else(|| "not caught up".to_string(), |c| format!("{c:.3}")),
            ]);
        }
    }
    if !any {
        return String::new();
    }
    format!(
        "\nReplication (docs/replication.md): replay lag per second, and the time to catch up \
         at each step's end\n\n{}",
        t.to_text()
    )
}

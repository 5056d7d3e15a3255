//! The terminal summary's replication section: per step and replica, the replay lag (max
//! and p99 of the per-second readings), the most bytes behind, and how long the replica took
//! to catch up with the primary's WAL position at the step's end (docs/replication.md).

use crate::output::escape;
use crate::report::table::Table;
use crate::results::model::{RunResult, StepResult};

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

/// What step `s` says of its cluster beyond the lag table: each node that died during it
/// (which, when, how it was seen, what it did to the step), and the errors of a kind of
/// their own (Galera's certification failures and brute-force aborts).
pub fn step_faults(s: &StepResult) -> String {
    let mut out = String::new();
    let step = escape::line(&s.name);
    for d in &s.node_failures {
        out.push_str(&format!(
            "\nwarning: {step}: {} ({}): {}{}\n",
            escape::line(&d.message),
            escape::line(&d.seen),
            escape::line(&d.outcome),
            escape::line(&rejoin_text(d))
        ));
    }
    if s.errors.values().any(|&n| n > 0) {
        let kinds: Vec<String> = s
            .errors
            .iter()
            .map(|(k, n)| format!("{n} {}", escape::line(k)))
            .collect();
        out.push_str(&format!(
            "\n{step}: errors {} (retried as deadlocks; docs/replication.md)\n",
            kinds.join(", ")
        ));
    }
    out
}

/// The report's section of the cluster nodes that died during steps (`--on-node-failure`): a
/// row per step, configuration, run and death; `None` when no node died.
pub fn faults_section(r: &crate::report::model::Report) -> Option<crate::report::cells::Section> {
    use crate::report::cells::{Cell, Section, ViewTable};
    let rows: Vec<Vec<Cell>> = r
        .step_reports
        .iter()
        .flat_map(|s| {
            s.groups.iter().flat_map(move |g| {
                g.node_failures.iter().map(move |(run, line)| {
                    vec![
                        Cell::plain(s.name.clone()),
                        Cell::plain(g.group.clone()),
                        Cell::plain(run.clone()),
                        Cell::marked(line.clone(), "fail"),
                    ]
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Section {
        id: "node-failures".to_string(),
        title: "Cluster nodes that died".to_string(),
        note: "Replicas or Galera nodes whose process was gone during a step: which, when \
               (seconds into the step), and what it did to the step (--on-node-failure; \
               docs/replication.md)."
            .to_string(),
        tables: vec![ViewTable {
            title: "node failures".to_string(),
            header: ["step", "config", "run", "what happened"]
                .map(String::from)
                .to_vec(),
            rows,
        }],
    })
}

/// What became of a node started again after it died: `; synced again in 3.2 s (pid 123)`, or
/// why it stays down; empty when it was not started again.
pub fn rejoin_text(d: &crate::results::model::NodeDeath) -> String {
    match &d.rejoin {
        None => String::new(),
        Some(r) => match (r.synced_s, r.pid, &r.error) {
            (Some(s), Some(pid), _) => format!("; synced again in {s:.1} s (pid {pid})"),
            (_, _, Some(e)) => format!("; could not rejoin, it stays down: {e}"),
            _ => "; could not rejoin, it stays down".to_string(),
        },
    }
}

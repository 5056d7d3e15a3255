//! The figures of replicated and clustered targets (docs/replication.md): the terminal
//! summary's replication section (per step and replica, the replay lag, max and p99 of the
//! per-second readings, the most bytes behind, and how long the replica took to catch up at
//! the step's end), each server's own CPU, IO and memory in the summary, and what the
//! report's model holds of them (per-server figures, nodes that died), read from the runs;
//! the report's sections of them are `sections/replication.rs`.

use std::collections::BTreeMap;

use crate::output::escape;
use crate::report::stat::Stat;
use crate::report::table::Table;
use crate::results::model::{RunResult, StepResult};
use crate::server::replicas::rejoin::rejoin_text;

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

/// The CPU, IO and memory of each server of a cluster per step (the cost per op covers them
/// all; this says which server paid it); empty for a single server.
pub fn servers_section(run: &RunResult) -> String {
    let mut t = Table::new([
        "step",
        "server",
        "cpu s",
        "cpu us/op",
        "read MB",
        "write MB",
        "peak RSS MB",
    ]);
    let mut any = false;
    for s in &run.steps {
        let Some(e) = &s.efficiency else { continue };
        for w in &e.servers {
            any = true;
            let io = |b: u64| {
                if w.io_known {
                    format!("{:.1}", b as f64 / 1e6)
                } else {
                    "-".to_string()
                }
            };
            t.row([
                escape::line(&s.name).into_owned(),
                escape::line(&w.name).into_owned(),
                format!("{:.2}", w.work.cpu_s),
                if e.ops > 0 {
                    format!("{:.1}", w.work.cpu_s * 1e6 / e.ops as f64)
                } else {
                    "-".to_string()
                },
                io(w.work.work.read_bytes),
                io(w.work.work.write_bytes),
                format!("{:.1}", w.peak_rss_bytes as f64 / 1e6),
            ]);
        }
    }
    if !any {
        return String::new();
    }
    format!(
        "\nPer server (docs/replication.md): each server's processes over the step; the DBMS \
         figures of the cost per op are their sum, and us/op divides by the same ops\n\n{}",
        t.to_text()
    )
}

/// Each server's figures over `steps` (a group's runs of one step), median over the runs that
/// sampled it: CPU and IO per op of the step, the peak resident memory.
pub fn server_stats(steps: &[&StepResult]) -> BTreeMap<String, BTreeMap<String, Stat>> {
    let mut values: BTreeMap<String, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for e in steps.iter().filter_map(|s| s.efficiency.as_ref()) {
        let n = e.ops as f64;
        for w in &e.servers {
            let v = values.entry(w.name.clone()).or_default();
            if n > 0.0 {
                v.entry("cpu_us").or_default().push(w.work.cpu_s * 1e6 / n);
                if w.io_known {
                    let kb = |b: u64| b as f64 / 1024.0 / n;
                    v.entry("kb_read")
                        .or_default()
                        .push(kb(w.work.work.read_bytes));
                    v.entry("kb_written")
                        .or_default()
                        .push(kb(w.work.work.write_bytes));
                }
            }
            v.entry("peak_rss_mb")
                .or_default()
                .push(w.peak_rss_bytes as f64 / 1e6);
        }
    }
    values
        .into_iter()
        .map(|(server, figures)| {
            let stats = figures
                .into_iter()
                .filter_map(|(k, v)| Some((k.to_string(), Stat::of(&v)?)))
                .collect();
            (server, stats)
        })
        .collect()
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

/// The nodes that died in `steps` (a group's runs of one step, `runs` theirs): (run, the line
/// said of the death and what became of the step and the node).
pub fn node_failure_lines(runs: &[&RunResult], steps: &[&StepResult]) -> Vec<(String, String)> {
    runs.iter()
        .zip(steps)
        .flat_map(|(r, s)| {
            s.node_failures.iter().map(|d| {
                let rejoin = rejoin_text(d);
                (
                    r.run_id.clone(),
                    format!("{}: {}{rejoin}", d.message, d.outcome),
                )
            })
        })
        .collect()
}

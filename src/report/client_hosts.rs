//! The per-host breakdown of a run made by a group of client hosts (`ibench run --group`) in
//! the reports: per step, what each host ran and measured (the terminal's is in `group.rs`).

use serde::Serialize;

use crate::output::format::{rate, seconds};
use crate::report::cells::{Cell, Section, ViewTable};
use crate::report::model::Report;
use crate::results::model::RunResult;

/// One host's part of one step of a merged group run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostPart {
    /// The merged run.
    pub run_id: String,
    /// The host's index in the group (and attempt, `1 a2`, when the group was resumed).
    pub host: String,
    /// Its host name.
    pub hostname: String,
    /// When it started the step after the first host did, ms (the store's clock).
    pub start_offset_ms: f64,
    /// Its step's length, seconds.
    pub duration_s: f64,
    /// Its rates.
    pub inserts_per_s: f64,
    /// Deleted rows per second.
    pub deletes_per_s: f64,
    /// Queries per second.
    pub queries_per_s: f64,
    /// ibench's CPU per op on that host, microseconds.
    pub client_cpu_us_per_op: Option<f64>,
    /// That host's CPU per op, microseconds.
    pub host_cpu_us_per_op: Option<f64>,
    /// The step's status on that host.
    pub status: String,
}

/// Each host's part of step `step` of `run`; empty for a run that is not a merged group run.
pub fn parts(run: &RunResult, step: &str) -> Vec<HostPart> {
    let Some(g) = &run.group else {
        return Vec::new();
    };
    let resumed = g.members.iter().any(|m| m.attempt > 0);
    g.members
        .iter()
        .filter_map(|m| {
            let h = m.steps.iter().find(|h| h.name == step)?;
            Some(HostPart {
                run_id: run.run_id.clone(),
                host: if resumed {
                    format!("{} a{}", m.index, m.attempt)
                } else {
                    m.index.to_string()
                },
                hostname: m.hostname.clone(),
                start_offset_ms: h.start_offset_ms,
                duration_s: h.duration_s,
                inserts_per_s: h.inserts_per_s,
                deletes_per_s: h.deletes_per_s,
                queries_per_s: h.queries_per_s,
                client_cpu_us_per_op: h.client_cpu_us_per_op,
                host_cpu_us_per_op: h.host_cpu_us_per_op,
                status: h.status.clone(),
            })
        })
        .collect()
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"))
}

/// The report's section: a row per step, configuration, run and host.
pub fn report_section(r: &Report) -> Option<Section> {
    let mut rows = Vec::new();
    for step in &r.step_reports {
        for (g, gs) in r.groups.iter().zip(&step.groups) {
            for p in &gs.measured.hosts {
                rows.push(
                    [
                        step.name.clone(),
                        g.name.clone(),
                        p.run_id.clone(),
                        p.host.clone(),
                        p.hostname.clone(),
                        format!("{:.1}", p.start_offset_ms),
                        seconds(p.duration_s),
                        rate(p.inserts_per_s),
                        rate(p.deletes_per_s),
                        rate(p.queries_per_s),
                        opt(p.client_cpu_us_per_op),
                        opt(p.host_cpu_us_per_op),
                        p.status.clone(),
                    ]
                    .map(Cell::plain)
                    .to_vec(),
                );
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    let header = [
        "step",
        "config",
        "run",
        "host",
        "name",
        "start ms",
        "time",
        crate::report::figures::header("inserts_per_s"),
        crate::report::figures::header("deletes_per_s"),
        crate::report::figures::header("queries_per_s"),
        "client us",
        "host us",
        "status",
    ];
    Some(Section {
        id: "client-hosts".to_string(),
        title: "Client hosts".to_string(),
        note: "Runs made by a group of client hosts (ibench run --group): each host's part of \
               each step. The step's rates elsewhere are the hosts' sums, its response times \
               their merged histograms. start ms: when the host started the step after the \
               first host did (the store's clock); client/host us: CPU per op on that host."
            .to_string(),
        tables: vec![ViewTable {
            title: "each host's part of each step".to_string(),
            header: header.map(String::from).to_vec(),
            rows,
        }],
    })
}

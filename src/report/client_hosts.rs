//! The per-host breakdown of a run made by a group of client hosts (`ibench run --group`) in
//! the reports: per step, what each host ran and measured (the terminal's is in `group.rs`).

use serde::Serialize;

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

//! One run out of the parts a group's hosts wrote: the run's own fields and its hosts' records
//! here, each step in `step.rs` (counts and rates summed, HDR histograms merged, never
//! percentiles averaged, per-second series added second by second after aligning each host's
//! step start on the store's clock, the SLA judged on the group's total writer rate) and its
//! cost in `cost.rs` (the client's summed over hosts, the server's taken once). See
//! docs/multihost.md.

mod cost;
mod part;
mod step;

use std::collections::BTreeSet;

use anyhow::Result;
use chrono::{DateTime, Utc};

use part::{Part, host_of, on_store_clock};

use super::{GroupOutcome, status_name};
use crate::request::WorkloadSpec;
use crate::results::group::{GroupHost, GroupInfo, HostStep};
use crate::results::model::{Maintenance, RunResult, RunStatus, StepResult};

/// Merges the `parts` of group `name` (of `hosts` hosts, of every attempt) into one run whose
/// id is the group's name, with the group's `outcome`. Each step comes from the last attempt
/// that ran it. A step some host of that attempt did not finish is kept, failed, naming the
/// hosts missing from it; so is the step the group failed in, and any later one.
pub fn merge_group(
    name: &str,
    hosts: usize,
    parts: &[RunResult],
    outcome: &GroupOutcome,
) -> Result<RunResult> {
    let mut parts: Vec<&RunResult> = parts.iter().filter(|p| host_of(p).is_some()).collect();
    parts.sort_by_key(|p| host_of(p).map(|h| (h.attempt, h.index)));
    let Some(first) = parts.first() else {
        anyhow::bail!("group {name} has no parts yet");
    };
    let mut members: Vec<GroupHost> = parts.iter().filter_map(|p| host_of(p).cloned()).collect();
    let (mut steps, sources): (Vec<StepResult>, Vec<usize>) =
        merge_steps(&parts, hosts, &mut members).into_iter().unzip();
    if let Some(failed) = outcome.failed_step {
        for step in steps.iter_mut().skip(failed) {
            fail_with_group(step, outcome);
        }
    }
    for (member, run) in members.iter_mut().zip(&parts) {
        member.status = status_name(run.status);
    }
    let mut merged = (*first).clone();
    merged.run_id = name.to_string();
    merged.status = outcome.status;
    merged.error = outcome.error.clone();
    set_run_fields(&mut merged, hosts, &parts, &members);
    let sourced: Vec<(&str, usize)> = steps.iter().map(|s| s.name.as_str()).zip(sources).collect();
    merged.maintenance = maintenance(&parts, &sourced);
    merged.steps = steps;
    merged.group = Some(GroupInfo {
        name: name.to_string(),
        hosts,
        members,
    });
    Ok(merged)
}

/// Every step some part has, merged over the parts of the last attempt that ran it, with
/// that attempt; each host's own figures of it added to its record in `members`.
fn merge_steps(
    parts: &[&RunResult],
    hosts: usize,
    members: &mut [GroupHost],
) -> Vec<(StepResult, usize)> {
    let mut steps = Vec::new();
    for i in 0.. {
        let at_i = || parts.iter().filter_map(|run| Part::at(run, i));
        let Some(attempt) = at_i().map(|p| p.host.attempt).max() else {
            break;
        };
        let present: Vec<Part> = at_i().filter(|p| p.host.attempt == attempt).collect();
        let mut step = step::merge_step(&present);
        fail_if_missing(&mut step, &present, hosts, members);
        let group_start = present.iter().map(|p| p.start).min();
        for part in &present {
            let member = members
                .iter_mut()
                .find(|m| (m.attempt, m.index) == (attempt, part.host.index))
                .expect("every present part has a member");
            member.steps.push(host_step(part, group_start));
        }
        steps.push((step, attempt));
    }
    steps
}

/// Fails `step` when some host of the attempt it comes from has no part of it, naming the
/// hosts missing.
fn fail_if_missing(step: &mut StepResult, present: &[Part], hosts: usize, members: &[GroupHost]) {
    let attempt = present.first().map_or(0, |p| p.host.attempt);
    let missing: Vec<String> = (0..hosts)
        .filter(|h| !present.iter().any(|p| p.host.index == *h))
        .map(|h| {
            match members
                .iter()
                .find(|m| (m.attempt, m.index) == (attempt, h))
            {
                Some(m) => format!("host {h} ({}, pid {})", m.hostname, m.pid),
                None => format!("host {h}"),
            }
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    step.status = RunStatus::Failed;
    if let Some(sla) = step.sla.as_mut() {
        sla.pass = false;
    }
    step.error = Some(format!(
        "{} did not finish step {}{}",
        missing.join(", "),
        step.name,
        step.error
            .as_ref()
            .map(|e| format!("; {e}"))
            .unwrap_or_default()
    ));
}

/// Fails `step`, when every host completed it, with the group's failure: the group failed
/// in it or before it (a host completed it only after the others gave up on it).
fn fail_with_group(step: &mut StepResult, outcome: &GroupOutcome) {
    if step.status != RunStatus::Complete {
        return;
    }
    step.status = RunStatus::Failed;
    if let Some(sla) = step.sla.as_mut() {
        sla.pass = false;
    }
    step.error = Some(match &outcome.error {
        Some(e) => format!("the group failed: {e}"),
        None => "the group failed".to_string(),
    });
}

/// The merged run's own fields out of its `parts`: when it ran (on the store's clock, from
/// the first attempt's start), its clients and price (the last attempt's hosts'), its hosts.
fn set_run_fields(
    merged: &mut RunResult,
    hosts: usize,
    parts: &[&RunResult],
    members: &[GroupHost],
) {
    merged.started_at = parts
        .iter()
        .filter_map(|p| Some(on_store_clock(p.started_at, host_of(p)?)))
        .min()
        .unwrap_or(merged.started_at);
    merged.finished_at = parts
        .iter()
        .filter_map(|p| Some(on_store_clock(p.finished_at?, host_of(p)?)))
        .max()
        .filter(|_| merged.status != RunStatus::Running);
    let last = parts
        .iter()
        .filter_map(|p| host_of(p))
        .map(|h| h.attempt)
        .max();
    let current: Vec<&RunResult> = parts
        .iter()
        .copied()
        .filter(|p| host_of(p).map(|h| h.attempt) == last)
        .collect();
    if let WorkloadSpec::InsertBenchmark(w) = &mut merged.config.workload {
        w.clients = current
            .iter()
            .map(|p| host_of(p).map_or(0, |h| h.clients))
            .sum::<usize>()
            .max(w.clients);
    }
    let prices: Vec<f64> = current
        .iter()
        .filter_map(|p| p.environment.cost_per_hour)
        .collect();
    merged.environment.cost_per_hour =
        (prices.len() == current.len()).then(|| prices.iter().sum::<f64>());
    let names: BTreeSet<&str> = members.iter().map(|m| m.hostname.as_str()).collect();
    merged.environment.hostname = format!(
        "{hosts} hosts ({})",
        names.into_iter().collect::<Vec<_>>().join(", ")
    );
}

/// The maintenance pauses host 0 of each attempt ran (it runs the pause for every table),
/// but those before a step a later attempt ran again (`sourced`: each merged step's name and
/// the attempt it comes from).
fn maintenance(parts: &[&RunResult], sourced: &[(&str, usize)]) -> Vec<Maintenance> {
    let mut pauses = Vec::new();
    for p in parts {
        let Some(host) = host_of(p).filter(|h| h.index == 0) else {
            continue;
        };
        let rerun = |m: &Maintenance| {
            sourced
                .iter()
                .any(|&(name, attempt)| name == m.before_step && attempt > host.attempt)
        };
        pauses.extend(p.maintenance.iter().filter(|m| !rerun(m)).cloned());
    }
    pauses
}

/// One host's own figures of a step; `group_start`: when the group's first host started it.
fn host_step(part: &Part, group_start: Option<DateTime<Utc>>) -> HostStep {
    let s = part.step;
    let per_op = s.efficiency.as_ref().and_then(|e| e.per_op.as_ref());
    HostStep {
        name: s.name.clone(),
        status: status_name(s.status),
        start_offset_ms: group_start
            .map(|g| (part.start - g).num_microseconds().unwrap_or(0) as f64 / 1e3)
            .unwrap_or(0.0),
        duration_s: s.duration_s,
        rows_inserted: s.rows_inserted,
        rows_deleted: s.rows_deleted,
        queries: s.queries,
        inserts_per_s: s.inserts_per_s,
        deletes_per_s: s.deletes_per_s,
        queries_per_s: s.queries_per_s,
        client_cpu_us_per_op: per_op.map(|p| p.client_cpu_us),
        host_cpu_us_per_op: per_op.map(|p| p.host_cpu_us),
    }
}

//! One run out of the parts a group's hosts wrote (`ibench run --group`): counts and rates
//! summed, HDR histograms merged (never percentiles averaged), per-second series added second
//! by second after aligning each host's step start on the store's clock, the SLA judged on the
//! group's total writer rate, the client's cost summed over hosts. See docs/multihost.md.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use chrono::{DateTime, Duration as ChronoDuration, Utc};

use crate::metrics::histogram::new_histogram;
use crate::metrics::histogram::{self, BUCKET_LABELS, Percentiles};
use crate::metrics::series::{add_series, rate_percentiles};
use crate::metrics::summary::{SLA_MIN_RATIO, SlaTarget, sla_of};
use crate::results::group::{self, GroupHost, GroupInfo, HostStep};
use crate::results::model::{
    ClientSeconds, Efficiency, IndexBuild, IndexScan, OpResult, PerOp, PerSecond, ProcDelta,
    QueueCheck, RunResult, RunStatus, SelectMin, SeriesSet, Sla, StepResult,
};
use crate::spec::WorkloadSpec;

/// A part's step as the merge sees it.
struct Part<'a> {
    host: &'a GroupHost,
    run: &'a RunResult,
    step: &'a StepResult,
    /// Its start on the store's clock.
    start: DateTime<Utc>,
}

/// The host record a part carries (its own, the only member of its group).
fn host_of(run: &RunResult) -> Option<&GroupHost> {
    run.group.as_ref()?.members.first()
}

fn on_store_clock(t: DateTime<Utc>, host: &GroupHost) -> DateTime<Utc> {
    t + ChronoDuration::microseconds(host.clock_offset_us)
}

/// Merges the `parts` of group `name` (of `hosts` hosts) into one run whose id is the
/// group's name. `status`/`error`: the group's outcome. A step some host did not finish is
/// kept, failed, naming the hosts missing from it.
pub fn merge_group(
    name: &str,
    hosts: usize,
    parts: &[RunResult],
    status: RunStatus,
    error: Option<String>,
) -> Result<RunResult> {
    let mut parts: Vec<&RunResult> = parts.iter().filter(|p| host_of(p).is_some()).collect();
    parts.sort_by_key(|p| host_of(p).map(|h| h.index));
    let Some(first) = parts.first() else {
        anyhow::bail!("group {name} has no parts yet");
    };
    let mut members: Vec<GroupHost> = parts.iter().filter_map(|p| host_of(p).cloned()).collect();
    let step_count = parts.iter().map(|p| p.steps.len()).max().unwrap_or(0);
    let mut steps = Vec::new();
    for i in 0..step_count {
        let present: Vec<Part> = parts
            .iter()
            .filter_map(|run| {
                let step = run.steps.get(i)?;
                let host = host_of(run)?;
                Some(Part {
                    host,
                    run,
                    step,
                    start: on_store_clock(step.started_at, host),
                })
            })
            .collect();
        let mut step = merge_step(&present);
        let missing: Vec<String> = (0..hosts)
            .filter(|h| !present.iter().any(|p| p.host.index == *h))
            .map(|h| match members.iter().find(|m| m.index == h) {
                Some(m) => format!("host {h} ({}, pid {})", m.hostname, m.pid),
                None => format!("host {h}"),
            })
            .collect();
        if !missing.is_empty() {
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
        let group_start = present.iter().map(|p| p.start).min();
        for part in &present {
            let member = members
                .iter_mut()
                .find(|m| m.index == part.host.index)
                .expect("every present part has a member");
            member.steps.push(host_step(part, group_start));
        }
        steps.push(step);
    }
    for (member, run) in members.iter_mut().zip(&parts) {
        member.status = group::status_name(run.status);
    }
    let mut merged = (*first).clone();
    merged.run_id = name.to_string();
    merged.status = status;
    merged.error = error;
    merged.started_at = parts
        .iter()
        .map(|p| on_store_clock(p.started_at, host_of(p).expect("filtered")))
        .min()
        .unwrap_or(first.started_at);
    merged.finished_at = parts
        .iter()
        .filter_map(|p| Some(on_store_clock(p.finished_at?, host_of(p)?)))
        .max()
        .filter(|_| status != RunStatus::Running);
    if let WorkloadSpec::InsertBenchmark(w) = &mut merged.config.workload {
        w.clients = parts
            .iter()
            .map(|p| host_count(p))
            .sum::<usize>()
            .max(w.clients);
    }
    let prices: Vec<f64> = parts
        .iter()
        .filter_map(|p| p.environment.cost_per_hour)
        .collect();
    merged.environment.cost_per_hour =
        (prices.len() == parts.len()).then(|| prices.iter().sum::<f64>());
    merged.environment.hostname = format!("{} hosts ({})", hosts, {
        let names: BTreeSet<&str> = members.iter().map(|m| m.hostname.as_str()).collect();
        names.into_iter().collect::<Vec<_>>().join(", ")
    });
    merged.maintenance = parts
        .iter()
        .find(|p| host_of(p).is_some_and(|h| h.index == 0))
        .map(|p| p.maintenance.clone())
        .unwrap_or_default();
    merged.steps = steps;
    merged.group = Some(GroupInfo {
        name: name.to_string(),
        hosts,
        members,
    });
    Ok(merged)
}

fn host_count(run: &RunResult) -> usize {
    host_of(run).map_or(0, |h| h.clients)
}

fn host_step(part: &Part, group_start: Option<DateTime<Utc>>) -> HostStep {
    let s = part.step;
    let per_op = s.efficiency.as_ref().and_then(|e| e.per_op.as_ref());
    HostStep {
        name: s.name.clone(),
        status: group::status_name(s.status),
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

/// Merges one step of every host that has it.
fn merge_step(parts: &[Part]) -> StepResult {
    let base = parts[0].step;
    let start = parts
        .iter()
        .map(|p| p.start)
        .min()
        .unwrap_or(base.started_at);
    // Whole seconds each host's series lag the group's first start by.
    let shift =
        |p: &Part| ((p.start - start).num_milliseconds().max(0) as f64 / 1e3).round() as usize;
    let end_s = parts
        .iter()
        .map(|p| (p.start - start).num_microseconds().unwrap_or(0) as f64 / 1e6 + p.step.duration_s)
        .fold(0.0, f64::max);
    let sum = |f: fn(&StepResult) -> u64| parts.iter().map(|p| f(p.step)).sum::<u64>();
    let sumf = |f: fn(&StepResult) -> f64| parts.iter().map(|p| f(p.step)).sum::<f64>();
    let status = if parts.iter().any(|p| p.step.status == RunStatus::Failed) {
        RunStatus::Failed
    } else if parts
        .iter()
        .any(|p| p.step.status == RunStatus::Interrupted)
    {
        RunStatus::Interrupted
    } else {
        base.status
    };
    let errors: Vec<String> = parts
        .iter()
        .filter_map(|p| Some(format!("host {}: {}", p.host.index, p.step.error.as_ref()?)))
        .collect();
    let clients: usize = parts
        .iter()
        .map(|p| p.step.per_second.clients.len())
        .max()
        .unwrap_or(0);
    let mut per_second = PerSecond {
        total: SeriesSet::default(),
        clients: vec![SeriesSet::default(); clients],
        client_summaries: client_summaries(parts),
    };
    for p in parts {
        add_series(&mut per_second.total, &p.step.per_second.total, shift(p));
        for (c, set) in p.step.per_second.clients.iter().enumerate() {
            if !set.ops.is_empty() {
                add_series(&mut per_second.clients[c], set, shift(p));
            }
        }
    }
    let min_duration = parts
        .iter()
        .map(|p| p.step.duration_s)
        .fold(f64::INFINITY, f64::min);
    let full_seconds = (min_duration.max(0.0) as usize).min(
        per_second
            .total
            .ops
            .values()
            .map(|s| s.rows.len())
            .max()
            .unwrap_or(0),
    );
    let rate_pcts = per_second
        .total
        .ops
        .iter()
        .filter_map(|(op, s)| Some((op.clone(), rate_percentiles(&s.rows[..full_seconds])?)))
        .collect();
    let sla = merge_sla(parts, &per_second, full_seconds, status, &shift);
    let dbms_counters = parts
        .iter()
        .map(|p| &p.step.dbms_counters)
        .find(|c| !c.is_empty())
        .cloned()
        .unwrap_or_default();
    let rows_inserted = sum(|s| s.rows_inserted);
    let queries = sum(|s| s.queries);
    let mut retries = BTreeMap::new();
    for p in parts {
        for (k, v) in &p.step.retries {
            *retries.entry(k.clone()).or_insert(0) += v;
        }
    }
    let some_sum = |f: fn(&StepResult) -> Option<u64>| {
        let v: Vec<u64> = parts.iter().filter_map(|p| f(p.step)).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    StepResult {
        name: base.name.clone(),
        status,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        started_at: start,
        duration_s: end_s,
        clients: parts.iter().map(|p| p.step.clients).sum(),
        rows_inserted,
        rows_deleted: sum(|s| s.rows_deleted),
        queries,
        inserts_per_s: sumf(|s| s.inserts_per_s),
        deletes_per_s: sumf(|s| s.deletes_per_s),
        queries_per_s: sumf(|s| s.queries_per_s),
        ops: merge_ops(parts.iter().map(|p| &p.step.ops)),
        service_time: merge_ops(parts.iter().map(|p| &p.step.service_time)),
        per_second,
        rate_percentiles: rate_pcts,
        sla,
        select_min: merge_select_min(parts),
        index_build: merge_index_build(parts, end_s),
        scans: merge_scans(parts),
        point_query_misses: some_sum(|s| s.point_query_misses),
        point_query_raced: some_sum(|s| s.point_query_raced),
        retries,
        reconnects: sum(|s| s.reconnects),
        efficiency: merge_efficiency(parts, &dbms_counters, &shift),
        dbms_counters,
        queue_check: merge_queue_check(parts),
        // The server's own status, waits and profile are the whole server's, as each host
        // saw them: the first host's that has them (like the DBMS figures).
        engine_status: first_of(parts, |s| &s.engine_status),
        wait_events: first_of(parts, |s| &s.wait_events),
        profile: parts.iter().find_map(|p| p.step.profile.clone()),
        notes: parts
            .iter()
            .flat_map(|p| p.step.notes.iter().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    }
}

/// Every host's client summaries, by client number: client numbers do not overlap between
/// hosts, so each is kept as its host wrote it (over its host's full seconds). Their full
/// series, when kept, are added after the shift like the total's.
fn client_summaries(parts: &[Part]) -> Vec<ClientSeconds> {
    let mut all: Vec<ClientSeconds> = parts
        .iter()
        .flat_map(|p| p.step.per_second.client_summaries.iter().cloned())
        .collect();
    all.sort_by_key(|c| c.client);
    all
}

/// Histograms of every op type added exactly; per-client histograms kept (client numbers do
/// not overlap between hosts).
fn merge_ops<'a>(
    sets: impl Iterator<Item = &'a BTreeMap<String, OpResult>>,
) -> BTreeMap<String, OpResult> {
    let mut acc: BTreeMap<String, (hdrhistogram::Histogram<u64>, OpResult)> = BTreeMap::new();
    for set in sets {
        for (op, r) in set {
            let Ok(h) = histogram::decode(&r.histogram) else {
                continue;
            };
            let entry = acc.entry(op.clone()).or_insert_with(|| {
                let mut empty = r.clone();
                empty.count = 0;
                empty.rows = 0;
                empty.per_client.clear();
                (new_histogram(), empty)
            });
            entry
                .0
                .add(&h)
                .expect("auto-resizing histograms always add");
            entry.1.rows += r.rows;
            entry.1.per_client.extend(r.per_client.iter().cloned());
        }
    }
    acc.into_iter()
        .map(|(op, (h, mut r))| {
            r.per_client.sort_by_key(|c| c.client);
            let counts = histogram::bucket_counts(&h);
            let total = h.len().max(1) as f64;
            r.count = h.len();
            r.percentiles_us = Percentiles::of(&h);
            r.buckets_pct = counts.iter().map(|&c| 100.0 * c as f64 / total).collect();
            r.bucket_labels = BUCKET_LABELS.iter().map(|s| s.to_string()).collect();
            r.histogram = histogram::encode(&h);
            (op, r)
        })
        .collect()
}

/// The SLA on the group's total writer rate: targets and achieved rates summed; a second
/// meets it when the group inserted 95% of the rows all hosts' schedules had due in it.
fn merge_sla(
    parts: &[Part],
    per_second: &PerSecond,
    full_seconds: usize,
    status: RunStatus,
    shift: &dyn Fn(&Part) -> usize,
) -> Option<Sla> {
    let slas: Vec<(&Part, &Sla)> = parts
        .iter()
        .filter_map(|p| Some((p, p.step.sla.as_ref()?)))
        .collect();
    if slas.is_empty() {
        return None;
    }
    let target: f64 = slas.iter().map(|(_, s)| s.target_inserts_per_s).sum();
    let inserts_per_s: f64 = slas.iter().map(|(_, s)| s.inserts_per_s).sum();
    let schedules: Vec<(SlaTarget, usize)> = slas
        .iter()
        .map(|(p, s)| {
            let writers = p.step.clients.max(1) as u64;
            let batch = match &p.run.config.workload {
                WorkloadSpec::InsertBenchmark(w) => w.writer_batch as u64,
                WorkloadSpec::Micro(_) => 1,
            };
            let schedule = SlaTarget {
                rate_per_writer: (s.target_inserts_per_s / writers as f64).round() as u64,
                batch: batch.max(1),
                writers,
            };
            (schedule, shift(p))
        })
        .collect();
    let inserted = per_second.total.ops.get("insert");
    let met = (0..full_seconds)
        .filter(|&s| {
            let due: u64 = schedules
                .iter()
                .filter(|(_, lag)| s >= *lag)
                .map(|(t, lag)| t.rows_due_in_second((s - lag) as u64))
                .sum();
            let done = inserted.map_or(0, |series| series.rows.get(s).copied().unwrap_or(0));
            done as f64 >= SLA_MIN_RATIO * due as f64
        })
        .count();
    Some(sla_of(
        target,
        slas.iter().map(|(_, s)| s.missed_insert_batches).sum(),
        inserts_per_s,
        slas.iter().map(|(_, s)| s.deletes_per_s).sum(),
        (met, full_seconds),
        status,
    ))
}

fn merge_select_min(parts: &[Part]) -> Option<SelectMin> {
    let mut tables = BTreeMap::new();
    for p in parts {
        if let Some(s) = &p.step.select_min {
            tables.extend(s.tables.iter().map(|(k, v)| (k.clone(), *v)));
        }
    }
    let perf_context = parts
        .iter()
        .filter_map(|p| p.step.select_min.as_ref())
        .map(|s| &s.perf_context)
        .find(|m| !m.is_empty())
        .cloned()
        .unwrap_or_default();
    (!tables.is_empty()).then(|| SelectMin {
        max_us: tables.values().copied().max().unwrap_or(0),
        tables,
        perf_context,
    })
}

/// The first non-empty map among the parts' steps (a server-wide reading every host took).
fn first_of<V: Clone>(
    parts: &[Part],
    f: fn(&StepResult) -> &BTreeMap<String, V>,
) -> BTreeMap<String, V> {
    parts
        .iter()
        .map(|p| f(p.step))
        .find(|m| !m.is_empty())
        .cloned()
        .unwrap_or_default()
}

fn merge_index_build(parts: &[Part], seconds: f64) -> Option<IndexBuild> {
    let builds: Vec<&IndexBuild> = parts
        .iter()
        .filter_map(|p| p.step.index_build.as_ref())
        .collect();
    let first = builds.first()?;
    let rows = builds.iter().map(|b| b.rows).sum::<u64>();
    Some(IndexBuild {
        indexes: first.indexes.clone(),
        tables: builds.iter().map(|b| b.tables).sum(),
        rows,
        rows_per_s: if seconds > 0.0 {
            rows as f64 / seconds
        } else {
            0.0
        },
    })
}

fn merge_scans(parts: &[Part]) -> Vec<IndexScan> {
    let mut scans: Vec<IndexScan> = Vec::new();
    for p in parts {
        for (i, s) in p.step.scans.iter().enumerate() {
            match scans.get_mut(i) {
                Some(t) => {
                    t.rows += s.rows;
                    t.seconds = t.seconds.max(s.seconds);
                }
                None => scans.push(s.clone()),
            }
        }
    }
    for s in &mut scans {
        s.rows_per_s = if s.seconds > 0.0 {
            s.rows as f64 / s.seconds
        } else {
            0.0
        };
    }
    scans
}

fn merge_queue_check(parts: &[Part]) -> Option<QueueCheck> {
    let checks: Vec<&QueueCheck> = parts
        .iter()
        .filter_map(|p| p.step.queue_check.as_ref())
        .collect();
    if checks.is_empty() {
        return None;
    }
    Some(QueueCheck {
        rows_at_start: checks.iter().map(|c| c.rows_at_start).sum(),
        rows_expected: checks.iter().map(|c| c.rows_expected).sum(),
        rows_counted: checks.iter().map(|c| c.rows_counted).sum(),
        tables_with_gaps: checks
            .iter()
            .flat_map(|c| c.tables_with_gaps.clone())
            .collect(),
        ok: checks.iter().all(|c| c.ok),
    })
}

fn add_proc(a: &mut ProcDelta, b: &ProcDelta) {
    a.cpu_s += b.cpu_s;
    a.user_s += b.user_s;
    a.sys_s += b.sys_s;
    a.read_bytes += b.read_bytes;
    a.write_bytes += b.write_bytes;
    a.read_calls += b.read_calls;
    a.write_calls += b.write_calls;
    a.voluntary_cs += b.voluntary_cs;
    a.involuntary_cs += b.involuntary_cs;
    a.processes += b.processes;
}

/// The group's cost: ibench's own CPU summed over hosts, host CPU summed over distinct host
/// names (hosts sharing a machine count it once), the DBMS's and the device's figures from
/// the first host that measured them (they are the server's, not the clients'); per op over
/// the group's ops.
fn merge_efficiency(
    parts: &[Part],
    dbms_counters: &BTreeMap<String, f64>,
    shift: &dyn Fn(&Part) -> usize,
) -> Option<Efficiency> {
    let effs: Vec<(&Part, &Efficiency)> = parts
        .iter()
        .filter_map(|p| Some((p, p.step.efficiency.as_ref()?)))
        .collect();
    let (_, first) = effs.first()?;
    let mut e = (*first).clone();
    let source = effs
        .iter()
        .find(|(_, x)| x.dbms.is_some())
        .map(|(_, x)| *x)
        .unwrap_or(first);
    e.dbms = source.dbms.clone();
    e.dbms_source = source.dbms_source.clone();
    e.device = source.device.clone();
    e.peak = source.peak.clone();
    e.db_size = source.db_size.clone();
    e.per_second = source.per_second.clone();
    e.ops = effs.iter().map(|(_, x)| x.ops).sum();
    e.client = ProcDelta::default();
    e.host_cpu_s = 0.0;
    e.host_context_switches = 0;
    e.sampler_cpu_ms = 0.0;
    e.per_second.client_cpu_s.clear();
    e.per_second.host_cpu_s.clear();
    let mut machines = BTreeSet::new();
    for (p, x) in &effs {
        add_proc(&mut e.client, &x.client);
        e.sampler_cpu_ms += x.sampler_cpu_ms;
        e.peak.client_rss_bytes = e.peak.client_rss_bytes.max(x.peak.client_rss_bytes);
        add_at(
            &mut e.per_second.client_cpu_s,
            &x.per_second.client_cpu_s,
            shift(p),
        );
        if machines.insert(p.host.hostname.clone()) {
            e.host_cpu_s += x.host_cpu_s;
            e.host_context_switches += x.host_context_switches;
            add_at(
                &mut e.per_second.host_cpu_s,
                &x.per_second.host_cpu_s,
                shift(p),
            );
        }
    }
    let n = e.ops as f64;
    e.per_op = (e.ops > 0).then(|| {
        let base = source.per_op.clone().unwrap_or_default();
        let scale = |v: Option<f64>| v.map(|v| v * source.ops as f64 / n);
        PerOp {
            dbms_cpu_us: e.dbms.as_ref().map(|d| d.cpu_s * 1e6 / n),
            client_cpu_us: e.client.cpu_s * 1e6 / n,
            host_cpu_us: e.host_cpu_s * 1e6 / n,
            kb_read: scale(base.kb_read),
            kb_written: scale(base.kb_written),
            reads: scale(base.reads),
            writes: scale(base.writes),
            dbms_kb_read: scale(base.dbms_kb_read),
            dbms_kb_written: scale(base.dbms_kb_written),
            dbms_cs: scale(base.dbms_cs),
            host_cs: e.host_context_switches as f64 / n,
        }
    });
    e.counters_per_op = if e.ops > 0 {
        source
            .counters_per_op
            .keys()
            .filter_map(|k| Some((k.clone(), dbms_counters.get(k)? / n)))
            .collect()
    } else {
        BTreeMap::new()
    };
    Some(e)
}

fn add_at(into: &mut Vec<f64>, from: &[f64], shift: usize) {
    if into.len() < shift + from.len() {
        into.resize(shift + from.len(), 0.0);
    }
    for (i, v) in from.iter().enumerate() {
        into[shift + i] += v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_add_exactly() {
        let op = |values: &[u64], client: usize| {
            let mut h = new_histogram();
            for &v in values {
                h.record(v).unwrap();
            }
            let encoded = histogram::encode(&h);
            let mut set = BTreeMap::new();
            set.insert(
                "query".to_string(),
                OpResult {
                    count: h.len(),
                    rows: h.len(),
                    percentiles_us: Percentiles::of(&h),
                    buckets_pct: Vec::new(),
                    bucket_labels: Vec::new(),
                    histogram: encoded.clone(),
                    per_client: vec![crate::results::model::ClientHistogram {
                        client,
                        count: h.len(),
                        histogram: encoded,
                    }],
                },
            );
            set
        };
        // Host a: 99 fast ops; host b: 1 slow one. Averaging the hosts' p99 would give about
        // half a second; the merged histogram's p99 is the fast ops'.
        let a = op(&[100; 99], 0);
        let b = op(&[1_000_000], 1);
        let merged = merge_ops([&a, &b].into_iter());
        let q = &merged["query"];
        assert_eq!(q.count, 100);
        assert_eq!(q.rows, 100);
        assert!(q.percentiles_us.p99 < 200, "{:?}", q.percentiles_us);
        assert!(q.percentiles_us.max >= 999_000);
        assert_eq!(q.per_client.len(), 2);
        assert_eq!(histogram::decode(&q.histogram).unwrap().len(), 100);
    }
}

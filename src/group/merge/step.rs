//! One step merged out of the hosts that ran it: counts and rates summed, histograms added,
//! per-second series added after aligning each host's start on the store's clock, the SLA
//! judged on the group's total writer rate.

use std::collections::{BTreeMap, BTreeSet};

use super::cost::merge_efficiency;
use super::part::{Part, Timeline};
use crate::metrics::histogram::{self, BUCKET_LABELS, Percentiles, new_histogram};
use crate::metrics::series::{add_series, rate_percentiles};
use crate::metrics::summary::{SLA_MIN_RATIO, SlaTarget, sla_of};
use crate::request::WorkloadSpec;
use crate::results::model::{
    ClientSeconds, IndexBuild, IndexScan, OpResult, PerSecond, QueueCheck, RunStatus, SelectMin,
    SeriesSet, Sla, StepResult,
};

/// Merges one step of every host that has it.
pub(super) fn merge_step(parts: &[Part]) -> StepResult {
    let base = parts[0].step;
    let time = Timeline::of(parts);
    let sum = |f: fn(&StepResult) -> u64| parts.iter().map(|p| f(p.step)).sum::<u64>();
    let sumf = |f: fn(&StepResult) -> f64| parts.iter().map(|p| f(p.step)).sum::<f64>();
    let some_sum = |f: fn(&StepResult) -> Option<u64>| {
        let v: Vec<u64> = parts.iter().filter_map(|p| f(p.step)).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let (status, error) = merge_status(parts);
    let per_second = merge_series(parts, &time);
    let full_seconds = full_seconds(parts, &per_second);
    let rate_pcts = per_second
        .total
        .ops
        .iter()
        .filter_map(|(op, s)| Some((op.clone(), rate_percentiles(&s.rows[..full_seconds])?)))
        .collect();
    let sla = merge_sla(parts, &per_second, full_seconds, status, &time);
    // The DBMS's counters are the server's, as each host read them: the first host's.
    let dbms_counters = first_of(parts, |s| &s.dbms_counters);
    StepResult {
        name: base.name.clone(),
        status,
        error,
        started_at: time.start,
        duration_s: time.span_s,
        clients: parts.iter().map(|p| p.step.clients).sum(),
        rows_inserted: sum(|s| s.rows_inserted),
        rows_deleted: sum(|s| s.rows_deleted),
        queries: sum(|s| s.queries),
        inserts_per_s: sumf(|s| s.inserts_per_s),
        deletes_per_s: sumf(|s| s.deletes_per_s),
        queries_per_s: sumf(|s| s.queries_per_s),
        ops: merge_ops(parts.iter().map(|p| &p.step.ops)),
        service_time: merge_ops(parts.iter().map(|p| &p.step.service_time)),
        per_second,
        rate_percentiles: rate_pcts,
        sla,
        select_min: merge_select_min(parts),
        index_build: merge_index_build(parts, time.span_s),
        scans: merge_scans(parts),
        point_query_misses: some_sum(|s| s.point_query_misses),
        point_query_raced: some_sum(|s| s.point_query_raced),
        retries: merge_retries(parts),
        reconnects: sum(|s| s.reconnects),
        efficiency: merge_efficiency(parts, &dbms_counters, &time),
        dbms_counters,
        queue_check: merge_queue_check(parts),
        tpcc: None,
        replication: Vec::new(),
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
        warmup: merge_warmup(parts),
        cooldown_s: base.cooldown_s,
        // The cluster is the first host's (only a managed server has one).
        node_failures: base.node_failures.clone(),
        errors: base.errors.clone(),
    }
}

/// The hosts' warm-ups together: the longest, and their counts summed.
fn merge_warmup(parts: &[Part]) -> Option<crate::results::model::Warmup> {
    let mut out: Option<crate::results::model::Warmup> = None;
    for w in parts.iter().filter_map(|p| p.step.warmup.as_ref()) {
        let m = out.get_or_insert_with(Default::default);
        m.seconds = m.seconds.max(w.seconds);
        for (op, n) in &w.ops {
            *m.ops.entry(op.clone()).or_default() += n;
        }
        m.rows_inserted += w.rows_inserted;
        m.rows_deleted += w.rows_deleted;
    }
    out
}

/// The step's status over its hosts (failed when one failed, else interrupted when one was)
/// and their errors, each naming its host.
fn merge_status(parts: &[Part]) -> (RunStatus, Option<String>) {
    let status = if parts.iter().any(|p| p.step.status == RunStatus::Failed) {
        RunStatus::Failed
    } else if parts
        .iter()
        .any(|p| p.step.status == RunStatus::Interrupted)
    {
        RunStatus::Interrupted
    } else {
        parts[0].step.status
    };
    let errors: Vec<String> = parts
        .iter()
        .filter_map(|p| Some(format!("host {}: {}", p.host.index, p.step.error.as_ref()?)))
        .collect();
    (status, (!errors.is_empty()).then(|| errors.join("; ")))
}

/// The hosts' per-second series added second by second, each shifted by the whole seconds it
/// started after the first host; the clients' summaries kept as their hosts wrote them.
fn merge_series(parts: &[Part], time: &Timeline) -> PerSecond {
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
        add_series(
            &mut per_second.total,
            &p.step.per_second.total,
            time.shift(p),
        );
        for (c, set) in p.step.per_second.clients.iter().enumerate() {
            if !set.ops.is_empty() {
                add_series(&mut per_second.clients[c], set, time.shift(p));
            }
        }
    }
    per_second
}

/// The seconds of the merged series that every host ran in full: those of the shortest
/// host, at most as many as the series has.
fn full_seconds(parts: &[Part], per_second: &PerSecond) -> usize {
    let min_duration = parts
        .iter()
        .map(|p| p.step.duration_s)
        .fold(f64::INFINITY, f64::min);
    (min_duration.max(0.0) as usize).min(
        per_second
            .total
            .ops
            .values()
            .map(|s| s.rows.len())
            .max()
            .unwrap_or(0),
    )
}

/// Retries by op type, summed over the hosts.
fn merge_retries(parts: &[Part]) -> BTreeMap<String, u64> {
    let mut retries = BTreeMap::new();
    for p in parts {
        for (k, v) in &p.step.retries {
            *retries.entry(k.clone()).or_insert(0) += v;
        }
    }
    retries
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
    time: &Timeline,
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
                WorkloadSpec::Micro(_) | WorkloadSpec::Tpcc(_) => 1,
            };
            let schedule = SlaTarget {
                rate_per_writer: (s.target_inserts_per_s / writers as f64).round() as u64,
                batch: batch.max(1),
                writers,
            };
            (schedule, time.shift(p))
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
                    t.scanners.extend(s.scanners.iter().cloned());
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

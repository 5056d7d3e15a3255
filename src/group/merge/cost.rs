//! A step's cost merged over the hosts: ibench's own CPU summed, host CPU summed over distinct
//! machines, the server's figures (DBMS process, device, size) taken once.

use std::collections::{BTreeMap, BTreeSet};

use super::part::{Part, Timeline};
use crate::results::model::{Efficiency, PerOp, ProcDelta};

/// The group's cost: ibench's own CPU summed over hosts, host CPU summed over distinct host
/// names (hosts sharing a machine count it once), the DBMS's and the device's figures from
/// the first host that measured them (they are the server's, not the clients'); per op over
/// the group's ops.
pub(super) fn merge_efficiency(
    parts: &[Part],
    dbms_counters: &BTreeMap<String, f64>,
    time: &Timeline,
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
        ProcDelta::add(&mut e.client, &x.client);
        e.sampler_cpu_ms += x.sampler_cpu_ms;
        e.peak.client_rss_bytes = e.peak.client_rss_bytes.max(x.peak.client_rss_bytes);
        add_at(
            &mut e.per_second.client_cpu_s,
            &x.per_second.client_cpu_s,
            time.shift(p),
        );
        if machines.insert(p.host.hostname.clone()) {
            e.host_cpu_s += x.host_cpu_s;
            e.host_context_switches += x.host_context_switches;
            add_at(
                &mut e.per_second.host_cpu_s,
                &x.per_second.host_cpu_s,
                time.shift(p),
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

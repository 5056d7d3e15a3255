//! A step's cost: samples taken at the step start, once a second, and at the step end (by the
//! runner's coordinator thread, never by a client) turned into [`Efficiency`]. Formulas are
//! in docs/metrics.md.

use std::collections::BTreeMap;

use crate::metrics::proc::{ProcCounters, Sample, Watch};
use crate::results::model::{
    DbSize, DeviceDelta, Efficiency, EfficiencySeries, Peaks, PerOp, ProcDelta, ServerWork,
};

/// What the runner collected over one step.
#[derive(Clone, Debug, Default)]
pub struct StepCosts {
    /// Reading at the step start (when every client was ready).
    pub start: Sample,
    /// Readings at the end of each second of the step.
    pub seconds: Vec<Sample>,
    /// The DBMS's gauges ([`crate::dbms::Dbms::gauges`]) read with each of `seconds`.
    pub gauges: Vec<BTreeMap<String, f64>>,
    /// Reading at the step end.
    pub end: Sample,
    /// Whose figures the DBMS counters are.
    pub dbms_source: String,
    /// Device name, when the database is on a block device.
    pub device: Option<String>,
    /// Database size at step end as the DBMS reports it.
    pub dbms_size_bytes: Option<u64>,
    /// Database size at step end on disk (allocated blocks).
    pub disk_size_bytes: Option<u64>,
    /// Database files' logical size at step end.
    pub files_size_bytes: Option<u64>,
    /// Database size at step end on a btrfs that compresses (`metrics::compressed`).
    pub compressed_size_bytes: Option<u64>,
    /// DBMS counters at the start and the end.
    pub counters_start: BTreeMap<String, f64>,
    /// DBMS counters at the end.
    pub counters_end: BTreeMap<String, f64>,
    /// CPU the samples of /proc took on the coordinator thread.
    pub sampler_cpu: std::time::Duration,
    /// Names of the counters engineers read first (also reported per op).
    pub key_counters: Vec<String>,
    /// The engine's status report at the step end ([`crate::dbms::Dbms::engine_status`]).
    pub engine_status: BTreeMap<String, String>,
    /// Seconds spent in each wait event over the step ([`crate::dbms::Dbms::waits_end`]).
    pub wait_events: BTreeMap<String, f64>,
    /// `--profile`: the step's flame graph, relative to the results' directory.
    pub profile: Option<String>,
    /// The DBMS's own cgroup, when it has one.
    pub cgroup: Option<crate::metrics::cgroup::CgroupFiles>,
    /// The servers sampled one by one ([`Watch::server_names`]), in [`Sample::servers`]'
    /// order.
    pub server_names: Vec<String>,
}

impl StepCosts {
    /// A collection starting with `start`.
    pub fn new(watch: &Watch, start: Sample, dbms_source: String) -> Self {
        StepCosts {
            start,
            dbms_source,
            device: watch.device.clone(),
            cgroup: watch.cgroup.clone(),
            server_names: watch.server_names(),
            ..Default::default()
        }
    }

    /// The DBMS counters' differences over the step (numeric counters present at both ends).
    pub fn counter_deltas(&self) -> BTreeMap<String, f64> {
        self.counters_end
            .iter()
            .filter_map(|(k, end)| Some((k.clone(), end - self.counters_start.get(k)?)))
            .collect()
    }
}

fn proc_delta(a: &ProcCounters, b: &ProcCounters) -> ProcDelta {
    ProcDelta::of(b.work.since(&a.work), b.processes)
}

/// Context switches between two samples, summed over the threads alive at the second: their
/// growth, or their whole count for threads that started in between. Threads that exited in
/// between are not counted (Linux hands their counts to no one).
fn thread_switch_growth(
    start: &crate::metrics::proc::ThreadSwitches,
    end: &crate::metrics::proc::ThreadSwitches,
) -> (u64, u64) {
    end.iter().fold((0, 0), |(v, iv), (tid, (ev, eiv))| {
        let (sv, siv) = start.get(tid).copied().unwrap_or((0, 0));
        (v + ev.saturating_sub(sv), iv + eiv.saturating_sub(siv))
    })
}

/// The step's cost, per op of type `per` (`insert` rows or `query`), `ops` of them.
pub fn efficiency(costs: &StepCosts, per: &str, ops: u64) -> Efficiency {
    let (a, b) = (&costs.start, &costs.end);
    let servers = servers(costs);
    let dbms = dbms_delta(a, b).map(|d| cluster_total(d, &servers));
    // IO of another user's server cannot be read: absent, not zero.
    let dbms_io_known =
        matches!((&a.dbms, &b.dbms), (Some(x), Some(y)) if x.io_known && y.io_known);
    let client = proc_delta(&a.client, &b.client);
    let host_cpu_s = (b.host.busy_s - a.host.busy_s).max(0.0);
    let host_cs = b
        .host
        .context_switches
        .saturating_sub(a.host.context_switches);
    let device = device_delta(costs);
    let per_op = (ops > 0).then(|| {
        let n = ops as f64;
        let dbms_io = dbms.as_ref().filter(|_| dbms_io_known);
        PerOp {
            dbms_cpu_us: dbms.as_ref().map(|d| d.cpu_s * 1e6 / n),
            client_cpu_us: client.cpu_s * 1e6 / n,
            host_cpu_us: host_cpu_s * 1e6 / n,
            kb_read: device.as_ref().map(|d| d.read_bytes as f64 / 1024.0 / n),
            kb_written: device.as_ref().map(|d| d.write_bytes as f64 / 1024.0 / n),
            reads: device.as_ref().map(|d| d.reads as f64 / n),
            writes: device.as_ref().map(|d| d.writes as f64 / n),
            dbms_kb_read: dbms_io.map(|d| d.work.read_bytes as f64 / 1024.0 / n),
            dbms_kb_written: dbms_io.map(|d| d.work.write_bytes as f64 / 1024.0 / n),
            dbms_cs: dbms
                .as_ref()
                .map(|d| (d.work.voluntary_cs + d.work.involuntary_cs) as f64 / n),
            host_cs: host_cs as f64 / n,
        }
    });
    Efficiency {
        per: per.to_string(),
        ops,
        dbms_source: costs.dbms_source.clone(),
        dbms,
        client,
        host_cpu_s,
        host_context_switches: host_cs,
        device,
        per_op,
        peak: peaks(costs),
        db_size: DbSize {
            dbms_bytes: costs.dbms_size_bytes,
            disk_bytes: costs.disk_size_bytes,
            files_bytes: costs.files_size_bytes,
            btrfs_bytes: costs.compressed_size_bytes,
        },
        per_second: per_second(costs),
        counters_per_op: if ops > 0 {
            let deltas = costs.counter_deltas();
            costs
                .key_counters
                .iter()
                .filter_map(|k| Some((k.clone(), deltas.get(k)? / ops as f64)))
                .collect()
        } else {
            BTreeMap::new()
        },
        sampler_cpu_ms: costs.sampler_cpu.as_secs_f64() * 1e3,
        samples: costs.seconds.len() + 2,
        cgroup: match (&costs.cgroup, &a.cgroup, &b.cgroup) {
            (Some(f), Some(x), Some(y)) => Some(f.step(x, y)),
            _ => None,
        },
        servers,
        interference: super::interference::between(a, b),
    }
}

/// The cluster's DBMS work `d` as the sum of each server's own growth, when `servers` were
/// sampled one by one: a node that died during the step reads as nothing at its end, which
/// would take its start's counters away from the others' growth. Context switches stay
/// counted thread by thread.
fn cluster_total(mut d: ProcDelta, servers: &[ServerWork]) -> ProcDelta {
    if servers.is_empty() {
        return d;
    }
    let (v, iv) = (d.work.voluntary_cs, d.work.involuntary_cs);
    d.work = Default::default();
    for w in servers {
        d.work.add(&w.work.work);
    }
    d.work.voluntary_cs = v;
    d.work.involuntary_cs = iv;
    d.cpu_s = d.work.cpu_s();
    d
}

/// Each server's work over the step, when every server was sampled at both ends.
fn servers(costs: &StepCosts) -> Vec<ServerWork> {
    let (a, b) = (&costs.start.servers, &costs.end.servers);
    if costs.server_names.is_empty() || a.len() != costs.server_names.len() || b.len() != a.len() {
        return Vec::new();
    }
    let samples = || {
        std::iter::once(&costs.start)
            .chain(&costs.seconds)
            .chain(std::iter::once(&costs.end))
    };
    (costs.server_names.iter().enumerate())
        .map(|(i, name)| ServerWork {
            name: name.clone(),
            work: proc_delta(&a[i], &b[i]),
            io_known: a[i].io_known && b[i].io_known,
            peak_rss_bytes: samples()
                .filter_map(|s| s.servers.get(i).map(|c| c.rss_bytes))
                .max()
                .unwrap_or(0),
        })
        .collect()
}

/// The DBMS processes' work between samples `a` and `b`, when both read them.
fn dbms_delta(a: &Sample, b: &Sample) -> Option<ProcDelta> {
    let (x, y) = (a.dbms.as_ref()?, b.dbms.as_ref()?);
    let mut d = proc_delta(x, y);
    if !b.dbms_threads.is_empty() {
        // Thread by thread: a thread that exited during the step would otherwise take its
        // whole lifetime count away from the total.
        let (v, iv) = thread_switch_growth(&a.dbms_threads, &b.dbms_threads);
        d.work.voluntary_cs = v;
        d.work.involuntary_cs = iv;
    }
    Some(d)
}

/// The device's work over the step, when the database is on one.
fn device_delta(costs: &StepCosts) -> Option<DeviceDelta> {
    let (name, x, y) = (
        costs.device.as_ref()?,
        costs.start.device.as_ref()?,
        costs.end.device.as_ref()?,
    );
    Some(DeviceDelta {
        name: name.clone(),
        reads: y.reads.saturating_sub(x.reads),
        writes: y.writes.saturating_sub(x.writes),
        read_bytes: y.read_bytes.saturating_sub(x.read_bytes),
        write_bytes: y.write_bytes.saturating_sub(x.write_bytes),
        io_ms: y.io_ms.saturating_sub(x.io_ms),
    })
}

/// The largest memory figures of any sample of the step.
fn peaks(costs: &StepCosts) -> Peaks {
    let all = || {
        std::iter::once(&costs.start)
            .chain(&costs.seconds)
            .chain(std::iter::once(&costs.end))
    };
    let peak_of = |f: fn(&ProcCounters) -> u64| all().filter_map(|s| s.dbms.as_ref().map(f)).max();
    Peaks {
        dbms_rss_bytes: peak_of(|c| c.rss_bytes),
        dbms_vsz_bytes: peak_of(|c| c.vsz_bytes),
        // Only samples whose PSS was read (and readable) count.
        dbms_pss_bytes: all()
            .filter_map(|s| s.dbms.as_ref().filter(|c| c.pss_known).map(|c| c.pss_bytes))
            .max(),
        client_rss_bytes: all().map(|s| s.client.rss_bytes).max().unwrap_or(0),
    }
}

/// The step's cost second by second: rates between consecutive samples, per second of the
/// real interval between them, and the gauges.
fn per_second(costs: &StepCosts) -> EfficiencySeries {
    let mut series = EfficiencySeries::default();
    let mut prev = &costs.start;
    for s in &costs.seconds {
        let dt =
            s.at.saturating_duration_since(prev.at)
                .as_secs_f64()
                .max(1e-3);
        let d = |f: fn(&Sample) -> Option<f64>| match (f(prev), f(s)) {
            (Some(x), Some(y)) => (y - x).max(0.0) / dt,
            _ => 0.0,
        };
        series.dbms_cpu_s.push(d(|x| x.dbms.map(|c| c.cpu_s())));
        series.client_cpu_s.push(d(|x| Some(x.client.cpu_s())));
        series.host_cpu_s.push(d(|x| Some(x.host.busy_s)));
        series
            .device_kb_read
            .push(d(|x| x.device.map(|c| c.read_bytes as f64 / 1024.0)));
        series
            .device_kb_written
            .push(d(|x| x.device.map(|c| c.write_bytes as f64 / 1024.0)));
        series
            .dbms_rss_bytes
            .push(s.dbms.map(|c| c.rss_bytes).unwrap_or(0));
        if let Some(i) = super::interference::between(prev, s) {
            series.others_cpu_cores.push(i.others_cpu_cores);
            series.steal_cores.push(i.steal_cores);
        }
        if let Some(c) = &s.cgroup {
            let cg = series.cgroup.get_or_insert_with(Default::default);
            cg.memory_bytes.push(c.usage.unwrap_or(0));
            cg.cache_bytes.push(c.cache.unwrap_or(0));
            cg.major_faults.push(d(|x| {
                x.cgroup.and_then(|c| c.major_faults).map(|v| v as f64)
            }));
            cg.limit_hits
                .push(d(|x| x.cgroup.and_then(|c| c.limit_hits).map(|v| v as f64)));
        }
        prev = s;
    }
    series.gauges = gauge_series(&costs.gauges);
    series
}

/// The gauges read once a second as one series per gauge; a gauge missing from a reading is
/// `None` for that second.
fn gauge_series(readings: &[BTreeMap<String, f64>]) -> BTreeMap<String, Vec<Option<f64>>> {
    let names: std::collections::BTreeSet<&String> =
        readings.iter().flat_map(|r| r.keys()).collect();
    names
        .into_iter()
        .map(|name| {
            let series = readings.iter().map(|r| r.get(name).copied()).collect();
            (name.clone(), series)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::proc::HostCounters;
    use crate::results::model::ProcWork;

    #[test]
    fn gauges_become_series_with_gaps() {
        let r = |pairs: &[(&str, f64)]| -> BTreeMap<String, f64> {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        let s = gauge_series(&[r(&[("a", 1.0), ("b", 5.0)]), r(&[]), r(&[("a", 3.0)])]);
        assert_eq!(s["a"], vec![Some(1.0), None, Some(3.0)]);
        assert_eq!(s["b"], vec![Some(5.0), None, None]);
        assert!(gauge_series(&[]).is_empty());
    }

    /// A sample `at_s` seconds after `t0`.
    fn sample(t0: std::time::Instant, at_s: f64, cpu: f64, rss: u64) -> Sample {
        Sample {
            at: t0 + std::time::Duration::from_secs_f64(at_s),
            dbms: Some(ProcCounters {
                work: ProcWork {
                    user_s: cpu,
                    voluntary_cs: (cpu * 100.0) as u64,
                    ..Default::default()
                },
                rss_bytes: rss,
                ..Default::default()
            }),
            client: ProcCounters {
                work: ProcWork {
                    sys_s: cpu / 2.0,
                    ..Default::default()
                },
                ..Default::default()
            },
            host: HostCounters {
                busy_s: cpu * 2.0,
                context_switches: 10,
                ..Default::default()
            },
            device: None,
            dbms_threads: Default::default(),
            cgroup: None,
            servers: vec![],
            ours: None,
        }
    }

    #[test]
    fn context_switches_grow_per_thread() {
        let start = [(1, (10, 1)), (2, (500, 50))].into_iter().collect();
        // Thread 2 exited; thread 3 started.
        let end = [(1, (15, 2)), (3, (7, 0))].into_iter().collect();
        assert_eq!(thread_switch_growth(&start, &end), (5 + 7, 1));
    }

    #[test]
    fn per_op_figures_divide_deltas_by_ops() {
        let t0 = std::time::Instant::now();
        let costs = StepCosts {
            start: sample(t0, 0.0, 1.0, 100),
            // Taken 2 s after the start: the series is per second of that interval.
            seconds: vec![sample(t0, 2.0, 2.0, 300)],
            end: sample(t0, 3.0, 3.0, 200),
            dbms_source: "test".into(),
            ..Default::default()
        };
        let e = efficiency(&costs, "insert", 1_000_000);
        let p = e.per_op.unwrap();
        assert!((p.dbms_cpu_us.unwrap() - 2.0).abs() < 1e-9); // 2 s over 1M ops
        assert!((p.client_cpu_us - 1.0).abs() < 1e-9);
        assert!((p.host_cpu_us - 4.0).abs() < 1e-9);
        assert!(p.kb_written.is_none(), "no device, no device figures");
        assert_eq!(e.peak.dbms_rss_bytes, Some(300));
        assert_eq!(e.per_second.dbms_cpu_s, vec![0.5]);
        assert!(efficiency(&costs, "insert", 0).per_op.is_none());
    }

    #[test]
    fn each_server_s_work_is_its_own_delta_and_peak() {
        let t0 = std::time::Instant::now();
        let server = |cpu: f64, rss: u64| ProcCounters {
            work: ProcWork {
                user_s: cpu,
                write_bytes: (cpu * 1000.0) as u64,
                ..Default::default()
            },
            rss_bytes: rss,
            io_known: true,
            ..Default::default()
        };
        let with = |at: f64, servers: Vec<ProcCounters>| Sample {
            servers,
            ..sample(t0, at, at, 0)
        };
        let mut costs = StepCosts {
            start: with(0.0, vec![server(1.0, 10), server(5.0, 50)]),
            seconds: vec![with(1.0, vec![server(2.0, 90), server(5.5, 40)])],
            // r1 gone at the end: its counters read as zeros, its delta as none.
            end: with(2.0, vec![server(4.0, 20), ProcCounters::default()]),
            server_names: vec!["primary".into(), "r1".into()],
            ..Default::default()
        };
        let e = efficiency(&costs, "insert", 10);
        assert_eq!(e.servers.len(), 2);
        let (p, r) = (&e.servers[0], &e.servers[1]);
        assert_eq!((p.name.as_str(), r.name.as_str()), ("primary", "r1"));
        assert!((p.work.cpu_s - 3.0).abs() < 1e-9);
        assert_eq!(p.work.work.write_bytes, 3000);
        assert_eq!(p.peak_rss_bytes, 90);
        assert!(p.io_known && !r.io_known);
        assert_eq!(r.work.cpu_s, 0.0);
        assert_eq!(r.peak_rss_bytes, 50);
        // The cluster's total is their sum, not the difference of the totals.
        let total = e.dbms.as_ref().unwrap();
        assert!((total.cpu_s - 3.0).abs() < 1e-9, "{total:?}");
        // A sample that missed a server leaves the per-server figures out, not wrong.
        costs.end.servers.pop();
        assert!(efficiency(&costs, "insert", 10).servers.is_empty());
    }
}

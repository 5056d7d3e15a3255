//! The report over a set of runs: runs grouped by configuration (label), repeats aggregated
//! (median, with min and max), every figure also relative to a base group. HTML, Markdown and
//! JSON are renderings of this one model (see docs/reports.md).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::metrics::histogram::{BUCKET_LABELS, Percentiles};
use crate::report::figures::MIB;
pub use crate::report::figures::{Better, EFFICIENCY, MICRO, MetricDef, THROUGHPUT};
pub use crate::report::select::Group;
pub use crate::report::settings::Difference;
use crate::report::settings::differences;
use crate::results::model::{RunResult, RunStatus};

/// Ratios below this are marked as a drop relative to the base.
pub const LOW_RATIO: f64 = 0.95;
/// Ratios above this are marked as a rise relative to the base.
pub const HIGH_RATIO: f64 = 1.05;

/// Median, min and max of one figure over a group's runs, and the median relative to the
/// base group's median.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stat {
    /// Median over the runs that have the figure.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Runs that have the figure.
    pub n: usize,
    /// `median / base median`; `None` for the base itself or when the base lacks the figure.
    pub relative: Option<f64>,
    /// Whether the runs support a change of the relative value (`marks.rs`: the test of
    /// `ibench compare`); set with `relative`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged: Option<crate::report::marks::Judged>,
}

impl Stat {
    /// Aggregates `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Stat {
            median,
            min: v[0],
            max: v[n - 1],
            n,
            relative: None,
            judged: None,
        })
    }
}

/// How a relative value compares with the thresholds.
pub fn mark(relative: f64, better: Better) -> &'static str {
    let (low, high) = match better {
        Better::Higher => ("worse", "better"),
        Better::Lower => ("better", "worse"),
    };
    if relative < LOW_RATIO {
        low
    } else if relative > HIGH_RATIO {
        high
    } else {
        ""
    }
}

/// One run as the report lists it.
#[derive(Clone, Debug, Serialize)]
pub struct RunRef {
    /// Run id.
    pub id: String,
    /// Start time.
    pub started_at: DateTime<Utc>,
    /// Run status.
    pub status: RunStatus,
}

/// A configuration compared: its runs and how its settings differ from the base.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigInfo {
    /// Label (or run id).
    pub name: String,
    /// Whether this is the base.
    pub is_base: bool,
    /// DBMS and version.
    pub dbms: String,
    /// The DBMS's name (`postgres`).
    pub dbms_name: String,
    /// Its version as numbers (`13.23`; empty when it reports none): the columns of a
    /// versions study (`report/versions.rs`).
    pub version: String,
    /// Where the DBMS ran (path or URL without password).
    pub location: String,
    /// Clients.
    pub clients: usize,
    /// The DBMS ran inside ibench (SQLite, RocksDB): its CPU and the client's are one
    /// process's, one figure.
    pub embedded: bool,
    /// Allocator preloaded into a managed server, if any.
    pub malloc: Option<String>,
    /// Where the data was stored: `ext4 on /dev/loop3 (rw,relatime)`, when recorded.
    pub storage: Option<String>,
    /// The connection pooler its clients went through: `pgbouncer 1.18.0, transaction, pool
    /// 4, plain SQL`, when there was one.
    pub pooler: Option<String>,
    /// The DBMS's resource conditions (`memory limit 96.0M, io limit wbps=...`), when the
    /// runs had any (docs/studies.md: IO-bound on any host).
    pub conditions: Option<String>,
    /// The host(s) its runs ran on.
    pub host: String,
    /// Price of the host per hour (the runs' median; each run's own, else its host's in the
    /// store), when known: the cost section (`report/cost.rs`).
    pub cost_per_hour: Option<f64>,
    /// The runs aggregated.
    pub runs: Vec<RunRef>,
    /// Settings and options that differ from the base: `(key, base value, this value)`.
    pub differences: Vec<Difference>,
    /// Database size / DBMS cache size at the end of the load, over the runs that recorded
    /// it (experiment runs; docs/experiments.md).
    pub db_cache_ratio: Option<Stat>,
}

/// The machine(s) the runs ran on.
#[derive(Clone, Debug, Serialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// CPU model and logical CPUs.
    pub cpu: String,
    /// Memory, GiB.
    pub memory_gib: f64,
    /// OS and kernel.
    pub os: String,
    /// ibench version.
    pub ibench_version: String,
}

/// Background-writer SLA of a query step, aggregated.
#[derive(Clone, Debug, Serialize)]
pub struct SlaAgg {
    /// Target insert rate, rows/s.
    pub target: f64,
    /// Achieved insert rate, rows/s.
    pub inserts_per_s: Stat,
    /// Share of full seconds that met 95% of the rows due, percent.
    pub seconds_met_pct: Stat,
    /// Runs that passed.
    pub passed: usize,
    /// Runs with the SLA.
    pub runs: usize,
}

/// Response time of one op type, all of a group's runs merged.
#[derive(Clone, Debug, Serialize)]
pub struct OpAgg {
    /// Ops.
    pub count: u64,
    /// Percentiles of the merged histogram, microseconds.
    pub percentiles_us: Percentiles,
    /// Its 95th percentile, microseconds.
    pub p95_us: u64,
    /// Share of ops per classic bucket, percent (labels in [`Report::bucket_labels`]).
    pub buckets_pct: Vec<f64>,
    /// Points of the percentile curve: `(quantile, microseconds)`.
    #[serde(skip)]
    pub curve: Vec<(f64, f64)>,
}

/// One group's figures for one step.
#[derive(Clone, Debug, Serialize)]
pub struct GroupStep {
    /// Group name.
    pub group: String,
    /// Statuses of the step in the group's runs other than `complete` (e.g. `failed`).
    pub incomplete: Vec<String>,
    /// Throughput figures by key.
    pub throughput: BTreeMap<String, Stat>,
    /// Cost figures by key.
    pub efficiency: BTreeMap<String, Stat>,
    /// Microbenchmark figures by key ([`MICRO`]), for steps of micro runs.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub micro: BTreeMap<String, Stat>,
    /// Writer SLA of query steps.
    pub sla: Option<SlaAgg>,
    /// `select min(transactionid)` at step start, slowest table, microseconds.
    pub select_min_us: Option<Stat>,
    /// Response time per op type.
    pub ops: BTreeMap<String, OpAgg>,
    /// The DBMS counters engineers read first (the step's `efficiency.counters_per_op`
    /// names), totals over the step (RocksDB's stall counts, SQLite's checkpoints...).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, Stat>,
    /// Seconds spent in each wait event over the step (`steps[].wait_events`; 0 in a run
    /// that recorded waits but not this one).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub waits: BTreeMap<String, Stat>,
    /// The group's runs in which the step was not steady or too short to compare
    /// (`report/steady.rs`): a relative value of a flagged step is not marked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<crate::report::steady::StepFlag>,
    /// Each server of a cluster (`primary`, `r1`, `n2`) and its figures over the step
    /// (`report/replication.rs`); empty for single servers.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, BTreeMap<String, Stat>>,
    /// What ran before the step's measured part and is in none of its figures: the warm-up
    /// and the pause before the step (`--warmup`, `--cooldown`), medians over the group's
    /// runs; absent when none had either.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing: Option<crate::report::pacing::Pacing>,
    /// The replicas or Galera nodes that died during the step in the group's runs: (run,
    /// the line said of the death and what it did to the step).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node_failures: Vec<(String, String)>,
    /// What the runs measured beyond these figures, run by run (`report/measured.rs`).
    #[serde(skip_serializing_if = "crate::report::measured::Measured::is_empty")]
    pub measured: crate::report::measured::Measured,
}

/// One step across the groups.
#[derive(Clone, Debug, Serialize)]
pub struct StepReport {
    /// Step name.
    pub name: String,
    /// Per group, in the report's group order.
    pub groups: Vec<GroupStep>,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// When the report was made.
    pub generated_at: DateTime<Utc>,
    /// The base group's name.
    pub base: String,
    /// The configurations compared, base first.
    pub groups: Vec<ConfigInfo>,
    /// The hosts the runs ran on (one entry per distinct host).
    pub hosts: Vec<HostInfo>,
    /// Steps present in every run, in run order.
    pub steps: Vec<String>,
    /// Steps left out because not every run has them: `step -> groups that have it`.
    pub left_out: BTreeMap<String, Vec<String>>,
    /// Labels of `OpAgg::buckets_pct`.
    pub bucket_labels: Vec<String>,
    /// Per configuration but the base: its cells by mark and its largest supported changes
    /// (`marks.rs`), what the report shows first.
    pub headline: Vec<crate::report::marks::Headline>,
    /// Figures per step.
    pub step_reports: Vec<StepReport>,
    /// Per configuration, what its verdict needs beyond the steps' figures (`verdict.rs`).
    pub verdicts: Vec<crate::report::verdict::ConfigVerdict>,
    /// Per step, its per-second series on one time axis: the HTML report's interactive
    /// charts (`timeline.rs`); not in the JSON report (the runs' documents have them).
    #[serde(skip)]
    pub timelines: Vec<crate::report::timeline::StepTimeline>,
}

fn group_info(base: &Group, group: &Group) -> ConfigInfo {
    let first = &group.runs[0];
    ConfigInfo {
        name: group.name.clone(),
        is_base: std::ptr::eq(base, group),
        dbms: format!(
            "{} {}",
            first.environment.dbms.name, first.environment.dbms.version
        ),
        dbms_name: first.environment.dbms.name.clone(),
        version: crate::report::names::short_version(&first.environment.dbms.version),
        location: first.environment.dbms.location.clone(),
        clients: first.config.workload.max_clients(),
        embedded: first.target().kind.embedded(),
        malloc: first.managed_server.as_ref().map(|m| {
            // The library's file name (libjemalloc.so.2), not its directory.
            m.preload
                .as_deref()
                .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
                .unwrap_or_else(|| "glibc".to_string())
        }),
        storage: first
            .environment
            .storage
            .as_ref()
            .map(|s| format!("{} on {} ({})", s.fs_type, s.source, s.mount_options)),
        conditions: crate::report::resources::conditions(&first.config.resources),
        pooler: first
            .managed_server
            .as_ref()
            .and_then(|m| m.pooler.as_ref())
            .map(|p| {
                let plain = if p.statements.starts_with("plain SQL") {
                    ", plain SQL"
                } else {
                    ""
                };
                format!(
                    "{} {}, {}, pool {}{plain}",
                    p.kind, p.version, p.pool_mode, p.pool_size
                )
            }),
        host: {
            let mut hosts: Vec<&str> = group
                .runs
                .iter()
                .map(|r| r.environment.hostname.as_str())
                .collect();
            hosts.sort_unstable();
            hosts.dedup();
            hosts.join(", ")
        },
        cost_per_hour: Stat::of(
            &group
                .runs
                .iter()
                .filter_map(|r| r.environment.cost_per_hour)
                .collect::<Vec<_>>(),
        )
        .map(|s| s.median),
        runs: group
            .runs
            .iter()
            .map(|r| RunRef {
                id: r.run_id.clone(),
                started_at: r.started_at,
                status: r.status,
            })
            .collect(),
        differences: if std::ptr::eq(base, group) {
            Vec::new()
        } else {
            differences(base, group)
        },
        db_cache_ratio: Stat::of(
            &group
                .runs
                .iter()
                .filter_map(|r| Some(r.experiment.as_ref()?.cache.as_ref()?.ratio))
                .collect::<Vec<_>>(),
        ),
    }
}

fn hosts(groups: &[Group]) -> Vec<HostInfo> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in groups.iter().flat_map(|g| &g.runs) {
        let e = &r.environment;
        let h = HostInfo {
            hostname: e.hostname.clone(),
            cpu: format!("{} ({} logical CPUs)", e.cpu_model, e.cpu_cores),
            memory_gib: e.memory_bytes as f64 / (1024.0 * MIB),
            os: format!("{}, Linux {}", e.os, e.kernel),
            ibench_version: e.ibench_version.clone(),
        };
        if seen.insert((h.hostname.clone(), h.cpu.clone(), h.os.clone())) {
            out.push(h);
        }
    }
    out
}

/// Sets each figure's value relative to the base's, where the base's median is above the
/// figure's resolution (one unit of the last digit shown): a ratio to a base that shows as
/// `0.000` would be noise (`0.000 -> 0.012` is not "349 times").
fn set_relative(
    stats: &mut BTreeMap<String, Stat>,
    base: &BTreeMap<String, Stat>,
    defs: &[MetricDef],
) {
    for (k, s) in stats.iter_mut() {
        let resolution = defs
            .iter()
            .find(|d| d.key == k)
            .map_or(0.0, MetricDef::resolution);
        s.relative = base
            .get(k)
            .filter(|b| b.median > resolution && b.median > 0.0)
            .map(|b| s.median / b.median);
    }
}

/// Builds the report over `groups`; `groups[0]` is the base.
pub fn build(groups: &[Group]) -> Result<Report> {
    anyhow::ensure!(!groups.is_empty(), "no runs to report");
    let base = &groups[0];
    // Steps every run has, in the base's first run's order.
    let all_runs: Vec<&RunResult> = groups.iter().flat_map(|g| &g.runs).collect();
    let has = |r: &RunResult, step: &str| r.steps.iter().any(|s| s.name == step);
    let mut order: Vec<String> = Vec::new();
    for r in &all_runs {
        for s in &r.steps {
            if !order.contains(&s.name) {
                order.push(s.name.clone());
            }
        }
    }
    let (steps, left): (Vec<String>, Vec<String>) = order
        .into_iter()
        .partition(|step| all_runs.iter().all(|r| has(r, step)));
    let left_out = left
        .into_iter()
        .map(|step| {
            let with: Vec<String> = groups
                .iter()
                .filter(|g| g.runs.iter().any(|r| has(r, &step)))
                .map(|g| g.name.clone())
                .collect();
            (step, with)
        })
        .collect();
    let mut step_reports = Vec::new();
    for step in &steps {
        let mut per_group = groups
            .iter()
            .map(|g| crate::report::step_figures::group_step(g, step))
            .collect::<Result<Vec<_>>>()?;
        let (base_step, rest) = per_group.split_first_mut().expect("groups is not empty");
        for g in rest {
            set_relative(&mut g.throughput, &base_step.throughput, THROUGHPUT);
            set_relative(&mut g.efficiency, &base_step.efficiency, EFFICIENCY);
            set_relative(&mut g.micro, &base_step.micro, MICRO);
        }
        step_reports.push(StepReport {
            name: step.clone(),
            groups: per_group,
        });
    }
    crate::report::marks::judge_all(groups, &mut step_reports);
    let micro = crate::report::micro::are_micro(&steps);
    let names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
    let timelines = crate::report::timeline::build(groups, &step_reports);
    Ok(Report {
        headline: crate::report::marks::headlines(&names, &step_reports, micro),
        generated_at: Utc::now(),
        base: base.name.clone(),
        groups: groups.iter().map(|g| group_info(base, g)).collect(),
        hosts: hosts(groups),
        left_out,
        bucket_labels: BUCKET_LABELS.iter().map(|s| s.to_string()).collect(),
        step_reports,
        verdicts: crate::report::verdict::build(groups, &steps),
        timelines,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let s = Stat::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        let s = Stat::of(&[4.0, 1.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!(Stat::of(&[]).is_none());
    }

    #[test]
    fn marks_follow_the_better_direction() {
        assert_eq!(mark(0.9, Better::Higher), "worse");
        assert_eq!(mark(0.9, Better::Lower), "better");
        assert_eq!(mark(1.1, Better::Higher), "better");
        assert_eq!(mark(1.1, Better::Lower), "worse");
        assert_eq!(mark(1.0, Better::Lower), "");
        assert_eq!(mark(0.95, Better::Higher), "");
        assert_eq!(mark(1.05, Better::Higher), "");
    }

    #[test]
    fn no_relative_value_to_a_base_below_the_resolution() {
        let stats = |v: f64| {
            BTreeMap::from([(
                "dbms_cs_per_op".to_string(),
                Stat::of(&[v]).expect("one value"),
            )])
        };
        // dbms cs/op is shown with 3 digits: a base of 0.0003 shows as 0.000.
        let mut g = stats(0.012);
        set_relative(&mut g, &stats(0.0003), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, None);
        set_relative(&mut g, &stats(0.001), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, None, "at the resolution");
        set_relative(&mut g, &stats(0.004), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, Some(3.0));
        let mut g = stats(5.0);
        set_relative(&mut g, &stats(0.0), EFFICIENCY);
        assert_eq!(g["dbms_cs_per_op"].relative, None);
    }
}

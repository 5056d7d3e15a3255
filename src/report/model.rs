//! The report over a set of runs: runs grouped by configuration (label), repeats aggregated
//! (median, with min and max), every figure also relative to a base group. HTML, Markdown and
//! JSON are renderings of this one model (see docs/reports.md). The model's types only, the
//! bottom of `report/`: `build.rs` makes a [`Report`] from runs, the sections and renderers
//! read it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::metrics::histogram::Percentiles;
pub use crate::report::figures::{Better, EFFICIENCY, MICRO, MetricDef, THROUGHPUT};
use crate::report::measured::Measured;
use crate::report::pacing::Pacing;
pub use crate::report::select::Group;
pub use crate::report::settings::Difference;
use crate::report::stat::{Mark, Stat, StepFlag};
use crate::results::model::RunStatus;

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
    /// (`compare/steady.rs`): a relative value of a flagged step is not marked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<StepFlag>,
    /// Each server of a cluster (`primary`, `r1`, `n2`) and its figures over the step
    /// (`report/replication.rs`); empty for single servers.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub servers: BTreeMap<String, BTreeMap<String, Stat>>,
    /// What ran before the step's measured part and is in none of its figures: the warm-up
    /// and the pause before the step (`--warmup`, `--cooldown`), medians over the group's
    /// runs; absent when none had either.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing: Option<Pacing>,
    /// The replicas or Galera nodes that died during the step in the group's runs: (run,
    /// the line said of the death and what it did to the step).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node_failures: Vec<(String, String)>,
    /// What the runs measured beyond these figures, run by run (`report/measured.rs`).
    #[serde(skip_serializing_if = "Measured::is_empty")]
    pub measured: Measured,
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
    pub headline: Vec<Headline>,
    /// Figures per step.
    pub step_reports: Vec<StepReport>,
    /// Per configuration, what its verdict needs beyond the steps' figures (`verdict.rs`).
    pub verdicts: Vec<ConfigVerdict>,
    /// Per step, its per-second series on one time axis: the HTML report's interactive
    /// charts (`timeline.rs`); not in the JSON report (the runs' documents have them).
    #[serde(skip)]
    pub timelines: Vec<StepTimeline>,
}

/// One of the largest changes of a configuration.
#[derive(Clone, Debug, Serialize)]
pub struct TopChange {
    /// Step.
    pub step: String,
    /// Figure key.
    pub key: String,
    /// Its label.
    pub figure: String,
    /// Median relative to the base's median.
    pub relative: f64,
    /// Better or worse.
    pub mark: Mark,
    /// compare's interval of the change, percent.
    pub ci_pct: Option<[f64; 2]>,
}

/// Per configuration against the base: its cells counted by mark, and its largest changes.
#[derive(Clone, Debug, Serialize)]
pub struct Headline {
    /// Configuration.
    pub group: String,
    /// A side has one run: marks by the threshold, no noise estimate.
    pub one_run: bool,
    /// Cells marked better.
    pub better: usize,
    /// Cells marked worse.
    pub worse: usize,
    /// Cells unchanged (no change called, ratio within the threshold), and cells negligible
    /// on both sides (under the figure's floor).
    pub unchanged: usize,
    /// Cells beyond the threshold that the runs do not support.
    pub too_noisy: usize,
    /// Cells of a called change in a flagged step (not steady, too short), not marked.
    #[serde(default)]
    pub flagged: usize,
    /// Cells with a relative value that compare does not test.
    pub untested: usize,
    /// The five largest supported changes, largest first (by the size of the log ratio).
    pub largest: Vec<TopChange>,
}

/// One step of one configuration: what its per-second series say.
#[derive(Clone, Debug, Serialize)]
pub struct StepSteadiness {
    /// Step name.
    pub step: String,
    /// The op its rate is judged by (`query`, `insert`).
    pub op: String,
    /// Full seconds in which none of those ops completed, summed over the runs.
    pub zero_seconds: usize,
    /// Full seconds, summed over the runs.
    pub full_seconds: usize,
    /// The rate met in 99% of full seconds over the rate met in 50%, percent (100: every
    /// second at the median rate); the median over the runs that have one.
    pub p99_of_p50_pct: Option<f64>,
}

/// The verdict's figures of one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigVerdict {
    /// Configuration (label).
    pub config: String,
    /// Rows in the tables at the end of the runs (inserted minus deleted), median over runs.
    pub rows: Option<Stat>,
    /// The runs' length from start to end, seconds, median over runs.
    pub duration_s: Option<Stat>,
    /// Per step.
    pub steps: Vec<StepSteadiness>,
    /// Steps a neighbour disturbed, by run (`report/interference.rs`): step, run id, why.
    pub disturbed: Vec<(String, String, String)>,
}

/// One series of a chart: one value per second of the step's time axis.
#[derive(Clone, Debug, Serialize)]
pub struct TimeSeries {
    /// What it is (`query`, `host`; after the run's configuration, `base #2 query`, when the
    /// report has several runs).
    pub label: String,
    /// CSS colour.
    pub color: String,
    /// Drawn dashed (a second op of a run in a chart of several runs).
    pub dash: bool,
    /// On the right-hand axis (the background writer's rates beside the queries).
    pub right: bool,
    /// Per second of the step's axis; `None` where nothing was measured.
    pub values: Vec<Option<f64>>,
}

/// One chart: its series on the step's time axis.
#[derive(Clone, Debug, Serialize)]
pub struct TimeChart {
    /// Title.
    pub title: String,
    /// Unit of the left-hand axis (`queries/s`, `us`, `cores`, `KB/s`, `MB`).
    pub unit: String,
    /// Unit of the right-hand axis, when a series is drawn on it.
    pub right_unit: String,
    /// Logarithmic y axis (response times).
    pub log: bool,
    /// The series.
    pub series: Vec<TimeSeries>,
}

/// One step's charts on one time axis.
#[derive(Clone, Debug, Serialize)]
pub struct StepTimeline {
    /// Step name.
    pub step: String,
    /// Seconds since the step start: `0, 1, 2, ...`, the longest run's seconds.
    pub x: Vec<f64>,
    /// The charts, in page order.
    pub charts: Vec<TimeChart>,
    /// The DBMS's gauges that were zero throughout (not drawn).
    pub flat_gauges: Vec<String>,
}

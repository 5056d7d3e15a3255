//! The versioned results document: one JSON file per run, which reports read back.
//!
//! Later metrics extend this model with new optional fields; a change that alters the meaning of
//! an existing field bumps [`SCHEMA_VERSION`].

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::dbms::Settled;
use crate::request::RunSpec;

pub use super::cost::{
    DbSize, DeviceDelta, Efficiency, EfficiencySeries, Peaks, PerOp, ProcDelta, ProcWork,
    ServerWork,
};
pub use super::interference::{Interference, PressureShares};
pub use super::nodes::{NodeDeath, NodeRejoin};
pub use super::resolved::Resolved;
pub use super::series::{
    ClientSeconds, OpSeries, PerSecond, RatePercentiles, SecondsSummary, SeriesSet,
};

/// Version of the results schema this build writes. 2: `config` is the run's request as
/// given, and `resolved` what ibench made of it (version 1 kept only the resolved target, in
/// `config`).
pub const SCHEMA_VERSION: u32 = 2;

/// One run: its configuration, where it ran, and what every step measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// Schema version of this document.
    pub schema_version: u32,
    /// Unique id, also the file name stem.
    pub run_id: String,
    /// Where the run stands; `running` while steps are being written.
    pub status: RunStatus,
    /// Why the run failed or stopped, when it did.
    pub error: Option<String>,
    /// When the run started.
    pub started_at: DateTime<Utc>,
    /// When the run ended.
    pub finished_at: Option<DateTime<Utc>>,
    /// The run as it was asked for (flags, or an experiment's cell), as given.
    pub config: RunSpec,
    /// What ibench resolved the request into: the target it connected to (a scratch database,
    /// a managed server, a pooler) and how it sent statements. Absent in documents of schema
    /// version 1, whose `config` holds the resolved target instead ([`RunResult::target`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolved>,
    /// The machine, OS and DBMS.
    pub environment: Environment,
    /// The managed server ibench started, if any.
    #[serde(default)]
    pub managed_server: Option<ManagedServerInfo>,
    /// Maintenance pauses between steps, in order.
    pub maintenance: Vec<Maintenance>,
    /// Completed (and the last, possibly failed) steps, in run order.
    pub steps: Vec<StepResult>,
    /// The experiment cell this run belongs to (`ibench experiment`); absent for `ibench run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<ExperimentTag>,
    /// The group of hosts the run belongs to (`--group`): in a host's part, that host; in
    /// the merged run, every host and what each measured. Absent for a single-host run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<crate::results::group::GroupInfo>,
    /// The dataset the run started from (`--from-dataset`): its name and digest, what was
    /// restored, how (reflink or copy) and in how many seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<crate::results::dataset::Restored>,
}

/// Which experiment, cell and repeat a run is (see docs/experiments.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExperimentTag {
    /// Experiment name.
    pub name: String,
    /// Cell name without the repeat: `target/config/allocator/setup` (also the run's label).
    pub cell: String,
    /// Repeat number, 1-based.
    pub repeat: u32,
    /// Repeats per cell in the experiment.
    pub repeats: u32,
    /// The round the run ran in, 1-based: every cell runs once a round, so it is the repeat.
    /// Absent in runs made before rounds were recorded (their order was the same every round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// Its position within the round, 1-based (the order rotates round by round; see
    /// docs/experiments.md). Absent in runs made before positions were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// The base cell of the experiment's report.
    pub base: String,
    /// Hash of the cell's definition (target, settings, allocator, workload); a completed run
    /// counts for a resumed experiment only when it matches.
    pub fingerprint: String,
    /// Database size / DBMS cache size at the end of the load, when both are known.
    #[serde(default)]
    pub cache: Option<CacheFit>,
    /// The run ran in duet (`ibench experiment --duet`): at the same time as its partner, the
    /// other cell of its round. Absent for runs made one at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duet: Option<Duet>,
}

/// The partner of a run made in duet (docs/experiments.md, "Duet").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Duet {
    /// The partner's cell (its label); it ran in the same round.
    pub partner: String,
    /// The partner's run id, when it was known as this run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_run: Option<String>,
}

/// The database size / DBMS cache size ratio a run actually got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheFit {
    /// The setting that sizes the cache (`innodb_buffer_pool_size`, `rocksdb_block_cache_size`,
    /// `shared_buffers`, `cache_size`).
    pub setting: String,
    /// Its effective value, bytes (from the run's recorded settings).
    pub cache_bytes: u64,
    /// The step whose end the database size is from (the last load step).
    pub step: String,
    /// Database size then, bytes.
    pub db_bytes: u64,
    /// Where the size is from: `dbms` (as the DBMS reports it) or `disk` (allocated files).
    pub db_size_source: String,
    /// `db_bytes / cache_bytes`: below 1 the database fits in the DBMS cache.
    pub ratio: f64,
}

/// State of a run or a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still running (the file is rewritten after every step).
    Running,
    /// Every step completed.
    Complete,
    /// A step failed; figures up to the failure are kept.
    Failed,
    /// Stopped by a signal; figures up to the interrupt are kept.
    Interrupted,
    /// Its ibench process ended without finishing it (`kill -9`, a crash, a reboot): found
    /// `running` with nobody holding its lock by a later run, which marked it so; figures of
    /// the steps saved before are kept.
    Abandoned,
}

/// Where the run happened.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Environment {
    /// ibench version.
    pub ibench_version: String,
    /// Host name.
    pub hostname: String,
    /// OS name (`PRETTY_NAME` of /etc/os-release).
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cpu_cores: usize,
    /// Physical memory, bytes.
    pub memory_bytes: u64,
    /// The target DBMS.
    pub dbms: DbmsInfo,
    /// Price of this host per hour (`--cost-per-hour`, in the user's currency), when given:
    /// reports show throughput per unit of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    /// Where the database's files are stored (absent in older documents, and when unknown:
    /// an external server without --data-dir).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageInfo>,
    /// What the host could do when the run started (`ibench doctor`'s cheap checks; absent
    /// in older documents).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_features: Vec<crate::results::features::HostFeature>,
    /// `--canary`: the host probed before and after the run (absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<crate::results::canary::Canary>,
}

/// The file system and devices under a run's database.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StorageInfo {
    /// The data directory (or database file) it describes.
    pub path: String,
    /// File-system type (`ext4`, `xfs`, `btrfs`, `tmpfs`).
    pub fs_type: String,
    /// Where that file system is mounted.
    pub mount_point: String,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// The file system's own options (`rw,space_cache=v2,subvolid=5`).
    pub fs_options: String,
    /// What is mounted (`/dev/nvme0n1p2`, `/dev/loop3`).
    pub source: String,
    /// Block devices whose /proc/diskstats figures are the run's device figures (a btrfs
    /// file system's members); empty when there are none.
    pub devices: Vec<String>,
}

/// The target DBMS as it described itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DbmsInfo {
    /// DBMS family (`sqlite`, ...).
    pub name: String,
    /// Version string reported by the DBMS.
    pub version: String,
    /// Database location (file path, or URL without password).
    pub location: String,
    /// Effective settings.
    pub settings: BTreeMap<String, String>,
}

/// The managed server of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ManagedServerInfo {
    /// Process id of the server.
    pub pid: Option<u32>,
    /// Server binary.
    pub binary: String,
    /// LD_PRELOAD library, if any.
    pub preload: Option<String>,
    /// Server log, kept beside the results.
    pub log: String,
    /// Left running after the run (`--keep-server`).
    pub kept: bool,
    /// The account it ran as (`ibench-server` when ibench ran as root, unless
    /// `--server-user` named another); absent in results of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// The connection pooler the clients connected through, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooler: Option<PoolerInfo>,
    /// Its data directory (what `ibench dataset save` copies); absent in results of earlier
    /// versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// Its streaming replicas (`--replicas`), in order `r1` .. `rN`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replicas: Vec<ReplicaInfo>,
    /// What its settings let it take of memory, against the run's memory limit (only with
    /// one: `--memory-limit`, an experiment setup's `memory_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_estimate: Option<crate::results::memory::MemoryEstimate>,
}

/// A replica of a managed server (PostgreSQL streaming, MariaDB binlog).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaInfo {
    /// Its name (`r1`; PostgreSQL: its application_name and replication slot).
    pub name: String,
    /// Its TCP port on 127.0.0.1.
    pub port: u16,
    /// Its process id.
    pub pid: Option<u32>,
    /// Its log, beside the results.
    pub log: String,
    /// Synchronous (one of the first `--sync-replicas`; MariaDB: semi-synchronous).
    pub sync: bool,
}

/// A connection pooler in the path of a run's clients.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolerInfo {
    /// Which (`pgbouncer`).
    pub kind: String,
    /// Its version (`1.18.0`).
    pub version: String,
    /// `session` or `transaction`.
    pub pool_mode: String,
    /// Server connections in its pool.
    pub pool_size: u32,
    /// Its process id (its CPU is not in the DBMS figures, which are the server's).
    pub pid: Option<u32>,
    /// How the clients sent statements through it, and why.
    pub statements: String,
}

/// A maintenance pause (vacuum, checkpoint, flush) before a step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Maintenance {
    /// The step it preceded.
    pub before_step: String,
    /// What was done.
    pub actions: String,
    /// How long it took, seconds.
    pub duration_s: f64,
    /// The wait for the engine's background work after writes (a post-write pause), when
    /// the DBMS has some to wait for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<Settled>,
}

/// What one step measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepResult {
    /// Step name (`l.i0`, `l.x`, `l.i1`, `l.i2`, `qr100`, `qp500`, ...).
    pub name: String,
    /// `complete`, or `failed` / `interrupted` with the figures up to then.
    pub status: RunStatus,
    /// The error that ended the step, naming the client.
    pub error: Option<String>,
    /// When the measured part of the step started.
    pub started_at: DateTime<Utc>,
    /// Measured duration, seconds (client start-up excluded).
    pub duration_s: f64,
    /// Number of clients.
    pub clients: usize,
    /// Rows inserted during the step.
    pub rows_inserted: u64,
    /// Rows deleted during the step.
    pub rows_deleted: u64,
    /// Queries completed during the step.
    pub queries: u64,
    /// Rows inserted per second.
    pub inserts_per_s: f64,
    /// Rows deleted per second.
    pub deletes_per_s: f64,
    /// Queries per second.
    pub queries_per_s: f64,
    /// Response time per op type (`insert`, `delete`, `query`, `getmin`), measured from when each
    /// op was due.
    pub ops: BTreeMap<String, OpResult>,
    /// Service time (from when the op was sent) of rate-limited ops.
    pub service_time: BTreeMap<String, OpResult>,
    /// Per-second series of all clients, each client's summarised (and its full series when
    /// the run asked for them).
    pub per_second: PerSecond,
    /// Per op type: the rate met or exceeded in x% of the step's full seconds.
    pub rate_percentiles: BTreeMap<String, RatePercentiles>,
    /// Background-writer SLA, for query steps with a writer.
    pub sla: Option<Sla>,
    /// `select min(transactionid)` at step start, for steps with deletes.
    pub select_min: Option<SelectMin>,
    /// Index creation figures, for l.x.
    pub index_build: Option<IndexBuild>,
    /// The scan step's full scans, in order (primary key, each secondary index, primary key).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scans: Vec<IndexScan>,
    /// Point queries: ids asked for that existed but the DBMS did not return (should be 0).
    pub point_query_misses: Option<u64>,
    /// Point queries: ids not returned because a delete claimed them after they were drawn
    /// (the querier was descheduled for longer than the guard of two delete batches).
    #[serde(default)]
    pub point_query_raced: Option<u64>,
    /// Statements tried again after a transient error or a reconnect, per op type.
    #[serde(default)]
    pub retries: BTreeMap<String, u64>,
    /// Connections reopened after being lost.
    #[serde(default)]
    pub reconnects: u64,
    /// What the step cost the DBMS, the client and the host (see docs/metrics.md).
    #[serde(default)]
    pub efficiency: Option<Efficiency>,
    /// The DBMS's own counters, differences over the step (`end - start`; levels such as
    /// dead tuples give their change).
    #[serde(default)]
    pub dbms_counters: BTreeMap<String, f64>,
    /// The storage engine's status report at the step's end, by section (`Dbms::engine_status`:
    /// `SHOW ENGINE INNODB STATUS`, parts of `SHOW ENGINE ROCKSDB STATUS`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub engine_status: BTreeMap<String, String>,
    /// Seconds spent in each wait event over the step (`Dbms::waits_end`: PostgreSQL's
    /// sampled `wait_event_type:wait_event` of active backends, MariaDB's performance_schema
    /// wait summary when it is on). Absent where none were recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wait_events: BTreeMap<String, f64>,
    /// `--profile`: the step's flame graph (SVG), relative to the results file's directory
    /// (`<run id>.profiles/<step>.svg`; the folded stacks beside it as `<step>.folded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The queue invariant, checked with the step's own SQL after a step that retried
    /// statements or reopened connections (a statement whose outcome was lost may have
    /// committed without being counted).
    #[serde(default)]
    pub queue_check: Option<QueueCheck>,
    /// What the user should know about how the step ran (a microbenchmark's index hint the
    /// DBMS cannot give).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A TPC-C step's own figures: tpmC, the mix, rollbacks, consistency checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<crate::results::tpcc::TpccFigures>,
    /// Each streaming replica's lag over the step and its catch-up at the step's end
    /// (`--replicas`; see docs/replication.md). Absent without replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replication: Vec<ReplicaLag>,
    /// The step's warm-up before its measured part (`--warmup`; absent without one): in no
    /// figure above (histograms, series, totals, rates, costs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Warmup>,
    /// Seconds the run paused before this step (`--cooldown`; absent without a pause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_s: Option<f64>,
    /// Replicas or Galera nodes that died during the step (`--on-node-failure`; absent when
    /// none did).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_failures: Vec<NodeDeath>,
    /// Errors of a kind of their own, counted over the step (Galera: `cert_failure`,
    /// `bf_abort`; each also counted in `retries`, as it was retried as a deadlock). Absent
    /// when none were counted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
}

/// What a step's warm-up did; none of it is counted in the step's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// From the warm-up's start to the measured part's start, seconds (the longest over the
    /// step's threads: the step starts when the last has finished warming up).
    pub seconds: f64,
    /// Statements per op type (`insert`, `delete`, `query`, ...), as `ops` counts them.
    pub ops: BTreeMap<String, u64>,
    /// Rows inserted in the warm-up (an Insert Benchmark load step's warm-up rows count
    /// towards its rows; the queue check counts them).
    pub rows_inserted: u64,
    /// Rows deleted in the warm-up.
    pub rows_deleted: u64,
}

/// One replica's lag over a step (from the per-second gauges `pg.replica.<name>.*` or `mysql.replica.<name>.*`) and how
/// long it took to catch up with the primary's WAL position at the step's end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaLag {
    /// The replica's application_name (`r1`).
    pub name: String,
    /// Seconds of readings the figures below come from.
    pub readings: usize,
    /// Largest replay lag read in the step, seconds.
    pub max_replay_lag_s: f64,
    /// 99th percentile of the per-second replay lag readings, seconds.
    pub p99_replay_lag_s: f64,
    /// Largest replay lag in bytes (the primary's current WAL position less the replica's
    /// replay position) read in the step.
    pub max_bytes_behind: f64,
    /// Seconds from the step's end until the replica had replayed up to the primary's WAL
    /// position at that moment (`None`: it did not within the wait, or could not be asked).
    pub catch_up_s: Option<f64>,
}

impl StepResult {
    /// The background-writer SLA as shown: `PASS` or `FAIL` for a step that completed, `not
    /// evaluated` for one that failed or was interrupted (whatever its document says: older
    /// versions stored `pass: true` for those), `None` for a step without a writer.
    pub fn sla_verdict(&self) -> Option<&'static str> {
        let sla = self.sla.as_ref()?;
        Some(if self.status != RunStatus::Complete {
            "not evaluated"
        } else if sla.pass {
            "PASS"
        } else {
            "FAIL"
        })
    }
}

/// Rows in the tables after a step, against what the step counted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct QueueCheck {
    /// Rows in all tables at step start (`max - min + 1` per table).
    pub rows_at_start: u64,
    /// `rows_at_start + rows_inserted - rows_deleted`.
    pub rows_expected: u64,
    /// `count(*)` over all tables after the step.
    pub rows_counted: u64,
    /// Tables whose ids are not contiguous (`count(*) != max - min + 1`): a gap in the queue.
    pub tables_with_gaps: Vec<String>,
    /// Whether the counts agree and no table has a gap.
    pub ok: bool,
}

/// Response time of one op type in one step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OpResult {
    /// Statements completed.
    pub count: u64,
    /// Rows they affected (insert, delete); for queries, the number of queries.
    pub rows: u64,
    /// Percentiles, microseconds.
    pub percentiles_us: Percentiles,
    /// Share of ops per classic bucket, percent, labels as in `bucket_labels`.
    pub buckets_pct: Vec<f64>,
    /// Labels of `buckets_pct` (`<=256us` ... `>16s`).
    pub bucket_labels: Vec<String>,
    /// Merged histogram (microseconds), base64 of the HDR V2-deflate encoding.
    pub histogram: String,
    /// Per-client histograms; they add up exactly to `histogram`.
    pub per_client: Vec<ClientHistogram>,
}

/// One client's histogram of one op type.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClientHistogram {
    /// Client number, 0-based.
    pub client: usize,
    /// Ops recorded.
    pub count: u64,
    /// base64 HDR V2-deflate histogram, microseconds.
    pub histogram: String,
}

/// Whether the background writer of a query step held its target.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sla {
    /// Target insert rate over all clients, rows/s.
    pub target_inserts_per_s: f64,
    /// Insert batches due in the step that the writers never sent (they were still catching
    /// up when the step ended).
    pub missed_insert_batches: u64,
    /// Achieved insert rate over the step, rows/s.
    pub inserts_per_s: f64,
    /// Achieved delete rate over the step, rows/s (0 without deletes).
    pub deletes_per_s: f64,
    /// `inserts_per_s / target_inserts_per_s`.
    pub ratio: f64,
    /// Share of full seconds in which at least 95% of the rows due in that second were
    /// inserted, 0..1.
    pub seconds_met_share: f64,
    /// The step completed and its average reached 95% of the target (always false for a
    /// failed or interrupted step).
    pub pass: bool,
}

/// `select min(transactionid)` response times at the start of a step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SelectMin {
    /// Slowest table, microseconds.
    pub max_us: u64,
    /// Per table, microseconds.
    pub tables: BTreeMap<String, u64>,
    /// The engine's perf context counters over the select-mins (after − before, summed over
    /// the tables; `Dbms::perf_context`: MyRocks' rocksdb_perf_context_global, e.g.
    /// `perf_context.INTERNAL_DELETE_SKIPPED_COUNT`). Absent where the DBMS has none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub perf_context: BTreeMap<String, f64>,
}

/// Figures of the index-creation step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexBuild {
    /// Indexes created per table.
    pub indexes: Vec<String>,
    /// Tables indexed.
    pub tables: usize,
    /// Rows in the indexed tables.
    pub rows: u64,
    /// Indexed rows per second.
    pub rows_per_s: f64,
}

/// One full scan of an index over every table, in the scan step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IndexScan {
    /// `PRIMARY`, a secondary index's suffix (`marketsegment`), or `PRIMARY (again)`.
    pub index: String,
    /// Rows read, over every table.
    pub rows: u64,
    /// How long the scans of every table took, seconds.
    pub seconds: f64,
    /// `rows / seconds`.
    pub rows_per_s: f64,
    /// Each scanner's part when several scanned at once (`--scan-clients`), by client;
    /// their rows add up to `rows`, and `seconds` runs from the first one's start to the last
    /// one's end. Empty in results written before concurrent scans.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scanners: Vec<ScannerScan>,
}

/// One scanner's scan of an index over its tables, in the scan step.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScannerScan {
    /// The scanner (client), 0-based.
    pub client: usize,
    /// Tables it scanned.
    pub tables: usize,
    /// Rows read.
    pub rows: u64,
    /// Its start, seconds after the step's clients started.
    pub start_s: f64,
    /// Its end, seconds after the step's clients started.
    pub end_s: f64,
}

/// Percentiles of a response-time distribution, microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest value.
    pub max: u64,
    /// Arithmetic mean.
    pub mean: f64,
}

/// Operation types whose response time is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// One multi-row INSERT statement.
    Insert,
    /// One DELETE statement of the oldest rows.
    Delete,
    /// One query (range or point).
    Query,
    /// `SELECT min(transactionid)` at the start of a step with deletes.
    #[serde(rename = "getmin")]
    GetMin,
    /// A TPC-C New-Order transaction.
    NewOrder,
    /// A TPC-C Payment transaction.
    Payment,
    /// A TPC-C Order-Status transaction.
    OrderStatus,
    /// A TPC-C Delivery transaction (ten districts).
    Delivery,
    /// A TPC-C Stock-Level transaction.
    StockLevel,
}

impl Op {
    /// Every op, in report order.
    pub const ALL: [Op; 9] = [
        Op::Insert,
        Op::Delete,
        Op::Query,
        Op::GetMin,
        Op::NewOrder,
        Op::Payment,
        Op::OrderStatus,
        Op::Delivery,
        Op::StockLevel,
    ];
    /// Number of op types.
    pub const COUNT: usize = 9;
    /// TPC-C's transaction types, in the specification's order.
    pub const TPCC: [Op; 5] = [
        Op::NewOrder,
        Op::Payment,
        Op::OrderStatus,
        Op::Delivery,
        Op::StockLevel,
    ];

    /// Name in results and reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Insert => "insert",
            Op::Delete => "delete",
            Op::Query => "query",
            Op::GetMin => "getmin",
            Op::NewOrder => "new_order",
            Op::Payment => "payment",
            Op::OrderStatus => "order_status",
            Op::Delivery => "delivery",
            Op::StockLevel => "stock_level",
        }
    }

    /// Whether the op counts in a step's `queries` (and `queries_per_s`): a query, or a
    /// transaction of a workload whose unit is the transaction (TPC-C's, each its own type).
    pub fn counts_as_query(self) -> bool {
        matches!(self, Op::Query) || Op::TPCC.contains(&self)
    }

    /// Dense index (0..[`Op::COUNT`]) for per-op arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

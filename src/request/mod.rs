//! What to run: the validated, serializable description of a run, stored with its results.
//!
//! The CLI (`cli/flags/`, for `run`, `micro` and `tpcc`) builds a [`RunSpec`] from flags;
//! experiments build one per cell from TOML (`experiment/plan`).
//! [`RunSpec::validate`] rejects bad values before anything starts, with one line naming the
//! value and what is allowed ([`UsageError`]).

pub mod insert_benchmark;
pub mod layers;
pub mod micro;
pub mod resources;
pub mod server;
pub mod tags;
#[cfg(test)]
mod tests;
pub mod tpcc;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::dbms::TargetSpec;
use crate::error::UsageError;
pub use insert_benchmark::{IndexDdl, InsertBenchmarkSpec, Step, TableMode};
pub use layers::{LayerError, Layered, assemble};
pub use micro::{MICRO_LOAD_BATCH, MicroSpec};
pub use resources::{CpuList, IoLimit, OsCache, Resources};
pub use server::{
    ClientNodes, GaleraSpec, MAX_GALERA_NODES, MAX_REPLICAS, Malloc, NodeFailure, PoolMode, Pooler,
    PoolerSpec, ReadFrom, ReplicaSpec, ServerSpec,
};
pub use tpcc::{Mix, TpccSpec};

/// Largest rows per statement: 6 values per row stay under SQLite's 32766 bound variables
/// and the 65535 parameters of the PostgreSQL and MySQL protocols.
pub const MAX_BATCH: usize = 5_000;

/// Most rows per client a load step may insert (10^12: far beyond any run, and far from
/// overflowing the arithmetic on row counts).
pub const MAX_ROWS: u64 = 1_000_000_000_000;

/// Longest duration a flag may give, seconds (one year).
pub const MAX_SECONDS: u64 = 31_536_000;

/// How a caller names a spec's fields (by their Rust names, `l0_rows`) in messages: `--l0-rows`
/// on the command line, `rows_per_client` in an experiment file.
pub type FieldNames = fn(&str) -> String;

/// A spec value that is not allowed: the field (its Rust name, for the caller to locate it) and
/// one line naming every field in the caller's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The field at fault.
    pub field: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl From<SpecError> for UsageError {
    fn from(e: SpecError) -> Self {
        UsageError::new(e.message)
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// `v` as a message shows it: `1e300` rather than 301 digits.
pub(crate) fn number(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// `field` refused with `message`, one line that names it (as the caller's [`FieldNames`] do).
pub(crate) fn refuse(field: &'static str, message: String) -> Result<(), SpecError> {
    Err(SpecError { field, message })
}

/// `field`'s `value` refused in one line naming the field as `n` does: `{name} {value} is out
/// of range: {expected}`.
pub(crate) fn out_of_range(
    n: FieldNames,
    field: &'static str,
    value: impl std::fmt::Display,
    expected: impl std::fmt::Display,
) -> SpecError {
    SpecError {
        field,
        message: format!("{} {value} is out of range: {expected}", n(field)),
    }
}

/// `field`'s `value` within `range`, else [`out_of_range`], expecting `start..=end`.
pub(crate) fn in_range<T: PartialOrd + std::fmt::Display>(
    n: FieldNames,
    field: &'static str,
    value: T,
    range: std::ops::RangeInclusive<T>,
) -> Result<(), SpecError> {
    if range.contains(&value) {
        return Ok(());
    }
    let expected = format!("expected {}..={}", range.start(), range.end());
    Err(out_of_range(n, field, value, expected))
}

/// Checks a list of client counts (micro, TPC-C): at least one, each within 1..=1024.
pub(crate) fn check_clients(clients: &[usize], n: FieldNames) -> Result<(), SpecError> {
    if clients.is_empty() {
        return refuse(
            "clients",
            format!("{} is empty: give at least one client count", n("clients")),
        );
    }
    for &c in clients {
        in_range(n, "clients", c, 1..=1024)?;
    }
    Ok(())
}

/// Checks the retry policy every workload shares: tries per statement at least 1, the error
/// rate a percent (a finite one).
pub(crate) fn check_retries(
    max_tries: u32,
    max_error_pct: f64,
    n: FieldNames,
) -> Result<(), SpecError> {
    if !(0.0..=100.0).contains(&max_error_pct) {
        let pct = number(max_error_pct);
        return Err(out_of_range(
            n,
            "max_error_pct",
            pct,
            "expected a percent, 0..=100",
        ));
    }
    if max_tries == 0 {
        return refuse(
            "max_tries",
            format!("{} must be at least 1 (1 = no retries)", n("max_tries")),
        );
    }
    Ok(())
}

/// One complete run: target, workload and output.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunSpec {
    /// The DBMS to benchmark.
    pub target: TargetSpec,
    /// Whether ibench created the database for this run (and may remove it afterwards).
    pub scratch_database: bool,
    /// Keep a scratch database after the run.
    pub keep_data: bool,
    /// Directory for results.
    pub out_dir: PathBuf,
    /// Free-form label naming the configuration (for reports).
    pub label: Option<String>,
    /// Print a progress line every this many seconds (0: only the progress bar).
    pub report_interval_s: u64,
    /// Run the DBMS maintenance pause between the load and the query steps.
    pub maintenance: bool,
    /// The workload and its parameters.
    pub workload: WorkloadSpec,
    /// A managed throwaway server ibench starts for the run (its URL is then the target).
    #[serde(default)]
    pub server: Option<ServerSpec>,
    /// Prepared statements (default) or plain SQL text.
    #[serde(default)]
    pub statements: crate::dbms::StatementMode,
    /// Replace tables of the benchmark's names that ibench did not create (it never drops
    /// them otherwise).
    #[serde(default)]
    pub drop_existing: bool,
    /// Let steps write (rows, indexes) into tables of the benchmark's names that ibench did
    /// not create (it never changes them otherwise).
    #[serde(default)]
    pub write_existing: bool,
    /// Let the maintenance pause change an external server's global settings for a moment
    /// (a managed server's it may change anyway).
    #[serde(default)]
    pub allow_server_changes: bool,
    /// Threads driving a server DBMS's client connections, each many of them (`None`: one
    /// per core, once a step has more than 4 connections per core; 0: a thread per
    /// connection, as for an embedded DBMS).
    #[serde(default)]
    pub client_threads: Option<usize>,
    /// How those threads wait for their connections (`None`: io_uring where the kernel
    /// allows it, else epoll).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_io: Option<crate::mux::Backend>,
    /// Keep each client's full per-second series in the results (`--per-client-series`), not
    /// only their summaries. Absent in documents written before the summaries, which always
    /// kept them.
    #[serde(default)]
    pub per_client_series: bool,
    /// Only the load (`--prepare-only`): the database is kept (a managed server stopped
    /// cleanly) for `ibench dataset save`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prepare_only: bool,
    /// The dataset the run starts from (`--from-dataset`), restored instead of the load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Provenance tags (`--tag commit=...`), as given.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: tags::Tags,
    /// The DBMS's memory cap, IO limits, CPUs and OS cache mode (issue #31; absent: none).
    #[serde(default, skip_serializing_if = "Resources::is_default")]
    pub resources: Resources,
    /// `--cooldown`: seconds of pause before every step but the first (between client counts,
    /// between steps); each step records the pause it had (`cooldown_s`).
    #[serde(default, skip_serializing_if = "crate::serde_skip::is_zero")]
    pub cooldown_s: u64,
    /// `--no-sampling`: no once-a-second /proc and gauge readings and no wait-event sampling
    /// during steps, only the readings at each step's start and end (docs/metrics.md: the
    /// observer effect).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_sampling: bool,
    /// `--canary`: probe the host (a CPU loop, an fsync, a memory copy) before and after the
    /// run (`crate::metrics::canary`); not part of what identifies a configuration.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub canary: bool,
}

impl RunSpec {
    /// The run as `--prepare-only` and `--from-dataset NAME` make it: only the load (data
    /// kept, no maintenance pause), and/or no load (the dataset restored instead). A
    /// workload that has then nothing to run is refused in one line.
    pub fn with_dataset(
        mut self,
        prepare_only: bool,
        dataset: Option<String>,
    ) -> Result<RunSpec, UsageError> {
        if let Some(name) = &dataset {
            check_dataset_name(name)?;
            if !self.scratch_database && self.server.is_none() {
                return Err(UsageError::new(
                    "--from-dataset restores into a database ibench makes: give --server, or no --path / --url",
                ));
            }
        }
        self.workload
            .restrict(prepare_only, dataset.is_some())
            .map_err(UsageError::new)?;
        if prepare_only {
            self.keep_data = true;
            self.maintenance = false;
        }
        self.prepare_only = prepare_only;
        self.dataset = dataset;
        Ok(self)
    }
}

/// Which workload a run runs, with its parameters. Serialized as the parameters alone (a
/// microbenchmark spec has `benchmarks`, a TPC-C spec `warehouses` and no field it does not
/// know), so results written before the microbenchmarks read back as the Insert Benchmark.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorkloadSpec {
    /// The TPC-C-like workload on sysbench-tpcc's tables.
    Tpcc(TpccSpec),
    /// OLTP microbenchmarks on sysbench-style tables.
    Micro(MicroSpec),
    /// The Insert Benchmark.
    InsertBenchmark(InsertBenchmarkSpec),
}

impl WorkloadSpec {
    /// The Insert Benchmark's parameters, when that is the workload.
    pub fn insert_benchmark(&self) -> Option<&InsertBenchmarkSpec> {
        match self {
            WorkloadSpec::InsertBenchmark(w) => Some(w),
            WorkloadSpec::Micro(_) | WorkloadSpec::Tpcc(_) => None,
        }
    }

    /// The workload's name and the parameters that shape what its load makes (what a
    /// dataset of it holds; see `crate::dataset::Identity`).
    pub fn load_identity(&self) -> (&'static str, serde_json::Value) {
        use serde_json::json;
        match self {
            WorkloadSpec::Tpcc(t) => (
                "tpcc",
                json!({"warehouses": t.warehouses, "tables": t.tables,
                       "foreign_keys": t.foreign_keys}),
            ),
            WorkloadSpec::Micro(m) => (
                "micro",
                json!({"tables": m.tables, "table_rows": m.table_rows}),
            ),
            WorkloadSpec::InsertBenchmark(w) => (
                "insert-benchmark",
                json!({"clients": w.clients, "l0_rows": w.l0_rows,
                       "table_mode": w.table_mode, "table_prefix": w.table_prefix,
                       "secondary_indexes": w.secondary_indexes}),
            ),
        }
    }

    /// Keeps only the load (`prepare_only`), and/or drops it (`from_dataset`: the dataset
    /// holds it): the microbenchmarks' and TPC-C's `prepare`, the Insert Benchmark's leading
    /// l.i0 and l.x. An error names what is then wrong.
    pub fn restrict(&mut self, prepare_only: bool, from_dataset: bool) -> Result<(), String> {
        let is_load = |s: &Step| matches!(s, Step::LoadInitial | Step::CreateIndexes);
        match self {
            WorkloadSpec::Tpcc(t) => {
                restrict_prepare(&mut t.prepare, &mut t.load_only, prepare_only, from_dataset)
            }
            WorkloadSpec::Micro(m) => {
                restrict_prepare(&mut m.prepare, &mut m.load_only, prepare_only, from_dataset)
            }
            WorkloadSpec::InsertBenchmark(w) => {
                let load = w.steps.iter().take_while(|s| is_load(s)).count();
                if load == 0 && (prepare_only || from_dataset) {
                    return Err(
                        "--prepare-only and --from-dataset need steps that begin with the load                          (l.i0, l.x)"
                            .to_string(),
                    );
                }
                if from_dataset {
                    w.steps.drain(..load);
                    if prepare_only {
                        w.steps.clear();
                    }
                } else if prepare_only {
                    w.steps.truncate(load);
                }
                if w.steps.is_empty() && !prepare_only {
                    return Err("--from-dataset: no step is left after the load".to_string());
                }
                Ok(())
            }
        }
    }

    /// The largest number of clients any step runs.
    pub fn max_clients(&self) -> usize {
        match self {
            WorkloadSpec::InsertBenchmark(w) => w.clients,
            WorkloadSpec::Micro(m) => m.clients.iter().copied().max().unwrap_or(0),
            WorkloadSpec::Tpcc(t) => t.clients.iter().copied().max().unwrap_or(0),
        }
    }

    /// The most connections the run's client threads hold at once: three per client of the
    /// Insert Benchmark (inserter, deleter, querier), the largest client count (or table
    /// count, which the load's threads are) of the microbenchmarks.
    pub fn connections(&self) -> usize {
        match self {
            WorkloadSpec::InsertBenchmark(w) => w.clients.saturating_mul(3),
            WorkloadSpec::Micro(m) => self.max_clients().max(m.tables),
            WorkloadSpec::Tpcc(t) => t.connections(),
        }
    }

    /// A generous estimate of the database size by the end of the run, bytes.
    pub fn estimated_db_bytes(&self) -> u64 {
        match self {
            WorkloadSpec::InsertBenchmark(w) => w.estimated_db_bytes(),
            WorkloadSpec::Micro(m) => m.estimated_db_bytes(),
            WorkloadSpec::Tpcc(t) => t.estimated_db_bytes(),
        }
    }

    /// Checks every value; the first problem found is returned, naming fields as `names`
    /// does.
    pub fn validate(&self, names: FieldNames) -> Result<(), SpecError> {
        match self {
            WorkloadSpec::InsertBenchmark(w) => w.validate(names),
            WorkloadSpec::Micro(m) => m.validate(names),
            WorkloadSpec::Tpcc(t) => t.validate(names),
        }
    }
}

/// Checks that `name` can name a dataset: 1-100 letters, digits, `.`, `_`, `-`, not starting
/// with a dot.
pub fn check_dataset_name(name: &str) -> Result<(), UsageError> {
    let ok = (1..=100).contains(&name.len())
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(UsageError::new(format!(
            "dataset name {name:?} is not allowed: use 1-100 letters, digits, '.', '_' or '-', \
             not starting with '.'"
        )))
    }
}

/// `restrict` for a workload with a `prepare` step.
fn restrict_prepare(
    prepare: &mut bool,
    load_only: &mut bool,
    prepare_only: bool,
    from_dataset: bool,
) -> Result<(), String> {
    if !*prepare && (prepare_only || from_dataset) {
        return Err(
            "--no-prepare uses tables as they are: it goes with neither --prepare-only nor \
             --from-dataset"
                .to_string(),
        );
    }
    if from_dataset {
        *prepare = false;
    }
    *load_only = prepare_only;
    Ok(())
}

pub(crate) fn default_max_error_pct() -> f64 {
    5.0
}

pub(crate) fn default_max_tries() -> u32 {
    10
}

pub(crate) fn default_max_reconnects() -> u32 {
    5
}

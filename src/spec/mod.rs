//! What to run: the validated, serializable description of a run, stored with its results.
//!
//! The CLI (`cli/target.rs`, for `run` and `micro`) builds a [`RunSpec`] from flags; experiments
//! build one per cell from TOML (`experiment/plan`).
//! [`RunSpec::validate`] rejects bad values before anything starts, with one line naming the
//! value and what is allowed ([`UsageError`]).

pub mod insert_benchmark;
pub mod micro;
pub mod resources;
pub mod server;
pub mod tpcc;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::dbms::TargetSpec;
use crate::error::UsageError;
pub use insert_benchmark::{IndexDdl, InsertBenchmarkSpec, Step, TableMode};
pub use micro::{MICRO_LOAD_BATCH, MicroSpec};
pub use resources::{CpuList, IoLimit, OsCache, Resources};
pub use server::{Malloc, PoolMode, Pooler, PoolerSpec, ServerSpec};
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
    /// The DBMS's memory cap, IO limits, CPUs and OS cache mode (issue #31; absent: none).
    #[serde(default, skip_serializing_if = "Resources::is_default")]
    pub resources: Resources,
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

pub(crate) fn default_max_error_pct() -> f64 {
    5.0
}

pub(crate) fn default_max_tries() -> u32 {
    10
}

pub(crate) fn default_max_reconnects() -> u32 {
    5
}

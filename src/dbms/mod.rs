//! DBMS targets: a registry of DBMS descriptors ([`Descriptor`], one file per DBMS), the
//! [`Dbms`] trait of an opened target, and the connection traits: the Insert Benchmark's
//! ([`InsertBenchmarkConnection`]) and SQL's ([`SqlConnection`], in `sql/`).
//!
//! All SQL lives in the DBMS files; workloads call typed methods (or name their
//! statements in [`sql::Statement`]'s vocabulary) and never build SQL. A new DBMS is one
//! folder here and one line in [`registry!`]; for a server, its lifecycle is one more file in
//! `server/` and one line in that registry. Nothing in `runner/`, `workload/`, `cli/` or
//! `experiment/` names a DBMS. docs/design.md has the recipe and what it costs; the
//! conformance suite (tests/conformance.rs) checks every registered DBMS alike.
//!
//! # Contract for implementors
//!
//! * A [`Dbms`] is shared by every client thread (`Send + Sync`); it opens one connection per
//!   client connection, and each connection is used by exactly one thread.
//! * Connections prepare their statements once (per table and batch size) and reuse them,
//!   keeping them in a [`StatementCache`]: the methods are on the hot path and must not
//!   allocate or format SQL per call where avoidable.
//! * `transactionid` is assigned by the DBMS (auto-increment / bigserial) and must grow
//!   monotonically; [`InsertBenchmarkConnection::insert`] returns the largest id it inserted so
//!   the workload knows which rows exist without asking.
//! * Errors are returned, never swallowed: the runner decides what a failure means
//!   ([`Descriptor::classify`] says whether to retry or reconnect).
//! * Optional hooks (settings, maintenance, counters, size) default to "not available"; a
//!   workload a DBMS cannot run is left out of [`Descriptor::capabilities`] and refused before
//!   anything starts.

pub mod error;
pub mod insert_benchmark;
pub mod kind;
pub mod literal;
pub mod readers;
pub mod roles;
pub mod socket;
pub mod sql;
pub mod statement_cache;
pub mod url;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub use error::{DbError, ErrorKind};
pub use insert_benchmark::{
    InsertBenchmarkConnection, POINT_QUERY_IDS, RANGE_QUERY_LIMIT, RangeQuery, RowBatch,
    SecondaryIndex, TABLE_MARK, Table, TableOrigin, datetime, datetime_text,
};
pub use kind::{
    AssumedRates, CacheSetting, Capability, DbmsKind, Descriptor, Params, Setting, SettingError,
    TargetSettings, TargetSpec, error_kind, from_params, to_params,
};
pub use roles::{Maintain, Observe, Topology};
pub use sql::{SbtestRows, SqlConnection, Transactions};
pub use statement_cache::StatementCache;

/// The registry: declares each DBMS's module and lists its descriptor, in the order `--help`
/// shows them (the first embedded one is the default target). An entry may carry attributes,
/// applied to its module and its place in the list: `#[cfg(feature = "x")] x::X,` builds a DBMS
/// only with a cargo feature.
macro_rules! registry {
    ($($(#[$attr:meta])* $module:ident :: $descriptor:ident),* $(,)?) => {
        $($(#[$attr])* pub mod $module;)*
        /// Every DBMS ibench can drive.
        pub(crate) static REGISTRY: &[&dyn Descriptor] = &[$($(#[$attr])* &$module::$descriptor),*];
    };
}

registry! {
    sqlite::SQLITE,
    postgres::POSTGRES,
    mysql::MYSQL,
    #[cfg(feature = "rocksdb")]
    rocksdb::ROCKSDB,
}

/// How connections send statements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatementMode {
    /// Prepared once per connection, values bound (the default).
    #[default]
    Prepared,
    /// SQL text with the values inlined, parsed by the server every time (`--plain-sql`).
    Plain,
}

/// Opens the target described by `spec`, with prepared statements.
pub fn open(spec: &TargetSpec) -> Result<Box<dyn Dbms>> {
    open_with(spec, StatementMode::Prepared)
}

/// Opens the target described by `spec`, sending statements as `mode` says.
pub fn open_with(spec: &TargetSpec, mode: StatementMode) -> Result<Box<dyn Dbms>> {
    spec.kind.open(spec, mode)
}

impl DbmsKind {
    /// The error for a workload this DBMS cannot run.
    pub fn lacks(self, capability: Capability) -> anyhow::Error {
        crate::error::UsageError::new(format!(
            "{self} cannot run {}: its connections have no such operations",
            capability.describe()
        ))
        .into()
    }
}

/// A post-write pause's wait for the engine's background work (InnoDB purge, MyRocks
/// compactions), within the pause.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    /// What was waited for, in words.
    pub waited_for: String,
    /// The figure watched (`Innodb_history_list_length`, `Rocksdb_compact_write_bytes`).
    pub figure: String,
    /// Its value when the wait began.
    pub start: f64,
    /// Its value when the wait ended.
    pub end: f64,
    /// Seconds waited.
    pub seconds: f64,
    /// How the wait ended: settled (and how), or the pause ended first.
    pub outcome: String,
}

/// A DBMS target, opened: what it is and its client connections. What the runner reads from
/// it, the pauses it takes and its nodes are role traits it also implements ([`Observe`],
/// [`Maintain`], [`Topology`]); code that needs one role takes `&dyn` that role (a `&dyn Dbms`
/// coerces to it), so a DBMS without replicas says so with an empty `impl Topology`.
pub trait Dbms: Observe + Maintain + Topology + Send + Sync {
    /// The DBMS.
    fn kind(&self) -> DbmsKind;

    /// The server's version string, as the DBMS reports it.
    fn version(&self) -> Result<String>;

    /// Human-readable location of the database (file, URL without password).
    fn location(&self) -> String;

    /// Opens a connection with the Insert Benchmark's operations (one per client thread).
    fn connect_insert_benchmark(&self) -> Result<Box<dyn InsertBenchmarkConnection>> {
        Err(self.kind().lacks(Capability::InsertBenchmark))
    }

    /// Opens a SQL connection (one per client thread): the microbenchmarks' and TPC-C's
    /// statements, and a SQL DBMS's Insert Benchmark ([`sql::SqlInsertBenchmark`]).
    fn connect_sql(&self) -> Result<Box<dyn SqlConnection>> {
        Err(self.kind().lacks(Capability::Sql))
    }

    /// A connection for the Insert Benchmark's query thread of `client`: a replica's,
    /// round-robin, when the run reads from replicas (`--read-from replicas`); else the
    /// writers' [`Dbms::connect_insert_benchmark`].
    fn connect_reader(&self, client: usize) -> Result<Box<dyn InsertBenchmarkConnection>> {
        let _ = client;
        self.connect_insert_benchmark()
    }

    /// A connection for `client` of a read-only microbenchmark (`ibench micro`): a
    /// replica's, round-robin, when the run reads from replicas; else [`Dbms::connect_sql`].
    fn connect_sql_reader(&self, client: usize) -> Result<Box<dyn SqlConnection>> {
        let _ = client;
        self.connect_sql()
    }

    /// How many replicas the readers ([`Dbms::connect_reader`],
    /// [`Dbms::connect_sql_reader`]) connect to: 0 when they read from the primary.
    fn read_replicas(&self) -> usize {
        0
    }

    /// How many client connections the server accepts from ibench's user (PostgreSQL:
    /// max_connections less those reserved for superusers; MariaDB and MySQL:
    /// max_connections), when it has such a limit; checked before a run on a server ibench did
    /// not start. Default: no limit.
    fn connection_limit(&self) -> Result<Option<u64>> {
        Ok(None)
    }

    /// Whether the client connections (`connect_*`) do all their waiting on the server
    /// through `dbms::socket`, so that a client thread may drive many of them (`crate::mux`).
    /// Default: no (an embedded DBMS's calls block their thread).
    fn multiplexed_clients(&self) -> bool {
        false
    }
}

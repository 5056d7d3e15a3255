//! DBMS targets: one trait pair ([`Dbms`], [`Connection`]) and one file per DBMS.
//!
//! All SQL lives in the DBMS files (`sqlite.rs`, and later `postgres.rs`, `mysql.rs`, `rocksdb.rs`);
//! workloads call the typed methods below and never build SQL. A new DBMS is one file here, one
//! variant in [`DbmsKind`] and one arm in [`open`]; the runner and the workloads do not change.
//!
//! # Contract for implementors
//!
//! * A [`Dbms`] is shared by every client thread (`Send + Sync`); it opens one [`Connection`]
//!   per client connection, and each connection is used by exactly one thread.
//! * Connections prepare their statements once (per table and batch size) and reuse them: the
//!   methods are on the hot path and must not allocate or format SQL per call where avoidable.
//! * `transactionid` is assigned by the DBMS (auto-increment / bigserial) and must grow
//!   monotonically; [`Connection::insert`] returns the largest id it inserted so the workload
//!   knows which rows exist without asking.
//! * Errors are returned, never swallowed: the runner decides what a failure means.
//! * Optional hooks (settings, maintenance, size) default to "not available".

pub mod literal;
pub mod mysql;
pub mod mywire;
pub mod pgwire;
pub mod postgres;
pub mod socket;
pub mod sqlite;
pub mod url;

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Number of ids in one point query (`transactionid IN (...)`).
pub const POINT_QUERY_IDS: usize = 10;
/// `LIMIT` of every range query.
pub const RANGE_QUERY_LIMIT: usize = 10;

/// The DBMS families ibench can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum DbmsKind {
    /// Embedded SQLite (bundled with ibench), WAL mode.
    Sqlite,
    /// PostgreSQL, or a server speaking its protocol (CockroachDB, YugabyteDB).
    Postgres,
    /// MariaDB or MySQL (InnoDB or MyRocks), or a server speaking its protocol (TiDB).
    Mysql,
}

impl DbmsKind {
    /// Name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            DbmsKind::Sqlite => "sqlite",
            DbmsKind::Postgres => "postgres",
            DbmsKind::Mysql => "mysql",
        }
    }

    /// The family a URL scheme names (`postgres`, `postgresql`, `mysql`, `mariadb`).
    pub fn from_scheme(scheme: &str) -> Option<Self> {
        match scheme {
            "postgres" | "postgresql" => Some(DbmsKind::Postgres),
            "mysql" | "mariadb" => Some(DbmsKind::Mysql),
            _ => None,
        }
    }
}

/// How to reach a target: everything a [`Dbms`] needs to open connections.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TargetSpec {
    /// An SQLite database file.
    Sqlite {
        /// Database file.
        path: PathBuf,
        /// `PRAGMA name=value` applied on every connection, after ibench's defaults.
        pragmas: Vec<(String, String)>,
        /// How long a connection waits for a lock before failing, in milliseconds.
        busy_timeout_ms: u64,
    },
    /// A PostgreSQL server.
    Postgres {
        /// Server URL (its password is never serialized).
        url: url::ServerUrl,
    },
    /// A MariaDB or MySQL server.
    Mysql {
        /// Server URL (its password is never serialized).
        url: url::ServerUrl,
        /// Storage engine of the tables.
        engine: mysql::Engine,
    },
}

impl TargetSpec {
    /// The DBMS family of this target.
    pub fn kind(&self) -> DbmsKind {
        match self {
            TargetSpec::Sqlite { .. } => DbmsKind::Sqlite,
            TargetSpec::Postgres { .. } => DbmsKind::Postgres,
            TargetSpec::Mysql { .. } => DbmsKind::Mysql,
        }
    }
}

/// What an error from a DBMS means for the client that got it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Try the statement again: deadlock, serialization failure, lock wait timeout, busy,
    /// too many connections.
    Transient,
    /// The connection is gone: reconnect, then try again.
    ConnectionLost,
    /// Anything else: the step fails.
    Fatal,
}

/// An error from a DBMS as ibench's own clients report it: its text (what was done, on which
/// table, the server's message and code) and what it means for the client.
#[derive(Debug)]
pub struct DbError {
    /// What the error means for the client.
    pub kind: ErrorKind,
    /// The error, for the user.
    pub message: String,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

impl From<std::io::Error> for DbError {
    fn from(e: std::io::Error) -> Self {
        DbError {
            kind: ErrorKind::ConnectionLost,
            message: format!("connection to the server failed: {e}"),
        }
    }
}

/// Classifies `err` by the DBMS errors in its chain (each DBMS file knows its own codes).
pub fn error_kind(err: &anyhow::Error) -> ErrorKind {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<DbError>() {
            return e.kind;
        }
        let kind = sqlite::classify(cause)
            .or_else(|| postgres::classify(cause))
            .or_else(|| mysql::classify(cause));
        if let Some(kind) = kind {
            return kind;
        }
    }
    ErrorKind::Fatal
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
    let plain = mode == StatementMode::Plain;
    match spec {
        TargetSpec::Sqlite {
            path,
            pragmas,
            busy_timeout_ms,
        } => Ok(Box::new(sqlite::Sqlite::open(
            path.clone(),
            pragmas.clone(),
            *busy_timeout_ms,
            plain,
        )?)),
        TargetSpec::Postgres { url } => Ok(Box::new(postgres::Postgres::open(url.clone(), plain)?)),
        TargetSpec::Mysql { url, engine } => {
            Ok(Box::new(mysql::Mysql::open(url.clone(), *engine, plain)?))
        }
    }
}

/// The three secondary indexes of the Insert Benchmark, in the order a run adds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SecondaryIndex {
    /// `<t>_marketsegment (price, customerid)`
    MarketSegment,
    /// `<t>_registersegment (cashregisterid, price, customerid)`
    RegisterSegment,
    /// `<t>_pdc (price, dateandtime, customerid)`
    Pdc,
}

impl SecondaryIndex {
    /// All indexes in the order `--secondary-indexes N` takes them.
    pub const ALL: [SecondaryIndex; 3] = [
        SecondaryIndex::MarketSegment,
        SecondaryIndex::RegisterSegment,
        SecondaryIndex::Pdc,
    ];

    /// Suffix of the index name: the index on table `pi1` is `pi1_<suffix>`.
    pub fn suffix(self) -> &'static str {
        match self {
            SecondaryIndex::MarketSegment => "marketsegment",
            SecondaryIndex::RegisterSegment => "registersegment",
            SecondaryIndex::Pdc => "pdc",
        }
    }

    /// Indexed columns, in order.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            SecondaryIndex::MarketSegment => &["price", "customerid"],
            SecondaryIndex::RegisterSegment => &["cashregisterid", "price", "customerid"],
            SecondaryIndex::Pdc => &["price", "dateandtime", "customerid"],
        }
    }

    /// Full index name on `table`.
    pub fn name_on(self, table: &str) -> String {
        format!("{table}_{}", self.suffix())
    }
}

/// The covering range queries of qrN steps; each reads only columns of one secondary index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeQuery {
    /// `price >= R ORDER BY price, customerid LIMIT 10`
    Market,
    /// `cashregisterid >= R ORDER BY cashregisterid, price, customerid LIMIT 10`
    Register,
    /// `price >= R ORDER BY price, dateandtime, customerid LIMIT 10`
    Pdc,
}

impl RangeQuery {
    /// The index the query is covered by.
    pub fn index(self) -> SecondaryIndex {
        match self {
            RangeQuery::Market => SecondaryIndex::MarketSegment,
            RangeQuery::Register => SecondaryIndex::RegisterSegment,
            RangeQuery::Pdc => SecondaryIndex::Pdc,
        }
    }
}

/// A table of the Insert Benchmark as connections see it.
#[derive(Clone, Debug)]
pub struct Table {
    /// Dense index (0-based) that connections use to find their prepared statements.
    pub id: usize,
    /// Validated SQL identifier (`[A-Za-z_][A-Za-z0-9_]*`), e.g. `pi1`.
    pub name: String,
}

/// A batch of rows to insert, column-wise so that generating and binding it allocates nothing
/// once the buffers have grown to the batch size.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RowBatch {
    /// Wall-clock time of the batch, Unix seconds (one-second resolution, as specified).
    pub dateandtime: i64,
    /// `cashregisterid` per row.
    pub cashregisterid: Vec<i32>,
    /// `customerid` per row.
    pub customerid: Vec<i32>,
    /// `productid` per row.
    pub productid: Vec<i32>,
    /// `price` per row.
    pub price: Vec<f64>,
    /// All rows' `data` values, concatenated (ASCII).
    pub data: String,
    /// End offset in `data` of each row's value.
    pub data_ends: Vec<usize>,
}

impl RowBatch {
    /// Number of rows in the batch.
    pub fn len(&self) -> usize {
        self.price.len()
    }

    /// True when the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.price.is_empty()
    }

    /// The `data` value of row `i`.
    pub fn data(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.data_ends[i - 1] };
        &self.data[start..self.data_ends[i]]
    }

    /// Empties the batch, keeping its buffers.
    pub fn clear(&mut self) {
        self.cashregisterid.clear();
        self.customerid.clear();
        self.productid.clear();
        self.price.clear();
        self.data.clear();
        self.data_ends.clear();
    }
}

/// Rows of a sysbench-style table (`sbtestN`, the microbenchmarks' tables), column-wise: `id`
/// (given, not generated by the DBMS), `k`, `c` (120 characters) and `pad` (60 characters).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SbtestRows {
    /// `id` per row.
    pub id: Vec<i64>,
    /// `k` per row.
    pub k: Vec<i32>,
    /// `c` per row.
    pub c: Vec<String>,
    /// `pad` per row.
    pub pad: Vec<String>,
}

impl SbtestRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// `dateandtime` of a batch (Unix seconds) as a UTC date-time.
pub fn datetime(unix_s: i64) -> chrono::NaiveDateTime {
    chrono::DateTime::from_timestamp(unix_s, 0)
        .unwrap_or_default()
        .naive_utc()
}

/// `dateandtime` as SQL text: `YYYY-MM-DD HH:MM:SS` (UTC), which every DBMS here accepts.
pub fn datetime_text(unix_s: i64) -> String {
    datetime(unix_s).format("%Y-%m-%d %H:%M:%S").to_string()
}

/// A DBMS target: opens connections and answers questions about the server as a whole.
pub trait Dbms: Send + Sync {
    /// The DBMS family.
    fn kind(&self) -> DbmsKind;

    /// Opens a new connection (one per client thread).
    fn connect(&self) -> Result<Box<dyn Connection>>;

    /// The server's version string, as the DBMS reports it.
    fn version(&self) -> Result<String>;

    /// Effective settings, for diffing runs by configuration. Default: none known.
    fn settings(&self) -> Result<BTreeMap<String, String>> {
        Ok(BTreeMap::new())
    }

    /// Whether [`Connection::create_indexes`] can create several indexes in one statement.
    fn supports_combined_index_ddl(&self) -> bool {
        false
    }

    /// The maintenance pause between load and query steps (vacuum, checkpoint, flush...).
    /// Returns a short description of what was done, or `None` when the DBMS needs none.
    fn maintenance(&self, _tables: &[Table]) -> Result<Option<String>> {
        Ok(None)
    }

    /// The DBMS's own cumulative counters (pg_stat_*, SHOW GLOBAL STATUS), by name; the runner
    /// reads them at step start and end and stores the differences. Default: none.
    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        Ok(BTreeMap::new())
    }

    /// Waits until the counters include the work of the step's sessions, which have just
    /// closed (default: at once).
    fn settle_counters(&self) {}

    /// Whether counter `name` (from [`Dbms::counters`]) is one engineers read first; those are
    /// also reported per op. Default: none.
    fn is_key_counter(&self, _name: &str) -> bool {
        false
    }

    /// Size of the database in bytes as the DBMS reports it, when it can.
    fn size_bytes(&self) -> Result<Option<u64>> {
        Ok(None)
    }

    /// Human-readable location of the database (file, URL without password).
    fn location(&self) -> String;
}

/// One connection, used by one client thread. See the module docs for the contract.
pub trait Connection: Send {
    /// Drops `table` if it exists and creates it empty, with its primary key only.
    fn create_table(&mut self, table: &Table) -> Result<()>;

    /// Creates `indexes` on `table`: one statement per index, or one statement for all when
    /// `combined` (only when [`Dbms::supports_combined_index_ddl`]).
    fn create_indexes(
        &mut self,
        table: &Table,
        indexes: &[SecondaryIndex],
        combined: bool,
    ) -> Result<()>;

    /// Names of the secondary indexes on `table`.
    fn index_names(&mut self, table: &Table) -> Result<Vec<String>>;

    /// Whether `table` exists.
    fn table_exists(&mut self, table: &Table) -> Result<bool>;

    /// Inserts `rows` in one statement (autocommit) and returns the largest `transactionid`
    /// it assigned.
    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64>;

    /// Deletes rows with `lo <= transactionid < hi` in one statement; returns rows deleted.
    fn delete_range(&mut self, table: &Table, lo: i64, hi: i64) -> Result<u64>;

    /// `SELECT min(transactionid)`; `None` for an empty table.
    fn min_id(&mut self, table: &Table) -> Result<Option<i64>>;

    /// `SELECT max(transactionid)`; `None` for an empty table.
    fn max_id(&mut self, table: &Table) -> Result<Option<i64>>;

    /// `SELECT count(*)`.
    fn count_rows(&mut self, table: &Table) -> Result<u64>;

    /// Runs a covering range query starting at `start` (a price, or a cashregisterid for
    /// [`RangeQuery::Register`]) and returns the number of rows read (at most 10).
    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize>;

    /// Runs a point query for `ids` (at most [`POINT_QUERY_IDS`]); clears `found` and fills it
    /// with the `transactionid` of each row returned. Returns the number of rows.
    fn point_query(&mut self, table: &Table, ids: &[i64], found: &mut Vec<i64>) -> Result<usize>;

    // The microbenchmarks' sysbench-style tables (`sbtestN`). Their statements are cached
    // apart from the Insert Benchmark's, since the columns differ.

    /// Drops `table` if it exists and creates it as sysbench does: `id` integer primary key,
    /// `k` integer, `c` char(120), `pad` char(60), no secondary index yet.
    fn create_sbtest(&mut self, table: &Table) -> Result<()>;

    /// Inserts `rows` (with their ids) in one statement.
    fn insert_sbtest(&mut self, table: &Table, rows: &SbtestRows) -> Result<()>;

    /// Creates sysbench's secondary index `index` on `k`.
    fn create_sbtest_index(&mut self, table: &Table, index: &str) -> Result<()>;

    /// `SELECT c FROM table WHERE id = ?` (sysbench's point select); returns the rows read.
    fn point_select(&mut self, table: &Table, id: i64) -> Result<usize>;
}

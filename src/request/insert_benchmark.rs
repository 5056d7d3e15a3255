//! The Insert Benchmark's parameters: steps, sizes, value ranges, retry policy; validated
//! before anything starts.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::layers::scaled;
use super::{
    FieldNames, MAX_BATCH, MAX_ROWS, MAX_SECONDS, SpecError, check_retries, default_max_error_pct,
    default_max_reconnects, default_max_tries, in_range, out_of_range, refuse,
};
use crate::dbms::SecondaryIndex;
use crate::error::UsageError;

/// Largest `max_price` (a typo beyond it): prices stay exact in cents, far within MySQL's
/// `float` column.
pub const MAX_PRICE: f64 = 1e9;

/// Whether each client has its own table or all share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TableMode {
    /// Client i uses table `<prefix>i` (pi1, pi2, ...).
    PerClient,
    /// All clients use `<prefix>1`.
    Shared,
}

/// How l.x creates the secondary indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum IndexDdl {
    /// One statement per index.
    Separate,
    /// All indexes in one statement, where the DBMS allows it.
    Combined,
}

/// A step of the Insert Benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// l.i0: load in PK order, no secondary indexes.
    LoadInitial,
    /// l.x: create the secondary indexes.
    CreateIndexes,
    /// l.i1: insert (and delete) with index maintenance, large batches.
    LoadMore,
    /// l.i2: as l.i1 with small batches.
    LoadMoreSmall,
    /// qrN: range queries with a background writer at N rows/s per client.
    QueryRange(u32),
    /// qpN: point queries with a background writer at N rows/s per client.
    QueryPoint(u32),
    /// scan: full scans of the primary key, of each secondary index, then of the primary key
    /// again, timed one by one (off by default).
    Scan,
}

impl Step {
    /// The default step sequence.
    pub fn default_sequence() -> Vec<Step> {
        let mut steps = vec![
            Step::LoadInitial,
            Step::CreateIndexes,
            Step::LoadMore,
            Step::LoadMoreSmall,
        ];
        for rate in [100, 500, 1000] {
            steps.push(Step::QueryRange(rate));
            steps.push(Step::QueryPoint(rate));
        }
        steps
    }

    /// Query steps (qrN, qpN).
    pub fn is_query(self) -> bool {
        matches!(self, Step::QueryRange(_) | Step::QueryPoint(_))
    }

    /// Whether `warmup` applies to the step: the query steps and the load steps l.i1 and l.i2
    /// (l.i0 fills empty tables, l.x and scan are one pass each: nothing to warm up for).
    pub fn warms_up(self) -> bool {
        matches!(self, Step::LoadMore | Step::LoadMoreSmall) || self.is_query()
    }

    /// What the step writes into existing tables, as "step l.i1 would ... it" ends (`None`:
    /// it only reads; l.i0 replaces the tables instead).
    pub fn writes_into(self) -> Option<&'static str> {
        match self {
            Step::CreateIndexes => Some("add indexes to"),
            Step::LoadMore | Step::LoadMoreSmall => Some("insert and delete rows in"),
            Step::QueryRange(r) | Step::QueryPoint(r) if r > 0 => {
                Some("insert and delete rows (its background writer) in")
            }
            Step::LoadInitial | Step::QueryRange(_) | Step::QueryPoint(_) | Step::Scan => None,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::LoadInitial => write!(f, "l.i0"),
            Step::CreateIndexes => write!(f, "l.x"),
            Step::LoadMore => write!(f, "l.i1"),
            Step::LoadMoreSmall => write!(f, "l.i2"),
            Step::QueryRange(n) => write!(f, "qr{n}"),
            Step::QueryPoint(n) => write!(f, "qp{n}"),
            Step::Scan => write!(f, "scan"),
        }
    }
}

impl FromStr for Step {
    type Err = UsageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            UsageError::new(format!(
                "unknown step {s:?}: expected l.i0, l.x, l.i1, l.i2, qrN, qpN (N = background \
                 insert rate per client, rows/s, e.g. qr100) or scan"
            ))
        };
        let rate = |n: &str| n.parse::<u32>().map_err(|_| bad());
        match s {
            "l.i0" => Ok(Step::LoadInitial),
            "l.x" => Ok(Step::CreateIndexes),
            "l.i1" => Ok(Step::LoadMore),
            "l.i2" => Ok(Step::LoadMoreSmall),
            "scan" => Ok(Step::Scan),
            _ if s.starts_with("qr") => Ok(Step::QueryRange(rate(&s[2..])?)),
            _ if s.starts_with("qp") => Ok(Step::QueryPoint(rate(&s[2..])?)),
            _ => Err(bad()),
        }
    }
}

impl Serialize for Step {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Step {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Parameters of the Insert Benchmark (see `../shared/docs/insert-benchmark.md`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InsertBenchmarkSpec {
    /// Number of clients.
    pub clients: usize,
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// Rows per client loaded by l.i0.
    pub l0_rows: u64,
    /// Rows per client inserted by l.i1.
    pub l1_rows: u64,
    /// Rows per client inserted by l.i2.
    pub l2_rows: u64,
    /// Rows per INSERT in l.i0.
    pub l0_batch: usize,
    /// Rows per INSERT (and DELETE) in l.i1.
    pub l1_batch: usize,
    /// Rows per INSERT (and DELETE) in l.i2.
    pub l2_batch: usize,
    /// Rows per INSERT (and DELETE) of the background writer in query steps.
    pub writer_batch: usize,
    /// Duration of each query step, seconds.
    pub query_seconds: u64,
    /// Seconds each of the steps l.i1, l.i2, qrN and qpN runs before its measured part, not
    /// counted (its ops are in no histogram, series or rate; a load step's warm-up rows still
    /// count towards its rows). Results written before warm-ups read back as 0; not written
    /// when 0, so that an experiment's cells without one keep their fingerprints.
    #[serde(default, skip_serializing_if = "crate::serde_skip::is_zero")]
    pub warmup: u64,
    /// Delete the oldest rows at the insert rate in l.i1, l.i2 and query steps.
    pub deletes: bool,
    /// Secondary indexes created by l.x (0-3, in the order marketsegment, registersegment, pdc).
    pub secondary_indexes: usize,
    /// One table per client, or one shared table.
    pub table_mode: TableMode,
    /// Table name prefix (`pi` gives pi1, pi2, ...).
    pub table_prefix: String,
    /// How l.x issues its DDL.
    pub index_ddl: IndexDdl,
    /// Minimum length of `data`.
    pub data_min: usize,
    /// Maximum length of `data`.
    pub data_max: usize,
    /// Percent of each `data` value that is random (the rest is padding).
    pub data_random_pct: u8,
    /// `cashregisterid` is uniform in [0, cashregisters).
    pub cashregisters: u32,
    /// `customerid` is uniform in [0, customers).
    pub customers: u32,
    /// `productid` is uniform in [0, products).
    pub products: u32,
    /// `price` is uniform in [0, max_price).
    pub max_price: f64,
    /// Seed of every random value; the same seed gives the same rows.
    pub seed: u64,
    /// Tries per statement on transient errors (deadlock, serialization failure, lock wait
    /// timeout, busy, too many connections); 1 = no retry.
    #[serde(default = "default_max_tries")]
    pub max_tries: u32,
    /// Reconnects per client thread after lost connections; 0 = fail at once.
    #[serde(default = "default_max_reconnects")]
    pub max_reconnects: u32,
    /// A step whose retried statements exceed this percent of its statements fails.
    #[serde(default = "default_max_error_pct")]
    pub max_error_pct: f64,
    /// Concurrent scanners of the scan step, each on a connection of its own; `None`: one per
    /// client (`--scan-clients`). Results written before it read back as one per client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_clients: Option<usize>,
}

impl Default for InsertBenchmarkSpec {
    fn default() -> Self {
        InsertBenchmarkSpec {
            clients: 2,
            steps: Step::default_sequence(),
            // Sized so that each step with per-second ops lasts over 4 s, 3 full seconds (what
            // a step needs to be compared, report/compare/steady.rs), on 2 shared cores with SQLite,
            // where l.i0 loaded 0.5-1.6M rows/s and l.i2 inserted 7-13.5k rows/s (with 8M+
            // rows in the tables); the default run then takes about two minutes.
            l0_rows: 5_000_000,
            l1_rows: 140_000,
            l2_rows: 35_000,
            l0_batch: 100,
            l1_batch: 50,
            l2_batch: 5,
            writer_batch: 10,
            query_seconds: 10,
            warmup: 0,
            deletes: true,
            secondary_indexes: 3,
            table_mode: TableMode::PerClient,
            table_prefix: "pi".to_string(),
            index_ddl: IndexDdl::Separate,
            data_min: 10,
            data_max: 20,
            data_random_pct: 50,
            cashregisters: 1_000,
            customers: 100_000,
            products: 10_000,
            max_price: 500.0,
            seed: 42,
            max_tries: default_max_tries(),
            max_reconnects: default_max_reconnects(),
            max_error_pct: default_max_error_pct(),
            scan_clients: None,
        }
    }
}

impl InsertBenchmarkSpec {
    /// The secondary indexes l.x creates.
    pub fn indexes(&self) -> &'static [SecondaryIndex] {
        &SecondaryIndex::ALL[..self.secondary_indexes]
    }

    /// A generous estimate of the space the database takes by the end of the run, bytes: every
    /// row the run inserts (deleted rows' space is not reclaimed at once), ~60 bytes of columns
    /// and row overhead plus `data`, and ~60% more per secondary index.
    pub fn estimated_db_bytes(&self) -> u64 {
        let query_rows: u64 = self
            .steps
            .iter()
            .map(|s| match s {
                Step::QueryRange(r) | Step::QueryPoint(r) => {
                    (*r as u64).saturating_mul(self.query_seconds)
                }
                _ => 0,
            })
            .fold(0u64, u64::saturating_add);
        let count = |step: Step, rows: u64| if self.steps.contains(&step) { rows } else { 0 };
        let rows_per_client = count(Step::LoadInitial, self.l0_rows)
            .saturating_add(count(Step::LoadMore, self.l1_rows))
            .saturating_add(count(Step::LoadMoreSmall, self.l2_rows))
            .saturating_add(query_rows);
        let row_bytes = 60 + self.data_max as u64;
        let index_factor = 10 + 6 * self.secondary_indexes as u64; // tenths
        rows_per_client
            .saturating_mul(self.clients as u64)
            .saturating_mul(row_bytes)
            .saturating_mul(index_factor)
            / 10
    }

    /// Number of tables.
    pub fn table_count(&self) -> usize {
        match self.table_mode {
            TableMode::PerClient => self.clients,
            TableMode::Shared => 1,
        }
    }

    /// Checks every value; the first problem found is returned, naming fields as `names` does.
    pub fn validate(&self, names: FieldNames) -> Result<(), SpecError> {
        self.check_load(names)?;
        self.check_queries(names)?;
        check_retries(self.max_tries, self.max_error_pct, names)?;
        self.check_values(names)?;
        self.check_table_prefix(names)
    }

    /// Clients, steps, and each load step's rows and batch.
    fn check_load(&self, n: FieldNames) -> Result<(), SpecError> {
        in_range(n, "clients", self.clients, 1..=1024)?;
        if self.steps.is_empty() {
            return refuse(
                "steps",
                format!("{} is empty: name at least one step", n("steps")),
            );
        }
        let loads = [
            ("l0_rows", self.l0_rows, "l0_batch", self.l0_batch),
            ("l1_rows", self.l1_rows, "l1_batch", self.l1_batch),
            ("l2_rows", self.l2_rows, "l2_batch", self.l2_batch),
        ];
        let steps = [Step::LoadInitial, Step::LoadMore, Step::LoadMoreSmall];
        for ((field, rows, batch_field, batch), step) in loads.into_iter().zip(steps) {
            in_range(n, batch_field, batch, 1..=10_000)?;
            if rows > MAX_ROWS {
                let expected = format!("expected at most {MAX_ROWS} rows per client");
                return Err(out_of_range(n, field, rows, expected));
            }
            if !self.steps.contains(&step) {
                continue;
            }
            if rows == 0 {
                return refuse(
                    field,
                    format!("{} must be greater than 0 when step {step} runs", n(field)),
                );
            }
            if batch as u64 > rows {
                return refuse(
                    batch_field,
                    format!(
                        "{} {batch} is larger than {} {rows}: a batch cannot exceed the rows",
                        n(batch_field),
                        n(field)
                    ),
                );
            }
        }
        Ok(())
    }

    /// The query steps: their writer's batch and their seconds; the secondary indexes range
    /// queries (and l.x) need, created before them.
    /// Scanners of the scan step: [`InsertBenchmarkSpec::scan_clients`], or one per client.
    pub fn scanners(&self) -> usize {
        self.scan_clients.unwrap_or(self.clients)
    }

    fn check_queries(&self, n: FieldNames) -> Result<(), SpecError> {
        if let Some(c) = self.scan_clients {
            in_range(n, "scan_clients", c, 1..=1024)?;
        }
        in_range(n, "writer_batch", self.writer_batch, 1..=MAX_BATCH)?;
        if self.steps.iter().any(|s| s.is_query()) {
            in_range(n, "query_seconds", self.query_seconds, 1..=MAX_SECONDS)?;
        }
        in_range(n, "warmup", self.warmup, 0..=MAX_SECONDS)?;
        if self.warmup > 0 && !self.steps.iter().any(|s| s.warms_up()) {
            return refuse(
                "warmup",
                format!(
                    "{} applies to l.i1, l.i2, qrN and qpN, and {} has none of them",
                    n("warmup"),
                    n("steps")
                ),
            );
        }
        in_range(n, "secondary_indexes", self.secondary_indexes, 0..=3)?;
        if self.steps.iter().any(|s| matches!(s, Step::QueryRange(_)))
            && self.secondary_indexes == 0
        {
            return refuse(
                "secondary_indexes",
                format!(
                    "qrN steps need at least one secondary index: set {} 1..=3",
                    n("secondary_indexes")
                ),
            );
        }
        // l.i0 creates the tables without secondary indexes: a range query after it needs an
        // l.x in between.
        if let Some(load) = self.steps.iter().position(|s| *s == Step::LoadInitial)
            && let Some(q) = self.steps[load..]
                .iter()
                .position(|s| matches!(s, Step::QueryRange(_)))
                .map(|q| load + q)
            && !self.steps[load..q].contains(&Step::CreateIndexes)
        {
            return refuse(
                "steps",
                format!(
                    "{} runs {} after l.i0 without l.x: range queries need the secondary \
                     indexes, which l.x creates (e.g. l.i0,l.x,{})",
                    n("steps"),
                    self.steps[q],
                    self.steps[q]
                ),
            );
        }
        if self.steps.contains(&Step::CreateIndexes) && self.secondary_indexes == 0 {
            return refuse(
                "secondary_indexes",
                format!("step l.x needs {} 1..=3", n("secondary_indexes")),
            );
        }
        Ok(())
    }

    /// The generated values: `data`'s lengths and randomness, the id ranges, the price.
    fn check_values(&self, n: FieldNames) -> Result<(), SpecError> {
        if self.data_min > self.data_max {
            return refuse(
                "data_min",
                format!(
                    "{} {} is larger than {} {}",
                    n("data_min"),
                    self.data_min,
                    n("data_max"),
                    self.data_max
                ),
            );
        }
        if self.data_max > 4000 {
            let expected = "data is varchar(4000)";
            return Err(out_of_range(n, "data_max", self.data_max, expected));
        }
        in_range(n, "data_random_pct", self.data_random_pct, 0..=100)?;
        for (field, v) in [
            ("cashregisters", self.cashregisters),
            ("customers", self.customers),
            ("products", self.products),
        ] {
            in_range(n, field, v, 1..=i32::MAX as u32)?;
        }
        if !(self.max_price.is_finite() && self.max_price > 0.0 && self.max_price <= MAX_PRICE) {
            let price = super::number(self.max_price);
            let expected = format!("expected a positive number up to {MAX_PRICE:e}");
            return Err(out_of_range(n, "max_price", price, expected));
        }
        Ok(())
    }

    /// The table name prefix: the start of an SQL identifier.
    fn check_table_prefix(&self, n: FieldNames) -> Result<(), SpecError> {
        let prefix = &self.table_prefix;
        let ok = prefix
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            && prefix.len() <= 32;
        if ok {
            return Ok(());
        }
        refuse(
            "table_prefix",
            format!(
                "{} {prefix:?} is not allowed: use letters, digits and _ (max 32), starting with a \
                 letter",
                n("table_prefix")
            ),
        )
    }
}

impl super::Layered for InsertBenchmarkSpec {
    /// `l2_rows` left unset is a quarter of `l1_rows` (at least 1).
    const DERIVED: &'static [super::layers::Derived] = &[("l2_rows", |m| {
        let l1 = m.get("l1_rows").and_then(|v| v.as_u64()).unwrap_or(0);
        (l1 / 4).max(1).into()
    })];

    /// Rows of the load steps and the query steps' seconds.
    fn scale(&mut self, scale: f64) {
        self.l0_rows = scaled(self.l0_rows, scale);
        self.l1_rows = scaled(self.l1_rows, scale);
        self.l2_rows = scaled(self.l2_rows, scale);
        self.query_seconds = scaled(self.query_seconds, scale);
    }
}

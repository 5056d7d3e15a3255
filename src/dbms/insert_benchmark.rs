//! The Insert Benchmark's operations ([`InsertBenchmarkConnection`]) and the values they take:
//! tables, row batches, the secondary indexes and their range queries.

use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Number of ids in one point query (`transactionid IN (...)`).
pub const POINT_QUERY_IDS: usize = 10;
/// `LIMIT` of every range query.
pub const RANGE_QUERY_LIMIT: usize = 10;

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

/// Who made a table of a benchmark's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableOrigin {
    /// There is no such table.
    Missing,
    /// ibench created it (it carries ibench's mark), so ibench may drop it.
    Ibench,
    /// Someone else did: ibench must not drop it unless the user says so.
    Other,
}

/// The mark ibench leaves on the tables it creates (a table comment, or a comment in the
/// table's SQL where the DBMS keeps no table comments).
pub const TABLE_MARK: &str = "created by ibench";

/// A connection's Insert Benchmark operations, used by one client thread. See the module docs
/// of `dbms` for the contract.
pub trait InsertBenchmarkConnection: Send {
    /// Drops `table` if it exists and creates it empty, with its primary key only and
    /// [`TABLE_MARK`]. Callers check [`InsertBenchmarkConnection::table_origin`] first: a
    /// table ibench did not create is only dropped when the user said so.
    fn create_table(&mut self, table: &Table) -> Result<()>;

    /// Whether `table` exists and who created it.
    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin>;

    /// Creates `indexes` on `table`: one statement per index, or one statement for all when
    /// `combined` (only where the descriptor allows it: [`super::Descriptor::combined_index_ddl`]).
    fn create_indexes(
        &mut self,
        table: &Table,
        indexes: &[SecondaryIndex],
        combined: bool,
    ) -> Result<()>;

    /// Names of the secondary indexes on `table`.
    fn index_names(&mut self, table: &Table) -> Result<Vec<String>>;

    /// Whether `table` exists. Default: [`InsertBenchmarkConnection::table_origin`] says so.
    fn table_exists(&mut self, table: &Table) -> Result<bool> {
        Ok(self.table_origin(table)? != TableOrigin::Missing)
    }

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
    /// [`RangeQuery::Register`], where a start between two integers starts at the next one, as
    /// `cashregisterid >= start` does) and returns the number of rows read (at most 10).
    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize>;

    /// Runs a point query for `ids` (at most [`POINT_QUERY_IDS`]); clears `found` and fills it
    /// with the `transactionid` of each row returned. Returns the number of rows.
    fn point_query(&mut self, table: &Table, ids: &[i64], found: &mut Vec<i64>) -> Result<usize>;

    /// Whether [`InsertBenchmarkConnection::scan`] is implemented (the scan step is refused
    /// before anything starts otherwise). Default: no.
    fn can_scan(&self) -> bool {
        false
    }

    /// Reads every row of `table` through `index` (the primary key for `None`), a full scan
    /// in the index's order, counted by the DBMS (no row is sent); returns the rows read. The
    /// scan step. Default: refused (see [`InsertBenchmarkConnection::can_scan`]).
    fn scan(&mut self, table: &Table, index: Option<SecondaryIndex>) -> Result<u64> {
        let _ = index;
        anyhow::bail!(
            "cannot scan {}: this DBMS's connection has no full-index scan",
            table.name
        )
    }
}

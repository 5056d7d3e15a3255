//! One SQLite connection: the Insert Benchmark's and the microbenchmarks' operations, with
//! statements prepared once and kept in rusqlite's statement cache.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::{Result, bail};
use rusqlite::{Connection as RawConnection, params};

use super::Counters;
use crate::dbms::literal::{self, Literal};
use crate::dbms::micro::{
    Args, Dialect, MicroConnection, Rows, SbtestRows, Shape, Statement, Transactions,
    k_index_name, question_mark,
};
use crate::dbms::{
    InsertBenchmarkConnection, RangeQuery, RowBatch, SecondaryIndex, StatementCache, TABLE_MARK,
    Table, TableOrigin,
};

const CREATE_TABLE: &str = "CREATE TABLE {t} (
    transactionid INTEGER PRIMARY KEY AUTOINCREMENT,
    dateandtime TEXT NOT NULL,
    cashregisterid INTEGER NOT NULL,
    customerid INTEGER NOT NULL,
    productid INTEGER NOT NULL,
    price REAL NOT NULL,
    data TEXT /* created by ibench */)";
const DROP_TABLE: &str = "DROP TABLE IF EXISTS {t}";
const INSERT_PREFIX: &str =
    "INSERT INTO {t} (dateandtime, cashregisterid, customerid, productid, price, data) VALUES ";
const INSERT_ROW: &str = "(?,?,?,?,?,?)";
const DELETE_RANGE: &str = "DELETE FROM {t} WHERE transactionid >= ?1 AND transactionid < ?2";
const MIN_ID: &str = "SELECT min(transactionid) FROM {t}";
const MAX_ID: &str = "SELECT max(transactionid) FROM {t}";
const COUNT_ROWS: &str = "SELECT count(*) FROM {t}";
const QUERY_MARKET: &str =
    "SELECT price, customerid FROM {t} WHERE price >= ?1 ORDER BY price, customerid LIMIT 10";
const QUERY_REGISTER: &str = "SELECT cashregisterid, price, customerid FROM {t} \
     WHERE cashregisterid >= ?1 ORDER BY cashregisterid, price, customerid LIMIT 10";
const QUERY_PDC: &str = "SELECT price, dateandtime, customerid FROM {t} \
     WHERE price >= ?1 ORDER BY price, dateandtime, customerid LIMIT 10";
const QUERY_POINT: &str = "SELECT transactionid, dateandtime, cashregisterid, customerid, \
     productid, price, data FROM {t} WHERE transactionid IN (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
const CREATE_INDEX: &str = "CREATE INDEX {i} ON {t} ({c})";
/// The scan step: every row through the rowid b-tree (the primary key), a column of each read.
const SCAN_PK: &str = "SELECT count(dateandtime) FROM {t} NOT INDEXED";
/// The scan step: every entry of a secondary index (`{c}`, its first column).
const SCAN_INDEX: &str = "SELECT count({c}) FROM {t} INDEXED BY {i}";
const INDEX_NAMES: &str = "SELECT name FROM sqlite_master \
     WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL ORDER BY name";
/// SQLite keeps no table comments, but it keeps the table's SQL with the comment in it.
const TABLE_SQL: &str = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1";
const CREATE_SBTEST: &str = "CREATE TABLE {t} (
    id INTEGER PRIMARY KEY,
    k INTEGER NOT NULL DEFAULT 0,
    c CHAR(120) NOT NULL DEFAULT '',
    pad CHAR(60) NOT NULL DEFAULT '' /* created by ibench */)";
const INSERT_SBTEST_PREFIX: &str = "INSERT INTO {t} (id, k, c, pad) VALUES ";
const INSERT_SBTEST_ROW: &str = "(?,?,?,?)";
const CREATE_SBTEST_INDEX: &str = "CREATE INDEX {i} ON {t} (k)";
/// The insert benchmark's table: `id` assigned by SQLite (the rowid, appended).
const CREATE_AUTO_INCREMENT: &str = CREATE_SBTEST;
/// The random-PK insert benchmark's table, clustered on its text key as InnoDB would be.
const CREATE_RANDOM_PK: &str = "CREATE TABLE {t} (
    id CHAR(26) NOT NULL PRIMARY KEY,
    k INTEGER NOT NULL DEFAULT 0,
    c CHAR(120) NOT NULL DEFAULT '',
    pad CHAR(60) NOT NULL DEFAULT '' /* created by ibench */) WITHOUT ROWID";
const BEGIN: &str = "BEGIN";
/// A transaction that will write takes the write lock at once: two deferred ones that both
/// read and then write would deadlock on the upgrade (SQLITE_BUSY without waiting).
const BEGIN_WRITE: &str = "BEGIN IMMEDIATE";
const COMMIT: &str = "COMMIT";
const ROLLBACK: &str = "ROLLBACK";
/// Prepared statements kept per connection: a microbenchmark may use a dozen statements on
/// each of several tables, more than rusqlite's default of 16.
const STATEMENT_CACHE: usize = 256;

/// SQLite's placeholders and index hints (`INDEXED BY`).
static DIALECT: Dialect = Dialect {
    placeholder: question_mark,
    index_hint: Some(|index| format!(" INDEXED BY {index}")),
    for_update: false,
    tiny_int: "smallint",
    date_time: "timestamp",
    no_foreign_keys: Some("SQLite cannot add them to a table it has created"),
    isolation: "SERIALIZABLE (SQLite: one writer at a time)",
};

/// SQL text for one table, built once per connection and used as the prepared-statement key.
struct TableSql {
    delete_range: String,
    min_id: String,
    max_id: String,
    count_rows: String,
    market: String,
    register: String,
    pdc: String,
    point: String,
}

impl TableSql {
    fn new(table: &str) -> Self {
        let t = |sql: &str| sql.replace("{t}", table);
        TableSql {
            delete_range: t(DELETE_RANGE),
            min_id: t(MIN_ID),
            max_id: t(MAX_ID),
            count_rows: t(COUNT_ROWS),
            market: t(QUERY_MARKET),
            register: t(QUERY_REGISTER),
            pdc: t(QUERY_PDC),
            point: t(QUERY_POINT),
        }
    }
}

/// The multi-row INSERT of `rows` rows into `table`.
fn insert_sql(table: &str, rows: usize) -> String {
    let mut sql = INSERT_PREFIX.replace("{t}", table);
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str(INSERT_ROW);
    }
    sql
}

/// One SQLite connection with its statement texts; statements are prepared once and kept in
/// rusqlite's statement cache.
pub(super) struct SqliteConnection {
    conn: RawConnection,
    sql: Vec<Option<TableSql>>,
    /// SQL text of each multi-row INSERT, by table and batch size.
    inserts: StatementCache<usize, String>,
    /// SQL text of each microbenchmark statement, by table and statement.
    micro_sql: StatementCache<usize, String>,
    /// Last formatted `dateandtime` (Unix seconds, text), so a batch formats it once per second.
    date_cache: (i64, String),
    /// Plain-SQL mode: values inlined, statements compiled every time (no statement cache).
    plain: bool,
    /// Where this connection's page-cache figures go when it closes.
    counters: Arc<Counters>,
}

impl Drop for SqliteConnection {
    fn drop(&mut self) {
        use rusqlite::ffi;
        let ops = [
            (ffi::SQLITE_DBSTATUS_CACHE_HIT, &self.counters.cache_hit),
            (ffi::SQLITE_DBSTATUS_CACHE_MISS, &self.counters.cache_miss),
            (ffi::SQLITE_DBSTATUS_CACHE_WRITE, &self.counters.cache_write),
            (ffi::SQLITE_DBSTATUS_CACHE_SPILL, &self.counters.cache_spill),
        ];
        for (op, total) in ops {
            let (mut current, mut high) = (0, 0);
            // SAFETY: the handle is this open connection's; sqlite3_db_status only reads
            // counters into the two integers.
            let rc = unsafe {
                ffi::sqlite3_db_status(self.conn.handle(), op, &mut current, &mut high, 0)
            };
            if rc == ffi::SQLITE_OK {
                total.fetch_add(current.max(0) as u64, Ordering::Relaxed);
            }
        }
    }
}

/// A statement for `sql`: cached and bound to `values` when prepared; compiled from the text
/// with `values` inlined in plain mode.
fn statement_for<'c>(
    conn: &'c RawConnection,
    sql: &str,
    values: &[Literal<'_>],
    plain: bool,
) -> Result<rusqlite::CachedStatement<'c>> {
    if plain {
        // Flush first, so the statement below is compiled now rather than taken from the cache.
        conn.flush_prepared_statement_cache();
        return Ok(conn.prepare_cached(&literal::bind(sql, values, false))?);
    }
    let mut stmt = conn.prepare_cached(sql)?;
    for (i, v) in values.iter().enumerate() {
        match *v {
            Literal::Int(x) => stmt.raw_bind_parameter(i + 1, x)?,
            Literal::Float(x) => stmt.raw_bind_parameter(i + 1, x)?,
            Literal::Str(x) => stmt.raw_bind_parameter(i + 1, x)?,
        }
    }
    Ok(stmt)
}

impl SqliteConnection {
    /// A connection with nothing prepared yet.
    pub(super) fn new(conn: RawConnection, plain: bool, counters: Arc<Counters>) -> Self {
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        SqliteConnection {
            conn,
            sql: Vec::new(),
            inserts: StatementCache::new(),
            micro_sql: StatementCache::new(),
            date_cache: (i64::MIN, String::new()),
            plain,
            counters,
        }
    }

    /// The connection and the SQL of `table` (built on first use), borrowed apart.
    fn parts(&mut self, table: &Table) -> (&RawConnection, &mut TableSql) {
        if self.sql.len() <= table.id {
            self.sql.resize_with(table.id + 1, || None);
        }
        let sql = self.sql[table.id].get_or_insert_with(|| TableSql::new(&table.name));
        (&self.conn, sql)
    }
}

impl SqliteConnection {
    /// Whether `table` exists and carries ibench's mark in its SQL.
    fn origin(&self, table: &Table) -> Result<TableOrigin> {
        let sql: Option<String> = match self
            .conn
            .query_row(TABLE_SQL, params![table.name], |r| r.get(0))
        {
            Ok(sql) => sql,
            Err(rusqlite::Error::QueryReturnedNoRows) => return Ok(TableOrigin::Missing),
            Err(e) => return Err(e.into()),
        };
        Ok(if sql.is_some_and(|s| s.contains(TABLE_MARK)) {
            TableOrigin::Ibench
        } else {
            TableOrigin::Other
        })
    }
}

impl InsertBenchmarkConnection for SqliteConnection {
    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin> {
        self.origin(table)
    }

    fn create_table(&mut self, table: &Table) -> Result<()> {
        self.conn
            .execute_batch(&DROP_TABLE.replace("{t}", &table.name))?;
        self.conn
            .execute_batch(&CREATE_TABLE.replace("{t}", &table.name))?;
        Ok(())
    }

    fn create_indexes(
        &mut self,
        table: &Table,
        indexes: &[SecondaryIndex],
        combined: bool,
    ) -> Result<()> {
        if combined {
            bail!("SQLite creates one index per statement; combined index DDL is not supported");
        }
        for index in indexes {
            let sql = CREATE_INDEX
                .replace("{i}", &index.name_on(&table.name))
                .replace("{t}", &table.name)
                .replace("{c}", &index.columns().join(", "));
            self.conn.execute_batch(&sql)?;
        }
        Ok(())
    }

    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(INDEX_NAMES)?;
        let names = stmt
            .query_map(params![table.name], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(names)
    }

    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64> {
        if self.date_cache.0 != rows.dateandtime {
            self.date_cache = (rows.dateandtime, crate::dbms::datetime_text(rows.dateandtime));
        }
        let n = rows.len();
        let date_cache = std::mem::take(&mut self.date_cache.1);
        if self.plain {
            let text = format!(
                "{}{}",
                INSERT_PREFIX.replace("{t}", &table.name),
                literal::values(rows, &date_cache, false)
            );
            self.date_cache.1 = date_cache;
            self.conn.execute_batch(&text)?;
            return Ok(self.conn.last_insert_rowid());
        }
        let sql = self
            .inserts
            .get_or_insert_with(table, n, || insert_sql(&table.name, n));
        let conn = &self.conn;
        let result = (|| {
            let mut stmt = conn.prepare_cached(sql)?;
            let mut p = 1;
            for i in 0..n {
                stmt.raw_bind_parameter(p, date_cache.as_str())?;
                stmt.raw_bind_parameter(p + 1, rows.cashregisterid[i])?;
                stmt.raw_bind_parameter(p + 2, rows.customerid[i])?;
                stmt.raw_bind_parameter(p + 3, rows.productid[i])?;
                stmt.raw_bind_parameter(p + 4, rows.price[i])?;
                stmt.raw_bind_parameter(p + 5, rows.data(i))?;
                p += 6;
            }
            stmt.raw_execute()?;
            Ok(conn.last_insert_rowid())
        })();
        self.date_cache.1 = date_cache;
        result
    }

    fn delete_range(&mut self, table: &Table, lo: i64, hi: i64) -> Result<u64> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        let values = [Literal::Int(lo), Literal::Int(hi)];
        let n = statement_for(conn, &sql.delete_range, &values, plain)?.raw_execute()?;
        Ok(n as u64)
    }

    fn min_id(&mut self, table: &Table) -> Result<Option<i64>> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        Ok(statement_for(conn, &sql.min_id, &[], plain)?.query_row([], |r| r.get(0))?)
    }

    fn max_id(&mut self, table: &Table) -> Result<Option<i64>> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        Ok(statement_for(conn, &sql.max_id, &[], plain)?.query_row([], |r| r.get(0))?)
    }

    fn count_rows(&mut self, table: &Table) -> Result<u64> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        let n: i64 = statement_for(conn, &sql.count_rows, &[], plain)?.query_row([], |r| r.get(0))?;
        Ok(n as u64)
    }

    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        let (text, value) = match query {
            RangeQuery::Market => (&sql.market, Literal::Float(start)),
            RangeQuery::Register => (&sql.register, Literal::Int(start.ceil() as i64)),
            RangeQuery::Pdc => (&sql.pdc, Literal::Float(start)),
        };
        let mut stmt = statement_for(conn, text, &[value], plain)?;
        let mut rows = stmt.raw_query();
        let mut n = 0;
        while rows.next()?.is_some() {
            n += 1;
        }
        Ok(n)
    }

    fn point_query(&mut self, table: &Table, ids: &[i64], found: &mut Vec<i64>) -> Result<usize> {
        found.clear();
        if ids.is_empty() {
            return Ok(0);
        }
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        let values = literal::point_ids(ids);
        let mut stmt = statement_for(conn, &sql.point, &values, plain)?;
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            found.push(row.get(0)?);
        }
        Ok(found.len())
    }

    fn can_scan(&self) -> bool {
        true
    }

    fn scan(&mut self, table: &Table, index: Option<SecondaryIndex>) -> Result<u64> {
        let sql = match index {
            None => SCAN_PK.replace("{t}", &table.name),
            Some(i) => SCAN_INDEX
                .replace("{t}", &table.name)
                .replace("{i}", &i.name_on(&table.name))
                .replace("{c}", i.columns()[0]),
        };
        let n: i64 = self.conn.query_row(&sql, [], |r| r.get(0))?;
        Ok(n as u64)
    }
}

impl Transactions for SqliteConnection {
    fn begin(&mut self, writes: bool) -> Result<()> {
        let sql = if writes { BEGIN_WRITE } else { BEGIN };
        self.conn.prepare_cached(sql)?.raw_execute()?;
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.conn.prepare_cached(COMMIT)?.raw_execute()?;
        Ok(())
    }

    fn rollback(&mut self) -> Result<()> {
        if !self.conn.is_autocommit() {
            self.conn.prepare_cached(ROLLBACK)?.raw_execute()?;
        }
        Ok(())
    }
}

impl MicroConnection for SqliteConnection {
    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }

    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin> {
        self.origin(table)
    }

    fn create_table(&mut self, table: &Table, shape: Shape) -> Result<()> {
        // The table is new: its statements' texts are the same, but keep nothing of the old.
        self.micro_sql.forget(table);
        self.conn.flush_prepared_statement_cache();
        let t = |sql: &str| sql.replace("{t}", &table.name);
        self.conn.execute_batch(&t(DROP_TABLE))?;
        let create = match shape {
            Shape::Sbtest => CREATE_SBTEST,
            Shape::AutoIncrement => CREATE_AUTO_INCREMENT,
            Shape::RandomPk => CREATE_RANDOM_PK,
            Shape::Defined(def) => {
                let sql = def.create_sql(&table.name, &DIALECT, Some(TABLE_MARK));
                self.conn.execute_batch(&sql)?;
                return Ok(());
            }
        };
        self.conn.execute_batch(&t(create))?;
        if shape != Shape::Sbtest {
            let index = t(CREATE_SBTEST_INDEX).replace("{i}", &k_index_name(&table.name));
            self.conn.execute_batch(&index)?;
        }
        Ok(())
    }

    fn insert_sbtest(&mut self, table: &Table, rows: &SbtestRows) -> Result<()> {
        let mut sql = INSERT_SBTEST_PREFIX.replace("{t}", &table.name);
        for i in 0..rows.len() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(INSERT_SBTEST_ROW);
        }
        let mut stmt = self.conn.prepare_cached(&sql)?;
        for i in 0..rows.len() {
            let p = 4 * i + 1;
            stmt.raw_bind_parameter(p, rows.id[i])?;
            stmt.raw_bind_parameter(p + 1, rows.k[i])?;
            stmt.raw_bind_parameter(p + 2, rows.c[i].as_str())?;
            stmt.raw_bind_parameter(p + 3, rows.pad[i].as_str())?;
        }
        stmt.raw_execute()?;
        Ok(())
    }

    fn create_sbtest_index(&mut self, table: &Table, index: &str) -> Result<()> {
        let sql = CREATE_SBTEST_INDEX
            .replace("{i}", index)
            .replace("{t}", &table.name);
        self.conn.execute_batch(&sql)?;
        Ok(())
    }

    fn execute(
        &mut self,
        table: &Table,
        statement: &'static Statement,
        args: Args<'_>,
    ) -> Result<u64> {
        self.run_micro(table, statement, args, None)
    }

    fn fetch(
        &mut self,
        table: &Table,
        statement: &'static Statement,
        args: Args<'_>,
        out: &mut Rows,
    ) -> Result<u64> {
        self.run_micro(table, statement, args, Some(out))
    }
}

impl SqliteConnection {
    /// Runs a microbenchmark statement; the values of the rows it returned go to `out` when
    /// given, else each is read and dropped, as a client would.
    fn run_micro(
        &mut self,
        table: &Table,
        statement: &'static Statement,
        args: Args<'_>,
        mut out: Option<&mut Rows>,
    ) -> Result<u64> {
        let sql = self
            .micro_sql
            .get_or_insert_with(table, statement.key(), || {
                statement.sql(&table.name, &DIALECT)
            });
        let values: Vec<Literal<'_>>;
        let mut stmt = if self.plain {
            values = args.iter().collect();
            statement_for(&self.conn, sql, &values, true)?
        } else {
            let mut stmt = self.conn.prepare_cached(sql)?;
            for (i, v) in args.iter().enumerate() {
                match v {
                    Literal::Int(x) => stmt.raw_bind_parameter(i + 1, x)?,
                    Literal::Float(x) => stmt.raw_bind_parameter(i + 1, x)?,
                    Literal::Str(x) => stmt.raw_bind_parameter(i + 1, x)?,
                }
            }
            stmt
        };
        let columns = stmt.column_count();
        if let Some(out) = out.as_deref_mut() {
            out.start(columns);
        }
        if statement.writes() {
            return Ok(stmt.raw_execute()? as u64);
        }
        let mut rows = stmt.raw_query();
        let mut n = 0;
        while let Some(row) = rows.next()? {
            for i in 0..columns {
                let v = row.get_ref(i)?;
                match out.as_deref_mut() {
                    None => {
                        // Read every value, as a client would.
                        std::hint::black_box(v);
                    }
                    Some(out) => push_value(out, v),
                }
            }
            n += 1;
        }
        Ok(n)
    }
}

/// Keeps one SQLite value in `out`.
fn push_value(out: &mut Rows, v: rusqlite::types::ValueRef<'_>) {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => out.push_null(),
        ValueRef::Integer(i) => out.push_int(i),
        ValueRef::Real(f) => out.push_float(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => out.push_text(t),
    }
}

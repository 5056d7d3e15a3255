//! One SQLite connection: the statements of the shared vocabulary (the microbenchmarks', TPC-C's
//! and the Insert Benchmark's, see `sql/insert_benchmark.rs`) prepared once and kept in
//! rusqlite's statement cache, and what only SQLite says: its tables, catalog and scan.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::Result;
use rusqlite::{Connection as RawConnection, params};

use super::Counters;
use crate::dbms::literal::{self, Literal};
use crate::dbms::sql::{
    Args, Dialect, GeneratedIds, InsertBenchmarkCatalog, Rows, SbtestRows, Shape, SqlConnection,
    Statement, TableSql, Transactions, question_mark,
};
use crate::dbms::{SecondaryIndex, StatementCache, TABLE_MARK, Table, TableOrigin};

const CREATE_TABLE: &str = "CREATE TABLE {t} (
    transactionid INTEGER PRIMARY KEY AUTOINCREMENT,
    dateandtime TEXT NOT NULL,
    cashregisterid INTEGER NOT NULL,
    customerid INTEGER NOT NULL,
    productid INTEGER NOT NULL,
    price REAL NOT NULL,
    data TEXT /* created by ibench */)";
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
    generated_ids: GeneratedIds::Last,
    range_hints: false,
    one_index_per_statement: Some("SQLite creates one index per statement"),
};

/// SQLite's tables: ibench's mark a comment in their SQL, the insert benchmarks' index on `k`
/// created after the table.
static TABLES: TableSql = TableSql {
    sbtest: CREATE_SBTEST,
    auto_increment: CREATE_AUTO_INCREMENT,
    random_pk: CREATE_RANDOM_PK,
    insert_benchmark: CREATE_TABLE,
    defined_options: "",
    defined_mark: Some(TABLE_MARK),
    mark: None,
    k_index: Some(CREATE_SBTEST_INDEX),
};

/// One SQLite connection with its statement texts; statements are prepared once and kept in
/// rusqlite's statement cache.
pub(super) struct SqliteConnection {
    conn: RawConnection,
    /// SQL text of each statement, by table and statement.
    statement_sql: StatementCache<usize, String>,
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
            statement_sql: StatementCache::new(),
            plain,
            counters,
        }
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

impl InsertBenchmarkCatalog for SqliteConnection {
    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(INDEX_NAMES)?;
        let names = stmt
            .query_map(params![table.name], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(names)
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

impl SqlConnection for SqliteConnection {
    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }

    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin> {
        self.origin(table)
    }

    fn create_table(&mut self, table: &Table, shape: Shape) -> Result<()> {
        // The table is new: its statements' texts are the same, but keep nothing of the old.
        self.statement_sql.forget(table);
        self.conn.flush_prepared_statement_cache();
        for (_, sql) in TABLES.replace(&table.name, shape, &DIALECT) {
            self.conn.execute_batch(&sql)?;
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

    fn last_insert_id(&mut self) -> Result<i64> {
        Ok(self.conn.last_insert_rowid())
    }

    fn run_statement(
        &mut self,
        table: &Table,
        statement: &'static Statement,
        args: Args<'_>,
        mut out: Option<&mut Rows>,
    ) -> Result<u64> {
        let sql = self
            .statement_sql
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

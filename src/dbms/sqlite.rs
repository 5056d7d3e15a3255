//! Embedded SQLite (the default target): one database file, WAL mode, one connection per
//! client thread.
//!
//! SQLite allows one writer at a time. That limit is the DBMS's behaviour and ibench reports
//! it, but it does not add to it: the busy handler below waits in steps of tens of
//! microseconds (SQLite's own handler sleeps whole milliseconds), up to the busy timeout, so
//! that writers queue for the lock instead of failing and without idle gaps that the DBMS did
//! not cause. Time spent waiting counts in the operation's response time.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rusqlite::{Connection as RawConnection, OpenFlags, params};

use crate::error::UsageError;

use super::literal::{self, Literal};
use super::{Connection, Dbms, DbmsKind, RangeQuery, RowBatch, SbtestRows, SecondaryIndex, Table};

/// Pragmas ibench applies before the user's own: WAL, as the Insert Benchmark expects, and the
/// synchronous level SQLite recommends with WAL.
pub const DEFAULT_PRAGMAS: &[(&str, &str)] = &[("journal_mode", "WAL"), ("synchronous", "NORMAL")];

/// Pragmas read back into the run's results as the effective settings.
const SETTINGS_PRAGMAS: &[&str] = &[
    "journal_mode",
    "synchronous",
    "cache_size",
    "page_size",
    "mmap_size",
    "busy_timeout",
    "wal_autocheckpoint",
    "temp_store",
    "locking_mode",
    "auto_vacuum",
    "cache_spill",
];

const CREATE_TABLE: &str = "CREATE TABLE {t} (
    transactionid INTEGER PRIMARY KEY AUTOINCREMENT,
    dateandtime TEXT NOT NULL,
    cashregisterid INTEGER NOT NULL,
    customerid INTEGER NOT NULL,
    productid INTEGER NOT NULL,
    price REAL NOT NULL,
    data TEXT)";
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
const INDEX_NAMES: &str = "SELECT name FROM sqlite_master \
     WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL ORDER BY name";
const TABLE_EXISTS: &str = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1";
const CREATE_SBTEST: &str = "CREATE TABLE {t} (
    id INTEGER PRIMARY KEY,
    k INTEGER NOT NULL DEFAULT 0,
    c CHAR(120) NOT NULL DEFAULT '',
    pad CHAR(60) NOT NULL DEFAULT '')";
const INSERT_SBTEST_PREFIX: &str = "INSERT INTO {t} (id, k, c, pad) VALUES ";
const INSERT_SBTEST_ROW: &str = "(?,?,?,?)";
const CREATE_SBTEST_INDEX: &str = "CREATE INDEX {i} ON {t} (k)";
const POINT_SELECT: &str = "SELECT c FROM {t} WHERE id = ?1";

/// An SQLite database file.
pub struct Sqlite {
    path: PathBuf,
    pragmas: Vec<(String, String)>,
    busy_timeout: Duration,
    plain: bool,
    counters: Arc<Counters>,
}

/// Counters of the clients' connections. SQLite keeps page-cache figures per connection
/// (`sqlite3_db_status`); each connection adds its own when it closes. WAL checkpoints are
/// counted by ibench's WAL hook, which does what SQLite's auto-checkpoint does (a passive
/// checkpoint once the WAL holds `wal_autocheckpoint` pages) and counts it.
#[derive(Debug, Default)]
struct Counters {
    cache_hit: AtomicU64,
    cache_miss: AtomicU64,
    cache_write: AtomicU64,
    cache_spill: AtomicU64,
    wal_commits: AtomicU64,
    checkpoints: AtomicU64,
    checkpoints_busy: AtomicU64,
}

/// Counters reported per op.
const KEY_COUNTERS: &[&str] = &[
    "sqlite.cache_miss",
    "sqlite.cache_write",
    "sqlite.checkpoints",
];

impl Sqlite {
    /// Opens (creating if needed) the database at `path`, checks that a connection works and
    /// that the pragmas are accepted.
    pub fn open(
        path: PathBuf,
        pragmas: Vec<(String, String)>,
        busy_timeout_ms: u64,
        plain: bool,
    ) -> Result<Self> {
        let known = RawConnection::open_in_memory()?;
        for (name, value) in &pragmas {
            validate_pragma(name, value)?;
            // SQLite ignores unknown pragmas silently; a typo must not pass for a setting.
            let n: i64 = known.query_row(
                "SELECT count(*) FROM pragma_pragma_list WHERE name = ?1",
                [name.to_ascii_lowercase()],
                |r| r.get(0),
            )?;
            if n == 0 {
                bail!(UsageError::new(format!(
                    "unknown SQLite pragma {name:?} in --sqlite-pragma (see sqlite.org/pragma.html)"
                )));
            }
        }
        let db = Sqlite {
            path,
            pragmas,
            busy_timeout: Duration::from_millis(busy_timeout_ms),
            plain,
            counters: Arc::default(),
        };
        // The first open checks the file and the pragmas: what fails here is the user's input.
        db.open_raw().map_err(|e| {
            UsageError::new(format!(
                "cannot use {} as an SQLite database: {e:#}",
                db.path.display()
            ))
        })?;
        Ok(db)
    }

    fn open_raw(&self) -> Result<RawConnection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = RawConnection::open_with_flags(&self.path, flags)
            .with_context(|| format!("cannot open SQLite database {}", self.path.display()))?;
        install_busy_handler(&mut conn, self.busy_timeout)?;
        let defaults = DEFAULT_PRAGMAS.iter().map(|(n, v)| (*n, *v));
        let user = self.pragmas.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        for (name, value) in defaults.chain(user) {
            // `PRAGMA x = y` may return a row (journal_mode does); read and ignore it.
            let sql = format!("PRAGMA {name} = {value}");
            conn.query_row(&sql, [], |_| Ok(()))
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(()),
                    e => Err(e),
                })
                .with_context(|| format!("PRAGMA {name} = {value}"))?;
        }
        Ok(conn)
    }
}

/// SQLITE_BUSY / SQLITE_LOCKED after the busy timeout: transient.
pub fn classify(e: &(dyn std::error::Error + 'static)) -> Option<super::ErrorKind> {
    match e.downcast_ref::<rusqlite::Error>()? {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            Some(super::ErrorKind::Transient)
        }
        _ => None,
    }
}

/// Pragma names and values are put into SQL text, so only plain words and numbers pass.
pub fn validate_pragma(name: &str, value: &str) -> Result<(), UsageError> {
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    };
    if !word(name) || !name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return Err(UsageError::new(format!(
            "invalid SQLite pragma name {name:?} in --sqlite-pragma: expected a word such as cache_size"
        )));
    }
    if !word(value) {
        return Err(UsageError::new(format!(
            "invalid value {value:?} for SQLite pragma {name} in --sqlite-pragma: expected a word or a number"
        )));
    }
    Ok(())
}

/// Waits for a lock in short sleeps (20 us doubling to 1 ms) until `timeout` has passed.
fn install_busy_handler(conn: &mut RawConnection, timeout: Duration) -> Result<()> {
    let mut first_busy = Instant::now();
    conn.busy_handler(Some(move |count: i32| {
        if count == 0 {
            first_busy = Instant::now();
        }
        if first_busy.elapsed() >= timeout {
            return false;
        }
        let sleep_us = (20u64 << count.clamp(0, 6)).min(1_000);
        std::thread::sleep(Duration::from_micros(sleep_us));
        true
    }))?;
    Ok(())
}

impl Dbms for Sqlite {
    fn kind(&self) -> DbmsKind {
        DbmsKind::Sqlite
    }

    fn connect(&self) -> Result<Box<dyn Connection>> {
        let mut conn = self.open_raw()?;
        let threshold: i64 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))?;
        if threshold > 0 {
            let c = Arc::clone(&self.counters);
            conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages| {
                c.wal_commits.fetch_add(1, Ordering::Relaxed);
                if i64::from(pages) >= threshold {
                    match wal.checkpoint_v2(rusqlite::wal::CheckpointMode::PASSIVE) {
                        Ok(_) => {
                            c.checkpoints.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            c.checkpoints_busy.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Ok(())
            }))?;
        }
        Ok(Box::new(SqliteConnection {
            conn,
            sql: Vec::new(),
            date_cache: (i64::MIN, String::new()),
            plain: self.plain,
            counters: Arc::clone(&self.counters),
        }))
    }

    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        let c = &self.counters;
        let all = [
            ("sqlite.cache_hit", &c.cache_hit),
            ("sqlite.cache_miss", &c.cache_miss),
            ("sqlite.cache_write", &c.cache_write),
            ("sqlite.cache_spill", &c.cache_spill),
            ("sqlite.wal_commits", &c.wal_commits),
            ("sqlite.checkpoints", &c.checkpoints),
            ("sqlite.checkpoints_busy", &c.checkpoints_busy),
        ];
        Ok(all
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.load(Ordering::Relaxed) as f64))
            .collect())
    }

    fn is_key_counter(&self, name: &str) -> bool {
        KEY_COUNTERS.contains(&name)
    }

    fn version(&self) -> Result<String> {
        Ok(rusqlite::version().to_string())
    }

    fn settings(&self) -> Result<BTreeMap<String, String>> {
        let conn = self.open_raw()?;
        let mut settings = BTreeMap::new();
        for name in SETTINGS_PRAGMAS {
            let value: rusqlite::types::Value =
                conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?;
            let text = match value {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                rusqlite::types::Value::Real(f) => f.to_string(),
                other => format!("{other:?}"),
            };
            settings.insert((*name).to_string(), text);
        }
        // ibench's busy handler replaces SQLite's, so `PRAGMA busy_timeout` reads 0.
        settings.insert(
            "busy_timeout".to_string(),
            format!("{} (ibench busy handler)", self.busy_timeout.as_millis()),
        );
        Ok(settings)
    }

    fn maintenance(&self, _tables: &[Table]) -> Result<Option<String>> {
        let conn = self.open_raw()?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(Some("PRAGMA wal_checkpoint(TRUNCATE)".to_string()))
    }

    fn size_bytes(&self) -> Result<Option<u64>> {
        let conn = self.open_raw()?;
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok(Some((pages * page_size) as u64))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

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
    point_select: String,
    /// Multi-row INSERT per batch size.
    inserts: Vec<(usize, String)>,
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
            point_select: t(POINT_SELECT),
            inserts: Vec::new(),
        }
    }

    fn insert(&mut self, table: &str, rows: usize) -> &str {
        let pos = match self.inserts.iter().position(|(n, _)| *n == rows) {
            Some(pos) => pos,
            None => {
                let mut sql = INSERT_PREFIX.replace("{t}", table);
                for i in 0..rows {
                    if i > 0 {
                        sql.push(',');
                    }
                    sql.push_str(INSERT_ROW);
                }
                self.inserts.push((rows, sql));
                self.inserts.len() - 1
            }
        };
        &self.inserts[pos].1
    }
}

/// One SQLite connection with its statement texts; statements are prepared once and kept in
/// rusqlite's statement cache.
struct SqliteConnection {
    conn: RawConnection,
    sql: Vec<Option<TableSql>>,
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
fn statement<'c>(
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
    /// The connection and the SQL of `table` (built on first use), borrowed apart.
    fn parts(&mut self, table: &Table) -> (&RawConnection, &mut TableSql) {
        if self.sql.len() <= table.id {
            self.sql.resize_with(table.id + 1, || None);
        }
        let sql = self.sql[table.id].get_or_insert_with(|| TableSql::new(&table.name));
        (&self.conn, sql)
    }
}

impl Connection for SqliteConnection {
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

    fn table_exists(&mut self, table: &Table) -> Result<bool> {
        let n: i64 = self
            .conn
            .query_row(TABLE_EXISTS, params![table.name], |r| r.get(0))?;
        Ok(n > 0)
    }

    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64> {
        if self.date_cache.0 != rows.dateandtime {
            self.date_cache = (rows.dateandtime, super::datetime_text(rows.dateandtime));
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
        let (conn, sql) = self.parts(table);
        let result = (|| {
            let mut stmt = conn.prepare_cached(sql.insert(&table.name, n))?;
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
        let n = statement(conn, &sql.delete_range, &values, plain)?.raw_execute()?;
        Ok(n as u64)
    }

    fn min_id(&mut self, table: &Table) -> Result<Option<i64>> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        Ok(statement(conn, &sql.min_id, &[], plain)?.query_row([], |r| r.get(0))?)
    }

    fn max_id(&mut self, table: &Table) -> Result<Option<i64>> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        Ok(statement(conn, &sql.max_id, &[], plain)?.query_row([], |r| r.get(0))?)
    }

    fn count_rows(&mut self, table: &Table) -> Result<u64> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        let n: i64 = statement(conn, &sql.count_rows, &[], plain)?.query_row([], |r| r.get(0))?;
        Ok(n as u64)
    }

    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        let (text, value) = match query {
            RangeQuery::Market => (&sql.market, Literal::Float(start)),
            RangeQuery::Register => (&sql.register, Literal::Int(start as i64)),
            RangeQuery::Pdc => (&sql.pdc, Literal::Float(start)),
        };
        let mut stmt = statement(conn, text, &[value], plain)?;
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
        let mut stmt = statement(conn, &sql.point, &values, plain)?;
        let mut rows = stmt.raw_query();
        while let Some(row) = rows.next()? {
            found.push(row.get(0)?);
        }
        Ok(found.len())
    }

    fn create_sbtest(&mut self, table: &Table) -> Result<()> {
        self.conn
            .execute_batch(&DROP_TABLE.replace("{t}", &table.name))?;
        self.conn
            .execute_batch(&CREATE_SBTEST.replace("{t}", &table.name))?;
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

    fn point_select(&mut self, table: &Table, id: i64) -> Result<usize> {
        let plain = self.plain;
        let (conn, sql) = self.parts(table);
        let mut stmt = statement(conn, &sql.point_select, &[Literal::Int(id)], plain)?;
        let mut rows = stmt.raw_query();
        let mut n = 0;
        while let Some(row) = rows.next()? {
            // Read the value, as a client would.
            std::hint::black_box(row.get_ref(0)?.as_str()?);
            n += 1;
        }
        Ok(n)
    }
}

//! MariaDB and MySQL, with InnoDB or MyRocks tables, over the `mysql` crate (pure Rust, no TLS).
//!
//! Statements are prepared once per connection (per table and batch size). Multi-row INSERTs
//! return the first auto-increment id; the last is
//! `first + (rows - 1) * auto_increment_increment`, which holds for a single-statement insert under `innodb_autoinc_lock_mode` 0/1, and under 2 when no other
//! statement inserts into the same table concurrently (one table per client, the default).
//! Range queries name their covering index (`FORCE INDEX`), since the optimizer may otherwise
//! pick the primary key for `ORDER BY ... LIMIT`.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{Datelike, Timelike};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Params, Statement, Value};
use serde::{Deserialize, Serialize};

use super::literal::{self, Literal};
use super::url::ServerUrl;
use super::{
    Connection, Dbms, DbmsKind, POINT_QUERY_IDS, RangeQuery, RowBatch, SbtestRows, SecondaryIndex,
    Table,
};
use crate::error::UsageError;

/// Storage engine of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// InnoDB.
    Innodb,
    /// MyRocks (MariaDB's ROCKSDB engine, `mariadb-plugin-rocksdb`).
    Rocksdb,
}

impl Engine {
    fn sql_name(self) -> &'static str {
        match self {
            Engine::Innodb => "InnoDB",
            Engine::Rocksdb => "ROCKSDB",
        }
    }
}

const CREATE_TABLE: &str = "CREATE TABLE {t} (
    transactionid bigint NOT NULL AUTO_INCREMENT,
    dateandtime datetime NOT NULL,
    cashregisterid int NOT NULL,
    customerid int NOT NULL,
    productid int NOT NULL,
    price float NOT NULL,
    data varchar(4000),
    PRIMARY KEY (transactionid)) ENGINE={e}";
const DROP_TABLE: &str = "DROP TABLE IF EXISTS {t}";
const INSERT_PREFIX: &str =
    "INSERT INTO {t} (dateandtime, cashregisterid, customerid, productid, price, data) VALUES ";
const INSERT_ROW: &str = "(?,?,?,?,?,?)";
const DELETE_RANGE: &str = "DELETE FROM {t} WHERE transactionid >= ? AND transactionid < ?";
const MIN_ID: &str = "SELECT min(transactionid) FROM {t}";
const MAX_ID: &str = "SELECT max(transactionid) FROM {t}";
const COUNT_ROWS: &str = "SELECT count(*) FROM {t}";
const QUERY_MARKET: &str = "SELECT price, customerid FROM {t} FORCE INDEX ({t}_marketsegment) \
     WHERE price >= ? ORDER BY price, customerid LIMIT 10";
const QUERY_REGISTER: &str = "SELECT cashregisterid, price, customerid FROM {t} \
     FORCE INDEX ({t}_registersegment) WHERE cashregisterid >= ? \
     ORDER BY cashregisterid, price, customerid LIMIT 10";
const QUERY_PDC: &str = "SELECT price, dateandtime, customerid FROM {t} FORCE INDEX ({t}_pdc) \
     WHERE price >= ? ORDER BY price, dateandtime, customerid LIMIT 10";
const QUERY_POINT: &str = "SELECT transactionid, dateandtime, cashregisterid, customerid, \
     productid, price, data FROM {t} WHERE transactionid IN (?,?,?,?,?,?,?,?,?,?)";
const CREATE_INDEX: &str = "CREATE INDEX {i} ON {t} ({c})";
const ALTER_ADD_INDEX: &str = "ALTER TABLE {t} ";
const INDEX_NAMES: &str = "SELECT DISTINCT index_name FROM information_schema.statistics \
     WHERE table_schema = database() AND table_name = ? AND index_name <> 'PRIMARY' \
     ORDER BY index_name";
const TABLE_EXISTS: &str = "SELECT count(*) FROM information_schema.tables \
     WHERE table_schema = database() AND table_name = ?";
const VERSION: &str = "SELECT concat(@@version, ' ', @@version_comment)";
/// sysbench's table.
const CREATE_SBTEST: &str = "CREATE TABLE {t} (
    id int NOT NULL,
    k int NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id)) ENGINE={e}";
const INSERT_SBTEST_PREFIX: &str = "INSERT INTO {t} (id, k, c, pad) VALUES ";
const INSERT_SBTEST_ROW: &str = "(?,?,?,?)";
const CREATE_SBTEST_INDEX: &str = "CREATE INDEX {i} ON {t} (k)";
const POINT_SELECT: &str = "SELECT c FROM {t} WHERE id = ?";
const SHOW_VARIABLES: &str = "SHOW GLOBAL VARIABLES";
const ENGINE_SUPPORT: &str = "SELECT support FROM information_schema.engines WHERE engine = ?";
const DB_SIZE: &str = "SELECT coalesce(sum(data_length + index_length), 0) \
     FROM information_schema.tables WHERE table_schema = database()";
/// MyRocks: information_schema.tables lags until memtables are flushed, so the size is what
/// RocksDB holds: its SST files (data, index and filter blocks) plus the memtables (the data
/// still only in the WAL), for the whole RocksDB instance.
pub const ROCKSDB_SIZE: &str = "SELECT \
     (SELECT coalesce(sum(data_block_size + index_block_size + filter_block_size), 0) \
        FROM information_schema.rocksdb_sst_props) + \
     (SELECT coalesce(sum(value), 0) FROM information_schema.rocksdb_cfstats \
        WHERE stat_type = 'CUR_SIZE_ALL_MEM_TABLES')";
/// Counters also reported per op (plus every `Rocksdb_stall_*`).
const KEY_COUNTERS: &[&str] = &[
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_write_requests",
    "Innodb_data_reads",
    "Innodb_data_writes",
    "Innodb_data_read",
    "Innodb_data_written",
    "Innodb_os_log_written",
    "Innodb_pages_written",
    "Innodb_rows_inserted",
    "Innodb_rows_deleted",
    "Innodb_rows_read",
    "Innodb_history_list_length",
    "Rocksdb_bytes_read",
    "Rocksdb_bytes_written",
    "Rocksdb_block_cache_miss",
    "Rocksdb_block_cache_hit",
    "Rocksdb_compact_read_bytes",
    "Rocksdb_compact_write_bytes",
    "Rocksdb_flush_write_bytes",
    "Rocksdb_wal_bytes",
];
const ANALYZE: &str = "ANALYZE TABLE {t}";
const DIRTY_PAGES: &str = "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'";
const MYROCKS_FLUSH: &str = "SET GLOBAL rocksdb_force_flush_memtable_and_lzero_now = 1";

/// A MariaDB or MySQL server reached by URL, with the tables' storage engine.
pub struct Mysql {
    opts: Opts,
    url: ServerUrl,
    engine: Engine,
    plain: bool,
    /// `auto_increment_increment`: the step between ids of one multi-row insert.
    id_step: i64,
}

impl Mysql {
    /// Connects once to check the server, the credentials and that `engine` is available.
    pub fn open(url: ServerUrl, engine: Engine, plain: bool) -> Result<Self> {
        let mut text = url.without_password();
        if let Some(rest) = text.strip_prefix("mariadb:") {
            text = format!("mysql:{rest}");
        }
        let opts = Opts::from_url(&text)
            .map_err(|e| UsageError::new(format!("invalid MySQL URL {}: {e}", url.redacted())))?;
        let mut builder = OptsBuilder::from_opts(opts).pass(url.password());
        // The mysql crate switches a localhost TCP URL to the server's Unix socket unless told
        // not to; a benchmark uses the transport the URL names (?socket=... for a socket).
        if !text.contains("prefer_socket=") {
            builder = builder.prefer_socket(false);
        }
        let opts: Opts = builder.into();
        let mut db = Mysql {
            opts,
            url,
            engine,
            plain,
            id_step: 1,
        };
        let mut conn = db.conn()?;
        let step: Option<i64> = conn.query_first("SELECT @@auto_increment_increment")?;
        db.id_step = step.unwrap_or(1).max(1);
        let support: Option<String> = conn.exec_first(ENGINE_SUPPORT, (engine.sql_name(),))?;
        match support.as_deref() {
            Some("YES") | Some("DEFAULT") => {}
            _ => bail!(UsageError::new(format!(
                "--engine {} is not available on {} (information_schema.engines: {}); for \
                 MyRocks install mariadb-plugin-rocksdb and start the server with \
                 --plugin-load-add=ha_rocksdb.so",
                engine.sql_name().to_lowercase(),
                db.url.redacted(),
                support.unwrap_or_else(|| "not listed".to_string())
            ))),
        }
        Ok(db)
    }

    fn conn(&self) -> Result<Conn> {
        Conn::new(self.opts.clone())
            .map_err(|e| anyhow::anyhow!("cannot connect to {}: {e}", self.url.redacted()))
    }

    /// InnoDB: lower the dirty-page target to 0 until the buffer pool is (nearly) clean, then
    /// restore it. Needs the SUPER privilege; returns what it did.
    fn flush_innodb(&self, conn: &mut Conn) -> Result<String> {
        let old: Option<String> = conn.query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")?;
        let Some(old) = old.and_then(|v| v.parse::<f64>().ok()) else {
            return Ok(String::new());
        };
        if conn
            .query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            .is_err()
        {
            return Ok(", dirty-page flush skipped (needs SUPER)".to_string());
        }
        // Restore the setting whatever happened while waiting.
        let waited = wait_for_clean_pool(conn);
        let restored = conn.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct = {old}"));
        let dirty = waited?;
        restored.context("restore innodb_max_dirty_pages_pct")?;
        Ok(format!(", flushed dirty pages ({dirty} left)"))
    }
}

/// Dirty pages in the InnoDB buffer pool.
fn dirty_pages(conn: &mut Conn) -> Result<u64> {
    let row: Option<(String, String)> = conn.query_first(DIRTY_PAGES)?;
    Ok(row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0))
}

/// Waits (up to two minutes) until fewer than 100 pages are dirty; returns the last count.
fn wait_for_clean_pool(conn: &mut Conn) -> Result<u64> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let dirty = dirty_pages(conn)?;
        if dirty < 100 || Instant::now() >= deadline {
            return Ok(dirty);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Dbms for Mysql {
    fn kind(&self) -> DbmsKind {
        DbmsKind::Mysql
    }

    fn connect(&self) -> Result<Box<dyn Connection>> {
        Ok(Box::new(MyConnection {
            conn: self.conn()?,
            engine: self.engine,
            tables: Vec::new(),
            point_selects: Vec::new(),
            date: (i64::MIN, Value::NULL),
            plain: self.plain,
            id_step: self.id_step,
        }))
    }

    fn version(&self) -> Result<String> {
        let v: Option<String> = self.conn()?.query_first(VERSION)?;
        Ok(v.unwrap_or_default())
    }

    fn settings(&self) -> Result<BTreeMap<String, String>> {
        let rows: Vec<(String, String)> = self.conn()?.query(SHOW_VARIABLES)?;
        Ok(rows.into_iter().collect())
    }

    fn supports_combined_index_ddl(&self) -> bool {
        // MyRocks builds one index per statement.
        self.engine == Engine::Innodb
    }

    fn maintenance(&self, tables: &[Table]) -> Result<Option<String>> {
        let mut conn = self.conn()?;
        for t in tables {
            conn.query_drop(ANALYZE.replace("{t}", &t.name))
                .with_context(|| format!("ANALYZE TABLE {}", t.name))?;
        }
        let more = match self.engine {
            Engine::Innodb => self.flush_innodb(&mut conn)?,
            Engine::Rocksdb => match conn.query_drop(MYROCKS_FLUSH) {
                Ok(()) => ", flushed memtable and compacted L0".to_string(),
                Err(e) => format!(", memtable flush skipped ({e})"),
            },
        };
        Ok(Some(format!("ANALYZE TABLE per table{more}")))
    }

    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        let rows: Vec<(String, String)> = self.conn()?.query("SHOW GLOBAL STATUS")?;
        Ok(rows
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.parse::<f64>().ok()?)))
            .collect())
    }

    fn is_key_counter(&self, name: &str) -> bool {
        KEY_COUNTERS.contains(&name) || name.starts_with("Rocksdb_stall")
    }

    fn size_bytes(&self) -> Result<Option<u64>> {
        let sql = match self.engine {
            Engine::Rocksdb => ROCKSDB_SIZE,
            _ => DB_SIZE,
        };
        let n: Option<u64> = self.conn()?.query_first(sql)?;
        Ok(n)
    }

    fn location(&self) -> String {
        self.url.redacted()
    }
}

/// Deadlock, lock wait timeout, too many connections: transient; a lost connection (I/O or
/// driver error, server gone away): connection lost.
pub fn classify(e: &(dyn std::error::Error + 'static)) -> Option<super::ErrorKind> {
    use super::ErrorKind;
    Some(match e.downcast_ref::<mysql::Error>()? {
        mysql::Error::MySqlError(m) => match m.code {
            1213 | 1205 | 1040 => ErrorKind::Transient,
            2006 | 2013 | 1927 | 1053 => ErrorKind::ConnectionLost,
            _ => ErrorKind::Fatal,
        },
        mysql::Error::IoError(_) | mysql::Error::DriverError(_) | mysql::Error::CodecError(_) => {
            ErrorKind::ConnectionLost
        }
        _ => ErrorKind::Fatal,
    })
}

struct TableStatements {
    delete_range: Statement,
    min_id: Statement,
    max_id: Statement,
    count_rows: Statement,
    point: Statement,
    /// Range queries are prepared on first use: FORCE INDEX fails before the index exists.
    ranges: [Option<Statement>; 3],
    inserts: HashMap<usize, Statement>,
}

struct MyConnection {
    conn: Conn,
    engine: Engine,
    tables: Vec<Option<TableStatements>>,
    /// Point select per sysbench-style table.
    point_selects: Vec<Option<Statement>>,
    /// Last `dateandtime` as a DATETIME value, converted once per second.
    date: (i64, Value),
    /// Plain-SQL mode: text protocol with values inlined, nothing prepared.
    plain: bool,
    /// `auto_increment_increment` of the server.
    id_step: i64,
}

fn t(sql: &str, table: &Table) -> String {
    sql.replace("{t}", &table.name)
}

impl MyConnection {
    fn statements(&mut self, table: &Table) -> Result<&mut TableStatements> {
        if self.tables.len() <= table.id {
            self.tables.resize_with(table.id + 1, || None);
        }
        if self.tables[table.id].is_none() {
            let c = &mut self.conn;
            let mut prep = |sql: &str| {
                c.prep(t(sql, table))
                    .with_context(|| format!("prepare statement on {}", table.name))
            };
            let s = TableStatements {
                delete_range: prep(DELETE_RANGE)?,
                min_id: prep(MIN_ID)?,
                max_id: prep(MAX_ID)?,
                count_rows: prep(COUNT_ROWS)?,
                point: prep(QUERY_POINT)?,
                ranges: [None, None, None],
                inserts: HashMap::new(),
            };
            self.tables[table.id] = Some(s);
        }
        Ok(self.tables[table.id].as_mut().expect("just prepared"))
    }

    fn first_i64(
        &mut self,
        table: &Table,
        pick: fn(&TableStatements) -> &Statement,
        sql: &str,
    ) -> Result<Option<i64>> {
        if self.plain {
            return Ok(self
                .plain_query(sql, &[], table)?
                .0
                .first()
                .copied()
                .flatten());
        }
        let stmt = pick(self.statements(table)?).clone();
        let v: Option<Option<i64>> = self.conn.exec_first(&stmt, ())?;
        Ok(v.flatten())
    }
}

impl MyConnection {
    /// The largest id of the multi-row insert just done: LAST_INSERT_ID() is the first.
    fn last_id(&self, rows: usize) -> i64 {
        self.conn.last_insert_id() as i64 + (rows as i64 - 1) * self.id_step
    }

    /// Plain-SQL mode: runs `sql` with `values` inlined over the text protocol; returns the
    /// rows' first column, and the affected-row count.
    fn plain_query(
        &mut self,
        sql: &str,
        values: &[Literal<'_>],
        table: &Table,
    ) -> Result<(Vec<Option<i64>>, u64)> {
        let text = literal::bind(&t(sql, table), values, true);
        let mut result = self
            .conn
            .query_iter(text)
            .with_context(|| format!("plain SQL on {}", table.name))?;
        let mut first = Vec::new();
        for row in result.by_ref() {
            let row = row?;
            // Range queries return prices here; only integer columns are read back as ids.
            first.push(
                row.get_opt::<Option<i64>, _>(0)
                    .and_then(|v| v.ok())
                    .flatten(),
            );
        }
        drop(result);
        Ok((first, self.conn.affected_rows()))
    }
}

impl Connection for MyConnection {
    fn create_table(&mut self, table: &Table) -> Result<()> {
        if let Some(s) = self.tables.get_mut(table.id) {
            *s = None;
        }
        self.conn
            .query_drop(t(DROP_TABLE, table))
            .with_context(|| format!("drop table {}", table.name))?;
        self.conn
            .query_drop(t(CREATE_TABLE, table).replace("{e}", self.engine.sql_name()))
            .with_context(|| format!("create table {}", table.name))?;
        Ok(())
    }

    fn create_indexes(
        &mut self,
        table: &Table,
        indexes: &[SecondaryIndex],
        combined: bool,
    ) -> Result<()> {
        let ddl = |i: &SecondaryIndex| (i.name_on(&table.name), i.columns().join(", "));
        if combined {
            if self.engine == Engine::Rocksdb {
                bail!("MyRocks creates one index per statement; use --index-ddl separate");
            }
            let adds: Vec<String> = indexes
                .iter()
                .map(|i| {
                    let (name, cols) = ddl(i);
                    format!("ADD INDEX {name} ({cols})")
                })
                .collect();
            let sql = format!("{}{}", t(ALTER_ADD_INDEX, table), adds.join(", "));
            self.conn
                .query_drop(sql)
                .with_context(|| format!("create indexes on {}", table.name))?;
            return Ok(());
        }
        for i in indexes {
            let (name, cols) = ddl(i);
            let sql = t(CREATE_INDEX, table)
                .replace("{i}", &name)
                .replace("{c}", &cols);
            self.conn
                .query_drop(sql)
                .with_context(|| format!("create index {name}"))?;
        }
        Ok(())
    }

    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        Ok(self.conn.exec(INDEX_NAMES, (&table.name,))?)
    }

    fn table_exists(&mut self, table: &Table) -> Result<bool> {
        let n: Option<i64> = self.conn.exec_first(TABLE_EXISTS, (&table.name,))?;
        Ok(n.unwrap_or(0) > 0)
    }

    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64> {
        let n = rows.len();
        if self.plain {
            let date = super::datetime_text(rows.dateandtime);
            let text = format!(
                "{}{}",
                t(INSERT_PREFIX, table),
                literal::values(rows, &date, true)
            );
            self.conn
                .query_drop(text)
                .with_context(|| format!("insert into {}", table.name))?;
            return Ok(self.last_id(n));
        }
        let stmt = match self.statements(table)?.inserts.get(&n) {
            Some(s) => s.clone(),
            None => {
                let mut sql = t(INSERT_PREFIX, table);
                sql.push_str(&vec![INSERT_ROW; n].join(","));
                let s = self
                    .conn
                    .prep(sql)
                    .with_context(|| format!("prepare insert into {}", table.name))?;
                self.statements(table)?.inserts.insert(n, s.clone());
                s
            }
        };
        if self.date.0 != rows.dateandtime {
            let d = super::datetime(rows.dateandtime);
            let v = Value::Date(
                d.year() as u16,
                d.month() as u8,
                d.day() as u8,
                d.hour() as u8,
                d.minute() as u8,
                d.second() as u8,
                0,
            );
            self.date = (rows.dateandtime, v);
        }
        let mut params = Vec::with_capacity(n * 6);
        for i in 0..n {
            params.push(self.date.1.clone());
            params.push(Value::Int(rows.cashregisterid[i] as i64));
            params.push(Value::Int(rows.customerid[i] as i64));
            params.push(Value::Int(rows.productid[i] as i64));
            params.push(Value::Double(rows.price[i]));
            params.push(Value::Bytes(rows.data(i).as_bytes().to_vec()));
        }
        self.conn
            .exec_drop(&stmt, Params::Positional(params))
            .with_context(|| format!("insert into {}", table.name))?;
        Ok(self.last_id(n))
    }

    fn delete_range(&mut self, table: &Table, lo: i64, hi: i64) -> Result<u64> {
        if self.plain {
            let values = [Literal::Int(lo), Literal::Int(hi)];
            return Ok(self.plain_query(DELETE_RANGE, &values, table)?.1);
        }
        let stmt = self.statements(table)?.delete_range.clone();
        self.conn
            .exec_drop(&stmt, (lo, hi))
            .with_context(|| format!("delete from {}", table.name))?;
        Ok(self.conn.affected_rows())
    }

    fn min_id(&mut self, table: &Table) -> Result<Option<i64>> {
        self.first_i64(table, |s| &s.min_id, MIN_ID)
    }

    fn max_id(&mut self, table: &Table) -> Result<Option<i64>> {
        self.first_i64(table, |s| &s.max_id, MAX_ID)
    }

    fn count_rows(&mut self, table: &Table) -> Result<u64> {
        Ok(self
            .first_i64(table, |s| &s.count_rows, COUNT_ROWS)?
            .unwrap_or(0) as u64)
    }

    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize> {
        let (slot, sql) = match query {
            RangeQuery::Market => (0, QUERY_MARKET),
            RangeQuery::Register => (1, QUERY_REGISTER),
            RangeQuery::Pdc => (2, QUERY_PDC),
        };
        if self.plain {
            let value = match query {
                RangeQuery::Register => Literal::Int(start as i64),
                _ => Literal::Float(start),
            };
            return Ok(self.plain_query(sql, &[value], table)?.0.len());
        }
        let stmt = match &self.statements(table)?.ranges[slot] {
            Some(s) => s.clone(),
            None => {
                let s = self
                    .conn
                    .prep(t(sql, table))
                    .with_context(|| format!("prepare range query on {}", table.name))?;
                self.statements(table)?.ranges[slot] = Some(s.clone());
                s
            }
        };
        let param = match query {
            RangeQuery::Register => Value::Int(start as i64),
            _ => Value::Double(start),
        };
        let result = self
            .conn
            .exec_iter(&stmt, Params::Positional(vec![param]))
            .with_context(|| format!("range query on {}", table.name))?;
        let mut n = 0;
        for row in result {
            row?;
            n += 1;
        }
        Ok(n)
    }

    fn point_query(&mut self, table: &Table, ids: &[i64], found: &mut Vec<i64>) -> Result<usize> {
        found.clear();
        if ids.is_empty() {
            return Ok(0);
        }
        if self.plain {
            let values = literal::point_ids(ids);
            found.extend(
                self.plain_query(QUERY_POINT, &values, table)?
                    .0
                    .into_iter()
                    .flatten(),
            );
            return Ok(found.len());
        }
        let stmt = self.statements(table)?.point.clone();
        let params: Vec<Value> = (0..POINT_QUERY_IDS)
            .map(|i| Value::Int(*ids.get(i).unwrap_or(&ids[0])))
            .collect();
        let result = self
            .conn
            .exec_iter(&stmt, Params::Positional(params))
            .with_context(|| format!("point query on {}", table.name))?;
        for row in result {
            let row = row?;
            let id: i64 = row
                .get(0)
                .context("point query row without transactionid")?;
            found.push(id);
        }
        Ok(found.len())
    }

    fn create_sbtest(&mut self, table: &Table) -> Result<()> {
        if let Some(s) = self.point_selects.get_mut(table.id) {
            *s = None;
        }
        self.conn
            .query_drop(t(DROP_TABLE, table))
            .with_context(|| format!("drop table {}", table.name))?;
        self.conn
            .query_drop(t(CREATE_SBTEST, table).replace("{e}", self.engine.sql_name()))
            .with_context(|| format!("create table {}", table.name))?;
        Ok(())
    }

    fn insert_sbtest(&mut self, table: &Table, rows: &SbtestRows) -> Result<()> {
        let mut sql = t(INSERT_SBTEST_PREFIX, table);
        let mut params = Vec::with_capacity(4 * rows.len());
        for i in 0..rows.len() {
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(INSERT_SBTEST_ROW);
            params.extend([
                Value::Int(rows.id[i]),
                Value::Int(i64::from(rows.k[i])),
                Value::Bytes(rows.c[i].clone().into_bytes()),
                Value::Bytes(rows.pad[i].clone().into_bytes()),
            ]);
        }
        self.conn
            .exec_drop(sql, Params::Positional(params))
            .with_context(|| format!("insert into {}", table.name))
    }

    fn create_sbtest_index(&mut self, table: &Table, index: &str) -> Result<()> {
        self.conn
            .query_drop(t(CREATE_SBTEST_INDEX, table).replace("{i}", index))
            .with_context(|| format!("create index {index}"))
    }

    fn point_select(&mut self, table: &Table, id: i64) -> Result<usize> {
        if self.plain {
            return Ok(self
                .plain_query(POINT_SELECT, &[Literal::Int(id)], table)?
                .0
                .len());
        }
        if self.point_selects.len() <= table.id {
            self.point_selects.resize_with(table.id + 1, || None);
        }
        let stmt = match &self.point_selects[table.id] {
            Some(s) => s.clone(),
            None => {
                let s = self
                    .conn
                    .prep(t(POINT_SELECT, table))
                    .with_context(|| format!("prepare statement on {}", table.name))?;
                self.point_selects[table.id] = Some(s.clone());
                s
            }
        };
        let result = self
            .conn
            .exec_iter(&stmt, (id,))
            .with_context(|| format!("point select on {}", table.name))?;
        let mut n = 0;
        for row in result {
            // Read the value, as a client would.
            std::hint::black_box(row?.as_ref(0));
            n += 1;
        }
        Ok(n)
    }
}

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
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use serde::{Deserialize, Serialize};

use super::DbError;
use super::literal::{self, Literal};
use super::mywire::{Done, MyWire, Param, Statement, Value as WireValue};
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
/// InnoDB: the allocated size of the schema's tablespace files, as InnoDB reports them
/// (information_schema.tables' data_length comes from persistent statistics, which lag a load
/// until they are recalculated: 16 KB for a table just loaded with 100k rows).
pub const INNODB_SIZE: &str = "SELECT coalesce(sum(allocated_size), 0) \
     FROM information_schema.innodb_sys_tablespaces \
     WHERE substring_index(name, '/', 1) = database()";
/// Other engines, and servers without that view (MySQL 8 names it innodb_tablespaces).
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
        let wire = MyWire::connect(&self.opts).map_err(|e| DbError {
            message: format!("cannot connect to {}: {}", self.url.redacted(), e.message),
            kind: e.kind,
        })?;
        Ok(Box::new(MyConnection {
            wire,
            engine: self.engine,
            tables: Vec::new(),
            point_selects: Vec::new(),
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
        let mut conn = self.conn()?;
        let n: Option<u64> = match self.engine {
            Engine::Rocksdb => conn.query_first(ROCKSDB_SIZE)?,
            Engine::Innodb => match conn.query_first(INNODB_SIZE) {
                Ok(n) => n,
                Err(_) => conn.query_first(DB_SIZE)?,
            },
        };
        Ok(n)
    }

    fn location(&self) -> String {
        self.url.redacted()
    }
}

/// What a server error with `code` means for a client: deadlock, lock wait timeout, too many
/// connections are transient; server gone away, connection killed, shutdown: connection lost.
pub fn kind_of_code(code: u16) -> super::ErrorKind {
    use super::ErrorKind;
    match code {
        1213 | 1205 | 1040 => ErrorKind::Transient,
        2006 | 2013 | 1927 | 1053 => ErrorKind::ConnectionLost,
        _ => ErrorKind::Fatal,
    }
}

/// Deadlock, lock wait timeout, too many connections: transient; a lost connection (I/O or
/// driver error, server gone away): connection lost.
pub fn classify(e: &(dyn std::error::Error + 'static)) -> Option<super::ErrorKind> {
    use super::ErrorKind;
    Some(match e.downcast_ref::<mysql::Error>()? {
        mysql::Error::MySqlError(m) => kind_of_code(m.code),
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

/// A client thread's connection, over the lean wire client (see `mywire.rs` for why).
struct MyConnection {
    wire: MyWire,
    engine: Engine,
    tables: Vec<Option<TableStatements>>,
    /// Point select per sysbench-style table.
    point_selects: Vec<Option<Statement>>,
    /// Plain-SQL mode: text protocol with values inlined, nothing prepared.
    plain: bool,
    /// `auto_increment_increment` of the server.
    id_step: i64,
}

fn t(sql: &str, table: &Table) -> String {
    sql.replace("{t}", &table.name)
}

/// Maps a wire error to one naming what was done, keeping its kind; formats only on error.
fn sql_err<'a>(what: &'a str, name: &'a str) -> impl FnOnce(DbError) -> anyhow::Error + 'a {
    move |e| {
        anyhow::Error::new(DbError {
            message: format!("{what} {name}: {}", e.message),
            kind: e.kind,
        })
    }
}

/// Ignores rows.
fn no_rows(_: WireValue<'_>) -> Result<(), DbError> {
    Ok(())
}

impl MyConnection {
    /// The connection and the statements of `table` (prepared on first use), borrowed apart.
    fn parts(&mut self, table: &Table) -> Result<(&mut MyWire, &mut TableStatements)> {
        if self.tables.len() <= table.id {
            self.tables.resize_with(table.id + 1, || None);
        }
        if self.tables[table.id].is_none() {
            let w = &mut self.wire;
            let mut prep = |sql: &str| {
                w.prepare(&t(sql, table))
                    .map_err(|e| sql_err("prepare statement on", &table.name)(e))
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
        let s = self.tables[table.id].as_mut().expect("just prepared");
        Ok((&mut self.wire, s))
    }

    fn first_i64(
        &mut self,
        table: &Table,
        pick: fn(&TableStatements) -> Statement,
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
        let (wire, s) = self.parts(table)?;
        let mut value = None;
        wire.execute(&pick(s), &[], |v| {
            value = v.as_i64();
            Ok(())
        })
        .map_err(sql_err("query", &table.name))?;
        Ok(value)
    }

    /// Runs one-off SQL text (DDL) on the connection.
    fn run(&mut self, sql: &str, what: &str, name: &str) -> Result<()> {
        self.wire.query(sql, no_rows).map_err(sql_err(what, name))?;
        Ok(())
    }
}

impl MyConnection {
    /// The largest id of a multi-row insert whose first id is `first`.
    fn last_id(&self, first: u64, rows: usize) -> i64 {
        first as i64 + (rows as i64 - 1) * self.id_step
    }

    /// Plain-SQL mode: runs `sql` with `values` inlined over the text protocol; returns the
    /// rows' first column as an integer where it is one, and the statement's outcome.
    fn plain_query(
        &mut self,
        sql: &str,
        values: &[Literal<'_>],
        table: &Table,
    ) -> Result<(Vec<Option<i64>>, Done)> {
        let text = literal::bind(&t(sql, table), values, true);
        let mut first = Vec::new();
        let done = self
            .wire
            .query(&text, |v| {
                // Range queries return prices here; only integer columns are read as ids.
                first.push(v.as_i64());
                Ok(())
            })
            .map_err(sql_err("plain SQL on", &table.name))?;
        Ok((first, done))
    }
}

impl Connection for MyConnection {
    fn create_table(&mut self, table: &Table) -> Result<()> {
        if let Some(s) = self.tables.get_mut(table.id) {
            *s = None;
        }
        self.run(&t(DROP_TABLE, table), "drop table", &table.name)?;
        let create = t(CREATE_TABLE, table).replace("{e}", self.engine.sql_name());
        self.run(&create, "create table", &table.name)
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
            return self.run(&sql, "create indexes on", &table.name);
        }
        for i in indexes {
            let (name, cols) = ddl(i);
            let sql = t(CREATE_INDEX, table)
                .replace("{i}", &name)
                .replace("{c}", &cols);
            self.run(&sql, "create index", &name)?;
        }
        Ok(())
    }

    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        let sql = literal::bind(INDEX_NAMES, &[Literal::Str(&table.name)], true);
        let mut names = Vec::new();
        self.wire
            .query(&sql, |v| {
                if let WireValue::Bytes(b) = v {
                    names.push(String::from_utf8_lossy(b).into_owned());
                }
                Ok(())
            })
            .map_err(sql_err("list indexes of", &table.name))?;
        Ok(names)
    }

    fn table_exists(&mut self, table: &Table) -> Result<bool> {
        let sql = literal::bind(TABLE_EXISTS, &[Literal::Str(&table.name)], true);
        let mut n = 0;
        self.wire
            .query(&sql, |v| {
                n = v.as_i64().unwrap_or(0);
                Ok(())
            })
            .map_err(sql_err("look up table", &table.name))?;
        Ok(n > 0)
    }

    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64> {
        let n = rows.len();
        if self.plain {
            let date = super::datetime_text(rows.dateandtime);
            let text = format!("{}{}", INSERT_PREFIX, literal::values(rows, &date, true));
            let (_, done) = self.plain_query(&text, &[], table)?;
            return Ok(self.last_id(done.last_insert_id, n));
        }
        let date = super::datetime(rows.dateandtime);
        // One allocation per batch: the parameters' list.
        let mut params = Vec::with_capacity(n * 6);
        for i in 0..n {
            params.extend_from_slice(&[
                Param::DateTime(date),
                Param::Int(i64::from(rows.cashregisterid[i])),
                Param::Int(i64::from(rows.customerid[i])),
                Param::Int(i64::from(rows.productid[i])),
                Param::Double(rows.price[i]),
                Param::Bytes(rows.data(i).as_bytes()),
            ]);
        }
        let (wire, s) = self.parts(table)?;
        let stmt = match s.inserts.get(&n) {
            Some(s) => *s,
            None => {
                let mut sql = t(INSERT_PREFIX, table);
                sql.push_str(&vec![INSERT_ROW; n].join(","));
                let stmt = wire
                    .prepare(&sql)
                    .map_err(sql_err("prepare insert into", &table.name))?;
                s.inserts.insert(n, stmt);
                stmt
            }
        };
        let done = wire
            .execute(&stmt, &params, no_rows)
            .map_err(sql_err("insert into", &table.name))?;
        Ok(self.last_id(done.last_insert_id, n))
    }

    fn delete_range(&mut self, table: &Table, lo: i64, hi: i64) -> Result<u64> {
        if self.plain {
            let values = [Literal::Int(lo), Literal::Int(hi)];
            return Ok(self
                .plain_query(DELETE_RANGE, &values, table)?
                .1
                .affected_rows);
        }
        let (wire, s) = self.parts(table)?;
        let done = wire
            .execute(&s.delete_range, &[Param::Int(lo), Param::Int(hi)], no_rows)
            .map_err(sql_err("delete from", &table.name))?;
        Ok(done.affected_rows)
    }

    fn min_id(&mut self, table: &Table) -> Result<Option<i64>> {
        self.first_i64(table, |s| s.min_id, MIN_ID)
    }

    fn max_id(&mut self, table: &Table) -> Result<Option<i64>> {
        self.first_i64(table, |s| s.max_id, MAX_ID)
    }

    fn count_rows(&mut self, table: &Table) -> Result<u64> {
        Ok(self
            .first_i64(table, |s| s.count_rows, COUNT_ROWS)?
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
        let (wire, s) = self.parts(table)?;
        let stmt = match s.ranges[slot] {
            Some(stmt) => stmt,
            None => {
                let stmt = wire
                    .prepare(&t(sql, table))
                    .map_err(sql_err("prepare range query on", &table.name))?;
                s.ranges[slot] = Some(stmt);
                stmt
            }
        };
        let param = match query {
            RangeQuery::Register => Param::Int(start as i64),
            _ => Param::Double(start),
        };
        let mut n = 0;
        wire.execute(&stmt, &[param], |_| {
            n += 1;
            Ok(())
        })
        .map_err(sql_err("range query on", &table.name))?;
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
        let params: [Param; POINT_QUERY_IDS] =
            std::array::from_fn(|i| Param::Int(*ids.get(i).unwrap_or(&ids[0])));
        let (wire, s) = self.parts(table)?;
        wire.execute(&s.point, &params, |v| {
            found.push(v.as_i64().unwrap_or(i64::MIN));
            Ok(())
        })
        .map_err(sql_err("point query on", &table.name))?;
        Ok(found.len())
    }

    fn create_sbtest(&mut self, table: &Table) -> Result<()> {
        if let Some(s) = self.point_selects.get_mut(table.id) {
            *s = None;
        }
        self.run(&t(DROP_TABLE, table), "drop table", &table.name)?;
        let create = t(CREATE_SBTEST, table).replace("{e}", self.engine.sql_name());
        self.run(&create, "create table", &table.name)
    }

    fn insert_sbtest(&mut self, table: &Table, rows: &SbtestRows) -> Result<()> {
        // The load is not the measured path: one text statement per batch.
        let mut sql = t(INSERT_SBTEST_PREFIX, table);
        for i in 0..rows.len() {
            if i > 0 {
                sql.push(',');
            }
            let values = [
                Literal::Int(rows.id[i]),
                Literal::Int(i64::from(rows.k[i])),
                Literal::Str(&rows.c[i]),
                Literal::Str(&rows.pad[i]),
            ];
            sql.push_str(&literal::bind(INSERT_SBTEST_ROW, &values, true));
        }
        self.run(&sql, "insert into", &table.name)
    }

    fn create_sbtest_index(&mut self, table: &Table, index: &str) -> Result<()> {
        let sql = t(CREATE_SBTEST_INDEX, table).replace("{i}", index);
        self.run(&sql, "create index", index)
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
        let stmt = match self.point_selects[table.id] {
            Some(s) => s,
            None => {
                let s = self
                    .wire
                    .prepare(&t(POINT_SELECT, table))
                    .map_err(sql_err("prepare statement on", &table.name))?;
                self.point_selects[table.id] = Some(s);
                s
            }
        };
        let mut n = 0;
        self.wire
            .execute(&stmt, &[Param::Int(id)], |v| {
                // Read the value, as a client would.
                std::hint::black_box(v);
                n += 1;
                Ok(())
            })
            .map_err(sql_err("point select on", &table.name))?;
        Ok(n)
    }
}

//! MariaDB and MySQL, with InnoDB or MyRocks tables, over the `mysql` crate (pure Rust, no TLS).
//!
//! Statements are prepared once per connection (per table and batch size). Multi-row INSERTs
//! return the first auto-increment id; the last is
//! `first + (rows - 1) * auto_increment_increment`, which holds for a single-statement insert under `innodb_autoinc_lock_mode` 0/1, and under 2 when no other
//! statement inserts into the same table concurrently (one table per client, the default).
//! Range queries name their covering index (`FORCE INDEX`), since the optimizer may otherwise
//! pick the primary key for `ORDER BY ... LIMIT`.

pub mod compaction;
mod connection;
mod galera;
mod gauges;
pub mod guard;
mod replication;
mod session;
mod settle;
mod status;
mod waits;
pub mod wire;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use serde::{Deserialize, Serialize};

use wire::{MyWire, kind_of_code};
use crate::dbms::{Maintain, Observe, Topology};
use crate::dbms::{from_params, to_params};
use crate::dbms::url::ServerUrl;
use crate::dbms::{
    AssumedRates, CacheSetting, Capability, DbError, Dbms, DbmsKind, Descriptor, ErrorKind,
    InsertBenchmarkConnection, SqlConnection, Params, Setting, SettingError, StatementMode,
    Table, TargetSettings, TargetSpec,
};
use crate::error::UsageError;
use connection::MyConnection;
use crate::dbms::sql::SqlInsertBenchmark;

/// The registry's MariaDB/MySQL.
pub static MYSQL: MysqlDescriptor = MysqlDescriptor;

/// MariaDB or MySQL (InnoDB or MyRocks tables), or a server speaking its protocol (TiDB).
pub struct MysqlDescriptor;

/// MySQL-family target parameters, as stored with the results.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MysqlParams {
    /// Storage engine of the tables.
    pub engine: Engine,
}

impl MysqlParams {
    /// The parameters of a MySQL-family target (InnoDB when they name no engine).
    pub fn of(params: &Params) -> MysqlParams {
        from_params(DbmsKind::of(&MYSQL), params).unwrap_or(MysqlParams {
            engine: Engine::Innodb,
        })
    }
}

impl Descriptor for MysqlDescriptor {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn server_name(&self) -> &'static str {
        "mariadb"
    }

    fn about(&self) -> &'static str {
        "MariaDB or MySQL (InnoDB or MyRocks), or a server speaking its protocol (TiDB)"
    }

    fn url_schemes(&self) -> &'static [&'static str] {
        &["mysql", "mariadb"]
    }

    fn password_env(&self) -> &'static str {
        "MYSQL_PWD"
    }

    /// `?sessionVariables=name=value,...`, set with `SET SESSION` on every connection.
    fn with_session_settings(
        &self,
        url: ServerUrl,
        settings: &[(String, String)],
    ) -> std::result::Result<ServerUrl, String> {
        session::with_settings(url, settings)
    }

    fn capabilities(&self) -> &'static [Capability] {
        &[Capability::InsertBenchmark, Capability::Sql]
    }

    fn params(&self, settings: &TargetSettings) -> Result<Params, SettingError> {
        settings.refuse_all_but(DbmsKind::of(&MYSQL), &["engine"])?;
        let engine = match settings.engine.as_deref() {
            None => Engine::Innodb,
            Some(name) => Engine::parse(name).ok_or_else(|| {
                SettingError::new(
                    Setting::Engine,
                    format!("unknown storage engine {name:?}: expected innodb or rocksdb"),
                )
            })?,
        };
        Ok(to_params(&MysqlParams { engine }))
    }

    fn open(&self, target: &TargetSpec, mode: StatementMode) -> Result<Box<dyn Dbms>> {
        let params: MysqlParams = from_params(target.kind, &target.params)?;
        let mut db = Mysql::open(
            target.server_url()?.clone(),
            params.engine,
            mode == StatementMode::Plain,
        )?;
        if !target.replica_urls.is_empty() {
            db.replicas =
                replication::Replicas::new(&target.replica_urls, target.read_from_replicas)?;
        }
        if !target.node_urls.is_empty() {
            db.nodes = galera::Nodes::new(
                (&db.opts, &db.url),
                &target.node_urls,
                target.clients_on_all_nodes,
            )?;
        }
        Ok(Box::new(db))
    }

    fn classify(&self, err: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
        classify(err)
    }

    fn cache(&self, params: &Params) -> CacheSetting {
        let parse: fn(&str, &BTreeMap<String, String>) -> Option<u64> =
            |raw, _| raw.trim().parse().ok();
        match MysqlParams::of(params).engine {
            Engine::Innodb => CacheSetting {
                name: "innodb_buffer_pool_size",
                min_bytes: 8 << 20,
                format: |bytes| bytes.to_string(),
                parse,
                per_connection: false,
            },
            Engine::Rocksdb => CacheSetting {
                name: "rocksdb_block_cache_size",
                min_bytes: 1 << 20,
                format: |bytes| bytes.to_string(),
                parse,
                per_connection: false,
            },
        }
    }

    fn combined_index_ddl(&self, params: &Params) -> bool {
        // MyRocks builds one index per statement.
        MysqlParams::of(params).engine == Engine::Innodb
    }

    fn assumed_rates(&self, params: &Params) -> AssumedRates {
        match MysqlParams::of(params).engine {
            Engine::Rocksdb => AssumedRates {
                load: 100_000.0,
                // MyRocks builds each index with a sort and a bulk load: the slowest l.x.
                index: 35_000.0,
                more: 25_000.0,
                more_small: 7_000.0,
                server_s: 6.0,
                pause_s: 2.0,
            },
            Engine::Innodb => AssumedRates {
                load: 110_000.0,
                index: 300_000.0,
                more: 25_000.0,
                more_small: 7_000.0,
                server_s: 6.0,
                // Flushing the dirty pages at the default innodb_io_capacity.
                pause_s: 20.0,
            },
        }
    }
}

/// Storage engine of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// InnoDB.
    Innodb,
    /// MyRocks (MariaDB's ROCKSDB engine, `mariadb-plugin-rocksdb`).
    Rocksdb,
}

impl Engine {
    /// The engine called `name` (any case).
    pub fn parse(name: &str) -> Option<Engine> {
        match name.to_ascii_lowercase().as_str() {
            "innodb" => Some(Engine::Innodb),
            "rocksdb" | "myrocks" => Some(Engine::Rocksdb),
            _ => None,
        }
    }

    fn sql_name(self) -> &'static str {
        match self {
            Engine::Innodb => "InnoDB",
            Engine::Rocksdb => "ROCKSDB",
        }
    }
}

/// How long a Galera cluster's nodes may take to apply the workload's DDL
/// ([`Dbms::ddl_applied`]): an index build on a large table runs that long on each node.
const DDL_APPLIED_WAIT: Duration = Duration::from_secs(3600);
const VERSION: &str = "SELECT concat(@@version, ' ', @@version_comment)";
const CONNECTION_LIMIT: &str = "SELECT @@max_connections";
const SHOW_VARIABLES: &str = "SHOW GLOBAL VARIABLES";
const SHOW_SESSION_VARIABLES: &str = "SHOW SESSION VARIABLES";
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
    /// The gauges' own connection (`Dbms::gauges`).
    gauges: gauges::Gauges,
    /// performance_schema's wait summary at the step start.
    waits: waits::Waits,
    /// A managed primary's binlog replicas (`--replicas`), if any.
    replicas: replication::Replicas,
    /// A managed Galera cluster's nodes (`--galera`), if any.
    nodes: galera::Nodes,
}

/// Connection options of the server at `url` (with its password): TCP unless the URL names a
/// socket.
fn opts_of(url: &ServerUrl) -> Result<Opts> {
    let invalid = |e: String| UsageError::new(format!("invalid MySQL URL {}: {e}", url.redacted()));
    // Session variables are ibench's to set, not the client library's parameter.
    let (rest, vars) = session::split(url.url()).map_err(invalid)?;
    let mut text = if vars.is_empty() {
        url.without_password()
    } else {
        rest.to_string()
    };
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
    if let Some(sql) = session::statement(&vars) {
        builder = builder.init(vec![sql]);
    }
    Ok(builder.into())
}

impl Mysql {
    /// Connects once to check the server, the credentials and that `engine` is available.
    pub fn open(url: ServerUrl, engine: Engine, plain: bool) -> Result<Self> {
        let opts = opts_of(&url)?;
        let mut db = Mysql {
            opts,
            url,
            engine,
            plain,
            id_step: 1,
            gauges: gauges::Gauges::new(engine),
            waits: waits::Waits::default(),
            replicas: replication::Replicas::default(),
            nodes: galera::Nodes::default(),
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
        let restore = format!("SET GLOBAL innodb_max_dirty_pages_pct = {old}");
        // Set back by a guard process if ibench is killed before it sets it back itself.
        let guard = match guard::Guard::start(&self.opts, restore.clone()) {
            Ok(g) => g,
            Err(e) => return Ok(format!(", dirty-page flush skipped ({e:#})")),
        };
        if conn
            .query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            .is_err()
        {
            guard.disarm();
            return Ok(", dirty-page flush skipped (needs SUPER)".to_string());
        }
        // Restore the setting whatever happened while waiting (an interrupt ends the wait).
        let waited = wait_for_clean_pool(conn);
        let restored = conn.query_drop(&restore);
        if restored.is_ok() {
            guard.disarm();
        } else {
            // The guard tries again on a connection of its own.
            drop(guard);
        }
        let dirty = waited?;
        restored.context("restore innodb_max_dirty_pages_pct")?;
        Ok(format!(
            ", flushed dirty pages ({dirty} left; innodb_max_dirty_pages_pct was 0 for the \
             flush and is back to {old})"
        ))
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
        if dirty < 100 || Instant::now() >= deadline || crate::interrupt::requested() {
            return Ok(dirty);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Mysql {
    /// A client thread's connection.
    fn connection(&self) -> Result<MyConnection> {
        match self.nodes.next_node() {
            Some((opts, url)) => self.connection_to(opts, url),
            None => self.connection_to(&self.opts, &self.url),
        }
    }

    /// A client thread's connection to the server at `opts` (`url`, for messages): the
    /// primary, or a replica.
    fn connection_to(&self, opts: &Opts, url: &ServerUrl) -> Result<MyConnection> {
        let wire = MyWire::connect(opts).map_err(|e| DbError {
            message: format!("cannot connect to {}: {}", url.redacted(), e.message),
            kind: e.kind,
        })?;
        Ok(MyConnection::new(
            wire,
            self.engine,
            self.plain,
            self.id_step,
        ))
    }
}

impl Dbms for Mysql {
    fn kind(&self) -> DbmsKind {
        DbmsKind::of(&MYSQL)
    }

    fn connect_insert_benchmark(&self) -> Result<Box<dyn InsertBenchmarkConnection>> {
        Ok(Box::new(SqlInsertBenchmark::new(self.connection()?)))
    }

    fn connect_sql(&self) -> Result<Box<dyn SqlConnection>> {
        Ok(Box::new(self.connection()?))
    }

    fn connect_reader(&self, client: usize) -> Result<Box<dyn InsertBenchmarkConnection>> {
        match self.replicas.readers.reader(client) {
            Some((opts, url)) => Ok(Box::new(SqlInsertBenchmark::new(
                self.connection_to(opts, url)?,
            ))),
            None => self.connect_insert_benchmark(),
        }
    }

    fn connect_sql_reader(&self, client: usize) -> Result<Box<dyn SqlConnection>> {
        match self.replicas.readers.reader(client) {
            Some((opts, url)) => Ok(Box::new(self.connection_to(opts, url)?)),
            None => self.connect_sql(),
        }
    }

    fn read_replicas(&self) -> usize {
        self.replicas.readers.readers()
    }

    fn version(&self) -> Result<String> {
        let v: Option<String> = self.conn()?.query_first(VERSION)?;
        Ok(v.unwrap_or_default())
    }

    fn connection_limit(&self) -> Result<Option<u64>> {
        let n: Option<u64> = self.conn()?.query_first(CONNECTION_LIMIT)?;
        Ok(n)
    }

    fn multiplexed_clients(&self) -> bool {
        true
    }

    fn location(&self) -> String {
        self.url.redacted()
    }
}

impl Observe for Mysql {
    fn settings(&self) -> Result<BTreeMap<String, String>> {
        let mut conn = self.conn()?;
        let rows: Vec<(String, String)> = conn.query(SHOW_VARIABLES)?;
        let mut settings: BTreeMap<String, String> = rows.into_iter().collect();
        // The session variables of a URL's `sessionVariables`: as ibench's sessions had them.
        if !self.opts.get_init().is_empty() {
            let (_, vars) = session::split(self.url.url()).map_err(UsageError::new)?;
            let session: Vec<(String, String)> = conn.query(SHOW_SESSION_VARIABLES)?;
            for (name, value) in session {
                if vars.iter().any(|(v, _)| v.eq_ignore_ascii_case(&name)) {
                    settings.insert(name, value);
                }
            }
        }
        Ok(settings)
    }

    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        let rows: Vec<(String, String)> = self.conn()?.query("SHOW GLOBAL STATUS")?;
        let mut counters: BTreeMap<String, f64> = rows
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.parse::<f64>().ok()?)))
            .collect();
        if !self.nodes.is_empty() {
            self.nodes.conflict_counters(&mut counters);
        }
        Ok(counters)
    }

    /// Galera: each node's certification failures and brute-force aborts over the step.
    fn error_counts(&self, deltas: &BTreeMap<String, f64>) -> BTreeMap<String, u64> {
        galera::error_counts(deltas)
    }

    fn is_key_counter(&self, name: &str) -> bool {
        KEY_COUNTERS.contains(&name) || name.starts_with("Rocksdb_stall")
    }

    /// `SHOW ENGINE INNODB STATUS`, or the DB stats, compaction statistics and memory sections
    /// of `SHOW ENGINE ROCKSDB STATUS`.
    fn engine_status(&self) -> Result<BTreeMap<String, String>> {
        status::engine_status(&mut self.conn()?, self.engine)
    }

    /// MyRocks: information_schema.rocksdb_perf_context_global.
    fn perf_context(&self) -> Result<BTreeMap<String, f64>> {
        status::perf_context(&mut self.conn()?, self.engine)
    }

    /// performance_schema's wait summary, when it is on.
    fn waits_start(&self) -> Result<()> {
        self.waits.start(&mut self.conn()?)
    }

    fn waits_end(&self) -> Result<BTreeMap<String, f64>> {
        self.waits.stop(&mut self.conn()?)
    }

    /// InnoDB or MyRocks levels and stall counters, on a connection of their own.
    fn gauges(&self) -> Result<BTreeMap<String, f64>> {
        let mut gauges = self.gauges.read(&self.opts)?;
        if !self.replicas.readers.is_empty() {
            self.replicas.lag_gauges(&self.opts, &mut gauges);
        }
        if !self.nodes.is_empty() {
            self.nodes.gauges(&mut gauges);
        }
        Ok(gauges)
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
}

impl Maintain for Mysql {
    fn maintenance(&self, tables: &[Table], change_settings: bool) -> Result<Option<String>> {
        let mut conn = self.conn()?;
        for t in tables {
            conn.query_drop(ANALYZE.replace("{t}", &t.name))
                .with_context(|| format!("ANALYZE TABLE {}", t.name))?;
        }
        let more = match self.engine {
            Engine::Innodb if change_settings => self.flush_innodb(&mut conn)?,
            Engine::Innodb => ", dirty-page flush skipped: it would set \
                 innodb_max_dirty_pages_pct = 0 for a while on a server ibench did not start \
                 (--allow-server-changes allows it)"
                .to_string(),
            Engine::Rocksdb => match conn.query_drop(MYROCKS_FLUSH) {
                Ok(()) => ", flushed memtable and compacted L0".to_string(),
                Err(e) => format!(", memtable flush skipped ({e})"),
            },
        };
        Ok(Some(format!("ANALYZE TABLE per table{more}")))
    }

    /// InnoDB: the purge first (it dirties pages the flush then writes, and ANALYZE then
    /// sees the purged tables); MyRocks: the flushes and compactions after the maintenance's
    /// memtable flush and L0 compaction.
    fn post_write_maintenance(
        &self,
        tables: &[Table],
        change_settings: bool,
        until: Instant,
    ) -> Result<(Option<String>, Option<crate::dbms::Settled>)> {
        let settle = || settle::settle(&mut self.conn()?, self.engine, until);
        Ok(match self.engine {
            Engine::Innodb => {
                let settled = settle()?;
                (self.maintenance(tables, change_settings)?, Some(settled))
            }
            Engine::Rocksdb => {
                let done = self.maintenance(tables, change_settings)?;
                (done, Some(settle()?))
            }
        })
    }
}

impl Topology for Mysql {
    fn node_down(&self, name: &str) {
        if !self.nodes.set_down(name, true) {
            self.replicas.readers.set_down(name);
        }
    }

    fn node_up(&self, name: &str) {
        if !self.nodes.set_down(name, false) {
            self.replicas.readers.set_up(name);
        }
    }

    fn ddl_applied(&self) -> Result<()> {
        if self.nodes.is_empty() {
            return Ok(());
        }
        self.nodes.wait_applied(DDL_APPLIED_WAIT)
    }

    fn replica_catch_up(&self, timeout: Duration) -> Result<Vec<(String, Option<f64>)>> {
        if self.replicas.readers.is_empty() {
            return Ok(Vec::new());
        }
        self.replicas.catch_up(&mut self.conn()?, timeout)
    }
}


/// Deadlock, lock wait timeout, too many connections: transient; a lost connection (I/O or
/// driver error, server gone away): connection lost.
fn classify(e: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
    Some(match e.downcast_ref::<mysql::Error>()? {
        mysql::Error::MySqlError(m) => kind_of_code(m.code),
        mysql::Error::IoError(_) | mysql::Error::DriverError(_) | mysql::Error::CodecError(_) => {
            ErrorKind::ConnectionLost
        }
        _ => ErrorKind::Fatal,
    })
}


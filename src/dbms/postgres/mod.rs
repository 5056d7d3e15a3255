//! PostgreSQL (and servers that speak its protocol) over the `postgres` crate, without TLS.
//!
//! Statements are prepared once per connection (per table and batch size) and executed with
//! binary parameters. Inserts return the largest id through a CTE, in one round trip.
//! CockroachDB and YugabyteDB are detected from `version()` ([`Flavor`]) and get the
//! maintenance pause they support; they are not verified by the tests (see docs/design.md).

mod connection;
mod gauges;
mod numeric;
mod replication;
mod waits;
pub mod wire;

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use postgres::{Client, Config, NoTls};
use serde::{Deserialize, Serialize};

use wire::{PgWire, kind_of_sqlstate};
use crate::dbms::{Maintain, Observe, Topology};
use crate::dbms::{from_params, to_params};
use crate::dbms::url::ServerUrl;
use crate::dbms::{
    AssumedRates, CacheSetting, Capability, DbError, Dbms, DbmsKind, Descriptor, ErrorKind,
    InsertBenchmarkConnection, SqlConnection, Params, SettingError, StatementMode,
    Table, TargetSettings, TargetSpec,
};
use crate::error::UsageError;
use connection::PgConnection;
use crate::dbms::sql::SqlInsertBenchmark;

/// The registry's PostgreSQL.
pub static POSTGRES: PostgresDescriptor = PostgresDescriptor;

/// PostgreSQL, or a server speaking its protocol (CockroachDB, YugabyteDB).
pub struct PostgresDescriptor;

/// PostgreSQL's target parameters: none beyond the URL.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PostgresParams {}

impl Descriptor for PostgresDescriptor {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn about(&self) -> &'static str {
        "PostgreSQL, or a server speaking its protocol (CockroachDB, YugabyteDB)"
    }

    fn url_schemes(&self) -> &'static [&'static str] {
        &["postgres", "postgresql"]
    }

    fn password_env(&self) -> &'static str {
        "PGPASSWORD"
    }

    /// `-c name=value` in the URL's `options`, which the server applies to each session at
    /// connect (a setting it cannot change per session fails the connect, in its words).
    fn with_session_settings(
        &self,
        url: ServerUrl,
        settings: &[(String, String)],
    ) -> std::result::Result<ServerUrl, String> {
        if settings.is_empty() {
            return Ok(url);
        }
        let mut options = Vec::new();
        for (name, value) in settings {
            let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.');
            if name.is_empty() || !name.chars().all(plain) {
                return Err(format!("{name:?} is not a PostgreSQL parameter name"));
            }
            // In `options`, a space or a backslash in a value is escaped by a backslash.
            let mut escaped = String::new();
            for c in value.chars() {
                if c == ' ' || c == '\\' {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            options.push(format!("-c {name}={escaped}"));
        }
        Ok(url.with_query_appended("options", &options.join(" ")))
    }

    fn capabilities(&self) -> &'static [Capability] {
        &[Capability::InsertBenchmark, Capability::Sql]
    }

    fn params(&self, settings: &TargetSettings) -> Result<Params, SettingError> {
        settings.refuse_all_but(DbmsKind::of(&POSTGRES), &[])?;
        Ok(to_params(&PostgresParams::default()))
    }

    fn open(&self, target: &TargetSpec, mode: StatementMode) -> Result<Box<dyn Dbms>> {
        let _: PostgresParams = from_params(target.kind, &target.params)?;
        let mut db = Postgres::open(target.server_url()?.clone(), mode == StatementMode::Plain)?;
        if let Some(url) = &target.client_url {
            db.clients_through(url.clone())?;
        }
        if !target.replica_urls.is_empty() {
            db.replicas = replication::Replicas::new(
                &target.replica_urls,
                target.read_from_replicas,
                APPLICATION_NAME,
            )?;
            db.gauges.replication = true;
        }
        Ok(Box::new(db))
    }

    fn classify(&self, err: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
        err.downcast_ref::<postgres::Error>().map(kind_of)
    }

    fn cache(&self, _params: &Params) -> CacheSetting {
        CacheSetting {
            name: "shared_buffers",
            min_bytes: 1 << 20,
            format: |bytes| format!("{}MB", bytes >> 20),
            parse: |raw, _| pg_size(raw),
            per_connection: false,
        }
    }

    fn assumed_rates(&self, _params: &Params) -> AssumedRates {
        AssumedRates {
            load: 80_000.0,
            index: 250_000.0,
            more: 20_000.0,
            more_small: 6_000.0,
            server_s: 4.0,
            pause_s: 2.0,
        }
    }
}

/// A PostgreSQL memory setting as SHOW prints it (`128MB`, `8kB`), bytes; a bare number is
/// in 8 kB pages.
pub fn pg_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let mult = match s[digits..].trim() {
        "" => 8192,
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

const VERSION: &str = "SELECT version()";
/// Connections open to ordinary users: max_connections less the slots reserved for
/// superusers (and, from PostgreSQL 16, for roles with pg_use_reserved_connections).
const CONNECTION_LIMIT: &str = "SELECT current_setting('max_connections')::int \
     - current_setting('superuser_reserved_connections')::int \
     - coalesce(current_setting('reserved_connections', true)::int, 0)";
const SHOW_ALL: &str = "SHOW ALL";
const DB_SIZE: &str = "SELECT pg_database_size(current_database())";
/// Counter views read at step start and end; a view the server lacks is skipped.
const COUNTER_QUERIES: &[(&str, &str)] = &[
    (
        "pg_stat_database",
        "SELECT * FROM pg_stat_database WHERE datname = current_database()",
    ),
    ("pg_stat_bgwriter", "SELECT * FROM pg_stat_bgwriter"),
    ("pg_stat_wal", "SELECT * FROM pg_stat_wal"),
    (
        "pg_stat_user_tables",
        "SELECT sum(n_live_tup) AS n_live_tup, sum(n_dead_tup) AS n_dead_tup, \
         sum(n_tup_ins) AS n_tup_ins, sum(n_tup_del) AS n_tup_del, \
         sum(n_tup_upd) AS n_tup_upd, sum(n_tup_hot_upd) AS n_tup_hot_upd, \
         sum(seq_scan) AS seq_scan, sum(seq_tup_read) AS seq_tup_read, \
         sum(idx_scan) AS idx_scan, sum(idx_tup_fetch) AS idx_tup_fetch, \
         sum(vacuum_count) AS vacuum_count, sum(autovacuum_count) AS autovacuum_count, \
         sum(analyze_count) AS analyze_count, sum(autoanalyze_count) AS autoanalyze_count \
         FROM pg_stat_user_tables",
    ),
];
/// pg_stat_io (PostgreSQL 16+; the query fails before, and is skipped): the operations of
/// each backend type on each object in each context, as counters
/// `pg_stat_io.<backend_type>.<object>.<context>.<column>` (a combination that cannot happen
/// has NULLs: left out).
const STAT_IO: &str = "SELECT backend_type, object, context, reads, writes, extends, \
     writebacks, fsyncs, hits, evictions, reuses FROM pg_stat_io";
/// PgBouncer's admin console, and its command that closes the pool's server connections as
/// they are released (idle ones at once).
const POOLER_ADMIN_DB: &str = "pgbouncer";
const POOLER_RECONNECT: &str = "RECONNECT";
/// `application_name` of ibench's sessions.
const APPLICATION_NAME: &str = "ibench";
/// ibench's other sessions still open (the step's clients, closing).
const OPEN_SESSIONS: &str = "SELECT count(*) FROM pg_stat_activity \
     WHERE application_name = 'ibench' AND pid <> pg_backend_pid()";

/// Counters also reported per op.
const KEY_COUNTERS: &[&str] = &[
    "pg_stat_database.blks_read",
    "pg_stat_database.blks_hit",
    "pg_stat_database.xact_commit",
    "pg_stat_database.tup_returned",
    "pg_stat_database.tup_fetched",
    "pg_stat_database.tup_inserted",
    "pg_stat_database.tup_deleted",
    "pg_stat_database.temp_bytes",
    "pg_stat_wal.wal_records",
    "pg_stat_wal.wal_fpi",
    "pg_stat_wal.wal_bytes",
    "pg_stat_bgwriter.buffers_checkpoint",
    "pg_stat_bgwriter.buffers_clean",
    "pg_stat_bgwriter.buffers_backend",
    "pg_stat_user_tables.n_dead_tup",
    "pg_stat_user_tables.autovacuum_count",
];
const VACUUM_ANALYZE: &str = "VACUUM ANALYZE {t}";
/// The reference harness's vacuum from PostgreSQL 12 on: index cleanup forced, so that the
/// writes' dead index entries are gone before the reads that follow.
const VACUUM_ANALYZE_INDEX_CLEANUP: &str = "VACUUM (ANALYZE, INDEX_CLEANUP ON) {t}";
const SERVER_VERSION_NUM: &str = "SELECT current_setting('server_version_num')::int";
const CHECKPOINT: &str = "CHECKPOINT";

/// Which server speaks the protocol, from `version()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// PostgreSQL itself.
    Postgres,
    /// CockroachDB (no VACUUM, no CHECKPOINT).
    Cockroach,
    /// YugabyteDB (VACUUM is a no-op there; ANALYZE works).
    Yugabyte,
}

impl Flavor {
    /// Detects the server from its version string.
    pub fn from_version(version: &str) -> Self {
        if version.contains("CockroachDB") {
            Flavor::Cockroach
        } else if version.contains("-YB-") || version.contains("Yugabyte") {
            Flavor::Yugabyte
        } else {
            Flavor::Postgres
        }
    }

    /// Why the Insert Benchmark cannot run on this server, if it cannot. Its queue needs a
    /// table's ids to grow by one in commit order: the deletes claim id ranges behind the
    /// inserters and the point queries draw ids between the delete cursor and the largest
    /// committed id (docs/design.md, "The queue"). CockroachDB's `SERIAL` ids come from
    /// `unique_rowid()`: sparse (a timestamp and a node id), so nearly every drawn id misses.
    /// YugabyteDB's sequences hand each connection a cached block of ids, so the ids of a
    /// table's connections are not in commit order and a reconnection skips the rest of its
    /// block. Neither was run here (docs/dbms-notes.md, "Verified and not verified"); the
    /// microbenchmarks and TPC-C bind their own ids and are not refused.
    pub fn insert_benchmark_refusal(self) -> Option<&'static str> {
        match self {
            Flavor::Postgres => None,
            Flavor::Cockroach => Some(
                "CockroachDB: the Insert Benchmark's queue needs each table's ids to grow by one \
                 in commit order, and CockroachDB's SERIAL ids (unique_rowid()) are sparse; \
                 refused (the microbenchmarks and tpcc bind their own ids and run)",
            ),
            Flavor::Yugabyte => Some(
                "YugabyteDB: the Insert Benchmark's queue needs each table's ids to grow by one \
                 in commit order, and YugabyteDB's sequences hand each connection its own cached \
                 block of ids; refused (the microbenchmarks and tpcc bind their own ids and run)",
            ),
        }
    }
}

/// A PostgreSQL server reached by URL.
pub struct Postgres {
    config: Config,
    url: ServerUrl,
    /// Where client connections go when not to `url` (a pooler), and its URL.
    clients: Option<(Config, ServerUrl)>,
    flavor: Flavor,
    plain: bool,
    /// The gauges' own connection (`Dbms::gauges`).
    gauges: gauges::Gauges,
    /// The wait-event sampler of the step under way.
    waits: waits::Waits,
    /// Streaming replicas of a managed primary (`--replicas`).
    replicas: replication::Replicas,
}

impl Postgres {
    /// Connects once to check that the server is reachable and the credentials work.
    pub fn open(url: ServerUrl, plain: bool) -> Result<Self> {
        let mut config: Config = url.without_password().parse().map_err(|e| {
            UsageError::new(format!("invalid PostgreSQL URL {}: {e}", url.redacted()))
        })?;
        if let Some(pw) = url.password() {
            config.password(pw);
        }
        // Named, so ibench's own sessions can be told apart in pg_stat_activity.
        config.application_name(APPLICATION_NAME);
        let mut db = Postgres {
            config,
            url,
            clients: None,
            flavor: Flavor::Postgres,
            plain,
            gauges: gauges::Gauges::default(),
            waits: waits::Waits::default(),
            replicas: replication::Replicas::default(),
        };
        let version: String = db.client()?.query_one(VERSION, &[])?.get(0);
        db.flavor = Flavor::from_version(&version);
        Ok(db)
    }

    fn client(&self) -> Result<Client> {
        self.config.connect(NoTls).map_err(|e| {
            anyhow::anyhow!(
                "cannot connect to {}: {}",
                self.url.redacted(),
                error_text(&e)
            )
        })
    }
}

/// Deadlock, serialization failure, lock not available, too many connections: transient;
/// a closed connection or a server shutting down: connection lost.
fn kind_of(e: &postgres::Error) -> ErrorKind {
    if e.is_closed() {
        return ErrorKind::ConnectionLost;
    }
    kind_of_sqlstate(e.code().map(|c| c.code()))
}


/// The server's message for `e` (with SQLSTATE), or the client error; never the URL.
pub fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            text
        }
    }
}

impl Postgres {
    /// A client thread's connection.
    /// Sends the benchmark's client connections to `url` (a pooler in front of the server);
    /// ibench's own statements still go to the server.
    pub fn clients_through(&mut self, url: ServerUrl) -> Result<()> {
        let mut config: Config = url.without_password().parse().map_err(|e| {
            UsageError::new(format!("invalid PostgreSQL URL {}: {e}", url.redacted()))
        })?;
        if let Some(pw) = url.password() {
            config.password(pw);
        }
        config.application_name(APPLICATION_NAME);
        self.clients = Some((config, url));
        Ok(())
    }

    /// Behind a pooler: asks it to close its server connections (PgBouncer's RECONNECT on
    /// its admin console; idle ones close at once) and waits (2 s at most) until their
    /// backends are gone, having reported their statistics. Nothing without a pooler.
    fn release_pool(&self) {
        let Some((config, _)) = &self.clients else {
            return;
        };
        let mut admin = config.clone();
        admin.dbname(POOLER_ADMIN_DB);
        if let Ok(mut c) = admin.connect(NoTls) {
            let _ = c.simple_query(POOLER_RECONNECT);
        }
        let Ok(mut c) = self.client() else { return };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            match c.query_one(OPEN_SESSIONS, &[]) {
                Ok(row) if row.get::<_, i64>(0) > 0 => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => return,
            }
        }
    }

    fn connection(&self) -> Result<PgConnection> {
        let (config, url) = match &self.clients {
            Some((c, u)) => (c, u),
            None => (&self.config, &self.url),
        };
        let wire = PgWire::connect(config).map_err(|e| DbError {
            message: format!("cannot connect to {}: {}", url.redacted(), e.message),
            kind: e.kind,
        })?;
        Ok(PgConnection::new(wire, self.plain))
    }

    /// A connection to the replica `client` reads from, when the run reads from replicas.
    fn replica_connection(&self, client: usize) -> Result<Option<PgConnection>> {
        let Some((config, url)) = self.replicas.readers.reader(client) else {
            return Ok(None);
        };
        let wire = PgWire::connect(config).map_err(|e| DbError {
            message: format!("cannot connect to {}: {}", url.redacted(), e.message),
            kind: e.kind,
        })?;
        Ok(Some(PgConnection::new(wire, self.plain)))
    }
}

impl Dbms for Postgres {
    fn kind(&self) -> DbmsKind {
        DbmsKind::of(&POSTGRES)
    }

    fn connect_insert_benchmark(&self) -> Result<Box<dyn InsertBenchmarkConnection>> {
        if let Some(why) = self.flavor.insert_benchmark_refusal() {
            anyhow::bail!("{why}");
        }
        Ok(Box::new(SqlInsertBenchmark::new(self.connection()?)))
    }

    fn connect_sql(&self) -> Result<Box<dyn SqlConnection>> {
        Ok(Box::new(self.connection()?))
    }

    fn connect_reader(&self, client: usize) -> Result<Box<dyn InsertBenchmarkConnection>> {
        match self.replica_connection(client)? {
            Some(c) => Ok(Box::new(SqlInsertBenchmark::new(c))),
            None => self.connect_insert_benchmark(),
        }
    }

    fn connect_sql_reader(&self, client: usize) -> Result<Box<dyn SqlConnection>> {
        match self.replica_connection(client)? {
            Some(c) => Ok(Box::new(c)),
            None => self.connect_sql(),
        }
    }

    fn read_replicas(&self) -> usize {
        self.replicas.readers.readers()
    }

    fn version(&self) -> Result<String> {
        let mut c = self.client()?;
        Ok(c.query_one(VERSION, &[])?.get(0))
    }

    fn connection_limit(&self) -> Result<Option<u64>> {
        if self.clients.is_some() {
            // The clients connect to a pooler, whose server connections are its own.
            return Ok(None);
        }
        let n: i32 = self.client()?.query_one(CONNECTION_LIMIT, &[])?.get(0);
        Ok(Some(n.max(0) as u64))
    }

    fn multiplexed_clients(&self) -> bool {
        true
    }

    fn location(&self) -> String {
        self.url.redacted()
    }
}

impl Observe for Postgres {
    fn settings(&self) -> Result<BTreeMap<String, String>> {
        let mut c = self.client()?;
        let mut settings = BTreeMap::new();
        for msg in c.simple_query(SHOW_ALL)? {
            if let postgres::SimpleQueryMessage::Row(row) = msg
                && let (Some(name), Some(value)) = (row.get(0), row.get(1))
            {
                settings.insert(name.to_string(), value.to_string());
            }
        }
        Ok(settings)
    }

    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        // Behind a pooler, server backends serve many clients' statements and report them
        // late: each reading starts from closed pool connections, so a step's counters are
        // its own (the pool reconnects in the step's first transactions).
        self.release_pool();
        let mut c = self.client()?;
        let mut counters = BTreeMap::new();
        for (view, sql) in COUNTER_QUERIES {
            let Ok(messages) = c.simple_query(sql) else {
                continue;
            };
            for msg in messages {
                if let postgres::SimpleQueryMessage::Row(row) = msg {
                    for (i, col) in row.columns().iter().enumerate() {
                        if let Some(v) = row.get(i).and_then(|v| v.parse::<f64>().ok()) {
                            counters.insert(format!("{view}.{}", col.name()), v);
                        }
                    }
                }
            }
        }
        // PostgreSQL 16+: I/O by backend type, object and context.
        if let Ok(messages) = c.simple_query(STAT_IO) {
            for msg in messages {
                if let postgres::SimpleQueryMessage::Row(row) = msg {
                    let key = (0..3).map(|i| row.get(i).unwrap_or("")).collect::<Vec<_>>();
                    for (i, col) in row.columns().iter().enumerate().skip(3) {
                        if let Some(v) = row.get(i).and_then(|v| v.parse::<f64>().ok()) {
                            let name = format!("pg_stat_io.{}.{}", key.join("."), col.name());
                            counters.insert(name, v);
                        }
                    }
                }
            }
        }
        Ok(counters)
    }

    fn is_key_counter(&self, name: &str) -> bool {
        KEY_COUNTERS.contains(&name)
    }

    /// A backend reports its statistics when it exits: wait (up to 2 s) until the step's
    /// sessions are gone. Behind a pooler the server connections outlive the clients: the
    /// pooler is asked to close them first (PgBouncer's RECONNECT, on its admin console).
    fn settle_counters(&self) {
        if self.clients.is_some() {
            self.release_pool();
            return;
        }
        let Ok(mut c) = self.client() else { return };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while std::time::Instant::now() < deadline {
            match c.query_one(OPEN_SESSIONS, &[]) {
                Ok(row) if row.get::<_, i64>(0) > 0 => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => return,
            }
        }
    }

    /// Dead and live tuples of ibench's tables, WAL position, checkpoints and buffers written,
    /// autovacuum workers at work: one statement on a connection of their own, to the server
    /// (never through a pooler).
    fn gauges(&self) -> Result<BTreeMap<String, f64>> {
        if self.flavor != Flavor::Postgres {
            return Ok(BTreeMap::new());
        }
        self.gauges.read(&self.config)
    }

    /// Samples the wait events of active backends ten times a second (`waits.rs`).
    fn waits_start(&self) -> Result<()> {
        if self.flavor != Flavor::Postgres {
            return Ok(());
        }
        self.waits.start(&self.config)
    }

    fn waits_end(&self) -> Result<BTreeMap<String, f64>> {
        self.waits.stop()
    }

    fn size_bytes(&self) -> Result<Option<u64>> {
        let mut c = self.client()?;
        let n: i64 = c.query_one(DB_SIZE, &[])?.get(0);
        Ok(Some(n as u64))
    }
}

impl Maintain for Postgres {
    fn maintenance(&self, tables: &[Table], _change_settings: bool) -> Result<Option<String>> {
        let mut c = self.client()?;
        match self.flavor {
            Flavor::Cockroach => return Ok(None),
            Flavor::Yugabyte => {
                for t in tables {
                    c.batch_execute(&format!("ANALYZE {}", t.name))
                        .map_err(|e| anyhow::anyhow!("ANALYZE {}: {}", t.name, error_text(&e)))?;
                }
                return Ok(Some("ANALYZE per table".to_string()));
            }
            Flavor::Postgres => {}
        }
        let version: i32 = c
            .query_one(SERVER_VERSION_NUM, &[])
            .map(|r| r.get(0))
            .map_err(|e| anyhow::anyhow!("server_version_num: {}", error_text(&e)))?;
        let (vacuum, what) = if version >= 120_000 {
            (VACUUM_ANALYZE_INDEX_CLEANUP, "VACUUM (ANALYZE, INDEX_CLEANUP ON)")
        } else {
            (VACUUM_ANALYZE, "VACUUM ANALYZE")
        };
        for t in tables {
            c.batch_execute(&vacuum.replace("{t}", &t.name))
                .map_err(|e| anyhow::anyhow!("{what} {}: {}", t.name, error_text(&e)))?;
        }
        // CHECKPOINT needs superuser or pg_checkpoint; without them the pause is noted, not fatal.
        let checkpoint = match c.batch_execute(CHECKPOINT) {
            Ok(()) => "CHECKPOINT".to_string(),
            Err(e) if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
                "CHECKPOINT skipped (needs superuser or pg_checkpoint)".to_string()
            }
            Err(e) => bail!("CHECKPOINT: {}", error_text(&e)),
        };
        Ok(Some(format!("{what} per table, {checkpoint}")))
    }
}

impl Topology for Postgres {
    fn node_down(&self, name: &str) {
        self.replicas.readers.set_down(name);
    }

    fn node_up(&self, name: &str) {
        self.replicas.readers.set_up(name);
    }

    fn replica_catch_up(
        &self,
        timeout: std::time::Duration,
    ) -> Result<Vec<(String, Option<f64>)>> {
        if self.replicas.readers.is_empty() {
            return Ok(Vec::new());
        }
        self.replicas.catch_up(&mut self.client()?, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavor_from_version_strings() {
        assert_eq!(
            Flavor::from_version("PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64"),
            Flavor::Postgres
        );
        assert_eq!(
            Flavor::from_version("CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu)"),
            Flavor::Cockroach
        );
        assert_eq!(
            Flavor::from_version("PostgreSQL 11.2-YB-2.20.1.0-b0 on x86_64-pc-linux-gnu"),
            Flavor::Yugabyte
        );
    }

    #[test]
    fn the_insert_benchmark_is_refused_where_ids_are_not_dense() {
        assert_eq!(Flavor::Postgres.insert_benchmark_refusal(), None);
        let c = Flavor::Cockroach.insert_benchmark_refusal().unwrap();
        assert!(c.starts_with("CockroachDB: ") && c.contains("unique_rowid()"), "{c}");
        let y = Flavor::Yugabyte.insert_benchmark_refusal().unwrap();
        assert!(y.starts_with("YugabyteDB: ") && y.contains("cached"), "{y}");
    }
}

//! PostgreSQL (and servers that speak its protocol) over the `postgres` crate, without TLS.
//!
//! Statements are prepared once per connection (per table and batch size) and executed with
//! binary parameters. Inserts return the largest id through a CTE, in one round trip.
//! CockroachDB and YugabyteDB are detected from `version()` ([`Flavor`]) and get the
//! maintenance pause they support; they are not verified by the tests (see docs/design.md).

use std::collections::BTreeMap;
use std::collections::HashMap;

use anyhow::{Context, Result, bail};
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls};

use super::DbError;
use super::literal::{self, Literal};
use super::pgwire::{PgWire, Row, Statement};
use super::url::ServerUrl;
use super::{
    Connection, Dbms, DbmsKind, POINT_QUERY_IDS, RangeQuery, RowBatch, SbtestRows, SecondaryIndex,
    Table,
};
use crate::error::UsageError;

const CREATE_TABLE: &str = "CREATE TABLE {t} (
    transactionid bigserial PRIMARY KEY,
    dateandtime timestamp without time zone NOT NULL,
    cashregisterid integer NOT NULL,
    customerid integer NOT NULL,
    productid integer NOT NULL,
    price float8 NOT NULL,
    data varchar(4000))";
const DROP_TABLE: &str = "DROP TABLE IF EXISTS {t}";
const INSERT_PREFIX: &str = "WITH ins AS (INSERT INTO {t} \
     (dateandtime, cashregisterid, customerid, productid, price, data) VALUES ";
const INSERT_SUFFIX: &str = " RETURNING transactionid) SELECT max(transactionid) FROM ins";
const DELETE_RANGE: &str = "DELETE FROM {t} WHERE transactionid >= $1 AND transactionid < $2";
const MIN_ID: &str = "SELECT min(transactionid) FROM {t}";
const MAX_ID: &str = "SELECT max(transactionid) FROM {t}";
const COUNT_ROWS: &str = "SELECT count(*) FROM {t}";
const QUERY_MARKET: &str =
    "SELECT price, customerid FROM {t} WHERE price >= $1 ORDER BY price, customerid LIMIT 10";
const QUERY_REGISTER: &str = "SELECT cashregisterid, price, customerid FROM {t} \
     WHERE cashregisterid >= $1 ORDER BY cashregisterid, price, customerid LIMIT 10";
const QUERY_PDC: &str = "SELECT price, dateandtime, customerid FROM {t} \
     WHERE price >= $1 ORDER BY price, dateandtime, customerid LIMIT 10";
const QUERY_POINT: &str = "SELECT transactionid, dateandtime, cashregisterid, customerid, \
     productid, price, data FROM {t} WHERE transactionid IN ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)";
const CREATE_INDEX: &str = "CREATE INDEX {i} ON {t} ({c})";
const INDEX_NAMES: &str = "SELECT indexname::text FROM pg_indexes \
     WHERE schemaname = current_schema() AND tablename = $1 AND indexname <> $1 || '_pkey' \
     ORDER BY indexname";
const TABLE_EXISTS: &str = "SELECT to_regclass($1) IS NOT NULL";
/// sysbench's table (`id` is integer there: ids are bound as int4).
const CREATE_SBTEST: &str = "CREATE TABLE {t} (
    id integer NOT NULL,
    k integer NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id))";
const INSERT_SBTEST_PREFIX: &str = "INSERT INTO {t} (id, k, c, pad) VALUES ";
const CREATE_SBTEST_INDEX: &str = "CREATE INDEX {i} ON {t} (k)";
const POINT_SELECT: &str = "SELECT c FROM {t} WHERE id = $1";
const VERSION: &str = "SELECT version()";
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
         sum(vacuum_count) AS vacuum_count, sum(autovacuum_count) AS autovacuum_count, \
         sum(analyze_count) AS analyze_count, sum(autoanalyze_count) AS autoanalyze_count \
         FROM pg_stat_user_tables",
    ),
];
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
}

/// A PostgreSQL server reached by URL.
pub struct Postgres {
    config: Config,
    url: ServerUrl,
    flavor: Flavor,
    plain: bool,
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
            flavor: Flavor::Postgres,
            plain,
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
fn kind_of(e: &postgres::Error) -> super::ErrorKind {
    if e.is_closed() {
        return super::ErrorKind::ConnectionLost;
    }
    kind_of_sqlstate(e.code().map(|c| c.code()))
}

/// What an error with SQLSTATE `code` means for a client (`None`: the client lost the
/// server, an I/O error or an unexpected end).
pub fn kind_of_sqlstate(code: Option<&str>) -> super::ErrorKind {
    use super::ErrorKind;
    match code {
        Some("40001" | "40P01" | "55P03" | "53300") => ErrorKind::Transient,
        Some(c) if c.starts_with("08") || c.starts_with("57P") => ErrorKind::ConnectionLost,
        Some(_) => ErrorKind::Fatal,
        None => ErrorKind::ConnectionLost,
    }
}

/// The meaning of `e` if it is a PostgreSQL error.
pub fn classify(e: &(dyn std::error::Error + 'static)) -> Option<super::ErrorKind> {
    e.downcast_ref::<postgres::Error>().map(kind_of)
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

impl Dbms for Postgres {
    fn kind(&self) -> DbmsKind {
        DbmsKind::Postgres
    }

    fn connect(&self) -> Result<Box<dyn Connection>> {
        let wire = PgWire::connect(&self.config).map_err(|e| DbError {
            message: format!("cannot connect to {}: {}", self.url.redacted(), e.message),
            kind: e.kind,
        })?;
        Ok(Box::new(PgConnection {
            wire,
            tables: Vec::new(),
            point_selects: Vec::new(),
            plain: self.plain,
        }))
    }

    fn version(&self) -> Result<String> {
        let mut c = self.client()?;
        Ok(c.query_one(VERSION, &[])?.get(0))
    }

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

    fn maintenance(&self, tables: &[Table]) -> Result<Option<String>> {
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
        for t in tables {
            c.batch_execute(&VACUUM_ANALYZE.replace("{t}", &t.name))
                .map_err(|e| anyhow::anyhow!("VACUUM ANALYZE {}: {}", t.name, error_text(&e)))?;
        }
        // CHECKPOINT needs superuser or pg_checkpoint; without them the pause is noted, not fatal.
        let checkpoint = match c.batch_execute(CHECKPOINT) {
            Ok(()) => "CHECKPOINT".to_string(),
            Err(e) if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
                "CHECKPOINT skipped (needs superuser or pg_checkpoint)".to_string()
            }
            Err(e) => bail!("CHECKPOINT: {}", error_text(&e)),
        };
        Ok(Some(format!("VACUUM ANALYZE per table, {checkpoint}")))
    }

    fn counters(&self) -> Result<BTreeMap<String, f64>> {
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
        Ok(counters)
    }

    fn is_key_counter(&self, name: &str) -> bool {
        KEY_COUNTERS.contains(&name)
    }

    /// A backend reports its statistics when it exits: wait (up to 2 s) until the step's
    /// sessions are gone.
    fn settle_counters(&self) {
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

    fn size_bytes(&self) -> Result<Option<u64>> {
        let mut c = self.client()?;
        let n: i64 = c.query_one(DB_SIZE, &[])?.get(0);
        Ok(Some(n as u64))
    }

    fn location(&self) -> String {
        self.url.redacted()
    }
}

/// Prepared statements of one table on one connection.
struct TableStatements {
    delete_range: Statement,
    min_id: Statement,
    max_id: Statement,
    count_rows: Statement,
    market: Statement,
    register: Statement,
    pdc: Statement,
    point: Statement,
    inserts: HashMap<usize, Statement>,
}

/// A client thread's connection, over the lean wire client (see `pgwire.rs` for why).
struct PgConnection {
    wire: PgWire,
    tables: Vec<Option<TableStatements>>,
    /// Point select per sysbench-style table.
    point_selects: Vec<Option<Statement>>,
    /// Plain-SQL mode: simple-query protocol with values inlined, nothing prepared.
    plain: bool,
}

/// Maps a wire error to one naming the statement and table, keeping its kind; formats only
/// on error.
fn sql_err<'a>(what: &'a str, table: &'a Table) -> impl FnOnce(DbError) -> anyhow::Error + 'a {
    move |e| {
        anyhow::Error::new(DbError {
            message: format!("{what} {}: {}", table.name, e.message),
            kind: e.kind,
        })
    }
}

/// Ignores the rows of a statement run for its effect.
fn no_rows(_: &Row<'_>) -> Result<(), DbError> {
    Ok(())
}

impl PgConnection {
    /// The connection and the statements of `table` (prepared on first use), borrowed apart.
    fn parts(&mut self, table: &Table) -> Result<(&mut PgWire, &mut TableStatements)> {
        if self.tables.len() <= table.id {
            self.tables.resize_with(table.id + 1, || None);
        }
        if self.tables[table.id].is_none() {
            let w = &mut self.wire;
            let t = |sql: &str| sql.replace("{t}", &table.name);
            let mut prep = |sql: &str| w.prepare(&t(sql)).map_err(sql_err("prepare on", table));
            let s = TableStatements {
                delete_range: prep(DELETE_RANGE)?,
                min_id: prep(MIN_ID)?,
                max_id: prep(MAX_ID)?,
                count_rows: prep(COUNT_ROWS)?,
                market: prep(QUERY_MARKET)?,
                register: prep(QUERY_REGISTER)?,
                pdc: prep(QUERY_PDC)?,
                point: prep(QUERY_POINT)?,
                inserts: HashMap::new(),
            };
            self.tables[table.id] = Some(s);
        }
        let s = self.tables[table.id].as_mut().expect("just prepared");
        Ok((&mut self.wire, s))
    }

    /// The multi-row INSERT of `rows` rows into `table`, prepared on first use.
    fn insert_statement(
        &mut self,
        table: &Table,
        rows: usize,
    ) -> Result<(&mut PgWire, &Statement)> {
        let (wire, s) = self.parts(table)?;
        let stmt = match s.inserts.entry(rows) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut sql = INSERT_PREFIX.replace("{t}", &table.name);
                for i in 0..rows {
                    let p = i * 6;
                    if i > 0 {
                        sql.push(',');
                    }
                    sql.push_str(&format!(
                        "(${},${},${},${},${},${})",
                        p + 1,
                        p + 2,
                        p + 3,
                        p + 4,
                        p + 5,
                        p + 6
                    ));
                }
                sql.push_str(INSERT_SUFFIX);
                e.insert(
                    wire.prepare(&sql)
                        .map_err(sql_err("prepare insert into", table))?,
                )
            }
        };
        Ok((wire, stmt))
    }

    /// Runs a statement of `table` without parameters and returns its single `Option<i64>`.
    fn opt_i64(
        &mut self,
        table: &Table,
        pick: fn(&TableStatements) -> &Statement,
        what: &str,
    ) -> Result<Option<i64>> {
        let (wire, s) = self.parts(table)?;
        let mut value = None;
        wire.query(pick(s), &[], |r| {
            value = r.get(0)?;
            Ok(())
        })
        .map_err(sql_err(what, table))?;
        Ok(value)
    }

    /// The point select of sysbench-style `table`, prepared on first use.
    fn point_select_statement(&mut self, table: &Table) -> Result<(&mut PgWire, &Statement)> {
        if self.point_selects.len() <= table.id {
            self.point_selects.resize_with(table.id + 1, || None);
        }
        let slot = &mut self.point_selects[table.id];
        if slot.is_none() {
            let s = self
                .wire
                .prepare(&POINT_SELECT.replace("{t}", &table.name))
                .map_err(sql_err("prepare on", table))?;
            *slot = Some(s);
        }
        Ok((&mut self.wire, slot.as_ref().expect("just prepared")))
    }
}

/// Plain-SQL mode (and one-off statements): runs `sql` (placeholders filled with `values`)
/// over the simple-query protocol; returns the rows' first column as text, and the
/// affected-row count.
fn simple(
    wire: &mut PgWire,
    sql: &str,
    values: &[Literal<'_>],
    table: &Table,
) -> Result<(Vec<Option<String>>, u64)> {
    let text = literal::bind(&sql.replace("{t}", &table.name), values, false);
    let mut first = Vec::new();
    let affected = wire
        .simple_query(&text, |r| {
            first.push(r.text(0).map(str::to_string));
            Ok(())
        })
        .map_err(sql_err("SQL on", table))?;
    Ok((first, affected))
}

fn parse_i64(v: Option<&Option<String>>) -> Result<Option<i64>> {
    match v {
        Some(Some(s)) => Ok(Some(s.parse().context("server returned a non-integer")?)),
        _ => Ok(None),
    }
}

impl Connection for PgConnection {
    fn create_table(&mut self, table: &Table) -> Result<()> {
        if let Some(t) = self.tables.get_mut(table.id) {
            *t = None;
        }
        simple(&mut self.wire, DROP_TABLE, &[], table)?;
        simple(&mut self.wire, CREATE_TABLE, &[], table)?;
        Ok(())
    }

    fn create_indexes(
        &mut self,
        table: &Table,
        indexes: &[SecondaryIndex],
        combined: bool,
    ) -> Result<()> {
        if combined {
            bail!(
                "PostgreSQL creates one index per statement; combined index DDL is not supported"
            );
        }
        for index in indexes {
            let sql = CREATE_INDEX
                .replace("{i}", &index.name_on(&table.name))
                .replace("{c}", &index.columns().join(", "));
            simple(&mut self.wire, &sql, &[], table)?;
        }
        Ok(())
    }

    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        let (names, _) = simple(
            &mut self.wire,
            INDEX_NAMES,
            &[Literal::Str(&table.name)],
            table,
        )?;
        Ok(names.into_iter().flatten().collect())
    }

    fn table_exists(&mut self, table: &Table) -> Result<bool> {
        let (rows, _) = simple(
            &mut self.wire,
            TABLE_EXISTS,
            &[Literal::Str(&table.name)],
            table,
        )?;
        Ok(rows.first() == Some(&Some("t".to_string())))
    }

    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64> {
        let date = super::datetime(rows.dateandtime);
        if self.plain {
            let text = format!(
                "{}{}{}",
                INSERT_PREFIX,
                literal::values(rows, &super::datetime_text(rows.dateandtime), false),
                INSERT_SUFFIX
            );
            let (first, _) = simple(&mut self.wire, &text, &[], table)?;
            return Ok(parse_i64(first.first())?.unwrap_or(0));
        }
        // Two small allocations per batch: the values' references.
        let data: Vec<&str> = (0..rows.len()).map(|i| rows.data(i)).collect();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(rows.len() * 6);
        for (i, d) in data.iter().enumerate() {
            params.extend_from_slice(&[
                &date as &(dyn ToSql + Sync),
                &rows.cashregisterid[i],
                &rows.customerid[i],
                &rows.productid[i],
                &rows.price[i],
                d,
            ]);
        }
        let (wire, stmt) = self.insert_statement(table, rows.len())?;
        let mut last = None;
        wire.query(stmt, &params, |r| {
            last = r.get::<Option<i64>>(0)?;
            Ok(())
        })
        .map_err(sql_err("insert into", table))?;
        Ok(last.unwrap_or(0))
    }

    fn delete_range(&mut self, table: &Table, lo: i64, hi: i64) -> Result<u64> {
        if self.plain {
            let values = [Literal::Int(lo), Literal::Int(hi)];
            return Ok(simple(&mut self.wire, DELETE_RANGE, &values, table)?.1);
        }
        let (wire, s) = self.parts(table)?;
        wire.query(&s.delete_range, &[&lo, &hi], no_rows)
            .map_err(sql_err("delete from", table))
    }

    fn min_id(&mut self, table: &Table) -> Result<Option<i64>> {
        if self.plain {
            return parse_i64(simple(&mut self.wire, MIN_ID, &[], table)?.0.first());
        }
        self.opt_i64(table, |s| &s.min_id, "select min from")
    }

    fn max_id(&mut self, table: &Table) -> Result<Option<i64>> {
        if self.plain {
            return parse_i64(simple(&mut self.wire, MAX_ID, &[], table)?.0.first());
        }
        self.opt_i64(table, |s| &s.max_id, "select max from")
    }

    fn count_rows(&mut self, table: &Table) -> Result<u64> {
        if self.plain {
            let n = parse_i64(simple(&mut self.wire, COUNT_ROWS, &[], table)?.0.first())?;
            return Ok(n.unwrap_or(0) as u64);
        }
        let n = self.opt_i64(table, |s| &s.count_rows, "count rows of")?;
        Ok(n.unwrap_or(0) as u64)
    }

    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize> {
        if self.plain {
            let (sql, value) = match query {
                RangeQuery::Market => (QUERY_MARKET, Literal::Float(start)),
                RangeQuery::Register => (QUERY_REGISTER, Literal::Int(start as i64)),
                RangeQuery::Pdc => (QUERY_PDC, Literal::Float(start)),
            };
            return Ok(simple(&mut self.wire, sql, &[value], table)?.0.len());
        }
        let (wire, s) = self.parts(table)?;
        let register = start as i32;
        let (stmt, param): (&Statement, &(dyn ToSql + Sync)) = match query {
            RangeQuery::Market => (&s.market, &start),
            RangeQuery::Register => (&s.register, &register),
            RangeQuery::Pdc => (&s.pdc, &start),
        };
        let mut n = 0;
        wire.query(stmt, &[param], |_| {
            n += 1;
            Ok(())
        })
        .map_err(sql_err("range query on", table))?;
        Ok(n)
    }

    fn point_query(&mut self, table: &Table, ids: &[i64], found: &mut Vec<i64>) -> Result<usize> {
        found.clear();
        if ids.is_empty() {
            return Ok(0);
        }
        if self.plain {
            let values = literal::point_ids(ids);
            for v in simple(&mut self.wire, QUERY_POINT, &values, table)?
                .0
                .iter()
            {
                found.extend(parse_i64(Some(v))?);
            }
            return Ok(found.len());
        }
        let (wire, s) = self.parts(table)?;
        let params: [&(dyn ToSql + Sync); POINT_QUERY_IDS] =
            std::array::from_fn(|i| ids.get(i).unwrap_or(&ids[0]) as &(dyn ToSql + Sync));
        wire.query(&s.point, &params, |r| {
            found.push(r.get(0)?);
            Ok(())
        })
        .map_err(sql_err("point query on", table))?;
        Ok(found.len())
    }

    fn create_sbtest(&mut self, table: &Table) -> Result<()> {
        if let Some(s) = self.point_selects.get_mut(table.id) {
            *s = None;
        }
        simple(&mut self.wire, DROP_TABLE, &[], table)?;
        simple(&mut self.wire, CREATE_SBTEST, &[], table)?;
        Ok(())
    }

    fn insert_sbtest(&mut self, table: &Table, rows: &SbtestRows) -> Result<()> {
        let mut sql = INSERT_SBTEST_PREFIX.replace("{t}", &table.name);
        for i in 0..rows.len() {
            let p = 4 * i;
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("(${},${},${},${})", p + 1, p + 2, p + 3, p + 4));
        }
        let ids: Vec<i32> = rows.id.iter().map(|&id| id as i32).collect();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(4 * rows.len());
        for (i, id) in ids.iter().enumerate() {
            params.extend([
                id as &(dyn ToSql + Sync),
                &rows.k[i],
                &rows.c[i],
                &rows.pad[i],
            ]);
        }
        // The load is not the measured path: a one-off (unnamed) statement per batch.
        let stmt = self
            .wire
            .prepare_unnamed(&sql)
            .map_err(sql_err("prepare insert into", table))?;
        self.wire
            .query(&stmt, &params, no_rows)
            .map_err(sql_err("insert into", table))?;
        Ok(())
    }

    fn create_sbtest_index(&mut self, table: &Table, index: &str) -> Result<()> {
        simple(
            &mut self.wire,
            &CREATE_SBTEST_INDEX.replace("{i}", index),
            &[],
            table,
        )?;
        Ok(())
    }

    fn point_select(&mut self, table: &Table, id: i64) -> Result<usize> {
        if self.plain {
            let (rows, _) = simple(&mut self.wire, POINT_SELECT, &[Literal::Int(id)], table)?;
            return Ok(rows.len());
        }
        let (wire, stmt) = self.point_select_statement(table)?;
        let id = id as i32;
        let mut n = 0;
        wire.query(stmt, &[&id], |r| {
            // Read the value, as a client would.
            std::hint::black_box(r.get::<&str>(0)?);
            n += 1;
            Ok(())
        })
        .map_err(sql_err("point select on", table))?;
        Ok(n)
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
}

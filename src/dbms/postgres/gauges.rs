//! PostgreSQL's gauges, read once a second on a connection of their own (opened at the first
//! reading and kept; dropped and reopened at the next reading after a lost connection).
//!
//! One prepared statement per reading: dead and live tuples of ibench's tables (those whose
//! comment is [`TABLE_MARK`], looked up every [`TABLES_EVERY`] readings), the WAL position,
//! checkpoints and buffers written (cumulative: names ending in `_total`), and the autovacuum
//! workers at work.

use std::collections::BTreeMap;
use std::sync::Mutex;

use anyhow::Result;
use postgres::{Client, Config, NoTls, Statement};

use crate::dbms::TABLE_MARK;

/// `application_name` of the gauges' session.
pub(super) const APPLICATION_NAME: &str = "ibench gauges";
/// ibench's tables (their comment is [`TABLE_MARK`]): looked up until found, then every
/// [`TABLES_EVERY`] readings, since the lookup scans pg_description (0.3-0.7 ms on the server,
/// against 0.1 ms for the whole reading by oid).
const TABLES: &str = "SELECT objoid FROM pg_description \
     WHERE classoid = 'pg_class'::regclass AND objsubid = 0 AND description = $1";
/// How often (in readings) the list of ibench's tables is looked up again.
const TABLES_EVERY: u32 = 10;
/// Before PostgreSQL 17: checkpoints and buffers written are in pg_stat_bgwriter.
const BEFORE_17: &str = "SELECT \
     (SELECT coalesce(sum(pg_stat_get_dead_tuples(o)), 0) FROM unnest($1::oid[]) o)::float8 \
        AS dead_tuples, \
     (SELECT coalesce(sum(pg_stat_get_live_tuples(o)), 0) FROM unnest($1::oid[]) o)::float8 \
        AS live_tuples, \
     pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal_bytes_total, \
     (checkpoints_timed + checkpoints_req)::float8 AS checkpoints_total, \
     (buffers_checkpoint + buffers_clean + buffers_backend)::float8 AS buffers_written_total, \
     (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker')::float8 \
        AS autovacuum_workers \
     FROM pg_stat_bgwriter";
/// PostgreSQL 17 and later: the checkpointer's figures moved to pg_stat_checkpointer, and
/// backends' writes to pg_stat_io (not counted here).
const FROM_17: &str = "SELECT \
     (SELECT coalesce(sum(pg_stat_get_dead_tuples(o)), 0) FROM unnest($1::oid[]) o)::float8 \
        AS dead_tuples, \
     (SELECT coalesce(sum(pg_stat_get_live_tuples(o)), 0) FROM unnest($1::oid[]) o)::float8 \
        AS live_tuples, \
     pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal_bytes_total, \
     (c.num_timed + c.num_requested)::float8 AS checkpoints_total, \
     (c.buffers_written + b.buffers_clean)::float8 AS buffers_written_total, \
     (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker')::float8 \
        AS autovacuum_workers \
     FROM pg_stat_checkpointer c, pg_stat_bgwriter b";

/// The gauges' connection and its prepared statement.
struct Reader {
    client: Client,
    statement: Statement,
    tables: Statement,
    /// ibench's tables when last looked up.
    oids: Vec<u32>,
    /// Readings since the last lookup of `oids`.
    readings: u32,
    /// The replicas' lag (`replication::LAG`), when the server has replicas of the run.
    replication: Option<Statement>,
}

impl Reader {
    fn read(&mut self) -> Result<BTreeMap<String, f64>, postgres::Error> {
        if self.oids.is_empty() || self.readings.is_multiple_of(TABLES_EVERY) {
            let rows = self.client.query(&self.tables, &[&TABLE_MARK])?;
            self.oids = rows.iter().map(|r| r.get(0)).collect();
        }
        self.readings = self.readings.wrapping_add(1);
        let row = self.client.query_one(&self.statement, &[&self.oids])?;
        let mut gauges: BTreeMap<String, f64> = row
            .columns()
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let v: Option<f64> = row.get(i);
                Some((format!("pg.{}", c.name()), v?))
            })
            .collect();
        if let Some(lag) = &self.replication {
            let rows = self.client.query(lag, &[])?;
            super::replication::lag_gauges(&rows, &mut gauges);
        }
        Ok(gauges)
    }
}

/// PostgreSQL's gauges: a connection of their own, off the clients' path.
#[derive(Default)]
pub(super) struct Gauges {
    reader: Mutex<Option<Reader>>,
    /// Set when the server cannot answer the statement (not PostgreSQL, or a version without
    /// these views): no more readings are tried.
    unavailable: std::sync::atomic::AtomicBool,
    /// Also read the replicas' lag (the run has replicas).
    pub(super) replication: bool,
}

impl Gauges {
    /// The current gauges, named `pg.<column>`.
    pub(super) fn read(&self, config: &Config) -> Result<BTreeMap<String, f64>> {
        use std::sync::atomic::Ordering;
        if self.unavailable.load(Ordering::Relaxed) {
            return Ok(BTreeMap::new());
        }
        let mut guard = self.reader.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            // Named apart from the clients' sessions, which the runner waits to see closed.
            let mut config = config.clone();
            config.application_name(APPLICATION_NAME);
            let mut client = config.connect(NoTls)?;
            let version: i32 = client
                .query_one("SELECT current_setting('server_version_num')::int", &[])?
                .get(0);
            let sql = if version >= 170_000 { FROM_17 } else { BEFORE_17 };
            let (statement, tables) = match client.prepare(sql).and_then(|s| {
                let t = client.prepare(TABLES)?;
                Ok((s, t))
            }) {
                Ok(s) => s,
                Err(e) => {
                    self.unavailable.store(true, Ordering::Relaxed);
                    return Err(e.into());
                }
            };
            let replication = if self.replication {
                Some(client.prepare(super::replication::LAG)?)
            } else {
                None
            };
            *guard = Some(Reader {
                client,
                statement,
                tables,
                oids: Vec::new(),
                readings: 0,
                replication,
            });
        }
        let reader = guard.as_mut().expect("opened above");
        match reader.read() {
            Ok(gauges) => Ok(gauges),
            Err(e) => {
                // A lost connection is reopened at the next reading.
                *guard = None;
                Err(e.into())
            }
        }
    }
}

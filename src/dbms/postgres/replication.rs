//! A PostgreSQL primary's streaming replicas (a managed server's `--replicas`): where the
//! query threads read when the run reads from them (round-robin per client), the replicas'
//! lag as gauges (pg_stat_replication on the primary), and how long each takes to replay up
//! to the primary's WAL position at a step's end (pg_last_wal_replay_lsn on each replica).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use postgres::{Client, Config, NoTls};

use crate::dbms::readers::Readers;
use crate::dbms::url::ServerUrl;
use crate::error::UsageError;

/// Each replica's lag, read on the primary. A lag PostgreSQL shows as NULL (the replica has
/// caught up and no WAL is being sent) reads as 0.
pub(super) const LAG: &str = "SELECT application_name, \
     coalesce(extract(epoch FROM write_lag), 0)::float8, \
     coalesce(extract(epoch FROM flush_lag), 0)::float8, \
     coalesce(extract(epoch FROM replay_lag), 0)::float8, \
     coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0)::float8 \
     FROM pg_stat_replication";
/// The primary's WAL position, as text.
const CURRENT_LSN: &str = "SELECT pg_current_wal_lsn()::text";
/// Whether a replica has replayed up to a position.
const REPLAYED: &str = "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::text::pg_lsn, false)";

/// The gauge names of one replica's lag row (`pg.replica.r1.replay_lag_s`), in LAG's order.
pub(super) const LAG_GAUGES: [&str; 4] = [
    "write_lag_s",
    "flush_lag_s",
    "replay_lag_s",
    "bytes_behind",
];

/// The replicas of a run.
#[derive(Default)]
pub(super) struct Replicas {
    /// Each replica's configuration (application_name: ibench's) and URL, and where
    /// readers go.
    pub(super) readers: Readers<Config>,
}

impl Replicas {
    /// The replicas at `urls` (the query threads read from them when `read`).
    pub(super) fn new(urls: &[ServerUrl], read: bool, app: &str) -> Result<Self> {
        let mut nodes = Vec::with_capacity(urls.len());
        for url in urls {
            let mut config: Config = url.without_password().parse().map_err(|e| {
                UsageError::new(format!("invalid PostgreSQL URL {}: {e}", url.redacted()))
            })?;
            if let Some(pw) = url.password() {
                config.password(pw);
            }
            config.application_name(app);
            nodes.push((config, url.clone()));
        }
        Ok(Replicas {
            readers: Readers::new(nodes, read),
        })
    }





    /// The primary's WAL position now (on `primary`), then each replica's seconds until it
    /// had replayed up to it (`None` when not within `timeout`, or it cannot be reached).
    /// Replicas are named `r1` .. `rN` in order, as the managed server names them.
    pub(super) fn catch_up(
        &self,
        primary: &mut Client,
        timeout: Duration,
    ) -> Result<Vec<(String, Option<f64>)>> {
        let lsn: String = primary.query_one(CURRENT_LSN, &[])?.get(0);
        let start = Instant::now();
        let mut clients: Vec<Option<Client>> = self
            .readers
            .nodes()
            .iter()
            .map(|(c, _)| c.connect(NoTls).ok())
            .collect();
        let mut done: Vec<Option<f64>> = vec![None; self.readers.nodes().len()];
        while start.elapsed() < timeout {
            let mut waiting = false;
            for (i, client) in clients.iter_mut().enumerate() {
                let Some(c) = client.as_mut().filter(|_| done[i].is_none()) else {
                    continue;
                };
                match c.query_one(REPLAYED, &[&lsn]) {
                    Ok(row) if row.get::<_, bool>(0) => {
                        done[i] = Some(start.elapsed().as_secs_f64());
                    }
                    Ok(_) => waiting = true,
                    Err(_) => *client = None,
                }
            }
            if !waiting || crate::interrupt::requested() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(done
            .into_iter()
            .enumerate()
            .map(|(i, d)| (format!("r{}", i + 1), d))
            .collect())
    }
}

/// The replicas' lag rows read on the primary as gauges, `pg.replica.<name>.<figure>`.
pub(super) fn lag_gauges(rows: &[postgres::Row], gauges: &mut BTreeMap<String, f64>) {
    for row in rows {
        let name: Option<String> = row.get(0);
        // Only plain names make gauge names (a user's replica may be called anything).
        let Some(name) = name.filter(|n| {
            !n.is_empty()
                && n.len() <= 32
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }) else {
            continue;
        };
        for (i, figure) in LAG_GAUGES.iter().enumerate() {
            let v: Option<f64> = row.get(i + 1);
            if let Some(v) = v {
                gauges.insert(format!("pg.replica.{name}.{figure}"), v.max(0.0));
            }
        }
    }
}

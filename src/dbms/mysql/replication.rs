//! A MariaDB primary's binlog replicas (a managed server's `--replicas`): where the query
//! threads read when the run reads from them (round-robin per client), each replica's lag as
//! gauges, and how long each takes to apply the primary's GTID position at a step's end
//! (`MASTER_GTID_WAIT` on each replica, all at once).
//!
//! Gauges, once a second, `mysql.replica.<name>.<figure>`: `replay_lag_s` is the replica's
//! `Seconds_Behind_Master` (whole seconds: the age of the event its SQL thread applies);
//! `bytes_behind` is the primary's binlog position minus the position the replica has applied
//! up to (`Exec_Master_Log_Pos`), read when both name the same binlog file.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, Row};

use crate::dbms::readers::Readers;
use crate::dbms::url::ServerUrl;

/// The replicas of a run (named `r1` .. `rN` in order, as the managed server names them).
#[derive(Default)]
pub(super) struct Replicas {
    /// Each replica's connection options and URL, and where readers go.
    pub(super) readers: Readers<Opts>,
    /// The gauges' connections: the primary's, then each replica's (reopened after an error).
    conns: Mutex<Vec<Option<Conn>>>,
}

impl Replicas {
    /// The replicas at `urls` (the query threads read from them when `read`).
    pub(super) fn new(urls: &[ServerUrl], read: bool) -> Result<Self> {
        let nodes = urls
            .iter()
            .map(|u| Ok((super::opts_of(u)?, u.clone())))
            .collect::<Result<Vec<_>>>()?;
        Ok(Replicas {
            conns: Mutex::new((0..=nodes.len()).map(|_| None).collect()),
            readers: Readers::new(nodes, read),
        })
    }





    /// The primary's GTID position now (on `primary`), then each replica's seconds until it
    /// had applied it (`None` when not within `timeout`, or it cannot be reached); the
    /// replicas wait at once, each on a connection of its own.
    pub(super) fn catch_up(
        &self,
        primary: &mut Conn,
        timeout: Duration,
    ) -> Result<Vec<(String, Option<f64>)>> {
        let position: String = primary
            .query_first("SELECT @@GLOBAL.gtid_binlog_pos")?
            .unwrap_or_default();
        let start = Instant::now();
        let done: Vec<Option<f64>> = std::thread::scope(|scope| {
            let waits: Vec<_> = (self.readers.nodes().iter())
                .map(|(opts, _)| {
                    let position = &position;
                    scope.spawn(move || -> Option<f64> {
                        let mut conn = Conn::new(opts.clone()).ok()?;
                        let left = timeout.saturating_sub(start.elapsed()).as_secs_f64();
                        let r: Option<i64> = conn
                            .exec_first("SELECT MASTER_GTID_WAIT(?, ?)", (position, left))
                            .ok()?;
                        (r == Some(0)).then(|| start.elapsed().as_secs_f64())
                    })
                })
                .collect();
            waits
                .into_iter()
                .map(|w| w.join().ok().flatten())
                .collect()
        });
        Ok(done
            .into_iter()
            .enumerate()
            .map(|(i, d)| (format!("r{}", i + 1), d))
            .collect())
    }

    /// Each replica's lag now, into `gauges` (a replica that cannot be read is left out of
    /// this reading).
    pub(super) fn lag_gauges(&self, primary: &Opts, gauges: &mut BTreeMap<String, f64>) {
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        let Some(head) = read_on(&mut conns[0], primary, "SHOW MASTER STATUS") else {
            return;
        };
        let file: String = text(&head, "File");
        let position: f64 = text(&head, "Position").parse().unwrap_or(f64::NAN);
        for (i, (opts, _)) in self.readers.nodes().iter().enumerate() {
            let Some(row) = read_on(&mut conns[i + 1], opts, "SHOW SLAVE STATUS") else {
                continue;
            };
            let name = format!("mysql.replica.r{}", i + 1);
            if let Ok(lag) = text(&row, "Seconds_Behind_Master").parse::<f64>() {
                gauges.insert(format!("{name}.replay_lag_s"), lag.max(0.0));
            }
            let applied: f64 = text(&row, "Exec_Master_Log_Pos")
                .parse()
                .unwrap_or(f64::NAN);
            if text(&row, "Relay_Master_Log_File") == file && position.is_finite() {
                let behind = position - applied;
                if behind.is_finite() {
                    gauges.insert(format!("{name}.bytes_behind"), behind.max(0.0));
                }
            }
        }
    }
}

/// The first row of `sql` on `conn` (opened with `opts` when there is none; dropped after an
/// error, to be reopened at the next reading).
fn read_on(conn: &mut Option<Conn>, opts: &Opts, sql: &str) -> Option<Row> {
    if conn.is_none() {
        *conn = Conn::new(super::galera::gauge_opts(opts)).ok();
    }
    match conn.as_mut()?.query_first(sql) {
        Ok(row) => row,
        Err(_) => {
            *conn = None;
            None
        }
    }
}

/// A column of `row` as text ("" when NULL or missing).
fn text(row: &Row, column: &str) -> String {
    row.get_opt::<Option<String>, _>(column)
        .and_then(|v| v.ok())
        .flatten()
        .unwrap_or_default()
}

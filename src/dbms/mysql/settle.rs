//! The post-write pause's wait for the engine's background work: InnoDB's purge (the history
//! list length below a small bound, or no longer falling) and MyRocks' flushes and compactions
//! (none pending and no compaction bytes written for a while). Each waits at most until the
//! pause's end and says what it waited for, how long, and how it ended.

use std::time::{Duration, Instant};

use anyhow::Result;
use mysql::Conn;
use mysql::prelude::Queryable;

use super::Engine;
use crate::dbms::Settled;

/// The history list length (undo logs not yet purged) InnoDB counts as purged.
pub const HISTORY_BOUND: f64 = 100.0;
/// Seconds without a new lowest history list length after which purge counts as stopped
/// (an open read view, or purge keeping pace with nothing more to do).
const STALL_S: f64 = 5.0;
/// Seconds without a compaction byte written (and nothing pending) after which MyRocks counts
/// as idle.
const IDLE_S: f64 = 2.0;
/// Between two readings.
const POLL: Duration = Duration::from_millis(250);

const HISTORY: &str = "SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'";
const COMPACTION_BYTES: &str = "SHOW GLOBAL STATUS LIKE 'Rocksdb_compact_write_bytes'";
/// Column families with a flush or a compaction pending (rocksdb_cfstats).
const PENDING: &str = "SELECT coalesce(sum(value), 0) FROM information_schema.rocksdb_cfstats \
     WHERE stat_type IN ('MEM_TABLE_FLUSH_PENDING', 'COMPACTION_PENDING')";

/// Waits until `engine`'s background work after writes has settled, or `until`.
pub(super) fn settle(conn: &mut Conn, engine: Engine, until: Instant) -> Result<Settled> {
    match engine {
        Engine::Innodb => purge(conn, until),
        Engine::Rocksdb => compactions(conn, until),
    }
}

/// A status variable's value (0 when absent).
fn status(conn: &mut Conn, sql: &str) -> Result<f64> {
    let row: Option<(String, String)> = conn.query_first(sql)?;
    Ok(row.and_then(|(_, v)| v.parse().ok()).unwrap_or(0.0))
}

/// Sleeps a poll, or less until `until`; `false` when `until` has come (or an interrupt).
fn pause(until: Instant) -> bool {
    let now = Instant::now();
    if now >= until || crate::interrupt::requested() {
        return false;
    }
    std::thread::sleep(POLL.min(until - now));
    true
}

/// InnoDB: until the history list length is below [`HISTORY_BOUND`] or has not fallen to a
/// new low for [`STALL_S`].
fn purge(conn: &mut Conn, until: Instant) -> Result<Settled> {
    let began = Instant::now();
    let start = status(conn, HISTORY)?;
    let (mut low, mut low_at, mut last) = (start, began, start);
    let outcome = loop {
        if last < HISTORY_BOUND {
            break format!("history list length below {HISTORY_BOUND}");
        }
        if low_at.elapsed().as_secs_f64() >= STALL_S {
            break format!("history list length no longer falling ({STALL_S} s without a new low)");
        }
        if !pause(until) {
            break "the pause ended first".to_string();
        }
        last = status(conn, HISTORY)?;
        if last < low {
            (low, low_at) = (last, Instant::now());
        }
    };
    Ok(Settled {
        waited_for: "InnoDB purge, before the maintenance".to_string(),
        figure: "Innodb_history_list_length".to_string(),
        start,
        end: last,
        seconds: began.elapsed().as_secs_f64(),
        outcome,
    })
}

/// MyRocks: until no column family has a flush or compaction pending and no compaction byte
/// has been written for [`IDLE_S`].
fn compactions(conn: &mut Conn, until: Instant) -> Result<Settled> {
    let began = Instant::now();
    let start = status(conn, COMPACTION_BYTES)?;
    let (mut bytes, mut changed_at) = (start, began);
    let outcome = loop {
        let pending: Option<f64> = conn.query_first(PENDING)?;
        let idle = changed_at.elapsed().as_secs_f64() >= IDLE_S;
        if pending.unwrap_or(0.0) == 0.0 && idle {
            break format!(
                "no flush or compaction pending (rocksdb_cfstats), no compaction write for {IDLE_S} s"
            );
        }
        if !pause(until) {
            break "the pause ended first".to_string();
        }
        let now = status(conn, COMPACTION_BYTES)?;
        if now != bytes {
            (bytes, changed_at) = (now, Instant::now());
        }
    };
    Ok(Settled {
        waited_for: "MyRocks flushes and compactions, after the maintenance".to_string(),
        figure: "Rocksdb_compact_write_bytes".to_string(),
        start,
        end: bytes,
        seconds: began.elapsed().as_secs_f64(),
        outcome,
    })
}

//! MariaDB/MySQL gauges, read once a second on a connection of their own (opened at the first
//! reading and kept; dropped and reopened at the next reading after an error).
//!
//! InnoDB: status variables (history list length, checkpoint age, dirty and free pages,
//! pending writes and fsyncs, pages flushed). MyRocks: L0 files and memtables from
//! information_schema, stall counters from the status variables. Cumulative figures are named
//! with `_total` (reports draw them per second).

use std::collections::BTreeMap;
use std::sync::Mutex;

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts};

use super::Engine;

/// InnoDB's levels, by status variable (the gauge keeps the variable's name; `_total` is
/// appended to cumulative ones).
const INNODB_STATUS: &[(&str, bool)] = &[
    ("Innodb_history_list_length", false),
    ("Innodb_checkpoint_age", false),
    ("Innodb_buffer_pool_pages_dirty", false),
    ("Innodb_buffer_pool_pages_free", false),
    ("Innodb_data_pending_writes", false),
    ("Innodb_data_pending_fsyncs", false),
    ("Innodb_buffer_pool_pages_flushed", true),
];
/// MyRocks' status variables read as gauges (all cumulative).
const MYROCKS_STATUS: &[(&str, bool)] = &[
    ("Rocksdb_stall_micros", true),
    ("Rocksdb_stall_total_stops", true),
    ("Rocksdb_stall_total_slowdowns", true),
];
/// MyRocks' levels, summed over the column families: L0 files (rocksdb_compaction_stats),
/// immutable memtables, memtable bytes, and the flush / compaction pending flags
/// (rocksdb_cfstats).
const MYROCKS_LEVELS: &str = "\
     SELECT 'Rocksdb_l0_files', coalesce(sum(value), 0) \
       FROM information_schema.rocksdb_compaction_stats WHERE level = 'L0' AND type = 'NumFiles' \
     UNION ALL SELECT 'Rocksdb_compactions_total', coalesce(sum(value), 0) \
       FROM information_schema.rocksdb_compaction_stats WHERE level = 'Sum' AND type = 'CompCount' \
     UNION ALL SELECT concat('Rocksdb_', lower(stat_type)), sum(value) \
       FROM information_schema.rocksdb_cfstats \
       WHERE stat_type IN ('NUM_IMMUTABLE_MEM_TABLE', 'MEM_TABLE_FLUSH_PENDING', \
                           'COMPACTION_PENDING', 'CUR_SIZE_ALL_MEM_TABLES') \
       GROUP BY stat_type";

/// The gauges of a MariaDB/MySQL server: a connection of their own, off the clients' path.
pub(super) struct Gauges {
    engine: Engine,
    conn: Mutex<Option<Conn>>,
    /// `SHOW GLOBAL STATUS WHERE variable_name IN (...)` for the engine.
    status_sql: String,
}

impl Gauges {
    /// The gauges of tables in `engine`.
    pub(super) fn new(engine: Engine) -> Gauges {
        let names: Vec<String> = status_names(engine)
            .iter()
            .map(|(n, _)| format!("'{n}'"))
            .collect();
        Gauges {
            engine,
            conn: Mutex::new(None),
            status_sql: format!(
                "SHOW GLOBAL STATUS WHERE variable_name IN ({})",
                names.join(", ")
            ),
        }
    }

    /// The current gauges.
    pub(super) fn read(&self, opts: &Opts) -> Result<BTreeMap<String, f64>> {
        let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(Conn::new(opts.clone())?);
        }
        let conn = guard.as_mut().expect("opened above");
        match self.query(conn) {
            Ok(g) => Ok(g),
            Err(e) => {
                // Reopened at the next reading (the connection may be lost).
                *guard = None;
                Err(e)
            }
        }
    }

    fn query(&self, conn: &mut Conn) -> Result<BTreeMap<String, f64>> {
        let mut out = BTreeMap::new();
        let cumulative = status_names(self.engine);
        let rows: Vec<(String, String)> = conn.query(&self.status_sql)?;
        for (name, value) in rows {
            let Ok(v) = value.parse::<f64>() else { continue };
            // The server may spell the name in another case.
            let Some((known, total)) = cumulative
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&name))
            else {
                continue;
            };
            out.insert(gauge_name(known, *total), v);
        }
        if self.engine == Engine::Rocksdb {
            let rows: Vec<(String, Option<f64>)> = conn.query(MYROCKS_LEVELS)?;
            for (name, value) in rows {
                if let Some(v) = value {
                    out.insert(myrocks_name(&name), v);
                }
            }
        }
        Ok(out)
    }
}

/// The status variables read for `engine`.
fn status_names(engine: Engine) -> &'static [(&'static str, bool)] {
    match engine {
        Engine::Innodb => INNODB_STATUS,
        Engine::Rocksdb => MYROCKS_STATUS,
    }
}

/// A status variable's gauge name: `_total` appended to a cumulative one (the stall counters'
/// `_total_` moves to the end).
fn gauge_name(variable: &str, cumulative: bool) -> String {
    if !cumulative {
        return variable.to_string();
    }
    format!("{}_total", variable.replace("_total_", "_"))
}

/// Readable names for rocksdb_cfstats' stat types.
fn myrocks_name(raw: &str) -> String {
    match raw {
        "Rocksdb_num_immutable_mem_table" => "Rocksdb_immutable_memtables",
        "Rocksdb_mem_table_flush_pending" => "Rocksdb_memtable_flush_pending",
        "Rocksdb_compaction_pending" => "Rocksdb_compaction_pending",
        "Rocksdb_cur_size_all_mem_tables" => "Rocksdb_memtable_bytes",
        other => other,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_gauges_end_in_total() {
        assert_eq!(
            gauge_name("Rocksdb_stall_total_stops", true),
            "Rocksdb_stall_stops_total"
        );
        assert_eq!(
            gauge_name("Innodb_history_list_length", false),
            "Innodb_history_list_length"
        );
        assert!(Gauges::new(Engine::Innodb).status_sql.contains("'Innodb_checkpoint_age'"));
    }
}

//! Engine status at a step's end (`SHOW ENGINE INNODB STATUS`, `SHOW ENGINE ROCKSDB STATUS`)
//! and MyRocks' perf context around select-min.

use std::collections::BTreeMap;

use anyhow::Result;
use mysql::Conn;
use mysql::prelude::Queryable;

use super::Engine;

/// The longest text kept per section, bytes (a longer one is cut, and says so).
pub(super) const MAX_SECTION: usize = 64 << 10;
/// Sections of `SHOW ENGINE ROCKSDB STATUS` kept: DB stats (cumulative stall time), compaction
/// statistics per column family (files and seconds per level, stall counts), memory. The
/// STATISTICS section repeats the counters stored with every step; BG_THREADS is left out.
const ROCKSDB_SECTIONS: &[&str] = &["DBSTATS", "CF_COMPACTION", "MEMORY_STATS"];
/// MyRocks' perf context summed over every session (counts only at
/// `rocksdb_perf_context_level = 2`, which ibench sets on the MyRocks servers it starts).
const PERF_CONTEXT: &str =
    "SELECT stat_type, value FROM information_schema.rocksdb_perf_context_global";

/// The engine's status text, by section: `innodb` for InnoDB, `rocksdb <type> <name>` for
/// MyRocks.
pub(super) fn engine_status(conn: &mut Conn, engine: Engine) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    match engine {
        Engine::Innodb => {
            let row: Option<(String, String, String)> =
                conn.query_first("SHOW ENGINE INNODB STATUS")?;
            if let Some((_, _, text)) = row {
                out.insert("innodb".to_string(), capped(text));
            }
        }
        Engine::Rocksdb => {
            let rows: Vec<(String, String, String)> = conn.query("SHOW ENGINE ROCKSDB STATUS")?;
            for (kind, name, text) in rows {
                if ROCKSDB_SECTIONS.contains(&kind.as_str()) {
                    out.insert(format!("rocksdb {kind} {name}"), capped(text));
                }
            }
        }
    }
    Ok(out)
}

/// MyRocks' global perf context (`perf_context.<STAT_TYPE>`); nothing for InnoDB.
pub(super) fn perf_context(conn: &mut Conn, engine: Engine) -> Result<BTreeMap<String, f64>> {
    if engine != Engine::Rocksdb {
        return Ok(BTreeMap::new());
    }
    let rows: Vec<(String, String)> = conn.query(PERF_CONTEXT)?;
    Ok(rows
        .into_iter()
        .filter_map(|(k, v)| Some((format!("perf_context.{k}"), v.parse().ok()?)))
        .collect())
}

/// `text`, cut at [`MAX_SECTION`] bytes (on a character boundary) with a note.
pub(super) fn capped(mut text: String) -> String {
    if text.len() > MAX_SECTION {
        let mut cut = MAX_SECTION;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[cut by ibench at 64 KiB]\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_sections_are_cut_on_a_character_boundary() {
        let text = "é".repeat(MAX_SECTION);
        let cut = capped(text);
        assert!(cut.len() < MAX_SECTION + 40);
        assert!(cut.ends_with("[cut by ibench at 64 KiB]\n"));
        assert_eq!(capped("short".into()), "short");
    }
}

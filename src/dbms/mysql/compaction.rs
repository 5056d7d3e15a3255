//! MyRocks' compaction statistics per level, parsed from the `CF_COMPACTION` part of
//! `SHOW ENGINE ROCKSDB STATUS` that ibench stores at each step's end
//! (`steps[].engine_status["rocksdb CF_COMPACTION <column family>"]`, see `status.rs`).
//!
//! The text is RocksDB's own `** Compaction Stats [<cf>] **` block: a header line naming the
//! columns (`Level Files Size Score Read(GB) ... W-Amp ... Comp(sec) ...`), a dashed line,
//! then a row per level (`L0`..`L6`) and the `Sum` and `Int` (interval) rows. Columns are
//! read by the header's names, so a RocksDB version that adds or drops columns still parses.

use std::collections::BTreeMap;

use serde::Serialize;

/// One row of the per-level table (`L0`..`L6`, `Sum`, `Int`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelRow {
    /// `L0`..`L6`, `Sum` or `Int`.
    pub level: String,
    /// SST files in the level.
    pub files: u64,
    /// Of them, files being compacted at the time.
    pub compacting: u64,
    /// The level's size, bytes (RocksDB prints it with a unit: `410.56 KB`).
    pub size_bytes: f64,
    /// Every other column by its header name (`Score`, `Read(GB)`, `W-Amp`, `Comp(sec)`,
    /// `KeyIn`...), `K`/`M`/`G` count suffixes expanded.
    pub values: Vec<(String, f64)>,
}

impl LevelRow {
    /// The value of column `name`, when the text has it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

/// The per-level compaction table of one column family.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompactionStats {
    /// The column family (`default`).
    pub column_family: String,
    /// Its rows, in the text's order: the levels, then `Sum` and `Int`.
    pub rows: Vec<LevelRow>,
}

/// `410.56 KB` as bytes.
fn size(value: &str, unit: &str) -> Option<f64> {
    let v: f64 = value.parse().ok()?;
    let scale = match unit {
        "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        "TB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(v * scale)
}

/// A number as RocksDB prints it: `0.5`, `-0.0`, `2505K`, `87K`, `3M`.
fn number(s: &str) -> Option<f64> {
    let (digits, scale) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    Some(digits.parse::<f64>().ok()? * scale)
}

/// One data row under `header` (the column names after `Level`), or `None` for a line that
/// is not one.
fn row(line: &str, header: &[&str]) -> Option<LevelRow> {
    let mut t = line.split_whitespace();
    let level = t.next()?;
    if !(level == "Sum" || level == "Int" || level.strip_prefix('L')?.parse::<u8>().is_ok()) {
        return None;
    }
    let (files, compacting) = t.next()?.split_once('/')?;
    let size_bytes = size(t.next()?, t.next()?)?;
    let rest: Vec<&str> = t.collect();
    // Files and Size are the first two header names; the others follow in order.
    let names = header.get(2..)?;
    let values = names
        .iter()
        .zip(&rest)
        .filter_map(|(n, v)| Some((n.to_string(), number(v)?)))
        .collect();
    Some(LevelRow {
        level: level.to_string(),
        files: files.parse().ok()?,
        compacting: compacting.parse().ok()?,
        size_bytes,
        values,
    })
}

/// The per-level table of the first `** Compaction Stats [<cf>] **` block in `text` whose
/// header starts with `Level` (the second block of the text is per priority); `None` when the
/// text has none.
pub fn parse(text: &str) -> Option<CompactionStats> {
    let mut lines = text.lines();
    let column_family = loop {
        let l = lines.next()?.trim();
        if let Some(cf) = l
            .strip_prefix("** Compaction Stats [")
            .and_then(|r| r.strip_suffix("] **"))
        {
            break cf.to_string();
        }
    };
    let header_line = lines.next()?;
    let mut header = header_line.split_whitespace();
    if header.next()? != "Level" {
        return None;
    }
    let header: Vec<&str> = header.collect();
    let rows: Vec<LevelRow> = lines
        .skip_while(|l| l.trim_start().starts_with('-'))
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| row(l, &header))
        .collect();
    (!rows.is_empty()).then_some(CompactionStats {
        column_family,
        rows,
    })
}

/// The section of the stored engine status holding MyRocks' memory figures.
pub const MEMORY_STATS: &str = "rocksdb MEMORY_STATS rocksdb";

/// The bytes MyRocks' block cache held at the step's end (`Cache Total:` of the stored
/// `MEMORY_STATS` section), when the step's engine status has them.
pub fn block_cache_in_use(engine_status: &BTreeMap<String, String>) -> Option<u64> {
    engine_status
        .get(MEMORY_STATS)?
        .lines()
        .find_map(|l| l.trim().strip_prefix("Cache Total:"))?
        .trim()
        .parse()
        .ok()
}

/// The per-level tables of every column family in a step's stored engine status
/// (`rocksdb CF_COMPACTION <cf>` sections), column families without any level and MyRocks'
/// own `__system__` (its data dictionary) left out.
pub fn of_step(engine_status: &BTreeMap<String, String>) -> Vec<CompactionStats> {
    engine_status
        .iter()
        .filter(|(k, _)| {
            k.starts_with("rocksdb CF_COMPACTION ") && k.as_str() != "rocksdb CF_COMPACTION __system__"
        })
        .filter_map(|(_, text)| parse(text))
        .filter(|s| s.rows.iter().any(|r| r.level.starts_with('L')))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SHOW ENGINE ROCKSDB STATUS`' CF_COMPACTION text of the `default` column family, as
    /// ibench stored it at the end of l.i1 on a managed MariaDB 10.11.19 MyRocks server
    /// (write_buffer_size=256k, level0_file_num_compaction_trigger=2,
    /// max_bytes_for_level_base=1m, target_file_size_base=256k; l.i0 of 100000 rows, l.x,
    /// l.i1 of 30000).
    const STATUS: &str = include_str!("testdata/myrocks-cf-compaction-default.txt");

    #[test]
    fn the_level_table_of_a_real_status_text() {
        let s = parse(STATUS).expect("a level table");
        assert_eq!(s.column_family, "default");
        let levels: Vec<&str> = s.rows.iter().map(|r| r.level.as_str()).collect();
        assert_eq!(levels, ["L0", "L1", "L2", "L6", "Sum", "Int"]);
        // `  L0      4/3   410.56 KB   0.5 ... 0.7      0.0     11.0      1.54 ...   157`
        let l0 = &s.rows[0];
        assert_eq!((l0.files, l0.compacting), (4, 3));
        assert!((l0.size_bytes - 410.56 * 1024.0).abs() < 1.0);
        assert_eq!(l0.get("Score"), Some(0.5));
        assert_eq!(l0.get("W-Amp"), Some(0.7));
        assert_eq!(l0.get("Wr(MB/s)"), Some(11.0));
        assert_eq!(l0.get("Comp(sec)"), Some(1.54));
        assert_eq!(l0.get("Comp(cnt)"), Some(157.0));
        // `  L1      7/7    1.30 MB ... 2505K   1464`
        let l1 = &s.rows[1];
        assert!((l1.size_bytes - 1.30 * 1048576.0).abs() < 1.0);
        assert_eq!(l1.get("Read(GB)"), Some(0.1));
        assert_eq!(l1.get("KeyIn"), Some(2_505_000.0));
        assert_eq!(l1.get("KeyDrop"), Some(1464.0));
        assert_eq!(s.rows[2].get("KeyDrop"), Some(87_000.0));
        // The Sum row adds up the levels' files and compaction seconds.
        let sum = &s.rows[4];
        let files: u64 = s.rows[..4].iter().map(|r| r.files).sum();
        assert_eq!(sum.files, files);
        assert_eq!(sum.files, 91);
        let secs: f64 = s.rows[..4].iter().filter_map(|r| r.get("Comp(sec)")).sum();
        assert!((sum.get("Comp(sec)").unwrap() - secs).abs() < 0.02);
        // Every header column after Size was read.
        assert_eq!(l0.values.len(), 18, "{:?}", l0.values);
    }

    #[test]
    fn text_without_a_level_table_gives_none() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("** DB Stats **\nUptime(secs): 7.5 total\n"), None);
        // The per-priority block alone has no levels.
        let priority = "** Compaction Stats [default] **\nPriority    Files   Size\n----\n\
                        User      0/0    0.00 KB   0.0\n";
        assert_eq!(parse(priority), None);
    }

    #[test]
    fn the_block_cache_in_use_from_memory_stats() {
        let mut status = BTreeMap::new();
        status.insert(
            MEMORY_STATS.to_string(),
            "\nMemTable Total: 803872\nCache Total: 17629608\nDefault Cache Capacity: 0\n"
                .to_string(),
        );
        assert_eq!(block_cache_in_use(&status), Some(17_629_608));
        status.insert("rocksdb CF_COMPACTION default".into(), STATUS.into());
        assert_eq!(of_step(&status).len(), 1);
        assert_eq!(block_cache_in_use(&BTreeMap::new()), None);
    }
}

//! Reading RocksDB's own figures as text: its statistics dump (tickers and histograms), the
//! write-stall line of a column family's stats, and the OPTIONS file of effective settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Tickers and histograms of `rocksdb_options_statistics_get_string` into `out`: a ticker
/// (`rocksdb.stall.micros COUNT : 12`) by its name, a histogram (`rocksdb.db.write.micros P50 :
/// ... COUNT : n SUM : s`) as `<name>.count` and `<name>.sum`.
pub fn parse_statistics(text: &str, out: &mut BTreeMap<String, f64>) {
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else { continue };
        let rest: Vec<&str> = words.collect();
        // Pairs `KEY : VALUE`.
        let pairs: Vec<(&str, f64)> = rest
            .chunks(3)
            .filter(|c| c.len() == 3 && c[1] == ":")
            .filter_map(|c| Some((c[0], c[2].parse::<f64>().ok()?)))
            .collect();
        let get = |k: &str| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        if pairs.len() == 1 && pairs[0].0 == "COUNT" {
            out.insert(name.to_string(), pairs[0].1);
        } else if let (Some(count), Some(sum)) = (get("COUNT"), get("SUM")) {
            out.insert(format!("{name}.count"), count);
            out.insert(format!("{name}.sum"), sum);
        }
    }
}

/// Write stalls by cause from a column family's `rocksdb.cfstats-no-file-histogram` text (its
/// `Stalls(count): 0 level0_slowdown, 0 level0_numfiles, ...` line), added into `out` as
/// `rocksdb.stalls.<cause>` (spaces in a cause become `_`).
pub fn add_stalls(text: &str, out: &mut BTreeMap<String, f64>) {
    let Some(line) = text.lines().find(|l| l.starts_with("Stalls(count):")) else {
        return;
    };
    let body = &line["Stalls(count):".len()..];
    for part in body.split(',') {
        let part = part.trim();
        if part.starts_with("interval") {
            continue;
        }
        let Some((count, cause)) = part.split_once(' ') else {
            continue;
        };
        let Ok(count) = count.parse::<f64>() else {
            continue;
        };
        let cause = cause.trim().replace(' ', "_");
        *out.entry(format!("rocksdb.stalls.{cause}")).or_default() += count;
    }
}

/// The newest `OPTIONS-<n>` file RocksDB wrote in `dir`.
pub fn latest_options_file(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n)
        .map(|(_, p)| p)
}

/// The settings of an OPTIONS file, flat: `[Version]` as `version.<key>`, `[DBOptions]` as
/// `db.<key>`, and the `default` column family's `[CFOptions]` and
/// `[TableOptions/BlockBasedTable]` as `cf.<key>` and `table.<key>` (every family ibench
/// creates has the options of `default`).
pub fn parse_options_file(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut prefix: Option<&str> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            prefix = match section {
                "Version" => Some("version"),
                "DBOptions" => Some("db"),
                "CFOptions \"default\"" => Some("cf"),
                s if s.starts_with("TableOptions/") && s.ends_with("\"default\"") => {
                    Some("table")
                }
                _ => None,
            };
            continue;
        }
        if let (Some(p), Some((k, v))) = (prefix, line.split_once('=')) {
            out.insert(format!("{p}.{}", k.trim()), v.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_lines() {
        let text = "rocksdb.block.cache.miss COUNT : 17\n\
                    rocksdb.stall.micros COUNT : 250\n\
                    rocksdb.db.write.micros P50 : 3.5 P95 : 9.0 P99 : 12.0 P100 : 40.0 COUNT : 8 SUM : 61\n";
        let mut m = BTreeMap::new();
        parse_statistics(text, &mut m);
        assert_eq!(m["rocksdb.block.cache.miss"], 17.0);
        assert_eq!(m["rocksdb.stall.micros"], 250.0);
        assert_eq!(m["rocksdb.db.write.micros.count"], 8.0);
        assert_eq!(m["rocksdb.db.write.micros.sum"], 61.0);
        assert_eq!(m.len(), 4);
    }

    #[test]
    fn stall_line() {
        let text = "** Compaction Stats [default] **\n\
            Stalls(count): 2 level0_slowdown, 0 level0_slowdown_with_compaction, 1 level0_numfiles, \
            0 level0_numfiles_with_compaction, 3 stop for pending_compaction_bytes, 0 slowdown for \
            pending_compaction_bytes, 0 memtable_compaction, 0 memtable_slowdown, interval 6 total count\n";
        let mut m = BTreeMap::new();
        add_stalls(text, &mut m);
        add_stalls(text, &mut m);
        assert_eq!(m["rocksdb.stalls.level0_slowdown"], 4.0);
        assert_eq!(m["rocksdb.stalls.level0_numfiles"], 2.0);
        assert_eq!(m["rocksdb.stalls.stop_for_pending_compaction_bytes"], 6.0);
        assert_eq!(m.len(), 8);
    }

    #[test]
    fn options_file_sections() {
        let text = "[Version]\n  rocksdb_version=7.8.3\n[DBOptions]\n  max_background_jobs=2\n\
                    [CFOptions \"default\"]\n  write_buffer_size=67108864\n\
                    [TableOptions/BlockBasedTable \"default\"]\n  block_size=4096\n\
                    [CFOptions \"pi1\"]\n  write_buffer_size=1\n";
        let m = parse_options_file(text);
        assert_eq!(m["version.rocksdb_version"], "7.8.3");
        assert_eq!(m["db.max_background_jobs"], "2");
        assert_eq!(m["cf.write_buffer_size"], "67108864");
        assert_eq!(m["table.block_size"], "4096");
        assert_eq!(m.len(), 4);
    }
}

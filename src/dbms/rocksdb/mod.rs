//! Embedded RocksDB (cargo feature `rocksdb`): the Insert Benchmark on the storage engine
//! itself, with the data model MyRocks keeps (`connection.rs`) and the knobs MyRocks hides.
//!
//! One database directory (`--path DIR`) holds every table; all client connections share one
//! open database (RocksDB is thread-safe), each connection with its own write batch and
//! buffers. `transactionid` is assigned here: an atomic counter per table, starting after the
//! largest key the table holds when it is first used.
//!
//! Settings: every RocksDB option through an options string (`--rocksdb-option NAME=VALUE`,
//! an experiment config's `options`), checked by RocksDB's own parser before anything runs;
//! and ibench's own `block_cache_size`, `block_cache_num_shard_bits` (the LRU block cache
//! shared by every column family) and `sync` (fsync the WAL on every write). The effective
//! options are read back from the OPTIONS file RocksDB writes.

mod connection;
mod ffi;
mod stats;

use std::collections::{BTreeMap, HashMap};
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

use crate::dbms::{Maintain, Observe, Topology};
use crate::dbms::{
    AssumedRates, CacheSetting, Capability, Dbms, DbmsKind, Descriptor,
    InsertBenchmarkConnection, Params, Setting, SettingError, StatementMode, Table,
    TargetSettings, TargetSpec, from_params, to_params,
};
use crate::error::UsageError;
use connection::RocksConnection;
pub use connection::{Row, id_key, key_id, mark_key};
use ffi::{Cf, Db, Options};

/// The registry's RocksDB.
pub static ROCKSDB: RocksDescriptor = RocksDescriptor;

/// Embedded RocksDB, linked from the system's librocksdb.
pub struct RocksDescriptor;

/// ibench's block cache size unless told otherwise (RocksDB's own default for a table
/// factory without one is 32 MiB in 7.x and 8.x).
pub const DEFAULT_BLOCK_CACHE: u64 = 32 << 20;

/// RocksDB's target parameters, as stored with the results.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RocksParams {
    /// RocksDB options (`name=value` of an options string), applied in order.
    options: Vec<(String, String)>,
    /// Capacity of the LRU block cache every column family shares, bytes.
    block_cache_size: u64,
    /// Its shard count as a power of two; -1: RocksDB's choice (shards of at least 512 KiB, at
    /// most 64).
    block_cache_num_shard_bits: i32,
    /// fsync the WAL on every write (`WriteOptions::sync`).
    sync: bool,
}

impl Default for RocksParams {
    fn default() -> Self {
        RocksParams {
            options: Vec::new(),
            block_cache_size: DEFAULT_BLOCK_CACHE,
            block_cache_num_shard_bits: -1,
            sync: false,
        }
    }
}

impl RocksParams {
    /// The options string ibench opens the database with: the block cache, then the user's
    /// options in order.
    fn options_string(&self) -> String {
        let mut s = format!(
            "block_based_table_factory={{block_cache={{capacity={};num_shard_bits={}}}}}",
            self.block_cache_size, self.block_cache_num_shard_bits
        );
        for (name, value) in &self.options {
            s.push(';');
            s.push_str(name);
            s.push('=');
            s.push_str(value);
        }
        s
    }
}

/// A size with an optional binary suffix (`64M`, `1g`, `4096`), as RocksDB writes them.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 10),
        (i, 'm' | 'M') => (&t[..i], 20),
        (i, 'g' | 'G') => (&t[..i], 30),
        (i, 't' | 'T') => (&t[..i], 40),
        _ => (t, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The shard bits RocksDB picks for a cache of `capacity` bytes given -1 (shards of at least
/// 512 KiB, at most 2^6), as `GetDefaultCacheShardBits` does.
fn default_shard_bits(capacity: u64) -> i32 {
    let mut shards = capacity / (512 << 10);
    let mut bits = 0;
    while shards > 1 && bits < 6 {
        shards >>= 1;
        bits += 1;
    }
    bits
}

impl Descriptor for RocksDescriptor {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn about(&self) -> &'static str {
        "embedded RocksDB (the system's librocksdb), the data model of MyRocks"
    }

    fn embedded(&self) -> bool {
        true
    }

    fn database_is_directory(&self) -> bool {
        true
    }

    fn capabilities(&self) -> &'static [Capability] {
        &[Capability::InsertBenchmark]
    }

    fn params(&self, settings: &TargetSettings) -> Result<Params, SettingError> {
        settings.refuse_all_but(DbmsKind::of(&ROCKSDB), &["options"])?;
        let mut p = RocksParams::default();
        for (name, value) in &settings.options {
            let refuse = |msg: String| SettingError::new(Setting::Option(name.clone()), msg);
            match name.as_str() {
                "block_cache_size" => {
                    p.block_cache_size = parse_size(value).filter(|b| *b > 0).ok_or_else(|| {
                        refuse(format!(
                            "invalid block_cache_size {value:?}: expected bytes, or a number \
                             with K, M, G or T"
                        ))
                    })?;
                }
                "block_cache_num_shard_bits" => {
                    p.block_cache_num_shard_bits = value
                        .trim()
                        .parse()
                        .ok()
                        .filter(|b| (-1..20).contains(b))
                        .ok_or_else(|| {
                            refuse(format!(
                                "invalid block_cache_num_shard_bits {value:?}: expected -1 \
                                 (RocksDB's choice) or 0 to 19"
                            ))
                        })?;
                }
                "sync" => {
                    p.sync = match value.trim() {
                        "true" | "1" | "on" => true,
                        "false" | "0" | "off" => false,
                        _ => return Err(refuse(format!("invalid sync {value:?}: expected true or false"))),
                    };
                }
                _ => {
                    // RocksDB's own parser decides, option by option, so the message names it.
                    Options::new()
                        .with_string(&format!("{name}={value}"))
                        .map_err(|e| refuse(format!("RocksDB rejects {name}={value}: {e}")))?;
                    p.options.push((name.clone(), value.clone()));
                }
            }
        }
        Options::new()
            .with_string(&p.options_string())
            .map_err(|e| {
                SettingError::new(
                    Setting::Option("block_cache_size".to_string()),
                    format!("RocksDB rejects the block cache: {e}"),
                )
            })?;
        Ok(to_params(&p))
    }

    fn open(&self, target: &TargetSpec, _mode: StatementMode) -> Result<Box<dyn Dbms>> {
        let params: RocksParams = from_params(target.kind, &target.params)?;
        Ok(Box::new(RocksDb::open(target.file_path()?.clone(), params)?))
    }

    fn cache(&self, _params: &Params) -> CacheSetting {
        CacheSetting {
            name: "block_cache_size",
            min_bytes: 1 << 20,
            format: |bytes| bytes.to_string(),
            parse: |raw, _| parse_size(raw),
            per_connection: false,
        }
    }

    fn combined_index_ddl(&self, _params: &Params) -> bool {
        true
    }

    fn assumed_rates(&self, _params: &Params) -> AssumedRates {
        AssumedRates {
            load: 150_000.0,
            index: 300_000.0,
            more: 40_000.0,
            more_small: 15_000.0,
            server_s: 0.0,
            pause_s: 1.0,
        }
    }
}

/// What every connection shares: the database, the id counters, the schema epoch.
pub(crate) struct Shared {
    db: Db,
    /// Bumped whenever a column family is created or dropped: connections resolve their
    /// families again.
    epoch: AtomicU64,
    /// The last `transactionid` assigned, per table.
    ids: Mutex<HashMap<String, Arc<AtomicI64>>>,
}

impl Shared {
    fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    fn bump_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// The id counter of table `name`, starting after the largest key of `primary` the first
    /// time the table is used.
    fn next_id(&self, name: &str, primary: &Arc<Cf>) -> Result<Arc<AtomicI64>> {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = ids.get(name) {
            return Ok(Arc::clone(c));
        }
        let mut it = self.db.iter(primary);
        it.seek_to_last();
        let max = if it.valid().map_err(|e| anyhow!("max of {name}: {e}"))? {
            key_id(it.key())?
        } else {
            0
        };
        let c = Arc::new(AtomicI64::new(max));
        ids.insert(name.to_string(), Arc::clone(&c));
        Ok(c)
    }

    /// Table `name` was created empty: its ids start at 1 again.
    fn reset_ids(&self, name: &str) {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        match ids.get(name) {
            Some(c) => c.store(0, Ordering::Relaxed),
            None => {
                ids.insert(name.to_string(), Arc::new(AtomicI64::new(0)));
            }
        }
    }
}

/// A RocksDB database directory, open.
pub struct RocksDb {
    path: PathBuf,
    params: RocksParams,
    shared: Arc<Shared>,
}

/// Counters engineers read first: reported per op, and per step in reports.
/// Perf context counters read around select-min: RocksDB's C API ids (c.h, RocksDB 7.x) and
/// their names in MyRocks.
const PERF_CONTEXT: &[(i32, &str)] = &[
    (0, "USER_KEY_COMPARISON_COUNT"),
    (1, "BLOCK_CACHE_HIT_COUNT"),
    (2, "BLOCK_READ_COUNT"),
    (3, "BLOCK_READ_BYTE"),
    (10, "INTERNAL_KEY_SKIPPED_COUNT"),
    (11, "INTERNAL_DELETE_SKIPPED_COUNT"),
    (12, "INTERNAL_RECENT_SKIPPED_COUNT"),
    (20, "SEEK_ON_MEMTABLE_COUNT"),
    (21, "NEXT_ON_MEMTABLE_COUNT"),
    (24, "SEEK_CHILD_SEEK_COUNT"),
];
const KEY_COUNTERS: &[&str] = &[
    "rocksdb.stall.micros",
    "rocksdb.stalls.level0_slowdown",
    "rocksdb.stalls.level0_numfiles",
    "rocksdb.stalls.memtable_slowdown",
    "rocksdb.stalls.memtable_compaction",
    "rocksdb.stalls.slowdown_for_pending_compaction_bytes",
    "rocksdb.stalls.stop_for_pending_compaction_bytes",
    "rocksdb.compact.write.bytes",
    "rocksdb.flush.write.bytes",
    "rocksdb.block.cache.miss",
    "rocksdb.block.cache.hit",
];

/// Properties summed over the column families, sampled once a second.
const CF_GAUGES: &[&CStr] = &[
    c"rocksdb.num-files-at-level0",
    c"rocksdb.estimate-pending-compaction-bytes",
    c"rocksdb.cur-size-all-mem-tables",
    c"rocksdb.num-immutable-mem-table",
    c"rocksdb.total-sst-files-size",
];

/// Properties of the whole database (read on the default column family), sampled once a
/// second.
const DB_GAUGES: &[&CStr] = &[
    c"rocksdb.is-write-stopped",
    c"rocksdb.actual-delayed-write-rate",
    c"rocksdb.num-running-compactions",
    c"rocksdb.num-running-flushes",
    c"rocksdb.block-cache-usage",
];

impl RocksDb {
    /// Opens (creating if needed) the database in directory `path` with `params`.
    fn open(path: PathBuf, params: RocksParams) -> Result<Self> {
        let text = params.options_string();
        let mut options = Options::new().with_string(&text).map_err(|e| {
            UsageError::new(format!("RocksDB rejects the options {text:?}: {e}"))
        })?;
        options.set_create();
        options.enable_statistics();
        let db = Db::open(&path, options, params.sync).map_err(|e| {
            UsageError::new(format!(
                "cannot use {} as a RocksDB database: {e}",
                path.display()
            ))
        })?;
        Ok(RocksDb {
            path,
            params,
            shared: Arc::new(Shared {
                db,
                epoch: AtomicU64::new(0),
                ids: Mutex::default(),
            }),
        })
    }

    fn db(&self) -> &Db {
        &self.shared.db
    }

    /// `name` summed over every column family.
    fn sum_cfs(&self, name: &CStr) -> Option<u64> {
        let values: Vec<u64> = self
            .db()
            .cfs()
            .iter()
            .filter_map(|(_, cf)| property(self.db(), cf, name))
            .collect();
        (!values.is_empty()).then(|| values.iter().sum())
    }

    /// A database-wide property.
    fn db_property(&self, name: &CStr) -> Option<u64> {
        let default = self.db().cf("default")?;
        property(self.db(), &default, name)
    }
}

/// A numeric property of `cf`: RocksDB's integer form, else its text (some, such as
/// `rocksdb.num-files-at-level<N>`, have only a text form).
fn property(db: &Db, cf: &Cf, name: &CStr) -> Option<u64> {
    db.property_int(cf, name)
        .or_else(|| db.property_text(cf, name)?.trim().parse().ok())
}

impl Dbms for RocksDb {
    fn kind(&self) -> DbmsKind {
        DbmsKind::of(&ROCKSDB)
    }

    fn connect_insert_benchmark(&self) -> Result<Box<dyn InsertBenchmarkConnection>> {
        Ok(Box::new(RocksConnection::new(Arc::clone(&self.shared))))
    }

    fn version(&self) -> Result<String> {
        let version = stats::latest_options_file(&self.path)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .and_then(|t| stats::parse_options_file(&t).remove("version.rocksdb_version"));
        Ok(version.unwrap_or_else(|| "unknown".to_string()))
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

impl Observe for RocksDb {
    fn settings(&self) -> Result<BTreeMap<String, String>> {
        let mut settings = match stats::latest_options_file(&self.path) {
            Some(file) => stats::parse_options_file(&std::fs::read_to_string(file)?),
            None => BTreeMap::new(),
        };
        let capacity = self
            .db_property(c"rocksdb.block-cache-capacity")
            .unwrap_or(self.params.block_cache_size);
        settings.insert("block_cache_size".to_string(), capacity.to_string());
        let bits = self.params.block_cache_num_shard_bits;
        settings.insert(
            "block_cache_num_shard_bits".to_string(),
            if bits < 0 {
                format!("{} (RocksDB's choice)", default_shard_bits(capacity))
            } else {
                bits.to_string()
            },
        );
        settings.insert("sync".to_string(), self.params.sync.to_string());
        settings.insert("options".to_string(), self.params.options_string());
        Ok(settings)
    }

    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        let mut out = BTreeMap::new();
        if let Some(text) = self.db().options().statistics() {
            stats::parse_statistics(&text, &mut out);
        }
        for (_, cf) in self.db().cfs() {
            if let Some(text) = self
                .db()
                .property_text(&cf, c"rocksdb.cfstats-no-file-histogram")
            {
                stats::add_stalls(&text, &mut out);
            }
        }
        Ok(out)
    }

    fn is_key_counter(&self, name: &str) -> bool {
        KEY_COUNTERS.contains(&name)
    }

    fn gauges(&self) -> Result<BTreeMap<String, f64>> {
        let mut out = BTreeMap::new();
        for name in CF_GAUGES {
            if let Some(v) = self.sum_cfs(name) {
                out.insert(name.to_string_lossy().into_owned(), v as f64);
            }
        }
        for name in DB_GAUGES {
            if let Some(v) = self.db_property(name) {
                out.insert(name.to_string_lossy().into_owned(), v as f64);
            }
        }
        Ok(out)
    }

    /// The calling thread's perf context (the thread that runs select-min), named as MyRocks'
    /// rocksdb_perf_context_global names them.
    fn perf_context(&self) -> Result<BTreeMap<String, f64>> {
        Ok(ffi::thread_perf_counts(PERF_CONTEXT)
            .into_iter()
            .map(|(name, v)| (format!("perf_context.{name}"), v as f64))
            .collect())
    }

    fn size_bytes(&self) -> Result<Option<u64>> {
        let sst = self.sum_cfs(c"rocksdb.total-sst-files-size");
        let mem = self.sum_cfs(c"rocksdb.cur-size-all-mem-tables");
        Ok(sst.zip(mem).map(|(s, m)| s + m))
    }
}

impl Maintain for RocksDb {
    fn maintenance(&self, _tables: &[Table], _change_settings: bool) -> Result<Option<String>> {
        let cfs = self.db().cfs();
        for (name, cf) in &cfs {
            self.db()
                .flush(cf)
                .map_err(|e| anyhow!("flushing {name}: {e}"))?;
        }
        // RocksDB's C API has no CompactFiles (MyRocks compacts L0's files into L1): compact
        // the key range L0's files cover in each family, with what overlaps it below.
        let mut l0: BTreeMap<String, (Vec<u8>, Vec<u8>, usize)> = BTreeMap::new();
        for f in self.db().live_files().into_iter().filter(|f| f.level == 0) {
            let e = l0
                .entry(f.cf.clone())
                .or_insert_with(|| (f.smallest.clone(), f.largest.clone(), 0));
            if f.smallest < e.0 {
                e.0 = f.smallest;
            }
            if f.largest > e.1 {
                e.1 = f.largest;
            }
            e.2 += 1;
        }
        let mut files = 0;
        for (name, (lo, hi, n)) in &l0 {
            if let Some(cf) = self.db().cf(name) {
                self.db().compact_range(&cf, lo, hi);
                files += n;
            }
        }
        Ok(Some(format!(
            "flushed the memtables of {} column families, compacted the key range of {files} L0 \
             files in {} of them",
            cfs.len(),
            l0.len()
        )))
    }
}

impl Topology for RocksDb {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_shards() {
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(default_shard_bits(32 << 20), 6);
        assert_eq!(default_shard_bits(1 << 20), 1);
        assert_eq!(default_shard_bits(100 << 10), 0);
    }

    #[test]
    fn options_are_checked_by_rocksdb() {
        let kind = DbmsKind::of(&ROCKSDB);
        let settings = |o: &[(&str, &str)]| TargetSettings {
            options: o.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
            ..Default::default()
        };
        let ok = kind
            .params(&settings(&[
                ("write_buffer_size", "1M"),
                ("block_cache_size", "8M"),
                ("block_cache_num_shard_bits", "2"),
            ]))
            .unwrap();
        let p: RocksParams = from_params(kind, &ok).unwrap();
        assert_eq!(p.block_cache_size, 8 << 20);
        assert_eq!(p.options, vec![("write_buffer_size".into(), "1M".into())]);
        let e = kind.params(&settings(&[("no_such_option", "1")])).unwrap_err();
        assert_eq!(e.setting, Setting::Option("no_such_option".into()));
        assert!(e.message.contains("no_such_option"), "{}", e.message);
        let e = kind.params(&settings(&[("write_buffer_size", "lots")])).unwrap_err();
        assert!(e.message.contains("write_buffer_size=lots"), "{}", e.message);
        assert!(kind.params(&settings(&[("block_cache_num_shard_bits", "40")])).is_err());
    }
}

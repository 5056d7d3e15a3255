//! Embedded SQLite (the default target): one database file, WAL mode, one connection per
//! client thread.
//!
//! SQLite allows one writer at a time. That limit is the DBMS's behaviour and ibench reports
//! it, but it does not add to it: the busy handler below waits in steps of tens of
//! microseconds (SQLite's own handler sleeps whole milliseconds), up to the busy timeout, so
//! that writers queue for the lock instead of failing and without idle gaps that the DBMS did
//! not cause. Time spent waiting counts in the operation's response time.

mod connection;
mod file;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rusqlite::{Connection as RawConnection, OpenFlags};
use serde::{Deserialize, Serialize};

use crate::dbms::{Maintain, Observe, Topology};
use crate::dbms::{from_params, to_params};
use crate::dbms::{
    AssumedRates, CacheSetting, Capability, Dbms, DbmsKind, Descriptor, ErrorKind,
    InsertBenchmarkConnection, SqlConnection, Params, Setting, SettingError, StatementMode,
    Table, TargetSettings, TargetSpec,
};
use crate::error::UsageError;
use crate::dbms::sql::SqlInsertBenchmark;
use connection::SqliteConnection;

/// The registry's SQLite.
pub static SQLITE: SqliteDescriptor = SqliteDescriptor;

/// Embedded SQLite, bundled with ibench.
pub struct SqliteDescriptor;

/// Default busy timeout: how long a connection waits for a lock before failing, ms.
pub const DEFAULT_BUSY_TIMEOUT_MS: u64 = 30_000;

/// SQLite's target parameters, as stored with the results.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SqliteParams {
    /// `PRAGMA name=value` applied on every connection, after ibench's defaults.
    pragmas: Vec<(String, String)>,
    /// How long a connection waits for a lock before failing, milliseconds.
    busy_timeout_ms: u64,
}

impl Descriptor for SqliteDescriptor {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn about(&self) -> &'static str {
        "embedded SQLite (bundled with ibench), WAL mode on the files ibench creates"
    }

    fn embedded(&self) -> bool {
        true
    }

    fn capabilities(&self) -> &'static [Capability] {
        &[Capability::InsertBenchmark, Capability::Sql]
    }

    fn data_paths(&self, path: &std::path::Path) -> Vec<PathBuf> {
        // The database file and what SQLite keeps beside it.
        [""].into_iter().chain(file::SIDE_FILES)
            .map(|suffix| PathBuf::from(format!("{}{suffix}", path.display())))
            .collect()
    }

    fn params(&self, settings: &TargetSettings) -> Result<Params, SettingError> {
        settings.refuse_all_but(DbmsKind::of(&SQLITE), &["options", "busy_timeout_ms"])?;
        for (name, value) in &settings.options {
            check_pragma(name, value)
                .map_err(|msg| SettingError::new(Setting::Option(name.clone()), msg))?;
        }
        Ok(to_params(&SqliteParams {
            pragmas: settings.options.clone(),
            busy_timeout_ms: settings.busy_timeout_ms.unwrap_or(DEFAULT_BUSY_TIMEOUT_MS),
        }))
    }

    fn open(&self, target: &TargetSpec, mode: StatementMode) -> Result<Box<dyn Dbms>> {
        let params: SqliteParams = from_params(target.kind, &target.params)?;
        Ok(Box::new(Sqlite::open(
            target.file_path()?.clone(),
            params.pragmas,
            params.busy_timeout_ms,
            mode == StatementMode::Plain,
        )?))
    }

    fn classify(&self, err: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
        classify(err)
    }

    fn cache(&self, _params: &Params) -> CacheSetting {
        CacheSetting {
            name: "cache_size",
            min_bytes: 1 << 20,
            // A negative cache_size is in KiB.
            format: |bytes| format!("-{}", bytes / 1024),
            parse: |raw, settings| {
                let n: i64 = raw.trim().parse().ok()?;
                if n < 0 {
                    Some(n.unsigned_abs() * 1024)
                } else {
                    let page: u64 = settings.get("page_size")?.trim().parse().ok()?;
                    Some(n as u64 * page)
                }
            },
            per_connection: true,
        }
    }

    fn assumed_rates(&self, _params: &Params) -> AssumedRates {
        AssumedRates {
            load: 120_000.0,
            index: 150_000.0,
            more: 7_000.0,
            more_small: 7_000.0,
            server_s: 0.0,
            pause_s: 0.5,
        }
    }
}

/// Pragmas ibench applies before the user's own: WAL, as the Insert Benchmark expects (on a
/// file ibench created only: see `file`), and the synchronous level SQLite recommends with WAL.
pub const DEFAULT_PRAGMAS: &[(&str, &str)] = &[("journal_mode", "WAL"), ("synchronous", "NORMAL")];

/// Pragmas read back into the run's results as the effective settings.
const SETTINGS_PRAGMAS: &[&str] = &[
    "journal_mode",
    "synchronous",
    "cache_size",
    "page_size",
    "mmap_size",
    "busy_timeout",
    "wal_autocheckpoint",
    "temp_store",
    "locking_mode",
    "auto_vacuum",
    "cache_spill",
];

/// An SQLite database file.
pub struct Sqlite {
    /// `--path` as given (shown in the results).
    path: PathBuf,
    /// The same file under its directory's real path: what SQLite opens, never following a link.
    open_path: PathBuf,
    /// Whether ibench sets the journal mode, and what the file's was.
    journal: file::JournalPlan,
    /// In a directory others can write to: a connection open for the run, so that SQLite keeps
    /// the `-wal` and `-shm` files ibench made its own instead of removing them between
    /// connections.
    _keeper: Option<Mutex<RawConnection>>,
    pragmas: Vec<(String, String)>,
    busy_timeout: Duration,
    plain: bool,
    counters: Arc<Counters>,
}

/// Counters of the clients' connections. SQLite keeps page-cache figures per connection
/// (`sqlite3_db_status`); each connection adds its own when it closes. WAL checkpoints are
/// counted by ibench's WAL hook, which does what SQLite's auto-checkpoint does (a passive
/// checkpoint once the WAL holds `wal_autocheckpoint` pages) and counts it.
#[derive(Debug, Default)]
struct Counters {
    cache_hit: AtomicU64,
    cache_miss: AtomicU64,
    cache_write: AtomicU64,
    cache_spill: AtomicU64,
    wal_commits: AtomicU64,
    checkpoints: AtomicU64,
    checkpoints_busy: AtomicU64,
}

/// Counters reported per op.
const KEY_COUNTERS: &[&str] = &[
    "sqlite.cache_miss",
    "sqlite.cache_write",
    "sqlite.checkpoints",
];

impl Sqlite {
    /// Opens (creating if needed) the database at `path`, checks that a connection works and
    /// that the pragmas are accepted.
    pub fn open(
        path: PathBuf,
        pragmas: Vec<(String, String)>,
        busy_timeout_ms: u64,
        plain: bool,
    ) -> Result<Self> {
        let known = RawConnection::open_in_memory()?;
        for (name, value) in &pragmas {
            check_pragma(name, value).map_err(|msg| {
                UsageError::new(format!("{msg} in --sqlite-pragma {name}={value}"))
            })?;
            // SQLite ignores unknown pragmas silently; a typo must not pass for a setting.
            let n: i64 = known.query_row(
                "SELECT count(*) FROM pragma_pragma_list WHERE name = ?1",
                [name.to_ascii_lowercase()],
                |r| r.get(0),
            )?;
            if n == 0 {
                bail!(UsageError::new(format!(
                    "unknown SQLite pragma {name:?} in --sqlite-pragma (see sqlite.org/pragma.html)"
                )));
            }
        }
        let checked = file::check_path(&path)?;
        let asked = pragmas
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("journal_mode"))
            .map(|(_, v)| v.clone());
        let journal = file::journal_plan(&checked.open_path, asked.is_some()).map_err(|e| {
            UsageError::new(format!(
                "cannot use {} as an SQLite database: {e:#}",
                path.display()
            ))
        })?;
        if checked.shared {
            file::refuse_rollback_journal(&path, &journal, asked.as_deref())?;
            file::claim(&checked.open_path)?;
        }
        let mut db = Sqlite {
            path,
            open_path: checked.open_path,
            journal,
            _keeper: None,
            pragmas,
            busy_timeout: Duration::from_millis(busy_timeout_ms),
            plain,
            counters: Arc::default(),
        };
        // The first open checks the file and the pragmas: what fails here is the user's input.
        let first = db.open_raw().map_err(|e| {
            UsageError::new(format!(
                "cannot use {} as an SQLite database: {e:#}",
                db.path.display()
            ))
        })?;
        if checked.shared {
            first.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
            db._keeper = Some(Mutex::new(first));
        }
        Ok(db)
    }

    fn open_raw(&self) -> Result<RawConnection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let mut conn = RawConnection::open_with_flags(&self.open_path, flags)
            .with_context(|| format!("cannot open SQLite database {}", self.path.display()))?;
        install_busy_handler(&mut conn, self.busy_timeout)?;
        // A user's pragma replaces ibench's default of the same name (not applied after it:
        // switching journal_mode to WAL and back on every new connection needs a lock that
        // another connection's write holds, and fails at once).
        let user = self.pragmas.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        // The default journal mode only on a file ibench created (see `file`).
        let defaults = DEFAULT_PRAGMAS
            .iter()
            .filter(|(d, _)| !self.pragmas.iter().any(|(n, _)| n.eq_ignore_ascii_case(d)))
            .filter(|(d, _)| *d != "journal_mode" || self.journal.default_applies())
            .map(|(n, v)| (*n, *v));
        for (name, value) in defaults.chain(user) {
            if name.eq_ignore_ascii_case("journal_mode") {
                // Already so (another connection set it): nothing to change, no lock to take.
                let now: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
                if now.eq_ignore_ascii_case(value) {
                    continue;
                }
            }
            // `PRAGMA x = y` may return a row (journal_mode does); read and ignore it.
            let sql = format!("PRAGMA {name} = {value}");
            conn.query_row(&sql, [], |_| Ok(()))
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(()),
                    e => Err(e),
                })
                .with_context(|| format!("PRAGMA {name} = {value}"))?;
        }
        Ok(conn)
    }
}

/// SQLITE_BUSY / SQLITE_LOCKED after the busy timeout: transient.
fn classify(e: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
    match e.downcast_ref::<rusqlite::Error>()? {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            Some(ErrorKind::Transient)
        }
        _ => None,
    }
}

/// Pragma names and values are put into SQL text, so only plain words and numbers pass; and
/// SQLite ignores unknown pragmas silently, so a name it does not know is refused.
fn check_pragma(name: &str, value: &str) -> Result<(), String> {
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    };
    if !word(name) || !name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return Err(format!(
            "invalid SQLite pragma name {name:?}: expected a word such as cache_size"
        ));
    }
    if !word(value) {
        return Err(format!(
            "invalid value {value:?} for SQLite pragma {name}: expected a word or a number"
        ));
    }
    if let Some(known) = known_pragmas()
        && !known.iter().any(|n| n.eq_ignore_ascii_case(name))
    {
        return Err(format!("SQLite has no pragma {name:?} (see PRAGMA pragma_list)"));
    }
    Ok(())
}

/// The pragma names this build's SQLite knows (`pragma_list`); `None` when it cannot tell.
fn known_pragmas() -> Option<&'static [String]> {
    static KNOWN: std::sync::LazyLock<Option<Vec<String>>> = std::sync::LazyLock::new(|| {
        let conn = RawConnection::open_in_memory().ok()?;
        let mut stmt = conn.prepare("SELECT name FROM pragma_pragma_list").ok()?;
        let names = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .ok()?
            .collect::<rusqlite::Result<Vec<_>>>()
            .ok()?;
        (!names.is_empty()).then_some(names)
    });
    KNOWN.as_deref()
}

/// Waits for a lock in short sleeps (20 us doubling to 1 ms) until `timeout` has passed.
fn install_busy_handler(conn: &mut RawConnection, timeout: Duration) -> Result<()> {
    let mut first_busy = Instant::now();
    conn.busy_handler(Some(move |count: i32| {
        if count == 0 {
            first_busy = Instant::now();
        }
        if first_busy.elapsed() >= timeout {
            return false;
        }
        let sleep_us = (20u64 << count.clamp(0, 6)).min(1_000);
        std::thread::sleep(Duration::from_micros(sleep_us));
        true
    }))?;
    Ok(())
}

impl Sqlite {
    /// A new connection with ibench's busy handler, pragmas and WAL hook.
    fn connection(&self) -> Result<SqliteConnection> {
        let mut conn = self.open_raw()?;
        let threshold: i64 = conn.query_row("PRAGMA wal_autocheckpoint", [], |r| r.get(0))?;
        if threshold > 0 {
            let c = Arc::clone(&self.counters);
            conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages| {
                c.wal_commits.fetch_add(1, Ordering::Relaxed);
                if i64::from(pages) >= threshold {
                    match wal.checkpoint_v2(rusqlite::wal::CheckpointMode::PASSIVE) {
                        Ok(_) => {
                            c.checkpoints.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            c.checkpoints_busy.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                Ok(())
            }))?;
        }
        Ok(SqliteConnection::new(
            conn,
            self.plain,
            Arc::clone(&self.counters),
        ))
    }
}

impl Dbms for Sqlite {
    fn kind(&self) -> DbmsKind {
        DbmsKind::of(&SQLITE)
    }

    fn connect_insert_benchmark(&self) -> Result<Box<dyn InsertBenchmarkConnection>> {
        Ok(Box::new(SqlInsertBenchmark::new(self.connection()?)))
    }

    fn connect_sql(&self) -> Result<Box<dyn SqlConnection>> {
        Ok(Box::new(self.connection()?))
    }

    fn version(&self) -> Result<String> {
        Ok(rusqlite::version().to_string())
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

impl Observe for Sqlite {
    fn counters(&self) -> Result<BTreeMap<String, f64>> {
        let c = &self.counters;
        let all = [
            ("sqlite.cache_hit", &c.cache_hit),
            ("sqlite.cache_miss", &c.cache_miss),
            ("sqlite.cache_write", &c.cache_write),
            ("sqlite.cache_spill", &c.cache_spill),
            ("sqlite.wal_commits", &c.wal_commits),
            ("sqlite.checkpoints", &c.checkpoints),
            ("sqlite.checkpoints_busy", &c.checkpoints_busy),
        ];
        Ok(all
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.load(Ordering::Relaxed) as f64))
            .collect())
    }

    fn is_key_counter(&self, name: &str) -> bool {
        KEY_COUNTERS.contains(&name)
    }

    fn settings(&self) -> Result<BTreeMap<String, String>> {
        let conn = self.open_raw()?;
        let mut settings = BTreeMap::new();
        for name in SETTINGS_PRAGMAS {
            let value: rusqlite::types::Value =
                conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?;
            let text = match value {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                rusqlite::types::Value::Real(f) => f.to_string(),
                other => format!("{other:?}"),
            };
            settings.insert((*name).to_string(), text);
        }
        let now = settings.get("journal_mode").cloned().unwrap_or_default();
        settings.insert(
            "journal_mode_changed".to_string(),
            self.journal.describe(&now),
        );
        // ibench's busy handler replaces SQLite's, so `PRAGMA busy_timeout` reads 0.
        settings.insert(
            "busy_timeout".to_string(),
            format!("{} (ibench busy handler)", self.busy_timeout.as_millis()),
        );
        Ok(settings)
    }

    /// The WAL file's size (`<db>-wal`, 0 when there is none) and the checkpoints ibench's WAL
    /// hook ran so far: a file-system `stat` and an atomic load, no SQL.
    fn gauges(&self) -> Result<BTreeMap<String, f64>> {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let bytes = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        Ok(BTreeMap::from([
            ("sqlite.wal_bytes".to_string(), bytes as f64),
            (
                "sqlite.checkpoints_total".to_string(),
                self.counters.checkpoints.load(Ordering::Relaxed) as f64,
            ),
        ]))
    }

    fn size_bytes(&self) -> Result<Option<u64>> {
        let conn = self.open_raw()?;
        let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        Ok(Some((pages * page_size) as u64))
    }
}

impl Maintain for Sqlite {
    fn maintenance(&self, tables: &[Table], _change_settings: bool) -> Result<Option<String>> {
        let conn = self.open_raw()?;
        // The planner's statistics (sqlite_stat1) of the tables as the writes left them.
        for t in tables {
            conn.execute_batch(&format!("ANALYZE {}", t.name))
                .with_context(|| format!("ANALYZE {}", t.name))?;
        }
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(Some(
            "ANALYZE per table, PRAGMA wal_checkpoint(TRUNCATE)".to_string(),
        ))
    }
}

impl Topology for Sqlite {}


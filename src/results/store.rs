//! The results database: every run's document, with the fields `list` and reports look runs
//! up by. SQLite (one file, `./ibench-results/results.db` by default), or PostgreSQL
//! (`--results postgres://...`) for a team sharing one store. The schema is versioned (SQLite:
//! `PRAGMA user_version`; PostgreSQL: table `ibench_schema`) and migrated forward on open, each
//! step in a transaction.
//!
//! A run is written in one transaction after each of its steps, so the store always holds the
//! run as far as it got, never half a step.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use rusqlite::Connection;

use crate::dbms::url::ServerUrl;
use crate::error::UsageError;
use crate::results::model::RunResult;

mod cache;
pub mod location;
mod record;
mod save;
mod schema;
mod tags;
pub use location::is_postgres_url;
pub use record::Record;

/// Default location of the results database.
pub const DEFAULT_PATH: &str = "ibench-results/results.db";

/// One line of `ibench list`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    /// Run id.
    pub id: String,
    /// Start time (RFC 3339).
    pub started_at: String,
    /// DBMS family and version.
    pub dbms: String,
    /// Configuration label.
    pub label: Option<String>,
    /// Step names, comma-separated.
    pub steps: String,
    /// Run status.
    pub status: String,
    /// Provenance tags.
    pub tags: crate::spec::tags::Tags,
}

/// A run of an experiment, as resuming it needs to know.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentRun {
    /// Run id.
    pub id: String,
    /// Cell name (without the repeat).
    pub cell: String,
    /// Repeat number, 1-based.
    pub repeat: u32,
    /// Run status (`complete`, `running`, `failed`, `interrupted`).
    pub status: String,
    /// Fingerprint of the cell definition the run was made with.
    pub fingerprint: String,
}

/// A statement parameter, bound the same way on either backend.
#[derive(Clone, Debug)]
enum Param {
    Text(Option<String>),
    Int(Option<i64>),
    Real(f64),
}

fn text(v: impl Into<String>) -> Param {
    Param::Text(Some(v.into()))
}

impl rusqlite::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Param::Text(v) => v.to_sql(),
            Param::Int(v) => v.to_sql(),
            Param::Real(v) => v.to_sql(),
        }
    }
}

impl Param {
    fn pg(&self) -> &(dyn postgres::types::ToSql + Sync) {
        match self {
            Param::Text(v) => v,
            Param::Int(v) => v,
            Param::Real(v) => v,
        }
    }
}

/// SQL is written with SQLite's `?N` placeholders; PostgreSQL's are `$N`.
fn pg_sql(sql: &str) -> String {
    sql.replace('?', "$")
}

enum Backend {
    Sqlite(Connection),
    Postgres(Mutex<postgres::Client>),
}

/// An open results database.
pub struct Store {
    backend: Backend,
    /// File path, or the URL without its password.
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.path.display())
    }
}

fn not_a_store(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    UsageError::new(format!(
        "{} is not a usable ibench results database: {e}",
        path.display()
    ))
    .into()
}

/// In a directory others can write to (sticky: see `safe_fs`), makes sure the store file at
/// `path` and its journal are ibench's own before SQLite opens them (an empty file is an
/// empty database, an empty journal is not hot). Returns whether the directory is shared
/// (the store is then opened without following links). A directory others can replace
/// files in is refused.
fn claim_in_shared_dir(path: &Path, dir: &Path) -> Result<bool> {
    use crate::safe_fs::{self, DirAccess};
    if safe_fs::check_dir(dir, "the results database's directory")? == DirAccess::Private {
        return Ok(false);
    }
    let journal = PathBuf::from(format!("{}-journal", path.display()));
    safe_fs::claim_files(
        &[path, &journal],
        "keep the results database elsewhere (--results)",
    )?;
    Ok(true)
}

/// An error of the store's database, naming the store. A damaged SQLite file (corrupt pages,
/// not a database) is bad input like a store that cannot be opened (exit 2); anything else
/// (disk full, I/O, a lost PostgreSQL connection) fails the command (exit 1).
fn store_error(path: &Path, e: anyhow::Error) -> anyhow::Error {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    let damaged = e.chain().any(|c| {
        matches!(
            c.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(f, _)) if matches!(f.code, DatabaseCorrupt | NotADatabase)
        )
    });
    if damaged {
        // Only the top message: SQLite's error code repeats it.
        not_a_store(path, e)
    } else {
        e.context(format!("results database {}", path.display()))
    }
}

/// Connects to the PostgreSQL store at URL `text` (password from the URL or `PGPASSWORD`) as
/// application `application`; returns the client and the URL without its password.
pub fn connect_postgres(text: &str, application: &str) -> Result<(postgres::Client, PathBuf)> {
    let url = ServerUrl::parse(text, "PGPASSWORD")
        .map_err(|e| UsageError::new(format!("--results: {e}")))?;
    let shown = PathBuf::from(url.redacted());
    let mut config: postgres::Config = url
        .without_password()
        .parse()
        .map_err(|e| UsageError::new(format!("--results {}: {e}", shown.display())))?;
    if let Some(pw) = url.password() {
        config.password(pw);
    }
    config.application_name(application);
    let client = config.connect(postgres::NoTls).map_err(|e| {
        UsageError::new(format!(
            "cannot connect to the results database {}: {}",
            shown.display(),
            crate::dbms::postgres::error_text(&e)
        ))
    })?;
    Ok((client, shown))
}

impl Store {
    /// Opens (creating it and its directory if needed) and migrates the store at `path`: an
    /// SQLite file, or a `postgres://` URL (password from the URL or `PGPASSWORD`).
    pub fn open(path: &Path) -> Result<Self> {
        location::check(path)?;
        if is_postgres_url(path) {
            return Self::open_postgres(&path.to_string_lossy());
        }
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| {
                    UsageError::new(format!("cannot create {}: {e}", dir.display()))
                })?;
                dir
            }
            None => Path::new("."),
        };
        let shared = claim_in_shared_dir(path, dir)?;
        let mut flags = rusqlite::OpenFlags::default();
        if shared {
            flags |= rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        }
        let conn = Connection::open_with_flags(path, flags).map_err(|e| not_a_store(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| not_a_store(path, e))?;
        if shared {
            // The journal stays (truncated, not deleted) after each transaction, so its name
            // is never free for another user to plant a hot journal at.
            conn.query_row("PRAGMA journal_mode = TRUNCATE", [], |_| Ok(()))
                .map_err(|e| not_a_store(path, e))?;
        }
        let mut store = Store {
            backend: Backend::Sqlite(conn),
            path: path.to_path_buf(),
        };
        store
            .migrate()
            .map_err(|e| not_a_store(path, format!("{e:#}")))?;
        Ok(store)
    }

    fn open_postgres(text: &str) -> Result<Self> {
        let (client, shown) = connect_postgres(text, "ibench-results")?;
        let mut store = Store {
            backend: Backend::Postgres(Mutex::new(client)),
            path: shown.clone(),
        };
        store
            .migrate()
            .map_err(|e| not_a_store(&shown, format!("{e:#}")))?;
        Ok(store)
    }

    /// Opens an existing store; a missing file is a usage error (nothing to read).
    pub fn open_existing(path: &Path) -> Result<Self> {
        location::check(path)?;
        if !is_postgres_url(path) && !path.exists() {
            return Err(UsageError::new(format!(
                "no results database at {} (run `ibench run` first, or give --results)",
                path.display()
            ))
            .into());
        }
        Self::open(path)
    }

    fn migrate(&mut self) -> Result<()> {
        match &mut self.backend {
            Backend::Sqlite(conn) => {
                let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                if version == 0 {
                    // A new store is empty; an SQLite file with tables but no schema version
                    // is another program's database (a benchmark database, say), and must not
                    // get ibench's tables.
                    let mut stmt = conn.prepare(
                        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') \
                         AND name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 4",
                    )?;
                    let tables = stmt
                        .query_map([], |r| r.get::<_, String>(0))?
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    if !tables.is_empty() {
                        anyhow::bail!(
                            "it is another SQLite database (tables {}{}), not an ibench store",
                            tables[..tables.len().min(3)].join(", "),
                            if tables.len() > 3 { ", ..." } else { "" }
                        );
                    }
                }
                let version = check_version(version)?;
                for i in version..schema::VERSION {
                    let tx = conn.transaction()?;
                    tx.execute_batch(&schema::migration(i, false))?;
                    tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
                    tx.commit()?;
                }
            }
            Backend::Postgres(client) => {
                let client = client
                    .get_mut()
                    .map_err(|_| anyhow::anyhow!("store lock"))?;
                // One migrating client at a time; the others wait and find it done (hosts of
                // a group open a new store together: CREATE TABLE IF NOT EXISTS races).
                let mut tx = client.transaction()?;
                tx.batch_execute(
                    "SELECT pg_advisory_xact_lock(hashtext('ibench_schema'));
                     CREATE TABLE IF NOT EXISTS ibench_schema (version BIGINT NOT NULL);
                     LOCK TABLE ibench_schema IN EXCLUSIVE MODE",
                )?;
                let version: Option<i64> = tx
                    .query_opt("SELECT max(version) FROM ibench_schema", &[])?
                    .and_then(|r| r.get(0));
                let version = check_version(version.unwrap_or(0))?;
                for i in version..schema::VERSION {
                    tx.batch_execute(&schema::migration(i, true))?;
                    tx.execute("DELETE FROM ibench_schema", &[])?;
                    tx.execute(
                        "INSERT INTO ibench_schema (version) VALUES ($1)",
                        &[&((i + 1) as i64)],
                    )?;
                }
                tx.commit()?;
            }
        }
        Ok(())
    }

    /// Where the store is (for PostgreSQL, the URL without its password).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `statements` in one transaction.
    fn write(&mut self, statements: &[(&str, Vec<Param>)]) -> Result<()> {
        self.write_unnamed(statements)
            .map_err(|e| store_error(&self.path, e))
    }

    fn write_unnamed(&mut self, statements: &[(&str, Vec<Param>)]) -> Result<()> {
        match &mut self.backend {
            Backend::Sqlite(conn) => {
                let tx = conn.transaction()?;
                for (sql, params) in statements {
                    tx.execute(sql, rusqlite::params_from_iter(params.iter()))?;
                }
                tx.commit()?;
            }
            Backend::Postgres(client) => {
                let client = client
                    .get_mut()
                    .map_err(|_| anyhow::anyhow!("store lock"))?;
                let mut tx = client.transaction()?;
                for (sql, params) in statements {
                    let values: Vec<_> = params.iter().map(Param::pg).collect();
                    tx.execute(pg_sql(sql).as_str(), &values)?;
                }
                tx.commit()?;
            }
        }
        Ok(())
    }

    /// Rows of `sql` as text (`NULL` as `None`); select only text columns, or cast.
    fn rows(&self, sql: &str, params: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        self.rows_unnamed(sql, params)
            .map_err(|e| store_error(&self.path, e))
    }

    fn rows_unnamed(&self, sql: &str, params: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        match &self.backend {
            Backend::Sqlite(conn) => {
                let mut stmt = conn.prepare(sql)?;
                let n = stmt.column_count();
                let rows = stmt
                    .query_map(rusqlite::params_from_iter(params.iter()), |r| {
                        (0..n)
                            .map(|i| {
                                use rusqlite::types::ValueRef;
                                Ok(match r.get_ref(i)? {
                                    ValueRef::Null => None,
                                    ValueRef::Integer(v) => Some(v.to_string()),
                                    ValueRef::Real(v) => Some(v.to_string()),
                                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                                        Some(String::from_utf8_lossy(t).into_owned())
                                    }
                                })
                            })
                            .collect()
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(rows)
            }
            Backend::Postgres(client) => {
                let mut client = client.lock().map_err(|_| anyhow::anyhow!("store lock"))?;
                let values: Vec<&(dyn postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|p| p as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let rows = client.query(pg_sql(sql).as_str(), &values)?;
                Ok(rows
                    .iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| r.get::<_, Option<String>>(i))
                            .collect()
                    })
                    .collect())
            }
        }
    }

    /// The documents `sql` selects (first column).
    fn documents(&self, sql: &str, params: &[&str]) -> Result<Vec<String>> {
        Ok(self
            .rows(sql, params)?
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }

    /// Every run, oldest first.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let rows = self.rows(
            "SELECT id, started_at, dbms || ' ' || dbms_version, label, steps, status \
             FROM runs ORDER BY started_at, id",
            &[],
        )?;
        let mut tags = self.all_tags()?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let mut it = r.into_iter();
                let mut next = || it.next().flatten();
                RunRow {
                    id: next().unwrap_or_default(),
                    started_at: next().unwrap_or_default(),
                    dbms: next().unwrap_or_default(),
                    label: next(),
                    steps: next().unwrap_or_default(),
                    status: next().unwrap_or_default(),
                    tags: Default::default(),
                }
            })
            .map(|mut row| {
                row.tags = tags.remove(&row.id).unwrap_or_default();
                row
            })
            .collect())
    }

    /// The runs `name` stands for: the run with that id, else every run with that label
    /// (oldest first), else the run with that unique id prefix. Unknown names are usage errors.
    pub fn load_all(&self, name: &str) -> Result<Vec<RunResult>> {
        let exact = self.rows("SELECT id FROM runs WHERE id = ?1", &[name])?;
        if !exact.is_empty() {
            return Ok(vec![self.load(name)?]);
        }
        let documents = self.documents(
            "SELECT document FROM runs WHERE label = ?1 ORDER BY started_at, id",
            &[name],
        )?;
        if documents.is_empty() {
            let by_prefix = self.rows(
                "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 LIMIT 1",
                &[name],
            )?;
            if !by_prefix.is_empty() {
                return Ok(vec![self.load(name)?]);
            }
            let hint = if self.list()?.is_empty() {
                "the store is empty: run `ibench run` first".to_string()
            } else {
                "see `ibench list`".to_string()
            };
            return Err(UsageError::new(format!(
                "no run or label {name:?} in {} ({hint})",
                self.path.display()
            ))
            .into());
        }
        documents
            .iter()
            .map(|d| {
                serde_json::from_str(d).with_context(|| {
                    format!(
                        "a run labelled {name} in {} cannot be read",
                        self.path.display()
                    )
                })
            })
            .collect()
    }

    /// Every run of experiment `name`, oldest first.
    pub fn experiment_runs(&self, name: &str) -> Result<Vec<ExperimentRun>> {
        let rows = self.rows(
            "SELECT id, cell, CAST(repeat AS TEXT), status, document FROM runs \
             WHERE experiment = ?1 ORDER BY started_at, id",
            &[name],
        )?;
        rows.into_iter()
            .map(|r| {
                let mut it = r.into_iter();
                let mut next = || it.next().flatten().unwrap_or_default();
                let (id, cell, repeat, status, document) = (next(), next(), next(), next(), next());
                let fingerprint = serde_json::from_str::<serde_json::Value>(&document)
                    .ok()
                    .and_then(|d| d["experiment"]["fingerprint"].as_str().map(String::from))
                    .unwrap_or_default();
                Ok(ExperimentRun {
                    id,
                    cell,
                    repeat: repeat.parse().unwrap_or(0),
                    status,
                    fingerprint,
                })
            })
            .collect()
    }

    /// Whether run `id` is in the store.
    pub fn has_run(&self, id: &str) -> Result<bool> {
        Ok(!self
            .rows("SELECT id FROM runs WHERE id = ?1", &[id])?
            .is_empty())
    }

    /// When run `id` is stored as still `running`: its start time as stored (RFC 3339);
    /// `None` when it is not stored or has ended.
    pub fn running_since(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .rows(
                "SELECT started_at FROM runs WHERE id = ?1 AND status = 'running'",
                &[id],
            )?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }

    /// Sets the price per hour of `hostname` (replacing an earlier one).
    pub fn set_host_price(&mut self, hostname: &str, cost_per_hour: f64) -> Result<()> {
        self.write(&[
            (
                "DELETE FROM hosts WHERE hostname = ?1",
                vec![text(hostname)],
            ),
            (
                "INSERT INTO hosts (hostname, cost_per_hour) VALUES (?1, ?2)",
                vec![text(hostname), Param::Real(cost_per_hour)],
            ),
        ])
        .with_context(|| format!("cannot set the price of host {hostname}"))
    }

    /// Removes the price of `hostname`; whether it had one.
    pub fn clear_host_price(&mut self, hostname: &str) -> Result<bool> {
        let had = self.host_prices()?.contains_key(hostname);
        self.write(&[(
            "DELETE FROM hosts WHERE hostname = ?1",
            vec![text(hostname)],
        )])?;
        Ok(had)
    }

    /// The price per hour of every host that has one.
    pub fn host_prices(&self) -> Result<std::collections::BTreeMap<String, f64>> {
        let rows = self.rows(
            "SELECT hostname, CAST(cost_per_hour AS TEXT) FROM hosts ORDER BY hostname",
            &[],
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                let host = it.next().flatten()?;
                let price = it.next().flatten()?.parse().ok()?;
                Some((host, price))
            })
            .collect())
    }

    /// Removes run `id` and its steps.
    pub fn delete(&mut self, id: &str) -> Result<()> {
        self.write(&[
            ("DELETE FROM run_tags WHERE run_id = ?1", vec![text(id)]),
            ("DELETE FROM steps WHERE run_id = ?1", vec![text(id)]),
            ("DELETE FROM runs WHERE id = ?1", vec![text(id)]),
        ])
        .with_context(|| format!("cannot delete run {id}"))
    }

    /// The run named `name`: its id, a label (the latest run with that label), or a unique
    /// prefix of an id. Unknown or ambiguous names are usage errors.
    pub fn load(&self, name: &str) -> Result<RunResult> {
        let mut documents = self.documents("SELECT document FROM runs WHERE id = ?1", &[name])?;
        if documents.is_empty() {
            documents = self.documents(
                "SELECT document FROM runs WHERE label = ?1 ORDER BY started_at DESC LIMIT 1",
                &[name],
            )?;
        }
        if documents.is_empty() {
            documents = self.documents(
                "SELECT document FROM runs WHERE substr(id, 1, length(?1)) = ?1",
                &[name],
            )?;
            if documents.len() > 1 {
                return Err(UsageError::new(format!(
                    "run {name:?} is ambiguous: {} runs start with it",
                    documents.len()
                ))
                .into());
            }
        }
        let document = documents.into_iter().next().ok_or_else(|| {
            UsageError::new(format!(
                "no run {name:?} in {} (see `ibench list`)",
                self.path.display()
            ))
        })?;
        serde_json::from_str(&document)
            .with_context(|| format!("run {name} in {} cannot be read", self.path.display()))
    }
}

fn check_version(version: i64) -> Result<usize> {
    let version = version.max(0) as usize;
    if version > schema::VERSION {
        anyhow::bail!(
            "its schema version {version} is newer than this ibench knows ({})",
            schema::VERSION
        );
    }
    Ok(version)
}

#[cfg(test)]
mod tests;

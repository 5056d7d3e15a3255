//! Opening a store: an SQLite file (created with its directory, claimed first in a directory
//! others can write to) or a PostgreSQL URL, its schema migrated forward (`schema.rs`), each
//! step in a transaction.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Result;
use rusqlite::Connection;

use super::{Backend, Store, is_postgres_url, location, not_a_store, schema};
use crate::dbms::url::ServerUrl;
use crate::error::UsageError;

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

//! The results database: every run's document, with the fields `list` and reports look runs
//! up by. SQLite (one file, `./ibench-results/results.db` by default); the schema is versioned
//! with `PRAGMA user_version` and migrated forward on open, each step in a transaction.
//!
//! A run is written in one transaction after each of its steps, so the store always holds the
//! run as far as it got, never half a step.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::UsageError;
use crate::results::model::RunResult;

/// Default location of the results database.
pub const DEFAULT_PATH: &str = "ibench-results/results.db";

/// Schema migrations; migration i brings the schema from version i to i + 1.
const MIGRATIONS: &[&str] = &["CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        dbms TEXT NOT NULL,
        dbms_version TEXT NOT NULL,
        label TEXT,
        status TEXT NOT NULL,
        steps TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        document TEXT NOT NULL);
     CREATE INDEX runs_label ON runs (label);
     CREATE TABLE steps (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        duration_s REAL NOT NULL,
        inserts_per_s REAL NOT NULL,
        deletes_per_s REAL NOT NULL,
        queries_per_s REAL NOT NULL,
        PRIMARY KEY (run_id, idx));"];

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
}

/// An open results database.
pub struct Store {
    conn: Connection,
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

impl Store {
    /// Opens (creating it and its directory if needed) and migrates the store at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| UsageError::new(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = Connection::open(path).map_err(|e| not_a_store(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| not_a_store(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .migrate()
            .map_err(|e| not_a_store(path, format!("{e:#}")))?;
        Ok(store)
    }

    /// Opens an existing store; a missing file is a usage error (nothing to read).
    pub fn open_existing(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Err(UsageError::new(format!(
                "no results database at {} (run `ibench run` first, or give --results)",
                path.display()
            ))
            .into());
        }
        Self::open(path)
    }

    fn migrate(&mut self) -> Result<()> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let version = version.max(0) as usize;
        if version > MIGRATIONS.len() {
            anyhow::bail!(
                "its schema version {version} is newer than this ibench knows ({})",
                MIGRATIONS.len()
            );
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            let tx = self.conn.transaction()?;
            tx.execute_batch(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
            tx.commit()?;
        }
        Ok(())
    }

    /// Where the store is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `run` (replacing an earlier version of it) in one transaction.
    pub fn save(&mut self, run: &RunResult) -> Result<()> {
        let document = serde_json::to_string(run)?;
        let steps: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
        let status = serde_json::to_value(run.status)?
            .as_str()
            .unwrap_or_default()
            .to_string();
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM runs WHERE id = ?1", params![run.run_id])?;
        tx.execute(
            "INSERT INTO runs (id, started_at, finished_at, dbms, dbms_version, label, status, \
             steps, schema_version, document) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                run.run_id,
                run.started_at.to_rfc3339(),
                run.finished_at.map(|t| t.to_rfc3339()),
                run.environment.dbms.name,
                run.environment.dbms.version,
                run.config.label,
                status,
                steps.join(","),
                run.schema_version,
                document,
            ],
        )?;
        for (i, s) in run.steps.iter().enumerate() {
            let step_status = serde_json::to_value(s.status)?
                .as_str()
                .unwrap_or_default()
                .to_string();
            tx.execute(
                "INSERT INTO steps (run_id, idx, name, status, duration_s, inserts_per_s, \
                 deletes_per_s, queries_per_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    run.run_id,
                    i as i64,
                    s.name,
                    step_status,
                    s.duration_s,
                    s.inserts_per_s,
                    s.deletes_per_s,
                    s.queries_per_s
                ],
            )?;
        }
        tx.commit()
            .with_context(|| format!("cannot save run {} to {}", run.run_id, self.path.display()))
    }

    /// Every run, oldest first.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, started_at, dbms || ' ' || dbms_version, label, steps, status \
             FROM runs ORDER BY started_at, id",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok(RunRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    dbms: r.get(2)?,
                    label: r.get(3)?,
                    steps: r.get(4)?,
                    status: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The run named `name`: its id, a unique prefix of an id, or a label (the latest run
    /// with that label). Unknown or ambiguous names are usage errors.
    pub fn load(&self, name: &str) -> Result<RunResult> {
        let by_id: Option<String> = self
            .conn
            .query_row("SELECT document FROM runs WHERE id = ?1", [name], |r| {
                r.get(0)
            })
            .optional()?;
        let document = match by_id {
            Some(d) => d,
            None => {
                let prefix: Vec<String> = self
                    .conn
                    .prepare("SELECT document FROM runs WHERE substr(id, 1, length(?1)) = ?1")?
                    .query_map([name], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                match prefix.len() {
                    1 => prefix.into_iter().next().unwrap_or_default(),
                    n if n > 1 => {
                        return Err(UsageError::new(format!(
                            "run {name:?} is ambiguous: {n} runs start with it"
                        ))
                        .into());
                    }
                    _ => self
                        .conn
                        .query_row(
                            "SELECT document FROM runs WHERE label = ?1 \
                             ORDER BY started_at DESC LIMIT 1",
                            [name],
                            |r| r.get(0),
                        )
                        .optional()?
                        .ok_or_else(|| {
                            UsageError::new(format!(
                                "no run {name:?} in {} (see `ibench list`)",
                                self.path.display()
                            ))
                        })?,
                }
            }
        };
        serde_json::from_str(&document)
            .with_context(|| format!("run {name} in {} cannot be read", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_file_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        std::fs::write(&path, "this is not a database, just text ".repeat(100)).unwrap();
        let err = Store::open(&path).err().unwrap();
        assert_eq!(crate::error::exit_code(&err), crate::error::EXIT_USAGE);
        assert!(format!("{err:#}").contains("not a usable ibench results database"));
    }

    #[test]
    fn migrations_bring_a_new_store_to_the_latest_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let v: i64 = store
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v as usize, MIGRATIONS.len());
        assert!(store.list().unwrap().is_empty());
    }
}

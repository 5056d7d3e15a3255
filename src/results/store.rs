//! The results database: every run's document, with the fields `list` and reports look runs
//! up by. SQLite (one file, `./ibench-results/results.db` by default), or PostgreSQL
//! (`--results postgres://...`) for a team sharing one store. The schema is versioned (SQLite:
//! `PRAGMA user_version`; PostgreSQL: table `ibench_schema`) and migrated forward on open, each
//! step in a transaction.
//!
//! A run is written in one transaction after each of its steps, so the store always holds the
//! run as far as it got, never half a step.
//!
//! The files: `open.rs` opens a store and migrates its schema (`schema.rs`); `sql.rs` runs
//! statements on either backend; `runs.rs` lists, finds, loads and removes runs; `save.rs`
//! writes them (as `record.rs`'s records); `tags.rs`, `cache.rs` (`ibench history`'s) and
//! `hosts.rs` (prices per hour) read and write the rest; `location.rs` checks where a store
//! may be.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::Connection;

use crate::error::UsageError;

mod cache;
mod hosts;
pub mod location;
mod open;
mod record;
mod runs;
mod save;
mod schema;
mod sql;
mod tags;
pub use location::is_postgres_url;
pub use open::connect_postgres;
pub use record::Record;
use sql::{Param, text};

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
    pub tags: crate::request::tags::Tags,
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

impl Store {
    /// Where the store is (for PostgreSQL, the URL without its password).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests;

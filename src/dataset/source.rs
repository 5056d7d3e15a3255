//! What `ibench dataset save` copies: the database a finished run left (a `--prepare-only`
//! run keeps it), found from the run's results document.

use std::path::PathBuf;

use super::Identity;
use crate::error::UsageError;
use crate::metrics::proc::running;
use crate::results::model::{RunResult, RunStatus};

/// A database to save, and what it holds.
#[derive(Clone, Debug)]
pub struct Source {
    /// Its directory (a server's data directory, or the scratch database's).
    pub data: PathBuf,
    /// What it holds.
    pub identity: Identity,
    /// The DBMS version that loaded it.
    pub version: String,
    /// The run that loaded it.
    pub run_id: String,
}

/// The database `run` left, checked to be whole and at rest: the run completed, its data was
/// kept, and a managed server no longer runs on it (and stopped cleanly).
pub fn source_of(run: &RunResult) -> Result<Source, UsageError> {
    let id = &run.run_id;
    if run.status != RunStatus::Complete {
        return Err(UsageError::new(format!(
            "run {id} did not complete ({}): its database may be half loaded",
            format!("{:?}", run.status).to_lowercase()
        )));
    }
    let data = match &run.managed_server {
        Some(server) => {
            let Some(dir) = &server.data_dir else {
                return Err(UsageError::new(format!(
                    "run {id} does not record its server's data directory (an earlier ibench)"
                )));
            };
            if server.kept
                && let Some(pid) = server.pid
                && running(pid)
            {
                return Err(UsageError::new(format!(
                    "the server of run {id} still runs (pid {pid}): stop it first (kill -INT \
                     {pid} for PostgreSQL, kill {pid} for MariaDB)"
                )));
            }
            let dir = PathBuf::from(dir);
            if dir.join("postmaster.pid").exists() {
                return Err(UsageError::new(format!(
                    "the server of run {id} did not stop cleanly ({} is there)",
                    dir.join("postmaster.pid").display()
                )));
            }
            dir
        }
        None if run.config.scratch_database => {
            let path = run.resolved.as_ref().and_then(|r| r.target.path.as_ref());
            match path.and_then(|p| p.parent()) {
                Some(dir) => dir.to_path_buf(),
                None => {
                    return Err(UsageError::new(format!(
                        "run {id} does not record its database's path"
                    )));
                }
            }
        }
        None => {
            return Err(UsageError::new(format!(
                "run {id} ran on a database ibench did not make (--path or --url): datasets are \
                 saved from a run's scratch database or managed server (run it without --path)"
            )));
        }
    };
    if !data.is_dir() {
        return Err(UsageError::new(format!(
            "run {id} left no database at {}: run it with --prepare-only (or --keep-data)",
            data.display()
        )));
    }
    Ok(Source {
        data,
        identity: Identity::of(&run.config),
        version: run.environment.dbms.version.clone(),
        run_id: id.clone(),
    })
}

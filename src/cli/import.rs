//! `ibench import FILE...`: results documents into the results database.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::error::UsageError;
use crate::output::{escape, stdout};
use crate::results::file;
use crate::results::model::{RunResult, RunStatus, SCHEMA_VERSION};
use crate::results::store::{Record, Store};

/// Flags of `ibench import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Results documents (JSON) written by `ibench run`.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Replace runs the store already holds (by run id) with the documents' versions of them;
    /// without it, a document of a stored run imports nothing.
    #[arg(long)]
    pub replace: bool,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Checks every file first (see `results::validate`), then stores them all in one transaction
/// (a bad file imports nothing). A run the store holds already is refused unless `--replace`
/// (it would have replaced a measured run silently), as are two documents of one run. Each
/// run is kept only as the store's record of it (its document as compact JSON) once checked:
/// its per-second series take several times the memory of their text.
pub fn execute(args: &ImportArgs) -> Result<()> {
    let (mut records, mut ids, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    // The file each run id came from.
    let mut files: BTreeMap<String, &Path> = BTreeMap::new();
    for path in &args.files {
        let mut run = checked(path)?;
        if let Some(first) = files.get(&run.run_id) {
            return Err(UsageError::new(format!(
                "{}: run {} is also in {}: import one document per run",
                path.display(),
                run.run_id,
                first.display()
            ))
            .into());
        }
        if run.status == RunStatus::Running {
            mark_abandoned(&mut run);
            notes.push(format!(
                "note: {}: run {} was still running when its document was written: imported \
                 as abandoned",
                escape::line(&path.display().to_string()),
                run.run_id
            ));
        }
        files.insert(run.run_id.clone(), path);
        ids.push(run.run_id.clone());
        records.push(Record::of(&run)?);
    }
    let mut store = Store::open(&args.store.results)?;
    if args.replace {
        store.save_all(records)?;
    } else {
        for (id, path) in &files {
            if store.has_run(id)? {
                return Err(UsageError::new(format!(
                    "{}: run {id} is already in {}: give --replace to replace it (nothing \
                     was imported)",
                    path.display(),
                    store.path().display()
                ))
                .into());
            }
        }
        store.save_new(records)?;
    }
    for note in notes {
        eprintln!("{note}");
    }
    for id in ids {
        // Every run is stored even when nobody reads the list any more.
        stdout::print_or_drop(&format!("imported {id}\n"));
    }
    Ok(())
}

/// The run in `path`, checked field by field.
fn checked(path: &Path) -> Result<RunResult> {
    let run = file::load(path).map_err(|e| UsageError::new(format!("{e:#}")))?;
    if run.schema_version > SCHEMA_VERSION {
        return Err(UsageError::new(format!(
            "{} has schema version {}, newer than this ibench reads ({SCHEMA_VERSION})",
            path.display(),
            run.schema_version
        ))
        .into());
    }
    crate::results::validate::check(&run)
        .map_err(|e| UsageError::new(format!("{}: {e}", path.display())))?;
    Ok(run)
}

/// A run whose document says `running`: no process of this store will ever finish it (it
/// ran elsewhere, or its document was copied mid-run), so it is stored as `abandoned`, with
/// its steps as saved, as a later run marks one whose ibench process died.
fn mark_abandoned(run: &mut RunResult) {
    run.status = RunStatus::Abandoned;
    for s in &mut run.steps {
        if s.status == RunStatus::Running {
            s.status = RunStatus::Abandoned;
        }
    }
    if run.error.is_none() {
        run.error = Some(
            "abandoned: its document said running when it was imported (the run had not \
             finished, or its ibench process had died)"
                .to_string(),
        );
    }
}

//! `ibench import FILE...`: results documents into the results database.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::error::UsageError;
use crate::output::stdout;
use crate::results::file;
use crate::results::model::SCHEMA_VERSION;
use crate::results::store::{Record, Store};

/// Flags of `ibench import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Results documents (JSON) written by `ibench run`.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Checks every file first (see `results::validate`), then stores them all in one transaction
/// (a bad file imports nothing). Each run is kept only as the store's record of it (its
/// document as compact JSON) once checked: its per-second series take several times the
/// memory of their text.
pub fn execute(args: &ImportArgs) -> Result<()> {
    let mut records = Vec::new();
    for path in &args.files {
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
        records.push(Record::of(&run)?);
    }
    let ids: Vec<String> = records.iter().map(|r| r.run_id().to_string()).collect();
    let mut store = Store::open(&args.store.results)?;
    store.save_all(records)?;
    for id in ids {
        // Every run is stored even when nobody reads the list any more.
        stdout::print_or_drop(&format!("imported {id}\n"));
    }
    Ok(())
}

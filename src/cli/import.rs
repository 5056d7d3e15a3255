//! `ibench import FILE...`: results documents into the results database.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::error::UsageError;
use crate::output::stdout;
use crate::results::file;
use crate::results::model::SCHEMA_VERSION;
use crate::results::store::Store;

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

/// Checks every file first (see `results::validate`), then stores them all (a bad file
/// imports nothing).
pub fn execute(args: &ImportArgs) -> Result<()> {
    let mut runs = Vec::new();
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
        runs.push(run);
    }
    let mut store = Store::open(&args.store.results)?;
    for run in &runs {
        store.save(run)?;
        // Every run is stored even when nobody reads the list any more.
        stdout::print_or_drop(&format!("imported {}\n", run.run_id));
    }
    Ok(())
}

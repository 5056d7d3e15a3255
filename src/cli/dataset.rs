//! `ibench dataset save | list | rm`, and the flags `run`, `micro` and `tpcc` share to make
//! and use prepared datasets (`--prepare-only`, `--from-dataset`).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::dataset;
use crate::error::UsageError;
use crate::request::RunSpec;
use crate::results::model::{RunResult, RunStatus};

/// Flags of the benchmark subcommands for prepared datasets.
#[derive(Debug, Args)]
pub struct DatasetArgs {
    /// Only load (create and fill the tables: prepare, or l.i0 and l.x), keep the database (a
    /// managed server stopped cleanly) and stop; `ibench dataset save NAME` then saves it.
    #[arg(long)]
    pub prepare_only: bool,
    /// Start from the saved dataset NAME (in <--out>/datasets) instead of loading: its files
    /// restored into the run's scratch database or managed server (reflink where the file
    /// system allows, else a copy). Its DBMS, version and load must be the run's.
    #[arg(long, value_name = "NAME")]
    pub from_dataset: Option<String>,
}

impl DatasetArgs {
    /// `spec` as these flags make it (see [`RunSpec::with_dataset`]).
    pub fn apply(&self, spec: RunSpec) -> Result<RunSpec, UsageError> {
        spec.with_dataset(self.prepare_only, self.from_dataset.clone())
    }
}

/// Flags of `ibench dataset`.
#[derive(Debug, Args)]
pub struct DatasetCommandArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// `ibench dataset` actions.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Save the database a `--prepare-only` run left (its managed server's data directory,
    /// or its scratch database) as dataset NAME in <--out>/datasets.
    Save {
        /// The dataset's name (letters, digits, '.', '_', '-').
        name: String,
        /// The run's results document (default: the newest --prepare-only run in --out).
        #[arg(long, value_name = "FILE")]
        run: Option<PathBuf>,
        /// The output directory the run wrote to; datasets live in its `datasets/`.
        #[arg(long, value_name = "DIR", default_value = "ibench-results")]
        out: PathBuf,
    },
    /// List the datasets in <--out>/datasets.
    List {
        /// The output directory whose datasets to list.
        #[arg(long, value_name = "DIR", default_value = "ibench-results")]
        out: PathBuf,
    },
    /// Remove dataset NAME from <--out>/datasets.
    Rm {
        /// The dataset's name.
        name: String,
        /// The output directory whose dataset to remove.
        #[arg(long, value_name = "DIR", default_value = "ibench-results")]
        out: PathBuf,
    },
}

/// Runs `ibench dataset`.
pub fn execute(args: &DatasetCommandArgs) -> Result<()> {
    let (Action::Save { out, .. } | Action::List { out } | Action::Rm { out, .. }) = &args.action;
    // What saves and removals killed midway left (see dataset::settle).
    dataset::settle(&dataset::store_dir(out));
    match &args.action {
        Action::Save { name, run, out } => {
            dataset::check_name(name)?;
            let run = match run {
                // A file that is missing or not a run's results is the user's to fix.
                Some(path) => crate::results::file::load(path)
                    .map_err(|e| UsageError::new(format!("--run: {e:#}")))?,
                None => newest_prepared(out)?,
            };
            let source = dataset::source_of(&run)?;
            let saved = dataset::save(&dataset::store_dir(out), name, &source)?;
            let m = &saved.manifest;
            println!(
                "dataset {name}: {} files, {} MiB ({}) from run {} by {} in {:.1} s, sha256 {}",
                m.size.files,
                m.size.logical_bytes >> 20,
                m.identity.describe(),
                m.source_run,
                m.method.name(),
                m.save_s,
                m.sha256
            );
            Ok(())
        }
        Action::List { out } => {
            let store = dataset::store_dir(out);
            check_listable(out, &store)?;
            for d in dataset::list(&store) {
                let m = &d.manifest;
                println!(
                    "{}\t{}\t{}\t{} MiB\t{}\t{}",
                    m.name,
                    m.saved_at.format("%Y-%m-%d %H:%M"),
                    m.identity.describe(),
                    m.size.logical_bytes >> 20,
                    m.version,
                    m.sha256
                );
            }
            Ok(())
        }
        Action::Rm { name, out } => dataset::remove(&dataset::store_dir(out), name),
    }
}

/// Refuses (one line) an `--out` that is not a directory, or whose `datasets` is not one:
/// listing nothing there would say there are no datasets where none can be. An `--out`
/// without `datasets` yet has none.
fn check_listable(out: &Path, store: &Path) -> Result<(), UsageError> {
    let is_dir = |path: &Path, what: &str| match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(UsageError::new(format!(
            "{what} {} is not a directory",
            path.display()
        ))),
        Err(e) => Err(UsageError::new(format!(
            "cannot read {what} {}: {e}",
            path.display()
        ))),
    };
    is_dir(out, "--out")?;
    match std::fs::symlink_metadata(store) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        _ => is_dir(store, "the datasets directory"),
    }
}

/// The newest complete `--prepare-only` run whose results document is in `out`.
fn newest_prepared(out: &Path) -> Result<RunResult> {
    let mut best: Option<RunResult> = None;
    for entry in std::fs::read_dir(out)
        .map_err(|e| UsageError::new(format!("cannot read --out {}: {e}", out.display())))?
        .flatten()
    {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name.starts_with("ibench-")
            && name.ends_with(".json")
            && crate::safe_fs::is_own_file(&path);
        if !ours {
            continue;
        }
        let Ok(run) = crate::results::file::load(&path) else {
            continue;
        };
        let newer = best.as_ref().is_none_or(|b| run.started_at > b.started_at);
        if run.config.prepare_only && run.status == RunStatus::Complete && newer {
            best = Some(run);
        }
    }
    best.ok_or_else(|| {
        UsageError::new(format!(
            "no complete --prepare-only run in {}: run one first, or name its results with --run",
            out.display()
        ))
        .into()
    })
}

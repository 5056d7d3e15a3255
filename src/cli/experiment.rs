//! `ibench experiment FILE.toml`: validate the experiment, list it (`--dry-run`) or run its
//! cells, resuming where an earlier invocation stopped.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::error::UsageError;
use crate::experiment::{self, runner};
use crate::results::store::{Store, is_postgres_url};

/// Flags of `ibench experiment`.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// The experiment file (TOML; see docs/experiments.md and examples/).
    #[arg(value_name = "FILE.toml")]
    pub file: PathBuf,
    /// List the cells and the estimated time; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Directory for results [default: ibench-results/<experiment name>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Results database [default: OUT/results.db].
    #[arg(long, value_name = "FILE")]
    pub results: Option<PathBuf>,
    /// Multiply every row count and query-step duration by X (overrides the file's `scale`).
    #[arg(long, value_name = "X")]
    pub scale: Option<f64>,
    /// No progress bars or step lines; one line per cell.
    #[arg(short, long)]
    pub quiet: bool,
    /// Let the cells change settings of the servers given by URL (`url` targets), as
    /// `ibench run --allow-server-changes` does for one run: the file's
    /// `allow_server_changes = true` (a config's options on such a target become settings of
    /// ibench's sessions; the maintenance pause may change global settings for a moment).
    #[arg(long)]
    pub allow_server_changes: bool,
    /// Provenance tag KEY=VALUE stored with every run this invocation makes (repeatable;
    /// e.g. commit=3f2a9c1). See `ibench run --help`.
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::spec::tags::parse)]
    pub tags: Vec<(String, String)>,
}

/// Runs `ibench experiment`.
pub fn execute(args: &ExperimentArgs) -> Result<()> {
    if let Some(s) = args.scale
        && !(s.is_finite() && s > 0.0 && s <= 1000.0)
    {
        return Err(UsageError::new(format!(
            "--scale {s} is out of range: expected > 0 and <= 1000"
        ))
        .into());
    }
    let tags = crate::spec::tags::collect(&args.tags).map_err(UsageError::new)?;
    let plan = experiment::load(&args.file, args.scale, args.allow_server_changes)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("ibench-results").join(&plan.name));
    let store = args
        .results
        .clone()
        .unwrap_or_else(|| out.join("results.db"));
    if args.dry_run {
        let done = if is_postgres_url(&store) || store.exists() {
            let runs = Store::open(&store)?.experiment_runs(&plan.name)?;
            runner::completed(&plan, &runs)?
        } else {
            Default::default()
        };
        print!("{}", experiment::dry_run(&plan, &done));
        return Ok(());
    }
    runner::run(
        &plan,
        &runner::Options {
            out,
            store,
            quiet: args.quiet,
            tags,
        },
    )
    .map(|_| ())
}

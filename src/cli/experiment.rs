//! `ibench experiment FILE.toml`: validate the experiment, list it (`--dry-run`) or run its
//! cells, resuming where an earlier invocation stopped.

use std::path::PathBuf;

use anyhow::Result;

use crate::report::compare;
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
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::request::tags::parse)]
    pub tags: Vec<(String, String)>,
    /// After the file's repeats, run one more round at a time while any cell's throughput
    /// against the base is inconclusive by `compare`'s test, up to --max-repeats rounds; say
    /// how many rounds each decision took (docs/experiments.md).
    #[arg(long)]
    pub until_decided: bool,
    /// Every run probes the host before and after it, as `ibench run --canary`.
    #[arg(long)]
    pub canary: bool,
    /// Duet: run the two cells of each round at the same time, each in a process of its own,
    /// so that the host's interference hits both alike (the file's `duet = true`; two cells a
    /// round; docs/experiments.md, "Duet").
    #[arg(long)]
    pub duet: bool,
    /// Internal to --duet: run only the cell LABEL of round --duet-round, started by the
    /// experiment.
    #[arg(long, hide = true, value_name = "LABEL", requires = "duet_round")]
    pub duet_cell: Option<String>,
    /// Internal to --duet: the round of --duet-cell.
    #[arg(long, hide = true, value_name = "N", requires = "duet_cell",
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub duet_round: Option<u32>,
    /// Most rounds --until-decided runs.
    #[arg(long, value_name = "N", default_value_t = experiment::decided::DEFAULT_MAX_REPEATS,
          value_parser = clap::value_parser!(u32).range(2..=1000), requires = "until_decided")]
    pub max_repeats: u32,
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
    let tags = crate::request::tags::collect(&args.tags).map_err(UsageError::new)?;
    // A duet's child runs a plan the experiment checked with the servers already.
    let ask_servers = args.duet_cell.is_none();
    let mut plan = experiment::load_with(
        &args.file,
        args.scale,
        args.allow_server_changes,
        ask_servers,
    )?;
    if args.duet && plan.duet.is_none() {
        plan.duet = Some("--duet".to_string());
    }
    experiment::duet::check(&plan, args.canary)?;
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
    let options = runner::Options {
        out,
        store,
        quiet: args.quiet,
        tags,
        canary: args.canary,
    };
    if let (Some(label), Some(round)) = (&args.duet_cell, args.duet_round) {
        return runner::run_duet_child(&plan, label, round, &options);
    }
    runner::run(&plan, &options)?;
    // The flag, or the file's `max_repeats` (the flag's --max-repeats wins when given).
    let max = match (args.until_decided, plan.max_repeats) {
        (true, _) => Some(args.max_repeats),
        (false, file) => file,
    };
    if let Some(max) = max {
        until_decided(plan, &options, max)?;
    }
    Ok(())
}

/// Adds rounds while a decision is open (`experiment/decided.rs`), up to `max` rounds, then
/// says how many rounds each took.
fn until_decided(mut plan: experiment::Plan, options: &runner::Options, max: u32) -> Result<()> {
    use experiment::decided;
    let mut settled: Vec<decided::Decision> = Vec::new();
    let mut lines = String::new();
    loop {
        let now = decided::decisions(&options.store, &plan)?;
        for d in &now {
            let known = settled
                .iter()
                .any(|s| s.cell == d.cell && s.step == d.step && s.figure == d.figure);
            if d.verdict != compare::Verdict::Inconclusive && !known {
                lines.push_str(&decided::summary(std::slice::from_ref(d), plan.repeats));
                settled.push(d.clone());
            }
        }
        let open = decided::open(&now);
        if open.is_empty() {
            println!("decided after {} round(s):\n{lines}", plan.repeats);
            return Ok(());
        }
        if plan.repeats >= max {
            let still: Vec<decided::Decision> = open.into_iter().cloned().collect();
            println!(
                "decided:\n{lines}still inconclusive after {max} round(s) (--max-repeats):\n{}",
                decided::summary(&still, plan.repeats)
            );
            return Ok(());
        }
        println!(
            "{} main figure(s) inconclusive after {} round(s): one round more",
            open.len(),
            plan.repeats
        );
        plan = plan.with_repeats(plan.repeats + 1);
        runner::run(&plan, options)?;
    }
}

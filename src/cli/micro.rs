//! `ibench micro`: OLTP microbenchmarks (sysbench-style tables) against one target, at each
//! client count of a list.

use anyhow::Result;
use clap::Args;

use super::flags::{ConditionArgs, OutputArgs, RunFlags, ServerArgs, TargetArgs, flag_name};
use crate::error::UsageError;
use crate::request::{MicroSpec, RunSpec, WorkloadSpec};
use crate::workload::micro::{BENCHMARKS, accepted_names, expand};

/// Flags of `ibench micro`.
#[derive(Debug, Args)]
pub struct MicroArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten)]
    pub conditions: ConditionArgs,

    /// Benchmarks to run, in order (comma-separated): names from --list, a name without its
    /// range length for all of them (random-points), a name with .pre for a run named apart
    /// (point-query.pre), all (the reference order: a few .pre reads, the writes, the
    /// post-write pause, every read, delete and inserts) or reads-first (--list order).
    #[arg(
        long,
        value_parser = parse_benchmark,
        value_delimiter = ',',
        value_name = "NAMES",
        default_value = "point-query"
    )]
    pub benchmarks: Vec<String>,
    /// List the benchmarks, one line each, and exit.
    #[arg(long)]
    pub list: bool,
    /// Client counts (comma-separated); each benchmark runs once per count.
    #[arg(
        short,
        long,
        value_delimiter = ',',
        value_name = "N,N...",
        default_value = "1,2,4,8"
    )]
    pub clients: Vec<usize>,
    /// Number of tables (sbtest1 ... sbtestN); each query picks one at random.
    #[arg(long, value_name = "N", default_value_t = MicroSpec::default().tables)]
    pub tables: usize,
    /// Rows per table.
    #[arg(long, value_name = "N", default_value_t = MicroSpec::default().table_rows)]
    pub table_rows: u64,
    /// Duration of each benchmark at each client count, seconds.
    #[arg(long, value_name = "SECS", default_value_t = MicroSpec::default().seconds)]
    pub seconds: u64,
    /// Seconds each benchmark runs at each client count before --seconds start, not counted.
    #[arg(long, value_name = "SECS", default_value_t = MicroSpec::default().warmup)]
    pub warmup: u64,
    /// Use the tables as they are (e.g. from `sysbench ... prepare`) instead of creating and
    /// loading them.
    #[arg(long)]
    pub no_prepare: bool,
    /// Seed of every random value (rows and keys).
    #[arg(long, value_name = "N", default_value_t = MicroSpec::default().seed)]
    pub seed: u64,
    /// Tries per statement on transient DBMS errors; 1 = no retry.
    #[arg(long, value_name = "N", default_value_t = MicroSpec::default().max_tries)]
    pub max_tries: u32,
    /// Reconnects per client thread after a lost connection; 0 = fail at once.
    #[arg(long, value_name = "N", default_value_t = MicroSpec::default().max_reconnects)]
    pub max_reconnects: u32,
    /// A step fails when its retried statements exceed this percent of its statements.
    #[arg(long, value_name = "PCT", default_value_t = MicroSpec::default().max_error_pct)]
    pub max_error_rate: f64,
    /// Seconds the pause after writes (before the next read benchmark) lasts from its start,
    /// maintenance included [default: 60 + 1 per million rows, at most 1200].
    #[arg(long, value_name = "SECS")]
    pub post_write_pause: Option<u64>,
    /// Rows prepare loads into each insert-random-pk table (sbrandpkN), so that its steps
    /// insert into a large table (kept across its steps) instead of a new empty one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub random_pk_rows: u64,
    /// Skip the DBMS maintenance pause between the load and the benchmarks.
    #[arg(long)]
    pub no_maintenance: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub dataset: super::dataset::DatasetArgs,
}

impl MicroArgs {
    /// The flag groups every benchmark subcommand shares, together.
    fn flags(&self) -> RunFlags<'_> {
        RunFlags {
            target: &self.target,
            server: &self.server,
            conditions: &self.conditions,
            output: &self.output,
        }
    }

    /// Builds and validates the run's spec.
    pub fn to_spec(&self) -> Result<RunSpec, UsageError> {
        let micro = MicroSpec {
            benchmarks: self
                .benchmarks
                .iter()
                .flat_map(|name| expand(name))
                .map(|e| e.name())
                .collect(),
            clients: self.clients.clone(),
            tables: self.tables,
            table_rows: self.table_rows,
            seconds: self.seconds,
            warmup: self.warmup,
            prepare: !self.no_prepare,
            seed: self.seed,
            max_tries: self.max_tries,
            max_reconnects: self.max_reconnects,
            max_error_pct: self.max_error_rate,
            load_only: false,
            post_write_pause: self.post_write_pause,
            random_pk_rows: self.random_pk_rows,
        };
        micro.validate(flag_name)?;
        if !micro.prepare && !self.target.names_a_database() {
            return Err(UsageError::new(
                "--no-prepare uses existing tables: give --path or --url to find them",
            ));
        }
        let spec = self
            .flags()
            .run_spec(WorkloadSpec::Micro(micro), !self.no_maintenance)?;
        self.dataset.apply(spec)
    }
}

/// A name `--benchmarks` takes, or a one-line error naming what it takes.
fn parse_benchmark(name: &str) -> Result<String, String> {
    if expand(name).is_empty() {
        return Err(format!(
            "no such benchmark: expected a name from `ibench micro --list` ({}), one of them \
             with .pre (point-query.pre), all (the reference order) or reads-first",
            accepted_names()
                .into_iter()
                .filter(|n| !n.contains(crate::workload::micro::RANGE_SEPARATOR))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(name.to_string())
}

/// Runs `ibench micro`.
pub fn execute(args: &MicroArgs) -> Result<()> {
    if args.list {
        let width = BENCHMARKS.iter().map(|b| b.name.len()).max().unwrap_or(0);
        for b in BENCHMARKS {
            println!("{:<width$}  {}", b.name, b.about);
        }
        return Ok(());
    }
    let spec = args.to_spec()?;
    args.flags().launch(spec)
}

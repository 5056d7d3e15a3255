//! `ibench tpcc`: a TPC-C-like workload compatible with sysbench-tpcc (its tables, data and
//! transactions) against one target, at each client count of a list.

use anyhow::Result;
use clap::Args;

use super::flags::{ConditionArgs, OutputArgs, RunFlags, ServerArgs, TargetArgs, flag_name};
use crate::error::UsageError;
use crate::request::{Mix, RunSpec, TpccSpec, WorkloadSpec};

/// Flags of `ibench tpcc`.
#[derive(Debug, Args)]
pub struct TpccArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten)]
    pub conditions: ConditionArgs,

    /// Warehouses per table set (sysbench-tpcc's --scale).
    #[arg(long, value_name = "N", default_value_t = TpccSpec::default().warehouses)]
    pub warehouses: usize,
    /// Table sets (warehouse1, district1, ... warehouseN, ...), sysbench-tpcc's --tables;
    /// each transaction picks one at random.
    #[arg(long, value_name = "N", default_value_t = TpccSpec::default().tables)]
    pub tables: usize,
    /// Client counts (comma-separated); the transactions run once per count.
    #[arg(
        short,
        long,
        value_delimiter = ',',
        value_name = "N,N...",
        default_value = "4"
    )]
    pub clients: Vec<usize>,
    /// Duration at each client count, seconds.
    #[arg(long, value_name = "SECS", default_value_t = TpccSpec::default().seconds)]
    pub seconds: u64,
    /// Seconds each client count runs before --seconds start, not counted.
    #[arg(long, value_name = "SECS", default_value_t = TpccSpec::default().warmup)]
    pub warmup: u64,
    /// The transaction mix: standard (TPC-C's minimum deck, 45/43/4/4/4) or sysbench
    /// (sysbench-tpcc's 10/10/1/1/1 of 23).
    #[arg(long, value_name = "MIX", default_value = "standard", value_parser = parse_mix)]
    pub mix: Mix,
    /// Threads of the load, which share its parts (each warehouse's districts and stock,
    /// the items, in chunks) as sysbench-tpcc's prepare splits them over its --threads;
    /// default: the largest --clients.
    #[arg(long, value_name = "N")]
    pub load_threads: Option<usize>,
    /// Leave out sysbench-tpcc's foreign keys.
    #[arg(long)]
    pub no_foreign_keys: bool,
    /// Use the tables as they are (from an earlier `ibench tpcc --keep-data` run) instead of
    /// creating and loading them.
    #[arg(long)]
    pub no_prepare: bool,
    /// Seed of every random value (data and transactions).
    #[arg(long, value_name = "N", default_value_t = TpccSpec::default().seed)]
    pub seed: u64,
    /// Tries per transaction on deadlocks and serialization failures; 1 = no retry.
    #[arg(long, value_name = "N", default_value_t = TpccSpec::default().max_tries)]
    pub max_tries: u32,
    /// Reconnects per client after a lost connection; 0 = fail at once.
    #[arg(long, value_name = "N", default_value_t = TpccSpec::default().max_reconnects)]
    pub max_reconnects: u32,
    /// A step fails when its retried transactions exceed this percent of its transactions
    /// (by default none does: conflicts are TPC-C's own, counted per transaction type).
    #[arg(long, value_name = "PCT", default_value_t = TpccSpec::default().max_error_pct)]
    pub max_error_rate: f64,
    /// Transactions per second over all clients, each client's on a schedule (response times
    /// count from when each was due: no coordinated omission); default: as fast as they go.
    #[arg(long, value_name = "TPS")]
    pub rate: Option<u64>,
    /// Skip the DBMS maintenance pause between the load and the transactions.
    #[arg(long)]
    pub no_maintenance: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub dataset: super::dataset::DatasetArgs,
}

/// A mix `--mix` takes, or a one-line error naming those it takes.
fn parse_mix(name: &str) -> Result<Mix, String> {
    Mix::parse(name).ok_or_else(|| "expected standard or sysbench".to_string())
}

impl TpccArgs {
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
        let tpcc = TpccSpec {
            warehouses: self.warehouses,
            tables: self.tables,
            clients: self.clients.clone(),
            seconds: self.seconds,
            warmup: self.warmup,
            prepare: !self.no_prepare,
            load_threads: self
                .load_threads
                .unwrap_or_else(|| self.clients.iter().copied().max().unwrap_or(1)),
            foreign_keys: !self.no_foreign_keys,
            mix: self.mix,
            seed: self.seed,
            max_tries: self.max_tries,
            max_reconnects: self.max_reconnects,
            max_error_pct: self.max_error_rate,
            rate: self.rate,
            load_only: false,
        };
        tpcc.validate(flag_name)?;
        if !tpcc.prepare && !self.target.names_a_database() {
            return Err(UsageError::new(
                "--no-prepare uses existing tables: give --path or --url to find them",
            ));
        }
        if self.server.read_from == Some(crate::request::ReadFrom::Replicas) {
            return Err(UsageError::new(format!(
                "--read-from replicas: {}",
                crate::request::server::TPCC_READS_ON_PRIMARY
            )));
        }
        let spec = self
            .flags()
            .run_spec(WorkloadSpec::Tpcc(tpcc), !self.no_maintenance)?;
        self.dataset.apply(spec)
    }
}

/// Runs `ibench tpcc`.
pub fn execute(args: &TpccArgs) -> Result<()> {
    let spec = args.to_spec()?;
    args.flags().launch(spec)
}

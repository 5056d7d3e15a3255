//! `ibench run`: flags → [`RunSpec`] → [`crate::launch::run_to_out`].

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::flags::{ConditionArgs, OutputArgs, RunFlags, ServerArgs, TargetArgs, flag_name};
use crate::error::UsageError;
use crate::request::{IndexDdl, InsertBenchmarkSpec, RunSpec, Step, TableMode, WorkloadSpec};

/// Flags of `ibench run`. Defaults give the full step sequence in about 1-2 minutes on a 2-core
/// machine.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub server: ServerArgs,

    #[command(flatten)]
    pub conditions: ConditionArgs,

    #[command(flatten)]
    pub workload: InsertBenchmarkArgs,
    /// Multiply every row count (l0/l1/l2 rows) and the query-step seconds by X, as
    /// experiments' --scale does: 0.1 gives a quick run.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub scale: f64,
    /// Skip the DBMS maintenance pause between the load and the query steps.
    #[arg(long)]
    pub no_maintenance: bool,

    #[command(flatten)]
    pub output: OutputArgs,

    #[command(flatten)]
    pub dataset: super::dataset::DatasetArgs,

    #[command(flatten)]
    pub group: GroupArgs,
}

/// Most hosts in a group.
const MAX_HOSTS: usize = 64;

/// Flags of a run across several client hosts (docs/multihost.md).
#[derive(Debug, Args)]
pub struct GroupArgs {
    /// Run as one host of group NAME: every host runs the same command with the same NAME
    /// against one server; they meet in the PostgreSQL store of --results, split the clients,
    /// start every step together and make one run named NAME.
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    /// Hosts in the group (with --group).
    #[arg(long, value_name = "N")]
    pub hosts: Option<usize>,
    /// Seconds to wait for every host of the group to join.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub join_timeout: u64,
    /// Seconds a host may be late to a barrier after this one, beyond what the work before it
    /// took this host (the step itself; for the pause, the steps before it), before the group
    /// fails naming it as stopped or hung.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub host_timeout: u64,
    /// Resume group NAME, which failed (a host killed, hung or failing): every host runs the
    /// same command with --resume; the steps every host completed are kept, and the run goes
    /// on from the first step they did not all complete, on the tables as they are.
    #[arg(long)]
    pub resume: bool,
}

impl GroupArgs {
    /// The group options, checked against the rest of the run's flags.
    fn options(
        &self,
        spec: &RunSpec,
        output: &OutputArgs,
    ) -> Result<Option<crate::group::GroupOptions>, UsageError> {
        if let Some(hosts) = self.hosts
            && !(1..=MAX_HOSTS).contains(&hosts)
        {
            return Err(UsageError::new(format!(
                "--hosts {hosts} is out of range: a group (--group NAME) has 1 to {MAX_HOSTS} \
                 hosts, each running this same command"
            )));
        }
        let Some(name) = &self.group else {
            if self.hosts.is_some() {
                return Err(UsageError::new("--hosts needs --group NAME"));
            }
            if self.resume {
                return Err(UsageError::new(
                    "--resume needs --group NAME (the group to resume)",
                ));
            }
            return Ok(None);
        };
        if !crate::group::valid_name(name) {
            return Err(UsageError::new(format!(
                "--group {name:?} is not a group name: 1-64 letters, digits, '.', '_' or '-'"
            )));
        }
        let hosts = self
            .hosts
            .ok_or_else(|| UsageError::new("--group needs --hosts N (the hosts in the group)"))?;
        let store = match &output.results {
            Some(p) if crate::results::store::is_postgres_url(p) => p.clone(),
            _ => {
                return Err(UsageError::new(
                    "--group needs --results postgres://...: the hosts meet in a PostgreSQL \
                     results store they can all reach",
                ));
            }
        };
        let WorkloadSpec::InsertBenchmark(w) = &spec.workload else {
            return Err(UsageError::new("--group runs the Insert Benchmark"));
        };
        if hosts > w.clients {
            return Err(UsageError::new(format!(
                "--hosts {hosts} is out of range: 1 to {MAX_HOSTS}, and at most --clients ({})",
                w.clients
            )));
        }
        if w.table_mode != TableMode::PerClient {
            return Err(UsageError::new(
                "--group needs --table-mode per-client: each host owns its clients' tables, so \
                 no two hosts work on one queue",
            ));
        }
        if spec.server.is_some() || spec.target.kind.embedded() {
            return Err(UsageError::new(
                "--group runs every host against one server: give its --url (not --server, \
                 which would start one per host, nor an embedded DBMS)",
            ));
        }
        for (flag, secs) in [
            ("--join-timeout", self.join_timeout),
            ("--host-timeout", self.host_timeout),
        ] {
            if !(1..=86_400).contains(&secs) {
                return Err(UsageError::new(format!(
                    "{flag} {secs} is out of range: 1 to 86400 seconds"
                )));
            }
        }
        Ok(Some(crate::group::GroupOptions {
            name: name.clone(),
            hosts,
            join_timeout: std::time::Duration::from_secs(self.join_timeout),
            host_timeout: std::time::Duration::from_secs(self.host_timeout),
            resume: self.resume,
            store,
        }))
    }
}

/// The Insert Benchmark's flags; serialized by the spec's field names, they are the
/// command line's layer of [`crate::request::assemble`].
#[derive(Debug, Args, Serialize)]
pub struct InsertBenchmarkArgs {
    /// Number of clients (each: a busy connection, plus inserter and deleter where the step has them).
    #[arg(short, long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().clients)]
    pub clients: usize,
    /// Steps to run, in order (comma-separated): l.i0, l.x, l.i1, l.i2, qrN, qpN.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "STEPS",
        default_value = "l.i0,l.x,l.i1,l.i2,qr100,qp100,qr500,qp500,qr1000,qp1000"
    )]
    pub steps: Vec<Step>,
    /// Rows per client loaded by l.i0.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().l0_rows)]
    pub l0_rows: u64,
    /// Rows per client inserted (and deleted) by l.i1.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().l1_rows)]
    pub l1_rows: u64,
    /// Rows per client inserted (and deleted) by l.i2 [default: l1-rows / 4].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_rows: Option<u64>,
    /// Rows per INSERT in l.i0.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().l0_batch)]
    pub l0_batch: usize,
    /// Rows per INSERT and DELETE in l.i1.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().l1_batch)]
    pub l1_batch: usize,
    /// Rows per INSERT and DELETE in l.i2.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().l2_batch)]
    pub l2_batch: usize,
    /// Rows per INSERT and DELETE of the background writer in query steps.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().writer_batch)]
    pub writer_batch: usize,
    /// Concurrent scanners of the scan step, a connection each, the tables split among them
    /// (every one scans every table when there are fewer tables) [default: --clients].
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan_clients: Option<usize>,
    /// Duration of each query step (qrN, qpN), seconds.
    #[arg(long, value_name = "SECS", default_value_t = InsertBenchmarkSpec::default().query_seconds)]
    pub query_seconds: u64,
    /// Seconds each of l.i1, l.i2, qrN and qpN runs before its measured part, not counted
    /// (l.i1 and l.i2: the warm-up's rows count towards their rows, not their rates).
    #[arg(long, value_name = "SECS", default_value_t = InsertBenchmarkSpec::default().warmup)]
    pub warmup: u64,
    /// Do not delete: tables grow instead of staying a constant-size queue.
    #[arg(long)]
    #[serde(rename = "deletes", serialize_with = "negated")]
    pub no_deletes: bool,
    /// Secondary indexes created by l.x (0-3: marketsegment, registersegment, pdc).
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().secondary_indexes)]
    pub secondary_indexes: usize,
    /// One table per client, or one table shared by all clients.
    #[arg(long, value_enum, default_value = "per-client")]
    pub table_mode: TableMode,
    /// Table name prefix (tables are <prefix>1, <prefix>2, ...).
    #[arg(long, value_name = "NAME", default_value = "pi")]
    pub table_prefix: String,
    /// l.x: one statement per index, or all indexes in one statement where the DBMS allows.
    #[arg(long, value_enum, default_value = "separate")]
    pub index_ddl: IndexDdl,
    /// Minimum length of the data column.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().data_min)]
    pub data_min: usize,
    /// Maximum length of the data column.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().data_max)]
    pub data_max: usize,
    /// Percent of each data value that is random; the rest is padding (compressible).
    #[arg(long, value_name = "PCT", default_value_t = InsertBenchmarkSpec::default().data_random_pct)]
    pub data_random_pct: u8,
    /// cashregisterid is uniform in [0, N).
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().cashregisters)]
    pub cashregisters: u32,
    /// customerid is uniform in [0, N).
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().customers)]
    pub customers: u32,
    /// productid is uniform in [0, N).
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().products)]
    pub products: u32,
    /// price is uniform in [0, X).
    #[arg(long, value_name = "X", default_value_t = InsertBenchmarkSpec::default().max_price)]
    pub max_price: f64,
    /// Seed of all generated values; the same seed gives the same rows.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().seed)]
    pub seed: u64,
    /// Tries per statement on transient DBMS errors (deadlock, serialization failure, lock
    /// wait timeout, busy, too many connections), as pgbench --max-tries; 1 = no retry.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().max_tries)]
    pub max_tries: u32,
    /// Reconnects per client thread after a lost connection; 0 = fail at once.
    #[arg(long, value_name = "N", default_value_t = InsertBenchmarkSpec::default().max_reconnects)]
    pub max_reconnects: u32,
    /// A step fails when its retried statements exceed this percent of its statements.
    #[arg(long, value_name = "PCT", default_value_t = InsertBenchmarkSpec::default().max_error_pct)]
    #[serde(rename = "max_error_pct")]
    pub max_error_rate: f64,
}

fn negated<S: serde::Serializer>(v: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(!v)
}

impl RunArgs {
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
        if !(self.scale.is_finite() && self.scale > 0.0 && self.scale <= 1000.0) {
            return Err(UsageError::new(format!(
                "--scale {} is out of range: expected > 0 and <= 1000",
                self.scale
            )));
        }
        // JSON has no NaN or infinity: serialized into the flags' layer they would become
        // null, and the defaults would silently take their place.
        for (flag, v) in [
            ("--max-price", self.workload.max_price),
            ("--max-error-rate", self.workload.max_error_rate),
        ] {
            if !v.is_finite() {
                return Err(UsageError::new(format!(
                    "{flag} {v} is not a number: expected a finite number"
                )));
            }
        }
        let layer = serde_json::to_value(&self.workload)
            .map_err(|e| UsageError::new(format!("invalid flags: {e}")))?;
        let workload: InsertBenchmarkSpec = crate::request::assemble(&[layer], self.scale)
            .map_err(|e| UsageError::new(e.message(flag_name)))?;
        workload.validate(flag_name)?;
        if !self.target.names_a_database()
            && self.dataset.from_dataset.is_none()
            && workload.steps.first() != Some(&Step::LoadInitial)
        {
            return Err(UsageError::new(format!(
                "--steps starts with {} but no --path was given: steps after l.i0 need an \
                 existing database",
                workload.steps[0]
            )));
        }
        let combined = workload.index_ddl == IndexDdl::Combined;
        let spec = self.flags().run_spec(
            WorkloadSpec::InsertBenchmark(workload),
            !self.no_maintenance,
        )?;
        let spec = self.dataset.apply(spec)?;
        if combined && !spec.target.kind.combined_index_ddl(&spec.target.params) {
            return Err(UsageError::new(format!(
                "--index-ddl combined is not supported by {}: it creates one index per statement",
                spec.target.kind
            )));
        }
        if let (Some(galera), WorkloadSpec::InsertBenchmark(w)) = (
            spec.server.as_ref().and_then(|s| s.galera.as_ref()),
            &spec.workload,
        ) {
            use crate::server::replicas::{ClusterNames, galera_workload};
            galera_workload(galera, w, ClusterNames::FLAGS).map_err(UsageError::new)?;
        }
        Ok(spec)
    }
}

/// Runs `ibench run`.
pub fn execute(args: &RunArgs) -> Result<()> {
    let spec = args.to_spec()?;
    let mut options = args.flags().run_options(&spec)?;
    options.group = args.group.options(&spec, &args.output)?;
    crate::launch::run_to_out(spec, args.output.results.as_deref(), options)
}

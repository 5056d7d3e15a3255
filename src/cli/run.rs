//! `ibench run`: flags → [`RunSpec`] → run → terminal summary and JSON results.

use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::Utc;
use clap::Args;

use super::target::{OutputArgs, TargetArgs};
use crate::dbms::url::ServerUrl;
use crate::dbms::{self, DbmsKind, TargetSpec};
use crate::error::UsageError;
use crate::metrics::proc::{self, Watch};
use crate::report::terminal;
use crate::results::environment;
use crate::results::file::ResultsFile;
use crate::results::model::ManagedServerInfo;
use crate::results::model::{ExperimentTag, RunResult, RunStatus, SCHEMA_VERSION};
use crate::runner::client::INTERRUPTED;
use crate::runner::{self, CostWatch, DisplayOptions};
use crate::server::{ManagedServer, ServerKind, ServerSpec};
use crate::spec::{IndexDdl, InsertBenchmarkSpec, RunSpec, Step, TableMode, WorkloadSpec};
use crate::workload::Workload;
use crate::workload::insert_benchmark::InsertBenchmark;
use crate::workload::micro::Micro;

/// Flags of `ibench run`. Defaults give the full step sequence in about 1-2 minutes on a 2-core
/// machine.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,

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
    /// Duration of each query step (qrN, qpN), seconds.
    #[arg(long, value_name = "SECS", default_value_t = InsertBenchmarkSpec::default().query_seconds)]
    pub query_seconds: u64,
    /// Do not delete: tables grow instead of staying a constant-size queue.
    #[arg(long)]
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
    pub max_error_rate: f64,
    /// Skip the DBMS maintenance pause between the load and the query steps.
    #[arg(long)]
    pub no_maintenance: bool,

    #[command(flatten)]
    pub output: OutputArgs,
}

impl RunArgs {
    fn workload(&self) -> InsertBenchmarkSpec {
        InsertBenchmarkSpec {
            clients: self.clients,
            steps: self.steps.clone(),
            l0_rows: self.l0_rows,
            l1_rows: self.l1_rows,
            l2_rows: self.l2_rows.unwrap_or((self.l1_rows / 4).max(1)),
            l0_batch: self.l0_batch,
            l1_batch: self.l1_batch,
            l2_batch: self.l2_batch,
            writer_batch: self.writer_batch,
            query_seconds: self.query_seconds,
            deletes: !self.no_deletes,
            secondary_indexes: self.secondary_indexes,
            table_mode: self.table_mode,
            table_prefix: self.table_prefix.clone(),
            index_ddl: self.index_ddl,
            data_min: self.data_min,
            data_max: self.data_max,
            data_random_pct: self.data_random_pct,
            cashregisters: self.cashregisters,
            customers: self.customers,
            products: self.products,
            max_price: self.max_price,
            seed: self.seed,
            max_tries: self.max_tries,
            max_reconnects: self.max_reconnects,
            max_error_pct: self.max_error_rate,
        }
    }

    /// Builds and validates the run's spec. `scratch_path` is the database file to use when
    /// --path is not given.
    pub fn to_spec(&self, scratch_path: PathBuf) -> Result<RunSpec, UsageError> {
        let workload = self.workload();
        workload.validate()?;
        if self.target.path.is_none()
            && self.target.url.is_none()
            && workload.steps.first() != Some(&Step::LoadInitial)
        {
            return Err(UsageError::new(format!(
                "--steps starts with {} but no --path was given: steps after l.i0 need an \
                 existing database",
                workload.steps[0]
            )));
        }
        let kind = self.target.dbms_kind()?;
        if self.index_ddl == IndexDdl::Combined && kind != DbmsKind::Mysql {
            return Err(UsageError::new(format!(
                "--index-ddl combined is not supported by {}: it creates one index per statement",
                kind.name()
            )));
        }
        self.target.run_spec(
            &self.output,
            scratch_path,
            WorkloadSpec::InsertBenchmark(workload),
            !self.no_maintenance,
        )
    }
}

/// Space always wanted in --out for results, bytes.
const RESULTS_SPACE: u64 = 16 << 20;

/// Checks, before anything starts, that --out has room for the results and, when the database
/// is created there (scratch SQLite, managed server), for the database too.
pub fn check_free_space(spec: &RunSpec, out: &std::path::Path) -> Result<(), UsageError> {
    let Ok(st) = nix::sys::statvfs::statvfs(out) else {
        return Ok(()); // cannot tell: the run finds out
    };
    let free = st.blocks_available().saturating_mul(st.fragment_size());
    let db_in_out = spec.scratch_database || spec.server.is_some();
    let needed = RESULTS_SPACE
        + if db_in_out {
            spec.workload.estimated_db_bytes()
        } else {
            0
        };
    if free < needed {
        return Err(UsageError::new(format!(
            "not enough free space in --out {}: {} MiB free, about {} MiB needed{} (free space, \
             choose another --out, or lower --l0-rows / --clients)",
            out.display(),
            free >> 20,
            needed >> 20,
            if db_in_out {
                " for the database and results"
            } else {
                " for results"
            }
        )));
    }
    Ok(())
}

/// Runs `ibench run`.
pub fn execute(args: &RunArgs) -> Result<()> {
    launch(&args.target, &args.output, &|scratch| args.to_spec(scratch))
}

/// Runs the spec `make_spec` builds (given the scratch SQLite file to use when the target
/// names none), saving results under `output`: checks the flags before touching the file
/// system, reserves the results file, runs, and removes a scratch database afterwards.
pub fn launch(
    target: &TargetArgs,
    output: &OutputArgs,
    make_spec: &dyn Fn(PathBuf) -> Result<RunSpec, UsageError>,
) -> Result<()> {
    // Validate flags before touching the file system.
    let checked = make_spec(PathBuf::new())?;
    let out = &output.out;
    fs::create_dir_all(out)
        .map_err(|e| UsageError::new(format!("cannot create --out {}: {e}", out.display())))?;
    check_free_space(&checked, out)?;
    let stem = format!(
        "ibench-{}-{}",
        Utc::now().format("%Y%m%dT%H%M%S"),
        target.dbms_kind()?.name()
    );
    let store_path = output
        .results
        .clone()
        .unwrap_or_else(|| out.join("results.db"));
    let store = crate::results::store::Store::open(&store_path)?;
    let file = ResultsFile::create(out, &stem)
        .map_err(|e| {
            UsageError::new(format!(
                "cannot write results to --out {}: {e:#}",
                out.display()
            ))
        })?
        .with_store(store);
    let scratch_dir = file.path().with_extension("data");
    let spec = make_spec(scratch_dir.join("ibench.sqlite"))?;
    if spec.scratch_database {
        fs::create_dir_all(&scratch_dir)
            .with_context(|| format!("cannot create {}", scratch_dir.display()))?;
    }
    install_interrupt_handler();
    let options = RunOptions {
        quiet: output.quiet,
        summary: true,
        ..RunOptions::default()
    };
    let external_server =
        spec.server.is_none() && !matches!(spec.target, TargetSpec::Sqlite { .. });
    let options = if external_server {
        target.external_pid().map(|server_pid| RunOptions {
            server_pid,
            data_dir: target.data_dir.clone(),
            ..options
        })
    } else {
        Ok(options)
    };
    let result = options.and_then(|options| run_prepared(&spec, &file, &options).1);
    if spec.scratch_database && !spec.keep_data {
        let _ = fs::remove_dir_all(&scratch_dir);
    }
    file.discard_if_unsaved();
    result
}

/// How to run a prepared [`RunSpec`], beyond the spec itself.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// No progress display.
    pub quiet: bool,
    /// Print the terminal summary and the results path at the end.
    pub summary: bool,
    /// Process id of an external server (targets by URL), for its cost figures.
    pub server_pid: Option<u32>,
    /// Data directory of an external server, for its size and device.
    pub data_dir: Option<PathBuf>,
    /// The experiment cell the run belongs to, recorded with it.
    pub experiment: Option<ExperimentTag>,
}

/// Runs `spec`, saving to `file` after every step: on a managed server started for it (and
/// stopped after), or on the target as given. Returns the run as last saved (`None` when it
/// never started: the DBMS could not be opened, the server did not start) and the outcome.
pub fn run_prepared(
    spec: &RunSpec,
    file: &ResultsFile,
    options: &RunOptions,
) -> (Option<RunResult>, Result<()>) {
    match &spec.server {
        None => match external_watch(spec, options) {
            Ok(watch) => run_with(spec, file, options, None, watch),
            Err(e) => (None, Err(e)),
        },
        Some(server_spec) => run_managed(spec.clone(), server_spec, file, options),
    }
}

/// Starts the managed server, runs against it, stops it, and keeps its log beside the results.
fn run_managed(
    mut spec: RunSpec,
    server_spec: &ServerSpec,
    file: &ResultsFile,
    options: &RunOptions,
) -> (Option<RunResult>, Result<()>) {
    let dir = file.path().with_extension("server");
    let kept_log = file.path().with_extension("server.log");
    if !options.quiet {
        eprintln!("starting {} in {}", server_spec.kind.name(), dir.display());
    }
    let started = ManagedServer::start(server_spec, &dir);
    let mut server = match started {
        Ok(s) => s,
        Err(e) => {
            let _ = fs::copy(dir.join("server.log"), &kept_log);
            if !spec.keep_data {
                let _ = fs::remove_dir_all(&dir);
            }
            return (
                None,
                Err(e.context(format!(
                    "{} server failed to start (log kept at {})",
                    server_spec.kind.name(),
                    kept_log.display()
                ))),
            );
        }
    };
    let url = match ServerUrl::parse(&server.url, "") {
        Ok(url) => url,
        Err(e) => return (None, Err(e.into())),
    };
    spec.target = match server_spec.kind {
        ServerKind::Postgres => TargetSpec::Postgres { url },
        ServerKind::Mariadb => TargetSpec::Mysql {
            url,
            engine: server_spec.engine,
        },
    };
    let info = ManagedServerInfo {
        pid: server.pid(),
        binary: server.binary.display().to_string(),
        preload: server.preload.as_ref().map(|p| p.display().to_string()),
        log: kept_log.display().to_string(),
        kept: server.keep(),
    };
    let data = dir.join("data");
    let watch = (
        Watch {
            dbms_pid: server.pid(),
            embedded: false,
            device: proc::device_of(&data),
            data_paths: vec![data],
        },
        format!(
            "managed {} server, pid {} and its children",
            server_spec.kind.name(),
            server.pid().unwrap_or(0)
        ),
    );
    let (run, result) = run_with(&spec, file, options, Some(info), watch);
    let stopped = if server.keep() {
        let pid = server.detach();
        eprintln!(
            "server left running: {} (pid {}), data in {}; stop it with kill {}",
            server.url,
            pid.unwrap_or(0),
            dir.display(),
            pid.unwrap_or(0)
        );
        Ok(())
    } else {
        server.stop()
    };
    let _ = fs::copy(&server.log, &kept_log);
    if !server.keep() && !spec.keep_data {
        let _ = fs::remove_dir_all(&dir);
    }
    (run, result.and(stopped))
}

/// What to sample for a target that is not a managed server: ibench itself for SQLite, the
/// given pid for an external server, or nothing (host figures only).
fn external_watch(spec: &RunSpec, options: &RunOptions) -> Result<(Watch, String)> {
    if let TargetSpec::Sqlite { path, .. } = &spec.target {
        let files = ["", "-wal", "-shm"]
            .iter()
            .map(|suffix| PathBuf::from(format!("{}{suffix}", path.display())))
            .collect();
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        return Ok((
            Watch {
                dbms_pid: None,
                embedded: true,
                device: proc::device_of(dir),
                data_paths: files,
            },
            "embedded: SQLite runs inside ibench, so the DBMS figures are ibench's own process"
                .to_string(),
        ));
    }
    let pid = options.server_pid;
    if let Some(pid) = pid
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
    {
        return Err(
            UsageError::new(format!("--server-pid {pid}: no such process on this host")).into(),
        );
    }
    let source = match pid {
        Some(pid) => format!("external server, pid {pid} and its children"),
        None => "unknown: no DBMS process is known for an external server (give --server-pid or \
                 --server-pid-file); DBMS figures are not reported, host figures are"
            .to_string(),
    };
    let device = options.data_dir.as_deref().and_then(proc::device_of);
    Ok((
        Watch {
            dbms_pid: pid,
            embedded: false,
            device,
            data_paths: options.data_dir.iter().cloned().collect(),
        },
        source,
    ))
}

fn run_with(
    spec: &RunSpec,
    file: &ResultsFile,
    options: &RunOptions,
    managed_server: Option<ManagedServerInfo>,
    watch: (Watch, String),
) -> (Option<RunResult>, Result<()>) {
    let mut run = None;
    let result = run_into(spec, file, options, managed_server, watch, &mut run);
    (run, result)
}

fn run_into(
    spec: &RunSpec,
    file: &ResultsFile,
    options: &RunOptions,
    managed_server: Option<ManagedServerInfo>,
    (watch, dbms_source): (Watch, String),
    slot: &mut Option<RunResult>,
) -> Result<()> {
    let db: Arc<dyn dbms::Dbms> = Arc::from(dbms::open_with(&spec.target, spec.statements)?);
    let environment = environment::collect(db.as_ref())?;
    let run_id = file
        .path()
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut run = RunResult {
        schema_version: SCHEMA_VERSION,
        run_id,
        status: RunStatus::Running,
        error: None,
        started_at: Utc::now(),
        finished_at: None,
        config: spec.clone(),
        environment,
        managed_server,
        maintenance: Vec::new(),
        steps: Vec::new(),
        experiment: options.experiment.clone(),
    };
    let mut workload: Box<dyn Workload> = match &spec.workload {
        WorkloadSpec::InsertBenchmark(w) => {
            Box::new(InsertBenchmark::new(w.clone(), Arc::clone(&db)))
        }
        WorkloadSpec::Micro(m) => Box::new(Micro::new(m.clone(), Arc::clone(&db))),
    };
    let display = DisplayOptions {
        quiet: options.quiet,
        report_interval: Duration::from_secs(spec.report_interval_s),
    };
    let costs = CostWatch {
        watch,
        dbms: Arc::clone(&db),
        dbms_source,
    };
    let outcome = runner::run_steps(
        workload.as_mut(),
        spec.maintenance,
        &mut run,
        file,
        &display,
        Some(&costs),
    );
    if options.summary {
        if !run.steps.is_empty() {
            crate::output::stdout::print_or_drop(&terminal::summary(&run));
        }
        if file.is_saved() {
            crate::output::stdout::print_or_drop(&format!(
                "\nresults: {}\n",
                file.path().display()
            ));
        }
    }
    *slot = Some(run);
    outcome
}

/// First SIGINT/SIGTERM: stop the steps and save. Second: exit at once (results on disk are
/// always complete documents, since they are written by rename). The exit code is 128 + the
/// signal: 130 for SIGINT, 143 for SIGTERM.
pub fn install_interrupt_handler() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                std::process::exit(128 + sig);
            }
            crate::runner::client::INTERRUPT_SIGNAL.store(sig, Ordering::SeqCst);
        }
    });
}

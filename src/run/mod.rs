//! Running one [`RunSpec`]: the use case behind `ibench run`, `ibench micro` and every cell of
//! an experiment. It checks what can be checked before anything starts, reserves the results
//! file, starts a managed server when the spec asks for one, runs the workload's steps
//! (`steps.rs`) saving after each, prints the summary, and cleans up what it created.
//!
//! * `managed.rs` — a run on a managed server.
//! * `watch.rs` — which processes, files and device a run's cost is read from.
//! * `steps.rs` — the steps in order, with the maintenance pause.

pub mod group;
mod managed;
mod steps;
mod watch;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::Utc;

use crate::dbms::{self, Capability};
use crate::error::UsageError;
use crate::metrics::proc::Watch;
use crate::metrics::profile::Profiler;
use crate::report::terminal;
use crate::results::environment;
use crate::results::file::ResultsFile;
use crate::results::model::{
    ExperimentTag, ManagedServerInfo, RunResult, RunStatus, SCHEMA_VERSION,
};
use crate::runner::client::ClientThreads;
use crate::runner::{CostWatch, DisplayOptions};
use crate::spec::{RunSpec, WorkloadSpec};
use crate::workload::insert_benchmark::InsertBenchmark;
use crate::workload::micro::Micro;
use crate::workload::{ForeignTables, Workload};

/// How to run a [`RunSpec`], beyond the spec itself.
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
    /// Price of the host per hour (`--cost-per-hour`), recorded with the run.
    pub cost_per_hour: Option<f64>,
    /// `--profile`: a flame graph of the DBMS's processes per step, beside the results.
    pub profile: bool,
    /// This run is one host's part of a group (`--group`).
    pub group: Option<group::GroupOptions>,
}

/// Space always wanted in the output directory for results, bytes.
const RESULTS_SPACE: u64 = 16 << 20;

/// The operation set `workload` needs from the DBMS's connections.
pub fn capability(workload: &WorkloadSpec) -> Capability {
    match workload {
        WorkloadSpec::InsertBenchmark(_) => Capability::InsertBenchmark,
        WorkloadSpec::Micro(_) => Capability::Micro,
    }
}

/// Checks, before anything starts, that the target can run the workload.
pub fn check_capability(spec: &RunSpec) -> Result<()> {
    let needed = capability(&spec.workload);
    if spec.target.kind.can(needed) {
        Ok(())
    } else {
        Err(spec.target.kind.lacks(needed))
    }
}

/// Checks, before anything starts, that the output directory `out` can be written and has
/// room for the results and, when the database is created there (scratch database, managed
/// server), for the database too.
pub fn check_output(spec: &RunSpec, out: &Path) -> Result<(), UsageError> {
    crate::safe_fs::check_dir(out, "--out")?;
    let probe = crate::safe_fs::temp_path(&out.join("ibench-write-test"));
    if let Err(e) = crate::safe_fs::create_new(&probe, 0o600) {
        return Err(UsageError::new(format!(
            "cannot write to --out {}: {e}",
            out.display()
        )));
    }
    let _ = fs::remove_file(&probe);
    let Ok(st) = nix::sys::statvfs::statvfs(out) else {
        return Ok(()); // cannot tell: the run finds out
    };
    let free = st.blocks_available().saturating_mul(st.fragment_size());
    let data_root = spec.server.as_ref().and_then(|s| s.data_root.as_deref());
    if let Some(root) = data_root
        && let Ok(st) = nix::sys::statvfs::statvfs(root)
    {
        let free = st.blocks_available().saturating_mul(st.fragment_size());
        let needed = spec.workload.estimated_db_bytes();
        if free < needed {
            return Err(UsageError::new(format!(
                "not enough free space in the data root {}: {} MiB free, about {} MiB needed \
                 for the database",
                root.display(),
                free >> 20,
                needed >> 20
            )));
        }
    }
    let db_in_out = spec.scratch_database || (spec.server.is_some() && data_root.is_none());
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

/// Runs `spec` as `ibench run` and `ibench micro` do: checks the output directory, reserves
/// the results file there (and stores the run in the results database `store`, default
/// OUT/results.db), runs, prints the summary, and removes a scratch database afterwards.
pub fn launch(mut spec: RunSpec, store: Option<&Path>, options: RunOptions) -> Result<()> {
    check_capability(&spec)?;
    let out = spec.out_dir.clone();
    fs::create_dir_all(&out)
        .map_err(|e| UsageError::new(format!("cannot create --out {}: {e}", out.display())))?;
    check_output(&spec, &out)?;
    let kind = spec.target.kind;
    let stem = format!(
        "ibench-{}-{}",
        Utc::now().format("%Y%m%dT%H%M%S"),
        kind.name()
    );
    let store_path = store
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out.join("results.db"));
    let store = crate::results::store::Store::open(&store_path)?;
    // Runs an earlier ibench left `running` when it was killed: marked abandoned, their
    // scratch data removed.
    crate::results::abandoned::sweep(&out, &store_path);
    let file = ResultsFile::create(&out, &stem).map_err(|e| {
        UsageError::new(format!(
            "cannot write results to --out {}: {e:#}",
            out.display()
        ))
    })?;
    // A group's host leaves its part in the group's tables; the merged run is the store's.
    let file = if options.group.is_some() {
        file
    } else {
        file.with_store(store)
    };
    let scratch_dir = file.path().with_extension("data");
    if spec.scratch_database {
        crate::safe_fs::create_dir(&scratch_dir)
            .with_context(|| format!("cannot create {}", scratch_dir.display()))?;
        spec.target.path = Some(scratch_dir.join(format!("ibench.{}", kind.name())));
    }
    crate::interrupt::install_handler();
    let options = RunOptions {
        summary: true,
        ..options
    };
    let result = run_prepared(&spec, &file, &options).1;
    if spec.scratch_database && !spec.keep_data {
        let _ = fs::remove_dir_all(&scratch_dir);
    }
    file.discard_if_unsaved();
    result
}

/// Runs `spec`, saving to `file` after every step: on a managed server started for it (and
/// stopped after), or on the target as given. Returns the run as last saved (`None` when it
/// never started: the DBMS could not be opened, the server did not start) and the outcome.
pub fn run_prepared(
    spec: &RunSpec,
    file: &ResultsFile,
    options: &RunOptions,
) -> (Option<RunResult>, Result<()>) {
    if let Err(e) = check_capability(spec) {
        return (None, Err(e));
    }
    match &spec.server {
        None => match watch::external(spec, options) {
            Ok(w) => run_with(spec, file, options, None, w),
            Err(e) => (None, Err(e)),
        },
        Some(server_spec) => managed::run(spec.clone(), server_spec, file, options),
    }
}

/// Runs `spec` on its target, sampling `watch` for each step's cost.
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

/// By default, a step's connections are multiplexed only when there are more than this many
/// per core: with fewer, a blocking thread per connection measured cheaper per query (on 2
/// cores, point selects: 4.1 against 7.9 us of client CPU at 4 connections, 4.4 against 5.0
/// at 8; 4.8 against 3.7 at 16, the multiplexed client ahead from there on;
/// docs/PERFORMANCE.md).
const DEFAULT_CONNECTIONS_PER_THREAD: usize = 4;

/// Threads for the clients of a step on `db`: `--client-threads`, or one per core used once a
/// step has more than [`DEFAULT_CONNECTIONS_PER_THREAD`] connections per core, for a DBMS
/// whose clients can be multiplexed, waiting through `--client-io` (io_uring where the kernel
/// allows it, else epoll); else 0 (a thread per client).
fn client_threads(spec: &RunSpec, db: &dyn dbms::Dbms) -> Result<ClientThreads> {
    if let Some(io) = spec.client_io.filter(|io| !io.available()) {
        return Err(UsageError::new(format!(
            "--client-io {}: this kernel does not let ibench use it (io_uring may be disabled \
             by the sysctl kernel.io_uring_disabled); use --client-io epoll",
            io.name()
        ))
        .into());
    }
    if !db.multiplexed_clients() {
        return Ok(ClientThreads::default());
    }
    let (threads, multiplex_above) = match spec.client_threads {
        Some(n) => (n, n),
        None => {
            let cores = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            (cores, cores * DEFAULT_CONNECTIONS_PER_THREAD)
        }
    };
    Ok(ClientThreads {
        threads,
        multiplex_above,
        io: spec
            .client_io
            .unwrap_or_else(crate::mux::Backend::default_here),
    })
}

/// On a server ibench did not start: refuses a run that would open more connections than
/// the server accepts, before anything starts (else clients fail mid-step with "too many
/// clients"). The run's own connection for counters and settings counts too.
fn check_connection_limit(spec: &RunSpec, db: &dyn dbms::Dbms) -> Result<()> {
    let Some(limit) = db.connection_limit()? else {
        return Ok(());
    };
    let needed = spec.workload.connections() as u64 + 1;
    if needed > limit {
        return Err(UsageError::new(format!(
            "the run opens up to {needed} connections but {} accepts {limit} \
             (max_connections less reserved ones): raise its max_connections or use fewer clients",
            db.location()
        ))
        .into());
    }
    Ok(())
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
    if spec.server.is_none() {
        check_connection_limit(spec, db.as_ref())?;
    }
    let mut environment = environment::collect(db.as_ref())?;
    environment.storage = watch
        .data_paths
        .iter()
        .find(|p| p.exists())
        .and_then(|p| crate::metrics::storage::storage_of(p));
    environment.cost_per_hour = options.cost_per_hour;
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
        group: None,
    };
    let mut member = match &options.group {
        Some(g) => Some(group::join(g, spec, &run, options.quiet)?),
        None => None,
    };
    run.group = member.as_ref().map(group::Member::info);
    let foreign = ForeignTables::new(spec.drop_existing, spec.write_existing);
    let mut workload: Box<dyn Workload> = match &spec.workload {
        WorkloadSpec::InsertBenchmark(w) => {
            let ib = InsertBenchmark::new(w.clone(), Arc::clone(&db), foreign);
            Box::new(match &member {
                Some(m) => ib.with_share(m.share()),
                None => ib,
            })
        }
        WorkloadSpec::Micro(m) => Box::new(Micro::new(m.clone(), Arc::clone(&db), foreign)?),
    };
    let display = DisplayOptions {
        quiet: options.quiet,
        report_interval: Duration::from_secs(spec.report_interval_s),
    };
    let costs = CostWatch {
        watch,
        dbms: Arc::clone(&db),
        dbms_source,
        profiler: options
            .profile
            .then(|| Profiler::new(file.path().with_extension("profiles"))),
    };
    let step_options = steps::StepOptions {
        pause: steps::Pause {
            enabled: spec.maintenance,
            change_settings: spec.server.is_some() || spec.allow_server_changes,
        },
        client_threads: client_threads(spec, db.as_ref())?,
    };
    let outcome = steps::run_steps_gated(
        workload.as_mut(),
        step_options,
        &mut run,
        file,
        &display,
        Some(&costs),
        member.as_mut().map(|m| m as &mut dyn steps::StepGate),
    );
    if options.summary {
        // A closed stdout does not stop the clean-up after the run (output::stdout).
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

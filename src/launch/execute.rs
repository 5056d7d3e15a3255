//! One run executed on what it was prepared on ([`super::prepare::Prepared`]): the DBMS
//! opened, the results document started, the workload built (this host's share of a group's
//! clients), its steps run and saved, the summary printed.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use chrono::Utc;

use super::RunOptions;
use super::prepare::Prepared;
use crate::dbms;
use crate::error::UsageError;
use crate::group::member::{self, Member};
use crate::metrics::profile::Profiler;
use crate::report::terminal;
use crate::request::{RunSpec, WorkloadSpec};
use crate::results::environment;
use crate::results::file::ResultsFile;
use crate::results::model::{RunResult, RunStatus, SCHEMA_VERSION};
use crate::runner::Workload;
use crate::runner::client::ClientThreads;
use crate::runner::duet_gate::DuetGate;
use crate::runner::steps;
use crate::runner::{CostWatch, DisplayOptions};
use crate::workload::ForeignTables;
use crate::workload::insert_benchmark::InsertBenchmark;
use crate::workload::micro::Micro;
use crate::workload::tpcc::Tpcc;

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

/// Runs `spec` on `prepared`: the run as far as it was recorded, and the outcome.
pub(super) fn execute(
    spec: &RunSpec,
    prepared: &Prepared,
    file: &ResultsFile,
    options: &RunOptions,
) -> (Option<RunResult>, Result<()>) {
    let mut run = None;
    let result = execute_into(spec, prepared, file, options, &mut run);
    (run, result)
}

fn execute_into(
    spec: &RunSpec,
    prepared: &Prepared,
    file: &ResultsFile,
    options: &RunOptions,
    slot: &mut Option<RunResult>,
) -> Result<()> {
    let resolved = &prepared.resolved;
    let db: Arc<dyn dbms::Dbms> =
        Arc::from(dbms::open_with(&resolved.target, resolved.statements)?);
    if spec.server.is_none() {
        check_connection_limit(spec, db.as_ref())?;
    }
    let mut run = new_run(spec, prepared, db.as_ref(), file, options)?;
    check_memory_limit(spec, &mut run);
    if let Some(dataset) = &prepared.dataset {
        dataset.check_version(&run.environment.dbms.version)?;
    }
    let mut member = match &options.group {
        Some(g) => Some(member::join(g, spec, &run, options.quiet)?),
        None => None,
    };
    run.group = member.as_ref().map(Member::info);
    let share = member.as_ref().map(Member::share);
    let mut workload = workload_for(spec, &db, share, options.experiment.is_some())?;
    let display = DisplayOptions {
        quiet: options.quiet,
        report_interval: Duration::from_secs(spec.report_interval_s),
    };
    let (watch, dbms_source) = prepared.watch.clone();
    let costs = CostWatch {
        watch,
        dbms: Arc::clone(&db),
        dbms_source,
        profiler: options
            .profile
            .then(|| Profiler::new(file.path().with_extension("profiles"))),
        sampling: !spec.no_sampling,
        nodes: cluster_nodes(spec, prepared),
    };
    let step_options = steps::StepOptions {
        pause: steps::MaintenancePolicy {
            enabled: spec.maintenance,
            change_settings: spec.server.is_some() || spec.allow_server_changes,
        },
        client_threads: client_threads(spec, db.as_ref())?,
        per_client_series: spec.per_client_series,
        os_cache: spec.resources.os_cache,
        cooldown: Duration::from_secs(spec.cooldown_s),
    };
    let _pinned = super::pin::clients(&spec.resources)?;
    let mut duet = options.duet.then_some(DuetGate);
    let gate = match member.as_mut() {
        Some(m) => Some(m as &mut dyn steps::StepGate),
        None => duet.as_mut().map(|d| d as &mut dyn steps::StepGate),
    };
    let outcome = steps::run_steps_gated(
        workload.as_mut(),
        step_options,
        &mut run,
        file,
        &display,
        Some(&costs),
        gate,
    );
    if options.summary {
        print_summary(&run, file);
    }
    *slot = Some(run);
    outcome
}

/// With a managed server and a memory limit: estimates what the server's settings (as it
/// reports them) let it take, records it, and says so in one `warning:` line, before the first
/// step, when that exceeds the limit (see `server::memory`).
fn check_memory_limit(spec: &RunSpec, run: &mut RunResult) {
    let (Some(server), Some(limit)) = (&spec.server, spec.resources.memory_limit) else {
        return;
    };
    let Some(managed) = run.managed_server.as_mut() else {
        return;
    };
    let (index_builds, tables) = match &spec.workload {
        WorkloadSpec::InsertBenchmark(w) => (w.table_count(), w.table_count()),
        WorkloadSpec::Micro(m) => (1, m.tables),
        WorkloadSpec::Tpcc(t) => (1, t.tables * 9),
    };
    let load = crate::server::memory::Load {
        connections: spec.workload.connections() as u64 + 1,
        index_builds: index_builds as u64,
        tables: tables as u64,
        servers: 1 + managed.replicas.len() as u64,
    };
    let family = server.kind.server_name();
    let settings = &run.environment.dbms.settings;
    let Some(estimate) = crate::server::memory::estimate(family, settings, load, limit) else {
        return;
    };
    if let Some(w) = crate::server::memory::warning(&estimate, family, settings, load) {
        eprintln!("warning: {w}");
    }
    managed.memory_estimate = Some(estimate);
}

/// The managed cluster's nodes to watch during the steps (none for a single server).
fn cluster_nodes(spec: &RunSpec, prepared: &Prepared) -> Option<crate::runner::nodes::NodeWatch> {
    let (server, info) = (spec.server.as_ref()?, prepared.managed.as_ref()?);
    let url = prepared.resolved.target.url.as_ref()?;
    let pids = &prepared.watch.0.more_pids;
    let rejoins = prepared.rejoins();
    let port = url.url().port()?;
    crate::runner::nodes::NodeWatch::of(server, info, port, rejoins, pids, url.password())
}

/// The results document of a run starting now on `db`: the request, what it resolved to,
/// the environment.
fn new_run(
    spec: &RunSpec,
    prepared: &Prepared,
    db: &dyn dbms::Dbms,
    file: &ResultsFile,
    options: &RunOptions,
) -> Result<RunResult> {
    let mut environment = environment::collect(db)?;
    environment.storage = prepared
        .watch
        .0
        .data_paths
        .iter()
        .find(|p| p.exists())
        .and_then(|p| crate::metrics::storage::storage_of(p));
    environment.cost_per_hour = options.cost_per_hour;
    let dir = file.path().parent().unwrap_or(std::path::Path::new("."));
    environment.host_features = crate::doctor::per_run(dir);
    environment.canary = spec.canary.then(|| crate::results::canary::Canary {
        before: crate::metrics::canary::probe(dir),
        after: None,
    });
    let run_id = file
        .path()
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(RunResult {
        schema_version: SCHEMA_VERSION,
        run_id,
        status: RunStatus::Running,
        error: None,
        started_at: Utc::now(),
        finished_at: None,
        config: spec.clone(),
        resolved: Some(prepared.resolved.clone()),
        environment,
        managed_server: prepared.managed.clone(),
        maintenance: Vec::new(),
        steps: Vec::new(),
        experiment: options.experiment.clone(),
        group: None,
        dataset: prepared.restored.clone(),
    })
}

/// The workload `spec` asks for, on `db`; with `share`, only those clients (this host's
/// part of a group); `experiment`: the run is an experiment's cell.
fn workload_for(
    spec: &RunSpec,
    db: &Arc<dyn dbms::Dbms>,
    share: Option<std::ops::Range<usize>>,
    experiment: bool,
) -> Result<Box<dyn Workload>> {
    let foreign =
        ForeignTables::new(spec.drop_existing, spec.write_existing).in_experiment(experiment);
    Ok(match &spec.workload {
        WorkloadSpec::InsertBenchmark(w) => {
            let ib = InsertBenchmark::new(w.clone(), Arc::clone(db), foreign);
            Box::new(match share {
                Some(share) => ib.with_share(share),
                None => ib,
            })
        }
        WorkloadSpec::Micro(m) => Box::new(Micro::new(m.clone(), Arc::clone(db), foreign)?),
        WorkloadSpec::Tpcc(t) => Box::new(Tpcc::new(t.clone(), Arc::clone(db), foreign)),
    })
}

/// The terminal summary and where the results are (a closed stdout does not stop the
/// clean-up after the run: `output::stdout`).
fn print_summary(run: &RunResult, file: &ResultsFile) {
    if !run.steps.is_empty() {
        crate::output::stdout::print_or_drop(&terminal::summary(run));
    }
    if file.is_saved() {
        crate::output::stdout::print_or_drop(&format!("\nresults: {}\n", file.path().display()));
    }
}

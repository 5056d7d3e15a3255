//! Launching one run from its request ([`RunSpec`]): the use case behind `ibench run`,
//! `ibench micro` and every cell of an experiment. It checks what can be checked before
//! anything starts, reserves the results file, resolves the request (a scratch database, a
//! managed server), runs the workload's steps (`crate::runner::steps`) saving after each,
//! prints the summary, and cleans up what it made.
//!
//! * `prepare.rs` — the request resolved into what the run runs on (scratch database, managed
//!   server), recorded apart from the request, undone at the end.
//! * `managed.rs` — a managed server (and pooler) for a run.
//! * `watch.rs` — which processes, files and device a run's cost is read from.
//! * `execute.rs` — the run itself: DBMS opened, workload built, steps run, summary printed.

mod execute;
mod managed;
mod pin;
mod prepare;
mod watch;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;
use chrono::Utc;

use crate::dbms::Capability;
use crate::error::UsageError;
use crate::request::{RunSpec, WorkloadSpec};
use crate::results::file::ResultsFile;
use crate::results::model::{ExperimentTag, RunResult};
use prepare::Prepared;

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
    pub group: Option<crate::group::GroupOptions>,
    /// This run is one of a duet pair (`ibench experiment --duet`): each step starts when
    /// the partner's does (`runner/duet_gate.rs`).
    pub duet: bool,
}

/// Space always wanted in the output directory for results, bytes.
const RESULTS_SPACE: u64 = 16 << 20;

/// The operation set `workload` needs from the DBMS's connections.
pub fn capability(workload: &WorkloadSpec) -> Capability {
    match workload {
        WorkloadSpec::InsertBenchmark(_) => Capability::InsertBenchmark,
        WorkloadSpec::Micro(_) | WorkloadSpec::Tpcc(_) => Capability::Sql,
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
    let Some(free) = crate::metrics::storage::free_bytes(out) else {
        return Ok(()); // cannot tell: the run finds out
    };
    let data_root = spec.server.as_ref().and_then(|s| s.data_root.as_deref());
    if let Some(root) = data_root
        && let Some(free) = crate::metrics::storage::free_bytes(root)
    {
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
/// OUT/results.db), runs, prints the summary, and removes what it made for the run.
pub fn run_to_out(spec: RunSpec, store: Option<&Path>, options: RunOptions) -> Result<()> {
    check_capability(&spec)?;
    crate::server::cgroup::check(&spec.resources)?;
    let out = spec.out_dir.clone();
    fs::create_dir_all(&out)
        .map_err(|e| UsageError::new(format!("cannot create --out {}: {e}", out.display())))?;
    check_output(&spec, &out)?;
    if let Some(name) = &spec.dataset {
        // Refused before anything is made: a dataset that is missing or of another kind.
        crate::dataset::open(&crate::dataset::store_dir(&out), name)?.check_matches(&spec)?;
    }
    let stem = format!(
        "ibench-{}-{}",
        Utc::now().format("%Y%m%dT%H%M%S"),
        spec.target.kind.name()
    );
    let store_path = store
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out.join("results.db"));
    let store = crate::results::store::Store::open(&store_path)?;
    // Runs an earlier ibench left `running` when it was killed: marked abandoned, their
    // scratch data removed.
    crate::results::abandoned::sweep(&out, &store_path);
    // Temporary directories of dataset saves killed midway.
    crate::dataset::settle(&crate::dataset::store_dir(&out));
    // Cgroups an ibench killed with kill -9 left behind, once their processes are gone.
    crate::server::cgroup::sweep();
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
    crate::interrupt::install_handler();
    let options = RunOptions {
        summary: true,
        ..options
    };
    let result = run_to_file(&spec, &file, &options).1;
    file.discard_if_unsaved();
    result
}

/// Runs `spec`, saving to `file` after every step, on what it resolves to (a scratch
/// database made for it, a managed server started for it: removed and stopped after), or on
/// the target as given. Returns the run as last saved (`None` when it never started: the
/// DBMS could not be opened, the server did not start) and the outcome.
pub fn run_to_file(
    spec: &RunSpec,
    file: &ResultsFile,
    options: &RunOptions,
) -> (Option<RunResult>, Result<()>) {
    if let Err(e) = check_capability(spec) {
        return (None, Err(e));
    }
    let prepared = match Prepared::start(spec, file, options) {
        Ok(p) => p,
        Err(e) => return (None, Err(e)),
    };
    let (run, result) = execute::execute(spec, &prepared, file, options);
    let finished = prepared.finish();
    (run, result.and(finished))
}

/// The pid on the first line of `file` (postmaster.pid, mysqld.pid: an external server's),
/// a process running on this host; `what` names where the file was given
/// (`--server-pid-file`, an experiment's `server_pid_file`) in the one-line error.
pub fn pid_from_file(file: &Path, what: &str) -> Result<u32, UsageError> {
    let text = crate::bounded::read_to_string(file, 4096)
        .map_err(|e| UsageError::new(format!("cannot read {what} {}: {e}", file.display())))?;
    let pid: u32 = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| {
            UsageError::new(format!(
                "{what} {} does not start with a pid",
                file.display()
            ))
        })?;
    if !Path::new(&format!("/proc/{pid}")).exists() {
        return Err(UsageError::new(format!(
            "{what} {} names pid {pid}, no such process on this host (a stale file: is the \
             server running, and is this its pid file?)",
            file.display()
        )));
    }
    Ok(pid)
}

//! Runs a workload's steps in order, with the maintenance pause between the load and the
//! query steps, a line per step, and the results file rewritten after every step.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chrono::Utc;

use super::{CostWatch, DisplayOptions, StepEnv, Workload};
use crate::error::Interrupted;
use crate::output::format;
use crate::results::file::ResultsFile;
use crate::results::model::{Maintenance, RunResult, RunStatus, StepResult};

/// Whether the maintenance pause runs, and whether it may change the server's global settings
/// for a moment (a server ibench started, or one the user allowed it to change).
#[derive(Clone, Copy, Debug)]
pub struct MaintenancePolicy {
    /// Run the pause between the load and the query steps.
    pub enabled: bool,
    /// It may change the server's global settings (and set them back).
    pub change_settings: bool,
}

/// How the steps run: the pause, and how many threads carry the clients of a server DBMS
/// (`--client-threads`: connections multiplexed over them; 0 = a thread per connection).
#[derive(Clone, Copy, Debug)]
pub struct StepOptions {
    /// The maintenance pause.
    pub pause: MaintenancePolicy,
    /// Client threads for a server DBMS's connections, and how they wait.
    pub client_threads: super::client::ClientThreads,
    /// Keep each client's full per-second series in the results (`--per-client-series`).
    pub per_client_series: bool,
    /// What happens to the OS page cache of the database's files before each step.
    pub os_cache: crate::request::OsCache,
    /// Pause before every step but the first (`--cooldown`).
    pub cooldown: Duration,
}

/// Sleeps `d`, waking every 100 ms to see whether the run was interrupted (then
/// [`Interrupted`]). The cool-down between steps, and an experiment's between cells.
pub fn cool_down(d: Duration) -> Result<()> {
    let end = Instant::now() + d;
    loop {
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100).min(end - now));
    }
}

fn step_line(step: &StepResult) -> String {
    use crate::metrics::figures::header;
    let mut parts = vec![format::seconds(step.duration_s)];
    for (name, v) in [
        (header("inserts_per_s"), step.inserts_per_s),
        (header("deletes_per_s"), step.deletes_per_s),
        (header("queries_per_s"), step.queries_per_s),
    ] {
        if v > 0.0 {
            parts.push(format!("{} {name}", format::rate(v)));
        }
    }
    if let Some(verdict) = step.sla_verdict() {
        parts.push(format!("SLA {verdict}"));
    }
    let retries: u64 = step.retries.values().sum();
    if retries > 0 || step.reconnects > 0 {
        parts.push(format!("{retries} retries, {} reconnects", step.reconnects));
    }
    format!("{:>7} {}", step.name, parts.join("  "))
}

/// How long a step's end waits for the replicas to catch up.
const CATCH_UP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// With streaming replicas: each one's lag over `step` and its catch-up at the step's end
/// (a failed reading leaves the catch-up unknown).
fn record_replication(step: &mut StepResult, costs: &CostWatch) {
    let catch_up = match costs.dbms.replica_catch_up(CATCH_UP_WAIT) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("warning: replica catch-up not measured: {e:#}");
            Vec::new()
        }
    };
    step.replication = crate::metrics::replication::replica_lags(step, &catch_up);
}

/// After the maintenance pause, with replicas: waits until they have replayed it too (the
/// next step may read from them), and says how long each took (empty without replicas).
fn pause_catch_up(costs: &CostWatch) -> String {
    match costs.dbms.replica_catch_up(CATCH_UP_WAIT) {
        Ok(c) if c.is_empty() => String::new(),
        Ok(c) => {
            let each: Vec<String> = c
                .iter()
                .map(|(name, s)| match s {
                    Some(s) => format!("{name} in {s:.3}s"),
                    None => format!("{name} not in {}s", CATCH_UP_WAIT.as_secs()),
                })
                .collect();
            format!(", replicas caught up with it: {}", each.join(", "))
        }
        Err(e) => format!(", replica catch-up not measured: {e:#}"),
    }
}

/// Runs step `index` in `env`, watching the cluster's nodes (`costs.nodes`): a node that died
/// since the last step fails it before it starts (or, with `continue`, its clients do not
/// connect to it); one that dies during it is recorded on it. With the step's errors of a
/// kind of their own (Galera's conflicts).
fn run_step_watched(
    workload: &mut dyn Workload,
    index: usize,
    env: &StepEnv<'_>,
    costs: Option<&CostWatch>,
) -> Result<StepResult> {
    let name = env.name();
    if let Some(c) = costs
        && let Some(nodes) = &c.nodes
        && let Some(failure) = nodes.check(name, None, c.dbms.as_ref())
    {
        bail!("step {name} failed: {failure}");
    }
    let mut step = match workload.run_step(index, env) {
        Ok(step) => step,
        Err(e) => return Err(with_node_deaths(e, costs, name)),
    };
    record_node_deaths(&mut step, costs);
    if let Some(c) = costs {
        step.errors = c.dbms.error_counts(&step.dbms_counters);
    }
    Ok(step)
}

/// The cluster's nodes seen dead during `step` (a last look at its end): recorded on it, as
/// a note when the step went on without them; a death that fails the step fails it, its
/// line first.
fn record_node_deaths(step: &mut StepResult, costs: Option<&CostWatch>) {
    let Some((nodes, c)) = costs.and_then(|c| Some((c.nodes.as_ref()?, c))) else {
        return;
    };
    let end = Duration::from_secs_f64(step.duration_s.max(0.0));
    nodes.check(&step.name, Some(end), c.dbms.as_ref());
    let mut deaths = nodes.take();
    nodes.rejoin(&mut deaths, c.dbms.as_ref());
    if nodes.fails(&deaths) {
        let fatal = deaths.iter().find(|d| nodes.fails(std::slice::from_ref(d)));
        let first = &fatal.unwrap_or(&deaths[0]).message;
        let error = step.error.take();
        step.error = Some(match error {
            Some(e) if e.contains(first.as_str()) => e,
            Some(e) => format!("{first} (then {e})"),
            None => first.clone(),
        });
        if step.status == RunStatus::Complete {
            step.status = RunStatus::Failed;
        }
    }
    for d in &deaths {
        step.notes.push(format!(
            "{} ({}): {}{}",
            d.message,
            d.seen,
            d.outcome,
            crate::server::replicas::rejoin::rejoin_text(d)
        ));
    }
    step.node_failures = deaths;
}

/// `err` (a step that could not run), naming first a node of the cluster that died, when
/// one did and its death fails the step.
fn with_node_deaths(err: anyhow::Error, costs: Option<&CostWatch>, step: &str) -> anyhow::Error {
    let Some((nodes, c)) = costs.and_then(|c| Some((c.nodes.as_ref()?, c))) else {
        return err;
    };
    nodes.check(step, Some(Duration::ZERO), c.dbms.as_ref());
    let deaths = nodes.take();
    match deaths.first() {
        Some(d) if nodes.fails(&deaths) => err.context(d.message.clone()),
        _ => err,
    }
}

fn replica_line(r: &crate::results::model::ReplicaLag) -> String {
    let catch_up = match r.catch_up_s {
        Some(s) => format!("caught up in {s:.3}s"),
        None => "did not catch up".to_string(),
    };
    format!(
        "replica {}: replay lag max {:.3}s p99 {:.3}s, {:.1} MB behind at most, {catch_up}",
        crate::output::escape::line(&r.name),
        r.max_replay_lag_s,
        r.p99_replay_lag_s,
        r.max_bytes_behind / 1e6
    )
}

/// What a run of several hosts (`--group`) adds around each step: waiting for the other
/// hosts, and leaving this host's part where they find it (`crate::group::member`).
pub trait StepGate {
    /// Before step `index`: waits until every host is ready, runs `maintenance` when this
    /// host is the one that runs the pause, and waits until it is done.
    fn start_step(
        &mut self,
        index: usize,
        name: &str,
        maintenance: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()>;
    /// After step `index` was recorded into `run`: leaves the part, waits for every host to
    /// finish the step.
    fn end_step(&mut self, index: usize, run: &RunResult) -> Result<()>;
    /// After the run ended with `outcome` (its final status recorded in `run`).
    fn end_run(&mut self, run: &RunResult, outcome: &Result<()>);

    /// The first step to run: a resumed group's steps before it were completed by every host
    /// in an earlier attempt, and the tables are as those steps left them.
    fn first_step(&self) -> usize {
        0
    }

    /// Whether a run refused before anything ran (a table ibench did not create, say) is
    /// still recorded and ended through the gate, so that the others it waits with stop (a
    /// group's hosts); `false`: refused as without a gate (a duet run, whose experiment
    /// sees it end).
    fn records_refusal(&self) -> bool {
        true
    }
}

/// The cool-down before a step (none when `cooldown` is zero): the seconds it took.
fn cool_before_step(cooldown: Duration, display: &DisplayOptions) -> Result<Option<f64>> {
    if cooldown.is_zero() {
        return Ok(None);
    }
    let start = Instant::now();
    if !display.quiet {
        eprintln!("{:>7} {}", "cool", format::seconds(cooldown.as_secs_f64()));
    }
    cool_down(cooldown)?;
    Ok(Some(start.elapsed().as_secs_f64()))
}

/// Runs every step of `workload`, recording into `run` and saving to `file` after each one,
/// with `gate` around every step when the run is one host's part of a group. Returns an error
/// when a step fails (after saving it) or the run is interrupted.
pub fn run_steps_gated(
    workload: &mut dyn Workload,
    options: StepOptions,
    run: &mut RunResult,
    file: &ResultsFile,
    display: &DisplayOptions,
    costs: Option<&CostWatch>,
    mut gate: Option<&mut dyn StepGate>,
) -> Result<()> {
    let first = gate.as_ref().map_or(0, |g| g.first_step());
    let outcome = match workload.check_ready(first) {
        // Refused before anything ran (a table ibench did not create, say): no run to record
        // (a group's host still reports it, below, so the others stop).
        Err(e)
            if gate.as_ref().is_none_or(|g| !g.records_refusal())
                && e.is::<crate::error::UsageError>() =>
        {
            return Err(e);
        }
        Err(e) => Err(e),
        Ok(()) => run_steps_inner(workload, options, run, file, display, costs, &mut gate),
    };
    if let Some(c) = run.environment.canary.as_mut() {
        let dir = file.path().parent().unwrap_or(std::path::Path::new("."));
        c.after = Some(crate::metrics::canary::probe(dir));
    }
    run.finished_at = Some(Utc::now());
    match &outcome {
        Ok(()) => run.status = RunStatus::Complete,
        Err(e) if e.is::<Interrupted>() => run.status = RunStatus::Interrupted,
        Err(e) => {
            run.status = RunStatus::Failed;
            run.error = Some(format!("{e:#}"));
        }
    }
    let mut saved = file.save(run);
    if let Err(e) = &saved
        && run.status != RunStatus::Failed
    {
        // Whatever did get written (the store, on another disk) says the run failed, and why.
        run.status = RunStatus::Failed;
        run.error = Some(format!("{e:#}"));
        saved = file.save(run).and(saved);
    }
    // Nowhere to write the run: a file of its own in the temporary directory.
    let saved = saved.map_err(|e| file.rescue(run, e));
    if let Some(gate) = gate {
        gate.end_run(run, &outcome);
    }
    saved?;
    outcome
}

fn run_steps_inner(
    workload: &mut dyn Workload,
    options: StepOptions,
    run: &mut RunResult,
    file: &ResultsFile,
    display: &DisplayOptions,
    costs: Option<&CostWatch>,
    gate: &mut Option<&mut dyn StepGate>,
) -> Result<()> {
    let StepOptions {
        pause,
        client_threads,
        per_client_series,
        os_cache,
        cooldown,
    } = options;
    file.save(run)?;
    let first = gate.as_deref().map_or(0, |g| g.first_step());
    for (index, name) in workload.step_names().into_iter().enumerate().skip(first) {
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        let mut maintenance = || -> Result<()> {
            if pause.enabled && workload.maintenance_before(index) {
                let start = Instant::now();
                if let Some(mut done) = workload.maintenance(pause.change_settings)? {
                    if let Some(c) = costs {
                        done.actions.push_str(&pause_catch_up(c));
                    }
                    let duration_s = start.elapsed().as_secs_f64();
                    if !display.quiet {
                        let actions = &done.actions;
                        eprintln!("{:>7} {actions} ({})", "pause", format::seconds(duration_s));
                    }
                    run.maintenance.push(Maintenance {
                        before_step: name.clone(),
                        actions: done.actions,
                        duration_s,
                        settled: done.settled,
                    });
                }
            }
            Ok(())
        };
        match gate.as_deref_mut() {
            Some(gate) => gate.start_step(index, &name, &mut maintenance)?,
            None => maintenance()?,
        }
        // After the pause (which is maintenance, not rest), right before the step.
        let cooled = if index > first {
            cool_before_step(cooldown, display)?
        } else {
            None
        };
        let env = StepEnv::new(name.clone(), display, costs)
            .with_client_threads(client_threads)
            .with_per_client_series(per_client_series);
        let dropped = match (os_cache, costs) {
            (crate::request::OsCache::DropBeforeStep, Some(c)) => {
                Some(super::os_cache::drop_files(&c.watch.data_paths))
            }
            _ => None,
        };
        let mut step = run_step_watched(workload, index, &env, costs)?;
        step.cooldown_s = cooled;
        step.notes.extend(dropped.map(os_cache_note));
        if let Some(c) = costs {
            record_replication(&mut step, c);
        }
        if !display.quiet {
            say_step(&step);
        }
        let (status, error) = (step.status, step.error.clone());
        run.steps.push(step);
        file.save_between_steps(run);
        if let Some(gate) = gate.as_deref_mut()
            && status == RunStatus::Complete
        {
            gate.end_step(index, run)?;
        }
        match status {
            RunStatus::Failed => bail!(
                "step {name} failed: {}",
                error.unwrap_or_else(|| "unknown error".to_string())
            ),
            RunStatus::Interrupted => return Err(Interrupted.into()),
            _ => {}
        }
    }
    Ok(())
}

/// The step's line on stderr, with its replicas' lag and the nodes that died in it.
fn say_step(step: &StepResult) {
    eprintln!("{}", step_line(step));
    for r in &step.replication {
        eprintln!("{:>7} {}", "", replica_line(r));
    }
    for d in &step.node_failures {
        eprintln!(
            "{:>7} {}: {}{}",
            "",
            d.message,
            d.outcome,
            crate::server::replicas::rejoin::rejoin_text(d)
        );
    }
}

/// The step's note of the database files dropped from the page cache before it (`files`
/// of them; `failed` could not be).
fn os_cache_note((files, failed): (usize, usize)) -> String {
    format!(
        "os cache: {files} database files written back and dropped from the page cache before \
         the step{}",
        if failed > 0 {
            format!(" ({failed} could not be)")
        } else {
            String::new()
        }
    )
}

//! One host's membership of a group run (`ibench run --group NAME --hosts N`): joins the group
//! in the store (`coord.rs`), takes its share of the clients, waits for every host before each
//! step (host 0 runs the maintenance pause in between), leaves its part after each step and
//! writes the merged run (`merge/`).

use std::time::Duration;

use anyhow::Result;

use super::GroupOptions;
use super::Point;
use super::barrier::Wait;
use super::coord::Coordinator;
use super::join::JoinRequest;
use super::merge::merge_group;
use crate::request::{RunSpec, WorkloadSpec};
use crate::results::group::{GroupHost, GroupInfo};
use crate::results::model::{RunResult, RunStatus};
use crate::results::store::Store;
use crate::runner::steps::StepGate;

/// This host's membership of its group, for the steps' [`StepGate`].
pub struct Member {
    coord: Coordinator,
    store: Store,
    options: GroupOptions,
    me: GroupHost,
    quiet: bool,
    /// A barrier failed: the group's failure is already recorded.
    group_failed: bool,
    /// Another host held the lock on the merged run past the bound: it is not tried again.
    locked_out: bool,
    /// The step this host is in, or last ran: the group fails in it when this host fails.
    step: usize,
    /// What the steps so far took on this host: the pause before a step may take as long
    /// (it vacuums and checkpoints what they wrote), plus `--host-timeout`.
    steps_took: Duration,
}

/// Joins group `options` for the run `run` of `spec` and waits until every host has joined.
pub fn join(
    options: &GroupOptions,
    spec: &RunSpec,
    run: &RunResult,
    quiet: bool,
) -> Result<Member> {
    let WorkloadSpec::InsertBenchmark(workload) = &spec.workload else {
        anyhow::bail!(crate::error::UsageError::new(
            "--group runs the Insert Benchmark (`ibench run`), not microbenchmarks"
        ));
    };
    let workload_text = serde_json::to_string(&spec.workload)?;
    let hostname = run.environment.hostname.clone();
    let request = JoinRequest {
        name: &options.name,
        hosts: options.hosts,
        workload: &workload_text,
        hostname: &hostname,
        resume: options.resume,
        join_timeout: options.join_timeout,
    };
    let mut coord = Coordinator::join(&options.store, &request)?;
    let (offset, rtt) = coord.clock_offset(9)?;
    let store = Store::open(&options.store)?;
    let index = coord.index();
    let share = super::share(workload.clients, options.hosts, index);
    let me = GroupHost {
        index,
        hostname,
        pid: std::process::id(),
        run_id: run.run_id.clone(),
        first_client: share.start,
        clients: share.len(),
        clock_offset_us: offset,
        clock_rtt_us: rtt,
        cost_per_hour: run.environment.cost_per_hour,
        status: super::status_name(RunStatus::Running),
        attempt: coord.attempt(),
        first_step: coord.first_step(),
        steps: Vec::new(),
    };
    if !quiet {
        let resumed = match me.attempt {
            0 => String::new(),
            n => format!(", resumed (attempt {n}) from step {}", me.first_step + 1),
        };
        eprintln!(
            "group {}: host {index} of {} (clients {}..{}){resumed}, clock {offset:+} us from \
             the store's (round trip {rtt} us); waiting for every host to join",
            options.name,
            options.hosts,
            share.start,
            share.end.saturating_sub(1),
        );
    }
    let steps_took = steps_before(&store, &options.name, me.first_step);
    let me_first = me.first_step;
    let mut member = Member {
        coord,
        store,
        options: options.clone(),
        me,
        quiet,
        group_failed: false,
        locked_out: false,
        step: me_first,
        steps_took,
    };
    let wait = Wait::join(options.join_timeout);
    member.barrier(Point::Joined, "the start (every host joined)", &wait)?;
    member.coord.started()?;
    Ok(member)
}

/// What the steps before `first` took, as the merged run `name` in `store` has them: none
/// but for a resumed group.
fn steps_before(store: &Store, name: &str, first: usize) -> Duration {
    if first == 0 {
        return Duration::ZERO;
    }
    let seconds = store.load(name).map_or(0.0, |run| {
        run.steps.iter().take(first).map(|s| s.duration_s).sum()
    });
    Duration::from_secs_f64(seconds.max(0.0))
}

impl Member {
    /// This host's record, as its part carries it.
    pub fn info(&self) -> GroupInfo {
        GroupInfo {
            name: self.options.name.clone(),
            hosts: self.options.hosts,
            members: vec![self.me.clone()],
        }
    }

    /// The client numbers this host runs.
    pub fn share(&self) -> std::ops::Range<usize> {
        self.me.first_client..self.me.first_client + self.me.clients
    }

    fn barrier(&mut self, point: Point, what: &str, wait: &Wait) -> Result<()> {
        let result = self.coord.barrier(point, what, wait);
        if result.is_err() {
            self.group_failed = true;
        }
        result
    }

    /// Writes the merged run from every part in the store (one host at a time).
    fn write_merged(&mut self) -> Result<()> {
        // Past the end barrier of step `self.step` every host completed it: a host hung with
        // the lock fails the group in the next step.
        let step = self.step + 1;
        if self.locked_out {
            anyhow::bail!("the merged run is not written: another host holds its lock");
        }
        if let Err(e) = self.coord.lock_merge(self.options.host_timeout, step) {
            self.group_failed = true;
            self.locked_out = true;
            return Err(e);
        }
        let result = (|| {
            let parts = self.coord.parts()?;
            let outcome = self.coord.outcome()?;
            let merged = merge_group(&self.options.name, self.options.hosts, &parts, &outcome)?;
            self.store.save(&merged)
        })();
        self.coord.unlock_merge()?;
        result
    }

    /// Records the group's failure: this host's run ended with `error`.
    fn fail(&mut self, error: &anyhow::Error) -> Result<()> {
        let what = if error.is::<crate::error::Interrupted>() {
            "was interrupted".to_string()
        } else {
            format!("failed: {error:#}")
        };
        let message = format!(
            "host {} ({}, pid {}) {what}",
            self.me.index, self.me.hostname, self.me.pid
        );
        self.coord.fail(&message, self.step)
    }
}

impl StepGate for Member {
    fn first_step(&self) -> usize {
        self.me.first_step
    }

    fn start_step(
        &mut self,
        index: usize,
        name: &str,
        maintenance: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        self.step = index;
        let timeout = self.options.host_timeout;
        let ready = Wait::late(timeout, Duration::ZERO, "");
        self.barrier(Point::Ready(index), &format!("step {name}"), &ready)?;
        if self.me.index == 0 {
            maintenance()?;
        }
        let took = self.steps_took;
        let paused = Wait::late(
            timeout,
            took,
            &format!("the steps before it took {}s here", took.as_secs()),
        );
        let what = format!("step {name} (after the pause)");
        self.barrier(Point::Paused(index), &what, &paused)
    }

    fn end_step(&mut self, index: usize, run: &RunResult) -> Result<()> {
        self.coord.save_part(run)?;
        let (name, seconds) = run
            .steps
            .last()
            .map_or(("", 0.0), |s| (s.name.as_str(), s.duration_s));
        let took = Duration::from_secs_f64(seconds.max(0.0));
        self.steps_took += took;
        let done = Wait::late(
            self.options.host_timeout,
            took,
            &format!("{name} took {}s here", took.as_secs()),
        );
        self.barrier(
            Point::Done(index),
            &format!("the end of step {name}"),
            &done,
        )?;
        self.write_merged()
    }

    fn end_run(&mut self, run: &RunResult, outcome: &Result<()>) {
        let mut problems = Vec::new();
        if let Err(e) = self.coord.save_part(run) {
            problems.push(format!("{e:#}"));
        }
        let recorded = match outcome {
            Ok(()) => self.coord.complete(),
            Err(e) if !self.group_failed => self.fail(e),
            Err(_) => Ok(()),
        };
        if let Err(e) = recorded {
            problems.push(format!("{e:#}"));
        }
        if let Err(e) = self.write_merged() {
            problems.push(format!("{e:#}"));
        }
        for p in problems {
            eprintln!("warning: group {}: {p}", self.options.name);
        }
        if !self.quiet || outcome.is_ok() {
            crate::output::stdout::print_or_drop(&format!(
                "\ngroup {}: the merged run is {} in {} (`ibench show {}`)\n",
                self.options.name,
                self.options.name,
                self.store.path().display(),
                self.options.name
            ));
        }
    }
}

//! Orchestration: runs a workload's steps in order, with the maintenance pause, progress
//! display, and the results file rewritten after every step.
//!
//! `client.rs` starts a step's threads together and collects what they recorded; `rate.rs`
//! holds the background writer's schedule.

pub mod client;
pub mod rate;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chrono::Utc;

use crate::error::Interrupted;
use crate::output::format;
pub use crate::output::progress::Expect;
use crate::output::progress::{LiveRates, step_bar};
use crate::results::file::ResultsFile;
use crate::results::model::{Maintenance, RunResult, RunStatus, StepResult};
use crate::runner::client::{INTERRUPTED, StepOutcome, ThreadSpec};
use crate::workload::Workload;

/// How the run is displayed.
#[derive(Clone, Debug, Default)]
pub struct DisplayOptions {
    /// No progress bars or step lines.
    pub quiet: bool,
    /// Print a progress line every this often (zero: never).
    pub report_interval: Duration,
}

/// What a workload's step sees of the runner.
pub struct StepEnv<'a> {
    name: String,
    display: &'a DisplayOptions,
}

impl StepEnv<'_> {
    /// The step's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `threads` together, showing progress towards `expect`.
    pub fn run_threads(&self, threads: Vec<ThreadSpec<'_>>, expect: Expect) -> StepOutcome {
        let bar = step_bar(&self.name, expect, self.display.quiet);
        let mut rates = LiveRates::default();
        let mut last_report = Duration::ZERO;
        let interval = self.display.report_interval;
        let outcome = client::run_threads(threads, &mut |live, elapsed| {
            match expect {
                Expect::Rows(_, total) => bar.set_position(LiveRates::totals(live)[0].min(total)),
                Expect::Time(d) => bar.set_position(elapsed.min(d).as_millis() as u64),
                Expect::Spinner => {}
            }
            if rates.update(live, elapsed, Duration::from_secs(1)) {
                bar.set_message(rates.message());
            }
            if !interval.is_zero() && elapsed >= last_report + interval {
                last_report = elapsed;
                let line = format!(
                    "[{:>6.1}s] {:>6} {}",
                    elapsed.as_secs_f64(),
                    self.name,
                    rates.message()
                );
                if bar.is_hidden() && !self.display.quiet {
                    eprintln!("{line}");
                } else {
                    bar.println(line);
                }
            }
        });
        bar.finish_and_clear();
        outcome
    }
}

fn step_line(step: &StepResult) -> String {
    let mut parts = vec![format::seconds(step.duration_s)];
    for (name, v) in [
        ("ins/s", step.inserts_per_s),
        ("del/s", step.deletes_per_s),
        ("q/s", step.queries_per_s),
    ] {
        if v > 0.0 {
            parts.push(format!("{} {name}", format::rate(v)));
        }
    }
    if let Some(sla) = &step.sla {
        parts.push(format!("SLA {}", if sla.pass { "PASS" } else { "FAIL" }));
    }
    format!("{:>7} {}", step.name, parts.join("  "))
}

/// Runs every step of `workload`, recording into `run` and saving to `file` after each one.
/// Returns an error when a step fails (after saving it) or the run is interrupted.
pub fn run_steps(
    workload: &mut dyn Workload,
    maintenance: bool,
    run: &mut RunResult,
    file: &ResultsFile,
    display: &DisplayOptions,
) -> Result<()> {
    let outcome = run_steps_inner(workload, maintenance, run, file, display);
    run.finished_at = Some(Utc::now());
    match &outcome {
        Ok(()) => run.status = RunStatus::Complete,
        Err(e) if e.is::<Interrupted>() => run.status = RunStatus::Interrupted,
        Err(e) => {
            run.status = RunStatus::Failed;
            run.error = Some(format!("{e:#}"));
        }
    }
    file.save(run)?;
    outcome
}

fn run_steps_inner(
    workload: &mut dyn Workload,
    maintenance: bool,
    run: &mut RunResult,
    file: &ResultsFile,
    display: &DisplayOptions,
) -> Result<()> {
    workload.check_ready()?;
    file.save(run)?;
    for (index, name) in workload.step_names().into_iter().enumerate() {
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Err(Interrupted.into());
        }
        if maintenance && workload.maintenance_before(index) {
            let start = Instant::now();
            if let Some(actions) = workload.maintenance()? {
                let duration_s = start.elapsed().as_secs_f64();
                if !display.quiet {
                    eprintln!("{:>7} {actions} ({})", "pause", format::seconds(duration_s));
                }
                run.maintenance.push(Maintenance {
                    before_step: name.clone(),
                    actions,
                    duration_s,
                });
            }
        }
        let env = StepEnv {
            name: name.clone(),
            display,
        };
        let step = workload.run_step(index, &env)?;
        if !display.quiet {
            eprintln!("{}", step_line(&step));
        }
        let (status, error) = (step.status, step.error.clone());
        run.steps.push(step);
        file.save(run)?;
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

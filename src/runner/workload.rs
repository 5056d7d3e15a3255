//! What the runner asks of a benchmark: its steps, in order, each run on a [`StepEnv`]. The
//! Insert Benchmark, the microbenchmarks and TPC-C (`crate::workload`) implement it; the step
//! orchestration (`steps.rs`) drives it.

use anyhow::Result;

use super::StepEnv;
use crate::dbms::Settled;
use crate::results::model::StepResult;

/// What a maintenance pause did.
#[derive(Clone, Debug, PartialEq)]
pub struct MaintenanceOutcome {
    /// What was done, in words.
    pub actions: String,
    /// Its wait for the engine's background work after writes, if any.
    pub settled: Option<Settled>,
}

impl From<String> for MaintenanceOutcome {
    fn from(actions: String) -> Self {
        MaintenanceOutcome {
            actions,
            settled: None,
        }
    }
}

/// A benchmark made of steps.
pub trait Workload {
    /// Name in results (`insert-benchmark`).
    fn name(&self) -> &'static str;

    /// Step names, in run order.
    fn step_names(&self) -> Vec<String>;

    /// Checks, before step `first` (the first to run: 0 but for a resumed group), that the
    /// database is in a state it can start from (e.g. tables exist when the run does not begin
    /// with a load).
    fn check_ready(&mut self, first: usize) -> Result<()>;

    /// Whether the DBMS maintenance pause belongs before step `index` (between the load and
    /// the query steps).
    fn maintenance_before(&self, index: usize) -> bool;

    /// Runs the DBMS maintenance pause on the workload's tables; returns what was done, or
    /// `None` when the DBMS needs none. `change_settings`: whether it may change the server's
    /// global settings for a moment ([`crate::dbms::Dbms::maintenance`]).
    fn maintenance(&self, change_settings: bool) -> Result<Option<MaintenanceOutcome>>;

    /// Runs step `index`. Failures of client threads are reported in the returned result
    /// (status and error); `Err` means the step could not be set up at all.
    fn run_step(&mut self, index: usize, env: &StepEnv) -> Result<StepResult>;
}

//! Workloads: which operations to issue, on which keys, in which steps. No SQL lives here (that
//! is `dbms/`), and no threads, clocks or progress bars (that is `runner/`).
//!
//! A workload is a sequence of named steps. For each step it builds the client threads'
//! bodies and hands them to [`StepEnv::run_threads`], then turns what they measured into a
//! [`StepResult`] with [`crate::metrics::summary::summarize`] and its own extra figures.

pub mod insert_benchmark;
pub mod micro;

use anyhow::Result;

use crate::dbms::{Table, TableOrigin};
use crate::error::UsageError;
use crate::results::model::StepResult;
use crate::runner::StepEnv;

/// Refuses, naming the first one, when one of `tables` (which a load is about to replace)
/// exists and was not created by ibench, unless the user said `drop_existing`: ibench never
/// drops what it did not create. `origin` asks the DBMS; `also` says what else the user can
/// do.
pub fn check_replaceable(
    tables: &[Table],
    drop_existing: bool,
    location: &str,
    also: &str,
    mut origin: impl FnMut(&Table) -> Result<TableOrigin>,
) -> Result<()> {
    if drop_existing {
        return Ok(());
    }
    for table in tables {
        if origin(table)? == TableOrigin::Other {
            return Err(UsageError::new(format!(
                "table {} exists in {location} and was not created by ibench: ibench never drops \
                 what it did not create; {also}, or give --drop-existing to replace it",
                table.name
            ))
            .into());
        }
    }
    Ok(())
}

/// A benchmark made of steps.
pub trait Workload {
    /// Name in results (`insert-benchmark`).
    fn name(&self) -> &'static str;

    /// Step names, in run order.
    fn step_names(&self) -> Vec<String>;

    /// Checks, before the first step, that the database is in a state the first step can
    /// start from (e.g. tables exist when the run does not begin with a load).
    fn check_ready(&mut self) -> Result<()>;

    /// Whether the DBMS maintenance pause belongs before step `index` (between the load and
    /// the query steps).
    fn maintenance_before(&self, index: usize) -> bool;

    /// Runs the DBMS maintenance pause on the workload's tables; returns what was done, or
    /// `None` when the DBMS needs none. `change_settings`: whether it may change the server's
    /// global settings for a moment ([`crate::dbms::Dbms::maintenance`]).
    fn maintenance(&self, change_settings: bool) -> Result<Option<String>>;

    /// Runs step `index`. Failures of client threads are reported in the returned result
    /// (status and error); `Err` means the step could not be set up at all.
    fn run_step(&mut self, index: usize, env: &StepEnv) -> Result<StepResult>;
}

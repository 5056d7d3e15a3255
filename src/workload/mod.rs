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

/// What the user allows ibench to do with tables of the benchmark's names that it did not
/// create (their [`TableOrigin`] is `Other`): nothing, unless they say so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForeignTables {
    /// Replace them (`--drop-existing`); implies `write`.
    pub drop: bool,
    /// Write rows and indexes into them as they are (`--write-existing`).
    pub write: bool,
}

impl ForeignTables {
    /// What `drop_existing` and `write_existing` (the run's flags) allow.
    pub fn new(drop_existing: bool, write_existing: bool) -> Self {
        ForeignTables {
            drop: drop_existing,
            write: drop_existing || write_existing,
        }
    }
}

/// Refuses, naming the first one, when one of `tables` (which a load is about to replace)
/// exists and was not created by ibench, unless the user allowed it (`--drop-existing`):
/// ibench never drops what it did not create. `origin` asks the DBMS; `also` says what else
/// the user can do.
pub fn check_replaceable(
    tables: &[Table],
    allowed: ForeignTables,
    location: &str,
    also: &str,
    origin: impl FnMut(&Table) -> Result<TableOrigin>,
) -> Result<()> {
    if allowed.drop {
        return Ok(());
    }
    refuse_foreign(tables, origin, |name| {
        format!(
            "table {name} exists in {location} and was not created by ibench: ibench never \
             drops what it did not create; {also}, or give --drop-existing to replace it"
        )
    })
}

/// Refuses, naming the first one, when one of `tables` (which `action` would write into:
/// "step l.i1 would insert and delete rows in it") exists and was not created by ibench,
/// unless the user allowed it (`--write-existing`, or `--drop-existing`): ibench never
/// changes what it did not create. Checked before anything runs.
pub fn check_writable(
    tables: &[Table],
    allowed: ForeignTables,
    location: &str,
    action: &str,
    origin: impl FnMut(&Table) -> Result<TableOrigin>,
) -> Result<()> {
    if allowed.write {
        return Ok(());
    }
    refuse_foreign(tables, origin, |name| {
        format!(
            "table {name} exists in {location} and was not created by ibench: {action}, and \
             ibench never changes what it did not create; give --write-existing to let it \
             write into the table as it is"
        )
    })
}

/// A usage error with `message(name)` for the first of `tables` that ibench did not create.
fn refuse_foreign(
    tables: &[Table],
    mut origin: impl FnMut(&Table) -> Result<TableOrigin>,
    message: impl Fn(&str) -> String,
) -> Result<()> {
    for table in tables {
        if origin(table)? == TableOrigin::Other {
            return Err(UsageError::new(message(&table.name)).into());
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

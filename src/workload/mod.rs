//! Workloads: which operations to issue, on which keys, in which steps. No SQL lives here (that
//! is `dbms/`), and no threads, clocks or progress bars (that is `runner/`).
//!
//! A workload is a sequence of named steps: it implements [`crate::runner::Workload`]. For
//! each step it builds the client threads' bodies and hands them to
//! [`crate::runner::StepEnv::run_threads`], then turns what they measured into a
//! [`crate::results::model::StepResult`] with [`crate::metrics::summary::summarize`] and its
//! own extra figures.

pub mod insert_benchmark;
pub mod micro;
pub mod tpcc;

mod sql;

use anyhow::Result;

use crate::dbms::{Table, TableOrigin};
use crate::error::UsageError;

/// What the user allows ibench to do with tables of the benchmark's names that it did not
/// create (their [`TableOrigin`] is `Other`): nothing, unless they say so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForeignTables {
    /// Replace them (`--drop-existing`); implies `write`.
    pub drop: bool,
    /// Write rows and indexes into them as they are (`--write-existing`).
    pub write: bool,
    /// The run is an experiment's cell: a refusal names the target's key `drop_existing`
    /// (the experiment's word for it), not the flags.
    pub experiment: bool,
}

impl ForeignTables {
    /// What `drop_existing` and `write_existing` (the run's flags) allow.
    pub fn new(drop_existing: bool, write_existing: bool) -> Self {
        ForeignTables {
            drop: drop_existing,
            write: drop_existing || write_existing,
            experiment: false,
        }
    }

    /// The same, for an experiment's cell (refusals name its key, `drop_existing`).
    pub fn in_experiment(self, experiment: bool) -> Self {
        ForeignTables { experiment, ..self }
    }
}

/// What an experiment's refusal says the user can do: its target key.
const EXPERIMENT_WORD: &str = "set drop_existing = true on the experiment's target to let \
     ibench replace it (and write into it)";

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
        let word = if allowed.experiment {
            EXPERIMENT_WORD.to_string()
        } else {
            format!("{also}, or give --drop-existing to replace it")
        };
        format!(
            "table {name} exists in {location} and was not created by ibench: ibench never \
             drops what it did not create; {word}"
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
        let word = if allowed.experiment {
            EXPERIMENT_WORD
        } else {
            "give --write-existing to let it write into the table as it is"
        };
        format!(
            "table {name} exists in {location} and was not created by ibench: {action}, and \
             ibench never changes what it did not create; {word}"
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

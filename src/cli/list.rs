//! `ibench list`: the runs in the results database.

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::report::table::Table;
use crate::results::store::Store;

/// Flags of `ibench list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Prints one line per run: id, start, target, label, steps, status.
pub fn execute(args: &ListArgs) -> Result<()> {
    let store = Store::open_existing(&args.store.results)?;
    let runs = store.list()?;
    if runs.is_empty() {
        println!("no runs in {}", store.path().display());
        return Ok(());
    }
    let mut t = Table::new(["id", "started", "dbms", "label", "steps", "status"]).align_left(1..6);
    for r in runs {
        t.row([
            r.id,
            r.started_at.chars().take(19).collect(),
            r.dbms.chars().take(40).collect(),
            r.label.unwrap_or_default(),
            r.steps,
            r.status,
        ]);
    }
    print!("{}", t.to_text());
    Ok(())
}

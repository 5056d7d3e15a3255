//! `ibench list`: the runs in the results database.

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::error::UsageError;
use crate::report::table::Table;
use crate::results::store::Store;

/// Flags of `ibench list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only runs with this provenance tag (KEY=VALUE; repeatable: runs with all of them).
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::spec::tags::parse)]
    pub tags: Vec<(String, String)>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Prints one line per run: id, start, target, label, steps, status, tags.
pub fn execute(args: &ListArgs) -> Result<()> {
    let wanted = crate::spec::tags::collect(&args.tags).map_err(UsageError::new)?;
    let store = Store::open_existing(&args.store.results)?;
    let runs: Vec<_> = store
        .list()?
        .into_iter()
        .filter(|r| wanted.iter().all(|(k, v)| r.tags.get(k) == Some(v)))
        .collect();
    if runs.is_empty() {
        match wanted.is_empty() {
            true => println!("no runs in {}", store.path().display()),
            false => println!(
                "no runs tagged {} in {}",
                crate::spec::tags::text(&wanted),
                store.path().display()
            ),
        }
        return Ok(());
    }
    let mut t =
        Table::new(["id", "started", "dbms", "label", "steps", "status", "tags"]).align_left(1..7);
    for r in runs {
        t.row([
            r.id,
            r.started_at.chars().take(19).collect(),
            r.dbms.chars().take(40).collect(),
            r.label.unwrap_or_default(),
            r.steps,
            r.status,
            crate::spec::tags::text(&r.tags),
        ]);
    }
    crate::output::stdout::print(&t.to_text())
}

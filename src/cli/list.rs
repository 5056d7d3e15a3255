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
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::request::tags::parse)]
    pub tags: Vec<(String, String)>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Prints one line per run: id, start, target, label, steps, status, and tags when any run
/// listed has them.
pub fn execute(args: &ListArgs) -> Result<()> {
    let wanted = crate::request::tags::collect(&args.tags).map_err(UsageError::new)?;
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
                crate::request::tags::text(&wanted),
                store.path().display()
            ),
        }
        return Ok(());
    }
    // The tags column only when a run listed has tags.
    let tagged = runs.iter().any(|r| !r.tags.is_empty());
    let mut header = vec!["id", "started", "dbms", "label", "steps", "status"];
    if tagged {
        header.push("tags");
    }
    let mut t = Table::new(header.iter().copied()).align_left(1..header.len());
    for r in runs {
        let mut row = vec![
            r.id,
            r.started_at.chars().take(19).collect(),
            r.dbms.chars().take(40).collect(),
            r.label.unwrap_or_default(),
            r.steps,
            r.status,
        ];
        if tagged {
            row.push(crate::request::tags::text(&r.tags));
        }
        t.row(row);
    }
    crate::output::stdout::print(&t.to_text())
}

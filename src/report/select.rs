//! Which runs a report covers and how they group: each name given is a run id (or unique
//! prefix) or a label; runs sharing a label are repeats of one configuration.

use anyhow::Result;

use crate::error::UsageError;

use crate::results::model::RunResult;
use crate::results::store::Store;

/// What makes runs one group of a report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    /// The configuration: runs sharing a label are repeats of it (a run without one is its
    /// own group).
    #[default]
    Label,
    /// The host the runs ran on (runs imported from several machines).
    Host,
}

fn group_key(run: &RunResult, by: GroupBy) -> String {
    match by {
        GroupBy::Label => run
            .config
            .label
            .clone()
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| run.run_id.clone()),
        GroupBy::Host => run.environment.hostname.clone(),
    }
}

fn add(groups: &mut Vec<Group>, run: RunResult, by: GroupBy) {
    let key = group_key(&run, by);
    match groups.iter_mut().find(|g| g.name == key) {
        Some(g) => {
            if !g.runs.iter().any(|r| r.run_id == run.run_id) {
                g.runs.push(run);
                g.runs.sort_by_key(|r| r.started_at);
            }
        }
        None => groups.push(Group {
            name: key,
            runs: vec![run],
        }),
    }
}

/// Runs of one configuration: the runs sharing a label (a run without a label is its own group).
#[derive(Clone, Debug)]
pub struct Group {
    /// The label, or the run id of an unlabelled run.
    pub name: String,
    /// The runs, oldest first.
    pub runs: Vec<RunResult>,
}

/// The groups for `names` (every run in the store when empty), the base group first: the
/// group of `base` when given, else the first named.
pub fn groups(store: &Store, names: &[String], base: Option<&str>) -> Result<Vec<Group>> {
    groups_by(store, names, base, GroupBy::Label)
}

/// [`groups`], grouped `by` label or host (`base` may then name a host). A run that recorded
/// no price per hour gets its host's price from the store, if it has one.
pub fn groups_by(
    store: &Store,
    names: &[String],
    base: Option<&str>,
    by: GroupBy,
) -> Result<Vec<Group>> {
    let mut groups = collect(store, names, base, by)?;
    let prices = store.host_prices()?;
    if !prices.is_empty() {
        for run in groups.iter_mut().flat_map(|g| g.runs.iter_mut()) {
            let e = &mut run.environment;
            if e.cost_per_hour.is_none() {
                e.cost_per_hour = prices.get(&e.hostname).copied();
            }
        }
    }
    Ok(groups)
}

fn collect(store: &Store, names: &[String], base: Option<&str>, by: GroupBy) -> Result<Vec<Group>> {
    let mut groups: Vec<Group> = Vec::new();
    if names.is_empty() {
        let rows = store.list()?;
        if rows.is_empty() {
            return Err(UsageError::new(format!(
                "no runs in {}: run `ibench run` first, or name a store with --results",
                store.path().display()
            ))
            .into());
        }
        let mut rows = rows;
        rows.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        for r in rows {
            add(&mut groups, store.load(&r.id)?, by);
        }
    } else {
        for name in names {
            for run in store.load_all(name)? {
                add(&mut groups, run, by);
            }
        }
    }
    if let Some(base) = base {
        // Grouped by host, the base may name a host.
        let key = if by == GroupBy::Host && groups.iter().any(|g| g.name == base) {
            base.to_string()
        } else {
            let base_runs = store.load_all(base)?;
            let key = group_key(&base_runs[0], by);
            if !groups.iter().any(|g| g.name == key) {
                for run in base_runs {
                    add(&mut groups, run, by);
                }
            }
            key
        };
        let at = groups
            .iter()
            .position(|g| g.name == key)
            .expect("the base group was just added");
        let base_group = groups.remove(at);
        groups.insert(0, base_group);
    }
    Ok(groups)
}

//! Which runs a report covers and how they group: each name given is a run id (or unique
//! prefix) or a label; runs sharing a label are repeats of one configuration.

use anyhow::Result;

use crate::error::UsageError;

use crate::results::model::RunResult;
use crate::results::store::Store;

fn group_key(run: &RunResult) -> String {
    run.config
        .label
        .clone()
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| run.run_id.clone())
}

fn add(groups: &mut Vec<Group>, run: RunResult) {
    let key = group_key(&run);
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
            add(&mut groups, store.load(&r.id)?);
        }
    } else {
        for name in names {
            for run in store.load_all(name)? {
                add(&mut groups, run);
            }
        }
    }
    if let Some(base) = base {
        let base_runs = store.load_all(base)?;
        let key = group_key(&base_runs[0]);
        if !groups.iter().any(|g| g.name == key) {
            for run in base_runs {
                add(&mut groups, run);
            }
        }
        let at = groups
            .iter()
            .position(|g| g.name == key)
            .expect("the base group was just added");
        let base_group = groups.remove(at);
        groups.insert(0, base_group);
    }
    Ok(groups)
}

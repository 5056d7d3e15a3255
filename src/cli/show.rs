//! `ibench show RUN`: one run's summary, as `ibench run` printed it.

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::output::stdout;
use crate::report::terminal;
use crate::results::model::RunResult;
use crate::results::store::Store;

/// Flags of `ibench show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id, a unique prefix of one, or a label (the latest run with it).
    pub run: String,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Most other runs a note about a shared label lists.
const MAX_LISTED: usize = 5;

/// The run `name` stands for ([`Store::load`]). When `name` is a label several runs share,
/// says on stderr that the newest is the one shown, and which the others are.
pub fn load_named(store: &Store, name: &str) -> Result<RunResult> {
    let run = store.load(name)?;
    if run.run_id != name && run.config.label.as_deref() == Some(name) {
        let others: Vec<String> = store
            .list()?
            .into_iter()
            .rev()
            .filter(|r| r.label.as_deref() == Some(name) && r.id != run.run_id)
            .map(|r| r.id)
            .collect();
        if !others.is_empty() {
            let mut listed = others[..others.len().min(MAX_LISTED)].join(", ");
            if others.len() > MAX_LISTED {
                listed.push_str(&format!(" and {} more", others.len() - MAX_LISTED));
            }
            eprintln!(
                "note: {} runs are labelled {name:?}; this is the newest, {}. The others: {listed} \
                 (name one by its id; `ibench list` lists them all)",
                others.len() + 1,
                run.run_id
            );
        }
    }
    Ok(run)
}

/// Prints the run's summary tables.
pub fn execute(args: &ShowArgs) -> Result<()> {
    let store = Store::open_existing(&args.store.results)?;
    let run = load_named(&store, &args.run)?;
    let id = crate::output::escape::line(&run.run_id);
    stdout::print(&format!(
        "run {id} ({})\n{}{}{}",
        format!("{:?}", run.status).to_lowercase(),
        experiment_line(&run),
        terminal::summary(&run),
        host_features(&run)
    ))
}

/// The run's place in its experiment: cell, repeat, round and position, or in duet the round
/// and its partner (`experiment e1: cell a/b/glibc/s #2, round 2, duet with a/c/glibc/s (run
/// ID)`); empty for a run made outside an experiment.
fn experiment_line(run: &RunResult) -> String {
    let Some(t) = &run.experiment else {
        return String::new();
    };
    let mut line = format!("experiment {}: cell {} #{}", t.name, t.cell, t.repeat);
    if let Some(round) = t.round {
        line.push_str(&format!(", round {round}"));
    }
    if let Some(position) = t.position.filter(|_| t.duet.is_none()) {
        line.push_str(&format!(" position {position}"));
    }
    if let Some(d) = &t.duet {
        line.push_str(&format!(", duet with {}", d.partner));
        if let Some(id) = &d.partner_run {
            line.push_str(&format!(" (run {id})"));
        }
    }
    format!("{}\n", crate::output::escape::line(&line))
}

/// One line on what the run's host could do (`ibench doctor`'s checks at the run's start),
/// naming what it lacked; empty for runs that did not record it.
fn host_features(run: &RunResult) -> String {
    let features = &run.environment.host_features;
    if features.is_empty() {
        return String::new();
    }
    let missing = crate::results::features::missing(features);
    let lacked = if missing.is_empty() {
        "nothing missing".to_string()
    } else {
        format!("missing: {}", missing.join(", "))
    };
    let line = format!(
        "host features: {} of {} available ({lacked}; `ibench doctor` on that host says why)",
        features.len() - missing.len(),
        features.len()
    );
    format!("{}\n", crate::output::escape::line(&line))
}

//! Performance over time (`ibench history`): the runs of one configuration as series of
//! figures per step, their change points, and the CI gate on the newest runs. See
//! docs/history.md.

pub mod analyze;
pub mod changepoint;
pub mod chart;
pub mod render;
pub mod series;

use anyhow::Result;

use crate::results::store::Store;
use changepoint::Params;
use render::History;
use series::Order;

/// The runs `name` names: those labelled so, else those of the experiment cell so named,
/// else those of the experiment so named (all its cells: a versions study over versions),
/// else those of the same configuration as the run with that id (or unique id prefix); and
/// how they were matched.
pub fn select(
    store: &Store,
    name: &str,
) -> Result<(&'static str, Vec<crate::results::model::RunResult>)> {
    let labelled = store.runs_labelled(name)?;
    if !labelled.is_empty() {
        return Ok(("label", labelled));
    }
    let cell = store.runs_of_cell(name)?;
    if !cell.is_empty() {
        return Ok(("cell", cell));
    }
    let experiment = store.runs_of_experiment(name)?;
    if !experiment.is_empty() {
        return Ok(("experiment", experiment));
    }
    let run = store.load(name)?;
    let all = store.complete_runs_of(&run.environment.dbms.name)?;
    Ok(("configuration", series::same_configuration(all, &run)))
}

/// The history of `name` in `store`, ordered by `order`, its change points found with
/// `params` (the store's cache of each series used and renewed).
pub fn build(store: &mut Store, name: &str, order: &Order, params: &Params) -> Result<History> {
    let (matched_by, runs) = select(store, name)?;
    let (infos, runs) = series::order_runs(runs, order)?;
    let order_text = match order {
        Order::Start => "start".to_string(),
        Order::Version => "version".to_string(),
        Order::Tag(k) => format!("tag:{k}"),
    };
    let mut all = series::extract(&runs);
    all.extend(series::canary_series(&runs));
    drop(runs);
    let key_of = |s: &series::Series| {
        format!(
            "{matched_by}\u{1f}{name}\u{1f}{order_text}\u{1f}{}\u{1f}{}",
            s.step, s.figure
        )
    };
    let keys: Vec<String> = all.iter().map(key_of).collect();
    let cached = store.history_cache(&keys)?;
    let (analyzed, renewed) = analyze::analyze(all, params, key_of, &cached);
    // The cache only saves time: a store that cannot take it (read-only) still answers.
    if let Err(e) = store.put_history_cache(&renewed) {
        eprintln!("note: the history cache was not saved: {e:#}");
    }
    Ok(History {
        name: name.to_string(),
        matched_by: matched_by.to_string(),
        order: order_text,
        params: *params,
        runs: infos,
        series: analyzed,
    })
}

//! Experiments: a configuration matrix in one TOML file (targets x configs x allocators x
//! setups x repeats), run cell by cell on freshly initialised managed servers, stored in the
//! results database tagged with the experiment and cell, resumable, and reported at the end
//! against a base cell. See docs/experiments.md.
//!
//! * [`file`] — the experiment file as written (serde, `deny_unknown_fields`, spans for
//!   `file:line`).
//! * [`plan`] — validation and expansion into cells.
//! * [`estimate`] — how long a cell should take.
//! * [`limits`] — bounds on what a file can make ibench build.
//! * [`runner`] — running the cells, resuming, progress, cool-down, cache ratio.
//! * [`duet`] — `--duet`: the two cells of a round at once, each in a child process.

pub mod decided;
pub mod duet;
pub mod estimate;
pub mod file;
pub mod limits;
pub mod plan;
pub mod runner;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::error::UsageError;
use crate::request::WorkloadSpec;
use file::{Problem, Source};
pub use plan::{Cell, Plan};

/// Reads, validates and expands the experiment at `path`, and asks the servers about its
/// settings. Every problem found is one line `file:line: message` of the returned usage error.
/// `allow_server_changes` (`--allow-server-changes`) sets the file's key of that name.
pub fn load(path: &Path, scale: Option<f64>, allow_server_changes: bool) -> Result<Plan> {
    load_with(path, scale, allow_server_changes, true)
}

/// [`load`]; the servers are asked about the settings only when `ask_servers` (a duet's
/// child runs a plan its experiment has checked).
pub fn load_with(
    path: &Path,
    scale: Option<f64>,
    allow_server_changes: bool,
    ask_servers: bool,
) -> Result<Plan> {
    let source = Source::read(path).map_err(|e| {
        UsageError::new(format!(
            "cannot read experiment file {}: {e}",
            path.display()
        ))
    })?;
    let mut parsed = file::parse(&source).map_err(|p| problems(vec![p]))?;
    if allow_server_changes {
        parsed.allow_server_changes = Some(toml::Spanned::new(0..0, true));
    }
    let (plan, mut found) = plan::build(parsed, source, scale);
    // Asking the servers whether they know every setting (each family's own binaries).
    let checks = if ask_servers {
        crate::server::check::check_all(&plan.server_checks)
    } else {
        Vec::new()
    };
    for p in checks {
        let p = Problem {
            at: p.at,
            message: p.message,
        };
        if !found.contains(&p) {
            found.push(p);
        }
    }
    if !found.is_empty() {
        return Err(problems(found));
    }
    Ok(plan)
}

/// One usage error holding one line per problem (`main` prints `error: ` before the first;
/// the others get it here).
fn problems(list: Vec<Problem>) -> anyhow::Error {
    let lines: Vec<String> = list.iter().map(|p| p.to_string()).collect();
    UsageError::new(lines.join("\nerror: ")).into()
}

/// The `--dry-run` listing: every cell in the order it will run (round by round, each round's
/// order rotated) with its estimate (and whether it is complete from an earlier invocation),
/// the total, and how it was estimated.
pub fn dry_run(plan: &Plan, done: &std::collections::BTreeMap<(String, u32), String>) -> String {
    let mut s = String::new();
    let [t, c, a, u] = plan.dimensions;
    // Configs and setups may each apply to some targets only: the combinations are counted.
    let _ = writeln!(
        s,
        "experiment {}: {} cells ({} combinations x {} repeat(s); {t} target(s), {c} \
         config(s), {a} allocator(s), {u} setup(s)), scale {}, base {}",
        plan.name,
        plan.cells.len(),
        plan.cells.len() / (plan.repeats as usize).max(1),
        plan.repeats,
        plan.scale,
        plan.base
    );
    let width = plan.cells.iter().map(|c| c.name().len()).max().unwrap_or(0);
    let mut total = Duration::ZERO;
    let mut todo = 0usize;
    for (i, cell) in plan.cells.iter().enumerate() {
        let state = match done.get(&(cell.label.clone(), cell.repeat)) {
            Some(id) => format!("complete: {id}"),
            None => {
                total += cell.estimate;
                todo += 1;
                format!("~{}", estimate::human(cell.estimate))
            }
        };
        let what = match &cell.workload {
            WorkloadSpec::InsertBenchmark(w) => format!(
                "{} clients x {} rows, {}",
                w.clients,
                w.l0_rows,
                w.steps
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            WorkloadSpec::Micro(m) => format!(
                "micro: {} benchmark(s) x clients {}, {} x {} rows, {} s each",
                m.benchmarks.len(),
                m.clients
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                m.tables,
                m.table_rows,
                m.seconds
            ),
            WorkloadSpec::Tpcc(t) => format!(
                "tpcc: clients {}, {} x {} warehouse(s), {} s each",
                t.clients
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                t.tables,
                t.warehouses,
                t.seconds
            ),
        };
        let what = if cell.external.as_ref().is_some_and(|e| e.drop_existing) {
            format!("{what}, replaces tables ibench did not create (drop_existing)")
        } else {
            what
        };
        let what = match cell.resources.memory_limit {
            Some(m) => format!("{what}, memory cap {} MiB", m >> 20),
            None => what,
        };
        let _ = writeln!(s, "{:>4}  {:<width$}  {what}  {state}", i + 1, cell.name());
    }
    let cooldowns = plan.cooldown * todo.saturating_sub(1) as u32;
    let _ = writeln!(
        s,
        "estimated time: {} for {todo} cell(s) to run{}",
        estimate::human(total + cooldowns),
        if cooldowns.is_zero() {
            String::new()
        } else {
            format!(" (with {} of cool-down)", estimate::human(cooldowns))
        }
    );
    if plan.duet.is_some() {
        let _ = writeln!(
            s,
            "duet: the two cells of each round run at the same time (the estimate is of one at \
             a time)"
        );
    } else if plan.cells.len() > plan.repeats as usize {
        let _ = writeln!(
            s,
            "run order: round by round (a round runs every cell once, round N is repeat #N), \
             the order rotated each round so that every cell is in every position, and after \
             every other cell, equally often"
        );
    }
    let _ = writeln!(s, "{}", estimate::METHOD);
    s
}

/// Writes the report of the experiment's runs (report.html, report.md and report.json in
/// `out_dir`), comparing every label with `base_label`.
pub fn write_report(
    store_path: &Path,
    run_ids: &[String],
    base_label: &str,
    out_dir: &Path,
) -> Result<()> {
    let html = crate::report::render::write_all(store_path, run_ids, Some(base_label), out_dir)?;
    println!(
        "report: {} (also report.md and report.json beside it)",
        html.display()
    );
    Ok(())
}

//! Runs the cells one at a time, each on a freshly initialised managed server (or a fresh
//! SQLite file), with the cool-down between them, and resumes: a cell whose run is `complete`
//! in the results store is not run again; a half-finished one (`running`, `failed`,
//! `interrupted`) is removed from the store and rerun.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Utc;

use super::duet;
use super::estimate::human;
use super::plan::{Cell, Plan};
use crate::dbms::TargetSpec;
use crate::error::{Interrupted, UsageError};
use crate::launch::{RunOptions, run_to_file};
use crate::results::file::ResultsFile;
use crate::results::model::{CacheFit, Duet, ExperimentTag, RunResult, RunStatus};
use crate::results::store::{ExperimentRun, Store};

/// Where and how to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Output directory (results JSON, server logs).
    pub out: PathBuf,
    /// Results database.
    pub store: PathBuf,
    /// No progress bars or step lines; cell lines only.
    pub quiet: bool,
    /// Provenance tags (`--tag`) every run of this invocation is stored with.
    pub tags: crate::request::tags::Tags,
    /// `--canary`: every run probes the host before and after it.
    pub canary: bool,
}

/// The run ids of the cells already complete, by (label, repeat); a usage error when a
/// complete run was made with a different definition of its cell.
pub fn completed(plan: &Plan, runs: &[ExperimentRun]) -> Result<BTreeMap<(String, u32), String>> {
    let mut done = BTreeMap::new();
    let mut problems: Vec<(String, String)> = Vec::new();
    for r in runs.iter().filter(|r| r.status == "complete") {
        let Some(cell) = plan
            .cells
            .iter()
            .find(|c| c.label == r.cell && c.repeat == r.repeat)
        else {
            continue; // not part of this experiment any more
        };
        if r.fingerprint != cell.fingerprint {
            problems.push((cell.name(), r.id.clone()));
            continue;
        }
        done.insert((r.cell.clone(), r.repeat), r.id.clone());
    }
    if let Some((cell, id)) = problems.first() {
        return Err(UsageError::new(format!(
            "{}:{}: {} completed cell(s) of experiment {} in this results database were run \
             with a different definition than the file now gives (settings, workload or scale \
             changed), e.g. {cell} (run {id}); use another --out or another experiment name",
            plan.source.path.display(),
            plan.name_line,
            problems.len(),
            plan.name
        ))
        .into());
    }
    Ok(done)
}

/// A file name part for `label`: `/` becomes `.`.
fn slug(label: &str) -> String {
    label.replace('/', ".")
}

/// Holds an exclusive lock on the output directory while the experiment runs, so that two
/// invocations cannot run the same cells at once (released by the kernel if ibench dies).
struct DirLock {
    _lock: nix::fcntl::Flock<fs::File>,
}

impl DirLock {
    fn take(out: &Path) -> Result<DirLock> {
        let path = out.join(".ibench-experiment.lock");
        // Never through a link, and only ibench's own file (see `safe_fs`).
        let file = crate::safe_fs::open_append(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(DirLock { _lock: lock }),
            Err((_, errno)) => Err(UsageError::new(format!(
                "another ibench experiment is running in {} ({errno}); wait for it or use \
                 another --out",
                out.display()
            ))
            .into()),
        }
    }
}

/// The database size / cache size ratio at the end of the last load step of `run` (the
/// microbenchmarks' `prepare`), on
/// `target`.
pub fn cache_fit(run: &RunResult, target: &TargetSpec) -> Option<CacheFit> {
    let setting = target.kind.cache(&target.params);
    let settings = &run.environment.dbms.settings;
    let raw = settings.get(setting.name)?.trim();
    let cache_bytes = (setting.parse)(raw, settings)?;
    let step = run.steps.iter().rfind(|s| {
        (s.name.starts_with("l.") || s.name == "prepare") && s.status == RunStatus::Complete
    })?;
    let size = &step.efficiency.as_ref()?.db_size;
    let (db_bytes, source) = match (size.dbms_bytes, size.disk_bytes) {
        (Some(b), _) if b > 0 => (b, "dbms"),
        (_, Some(b)) if b > 0 => (b, "disk"),
        _ => return None,
    };
    (cache_bytes > 0).then(|| CacheFit {
        setting: setting.name.to_string(),
        cache_bytes,
        step: step.name.clone(),
        db_bytes,
        db_size_source: source.to_string(),
        ratio: db_bytes as f64 / cache_bytes as f64,
    })
}

fn mib(b: u64) -> String {
    if b >= 10 << 20 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    }
}

/// `27 MiB / 64 MiB = 0.42 (db / rocksdb_block_cache_size after l.i2)`.
pub fn describe_fit(f: &CacheFit) -> String {
    format!(
        "db/cache {:.2} ({} / {} {} after {})",
        f.ratio,
        mib(f.db_bytes),
        f.setting,
        mib(f.cache_bytes),
        f.step
    )
}

/// Sleeps `d`, returning early with an error when interrupted.
fn cool_down(d: Duration, quiet: bool) -> Result<()> {
    if d.is_zero() {
        return Ok(());
    }
    if !quiet {
        eprintln!("cool-down {}", human(d));
    }
    crate::runner::steps::cool_down(d)
}

/// Runs every cell not yet complete, then writes the report. Returns the run ids of the
/// cells, in cell order.
pub fn run(plan: &Plan, options: &Options) -> Result<Vec<String>> {
    if plan.duet.is_some() {
        return run_duet(plan, options);
    }
    let out = &options.out;
    let (_lock, prior, done) = prepare(plan, options)?;
    let total = plan.cells.len();
    let todo: Vec<usize> = (0..total)
        .filter(|&i| !done.contains_key(&(plan.cells[i].label.clone(), plan.cells[i].repeat)))
        .collect();
    announce(plan, &todo, &done, out);
    let mut progress = Progress::new(plan, &done);
    for (n, &i) in todo.iter().enumerate() {
        let cell = &plan.cells[i];
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        if n > 0 {
            cool_down(plan.cooldown, options.quiet)?;
        }
        drop_stale(cell, &prior, options)?;
        progress.announce(plan, i, &todo[n..]);
        let started = Instant::now();
        let result = run_cell(plan, cell, options, None);
        progress.record(i, cell, started.elapsed(), result)?;
    }
    finish(plan, progress, options)
}

/// The end of the experiment: the cells that failed named (exit 1), else the report written;
/// the run ids of the cells, in cell order.
fn finish(plan: &Plan, progress: Progress, options: &Options) -> Result<Vec<String>> {
    if !progress.failed.is_empty() {
        anyhow::bail!(
            "{} of {} cells failed ({}); run the same command again to rerun them",
            progress.failed.len(),
            progress.total,
            progress.failed.join(", ")
        );
    }
    let run_ids: Vec<String> = progress.ids.into_values().collect();
    super::write_report(&options.store, &run_ids, &plan.base, &options.out)?;
    Ok(run_ids)
}

/// [`run`] in duet (`duet.rs`): round by round, the round's two cells at once, each in a
/// child process. A pair is the unit of resuming: a round with both runs complete is not run
/// again; a round with one complete run and not the other runs whole again (the complete
/// run is dropped), since a run made alone or beside another partner is not paired.
fn run_duet(plan: &Plan, options: &Options) -> Result<Vec<String>> {
    let (_lock, prior, done) = prepare(plan, options)?;
    let key = |i: usize| (plan.cells[i].label.clone(), plan.cells[i].repeat);
    let todo: Vec<[usize; 2]> = duet::pairs(plan)
        .into_iter()
        .filter(|p| !p.iter().all(|&i| done.contains_key(&key(i))))
        .collect();
    let estimate = |p: &[usize; 2]| p.iter().map(|&i| plan.cells[i].estimate).max();
    let total: Duration = todo.iter().filter_map(estimate).sum::<Duration>()
        + plan.cooldown * todo.len().saturating_sub(1) as u32;
    eprintln!(
        "experiment {}: {} cells in duet, {} round(s) of two runs at once to run, estimated \
         {}; results in {}",
        plan.name,
        plan.cells.len(),
        todo.len(),
        human(total),
        options.out.display()
    );
    let mut progress = Progress::new(plan, &done);
    let how = duet::Invocation {
        out: &options.out,
        store: &options.store,
        tags: &options.tags,
    };
    for (n, pair) in todo.iter().enumerate() {
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        if n > 0 {
            cool_down(plan.cooldown, options.quiet)?;
        }
        let cells = pair.map(|i| &plan.cells[i]);
        for (&i, cell) in pair.iter().zip(cells) {
            if let Some(id) = done.get(&key(i)) {
                drop_half_pair(cell, id, options)?;
                progress.ids.remove(&i);
            }
            drop_stale(cell, &prior, options)?;
        }
        eprintln!(
            "round {}: {} and {} at once (duet, ~{})",
            cells[0].repeat,
            cells[0].name(),
            cells[1].name(),
            human(estimate(pair).unwrap_or_default())
        );
        let started = Instant::now();
        let ended = duet::run_pair(plan, cells, &how);
        let took = started.elapsed();
        let mut first_error = None;
        for ((&i, cell), end) in pair.iter().zip(cells).zip(ended) {
            let result = match end {
                duet::Ended::Complete => stored_run(plan, cell, options),
                duet::Ended::Interrupted => Err(Interrupted.into()),
                duet::Ended::Failed(why) => Err(anyhow::anyhow!(why)),
            };
            if let Err(e) = progress.record(i, cell, took, result) {
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
    }
    finish(plan, progress, options)
}

/// The complete run of `cell` a duet child stored.
fn stored_run(plan: &Plan, cell: &Cell, options: &Options) -> Result<RunResult> {
    let store = Store::open(&options.store)?;
    let id = store
        .experiment_runs(&plan.name)?
        .into_iter()
        .find(|r| r.cell == cell.label && r.repeat == cell.repeat && r.status == "complete")
        .map(|r| r.id)
        .context("its process ended without a complete run in the results store")?;
    store.load(&id)
}

/// A complete run `id` of `cell` whose partner is not complete: out of the store (its file
/// stays), so that the pair runs again whole.
fn drop_half_pair(cell: &Cell, id: &str, options: &Options) -> Result<()> {
    Store::open(&options.store)?.delete(id)?;
    eprintln!(
        "cell {}: its run {id} is complete but its duet partner's is not; the pair runs again \
         (the run is dropped from the results database, its file stays)",
        cell.name()
    );
    Ok(())
}

/// A duet child (`--duet-cell LABEL --duet-round N`): runs that one cell of round `round`
/// beside its partner, started when the experiment says go (`duet::child_start`).
pub fn run_duet_child(plan: &Plan, label: &str, round: u32, options: &Options) -> Result<()> {
    let plan = if round > plan.repeats {
        plan.with_repeats(round)
    } else {
        plan.clone()
    };
    let cell = plan
        .cells
        .iter()
        .find(|c| c.label == label && c.repeat == round)
        .ok_or_else(|| UsageError::new(format!("--duet-cell {label} #{round} is not a cell")))?;
    let partner = duet::partner(&plan, cell).map(|p| p.label.as_str());
    crate::interrupt::install_handler();
    duet::child_start()?;
    match run_cell(&plan, cell, options, partner) {
        // Saved as interrupted: the experiment says so, once for both runs.
        Err(e) if e.chain().any(|c| c.is::<Interrupted>()) => {
            std::process::exit(128 + crate::interrupt::signal().unwrap_or(libc::SIGINT))
        }
        r => r.map(|_| ()),
    }
}

/// The run ids of the complete cells, by (label, repeat).
type Done = BTreeMap<(String, u32), String>;

/// Makes the output directory ready and takes its lock (held while the returned guard
/// lives); returns the experiment's runs from before and, of those, the complete cells.
fn prepare(plan: &Plan, options: &Options) -> Result<(DirLock, Vec<ExperimentRun>, Done)> {
    let out = &options.out;
    // Cells whose cgroup cannot be made (not root, a controller missing): refused first.
    for cell in &plan.cells {
        crate::server::cgroup::check(&cell.resources)?;
    }
    fs::create_dir_all(out)
        .map_err(|e| UsageError::new(format!("cannot create --out {}: {e}", out.display())))?;
    crate::safe_fs::check_dir(out, "--out")?;
    let lock = DirLock::take(out)?;
    // Cells an earlier ibench left `running` when it was killed: marked abandoned.
    crate::results::abandoned::sweep(out, &options.store);
    crate::server::cgroup::sweep();
    // Cells run one at a time and their data directories are removed after each: room for
    // the largest one is enough.
    if let Some(largest) = plan
        .cells
        .iter()
        .max_by_key(|c| c.workload.estimated_db_bytes())
    {
        crate::launch::check_output(&largest.spec(out), out)?;
    }
    // Every dataset a setup names is there and holds what its cells start from: refused
    // before the first cell runs, not cell by cell.
    for cell in plan.cells.iter().filter(|c| c.dataset.is_some()) {
        let spec = cell.spec(out);
        let name = spec.dataset.as_deref().unwrap_or_default();
        crate::dataset::open(&crate::dataset::store_dir(out), name)?.check_matches(&spec)?;
    }
    let prior = Store::open(&options.store)?.experiment_runs(&plan.name)?;
    let done = completed(plan, &prior)?;
    crate::interrupt::install_handler();
    Ok((lock, prior, done))
}

/// The experiment's first line: its cells, how many are complete from before, the estimate of
/// the cells `todo`, where results go.
fn announce(plan: &Plan, todo: &[usize], done: &Done, out: &Path) {
    let cooldowns = plan.cooldown * todo.len().saturating_sub(1) as u32;
    let estimate: Duration = todo
        .iter()
        .map(|&i| plan.cells[i].estimate)
        .sum::<Duration>()
        + cooldowns;
    eprintln!(
        "experiment {}: {} cells{}, estimated {}; results in {}",
        plan.name,
        plan.cells.len(),
        if done.is_empty() {
            String::new()
        } else {
            format!(" ({} complete from before, resuming)", done.len())
        },
        human(estimate),
        out.display()
    );
}

/// Half-finished attempts of `cell` (in `prior`): out of the store, and their data
/// directories off the disk; their results files and logs stay.
fn drop_stale(cell: &Cell, prior: &[ExperimentRun], options: &Options) -> Result<()> {
    let stale: Vec<&ExperimentRun> = prior
        .iter()
        .filter(|r| r.cell == cell.label && r.repeat == cell.repeat && r.status != "complete")
        .collect();
    if stale.is_empty() {
        return Ok(());
    }
    let out = &options.out;
    let mut store = Store::open(&options.store)?;
    for r in stale {
        store.delete(&r.id)?;
        let _ = fs::remove_dir_all(out.join(format!("{}.server", r.id)));
        let _ = fs::remove_dir_all(out.join(format!("{}.data", r.id)));
        if !options.quiet {
            eprintln!(
                "cell {}: rerunning; the earlier attempt {} ({}) is dropped",
                cell.name(),
                r.id,
                r.status
            );
        }
    }
    Ok(())
}

/// How the run of the cells goes: the run ids so far (by cell index), the cells that failed,
/// and the time taken against the time estimated.
struct Progress {
    total: usize,
    ids: BTreeMap<usize, String>,
    failed: Vec<String>,
    spent: Duration,
    estimated_spent: Duration,
}

impl Progress {
    /// No cell run yet; the cells `done` from before have their run ids.
    fn new(plan: &Plan, done: &Done) -> Progress {
        let ids = plan
            .cells
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, done.get(&(c.label.clone(), c.repeat))?.clone())))
            .collect();
        Progress {
            total: plan.cells.len(),
            ids,
            failed: Vec::new(),
            spent: Duration::ZERO,
            estimated_spent: Duration::ZERO,
        }
    }

    /// How much longer than estimated the cells so far took (1 before any).
    fn factor(&self) -> f64 {
        if self.estimated_spent.is_zero() {
            1.0
        } else {
            self.spent.as_secs_f64() / self.estimated_spent.as_secs_f64()
        }
    }

    /// The line of cell `i`, the first of the cells still to run (`rest`): its estimate and
    /// the experiment's, rescaled by how long the cells so far took.
    fn announce(&self, plan: &Plan, i: usize, rest: &[usize]) {
        let factor = self.factor();
        let remaining: Duration = rest
            .iter()
            .map(|&j| plan.cells[j].estimate.mul_f64(factor))
            .sum::<Duration>()
            + plan.cooldown * (rest.len() - 1) as u32;
        let finish =
            chrono::Local::now() + chrono::Duration::from_std(remaining).unwrap_or_default();
        let cell = &plan.cells[i];
        eprintln!(
            "cell {}/{}: {} (~{}; experiment ETA {}, done ~{})",
            i + 1,
            self.total,
            cell.name(),
            human(cell.estimate.mul_f64(factor)),
            human(remaining),
            finish.format("%H:%M")
        );
    }

    /// Records how cell `i` ended after `took`; an interruption ends the experiment.
    fn record(
        &mut self,
        i: usize,
        cell: &Cell,
        took: Duration,
        result: Result<RunResult>,
    ) -> Result<()> {
        let total = self.total;
        self.spent += took;
        self.estimated_spent += cell.estimate;
        match result {
            Ok(run) => {
                let fit = run
                    .experiment
                    .as_ref()
                    .and_then(|t| t.cache.as_ref())
                    .map(|f| format!(", {}", describe_fit(f)))
                    .unwrap_or_default();
                eprintln!(
                    "cell {}/{total}: {} complete in {}: run {}{fit}",
                    i + 1,
                    cell.name(),
                    human(took),
                    run.run_id
                );
                self.ids.insert(i, run.run_id);
            }
            Err(e) if e.chain().any(|c| c.is::<Interrupted>()) => {
                eprintln!(
                    "cell {}/{total}: {} interrupted; run the same command again to continue",
                    i + 1,
                    cell.name()
                );
                return Err(e);
            }
            Err(e) => {
                eprintln!("cell {}/{total}: {} failed: {e:#}", i + 1, cell.name());
                self.failed.push(cell.name());
            }
        }
        Ok(())
    }
}

/// Runs one cell (in duet beside the cell `partner`, recorded with the run); the run as saved
/// when it completed, else the error.
fn run_cell(
    plan: &Plan,
    cell: &Cell,
    options: &Options,
    partner: Option<&str>,
) -> Result<RunResult> {
    let out = &options.out;
    let stem = format!(
        "{}-r{}-{}",
        slug(&cell.label),
        cell.repeat,
        Utc::now().format("%Y%m%dT%H%M%S")
    );
    let store = Store::open(&options.store)?;
    let file = ResultsFile::create(out, &stem)?.with_store(store);
    let mut spec = cell.spec(out);
    spec.tags = options.tags.clone();
    spec.canary = options.canary;
    let tag = ExperimentTag {
        name: plan.name.clone(),
        cell: cell.label.clone(),
        repeat: cell.repeat,
        repeats: plan.repeats,
        round: Some(cell.repeat),
        position: Some(cell.position),
        base: plan.base.clone(),
        fingerprint: cell.fingerprint.clone(),
        cache: None,
        duet: partner.map(|p| Duet {
            partner: p.to_string(),
            partner_run: None,
        }),
    };
    let external = cell.external.as_ref();
    let run_options = RunOptions {
        quiet: options.quiet,
        summary: false,
        experiment: Some(tag),
        // A server given by URL: its processes and data directory for the host figures.
        server_pid: match external {
            Some(e) => e.pid()?,
            None => None,
        },
        data_dir: external.and_then(|e| e.data_dir.clone()),
        duet: partner.is_some(),
        ..RunOptions::default()
    };
    let (run, outcome) = run_to_file(&spec, &file, &run_options);
    file.discard_if_unsaved();
    outcome?;
    let mut run = run.context("the run ended without results")?;
    let fit = cache_fit(&run, &cell.target);
    if let Some(tag) = run.experiment.as_mut() {
        tag.cache = fit;
        if let Some(d) = tag.duet.as_mut() {
            d.partner_run = partner_run(options, plan, &d.partner, cell.repeat);
        }
    }
    file.save(&run)?;
    Ok(run)
}

/// The run id of the cell `partner`'s run in round `round` (it started with this one, and the
/// experiment dropped its earlier attempts first), when the store has it.
fn partner_run(options: &Options, plan: &Plan, partner: &str, round: u32) -> Option<String> {
    let runs = Store::open(&options.store)
        .ok()?
        .experiment_runs(&plan.name)
        .ok()?;
    runs.into_iter()
        .find(|r| r.cell == partner && r.repeat == round)
        .map(|r| r.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_have_no_slashes() {
        assert_eq!(slug("a/b/glibc/s"), "a.b.glibc.s");
    }
}

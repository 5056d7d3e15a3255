//! From the parsed file to the list of cells: names resolved, configs merged along `extends`,
//! sizes scaled, every value checked. Problems are collected (not stopped at) so that the user
//! sees all of them at once, each as `file:line: message`.
//!
//! * `problems.rs` — collecting problems; names.
//! * `targets.rs` — a target's DBMS parameters, binaries, version.
//! * `configs.rs` — configs along `extends`: fragments and options with their places.
//! * `setups.rs` — each setup's workload (assembled and checked by the spec) and cache size.
//! * `cells.rs` — the matrix and each cell's target, server and settings.
//! * `fingerprint.rs` — what defines a cell's results, hashed.
//! * `order.rs` — the order of the cells in each round (a balanced Latin square), the rounds
//!   laid out in it, and `Plan::with_repeats` (more rounds of the same cells).

mod cells;
mod configs;
mod fingerprint;
mod order;
mod problems;
mod resources;
mod setups;
mod targets;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_micro;
#[cfg(test)]
mod tests_url;
mod url;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::file::{
    ConfigTable, ExperimentFile, Problem, SetupTable, Source, TargetTable, WorkloadTable,
};
use crate::dbms::{StatementMode, TargetSpec};
use crate::request::{Malloc, RunSpec, ServerSpec, WorkloadSpec};
pub use crate::server::SettingsCheck;
use crate::server::{Refusal, ServerSettings};
use problems::{Problems, check_name, unique};
pub use setups::{estimated_loaded_bytes, key_name, parse_size};
pub use url::External;

/// Largest number of cells an experiment may have.
pub const MAX_CELLS: usize = 10_000;

/// A validated experiment: its cells in run order.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Experiment name.
    pub name: String,
    /// Line of the name in the experiment file.
    pub name_line: usize,
    /// The experiment file.
    pub source: Source,
    /// Row and query-time multiplier in effect.
    pub scale: f64,
    /// Runs per cell.
    pub repeats: u32,
    /// `max_repeats`: rounds until decided, at most this many (`experiment/decided.rs`);
    /// `None` to run `repeats` rounds only.
    pub max_repeats: Option<u32>,
    /// Pause between cells.
    pub cooldown: Duration,
    /// Label of the base cell.
    pub base: String,
    /// Targets, configs, allocators and setups in the matrix.
    pub dimensions: [usize; 4],
    /// Every run, in run order: every cell once (round 1, the file's order), then every cell
    /// again (round 2, the order rotated: see `order.rs`), ...
    pub cells: Vec<Cell>,
    /// Server configurations to check against the servers themselves.
    pub server_checks: Vec<SettingsCheck>,
    /// Duet (`experiment/duet.rs`): where it was asked for (the file's `file:line`, or
    /// `--duet`); `None` to run the cells one at a time.
    pub duet: Option<String>,
}

/// One run of the matrix: target x config x allocator x setup x repeat.
#[derive(Clone, Debug)]
pub struct Cell {
    /// `target/config/allocator/setup`: the run's label, shared by the repeats.
    pub label: String,
    /// Repeat number, 1-based: also the round it runs in (every cell runs once a round).
    pub repeat: u32,
    /// Position within its round, 1-based.
    pub position: u32,
    /// The DBMS and its parameters (no path or URL yet: a scratch database, or the managed
    /// server, provides it).
    pub target: TargetSpec,
    /// How to start the managed server (none for an embedded DBMS).
    pub server: Option<ServerSpec>,
    /// The workload's parameters, scaled.
    pub workload: WorkloadSpec,
    /// Run the maintenance pause.
    pub maintenance: bool,
    /// Prepared statements or plain SQL.
    pub statements: StatementMode,
    /// Progress line interval, seconds.
    pub report_interval_s: u64,
    /// Seconds of pause before every step but the first (`[workload] cooldown`).
    pub cooldown_s: u64,
    /// The dataset the run starts from (`--from-dataset`), if any.
    pub dataset: Option<String>,
    /// Hash of everything that defines the cell's results.
    pub fingerprint: String,
    /// Estimated duration, server start and stop included.
    pub estimate: Duration,
    /// Memory cap, IO limits, CPUs, OS cache mode (the setup's).
    pub resources: crate::request::Resources,
    /// A server given by URL (its URL is the target's): its pid file and data directory.
    pub external: Option<External>,
    /// The run may change the server's settings (`allow_server_changes`; a URL target's).
    pub allow_server_changes: bool,
    /// No once-a-second sampling during steps (`no_sampling`).
    pub no_sampling: bool,
}

impl Cell {
    /// `label #repeat`.
    pub fn name(&self) -> String {
        format!("{} #{}", self.label, self.repeat)
    }

    /// The run's spec; `out` is the experiment's output directory. An embedded DBMS gets a
    /// scratch database (its path is set when the run starts).
    pub fn spec(&self, out: &Path) -> RunSpec {
        RunSpec {
            scratch_database: self.target.kind.embedded(),
            target: self.target.clone(),
            keep_data: false,
            out_dir: out.to_path_buf(),
            label: Some(self.label.clone()),
            report_interval_s: self.report_interval_s,
            maintenance: self.maintenance,
            workload: self.workload.clone(),
            server: self.server.clone(),
            statements: self.statements,
            drop_existing: self.external.as_ref().is_some_and(|e| e.drop_existing),
            write_existing: false,
            allow_server_changes: self.allow_server_changes,
            client_threads: None,
            client_io: None,
            per_client_series: false,
            prepare_only: false,
            dataset: self.dataset.clone(),
            tags: Default::default(),
            resources: self.resources.clone(),
            cooldown_s: self.cooldown_s,
            no_sampling: self.no_sampling,
            canary: false,
        }
    }
}

impl Cell {
    /// Approximate heap and inline size of the cell (see `limits.rs`).
    pub fn bytes(&self) -> usize {
        let c = self;
        let pairs = |v: &[(String, String)]| {
            v.iter()
                .map(|(k, v)| k.len() + v.len() + 2 * std::mem::size_of::<String>())
                .sum::<usize>()
        };
        let server = c.server.as_ref().map_or(0, |s| {
            s.config_text.as_ref().map_or(0, String::len)
                + pairs(&s.options)
                + s.bin_dir.as_ref().map_or(0, |p| p.as_os_str().len())
                + s.config_file.as_ref().map_or(0, |p| p.as_os_str().len())
        });
        std::mem::size_of::<Cell>()
            + c.label.len()
            + c.fingerprint.len()
            + serde_json::to_string(&c.target.params).map_or(0, |p| p.len())
            + server
            + match &c.workload {
                WorkloadSpec::InsertBenchmark(w) => {
                    w.steps.len() * std::mem::size_of::<crate::request::Step>()
                        + w.table_prefix.len()
                }
                WorkloadSpec::Micro(m) => {
                    m.benchmarks.iter().map(String::len).sum::<usize>()
                        + m.clients.len() * std::mem::size_of::<usize>()
                }
                WorkloadSpec::Tpcc(t) => t.clients.len() * std::mem::size_of::<usize>(),
            }
    }
}

/// Builds the plan from the parsed file (`scale_override` is `--scale`), with every problem
/// found; the plan is only usable when there are none.
pub fn build(
    file: ExperimentFile,
    source: Source,
    scale_override: Option<f64>,
) -> (Plan, Vec<Problem>) {
    let mut p = Problems {
        source: &source,
        list: Vec::new(),
    };
    let dir = source
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    check_name(&mut p, "experiment", &file.name);
    let (scale, repeats, cooldown) = top_level(&mut p, &file, scale_override);
    let allocators = allocators(&mut p, &file);
    let targets = check_targets(&mut p, &file, &allocators, &dir);
    let default_config = default_config();
    let configs = given_or(&file.configs, &default_config);
    let resolved = resolve_configs(&mut p, &file, &configs, &dir);
    let no_workload = WorkloadTable::default();
    let (workload, workload_at) = workload(&p, &file, &no_workload);
    let default_setup = default_setup();
    let setup_tables = given_or(&file.setups, &default_setup);
    let setups = check_setups(
        &mut p,
        (workload, &workload_at),
        &setup_tables,
        &file.targets,
        scale,
        &dir,
    );
    check_workload(&mut p, &file, workload, &workload_at, &targets);

    // Cells: every combination, then the repeats.
    let labels = cells::labels(
        &mut p,
        &file,
        &configs,
        &resolved,
        &allocators,
        &setup_tables,
        repeats,
        MAX_CELLS,
    );
    let base = base_cell(&mut p, &file, &labels);
    let matrix = cells::Matrix {
        file: &file,
        workload,
        configs: &configs,
        resolved: &resolved,
        allocators: &allocators,
        setups: &setups,
        targets: &targets,
        allow: file
            .allow_server_changes
            .as_ref()
            .is_some_and(|a| *a.get_ref()),
    };
    let (cells_once, server_checks) = cells::build(&mut p, &matrix, &labels);
    let cells = repeat(&mut p, &cells_once, repeats);
    let max_repeats = max_repeats(&mut p, &file, repeats);
    let problems = p.list;
    let duet = file
        .duet
        .as_ref()
        .filter(|d| *d.get_ref())
        .map(|d| source.at_span(d.span()));
    let plan = Plan {
        name_line: source.line_of(file.name.span().start),
        name: file.name.clone().into_inner(),
        source,
        scale,
        repeats,
        max_repeats,
        cooldown,
        base,
        dimensions: [
            file.targets.len(),
            configs.len(),
            allocators.len(),
            setups.len(),
        ],
        cells,
        server_checks,
        duet,
    };
    (plan, problems)
}

/// The tables given, else the one `default` (a file without `[[config]]` has the config
/// `default`, one without `[[setup]]` the setup `default`).
fn given_or<'a, T>(given: &'a [T], default: &'a T) -> Vec<&'a T> {
    if given.is_empty() {
        vec![default]
    } else {
        given.iter().collect()
    }
}

/// The targets, named once each and checked; an allocator other than glibc cannot apply to
/// an embedded one.
fn check_targets(
    p: &mut Problems<'_>,
    file: &ExperimentFile,
    allocators: &[Spanned<Malloc>],
    dir: &Path,
) -> Vec<targets::Target> {
    if file.targets.is_empty() {
        p.push(
            p.file_start(),
            "no [[target]]: name at least one (dbms = \"mariadb\", \"postgres\" or \"sqlite\")",
        );
    }
    for t in &file.targets {
        check_name(p, "target", &t.name);
    }
    unique(p, "target", file.targets.iter().map(|t| &t.name));
    let targets: Vec<targets::Target> = file
        .targets
        .iter()
        .map(|t| targets::check(p, t, dir))
        .collect();
    for (t, checked) in file.targets.iter().zip(&targets) {
        let why = match (&checked.external, checked.family) {
            (Some(_), _) => "is a server given by url, which ibench does not start",
            (None, None) => "runs inside ibench",
            (None, Some(_)) => continue,
        };
        for a in allocators.iter().filter(|a| *a.get_ref() != Malloc::Glibc) {
            p.push(
                p.source.at_span(url::kind_span(t)),
                format!(
                    "target {} ({}) {why}, so allocator {} cannot apply (use a separate \
                     experiment for the allocators of managed server targets)",
                    t.name.get_ref(),
                    checked.kind,
                    a.get_ref().name()
                ),
            );
        }
    }
    targets
}

/// The config a file without `[[config]]` has: `default`, empty.
fn default_config() -> ConfigTable {
    ConfigTable {
        name: Spanned::new(0..0, "default".to_string()),
        description: None,
        extends: None,
        targets: None,
        file: None,
        text: None,
        options: BTreeMap::new(),
    }
}

/// The configs, named once each, resolved along `extends` (by name), each naming only
/// targets that are defined.
fn resolve_configs(
    p: &mut Problems<'_>,
    file: &ExperimentFile,
    configs: &[&ConfigTable],
    dir: &Path,
) -> BTreeMap<String, configs::Resolved> {
    for c in configs {
        check_name(p, "config", &c.name);
    }
    unique(p, "config", configs.iter().map(|c| &c.name));
    let target_names: BTreeSet<&str> = file
        .targets
        .iter()
        .map(|t| t.name.get_ref().as_str())
        .collect();
    let mut resolved = BTreeMap::new();
    for c in configs {
        let source = p.source;
        let r = configs::resolve(p, c, configs, dir, source, &mut Vec::new());
        let named = c.targets.iter().flatten();
        undefined_targets(p, ("config", c.name.get_ref()), named, &target_names);
        resolved.insert(c.name.get_ref().clone(), r);
    }
    resolved
}

/// One problem per name in `named` (a config's or setup's `targets`, `owner`: what and which)
/// that is not one of `defined`.
fn undefined_targets<'t>(
    p: &mut Problems<'_>,
    owner: (&str, &str),
    named: impl Iterator<Item = &'t Spanned<String>>,
    defined: &BTreeSet<&str>,
) {
    for t in named {
        if !defined.contains(t.get_ref().as_str()) {
            let (what, name) = owner;
            p.at(
                t,
                format!(
                    "{what} {name} names target {:?}, which is not defined (targets: {}{})",
                    t.get_ref(),
                    defined
                        .iter()
                        .take(6)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", "),
                    if defined.len() > 6 { ", ..." } else { "" }
                ),
            );
        }
    }
}

/// `[workload]` (`none` when absent) and where problems with it point (its table, else the
/// file's start).
fn workload<'f>(
    p: &Problems<'_>,
    file: &'f ExperimentFile,
    none: &'f WorkloadTable,
) -> (&'f WorkloadTable, String) {
    match &file.workload {
        Some(w) => (w.get_ref(), p.source.at_span(w.span())),
        None => (none, p.file_start()),
    }
}

/// The setup a file without `[[setup]]` has: `default`, the workload as `[workload]` gives it.
fn default_setup() -> SetupTable {
    SetupTable {
        name: Spanned::new(0..0, "default".to_string()),
        description: None,
        targets: None,
        clients: None,
        table_rows: None,
        rows_per_client: None,
        l1_rows: None,
        l2_rows: None,
        dbms_cache: None,
        data_dir: None,
        pooler: None,
        pool_size: None,
        pool_mode: None,
        dataset: None,
        memory_limit: None,
        io_limit: None,
        os_cache: None,
        server_cpus: None,
        replicas: None,
        sync_replicas: None,
        read_from: None,
        galera: None,
        client_nodes: None,
        on_node_failure: None,
        client_cpus: None,
        post_write_pause: None,
        random_pk_rows: None,
        scan_clients: None,
        no_sampling: None,
    }
}

/// The setups, named once each: each one's workload (scaled), cache, data directory and
/// pooler, checked. Problems with the default setup point at `[workload]` (`workload_at`).
fn check_setups(
    p: &mut Problems<'_>,
    (workload, workload_at): (&WorkloadTable, &str),
    tables: &[&SetupTable],
    targets: &[TargetTable],
    scale: f64,
    dir: &Path,
) -> Vec<setups::Setup> {
    let target_names: BTreeSet<&str> = targets.iter().map(|t| t.name.get_ref().as_str()).collect();
    for s in tables {
        check_name(p, "setup", &s.name);
        let named = s.targets.iter().flatten();
        undefined_targets(p, ("setup", s.name.get_ref()), named, &target_names);
        if s.targets.as_ref().is_some_and(Vec::is_empty) {
            p.at(
                &s.name,
                format!(
                    "setup {}: targets = [] applies it to no target: name some, or leave \
                     targets out for all",
                    s.name.get_ref()
                ),
            );
        }
    }
    unique(p, "setup", tables.iter().map(|s| &s.name));
    tables
        .iter()
        .map(|s| {
            let at = if s.name.span() == (0..0) {
                workload_at.to_string()
            } else {
                p.source.at_span(s.name.span())
            };
            let mut setup = setups::setup(p, workload, s, scale, at);
            setup.data_dir = targets::data_dir(p, s.data_dir.as_ref(), dir);
            setup.pooler = setups::pooler(p, s, &setup.workload);
            setup.resources = resources::resources(p, s, &setup.workload);
            setup
        })
        .collect()
}

/// What `[workload]` asks of every target: a progress interval in range, and combined index
/// DDL only where the target supports it.
fn check_workload(
    p: &mut Problems<'_>,
    file: &ExperimentFile,
    workload: &WorkloadTable,
    workload_at: &str,
    targets: &[targets::Target],
) {
    for (key, value) in [
        ("report_interval", workload.report_interval),
        ("cooldown", workload.cooldown),
    ] {
        if let Some(r) = value
            && r > crate::request::MAX_SECONDS
        {
            p.push(
                workload_at.to_string(),
                format!("{key} {r} is out of range"),
            );
        }
    }
    if workload.index_ddl != Some(crate::request::IndexDdl::Combined) {
        return;
    }
    for (t, checked) in file.targets.iter().zip(targets) {
        if !checked.kind.combined_index_ddl(&checked.params) {
            p.push(
                workload_at.to_string(),
                format!(
                    "index_ddl combined is not supported by target {} (InnoDB only)",
                    t.name.get_ref()
                ),
            );
        }
    }
}

/// Every repeat of the cells built once, round by round (`order::rounds`); none when the
/// copies would take more memory than the limit (each cell holds its own copy of its
/// settings).
fn repeat(p: &mut Problems<'_>, once: &[Cell], repeats: u32) -> Vec<Cell> {
    let once_bytes: usize = once.iter().map(Cell::bytes).sum();
    let too_large = super::limits::too_large(once_bytes, repeats);
    if let Some(msg) = &too_large {
        p.push(p.file_start(), msg.clone());
    }
    let built = if too_large.is_some() { 0 } else { repeats };
    order::rounds(once, built)
}

/// `max_repeats`, checked: 2..=1000 and at least `repeats`.
fn max_repeats(p: &mut Problems<'_>, file: &ExperimentFile, repeats: u32) -> Option<u32> {
    let m = file.max_repeats.as_ref()?;
    let v = *m.get_ref();
    if !(2..=1000).contains(&v) || v < repeats {
        p.at(
            m,
            format!("max_repeats {v} is out of range: expected 2..=1000 and at least repeats ({repeats})"),
        );
        return None;
    }
    Some(v)
}

/// `scale` (`--scale` wins), `repeats` and `cooldown_seconds`, checked.
fn top_level(
    p: &mut Problems<'_>,
    file: &ExperimentFile,
    scale_override: Option<f64>,
) -> (f64, u32, Duration) {
    let scale = match (scale_override, &file.scale) {
        (Some(s), _) => s,
        (None, Some(s)) => *s.get_ref(),
        (None, None) => 1.0,
    };
    if !(scale.is_finite() && scale > 0.0 && scale <= 1000.0) {
        match &file.scale {
            Some(s) if scale_override.is_none() => p.at(
                s,
                format!("scale {scale} is out of range: expected > 0 and <= 1000"),
            ),
            _ => p.push(
                "--scale".to_string(),
                format!("{scale} is out of range: expected > 0 and <= 1000"),
            ),
        }
    }
    let mut repeats = file.repeats.as_ref().map(|r| *r.get_ref()).unwrap_or(1);
    if let Some(r) = &file.repeats
        && !(1..=1000).contains(r.get_ref())
    {
        p.at(
            r,
            format!("repeats {} is out of range: expected 1..=1000", r.get_ref()),
        );
        // Nothing is built for a plan that cannot run.
        repeats = 0;
    }
    let mut cooldown = file
        .cooldown_seconds
        .as_ref()
        .map(|c| *c.get_ref())
        .unwrap_or(0);
    if let Some(c) = &file.cooldown_seconds
        && cooldown > 86_400
    {
        p.at(
            c,
            format!("cooldown_seconds {cooldown} is out of range: expected at most 86400"),
        );
        cooldown = 0;
    }
    (scale, repeats, Duration::from_secs(cooldown))
}

/// The allocators (glibc when none is given), each available and listed once.
fn allocators(p: &mut Problems<'_>, file: &ExperimentFile) -> Vec<Spanned<Malloc>> {
    let allocators: Vec<Spanned<Malloc>> = match &file.allocators {
        Some(a) if a.get_ref().is_empty() => {
            p.at(
                a,
                "allocators is empty: name at least one (glibc, jemalloc, tcmalloc)",
            );
            Vec::new()
        }
        Some(a) => a.get_ref().clone(),
        None => vec![Spanned::new(0..0, Malloc::Glibc)],
    };
    let mut seen = BTreeSet::new();
    for a in &allocators {
        let name = a.get_ref().name();
        if !seen.insert(name) {
            p.at(a, format!("allocator {name} is listed twice"));
        }
        let malloc = ServerSettings {
            malloc: Some(*a.get_ref()),
            ..Default::default()
        };
        for problem in malloc.check(&mut |_, _| {}) {
            if let Refusal::Said(msg) = problem.refusal {
                p.at(a, format!("allocator {msg}"));
            }
        }
    }
    allocators
}

/// The base cell: as given (it must be a cell), else the first.
fn base_cell(p: &mut Problems<'_>, file: &ExperimentFile, labels: &[cells::Label]) -> String {
    match &file.base {
        Some(b) => {
            if !labels.iter().any(|l| &l.label == b.get_ref()) {
                let known: Vec<&str> = labels.iter().take(6).map(|l| l.label.as_str()).collect();
                p.at(
                    b,
                    format!(
                        "base {:?} is not a cell of this experiment: cells are \
                         target/config/allocator/setup, e.g. {}{}",
                        b.get_ref(),
                        known.join(", "),
                        if labels.len() > known.len() {
                            ", ..."
                        } else {
                            ""
                        }
                    ),
                );
            }
            b.get_ref().clone()
        }
        None => labels.first().map(|l| l.label.clone()).unwrap_or_default(),
    }
}

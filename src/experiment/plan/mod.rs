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

mod cells;
mod configs;
mod fingerprint;
mod problems;
mod setups;
mod targets;
#[cfg(test)]
mod tests_micro;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::file::{ConfigTable, ExperimentFile, Problem, SetupTable, Source, WorkloadTable};
use crate::dbms::{StatementMode, TargetSpec};
pub use crate::server::SettingsCheck;
use crate::server::{Refusal, ServerSettings};
use crate::spec::{Malloc, RunSpec, ServerSpec, WorkloadSpec};
use problems::{Problems, check_name, unique};
pub use setups::{estimated_loaded_bytes, key_name, parse_size};

/// Largest number of cells an experiment may have.
pub const MAX_CELLS: usize = 10_000;

/// A validated experiment: its cells in run order.
#[derive(Debug)]
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
    /// Pause between cells.
    pub cooldown: Duration,
    /// Label of the base cell.
    pub base: String,
    /// Targets, configs, allocators and setups in the matrix.
    pub dimensions: [usize; 4],
    /// Every run, in order: repeat 1 of every cell, then repeat 2, ...
    pub cells: Vec<Cell>,
    /// Server configurations to check against the servers themselves.
    pub server_checks: Vec<SettingsCheck>,
}

/// One run of the matrix: target x config x allocator x setup x repeat.
#[derive(Clone, Debug)]
pub struct Cell {
    /// `target/config/allocator/setup`: the run's label, shared by the repeats.
    pub label: String,
    /// Repeat number, 1-based.
    pub repeat: u32,
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
    /// Hash of everything that defines the cell's results.
    pub fingerprint: String,
    /// Estimated duration, server start and stop included.
    pub estimate: Duration,
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
            drop_existing: false,
            write_existing: false,
            allow_server_changes: false,
            client_threads: None,
            client_io: None,
            per_client_series: false,
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
                    w.steps.len() * std::mem::size_of::<crate::spec::Step>() + w.table_prefix.len()
                }
                WorkloadSpec::Micro(m) => {
                    m.benchmarks.iter().map(String::len).sum::<usize>()
                        + m.clients.len() * std::mem::size_of::<usize>()
                }
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

    // Targets.
    if file.targets.is_empty() {
        p.push(
            p.file_start(),
            "no [[target]]: name at least one (dbms = \"mariadb\", \"postgres\" or \"sqlite\")",
        );
    }
    for t in &file.targets {
        check_name(&mut p, "target", &t.name);
    }
    unique(&mut p, "target", file.targets.iter().map(|t| &t.name));
    let targets: Vec<targets::Target> = file
        .targets
        .iter()
        .map(|t| targets::check(&mut p, t, &dir))
        .collect();
    for (t, checked) in file.targets.iter().zip(&targets) {
        if checked.family.is_none() {
            for a in &allocators {
                if *a.get_ref() != Malloc::Glibc {
                    p.at(
                        &t.dbms,
                        format!(
                            "target {}: {} runs inside ibench, so allocator {} cannot apply \
                             (use a separate experiment for the allocators of server targets)",
                            t.name.get_ref(),
                            t.dbms.get_ref(),
                            a.get_ref().name()
                        ),
                    );
                }
            }
        }
    }

    // Configs.
    let default_config;
    let configs: Vec<&ConfigTable> = if file.configs.is_empty() {
        default_config = ConfigTable {
            name: Spanned::new(0..0, "default".to_string()),
            description: None,
            extends: None,
            targets: None,
            file: None,
            text: None,
            options: BTreeMap::new(),
        };
        vec![&default_config]
    } else {
        file.configs.iter().collect()
    };
    for c in &configs {
        check_name(&mut p, "config", &c.name);
    }
    unique(&mut p, "config", configs.iter().map(|c| &c.name));
    let target_names: BTreeSet<&str> = file
        .targets
        .iter()
        .map(|t| t.name.get_ref().as_str())
        .collect();
    let mut resolved = BTreeMap::new();
    for c in &configs {
        let r = configs::resolve(&mut p, c, &configs, &dir, &source, &mut Vec::new());
        for t in c.targets.iter().flatten() {
            if !target_names.contains(t.get_ref().as_str()) {
                p.at(
                    t,
                    format!(
                        "config {} names target {:?}, which is not defined (targets: {}{})",
                        c.name.get_ref(),
                        t.get_ref(),
                        target_names
                            .iter()
                            .take(6)
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", "),
                        if target_names.len() > 6 { ", ..." } else { "" }
                    ),
                );
            }
        }
        resolved.insert(c.name.get_ref().clone(), r);
    }

    // Workload and setups.
    let empty_workload = WorkloadTable::default();
    let workload = file
        .workload
        .as_ref()
        .map(|w| w.get_ref())
        .unwrap_or(&empty_workload);
    let workload_at = file
        .workload
        .as_ref()
        .map(|w| source.at_span(w.span()))
        .unwrap_or_else(|| p.file_start());
    let default_setup;
    let setup_tables: Vec<&SetupTable> = if file.setups.is_empty() {
        default_setup = SetupTable {
            name: Spanned::new(0..0, "default".to_string()),
            description: None,
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
        };
        vec![&default_setup]
    } else {
        file.setups.iter().collect()
    };
    for s in &setup_tables {
        check_name(&mut p, "setup", &s.name);
    }
    unique(&mut p, "setup", setup_tables.iter().map(|s| &s.name));
    let setups: Vec<setups::Setup> = setup_tables
        .iter()
        .map(|s| {
            let at = if s.name.span() == (0..0) {
                workload_at.clone()
            } else {
                source.at_span(s.name.span())
            };
            let mut setup = setups::setup(&mut p, workload, s, scale, at);
            setup.data_dir = targets::data_dir(&mut p, s.data_dir.as_ref(), &dir);
            setup.pooler = setups::pooler(&mut p, s, &setup.workload);
            setup
        })
        .collect();
    if let Some(r) = workload.report_interval
        && r > crate::spec::MAX_SECONDS
    {
        p.push(
            workload_at.clone(),
            format!("report_interval {r} is out of range"),
        );
    }
    if workload.index_ddl == Some(crate::spec::IndexDdl::Combined) {
        for (t, checked) in file.targets.iter().zip(&targets) {
            if !t.dbms.get_ref().combined_index_ddl(&checked.params) {
                p.push(
                    workload_at.clone(),
                    format!(
                        "index_ddl combined is not supported by target {} (InnoDB only)",
                        t.name.get_ref()
                    ),
                );
            }
        }
    }

    // Cells: every combination, then the repeats.
    let setup_names: Vec<&Spanned<String>> = setup_tables.iter().map(|s| &s.name).collect();
    let labels = cells::labels(
        &mut p,
        &file,
        &configs,
        &resolved,
        &allocators,
        &setup_names,
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
    };
    let (cells_once, server_checks) = cells::build(&mut p, &matrix, &labels);
    // Each cell holds its own copy of its settings: their memory is bounded too.
    let once_bytes: usize = cells_once.iter().map(Cell::bytes).sum();
    let too_large = super::limits::too_large(once_bytes, repeats);
    if let Some(msg) = &too_large {
        p.push(p.file_start(), msg.clone());
    }
    let built = if too_large.is_some() { 0 } else { repeats };
    let mut cells = Vec::with_capacity(cells_once.len() * built as usize);
    for r in 1..=built {
        for c in &cells_once {
            cells.push(Cell {
                repeat: r,
                ..c.clone()
            });
        }
    }
    let problems = p.list;
    let plan = Plan {
        name_line: source.line_of(file.name.span().start),
        name: file.name.clone().into_inner(),
        source,
        scale,
        repeats,
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
    };
    (plan, problems)
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn plan(text: &str, scale: Option<f64>) -> (Plan, Vec<Problem>) {
        let source = Source {
            path: PathBuf::from("e.toml"),
            text: text.to_string(),
        };
        let file = super::super::file::parse(&source).expect("parses");
        build(file, source, scale)
    }

    const MATRIX: &str = r#"name = "e"
repeats = 2
[workload]
steps = "l.i0,l.x,qp100"
query_seconds = 10
[[target]]
name = "a"
dbms = "sqlite"
[[target]]
name = "b"
dbms = "sqlite"
[[config]]
name = "base"
options = { synchronous = "FULL", temp_store = 2 }
[[config]]
name = "v"
extends = "base"
targets = ["b"]
options = { temp_store = 1 }
[[setup]]
name = "s"
rows_per_client = 1000
dbms_cache = "8M"
"#;

    #[test]
    fn cells_expand_repeat_by_repeat_with_merged_options() {
        let (p, problems) = plan(MATRIX, None);
        assert!(problems.is_empty(), "{problems:?}");
        let names: Vec<String> = p.cells.iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "a/base/glibc/s #1",
                "b/base/glibc/s #1",
                "b/v/glibc/s #1",
                "a/base/glibc/s #2",
                "b/base/glibc/s #2",
                "b/v/glibc/s #2"
            ]
        );
        assert_eq!(p.base, "a/base/glibc/s");
        let pragmas = |i: usize| -> Vec<(String, String)> {
            serde_json::from_value(p.cells[i].target.params["pragmas"].clone()).unwrap()
        };
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        // The setup's cache first, then the config's options; the variant's value replaces
        // the base's.
        assert_eq!(
            pragmas(1),
            pairs(&[
                ("cache_size", "-8192"),
                ("synchronous", "FULL"),
                ("temp_store", "2")
            ])
        );
        assert_eq!(
            pragmas(2),
            pairs(&[
                ("cache_size", "-8192"),
                ("synchronous", "FULL"),
                ("temp_store", "1")
            ])
        );
        // Repeats share a fingerprint; different definitions do not; it is stable.
        assert_eq!(p.cells[1].fingerprint, p.cells[4].fingerprint);
        assert_ne!(p.cells[1].fingerprint, p.cells[2].fingerprint);
        assert_eq!(
            plan(MATRIX, None).0.cells[2].fingerprint,
            p.cells[2].fingerprint
        );
        assert_eq!(
            p.cells[0].spec(Path::new("o")).label.as_deref(),
            Some("a/base/glibc/s")
        );
    }

    #[test]
    fn scale_multiplies_rows_and_query_seconds() {
        let (p, problems) = plan(MATRIX, Some(0.5));
        assert!(problems.is_empty(), "{problems:?}");
        let w = p.cells[0].workload.insert_benchmark().unwrap();
        assert_eq!((w.l0_rows, w.query_seconds), (500, 5));
        assert_ne!(
            plan(MATRIX, None).0.cells[0].fingerprint,
            p.cells[0].fingerprint
        );
        let (_, problems) = plan(MATRIX, Some(0.0001));
        assert!(
            problems.iter().any(|p| p.message.contains("after scale")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_huge_matrix_is_refused_before_it_is_built() {
        let text = MATRIX.replace("repeats = 2", "repeats = 4294967295");
        let (p, problems) = plan(&text, None);
        assert!(p.cells.len() <= MAX_CELLS);
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains("repeats 4294967295 is out of range")),
            "{problems:?}"
        );
        let mut text = MATRIX.replace("repeats = 2", "repeats = 1000");
        for i in 0..19 {
            text.push_str(&format!("[[setup]]\nname = \"s{i}\"\n"));
        }
        let (p, problems) = plan(&text, None);
        assert!(p.cells.is_empty(), "60 x 1000 cells is more than the limit");
        assert!(
            problems
                .iter()
                .any(|p| p.message.contains("is more than 10000")),
            "{problems:?}"
        );
    }

    #[test]
    fn pg_values_are_quoted_when_needed() {
        let pg = crate::server::family(crate::dbms::DbmsKind::find("postgres").unwrap()).unwrap();
        assert_eq!(pg.config_value("128MB"), "128MB");
        assert_eq!(pg.config_value("%m [%p] "), "'%m [%p] '");
        assert_eq!(pg.config_value("'x'"), "'x'");
        assert_eq!(pg.config_value("it's"), "'it''s'");
    }

    /// Resuming an experiment refuses completed cells whose fingerprint changed: the example
    /// experiments' fingerprints are what earlier versions of ibench computed for them.
    #[test]
    fn fingerprints_of_the_examples_are_those_earlier_versions_computed() {
        let expected = [
            (
                "malloc",
                "myrocks/default/glibc/4-clients",
                "ea70cdf6de6f9032",
            ),
            (
                "malloc",
                "myrocks/default/jemalloc/4-clients",
                "ccfbb2f81c23be88",
            ),
            ("engines", "innodb/default/glibc/cached", "72231a7dae54686d"),
            (
                "engines",
                "innodb/default/glibc/small-cache",
                "6f85fb23c0f5d974",
            ),
            (
                "engines",
                "myrocks/default/glibc/small-cache",
                "e0ab6163800d7999",
            ),
            (
                "engines",
                "postgres/default/glibc/cached",
                "a3ab64c17ff72d62",
            ),
            ("engines", "sqlite/default/glibc/cached", "d638bcea2fba82dc"),
            (
                "engines",
                "sqlite/default/glibc/small-cache",
                "0103eb1f6aea61db",
            ),
            (
                "myrocks-tuning",
                "myrocks/c7-all/glibc/io",
                "fe22b8039d22706a",
            ),
        ];
        for (file, label, fingerprint) in expected {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples")
                .join(format!("{file}.toml"));
            let source = Source::read(&path).unwrap();
            let parsed = super::super::file::parse(&source).unwrap();
            let (p, _) = build(parsed, source, Some(0.1));
            let cell = p
                .cells
                .iter()
                .find(|c| c.label == label)
                .unwrap_or_else(|| panic!("{file}: no cell {label}"));
            assert_eq!(cell.fingerprint, fingerprint, "{file} {label}");
        }
    }
}

//! From the parsed file to the list of cells: names resolved, configs merged along `extends`,
//! sizes scaled, every value checked. Problems are collected (not stopped at) so that the user
//! sees all of them at once, each as `file:line: message`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use toml::Spanned;

use super::estimate;
use super::limits;
use super::model::{
    ConfigTable, DbmsName, ExperimentFile, Problem, SetupTable, Source, TargetTable, WorkloadTable,
};
use crate::dbms::StatementMode;
use crate::dbms::mysql::Engine;
use crate::server::{Malloc, ServerKind, ServerSpec};
use crate::spec::{IndexDdl, InsertBenchmarkSpec, MAX_SECONDS};

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
    pub server_checks: Vec<ServerCheck>,
}

/// One run of the matrix: target x config x allocator x setup x repeat.
#[derive(Clone, Debug)]
pub struct Cell {
    /// `target/config/allocator/setup`: the run's label, shared by the repeats.
    pub label: String,
    /// Repeat number, 1-based.
    pub repeat: u32,
    /// Which DBMS.
    pub dbms: DbmsName,
    /// How to start the managed server (none for SQLite).
    pub server: Option<ServerSpec>,
    /// SQLite pragmas (SQLite targets).
    pub pragmas: Vec<(String, String)>,
    /// The Insert Benchmark's parameters, scaled.
    pub workload: InsertBenchmarkSpec,
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

    /// The run's spec; `out` is the experiment's output directory, `sqlite_path` the scratch
    /// database of an SQLite cell.
    pub fn spec(&self, out: &Path, sqlite_path: PathBuf) -> crate::spec::RunSpec {
        use crate::dbms::TargetSpec;
        use crate::dbms::url::ServerUrl;
        let placeholder = || {
            // Replaced by the managed server's URL once it runs (as `ibench run --server`).
            ServerUrl::parse("postgres://placeholder/", "").expect("constant URL parses")
        };
        let target = match (self.dbms, &self.server) {
            (DbmsName::Sqlite, _) | (_, None) => TargetSpec::Sqlite {
                path: sqlite_path,
                pragmas: self.pragmas.clone(),
                busy_timeout_ms: 30_000,
            },
            (DbmsName::Postgres, Some(_)) => TargetSpec::Postgres { url: placeholder() },
            (DbmsName::Mariadb, Some(s)) => TargetSpec::Mysql {
                url: placeholder(),
                engine: s.engine,
            },
        };
        crate::spec::RunSpec {
            scratch_database: self.dbms == DbmsName::Sqlite,
            target,
            keep_data: false,
            out_dir: out.to_path_buf(),
            label: Some(self.label.clone()),
            report_interval_s: self.report_interval_s,
            maintenance: self.maintenance,
            workload: crate::spec::WorkloadSpec::InsertBenchmark(self.workload.clone()),
            server: self.server.clone(),
            statements: self.statements,
        }
    }
}

/// A setting and where it was written.
#[derive(Clone, Debug)]
pub struct Located {
    /// Name as written.
    pub key: String,
    /// `file:line`.
    pub at: String,
}

/// One server configuration to check by asking the server (see `check.rs`).
#[derive(Clone, Debug)]
pub struct ServerCheck {
    /// The server to ask, as a cell would start it.
    pub server: ServerSpec,
    /// Every setting of the configuration with its location, in order (later wins).
    pub settings: Vec<Located>,
    /// Where to point when a problem names no setting (the config's name).
    pub at: String,
}

/// A config with `extends` resolved.
#[derive(Clone, Debug, Default)]
struct Resolved {
    /// Fragments in order (parent's first), each with the `file:line` of its first line.
    fragments: Vec<Fragment>,
    /// Options in order; a later one with the same key replaced the earlier.
    options: Vec<(String, String, String)>,
    /// Targets this config applies to (None: all).
    targets: Option<Vec<String>>,
}

#[derive(Clone, Debug)]
struct Fragment {
    text: String,
    /// Path shown for its lines.
    path: String,
    /// Line of the fragment's first line in `path`.
    first_line: usize,
    /// Set when the fragment is a file.
    file: Option<PathBuf>,
}

impl Fragment {
    /// Settings (`key = value` lines) of the fragment with their locations.
    fn settings(&self) -> Vec<Located> {
        self.text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| {
                let key = setting_key(line)?;
                Some(Located {
                    key,
                    at: format!("{}:{}", self.path, self.first_line + i),
                })
            })
            .collect()
    }
}

/// The key of a config-file line (`key = value`, `key=value`, `key value`), if it is one.
fn setting_key(line: &str) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with(['#', ';', '[', '!']) {
        return None;
    }
    let end = t
        .find(|c: char| c == '=' || c.is_whitespace())
        .unwrap_or(t.len());
    let key = t[..end].trim();
    (!key.is_empty()).then(|| key.to_string())
}

/// Normal form of a setting name for comparisons: lowercase, `-` as `_`.
pub fn normalize(key: &str) -> String {
    key.trim_start_matches("--")
        .to_ascii_lowercase()
        .replace('-', "_")
}

/// Collects problems.
struct Problems<'a> {
    source: &'a Source,
    list: Vec<Problem>,
}

impl Problems<'_> {
    fn at<T>(&mut self, spanned: &Spanned<T>, message: impl Into<String>) {
        let at = self.source.at_span(spanned.span());
        self.push(at, message);
    }

    fn push(&mut self, at: String, message: impl Into<String>) {
        let p = Problem {
            at,
            message: message.into(),
        };
        if !self.list.contains(&p) {
            self.list.push(p);
        }
    }
}

fn check_name(problems: &mut Problems<'_>, what: &str, name: &Spanned<String>) {
    let n = name.get_ref();
    let ok = !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        problems.at(
            name,
            format!(
                "{what} name {n:?} is not allowed: use letters, digits, '-', '_' and '.' (max 64)"
            ),
        );
    }
}

fn unique<'n>(
    problems: &mut Problems<'_>,
    what: &str,
    names: impl Iterator<Item = &'n Spanned<String>>,
) {
    let mut seen = BTreeSet::new();
    for n in names {
        if !seen.insert(n.get_ref().clone()) {
            problems.at(n, format!("{what} {:?} is defined twice", n.get_ref()));
        }
    }
}

/// Parses a size: bytes, or a number with K, M, G or T (powers of 1024).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return None,
            };
            (&s[..i], m)
        }
        _ => (s, 1),
    };
    let v: f64 = num.trim().parse().ok()?;
    let bytes = v * mult as f64;
    (v.is_finite() && v > 0.0 && bytes <= MAX_SIZE as f64).then_some(bytes as u64)
}

/// Largest size a file may give (1 PiB): beyond it a value is a typo, and the arithmetic on
/// it would overflow.
const MAX_SIZE: u64 = 1 << 50;
/// Largest multiple of the estimated database size a cache may be.
const MAX_CACHE_TIMES: f64 = 1000.0;

/// The DBMS cache a setup asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CacheSize {
    Bytes(u64),
    /// A multiple of the estimated database size after the load.
    Times(f64),
}

fn parse_cache(s: &str) -> Option<CacheSize> {
    let t = s.trim();
    if let Some(x) = t.strip_suffix(['x', 'X']) {
        let v: f64 = x.trim().parse().ok()?;
        return (v.is_finite() && v > 0.0 && v <= MAX_CACHE_TIMES).then_some(CacheSize::Times(v));
    }
    parse_size(t).map(CacheSize::Bytes)
}

/// The setting that sizes the DBMS cache of a target.
pub fn cache_setting(dbms: DbmsName, engine: Engine) -> &'static str {
    match (dbms, engine) {
        (DbmsName::Mariadb, Engine::Innodb) => "innodb_buffer_pool_size",
        (DbmsName::Mariadb, Engine::Rocksdb) => "rocksdb_block_cache_size",
        (DbmsName::Postgres, _) => "shared_buffers",
        (DbmsName::Sqlite, _) => "cache_size",
    }
}

/// The value of the cache setting for `bytes` (at least 1 MiB; 8 MiB for InnoDB).
fn cache_value(dbms: DbmsName, engine: Engine, bytes: u64) -> String {
    let mib = 1u64 << 20;
    let min = if (dbms, engine) == (DbmsName::Mariadb, Engine::Innodb) {
        8 * mib
    } else {
        mib
    };
    let bytes = bytes.clamp(min, MAX_SIZE).div_ceil(mib) * mib;
    match dbms {
        DbmsName::Mariadb => bytes.to_string(),
        DbmsName::Postgres => format!("{}MB", bytes / mib),
        DbmsName::Sqlite => format!("-{}", bytes / 1024),
    }
}

/// Bytes the live rows take after the load (l.i0, plus l.i1/l.i2 without deletes): ~60
/// bytes of columns and overhead plus the average `data`, and ~60% more per secondary index.
pub fn estimated_loaded_bytes(w: &InsertBenchmarkSpec) -> u64 {
    use crate::spec::Step;
    let mut rows = if w.steps.contains(&Step::LoadInitial) {
        w.l0_rows
    } else {
        0
    };
    if !w.deletes {
        for (step, n) in [
            (Step::LoadMore, w.l1_rows),
            (Step::LoadMoreSmall, w.l2_rows),
        ] {
            if w.steps.contains(&step) {
                rows = rows.saturating_add(n);
            }
        }
    }
    let row = 60 + (w.data_min + w.data_max) as u64 / 2;
    let factor = 10 + 6 * w.secondary_indexes as u64;
    rows.saturating_mul(w.clients as u64)
        .saturating_mul(row)
        .saturating_mul(factor)
        / 10
}

fn option_value(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "ON" } else { "OFF" }.to_string()),
        _ => None,
    }
}

/// A value as written into postgresql.conf: simple words and numbers as they are, anything
/// else single-quoted.
fn pg_value(v: &str) -> String {
    let simple = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'));
    if simple || (v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'')) {
        v.to_string()
    } else {
        format!("'{}'", v.replace('\'', "''"))
    }
}

/// The parts of a server spec that define a cell: binaries, engine, fragment, options,
/// allocator.
type ServerDefinition<'a> = (
    Option<&'a Path>,
    Engine,
    &'a Option<String>,
    &'a [(String, String)],
    Malloc,
);

/// Serializable definition of a cell, hashed into its fingerprint.
#[derive(Serialize)]
struct Definition<'a> {
    dbms: &'static str,
    server: Option<ServerDefinition<'a>>,
    version: Option<&'a str>,
    pragmas: &'a [(String, String)],
    workload: &'a InsertBenchmarkSpec,
    maintenance: bool,
    statements: StatementMode,
}

/// FNV-1a, 64 bits: stable across builds and platforms (unlike std's hasher).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
    let repeats = file.repeats.as_ref().map(|r| *r.get_ref()).unwrap_or(1);
    if let Some(r) = &file.repeats
        && !(1..=1000).contains(r.get_ref())
    {
        p.at(
            r,
            format!("repeats {} is out of range: expected 1..=1000", r.get_ref()),
        );
    }
    let cooldown = file
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
    }

    // Allocators.
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
        if !seen.insert(malloc_name(*a.get_ref())) {
            p.at(
                a,
                format!("allocator {} is listed twice", malloc_name(*a.get_ref())),
            );
        }
        if let Err(e) = a.get_ref().library() {
            let msg = e.to_string().replacen("--malloc ", "allocator ", 1);
            p.at(a, msg);
        }
    }

    // Targets.
    if file.targets.is_empty() {
        p.push(
            format!("{}:1", source.path.display()),
            "no [[target]]: name at least one (dbms = \"mariadb\", \"postgres\" or \"sqlite\")",
        );
    }
    for t in &file.targets {
        check_name(&mut p, "target", &t.name);
    }
    unique(&mut p, "target", file.targets.iter().map(|t| &t.name));
    let mut bin_dirs: Vec<Option<PathBuf>> = Vec::new();
    for t in &file.targets {
        bin_dirs.push(check_target(&mut p, t, &dir));
    }
    for t in &file.targets {
        if *t.dbms.get_ref() == DbmsName::Sqlite {
            for a in &allocators {
                if *a.get_ref() != Malloc::Glibc {
                    p.at(
                        &t.dbms,
                        format!(
                            "target {}: sqlite runs inside ibench, so allocator {} cannot apply \
                             (use a separate experiment for the allocators of server targets)",
                            t.name.get_ref(),
                            malloc_name(*a.get_ref())
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
    let mut resolved: BTreeMap<String, Resolved> = BTreeMap::new();
    for c in &configs {
        let r = resolve(&mut p, c, &configs, &dir, &source, &mut Vec::new());
        if let Some(ts) = &c.targets {
            for t in ts {
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
        .unwrap_or_else(|| format!("{}:1", source.path.display()));
    let default_setup;
    let setups: Vec<&SetupTable> = if file.setups.is_empty() {
        default_setup = SetupTable {
            name: Spanned::new(0..0, "default".to_string()),
            description: None,
            clients: None,
            rows_per_client: None,
            l1_rows: None,
            l2_rows: None,
            dbms_cache: None,
        };
        vec![&default_setup]
    } else {
        file.setups.iter().collect()
    };
    for s in &setups {
        check_name(&mut p, "setup", &s.name);
    }
    unique(&mut p, "setup", setups.iter().map(|s| &s.name));
    let mut setup_specs = Vec::new();
    for s in &setups {
        let at = if s.name.span() == (0..0) {
            workload_at.clone()
        } else {
            source.at_span(s.name.span())
        };
        let spec = workload_spec(workload, s, scale);
        if let Err(e) = spec.validate() {
            p.push(at.clone(), toml_keys(&e.to_string(), scale));
        }
        let cache = match &s.dbms_cache {
            None => None,
            Some(c) => match parse_cache(c.get_ref()) {
                Some(size) => Some((size, c.span())),
                None => {
                    p.at(
                        c,
                        format!(
                            "dbms_cache {:?} is not a size: expected bytes, a size such as 64M or \
                             1G, or a multiple of the estimated database size such as 0.5x (at most 1P, 1000x)",
                            c.get_ref()
                        ),
                    );
                    None
                }
            },
        };
        setup_specs.push((spec, cache));
    }
    if let Some(r) = workload.report_interval
        && r > MAX_SECONDS
    {
        p.push(
            workload_at.clone(),
            format!("report_interval {r} is out of range"),
        );
    }
    if workload.index_ddl == Some(IndexDdl::Combined) {
        for t in &file.targets {
            let e = t
                .engine
                .as_ref()
                .map(|e| *e.get_ref())
                .unwrap_or(Engine::Innodb);
            if *t.dbms.get_ref() != DbmsName::Mariadb || e != Engine::Innodb {
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

    // Cells.
    let applies = |c: &ConfigTable, t: &TargetTable| {
        resolved
            .get(c.name.get_ref())
            .and_then(|r| r.targets.as_ref())
            .is_none_or(|ts| ts.iter().any(|n| n == t.name.get_ref()))
    };
    // Counted before anything is built: neither the labels nor the cells are built when there
    // would be too many, or when repeats is out of range (see limits.rs).
    let n_labels = file
        .targets
        .iter()
        .map(|t| configs.iter().filter(|c| applies(c, t)).count())
        .fold(0usize, |n, c| {
            n.saturating_add(c.saturating_mul(allocators.len() * setups.len()))
        });
    let repeats_ok = (1..=1000).contains(&repeats);
    let counted = if repeats_ok { repeats } else { 1 };
    let too_many = n_labels.saturating_mul(counted as usize) > MAX_CELLS;
    let mut labels: Vec<(String, usize, usize, usize, usize)> = Vec::new();
    for (ti, t) in file.targets.iter().enumerate() {
        let mut any = false;
        for (ci, c) in configs.iter().enumerate() {
            if !applies(c, t) {
                continue;
            }
            any = true;
            if too_many {
                continue;
            }
            for (ai, a) in allocators.iter().enumerate() {
                for (si, s) in setups.iter().enumerate() {
                    labels.push((
                        format!(
                            "{}/{}/{}/{}",
                            t.name.get_ref(),
                            c.name.get_ref(),
                            malloc_name(*a.get_ref()),
                            s.name.get_ref()
                        ),
                        ti,
                        ci,
                        ai,
                        si,
                    ));
                }
            }
        }
        if !any && !configs.is_empty() {
            p.at(
                &t.name,
                format!("no config applies to target {}", t.name.get_ref()),
            );
        }
    }
    if too_many {
        p.push(
            format!("{}:1", source.path.display()),
            format!(
                "{} cells ({n_labels} x {counted} repeats) is more than {MAX_CELLS}",
                n_labels.saturating_mul(counted as usize),
            ),
        );
    }
    let base = match &file.base {
        Some(b) => {
            if !too_many && !labels.iter().any(|l| &l.0 == b.get_ref()) {
                let known: Vec<&str> = labels.iter().take(6).map(|l| l.0.as_str()).collect();
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
        None => labels.first().map(|l| l.0.clone()).unwrap_or_default(),
    };

    let pragmas_known = if file
        .targets
        .iter()
        .any(|t| *t.dbms.get_ref() == DbmsName::Sqlite)
    {
        super::check::sqlite_pragmas()
    } else {
        None
    };
    let mut cells_once = Vec::new();
    let mut once_bytes = 0usize;
    let mut server_checks: Vec<ServerCheck> = Vec::new();
    let mut check_keys = BTreeSet::new();
    for (label, ti, ci, ai, si) in &labels {
        if let Some(msg) = limits::too_large(once_bytes, 1) {
            p.push(format!("{}:1", source.path.display()), msg);
            break;
        }
        let t = &file.targets[*ti];
        let c = configs[*ci];
        let malloc = *allocators[*ai].get_ref();
        let (workload_spec, cache) = &setup_specs[*si];
        let dbms = *t.dbms.get_ref();
        let engine = t
            .engine
            .as_ref()
            .map(|e| *e.get_ref())
            .unwrap_or(Engine::Innodb);
        let r = resolved.get(c.name.get_ref()).cloned().unwrap_or_default();
        let mut settings: Vec<Located> = r.fragments.iter().flat_map(|f| f.settings()).collect();
        let setting = cache_setting(dbms, engine);
        let config_sets_cache = settings
            .iter()
            .map(|l| normalize(&l.key))
            .chain(r.options.iter().map(|o| normalize(&o.0)))
            .any(|k| k == setting);
        let mut options: Vec<(String, String)> = Vec::new();
        if let Some((size, span)) = cache
            && !config_sets_cache
        {
            let bytes = match size {
                CacheSize::Bytes(b) => *b,
                CacheSize::Times(x) => {
                    // A float-to-int cast saturates; clamp keeps it in range of the setting.
                    ((estimated_loaded_bytes(workload_spec) as f64 * x) as u64).min(MAX_SIZE)
                }
            };
            options.push((setting.to_string(), cache_value(dbms, engine, bytes)));
            settings.push(Located {
                key: setting.to_string(),
                at: source.at_span(span.clone()),
            });
        }
        for (k, v, at) in &r.options {
            let v = if dbms == DbmsName::Postgres {
                pg_value(v)
            } else {
                v.clone()
            };
            options.push((k.clone(), v));
            settings.push(Located {
                key: k.clone(),
                at: at.clone(),
            });
        }
        let config_at = if c.name.span() == (0..0) {
            format!("{}:1", source.path.display())
        } else {
            source.at_span(c.name.span())
        };
        let (server, pragmas) = match dbms {
            DbmsName::Sqlite => {
                for f in &r.fragments {
                    p.push(
                        format!("{}:{}", f.path, f.first_line),
                        format!(
                            "config {}: sqlite target {} takes options (pragmas), not a config \
                             file fragment",
                            c.name.get_ref(),
                            t.name.get_ref()
                        ),
                    );
                }
                for (k, v) in &options {
                    let at = settings
                        .iter()
                        .rev()
                        .find(|l| &l.key == k)
                        .map(|l| l.at.clone())
                        .unwrap_or_else(|| config_at.clone());
                    if let Err(e) = crate::dbms::sqlite::validate_pragma(k, v) {
                        p.push(at, e.to_string().replace(" in --sqlite-pragma", ""));
                    } else if let Some(known) = &pragmas_known
                        && !known.iter().any(|n| n.eq_ignore_ascii_case(k))
                    {
                        p.push(
                            at,
                            format!("SQLite has no pragma {k:?} (see PRAGMA pragma_list)"),
                        );
                    }
                }
                (None, options.clone())
            }
            DbmsName::Mariadb | DbmsName::Postgres => {
                let text: Vec<&str> = r.fragments.iter().map(|f| f.text.as_str()).collect();
                let files: Vec<&PathBuf> =
                    r.fragments.iter().filter_map(|f| f.file.as_ref()).collect();
                let spec = ServerSpec {
                    kind: if dbms == DbmsName::Postgres {
                        ServerKind::Postgres
                    } else {
                        ServerKind::Mariadb
                    },
                    engine,
                    bin_dir: bin_dirs[*ti].clone(),
                    config_text: (!text.is_empty()).then(|| text.join("\n")),
                    config_file: (files.len() == 1).then(|| files[0].clone()),
                    options: options.clone(),
                    malloc,
                    keep: false,
                    start_timeout_s: t.start_timeout_seconds.unwrap_or(120),
                };
                let key = format!(
                    "{:?}|{:?}|{:?}|{:?}|{:?}",
                    spec.kind, spec.engine, spec.bin_dir, spec.config_text, spec.options
                );
                if check_keys.insert(key) {
                    once_bytes += spec.config_text.as_ref().map_or(0, String::len);
                    server_checks.push(ServerCheck {
                        server: ServerSpec {
                            malloc: Malloc::Glibc,
                            ..spec.clone()
                        },
                        settings: settings.clone(),
                        at: config_at.clone(),
                    });
                }
                (Some(spec), Vec::new())
            }
        };
        let version = t.version.as_ref().map(|v| v.get_ref().as_str());
        let maintenance = workload.maintenance.unwrap_or(true);
        let statements = if workload.plain_sql == Some(true) {
            StatementMode::Plain
        } else {
            StatementMode::Prepared
        };
        let definition = Definition {
            dbms: dbms.name(),
            server: server.as_ref().map(|s| {
                (
                    s.bin_dir.as_deref(),
                    s.engine,
                    &s.config_text,
                    s.options.as_slice(),
                    s.malloc,
                )
            }),
            version,
            pragmas: &pragmas,
            workload: workload_spec,
            maintenance,
            statements,
        };
        let fingerprint = format!(
            "{:016x}",
            fnv1a(
                serde_json::to_string(&definition)
                    .unwrap_or_default()
                    .as_bytes()
            )
        );
        let estimate = estimate::cell(dbms, engine, workload_spec, maintenance);
        let cell = Cell {
            label: label.clone(),
            repeat: 1,
            dbms,
            server,
            pragmas,
            workload: workload_spec.clone(),
            maintenance,
            statements,
            report_interval_s: workload.report_interval.unwrap_or(0),
            fingerprint,
            estimate,
        };
        once_bytes += limits::cell_bytes(&cell);
        cells_once.push(cell);
    }
    let too_large = limits::too_large(once_bytes, counted);
    if let Some(msg) = &too_large
        && limits::too_large(once_bytes, 1).is_none()
    {
        p.push(format!("{}:1", source.path.display()), msg.clone());
    }
    let mut cells = Vec::new();
    let built = if repeats_ok && !too_many && too_large.is_none() {
        repeats
    } else {
        0
    };
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
        name: file.name.into_inner(),
        source,
        scale,
        repeats,
        cooldown: Duration::from_secs(cooldown),
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

/// Allocator name as written.
pub fn malloc_name(m: Malloc) -> &'static str {
    match m {
        Malloc::Glibc => "glibc",
        Malloc::Jemalloc => "jemalloc",
        Malloc::Tcmalloc => "tcmalloc",
    }
}

/// A message of [`InsertBenchmarkSpec::validate`] with the experiment file's key names instead
/// of `ibench run`'s flags.
fn toml_keys(message: &str, scale: f64) -> String {
    let mut out = message
        .replace("--l0-rows", "rows_per_client")
        .replace("--max-error-rate", "max_error_rate");
    while let Some(i) = out.find("--") {
        let end = out[i + 2..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .map(|e| i + 2 + e)
            .unwrap_or(out.len());
        let key = out[i + 2..end].replace('-', "_");
        out.replace_range(i..end, &key);
    }
    if scale != 1.0 {
        out.push_str(&format!(" (rows and query seconds after scale {scale})"));
    }
    out
}

fn scaled(n: u64, scale: f64) -> u64 {
    ((n as f64 * scale).round() as u64).max(1)
}

/// The workload of one setup: ibench run's defaults, then `[workload]`, then the setup, then
/// `scale` applied to rows and query seconds.
fn workload_spec(w: &WorkloadTable, s: &SetupTable, scale: f64) -> InsertBenchmarkSpec {
    let d = InsertBenchmarkSpec::default();
    let l1 = s
        .l1_rows
        .as_ref()
        .map(|v| *v.get_ref())
        .or(w.l1_rows)
        .unwrap_or(d.l1_rows);
    let l2 = s
        .l2_rows
        .as_ref()
        .map(|v| *v.get_ref())
        .or(w.l2_rows)
        .unwrap_or((l1 / 4).max(1));
    InsertBenchmarkSpec {
        clients: s
            .clients
            .as_ref()
            .map(|v| *v.get_ref())
            .or(w.clients)
            .unwrap_or(d.clients),
        steps: w.steps.clone().map(|s| s.0).unwrap_or(d.steps),
        l0_rows: scaled(
            s.rows_per_client
                .as_ref()
                .map(|v| *v.get_ref())
                .or(w.rows_per_client)
                .unwrap_or(d.l0_rows),
            scale,
        ),
        l1_rows: scaled(l1, scale),
        l2_rows: scaled(l2, scale),
        l0_batch: w.l0_batch.unwrap_or(d.l0_batch),
        l1_batch: w.l1_batch.unwrap_or(d.l1_batch),
        l2_batch: w.l2_batch.unwrap_or(d.l2_batch),
        writer_batch: w.writer_batch.unwrap_or(d.writer_batch),
        query_seconds: scaled(w.query_seconds.unwrap_or(d.query_seconds), scale),
        deletes: w.deletes.unwrap_or(d.deletes),
        secondary_indexes: w.secondary_indexes.unwrap_or(d.secondary_indexes),
        table_mode: w.table_mode.unwrap_or(d.table_mode),
        table_prefix: w.table_prefix.clone().unwrap_or(d.table_prefix),
        index_ddl: w.index_ddl.unwrap_or(d.index_ddl),
        data_min: w.data_min.unwrap_or(d.data_min),
        data_max: w.data_max.unwrap_or(d.data_max),
        data_random_pct: w.data_random_pct.unwrap_or(d.data_random_pct),
        cashregisters: w.cashregisters.unwrap_or(d.cashregisters),
        customers: w.customers.unwrap_or(d.customers),
        products: w.products.unwrap_or(d.products),
        max_price: w.max_price.unwrap_or(d.max_price),
        seed: w.seed.unwrap_or(d.seed),
        max_tries: w.max_tries.unwrap_or(d.max_tries),
        max_reconnects: w.max_reconnects.unwrap_or(d.max_reconnects),
        max_error_pct: w.max_error_rate.unwrap_or(d.max_error_pct),
    }
}

/// Checks a target's binaries, plugin and version; returns its binary directory.
fn check_target(p: &mut Problems<'_>, t: &TargetTable, dir: &Path) -> Option<PathBuf> {
    use crate::server::find_binary;
    let dbms = *t.dbms.get_ref();
    if let Some(e) = &t.engine
        && dbms != DbmsName::Mariadb
    {
        p.at(
            e,
            format!(
                "target {}: engine is for mariadb targets only",
                t.name.get_ref()
            ),
        );
    }
    if dbms == DbmsName::Sqlite {
        if let Some(b) = &t.bin_dir {
            p.at(
                b,
                "bin_dir is for server targets: sqlite is built into ibench",
            );
        }
        if let Some(v) = &t.version {
            p.at(
                v,
                "version is for server targets: sqlite is built into ibench",
            );
        }
        return None;
    }
    let mut bin_dir = t.bin_dir.as_ref().map(|b| dir.join(b.get_ref()));
    if let (Some(b), Some(path)) = (&t.bin_dir, &bin_dir)
        && !path.is_dir()
    {
        p.at(b, format!("bin_dir {} is not a directory", path.display()));
        return None;
    }
    if dbms == DbmsName::Postgres
        && bin_dir.is_none()
        && let Some(v) = &t.version
    {
        let major = v.get_ref().split('.').next().unwrap_or_default();
        let d = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin"));
        if d.is_dir() {
            bin_dir = Some(d);
        } else {
            p.at(
                v,
                format!(
                    "PostgreSQL {} is not installed ({} does not exist): apt-get install \
                     postgresql-{major}, or give bin_dir",
                    v.get_ref(),
                    d.display()
                ),
            );
            return None;
        }
    }
    let (names, candidates): (&[&str], Vec<PathBuf>) = match dbms {
        DbmsName::Postgres => (&["initdb", "postgres"], postgres_bin_dirs()),
        _ => (
            &["mariadb-install-db", "mariadbd"],
            vec![PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")],
        ),
    };
    let mut server_binary = None;
    for name in names {
        let cands: Vec<PathBuf> = candidates.iter().map(|d| d.join(name)).collect();
        match find_binary(name, bin_dir.as_deref(), &cands) {
            Ok(b) => server_binary = Some(b),
            Err(e) => {
                p.at(
                    &t.dbms,
                    format!(
                        "target {}: {}",
                        t.name.get_ref(),
                        e.to_string().replace("--server-bin", "bin_dir")
                    ),
                );
                return None;
            }
        }
    }
    if dbms == DbmsName::Mariadb
        && t.engine.as_ref().map(|e| *e.get_ref()) == Some(Engine::Rocksdb)
        && ![
            "/usr/lib/mysql/plugin",
            "/usr/lib/x86_64-linux-gnu/mariadb19/plugin",
        ]
        .iter()
        .any(|d| Path::new(d).join("ha_rocksdb.so").exists())
    {
        p.at(
            t.engine.as_ref().expect("checked above"),
            format!(
                "target {}: engine rocksdb needs ha_rocksdb.so; install it (apt-get install \
                 mariadb-plugin-rocksdb)",
                t.name.get_ref()
            ),
        );
    }
    if let (Some(v), Some(binary)) = (&t.version, &server_binary) {
        match binary_version(binary) {
            Some(found) if version_matches(&found, v.get_ref()) => {}
            Some(found) => p.at(
                v,
                format!(
                    "target {}: {} is version {found}, not {}",
                    t.name.get_ref(),
                    binary.display(),
                    v.get_ref()
                ),
            ),
            None => p.at(
                v,
                format!(
                    "target {}: cannot tell the version of {}",
                    t.name.get_ref(),
                    binary.display()
                ),
            ),
        }
    }
    bin_dir
}

/// Debian's /usr/lib/postgresql/<major>/bin, newest first.
fn postgres_bin_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((major, e.path().join("bin")))
        })
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
    dirs.into_iter().map(|(_, d)| d).collect()
}

/// The version a server binary prints with `--version` (`15.14`, `10.11.19`).
fn binary_version(binary: &Path) -> Option<String> {
    let out = std::process::Command::new(binary)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().find_map(|w| {
        let v: String = w
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let v = v.trim_end_matches('.');
        (v.contains('.') && v.starts_with(|c: char| c.is_ascii_digit())).then(|| v.to_string())
    })
}

/// Whether `found` (`10.11.19`) is the `wanted` version (`10.11`, `10.11.19`).
fn version_matches(found: &str, wanted: &str) -> bool {
    let f: Vec<&str> = found.split('.').collect();
    let w: Vec<&str> = wanted.trim().split('.').collect();
    w.len() <= f.len() && w.iter().zip(&f).all(|(a, b)| a == b)
}

/// Resolves `c` along `extends`; `stack` detects cycles.
fn resolve(
    p: &mut Problems<'_>,
    c: &ConfigTable,
    all: &[&ConfigTable],
    dir: &Path,
    source: &Source,
    stack: &mut Vec<String>,
) -> Resolved {
    let name = c.name.get_ref().clone();
    if stack.contains(&name) {
        p.at(
            &c.name,
            format!(
                "config {name} extends itself ({} -> {name})",
                stack.join(" -> ")
            ),
        );
        return Resolved::default();
    }
    if stack.len() >= limits::MAX_EXTENDS {
        p.at(
            &c.name,
            format!(
                "config {name}: extends is more than {} configs deep",
                limits::MAX_EXTENDS
            ),
        );
        return Resolved::default();
    }
    stack.push(name.clone());
    let mut r = match &c.extends {
        None => Resolved::default(),
        Some(parent) => match all.iter().find(|x| x.name.get_ref() == parent.get_ref()) {
            Some(pc) => resolve(p, pc, all, dir, source, stack),
            None => {
                p.at(
                    parent,
                    format!(
                        "config {name} extends {:?}, which is not defined",
                        parent.get_ref()
                    ),
                );
                Resolved::default()
            }
        },
    };
    stack.pop();
    if c.file.is_some() && c.text.is_some() {
        p.at(
            &c.name,
            format!("config {name}: give file or text, not both"),
        );
    }
    if let Some(f) = &c.file {
        let path = dir.join(f.get_ref());
        match crate::bounded::read_to_string(&path, limits::MAX_FILE_BYTES) {
            Ok(text) => r.fragments.push(Fragment {
                text,
                path: path.display().to_string(),
                first_line: 1,
                file: Some(path),
            }),
            Err(e) => p.at(
                f,
                format!("config {name}: cannot read file {}: {e}", path.display()),
            ),
        }
    }
    if let Some(t) = &c.text {
        let start = t.span().start;
        let rest = &source.text[start.min(source.text.len())..];
        // A multi-line string's first newline is not part of its value.
        let skip = usize::from(rest.starts_with("\"\"\"\n") || rest.starts_with("'''\n"));
        r.fragments.push(Fragment {
            text: t.get_ref().clone(),
            path: source.path.display().to_string(),
            first_line: source.line_of(start) + skip,
            file: None,
        });
    }
    if r.fragments.iter().map(|f| f.text.len()).sum::<usize>() > limits::MAX_CONFIG_TEXT {
        p.at(
            &c.name,
            format!(
                "config {name}: its text and files (with extends) are larger than {} MiB",
                limits::MAX_CONFIG_TEXT >> 20
            ),
        );
        r.fragments.clear();
    }
    for (k, v) in &c.options {
        let key = k.get_ref();
        let bad_key = key.is_empty() || key.contains(['=', ' ', '\t', '\n', '\r', '[', ']', '#']);
        let value = option_value(v.get_ref());
        match &value {
            _ if bad_key => p.at(
                k,
                format!("config {name}: option name {key:?} is not allowed"),
            ),
            None => p.at(
                v,
                format!("config {name}: option {key} must be a string, number or boolean"),
            ),
            Some(s) if s.contains(['\n', '\r']) => p.at(
                v,
                format!("config {name}: option {key} must be on one line"),
            ),
            Some(s) => {
                let nk = normalize(key);
                r.options.retain(|(ok, _, _)| normalize(ok) != nk);
                r.options
                    .push((key.clone(), s.clone(), source.at_span(k.span())));
            }
        }
    }
    if c.targets.is_some() {
        r.targets = c
            .targets
            .as_ref()
            .map(|ts| ts.iter().map(|t| t.get_ref().clone()).collect());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str, scale: Option<f64>) -> (Plan, Vec<Problem>) {
        let source = Source {
            path: PathBuf::from("e.toml"),
            text: text.to_string(),
        };
        let file = super::super::model::parse(&source).expect("parses");
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
        let pragmas = |i: usize| -> Vec<(&str, &str)> {
            p.cells[i]
                .pragmas
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        };
        // The setup's cache first, then the config's options; the variant's value replaces
        // the base's.
        assert_eq!(
            pragmas(1),
            [
                ("cache_size", "-8192"),
                ("synchronous", "FULL"),
                ("temp_store", "2")
            ]
        );
        assert_eq!(
            pragmas(2),
            [
                ("cache_size", "-8192"),
                ("synchronous", "FULL"),
                ("temp_store", "1")
            ]
        );
        // Repeats share a fingerprint; different definitions do not; it is stable.
        assert_eq!(p.cells[1].fingerprint, p.cells[4].fingerprint);
        assert_ne!(p.cells[1].fingerprint, p.cells[2].fingerprint);
        assert_eq!(
            plan(MATRIX, None).0.cells[2].fingerprint,
            p.cells[2].fingerprint
        );
        assert_eq!(
            p.cells[0]
                .spec(Path::new("o"), PathBuf::from("x"))
                .label
                .as_deref(),
            Some("a/base/glibc/s")
        );
    }

    #[test]
    fn scale_multiplies_rows_and_query_seconds() {
        let (p, problems) = plan(MATRIX, Some(0.5));
        assert!(problems.is_empty(), "{problems:?}");
        let w = &p.cells[0].workload;
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
    fn sizes_and_caches_parse() {
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("1.5K"), Some(1536));
        assert_eq!(parse_size("12x"), None);
        assert_eq!(parse_size("-1M"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(parse_size("1024T"), Some(1 << 50));
        assert_eq!(parse_cache("1e300x"), None);
        assert_eq!(
            cache_value(DbmsName::Mariadb, Engine::Rocksdb, u64::MAX),
            MAX_SIZE.to_string()
        );
        assert_eq!(parse_cache("0.5x"), Some(CacheSize::Times(0.5)));
        assert_eq!(parse_cache("2M"), Some(CacheSize::Bytes(2 << 20)));
        assert_eq!(parse_cache("abc"), None);
    }

    #[test]
    fn cache_values_per_dbms() {
        assert_eq!(
            cache_value(DbmsName::Mariadb, Engine::Innodb, 1),
            (8u64 << 20).to_string()
        );
        assert_eq!(
            cache_value(DbmsName::Mariadb, Engine::Rocksdb, 3 << 20),
            (3u64 << 20).to_string()
        );
        assert_eq!(
            cache_value(DbmsName::Postgres, Engine::Innodb, 100 << 20),
            "100MB"
        );
        assert_eq!(
            cache_value(DbmsName::Sqlite, Engine::Innodb, 2 << 20),
            "-2048"
        );
    }

    #[test]
    fn flags_become_keys() {
        assert_eq!(
            toml_keys("--l1-batch 50 is larger than --l1-rows 10: x", 1.0),
            "l1_batch 50 is larger than l1_rows 10: x"
        );
        assert!(toml_keys("--l0-rows must be", 0.1).starts_with("rows_per_client must be"));
    }

    #[test]
    fn versions_match_by_components() {
        assert!(version_matches("10.11.19", "10.11"));
        assert!(version_matches("15.14", "15"));
        assert!(!version_matches("15.14", "15.1"));
        assert!(!version_matches("10.6.1", "10.11"));
    }

    #[test]
    fn pg_values_are_quoted_when_needed() {
        assert_eq!(pg_value("128MB"), "128MB");
        assert_eq!(pg_value("%m [%p] "), "'%m [%p] '");
        assert_eq!(pg_value("'x'"), "'x'");
        assert_eq!(pg_value("it's"), "'it''s'");
    }

    #[test]
    fn setting_keys_of_config_lines() {
        assert_eq!(
            setting_key("innodb_io_capacity = 200"),
            Some("innodb_io_capacity".into())
        );
        assert_eq!(setting_key("skip-log-bin"), Some("skip-log-bin".into()));
        assert_eq!(setting_key("# comment"), None);
        assert_eq!(setting_key("[mysqld]"), None);
        assert_eq!(
            setting_key("shared_buffers=1GB"),
            Some("shared_buffers".into())
        );
    }
}

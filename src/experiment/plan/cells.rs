//! The matrix: which target/config/allocator/setup combinations are cells, and each cell's
//! settings (the setup's cache, then the config's fragments and options) turned into a target
//! and, for a server, the managed server to start.

use std::collections::BTreeSet;
use std::path::PathBuf;

use toml::Spanned;

use super::super::estimate;
use super::super::file::{ConfigTable, ExperimentFile, SetupTable, TargetTable, WorkloadTable};
use super::configs::Resolved;
use super::fingerprint::{self, Definition};
use super::problems::Problems;
use super::setups::{self, Setup};
use super::targets::{self, Target};
use super::url::{External, UrlCell};
use super::{Cell, SettingsCheck};
use crate::dbms::url::ServerUrl;
use crate::dbms::{DbmsKind, Params, Setting, StatementMode, TargetSpec};
use crate::request::{Malloc, ServerSpec};
use crate::server::{Located, Refusal, ServerSettings};

/// A cell of the matrix: its label and the indexes of its target, config, allocator, setup.
pub(super) struct Label {
    pub label: String,
    pub target: usize,
    pub config: usize,
    pub allocator: usize,
    pub setup: usize,
}

/// Every combination, target by target; a config or a setup applies to the targets it names
/// (all when it names none). More than `max` combinations (times `repeats`) is a problem, and
/// then none is built: nothing a file says may make the plan allocate without bound.
#[allow(clippy::too_many_arguments)]
pub(super) fn labels(
    p: &mut Problems<'_>,
    file: &ExperimentFile,
    configs: &[&ConfigTable],
    resolved: &std::collections::BTreeMap<String, Resolved>,
    allocators: &[Spanned<Malloc>],
    setups: &[&SetupTable],
    repeats: u32,
    max: usize,
) -> Vec<Label> {
    let applies = |c: &ConfigTable, t: &TargetTable| {
        resolved
            .get(c.name.get_ref())
            .and_then(|r| r.targets.as_ref())
            .is_none_or(|ts| ts.iter().any(|n| n == t.name.get_ref()))
    };
    let setup_applies = |s: &SetupTable, t: &TargetTable| {
        s.targets
            .as_ref()
            .is_none_or(|ts| ts.iter().any(|n| n.get_ref() == t.name.get_ref()))
    };
    let combinations = file
        .targets
        .iter()
        .map(|t| {
            let c = configs.iter().filter(|c| applies(c, t)).count();
            let s = setups.iter().filter(|s| setup_applies(s, t)).count();
            c.saturating_mul(s)
        })
        .fold(0usize, usize::saturating_add)
        .saturating_mul(allocators.len());
    let count = combinations.saturating_mul(repeats as usize);
    if count > max {
        p.push(
            p.file_start(),
            format!("{count} cells ({combinations} x {repeats} repeats) is more than {max}"),
        );
        return Vec::new();
    }
    let mut labels = Vec::new();
    for (ti, t) in file.targets.iter().enumerate() {
        let mut any = false;
        for (ci, c) in configs.iter().enumerate() {
            if !applies(c, t) {
                continue;
            }
            any = true;
            for (ai, a) in allocators.iter().enumerate() {
                for (si, s) in setups.iter().enumerate() {
                    if !setup_applies(s, t) {
                        continue;
                    }
                    labels.push(Label {
                        label: format!(
                            "{}/{}/{}/{}",
                            t.name.get_ref(),
                            c.name.get_ref(),
                            a.get_ref().name(),
                            s.name.get_ref()
                        ),
                        target: ti,
                        config: ci,
                        allocator: ai,
                        setup: si,
                    });
                }
            }
        }
        if !any && !configs.is_empty() {
            p.at(
                &t.name,
                format!("no config applies to target {}", t.name.get_ref()),
            );
        }
        if !setups.iter().any(|s| setup_applies(s, t)) {
            p.at(
                &t.name,
                format!("no setup applies to target {}", t.name.get_ref()),
            );
        }
    }
    labels
}

/// What every cell shares.
pub(super) struct Matrix<'a> {
    pub file: &'a ExperimentFile,
    pub workload: &'a WorkloadTable,
    pub configs: &'a [&'a ConfigTable],
    pub resolved: &'a std::collections::BTreeMap<String, Resolved>,
    pub allocators: &'a [Spanned<Malloc>],
    pub setups: &'a [Setup],
    pub targets: &'a [Target],
    /// Whether the cells may change servers given by URL (`allow_server_changes`).
    pub allow: bool,
}

/// Builds each labelled cell once (repeat 1), and the server configurations to check (each
/// distinct one once).
pub(super) fn build(
    p: &mut Problems<'_>,
    m: &Matrix<'_>,
    labels: &[Label],
) -> (Vec<Cell>, Vec<SettingsCheck>) {
    let mut cells = Vec::new();
    let mut checks = Vec::new();
    let mut check_keys = BTreeSet::new();
    let mut bytes = 0;
    for l in labels {
        // Bounded while it is built, not only after: one cell's copy of a huge config text,
        // times thousands of cells, must not be allocated first and reported later.
        if let Some(msg) = super::super::limits::too_large(bytes, 1) {
            p.push(p.file_start(), msg);
            break;
        }
        let cell = build_cell(p, m, l, &mut checks, &mut check_keys);
        bytes += cell.bytes();
        cells.push(cell);
    }
    (cells, checks)
}

/// One cell's parts, looked up from its label.
struct Parts<'a> {
    /// Its target as written.
    table: &'a TargetTable,
    /// Its target, checked.
    target: &'a Target,
    /// Its config as written.
    config: &'a ConfigTable,
    /// Its config along `extends`.
    resolved: Resolved,
    /// Where problems with its config point (the file's start for the default config).
    config_at: String,
    /// Its allocator.
    malloc: Malloc,
    /// Its setup.
    setup: &'a Setup,
}

impl<'a> Parts<'a> {
    fn of(p: &Problems<'_>, m: &Matrix<'a>, l: &Label) -> Self {
        let config = m.configs[l.config];
        Parts {
            table: &m.file.targets[l.target],
            target: &m.targets[l.target],
            config,
            resolved: m
                .resolved
                .get(config.name.get_ref())
                .cloned()
                .unwrap_or_default(),
            config_at: if config.name.span() == (0..0) {
                p.file_start()
            } else {
                p.source.at_span(config.name.span())
            },
            malloc: *m.allocators[l.allocator].get_ref(),
            setup: &m.setups[l.setup],
        }
    }

    fn kind(&self) -> DbmsKind {
        self.target.kind
    }
}

/// A cell's settings: its options in order (the setup's cache, unless the config sets it,
/// then the config's options), and every setting with where it was written (the config's
/// fragments' first).
struct CellSettings {
    options: Vec<(String, String)>,
    located: Vec<Located>,
}

impl CellSettings {
    fn of(p: &Problems<'_>, parts: &Parts<'_>) -> Self {
        let r = &parts.resolved;
        let mut located: Vec<Located> = r.fragments.iter().flat_map(|f| f.settings()).collect();
        let cache = parts.kind().cache(&parts.target.params);
        let config_sets_cache = located
            .iter()
            .map(|l| crate::server::normalize(&l.key))
            .chain(r.options.iter().map(|o| crate::server::normalize(&o.0)))
            .any(|k| k == cache.name);
        let mut options: Vec<(String, String)> = Vec::new();
        let setup = parts.setup;
        if let Some((size, span)) = &setup.cache
            && !config_sets_cache
        {
            let bytes = setups::cache_bytes(*size, &setup.workload);
            options.push((cache.name.to_string(), setups::cache_value(&cache, bytes)));
            located.push(Located {
                key: cache.name.to_string(),
                at: p.source.at_span(span.clone()),
                private: false,
            });
        }
        for (k, v, at) in &r.options {
            let v = match parts.target.family {
                Some(f) => f.config_value(v),
                None => v.clone(),
            };
            options.push((k.clone(), v));
            located.push(Located {
                key: k.clone(),
                at: at.clone(),
                private: false,
            });
        }
        CellSettings { options, located }
    }

    /// Where `key` was last set; `config_at` when nowhere.
    fn locate(&self, key: &str, config_at: &str) -> String {
        self.located
            .iter()
            .rev()
            .find(|l| l.key == key)
            .map_or_else(|| config_at.to_string(), |l| l.at.clone())
    }
}

/// Builds the cell of label `l`; a server's configuration to check goes to `checks` unless
/// `check_keys` says it is there already.
fn build_cell(
    p: &mut Problems<'_>,
    m: &Matrix<'_>,
    l: &Label,
    checks: &mut Vec<SettingsCheck>,
    check_keys: &mut BTreeSet<String>,
) -> Cell {
    let parts = Parts::of(p, m, l);
    if let Some(external) = &parts.target.external {
        let url = url_cell(m.allow, &parts, external).url(p, parts.setup);
        let params = parts.target.params.clone();
        let mut cell = cell(m.workload, l, &parts, None, params, &[], Some(&url));
        cell.target.url = Some(url);
        // No server to start and stop.
        let server_s = parts.kind().assumed_rates(&cell.target.params).server_s;
        cell.estimate = cell
            .estimate
            .saturating_sub(std::time::Duration::from_secs_f64(server_s));
        cell.external = Some(external.clone());
        cell.allow_server_changes = m.allow;
        return cell;
    }
    let settings = CellSettings::of(p, &parts);
    let (server, params, pragmas) = match parts.target.family {
        None => {
            let params = embedded_params(p, &parts, &settings);
            (None, params, settings.options)
        }
        Some(_) => {
            let spec = server_spec(p, &parts, settings, checks, check_keys);
            (Some(spec), parts.target.params.clone(), Vec::new())
        }
    };
    cell(m.workload, l, &parts, server, params, &pragmas, None)
}

/// What a URL target's cell is checked with: its config's fragments and options as written.
fn url_cell<'a>(allow: bool, parts: &'a Parts<'_>, external: &'a External) -> UrlCell<'a> {
    UrlCell {
        target: parts.table.name.get_ref(),
        kind: parts.kind(),
        url: &external.url,
        config: parts.config.name.get_ref(),
        config_at: &parts.config_at,
        fragments: parts
            .resolved
            .fragments
            .iter()
            .map(|f| format!("{}:{}", f.path, f.first_line))
            .collect(),
        options: &parts.resolved.options,
        allow,
    }
}

/// An embedded target's parameters with the cell's options (its own settings: SQLite
/// pragmas); what only a server takes is a problem.
fn embedded_params(p: &mut Problems<'_>, parts: &Parts<'_>, settings: &CellSettings) -> Params {
    let (kind, name) = (parts.kind(), parts.table.name.get_ref());
    for f in &parts.resolved.fragments {
        p.push(
            format!("{}:{}", f.path, f.first_line),
            format!(
                "config {}: {kind} target {name} takes options, not a config file fragment",
                parts.config.name.get_ref(),
            ),
        );
    }
    let cluster = &parts.setup.cluster;
    if parts.setup.data_dir.is_some()
        || parts.setup.pooler.is_some()
        || cluster.replicas.is_some()
        || cluster.galera.is_some()
    {
        p.push(
            parts.config_at.clone(),
            format!(
                "target {name}: data_dir, pooler, replicas and galera are for server targets \
                 ({kind} runs inside ibench, its scratch database beside the results)"
            ),
        );
    }
    let mut embedded = targets::settings(parts.table);
    embedded.options = settings.options.clone();
    match kind.params(&embedded) {
        Ok(params) => params,
        Err(e) => {
            let at = match &e.setting {
                Setting::Option(name) => settings.locate(name, &parts.config_at),
                _ => parts.config_at.clone(),
            };
            p.push(at, e.message);
            parts.target.params.clone()
        }
    }
}

/// A server target's managed server with the cell's config, allocator, data directory and
/// pooler; its configuration goes to `checks` (each distinct one once, by `check_keys`).
fn server_spec(
    p: &mut Problems<'_>,
    parts: &Parts<'_>,
    settings: CellSettings,
    checks: &mut Vec<SettingsCheck>,
    check_keys: &mut BTreeSet<String>,
) -> ServerSpec {
    let (t, target, setup) = (parts.table, parts.target, parts.setup);
    let fragments = &parts.resolved.fragments;
    let text: Vec<&str> = fragments.iter().map(|f| f.text.as_str()).collect();
    let files: Vec<&PathBuf> = fragments.iter().filter_map(|f| f.file.as_ref()).collect();
    let spec = ServerSpec {
        kind: parts.kind(),
        bin_dir: target.bin_dir.clone(),
        config_text: (!text.is_empty()).then(|| text.join("\n")),
        config_file: (files.len() == 1).then(|| files[0].clone()),
        options: settings.options,
        malloc: parts.malloc,
        keep: false,
        start_timeout_s: t
            .start_timeout_seconds
            .as_ref()
            .map_or(120, |v| *v.get_ref()),
        data_root: setup.data_dir.clone().or_else(|| target.data_dir.clone()),
        pooler: setup.pooler.as_ref().map(|(spec, _)| *spec),
        user: target.user.clone(),
        replicas: None,
        galera: None,
        on_node_failure: Default::default(),
    };
    let spec = with_cluster(p, parts, spec);
    check_pooler(p, parts);
    let key = format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}",
        spec.kind, target.params, spec.bin_dir, spec.config_text, spec.options
    );
    if check_keys.insert(key) {
        checks.push(SettingsCheck {
            server: ServerSpec {
                malloc: Malloc::Glibc,
                ..spec.clone()
            },
            params: target.params.clone(),
            settings: settings.located,
            at: parts.config_at.clone(),
        });
    }
    spec
}

/// `spec` with the setup's replicas or Galera cluster (`replicas`, `sync_replicas`,
/// `read_from`, `galera`, `client_nodes`), checked for the cell's target as the command line's
/// flags are (`server::replicas`).
fn with_cluster(p: &mut Problems<'_>, parts: &Parts<'_>, mut spec: ServerSpec) -> ServerSpec {
    use crate::request::NodeFailure;
    use crate::request::WorkloadSpec;
    use crate::server::replicas::{
        ClusterNames, galera_spec, galera_workload, on_node_failure, replica_spec,
    };
    let s = &parts.setup.cluster;
    let name = parts.table.name.get_ref().as_str();
    let choice =
        |p: &mut Problems<'_>, v: &Option<Spanned<String>>, key: &str, values: [&str; 2]| {
            let v = v.as_ref()?;
            if values.contains(&v.get_ref().as_str()) {
                Some(v.get_ref() == values[1])
            } else {
                p.at(
                    v,
                    format!(
                        "{key} {:?}: expected {} or {}",
                        v.get_ref(),
                        values[0],
                        values[1]
                    ),
                );
                None
            }
        };
    if let Some(count) = &s.replicas {
        let sync = s.sync_replicas.as_ref().map_or(0, |v| *v.get_ref());
        let read = choice(p, &s.read_from, "read_from", ["primary", "replicas"]).unwrap_or(false);
        if let (true, Some(v), crate::request::WorkloadSpec::Tpcc(_)) =
            (read, &s.read_from, &parts.setup.workload)
        {
            let why = crate::request::server::TPCC_READS_ON_PRIMARY;
            p.at(v, format!("read_from = \"replicas\": {why}"));
        }
        let kind = spec.kind;
        match replica_spec(kind, *count.get_ref(), sync, read, ClusterNames::KEYS) {
            Ok(r) => spec.replicas = Some(r),
            Err(e) => p.at(count, format!("target {name}: {e}")),
        }
    } else {
        for (v, key) in [(&s.sync_replicas, "sync_replicas")] {
            if let Some(v) = v {
                p.at(v, format!("{key} is for replicas: add replicas = N"));
            }
        }
        if let Some(v) = &s.read_from {
            p.at(v, "read_from is for replicas: add replicas = N");
        }
    }
    if let Some(nodes) = &s.galera {
        let all = !choice(p, &s.client_nodes, "client_nodes", ["all", "first"]).unwrap_or(false);
        if s.replicas.is_some() {
            p.at(
                nodes,
                "galera and replicas are two kinds of cluster: choose one per setup",
            );
        }
        match galera_spec(
            spec.kind,
            &parts.target.params,
            *nodes.get_ref(),
            all,
            ClusterNames::KEYS,
        )
        .and_then(|g| match &parts.setup.workload {
            WorkloadSpec::InsertBenchmark(w) => {
                galera_workload(&g, w, ClusterNames::KEYS).map(|()| g)
            }
            _ => Ok(g),
        }) {
            Ok(g) => spec.galera = Some(g),
            Err(e) => p.at(nodes, format!("target {name}: {e}")),
        }
    } else if let Some(v) = &s.client_nodes {
        p.at(v, "client_nodes is for a Galera cluster: add galera = N");
    }
    if let (Some(v), Some(go_on)) = (
        &s.on_node_failure,
        choice(
            p,
            &s.on_node_failure,
            "on_node_failure",
            ["fail", "continue"],
        ),
    ) {
        let policy = if go_on {
            NodeFailure::Continue
        } else {
            NodeFailure::Fail
        };
        let cluster = spec.replicas.is_some() || spec.galera.is_some();
        match on_node_failure(cluster, policy, ClusterNames::KEYS) {
            Ok(policy) => spec.on_node_failure = policy,
            Err(e) => p.at(v, format!("target {name}: {e}")),
        }
    }
    spec
}

/// The setup's pooler, which the target's server family must take.
fn check_pooler(p: &mut Problems<'_>, parts: &Parts<'_>) {
    let Some((spec, span)) = &parts.setup.pooler else {
        return;
    };
    let pooler = ServerSettings {
        family: parts.target.family,
        pooler: Some(spec.kind),
        ..Default::default()
    };
    for problem in pooler.check(&mut |_, _| {}) {
        if let Refusal::PoolerIsFor { pooler, servers } = problem.refusal {
            p.push(
                p.source.at_span(span.clone()),
                format!(
                    "pooler {} is for {servers} targets, not target {} ({})",
                    pooler.name(),
                    parts.table.name.get_ref(),
                    parts.kind()
                ),
            );
        }
    }
}

/// The cell of label `l` from its parts: the workload's run settings, the estimate, and the
/// fingerprint of everything that defines its results (for a server given by URL, `url`:
/// the URL it connects with, its password left out).
fn cell(
    w: &WorkloadTable,
    l: &Label,
    parts: &Parts<'_>,
    server: Option<ServerSpec>,
    params: Params,
    pragmas: &[(String, String)],
    url: Option<&ServerUrl>,
) -> Cell {
    let url_text = url.map(ServerUrl::without_password);
    let (kind, setup) = (parts.kind(), parts.setup);
    let maintenance = w.maintenance.unwrap_or(true);
    let statements = if w.plain_sql == Some(true) {
        StatementMode::Plain
    } else {
        StatementMode::Prepared
    };
    let definition = Definition {
        dbms: kind.server_name(),
        server: server.as_ref().map(|s| {
            fingerprint::server(
                s.bin_dir.as_deref(),
                &params,
                &s.config_text,
                &s.options,
                s.malloc,
            )
        }),
        data_dir: server.as_ref().and_then(|s| s.data_root.as_deref()),
        pooler: server.as_ref().and_then(|s| s.pooler.as_ref()),
        replicas: server.as_ref().and_then(|s| s.replicas.as_ref()),
        galera: server.as_ref().and_then(|s| s.galera.as_ref()),
        version: parts.table.version.as_ref().map(|v| v.get_ref().as_str()),
        url: url_text.as_deref(),
        pragmas,
        dataset: setup.dataset.as_deref(),
        workload: &setup.workload,
        maintenance,
        statements,
        resources: &setup.resources,
        cooldown_s: w.cooldown.unwrap_or(0),
        no_sampling: setup.no_sampling,
    };
    Cell {
        label: l.label.clone(),
        repeat: 1,
        position: 1,
        fingerprint: definition.fingerprint(),
        estimate: estimate::workload(kind, &params, &setup.workload, maintenance)
            + estimate::cooldowns(&setup.workload, w.cooldown.unwrap_or(0)),
        target: TargetSpec {
            kind,
            path: None,
            url: None,
            client_url: None,
            replica_urls: Vec::new(),
            read_from_replicas: false,
            node_urls: Vec::new(),
            clients_on_all_nodes: false,
            params,
        },
        server,
        workload: setup.workload.clone(),
        maintenance,
        statements,
        report_interval_s: w.report_interval.unwrap_or(0),
        cooldown_s: w.cooldown.unwrap_or(0),
        dataset: setup.dataset.clone(),
        resources: setup.resources.clone(),
        external: None,
        allow_server_changes: false,
        no_sampling: setup.no_sampling,
    }
}

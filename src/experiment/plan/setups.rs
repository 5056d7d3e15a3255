//! Setups: each one's workload spec (`ibench run`'s or `ibench micro`'s defaults, then
//! `[workload]`, then the setup, then `scale`, assembled and checked by the spec itself) and
//! its DBMS cache size.

use super::super::file::{Clients, SetupTable, WorkloadKind, WorkloadTable};
use super::problems::Problems;
use crate::dbms::CacheSetting;
use crate::request::{InsertBenchmarkSpec, Layered, Step, WorkloadSpec};
use crate::request::{PoolMode, PoolerSpec};
use toml::Spanned;

/// Largest size a file may give (1 PiB): beyond it a value is a typo, and the arithmetic on
/// it would overflow.
pub(super) const MAX_SIZE: u64 = 1 << 50;
/// Largest multiple of the estimated database size a cache may be.
const MAX_CACHE_TIMES: f64 = 1000.0;

/// The DBMS cache a setup asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum CacheSize {
    Bytes(u64),
    /// A multiple of the estimated database size after the load.
    Times(f64),
}

/// A setup's workload and cache, checked.
pub(super) struct Setup {
    /// Its name.
    pub name: String,
    /// Where problems with it point (`file:line` of its name, or of `[workload]`).
    pub at: String,
    /// The workload, scaled.
    pub workload: WorkloadSpec,
    /// The cache it asks for, with where it was written.
    pub cache: Option<(CacheSize, std::ops::Range<usize>)>,
    /// Where the server's data directory goes (checked by the plan).
    pub data_dir: Option<std::path::PathBuf>,
    /// The pooler in front of the server, with where it was written.
    pub pooler: Option<(PoolerSpec, std::ops::Range<usize>)>,
    /// The dataset its cells start from (their load left out).
    pub dataset: Option<String>,
    /// Memory cap, IO limits, CPUs, OS cache mode.
    pub resources: crate::request::Resources,
    /// Its replicas or Galera cluster as written (checked per target: `cells::with_cluster`).
    pub cluster: ClusterKeys,
    /// No once-a-second sampling during steps (`no_sampling`, `--no-sampling`).
    pub no_sampling: bool,
}

/// The setup's value of a run condition key, else the workload's (`post_write_pause`,
/// `random_pk_rows`, `scan_clients`, `no_sampling`).
fn pick<'a, T>(
    setup: &'a Option<Spanned<T>>,
    workload: &'a Option<Spanned<T>>,
) -> Option<&'a Spanned<T>> {
    setup.as_ref().or(workload.as_ref())
}

/// The value of [`pick`].
fn value<T: Copy>(setup: &Option<Spanned<T>>, workload: &Option<Spanned<T>>) -> Option<T> {
    pick(setup, workload).map(|v| *v.get_ref())
}

/// Where the run condition key `field` (a spec field's name) was given, for a problem with its
/// value to point at it.
fn condition_at(w: &WorkloadTable, s: &SetupTable, field: &str) -> Option<std::ops::Range<usize>> {
    match field {
        "post_write_pause" => pick(&s.post_write_pause, &w.post_write_pause).map(Spanned::span),
        "random_pk_rows" => pick(&s.random_pk_rows, &w.random_pk_rows).map(Spanned::span),
        "scan_clients" => pick(&s.scan_clients, &w.scan_clients).map(Spanned::span),
        _ => None,
    }
}

/// A setup's cluster keys as written.
#[derive(Default)]
pub(super) struct ClusterKeys {
    pub replicas: Option<Spanned<usize>>,
    pub sync_replicas: Option<Spanned<usize>>,
    pub read_from: Option<Spanned<String>>,
    pub galera: Option<Spanned<usize>>,
    pub client_nodes: Option<Spanned<String>>,
    pub on_node_failure: Option<Spanned<String>>,
}

/// The pooler setup `s` asks for, checked against its workload's connections.
pub(super) fn pooler(
    p: &mut Problems<'_>,
    s: &SetupTable,
    workload: &WorkloadSpec,
) -> Option<(PoolerSpec, std::ops::Range<usize>)> {
    let Some(kind) = &s.pooler else {
        if let Some(v) = &s.pool_size {
            p.at(v, "pool_size is for a pooler: add pooler = \"pgbouncer\"");
        }
        if let Some(v) = &s.pool_mode {
            p.at(v, "pool_mode is for a pooler: add pooler = \"pgbouncer\"");
        }
        return None;
    };
    let spec = PoolerSpec {
        kind: *kind.get_ref(),
        pool_size: s.pool_size.as_ref().map(|v| *v.get_ref()).unwrap_or(4),
        pool_mode: s
            .pool_mode
            .as_ref()
            .map(|v| *v.get_ref())
            .unwrap_or(PoolMode::Transaction),
    };
    let connections = workload.connections();
    if let Err(msg) = spec.check(connections, "pool_size", "pool_mode") {
        let at = s
            .pool_size
            .as_ref()
            .map(|v| v.span())
            .unwrap_or(kind.span());
        p.push(p.source.at_span(at), msg);
    }
    if let Err(e) = crate::server::pooler::binary() {
        p.at(kind, e.to_string());
    }
    Some((spec, kind.span()))
}

/// How an experiment file names a spec field: `rows_per_client` for `l0_rows`,
/// `max_error_rate` for `max_error_pct`, the field's own name otherwise.
pub fn key_name(field: &str) -> String {
    match field {
        "l0_rows" => "rows_per_client".to_string(),
        "max_error_pct" => "max_error_rate".to_string(),
        other => other.to_string(),
    }
}

/// The workload and cache of setup `s`; problems point at the setup (or at `[workload]` for
/// the default setup, `at`).
pub(super) fn setup(
    p: &mut Problems<'_>,
    workload: &WorkloadTable,
    s: &SetupTable,
    scale: f64,
    at: String,
) -> Setup {
    numbers(p, workload);
    let mut spec = match workload.kind.unwrap_or_default() {
        WorkloadKind::InsertBenchmark => insert_benchmark(p, workload, s, scale, &at),
        WorkloadKind::Micro => micro(p, workload, s, scale, &at),
        WorkloadKind::Tpcc => tpcc(p, workload, s, scale, &at),
    };
    let dataset = s.dataset.as_ref().and_then(|d| {
        let checked = crate::dataset::check_name(d.get_ref())
            .map_err(|e| e.to_string())
            .and_then(|()| spec.restrict(false, true));
        match checked {
            Ok(()) => Some(d.get_ref().clone()),
            Err(e) => {
                p.at(d, format!("dataset: {e}"));
                None
            }
        }
    });
    if let Err(e) = spec.validate(key_name) {
        let mut message = e.message;
        if scale != 1.0 {
            message.push_str(&format!(" (rows and seconds after scale {scale})"));
        }
        let at =
            condition_at(workload, s, e.field).map_or(at.clone(), |span| p.source.at_span(span));
        p.push(at, message);
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
                         1G, or a multiple of the estimated database size such as 0.5x (at most \
                         1P, 1000x)",
                        c.get_ref()
                    ),
                );
                None
            }
        },
    };
    Setup {
        name: s.name.get_ref().clone(),
        at,
        workload: spec,
        cache,
        data_dir: None,
        pooler: None,
        dataset,
        resources: Default::default(),
        cluster: ClusterKeys {
            replicas: s.replicas.clone(),
            sync_replicas: s.sync_replicas.clone(),
            read_from: s.read_from.clone(),
            galera: s.galera.clone(),
            client_nodes: s.client_nodes.clone(),
            on_node_failure: s.on_node_failure.clone(),
        },
        no_sampling: value(&s.no_sampling, &workload.no_sampling).unwrap_or(false),
    }
}

/// The workload's floats that are not numbers (`nan`, `inf`), each a problem at its key: JSON
/// has no such values, so the spec would silently get its default instead (the spec checks
/// the ranges of finite ones).
fn numbers(p: &mut Problems<'_>, w: &WorkloadTable) {
    for (key, value) in [
        ("max_price", &w.max_price),
        ("max_error_rate", &w.max_error_pct),
    ] {
        if let Some(v) = value
            && !v.get_ref().is_finite()
        {
            p.at(
                v,
                format!(
                    "{key} {} is not a number: expected a finite number",
                    v.get_ref()
                ),
            );
        }
    }
}

/// Fields of one workload kind given to another: each is a problem at `at`.
fn refuse(p: &mut Problems<'_>, at: &str, kind: &str, given: &[(&str, bool)]) {
    for (name, is_given) in given {
        if *is_given {
            p.push(
                at.to_string(),
                format!("{name} does not apply to kind = \"{kind}\""),
            );
        }
    }
}

fn insert_benchmark(
    p: &mut Problems<'_>,
    workload: &WorkloadTable,
    s: &SetupTable,
    scale: f64,
    at: &str,
) -> WorkloadSpec {
    let w = workload;
    refuse(
        p,
        at,
        "insert-benchmark",
        &[
            ("benchmarks", w.benchmarks.is_some()),
            ("tables", w.tables.is_some()),
            (
                "table_rows",
                w.table_rows.is_some() || s.table_rows.is_some(),
            ),
            ("seconds", w.seconds.is_some()),
            ("warehouses", w.warehouses.is_some()),
            ("mix", w.mix.is_some()),
            ("load_threads", w.load_threads.is_some()),
            ("foreign_keys", w.foreign_keys.is_some()),
            ("rate", w.rate.is_some()),
            (
                "clients as a list (one count for the Insert Benchmark)",
                matches!(w.clients, Some(Clients::Many(_))),
            ),
            (
                "post_write_pause",
                pick(&s.post_write_pause, &w.post_write_pause).is_some(),
            ),
            (
                "random_pk_rows",
                pick(&s.random_pk_rows, &w.random_pk_rows).is_some(),
            ),
        ],
    );
    let mut table = serde_json::to_value(workload).unwrap_or_default();
    if matches!(w.clients, Some(Clients::Many(_))) {
        // Refused above: one problem is enough.
        table["clients"] = serde_json::Value::Null;
    }
    let layers = [
        table,
        serde_json::json!({
            "clients": s.clients.as_ref().map(|v| *v.get_ref()),
            "l0_rows": s.rows_per_client.as_ref().map(|v| *v.get_ref()),
            "l1_rows": s.l1_rows.as_ref().map(|v| *v.get_ref()),
            "l2_rows": s.l2_rows.as_ref().map(|v| *v.get_ref()),
            "warmup": w.warmup,
            "scan_clients": value(&s.scan_clients, &w.scan_clients),
        }),
    ];
    assembled(p, at, &layers, scale, WorkloadSpec::InsertBenchmark)
}

/// The microbenchmarks of setup `s`: `[workload]`'s fields over `ibench micro`'s defaults
/// (a setup's `clients` is one count instead of the list), rows and seconds scaled.
fn micro(
    p: &mut Problems<'_>,
    workload: &WorkloadTable,
    s: &SetupTable,
    scale: f64,
    at: &str,
) -> WorkloadSpec {
    let w = workload;
    let (_, shared) = at_client_counts(p, w, s, at, "micro", &tpcc_fields(w));
    // Names as `ibench micro --benchmarks` takes them, each benchmark by its full name.
    let benchmarks = w.benchmarks.as_ref().map(|names| {
        let mut out = Vec::new();
        for name in names {
            let found = crate::workload::micro::expand(name);
            if found.is_empty() {
                p.push(
                    at.to_string(),
                    format!(
                        "unknown benchmark {name:?}: expected a name from `ibench micro --list`, \
                         a name without its range length, or all"
                    ),
                );
            }
            out.extend(found.iter().map(|e| e.name()));
        }
        out
    });
    let own = serde_json::json!({
        "benchmarks": benchmarks,
        "table_rows": s.table_rows.as_ref().map(|v| *v.get_ref()).or(w.table_rows),
        "post_write_pause": value(&s.post_write_pause, &w.post_write_pause),
        "random_pk_rows": value(&s.random_pk_rows, &w.random_pk_rows),
    });
    assembled(p, at, &[shared, own], scale, WorkloadSpec::Micro)
}

/// The TPC-C-like workload of setup `s`: `[workload]`'s fields over `ibench tpcc`'s defaults
/// (a setup's `clients` is one count instead of the list), seconds scaled.
fn tpcc(
    p: &mut Problems<'_>,
    workload: &WorkloadTable,
    s: &SetupTable,
    scale: f64,
    at: &str,
) -> WorkloadSpec {
    let w = workload;
    let (clients, shared) = at_client_counts(p, w, s, at, "tpcc", &micro_fields(w, s));
    let own = serde_json::json!({
        "warehouses": w.warehouses,
        "mix": w.mix,
        // As `ibench tpcc`: the largest client count unless given.
        "load_threads": w.load_threads.or_else(|| clients.as_ref()?.iter().copied().max()),
        "foreign_keys": w.foreign_keys,
        "rate": w.rate,
    });
    assembled(p, at, &[shared, own], scale, WorkloadSpec::Tpcc)
}

/// What the microbenchmarks and TPC-C share, both run at each of a list of client counts:
/// the Insert Benchmark's fields, `others` (the other kind's own, with whether given) and
/// `scan_clients` refused for `kind`; returns the client counts (a setup's one count, else
/// `[workload]`'s list) and the layer of the fields both take.
fn at_client_counts(
    p: &mut Problems<'_>,
    w: &WorkloadTable,
    s: &SetupTable,
    at: &str,
    kind: &str,
    others: &[(&'static str, bool)],
) -> (Option<Vec<usize>>, serde_json::Value) {
    let mut given = insert_benchmark_fields(w, s);
    given.extend_from_slice(others);
    given.push((
        "scan_clients",
        pick(&s.scan_clients, &w.scan_clients).is_some(),
    ));
    refuse(p, at, kind, &given);
    let clients = s
        .clients
        .as_ref()
        .map(|c| vec![*c.get_ref()])
        .or_else(|| w.clients.as_ref().map(Clients::counts));
    let layer = serde_json::json!({
        "clients": clients,
        "tables": w.tables,
        "seconds": w.seconds,
        "warmup": w.warmup,
        "seed": w.seed,
        "max_tries": w.max_tries,
        "max_reconnects": w.max_reconnects,
        "max_error_pct": w.max_error_pct.as_ref().map(|v| *v.get_ref()),
    });
    (clients, layer)
}

/// The microbenchmarks' own fields, each with whether `w` or `s` gives it (TPC-C refuses
/// those given).
fn micro_fields(w: &WorkloadTable, s: &SetupTable) -> [(&'static str, bool); 4] {
    [
        ("benchmarks", w.benchmarks.is_some()),
        (
            "table_rows",
            w.table_rows.is_some() || s.table_rows.is_some(),
        ),
        (
            "post_write_pause",
            pick(&s.post_write_pause, &w.post_write_pause).is_some(),
        ),
        (
            "random_pk_rows",
            pick(&s.random_pk_rows, &w.random_pk_rows).is_some(),
        ),
    ]
}

/// TPC-C's own fields, each with whether `w` gives it (the microbenchmarks refuse those
/// given).
fn tpcc_fields(w: &WorkloadTable) -> [(&'static str, bool); 5] {
    [
        ("warehouses", w.warehouses.is_some()),
        ("mix", w.mix.is_some()),
        ("load_threads", w.load_threads.is_some()),
        ("foreign_keys", w.foreign_keys.is_some()),
        ("rate", w.rate.is_some()),
    ]
}

/// The Insert Benchmark's own fields, each with whether `w` or `s` gives it (another kind
/// refuses those given).
fn insert_benchmark_fields(w: &WorkloadTable, s: &SetupTable) -> Vec<(&'static str, bool)> {
    vec![
        ("steps", w.steps.is_some()),
        (
            "rows_per_client",
            w.l0_rows.is_some() || s.rows_per_client.is_some(),
        ),
        ("l1_rows", w.l1_rows.is_some() || s.l1_rows.is_some()),
        ("l2_rows", w.l2_rows.is_some() || s.l2_rows.is_some()),
        ("l0_batch", w.l0_batch.is_some()),
        ("l1_batch", w.l1_batch.is_some()),
        ("l2_batch", w.l2_batch.is_some()),
        ("writer_batch", w.writer_batch.is_some()),
        ("query_seconds", w.query_seconds.is_some()),
        ("deletes", w.deletes.is_some()),
        ("secondary_indexes", w.secondary_indexes.is_some()),
        ("table_mode", w.table_mode.is_some()),
        ("table_prefix", w.table_prefix.is_some()),
        ("index_ddl", w.index_ddl.is_some()),
        ("data_min", w.data_min.is_some()),
        ("data_max", w.data_max.is_some()),
        ("data_random_pct", w.data_random_pct.is_some()),
        ("cashregisters", w.cashregisters.is_some()),
        ("customers", w.customers.is_some()),
        ("products", w.products.is_some()),
        ("max_price", w.max_price.is_some()),
    ]
}

/// The workload `wrap` makes of the spec `layers` assemble ([`crate::request::assemble`]); a
/// value that does not fit its field is a problem at `at`, and the spec's defaults stand in
/// for the checks that follow.
fn assembled<T: Layered>(
    p: &mut Problems<'_>,
    at: &str,
    layers: &[serde_json::Value],
    scale: f64,
    wrap: fn(T) -> WorkloadSpec,
) -> WorkloadSpec {
    match crate::request::assemble::<T>(layers, scale) {
        Ok(spec) => wrap(spec),
        Err(e) => {
            p.push(at.to_string(), e.message(key_name));
            wrap(T::default())
        }
    }
}

/// Parses a size (the one parser of sizes, shared with `--memory-limit` and `--io-limit`).
pub use crate::request::resources::parse_size;

pub(super) fn parse_cache(s: &str) -> Option<CacheSize> {
    let t = s.trim();
    if let Some(x) = t.strip_suffix(['x', 'X']) {
        let v: f64 = x.trim().parse().ok()?;
        return (v.is_finite() && v > 0.0 && v <= MAX_CACHE_TIMES).then_some(CacheSize::Times(v));
    }
    parse_size(t).map(CacheSize::Bytes)
}

/// The cache size in bytes `size` asks for, for a workload.
pub(super) fn cache_bytes(size: CacheSize, workload: &WorkloadSpec) -> u64 {
    let loaded = match workload {
        WorkloadSpec::InsertBenchmark(w) => estimated_loaded_bytes(w),
        WorkloadSpec::Micro(m) => m.loaded_bytes(),
        WorkloadSpec::Tpcc(t) => t.estimated_db_bytes() / 2,
    };
    match size {
        CacheSize::Bytes(b) => b,
        // A float-to-int cast saturates; the clamp keeps it in range of the setting.
        CacheSize::Times(x) => ((loaded as f64 * x) as u64).min(MAX_SIZE),
    }
}

/// The value of the cache setting for `bytes`: at least its minimum, a whole number of MiB.
pub(super) fn cache_value(setting: &CacheSetting, bytes: u64) -> String {
    let mib = 1u64 << 20;
    let bytes = bytes.clamp(setting.min_bytes, MAX_SIZE).div_ceil(mib) * mib;
    (setting.format)(bytes)
}

/// Bytes the live rows take after the load (l.i0, plus l.i1/l.i2 without deletes): ~60
/// bytes of columns and overhead plus the average `data`, and ~60% more per secondary index.
pub fn estimated_loaded_bytes(w: &InsertBenchmarkSpec) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbms::{DbmsKind, TargetSettings};

    fn setting(dbms: &str, engine: Option<&str>) -> CacheSetting {
        let kind = DbmsKind::find(dbms).unwrap();
        let params = kind
            .params(&TargetSettings {
                engine: engine.map(str::to_string),
                ..Default::default()
            })
            .unwrap();
        kind.cache(&params)
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
            cache_value(&setting("mariadb", Some("rocksdb")), u64::MAX),
            MAX_SIZE.to_string()
        );
        assert_eq!(parse_cache("0.5x"), Some(CacheSize::Times(0.5)));
        assert_eq!(parse_cache("2M"), Some(CacheSize::Bytes(2 << 20)));
        assert_eq!(parse_cache("abc"), None);
    }

    #[test]
    fn cache_values_per_dbms() {
        assert_eq!(
            cache_value(&setting("mariadb", None), 1),
            (8u64 << 20).to_string()
        );
        assert_eq!(
            cache_value(&setting("mariadb", Some("rocksdb")), 3 << 20),
            (3u64 << 20).to_string()
        );
        assert_eq!(cache_value(&setting("postgres", None), 100 << 20), "100MB");
        assert_eq!(cache_value(&setting("sqlite", None), 2 << 20), "-2048");
        assert_eq!(
            setting("mariadb", Some("rocksdb")).name,
            "rocksdb_block_cache_size"
        );
    }
}

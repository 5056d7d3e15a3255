//! The conformance suite: every DBMS of the registry (`DbmsKind::all()`, so RocksDB too when
//! built with the feature), and each variant of its settings that applies to it (MariaDB's
//! InnoDB and MyRocks engines), is opened through the library (`ibench::dbms::open`) and put
//! through the same checks. Embedded ones live in a temporary directory; servers run as a
//! managed throwaway server of their family (`ibench::server::ManagedServer`), never the local
//! services.
//!
//! What a DBMS cannot do is read from its descriptor (`kind.can(Capability::...)`,
//! `kind.embedded()`, `combined_index_ddl`, `can_scan`), never from its name: the suite then
//! says, in a `NOT CHECKED` line, what it left out and why. Only the test's own client
//! (`own.rs`, which checks what ibench did with SQL or handles of its own) knows each DBMS.
//!
//! To put some DBMS through the suite alone: `IBENCH_CONFORMANCE=<name>,... cargo test --test
//! tests conformance` (with `--features rocksdb` for RocksDB).

mod errors;
mod insert;
mod keyed;
mod own;
mod sql;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::sync::Mutex;

use ibench::dbms::{
    self, Capability, Dbms, DbmsKind, Params, Setting, StatementMode, Table, TableOrigin,
    TargetSettings, TargetSpec,
};
use ibench::request::{Malloc, ServerSpec};
use ibench::server::{Binaries, ManagedServer};

use crate::common::{Bench, ci, server_bench, skip};
use own::Own;

/// A table the test creates with its own SQL (or handle) before ibench opens the target: not
/// ibench's, until ibench replaces it.
const FOREIGN: &str = "cforeign";
/// Another, which ibench's microbenchmark connection replaces.
const FOREIGN_SB: &str = "cforeign_sb";
/// A table nobody creates.
const MISSING: &str = "cmissing";

/// Variants of the target settings the suite tries on every DBMS; those a DBMS refuses do not
/// apply to it. A short busy timeout, where a DBMS has one, keeps the forced lock waits short
/// (and long enough that a loaded machine does not force others).
fn variants() -> Vec<(&'static str, TargetSettings)> {
    let busy = TargetSettings {
        busy_timeout_ms: Some(2000),
        ..Default::default()
    };
    vec![
        ("", busy.clone()),
        (
            "engine=rocksdb",
            TargetSettings {
                engine: Some("rocksdb".to_string()),
                ..busy
            },
        ),
    ]
}

/// One target of the suite before it is opened: a DBMS and parameters it accepts.
struct Plan {
    /// What messages call it: `mysql`, `mysql engine=rocksdb`.
    label: String,
    kind: DbmsKind,
    params: Params,
}

/// The DBMS's parameters for `settings`, without the busy timeout when it has none; `None`
/// when it refuses another setting (the variant is not one of this DBMS's).
fn params_for(kind: DbmsKind, settings: &TargetSettings) -> Option<Params> {
    match kind.params(settings) {
        Ok(p) => Some(p),
        Err(e) if e.setting == Setting::BusyTimeout => {
            let without = TargetSettings {
                busy_timeout_ms: None,
                ..settings.clone()
            };
            params_for(kind, &without)
        }
        Err(_) => None,
    }
}

/// Every registered DBMS with each variant that applies to it (the first always does).
fn plans() -> Vec<Plan> {
    let only = std::env::var("IBENCH_CONFORMANCE").unwrap_or_default();
    let mut plans = Vec::new();
    for &kind in DbmsKind::all() {
        if !only.is_empty()
            && !only
                .split(',')
                .any(|n| DbmsKind::find(n.trim()) == Some(kind))
        {
            continue;
        }
        for (i, (name, settings)) in variants().iter().enumerate() {
            let Some(params) = params_for(kind, settings) else {
                assert!(i > 0, "{kind} refuses the suite's default settings");
                continue;
            };
            let label = format!("{kind} {name}").trim().to_string();
            plans.push(Plan {
                label,
                kind,
                params,
            });
        }
    }
    plans
}

/// A target, ready to open: where it is, the test's own client, and what must be kept alive.
pub struct Target {
    /// What messages call it.
    pub label: String,
    /// How to open it.
    pub spec: TargetSpec,
    /// The test's own client of it.
    pub own: Own,
    /// A server's password, which nothing ibench shows may contain.
    password: Option<String>,
    /// What the suite said it left out, each said once.
    said: Mutex<BTreeSet<String>>,
    _server: Option<ManagedServer>,
    _bench: Bench,
}

impl Target {
    /// The DBMS.
    pub fn kind(&self) -> DbmsKind {
        self.spec.kind
    }

    /// Whether its connections implement `capability`.
    pub fn can(&self, capability: Capability) -> bool {
        self.kind().can(capability)
    }

    /// Says that the suite leaves `what` out for this target, and why (a plain `cargo test`
    /// shows it, as it shows skips).
    pub fn not_checked(&self, what: &str, why: &str) {
        let line = format!("\nNOT CHECKED {}: {what} ({why})\n", self.label);
        if self.said.lock().unwrap().insert(line.clone()) {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }

    /// An embedded target in a temporary directory, or a managed server of the DBMS's
    /// family; `None` (skipped, or failed in CI) when its server cannot run here.
    fn prepare(plan: &Plan) -> Option<Target> {
        let kind = plan.kind;
        let mut spec = TargetSpec {
            kind,
            path: None,
            url: None,
            client_url: None,
            replica_urls: Vec::new(),
            read_from_replicas: false,
            node_urls: Vec::new(),
            clients_on_all_nodes: false,
            params: plan.params.clone(),
        };
        if kind.embedded() {
            let bench = Bench::new();
            spec.path = Some(bench.path("db"));
            return Some(Target {
                label: plan.label.clone(),
                own: Own::of(&spec),
                spec,
                password: None,
                said: Mutex::default(),
                _server: None,
                _bench: bench,
            });
        }
        let server = start_server(plan)?;
        spec.url = Some(server.0.url.clone());
        Some(Target {
            label: plan.label.clone(),
            own: Own::of(&spec),
            password: server.0.url.password().map(str::to_string),
            spec,
            said: Mutex::default(),
            _server: Some(server.0),
            _bench: server.1,
        })
    }
}

/// A server that cannot run here: the test fails in CI, is skipped otherwise (the line names
/// the target: the thread is named after it).
fn unavailable(label: &str, why: &str) {
    if ci() {
        panic!("{label}: {why} (CI=true: every registered DBMS must be checked)");
    }
    skip(why);
}

/// A managed throwaway server for `plan` (and the directory it lives in).
fn start_server(plan: &Plan) -> Option<(ManagedServer, Bench)> {
    let Some(family) = ibench::server::family(plan.kind) else {
        unavailable(
            &plan.label,
            "no server family manages it, so the suite cannot start one",
        );
        return None;
    };
    let binaries = match Binaries::locate(family, None, None, "--server-bin") {
        Ok(b) => b,
        Err(p) => {
            unavailable(&plan.label, &p.message);
            return None;
        }
    };
    let hidden = std::env::var("IBENCH_TEST_HIDE").unwrap_or_default();
    if let Some(b) = [&binaries.setup, &binaries.server].into_iter().find(|b| {
        hidden
            .split(',')
            .any(|h| b.as_path() == std::path::Path::new(h.trim()))
    }) {
        unavailable(
            &plan.label,
            &format!("{} hidden by IBENCH_TEST_HIDE", b.display()),
        );
        return None;
    }
    if let Err(m) = family.check_params(&plan.params) {
        unavailable(&plan.label, &m);
        return None;
    }
    let spec = ServerSpec {
        kind: plan.kind,
        bin_dir: None,
        config_text: None,
        config_file: None,
        options: Vec::new(),
        malloc: Malloc::Glibc,
        keep: false,
        start_timeout_s: 120,
        data_root: None,
        pooler: None,
        user: None,
        replicas: None,
        galera: None,
        on_node_failure: Default::default(),
    };
    let bench = server_bench();
    let (dir, log) = (bench.path("server"), bench.path("server.log"));
    match ManagedServer::start(&spec, &plan.params, &dir, &log, 8, None) {
        Ok(server) => Some((server, bench)),
        Err(e) => panic!(
            "{}: the managed server did not start: {e:#}\n{}",
            plan.label,
            std::fs::read_to_string(&log).unwrap_or_default()
        ),
    }
}

/// `name` as a table of one connection (its dense id `id`).
pub fn table(id: usize, name: &str) -> Table {
    Table {
        id,
        name: name.to_string(),
    }
}

#[test]
fn every_registered_dbms_behaves_alike() {
    let plans = plans();
    let only = std::env::var("IBENCH_CONFORMANCE").unwrap_or_default();
    if only.is_empty() {
        for kind in DbmsKind::all() {
            assert!(plans.iter().any(|p| p.kind == *kind), "{kind} has no plan");
        }
    }
    let failed: Vec<String> = std::thread::scope(|s| {
        let running: Vec<_> = plans
            .iter()
            .map(|plan| {
                let thread = std::thread::Builder::new()
                    .name(format!("conformance[{}]", plan.label))
                    .spawn_scoped(s, || conform(plan))
                    .expect("spawn a thread");
                (plan.label.clone(), thread)
            })
            .collect();
        running
            .into_iter()
            .filter_map(|(label, thread)| thread.join().is_err().then_some(label))
            .collect()
    });
    assert!(
        failed.is_empty(),
        "these targets do not conform (their panics above): {failed:?}"
    );
}

/// Every check on one target.
fn conform(plan: &Plan) {
    let Some(target) = Target::prepare(plan) else {
        return;
    };
    // Before ibench opens it: RocksDB admits one handle that writes.
    target.own.create_foreign(FOREIGN);
    if target.can(Capability::Sql) {
        target.own.create_foreign(FOREIGN_SB);
    }
    let t = &target;
    let db = dbms::open(&t.spec).unwrap_or_else(|e| panic!("{}: open: {e:#}", t.label));
    describes_itself(&*db, t);
    let before = counters(&*db, t);
    db.waits_start()
        .unwrap_or_else(|e| panic!("{}: waits_start: {e:#}", t.label));
    origins(&*db, t);
    refuses_what_it_lacks(&*db, t);
    if t.can(Capability::InsertBenchmark) {
        insert::check(&*db, t, "cib");
    }
    if t.can(Capability::Sql) {
        sql::check(&*db, t, "c");
        keyed::check(&*db, t, 1);
    }
    errors::permanent(&*db, t);
    errors::transient(&*db, t);
    let maintained = db
        .maintenance(&[table(0, FOREIGN)], false)
        .unwrap_or_else(|e| panic!("{}: maintenance: {e:#}", t.label));
    assert!(
        maintained.as_ref().is_none_or(|m| !m.is_empty()),
        "{}: maintenance said it did nothing in words",
        t.label
    );
    levels_and_totals(&*db, t, &before);
    errors::lost_connection(&*db, t);
    drop(db);

    // The same operations with values inlined in the SQL text (`--plain-sql`).
    let plain = dbms::open_with(&t.spec, StatementMode::Plain)
        .unwrap_or_else(|e| panic!("{}: open for plain SQL: {e:#}", t.label));
    if t.can(Capability::InsertBenchmark) {
        insert::check(&*plain, t, "cibp");
    }
    if t.can(Capability::Sql) {
        sql::check(&*plain, t, "cp");
        keyed::check(&*plain, t, 2);
    }
}

/// Its kind, version, location and effective settings.
fn describes_itself(db: &dyn Dbms, t: &Target) {
    let who = &t.label;
    assert_eq!(db.kind(), t.kind(), "{who}: kind()");
    let version = db
        .version()
        .unwrap_or_else(|e| panic!("{who}: version: {e:#}"));
    assert!(
        version.chars().any(|c| c.is_ascii_digit()),
        "{who}: version() {version:?} names no version"
    );
    let location = db.location();
    assert!(!location.trim().is_empty(), "{who}: empty location()");
    if let Some(path) = &t.spec.path {
        assert!(
            location.contains(&path.display().to_string()),
            "{who}: {location}"
        );
    }
    if let Some(password) = &t.password {
        assert!(
            !location.contains(password.as_str()),
            "{who}: location() shows the password"
        );
    }
    if let Some(limit) = db
        .connection_limit()
        .unwrap_or_else(|e| panic!("{who}: connection_limit: {e:#}"))
    {
        assert!(limit > 0, "{who}: a server that admits no connection");
    }
    let settings = db
        .settings()
        .unwrap_or_else(|e| panic!("{who}: settings: {e:#}"));
    if settings.is_empty() {
        t.not_checked("its cache setting in effect", "Dbms::settings reports none");
        return;
    }
    let cache = t.kind().cache(&t.spec.params);
    let raw = settings.get(cache.name).unwrap_or_else(|| {
        panic!(
            "{who}: its cache setting {} is not among its settings",
            cache.name
        )
    });
    let bytes = (cache.parse)(raw, &settings)
        .unwrap_or_else(|| panic!("{who}: cannot read {} = {raw:?}", cache.name));
    assert!(bytes > 0, "{who}: {} = {raw:?} is no cache", cache.name);
}

/// The DBMS's counters, each checked to be a finite count.
fn counters(db: &dyn Dbms, t: &Target) -> BTreeMap<String, f64> {
    let counters = db
        .counters()
        .unwrap_or_else(|e| panic!("{}: counters: {e:#}", t.label));
    for (name, v) in &counters {
        assert!(
            v.is_finite() && *v >= 0.0,
            "{}: counter {name} = {v}",
            t.label
        );
    }
    counters
}

/// After the work: counters grew, gauges, size, wait events, the engine's own figures.
fn levels_and_totals(db: &dyn Dbms, t: &Target, before: &BTreeMap<String, f64>) {
    let who = &t.label;
    let waits = db
        .waits_end()
        .unwrap_or_else(|e| panic!("{who}: waits: {e:#}"));
    for (name, s) in &waits {
        assert!(s.is_finite() && *s >= 0.0, "{who}: wait {name} = {s}");
    }
    db.settle_counters();
    let after = counters(db, t);
    if before.is_empty() && after.is_empty() {
        t.not_checked("counters grow", "Dbms::counters reports none");
    } else {
        let grew: Vec<&String> = after
            .iter()
            .filter(|(k, v)| **v > before.get(*k).copied().unwrap_or(0.0))
            .map(|(k, _)| k)
            .collect();
        assert!(!grew.is_empty(), "{who}: no counter grew with the work");
    }
    let gauges = db
        .gauges()
        .unwrap_or_else(|e| panic!("{who}: gauges: {e:#}"));
    for (name, v) in &gauges {
        assert!(v.is_finite(), "{who}: gauge {name} = {v}");
    }
    let perf = db
        .perf_context()
        .unwrap_or_else(|e| panic!("{who}: perf_context: {e:#}"));
    for (name, v) in &perf {
        assert!(
            v.is_finite() && *v >= 0.0,
            "{who}: perf context {name} = {v}"
        );
    }
    db.engine_status()
        .unwrap_or_else(|e| panic!("{who}: engine_status: {e:#}"));
    match db.size_bytes() {
        Ok(Some(bytes)) => assert!(bytes > 0, "{who}: size 0 after writing rows"),
        Ok(None) => t.not_checked("size_bytes", "the DBMS cannot tell"),
        Err(e) => panic!("{who}: size_bytes: {e:#}"),
    }
}

/// Who made a table: the foreign one, a missing one, and the foreign one once ibench has
/// replaced it (`--drop-existing`), through each connection the DBMS has.
fn origins(db: &dyn Dbms, t: &Target) {
    let who = &t.label;
    let (foreign, missing) = (table(0, FOREIGN), table(1, MISSING));
    if t.can(Capability::InsertBenchmark) {
        let mut c = db.connect_insert_benchmark().expect("connect");
        let origin = c.table_origin(&foreign).unwrap();
        assert_eq!(origin, TableOrigin::Other, "{who}: a table the test made");
        assert!(
            c.table_exists(&foreign).unwrap(),
            "{who}: the foreign table"
        );
        assert_eq!(c.count_rows(&foreign).unwrap(), 1, "{who}: its row");
        let origin = c.table_origin(&missing).unwrap();
        assert_eq!(origin, TableOrigin::Missing, "{who}: a table nobody made");
        assert!(!c.table_exists(&missing).unwrap(), "{who}: {MISSING}");
    }
    if t.can(Capability::Sql) {
        let mut m = db.connect_sql().expect("connect");
        let origin = m.table_origin(&foreign).unwrap();
        assert_eq!(
            origin,
            TableOrigin::Other,
            "{who}: a table the test made (sql)"
        );
        assert!(
            m.table_exists(&foreign).unwrap(),
            "{who}: the foreign table"
        );
        let origin = m.table_origin(&missing).unwrap();
        assert_eq!(
            origin,
            TableOrigin::Missing,
            "{who}: a table nobody made (sql)"
        );
        assert!(!m.table_exists(&missing).unwrap(), "{who}: {MISSING}");
    }
    // Replaced by ibench, the table of that name is ibench's.
    if t.can(Capability::InsertBenchmark) {
        let mut c = db.connect_insert_benchmark().expect("connect");
        c.create_table(&foreign).unwrap();
        let origin = c.table_origin(&foreign).unwrap();
        assert_eq!(
            origin,
            TableOrigin::Ibench,
            "{who}: the table ibench made instead"
        );
        assert_eq!(c.count_rows(&foreign).unwrap(), 0, "{who}: replaced, empty");
        c.insert(&foreign, &insert::rows(0, 3)).unwrap();
    }
    if t.can(Capability::Sql) {
        let mut m = db.connect_sql().expect("connect");
        let name = table(0, FOREIGN_SB);
        let origin = m.table_origin(&name).unwrap();
        assert_eq!(origin, TableOrigin::Other, "{who}: a table the test made");
        m.create_table(&name, dbms::sql::Shape::Sbtest).unwrap();
        let origin = m.table_origin(&name).unwrap();
        assert_eq!(
            origin,
            TableOrigin::Ibench,
            "{who}: the table ibench made instead"
        );
        assert_eq!(t.own.sb_rows(&name.name).len(), 0, "{who}: replaced, empty");
    }
}

/// A workload's connection the DBMS does not have is refused, and one it has is not.
fn refuses_what_it_lacks(db: &dyn Dbms, t: &Target) {
    let who = &t.label;
    match (
        t.can(Capability::InsertBenchmark),
        db.connect_insert_benchmark(),
    ) {
        (true, Err(e)) => panic!("{who}: the Insert Benchmark's connection: {e:#}"),
        (false, Ok(_)) => panic!("{who}: an Insert Benchmark connection it says it lacks"),
        (false, Err(_)) => t.not_checked("the Insert Benchmark", "no Capability::InsertBenchmark"),
        (true, Ok(_)) => {}
    }
    match (t.can(Capability::Sql), db.connect_sql()) {
        (true, Err(e)) => panic!("{who}: the microbenchmarks' connection: {e:#}"),
        (false, Ok(_)) => panic!("{who}: a microbenchmark connection it says it lacks"),
        (false, Err(_)) => t.not_checked("the microbenchmarks", "no Capability::Sql"),
        (true, Ok(_)) => {}
    }
}

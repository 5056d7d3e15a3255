//! The default step sequence end to end at tiny size, and what a run leaves in `--out`.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use ibench::metrics::histogram::{BUCKET_BOUNDS_US, BUCKET_LABELS, decode};
use ibench::results::model::{OpResult, RunResult, RunStatus, SCHEMA_VERSION, StepResult};

use crate::common::{Bench, histogram_len, id_range, json_files, open_db, path_str, tables};

const CLIENTS: usize = 2;
const L0: i64 = 5_000;
const L1: i64 = 1_000;
const L2: i64 = L1 / 4;
const QUERY_SECONDS: i64 = 2;
const DEFAULT_STEPS: [&str; 10] = [
    "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];

/// Runs the default sequence with `--keep-data` so the scratch database can be inspected, and
/// `--per-client-series` so each client's series can be checked against its summary.
fn tiny_full_run(bench: &Bench) -> (RunResult, PathBuf) {
    let outcome = bench.run(&[
        "--per-client-series",
        "--l0-rows",
        &L0.to_string(),
        "--l1-rows",
        &L1.to_string(),
        "--query-seconds",
        &QUERY_SECONDS.to_string(),
        "--clients",
        &CLIENTS.to_string(),
        "--keep-data",
    ]);
    let run = outcome.result();
    let data_dir = outcome.new_results[0].with_extension("data");
    let db = data_dir.join("ibench.sqlite");
    assert!(db.is_file(), "--keep-data must keep {}", db.display());
    (run, db)
}

fn rate_of(step: &str) -> Option<i64> {
    step.strip_prefix("qr")
        .or_else(|| step.strip_prefix("qp"))
        .map(|n| n.parse().expect("rate"))
}

/// Histograms of one op: merged count, per-client counts and percentiles agree with what we
/// decode ourselves.
fn check_op(step: &StepResult, op: &str, r: &OpResult) {
    let ctx = format!("step {} op {op}", step.name);
    let merged = decode(&r.histogram).unwrap_or_else(|e| panic!("{ctx}: {e:#}"));
    assert_eq!(merged.len(), r.count, "{ctx}: merged histogram vs count");
    assert!(r.count > 0, "{ctx}: an op listed must have happened");
    assert_eq!(r.percentiles_us.max, merged.max(), "{ctx}: max");
    assert_eq!(
        r.percentiles_us.p50,
        merged.value_at_quantile(0.5),
        "{ctx}: p50"
    );
    assert!(
        r.percentiles_us.p50 <= r.percentiles_us.p99
            && r.percentiles_us.p99 <= r.percentiles_us.max
    );

    let mut clients = BTreeSet::new();
    let mut sum = 0;
    for c in &r.per_client {
        assert!(c.client < step.clients, "{ctx}: client {}", c.client);
        assert!(clients.insert(c.client), "{ctx}: client {} twice", c.client);
        assert_eq!(
            histogram_len(&c.histogram),
            c.count,
            "{ctx}: client {}",
            c.client
        );
        sum += c.count;
    }
    assert_eq!(
        sum, r.count,
        "{ctx}: per-client counts must add up to the merged count"
    );

    assert_eq!(r.bucket_labels, BUCKET_LABELS.map(String::from), "{ctx}");
    assert_eq!(r.buckets_pct.len(), 10, "{ctx}");
    let total: f64 = r.buckets_pct.iter().sum();
    assert!(
        (total - 100.0).abs() < 1e-6,
        "{ctx}: buckets sum to {total}"
    );
    // The last non-empty bucket is the one holding the largest value: the lowest value of
    // its sub-bucket, as the buckets count (`max()` is the highest, which may lie past a
    // bound the value itself is within).
    let max = merged.lowest_equivalent(merged.max());
    let max_bucket = BUCKET_BOUNDS_US.iter().position(|&b| max <= b).unwrap_or(9);
    let last_nonzero = r
        .buckets_pct
        .iter()
        .rposition(|&p| p > 0.0)
        .expect("some bucket");
    assert_eq!(
        last_nonzero, max_bucket,
        "{ctx}: buckets {:?}",
        r.buckets_pct
    );
}

/// Per-second series: every op's vectors have one length, rows add up to the step's totals, and
/// the per-client figures add up to the total series.
fn check_series(step: &StepResult) {
    let ctx = format!("step {}", step.name);
    let total = &step.per_second.total.ops;
    let rows = |op: &str| total.get(op).map_or(0, |s| s.rows.iter().sum::<u64>());
    assert_eq!(
        rows("insert"),
        step.rows_inserted,
        "{ctx}: per-second inserts"
    );
    assert_eq!(
        rows("delete"),
        step.rows_deleted,
        "{ctx}: per-second deletes"
    );
    assert_eq!(rows("query"), step.queries, "{ctx}: per-second queries");
    assert!(
        !total.contains_key("getmin"),
        "{ctx}: getmin happens before the step start"
    );
    crate::results_size::check_clients(step, false);
    for (op, series) in total {
        let n = series.ops.len();
        assert!(
            series.rows.len() == n && series.max_us.len() == n,
            "{ctx} {op}: lengths"
        );
        let ops_sum: u64 = series.ops.iter().sum();
        assert_eq!(
            ops_sum, step.ops[op].count,
            "{ctx} {op}: per-second ops vs histogram"
        );
        let worst = series.max_us.iter().copied().max().unwrap_or(0);
        let hist_max = decode(&step.ops[op].histogram).expect("decode").max();
        assert!(
            worst <= hist_max,
            "{ctx} {op}: per-second max {worst} > histogram max {hist_max}"
        );
    }
}

#[test]
fn default_sequence_at_tiny_size_completes_with_consistent_results() {
    // Alone on the CPU: the exact row counts below hold when no writer misses a batch, which
    // a machine loaded by other tests could cause (a missed batch is then reported, not an
    // error; see rate::writer_that_cannot_keep_up_stops_at_the_end_of_the_step).
    let bench = Bench::exclusive();
    let (run, db) = tiny_full_run(&bench);

    // Document.
    assert_eq!(run.schema_version, SCHEMA_VERSION);
    assert!(run.error.is_none(), "{:?}", run.error);
    let finished = run.finished_at.expect("finished_at");
    assert!(run.started_at <= finished);
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, DEFAULT_STEPS, "every step, in order");
    for pair in run.steps.windows(2) {
        assert!(
            pair[0].started_at <= pair[1].started_at,
            "steps in run order"
        );
    }
    assert_eq!(run.maintenance.len(), 1, "{:?}", run.maintenance);
    assert_eq!(run.maintenance[0].before_step, "qr100");

    // Environment.
    let env = &run.environment;
    assert_eq!(env.ibench_version, env!("CARGO_PKG_VERSION"));
    let proc = |p: &str| fs::read_to_string(p).unwrap().trim().to_string();
    assert_eq!(env.hostname, proc("/proc/sys/kernel/hostname"));
    assert_eq!(env.kernel, proc("/proc/sys/kernel/osrelease"));
    assert!(!env.os.is_empty());
    assert_eq!(
        env.cpu_cores,
        std::thread::available_parallelism().unwrap().get()
    );
    assert!(env.memory_bytes > 0);
    assert_eq!(env.dbms.name, "sqlite");
    assert_eq!(env.dbms.version, rusqlite::version());
    assert_eq!(PathBuf::from(&env.dbms.location), db);
    assert_eq!(
        env.dbms.settings.get("journal_mode").map(String::as_str),
        Some("wal")
    );

    // Config.
    let w = run
        .config
        .workload
        .insert_benchmark()
        .expect("Insert Benchmark");
    assert_eq!(
        (w.clients, w.l0_rows, w.l1_rows, w.l2_rows, w.query_seconds),
        (
            CLIENTS,
            L0 as u64,
            L1 as u64,
            L2 as u64,
            QUERY_SECONDS as u64
        )
    );
    let steps: Vec<String> = w.steps.iter().map(|s| s.to_string()).collect();
    assert_eq!(steps, DEFAULT_STEPS);
    assert!(run.config.scratch_database && run.config.keep_data);
    assert_eq!(run.config.out_dir, PathBuf::from(path_str(&bench.out())));

    // Steps.
    let clients = CLIENTS as u64;
    for step in &run.steps {
        let ctx = format!("step {}", step.name);
        assert_eq!(step.status, RunStatus::Complete, "{ctx}: {:?}", step.error);
        assert_eq!(step.clients, CLIENTS, "{ctx}");
        assert!(step.duration_s > 0.0, "{ctx}");
        let (ins, del, q) = (step.inserts_per_s, step.deletes_per_s, step.queries_per_s);
        match step.name.as_str() {
            "l.i0" => {
                assert_eq!(step.rows_inserted, clients * L0 as u64, "{ctx}");
                assert!(
                    ins > 0.0 && del == 0.0 && q == 0.0,
                    "{ctx}: {ins} {del} {q}"
                );
                assert!(step.select_min.is_none());
            }
            "l.x" => {
                assert!(ins == 0.0 && del == 0.0 && q == 0.0, "{ctx}");
                assert!(step.ops.is_empty(), "{ctx}: {:?}", step.ops.keys());
                let build = step.index_build.as_ref().expect("index_build");
                assert_eq!(build.indexes, ["marketsegment", "registersegment", "pdc"]);
                assert_eq!((build.tables, build.rows), (CLIENTS, clients * L0 as u64));
            }
            name => {
                let expected = match name {
                    "l.i1" => L1,
                    "l.i2" => L2,
                    _ => rate_of(name).unwrap() * QUERY_SECONDS,
                } as u64
                    * clients;
                // A writer that fell behind on a loaded machine sends nothing after the
                // query window: its missed batches are counted instead.
                let missed = step.sla.as_ref().map_or(0, |s| s.missed_insert_batches)
                    * w.writer_batch as u64;
                assert_eq!(
                    step.rows_inserted + missed,
                    expected,
                    "{ctx}: inserted + missed"
                );
                assert_eq!(step.rows_deleted, step.rows_inserted, "{ctx}: deleted");
                assert!(ins > 0.0 && del > 0.0, "{ctx}: {ins} {del}");
                let select_min = step.select_min.as_ref().expect("select_min");
                let timed: Vec<&String> = select_min.tables.keys().collect();
                assert_eq!(timed, ["pi1", "pi2"], "{ctx}");
                assert_eq!(step.ops["getmin"].count, clients, "{ctx}");
                if let Some(rate) = rate_of(name) {
                    assert!(q > 0.0 && step.queries > 0, "{ctx}");
                    let sla = step.sla.as_ref().expect("sla");
                    assert_eq!(sla.target_inserts_per_s, (rate as u64 * clients) as f64);
                    assert!(step.service_time.contains_key("insert"), "{ctx}");
                    assert_eq!(
                        step.point_query_misses.is_some(),
                        name.starts_with("qp"),
                        "{ctx}"
                    );
                } else {
                    assert_eq!(q, 0.0, "{ctx}");
                    assert!(step.sla.is_none(), "{ctx}");
                }
            }
        }
        for (op, r) in &step.ops {
            check_op(step, op, r);
        }
        for (op, r) in &step.service_time {
            check_op(step, op, r);
            assert_eq!(
                r.count, step.ops[op].count,
                "{ctx} {op}: service vs due-time count"
            );
        }
        if let Some(r) = step.ops.get("insert") {
            assert_eq!(r.rows, step.rows_inserted, "{ctx}: insert rows");
        }
        if let Some(r) = step.ops.get("delete") {
            assert_eq!(r.rows, step.rows_deleted, "{ctx}: delete rows");
        }
        if let Some(r) = step.ops.get("query") {
            assert_eq!(r.count, step.queries, "{ctx}: queries");
        }
        check_series(step);
    }

    // The database after the run: every table is back to l0 rows, and its oldest and newest ids
    // are what the flags imply (every step inserts and deletes exactly its rows).
    let conn = open_db(&db);
    assert_eq!(tables(&conn), ["pi1", "pi2"]);
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let per_client_inserted: i64 = L0
        + L1
        + L2
        + DEFAULT_STEPS
            .iter()
            .filter_map(|s| rate_of(s))
            .map(|r| r * QUERY_SECONDS)
            .sum::<i64>();
    // A writer that missed batches on a loaded machine inserted that many rows fewer: the
    // tables' shortfall together is exactly the missed batches the steps reported.
    let missed_rows: i64 = run
        .steps
        .iter()
        .filter_map(|s| s.sla.as_ref())
        .map(|s| (s.missed_insert_batches * w.writer_batch as u64) as i64)
        .sum();
    let mut shortfall = 0;
    for (c, table) in ["pi1", "pi2"].iter().enumerate() {
        let (count, min, max) = id_range(&conn, table);
        assert_eq!(count, L0, "{table}: rows");
        assert!(max <= per_client_inserted, "{table}: newest id {max}");
        shortfall += per_client_inserted - max;
        assert_eq!(min, max - L0 + 1, "{table}: oldest id");
        let series_inserted: u64 = run
            .steps
            .iter()
            .flat_map(|s| &s.per_second.client_summaries)
            .filter(|s| s.client == c)
            .filter_map(|s| Some(s.ops.get("insert")?.rows))
            .sum();
        assert_eq!(
            series_inserted as i64, max,
            "{table}: client {c} per-second inserts"
        );
    }
    assert_eq!(shortfall, missed_rows, "newest ids vs missed batches");
}

#[test]
fn scratch_database_is_removed_without_keep_data() {
    let bench = Bench::new();
    let outcome = bench.run(&["--steps", "l.i0", "--l0-rows", "2000", "--clients", "1"]);
    let run = outcome.result();
    assert!(run.config.scratch_database && !run.config.keep_data);
    let scratch = PathBuf::from(&run.environment.dbms.location);
    assert!(!scratch.exists(), "{} must be removed", scratch.display());
    // The request is stored as given (no path); what ibench made of it apart.
    assert_eq!(run.schema_version, ibench::results::model::SCHEMA_VERSION);
    assert_eq!(run.config.target.path, None);
    let resolved = run.resolved.as_ref().expect("the resolved target");
    assert_eq!(resolved.target.path.as_deref(), Some(scratch.as_path()));
    assert_eq!(
        scratch.parent().unwrap(),
        outcome.new_results[0].with_extension("data")
    );
    let mut left: Vec<_> = fs::read_dir(bench.out())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let results_file = outcome.new_results[0]
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        left,
        [results_file, "results.db".to_string()],
        "only the results file and the results database stay in --out"
    );
}

#[test]
fn each_run_writes_its_own_results_file() {
    let bench = Bench::new();
    let args = ["--steps", "l.i0", "--l0-rows", "2000", "--clients", "1"];
    let first = bench.run(&args).result();
    let second = bench
        .run(&[&args[..], &["--label", "second"]].concat())
        .result();
    assert_eq!(
        json_files(&bench.out()).len(),
        2,
        "a run never overwrites another's file"
    );
    assert_ne!(first.run_id, second.run_id);
    assert_eq!(first.config.label, None);
    assert_eq!(second.config.label.as_deref(), Some("second"));
}

#[test]
fn sigint_stops_the_run_and_keeps_what_was_measured() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let db = bench.db();
    let conn = open_db(&db);
    let before = id_range(&conn, "pi1");
    let mut child = bench.spawn(&[
        "--steps",
        "qr100,qp100",
        "--query-seconds",
        "20",
        "--clients",
        "1",
        "--path",
        path_str(&db),
    ]);
    child.wait_for_id_above(&conn, "pi1", before.2);
    std::thread::sleep(std::time::Duration::from_millis(1_000));
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let o = child.finish(std::time::Duration::from_secs(30));
    assert_eq!(o.code, Some(130), "{}", o.describe());
    assert!(!o.describe().contains("panicked"), "{}", o.describe());
    assert_eq!(o.new_results.len(), 1, "{:?}", o.new_results);

    let run = ibench::results::file::load(&o.new_results[0]).expect("valid results");
    assert_eq!(run.status, RunStatus::Interrupted);
    assert!(run.finished_at.is_some());
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["qr100"], "the second step never started");
    let step = &run.steps[0];
    assert_eq!(step.status, RunStatus::Interrupted);
    assert!(
        step.duration_s < 15.0,
        "stopped early: {} s",
        step.duration_s
    );
    assert!(step.rows_inserted > 0 && step.queries > 0);

    // What the results say was inserted and deleted is what the table shows.
    let after = id_range(&conn, "pi1");
    assert_eq!((after.2 - before.2) as u64, step.rows_inserted, "inserted");
    assert_eq!((after.1 - before.1) as u64, step.rows_deleted, "deleted");
    assert_eq!(
        after.0,
        before.0 + step.rows_inserted as i64 - step.rows_deleted as i64
    );
}

#[test]
fn an_interrupted_step_does_not_pass_its_writer_sla() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let db = bench.db();
    let conn = open_db(&db);
    let before = id_range(&conn, "pi1");
    // Without -q, so that the step line is printed too.
    let out = bench.out();
    let mut child = bench.spawn_raw(
        &["run", "--out", path_str(&out)],
        &[
            "--steps",
            "qr100",
            "--query-seconds",
            "20",
            "--clients",
            "1",
            "--path",
            path_str(&db),
        ],
    );
    child.wait_for_id_above(&conn, "pi1", before.2);
    // The writer has kept its 100 rows/s for a while: the average alone would pass.
    std::thread::sleep(std::time::Duration::from_millis(1_500));
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let o = child.finish(std::time::Duration::from_secs(30));
    assert_eq!(o.code, Some(130), "{}", o.describe());
    let run = ibench::results::file::load(&o.new_results[0]).expect("valid results");
    let step = &run.steps[0];
    assert_eq!(step.status, RunStatus::Interrupted);
    assert!(step.rows_inserted > 0);
    let sla = step.sla.as_ref().expect("qr100 has a writer SLA");
    assert!(!sla.pass, "an interrupted step stored sla.pass = true");
    // The legend explains PASS; no step's row may say it.
    let rows_with_pass = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("qr100") && l.contains("PASS"))
            .count()
    };
    assert_eq!(rows_with_pass(&o.describe()), 0, "{}", o.describe());
    let step_line = o
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("qr100"))
        .unwrap_or_else(|| panic!("no step line:\n{}", o.describe()));
    assert!(step_line.contains("SLA not evaluated"), "{step_line}");
    assert!(o.stdout.contains("not evaluated"), "{}", o.stdout);
}

#[test]
fn a_dbms_error_fails_the_step_exits_1_and_keeps_what_was_measured() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let db = bench.db();
    let conn = open_db(&db);
    let before = id_range(&conn, "pi1");
    let mut child = bench.spawn(&[
        "--steps",
        "qr100,qp100",
        "--query-seconds",
        "10",
        "--clients",
        "1",
        "--busy-timeout-ms",
        "200",
        "--max-tries",
        "1",
        "--path",
        path_str(&db),
    ]);
    child.wait_for_id_above(&conn, "pi1", before.2);
    // Hold the write lock far longer than ibench's busy timeout.
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1_500));
    conn.execute_batch("COMMIT").unwrap();

    let o = child.finish(std::time::Duration::from_secs(30));
    assert_eq!(o.code, Some(1), "{}", o.describe());
    assert!(!o.describe().contains("panicked"), "{}", o.describe());
    let line = o
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        line.contains("qr100") && line.contains("database is locked"),
        "{line}"
    );
    assert_eq!(o.new_results.len(), 1, "{:?}", o.new_results);

    let run = ibench::results::file::load(&o.new_results[0]).expect("valid results");
    assert_eq!(run.status, RunStatus::Failed);
    assert!(
        run.error
            .as_deref()
            .unwrap_or("")
            .contains("database is locked")
    );
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["qr100"], "no step runs after a failed one");
    let step = &run.steps[0];
    assert_eq!(step.status, RunStatus::Failed);
    let error = step.error.as_deref().unwrap_or("");
    assert!(
        error.contains("client 0 ("),
        "the error names the client: {error}"
    );
    assert!(step.rows_inserted > 0, "figures up to the failure are kept");
    assert!(
        !step.sla.as_ref().expect("writer SLA").pass,
        "a failed step"
    );
    assert!(
        !o.stdout
            .lines()
            .any(|l| l.starts_with("qr100") && l.contains("PASS")),
        "{}",
        o.stdout
    );

    let after = id_range(&conn, "pi1");
    assert_eq!((after.2 - before.2) as u64, step.rows_inserted, "inserted");
    assert_eq!((after.1 - before.1) as u64, step.rows_deleted, "deleted");
}

#[test]
fn sigterm_stops_the_run_with_exit_143_and_keeps_what_was_measured() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let db = bench.db();
    let conn = open_db(&db);
    let before = id_range(&conn, "pi1");
    let mut child = bench.spawn(&[
        "--steps",
        "qp100",
        "--query-seconds",
        "20",
        "--clients",
        "1",
        "--path",
        path_str(&db),
    ]);
    child.wait_for_id_above(&conn, "pi1", before.2);
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(kill.success());
    let o = child.finish(std::time::Duration::from_secs(30));
    assert_eq!(o.code, Some(143), "{}", o.describe());
    let run = ibench::results::file::load(&o.new_results[0]).expect("valid results");
    assert_eq!(run.status, RunStatus::Interrupted);
    assert_eq!(run.steps[0].status, RunStatus::Interrupted);
    assert!(run.steps[0].queries > 0);
}

#[test]
fn transient_errors_are_retried_counted_and_the_step_completes() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let db = bench.db();
    let conn = open_db(&db);
    let before = id_range(&conn, "pi1");
    let mut child = bench.spawn(&[
        "--steps",
        "qr100",
        "--query-seconds",
        "6",
        "--clients",
        "1",
        "--busy-timeout-ms",
        "100",
        "--max-tries",
        "200",
        "--path",
        path_str(&db),
    ]);
    child.wait_for_id_above(&conn, "pi1", before.2);
    // Longer than the busy timeout: the writer's statements fail with SQLITE_BUSY and are
    // tried again until the lock is released.
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1_000));
    conn.execute_batch("COMMIT").unwrap();
    let o = child.finish(std::time::Duration::from_secs(60));
    assert_eq!(o.code, Some(0), "{}", o.describe());
    let run = ibench::results::file::load(&o.new_results[0]).expect("valid results");
    let step = &run.steps[0];
    assert_eq!(step.status, RunStatus::Complete);
    let retries: u64 = step.retries.values().sum();
    assert!(retries > 0, "retries counted: {:?}", step.retries);
    // Only statements that succeeded count: the database agrees with the figures.
    let after = id_range(&conn, "pi1");
    assert_eq!((after.2 - before.2) as u64, step.rows_inserted, "inserted");
    assert_eq!((after.1 - before.1) as u64, step.rows_deleted, "deleted");
    assert_eq!(after.0, before.0, "queue size");
}

#[test]
fn a_step_above_the_error_rate_fails_with_the_counts() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let db = bench.db();
    let conn = open_db(&db);
    let before = id_range(&conn, "pi1");
    let mut child = bench.spawn(&[
        "--steps",
        "qr100",
        "--query-seconds",
        "4",
        "--clients",
        "1",
        "--busy-timeout-ms",
        "100",
        "--max-tries",
        "200",
        "--max-error-rate",
        "0",
        "--path",
        path_str(&db),
    ]);
    child.wait_for_id_above(&conn, "pi1", before.2);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    conn.execute_batch("COMMIT").unwrap();
    let o = child.finish(std::time::Duration::from_secs(60));
    assert_eq!(o.code, Some(1), "{}", o.describe());
    let line = o
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        line.contains("error rate") && line.contains("retries"),
        "{line}"
    );
    let run = ibench::results::file::load(&o.new_results[0]).expect("valid results");
    assert_eq!(run.steps[0].status, RunStatus::Failed);
    assert!(run.steps[0].retries.values().sum::<u64>() > 0);
}

//! The Insert Benchmark's scan step (`--steps ...,scan`): after the load, the primary key,
//! each secondary index and the primary key again, each scan over every table reading every
//! row, timed; checked against the rows in the tables and, on the servers, against the
//! DBMS's own per-index counters (the scan went through the index it names). A scanner per
//! client, on its own table, the scanners at once (their recorded intervals overlap).

use ibench::results::model::{RunResult, StepResult};
use mysql::prelude::Queryable;

use crate::common::{Bench, Kept, have, open_db, path_str, server_bench};

const CLIENTS: u64 = 2;
/// Rows per client's table on a server: enough that each scanner's part of a phase outlasts
/// the scheduler's jitter (at 3,000, once in CI, MyRocks' first scanner was done in 6 ms, before
/// the second began).
const ROWS: u64 = 20_000;
const SQLITE_ROWS: u64 = 100_000;

/// The scan step's figures: the phases in order, every one over all rows.
fn check_scan<'r>(run: &'r RunResult, indexes: &[&str], rows: u64) -> &'r StepResult {
    let scan = run
        .steps
        .iter()
        .find(|s| s.name == "scan")
        .expect("a scan step");
    assert_eq!(
        scan.status,
        ibench::results::model::RunStatus::Complete,
        "{:?}",
        scan.error
    );
    let names: Vec<&str> = scan.scans.iter().map(|s| s.index.as_str()).collect();
    let mut expected = vec!["PRIMARY"];
    expected.extend_from_slice(indexes);
    expected.push("PRIMARY (again)");
    assert_eq!(names, expected);
    for s in &scan.scans {
        assert_eq!(
            s.rows,
            CLIENTS * rows,
            "{}: every row of every table",
            s.index
        );
        assert!(s.seconds > 0.0 && s.rows_per_s > 0.0, "{}", s.index);
        assert!((s.rows_per_s - s.rows as f64 / s.seconds).abs() < 1e-6 * s.rows_per_s);
    }
    // One scanner per client, each on its own table, all at once: each one's part of a phase
    // is its table's rows, and the scanners' spans (first start to last end) overlap.
    let mut spans = vec![(f64::INFINITY, 0.0f64); CLIENTS as usize];
    for s in &scan.scans {
        let clients: Vec<usize> = s.scanners.iter().map(|p| p.client).collect();
        assert_eq!(
            clients,
            (0..CLIENTS as usize).collect::<Vec<_>>(),
            "{}",
            s.index
        );
        for p in &s.scanners {
            assert_eq!((p.tables, p.rows), (1, rows), "{}: {p:?}", s.index);
            assert!(p.start_s <= p.end_s, "{p:?}");
            let span = &mut spans[p.client];
            *span = (span.0.min(p.start_s), span.1.max(p.end_s));
        }
        let first = s
            .scanners
            .iter()
            .map(|p| p.start_s)
            .fold(f64::INFINITY, f64::min);
        let last = s.scanners.iter().map(|p| p.end_s).fold(0.0, f64::max);
        assert!((s.seconds - (last - first)).abs() < 1e-9, "{}", s.index);
    }
    let latest_start = spans.iter().map(|s| s.0).fold(0.0, f64::max);
    let earliest_end = spans.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
    assert!(
        latest_start < earliest_end,
        "the scanners ran one after the other: {spans:?}"
    );
    // One timed op per table and index, counting its rows.
    let q = &scan.ops["query"];
    assert_eq!(q.count, CLIENTS * expected.len() as u64);
    assert_eq!(q.rows, CLIENTS * rows * expected.len() as u64);
    scan
}

fn args<'a>(rows: &'a str, clients: &'a str, steps: &'a str) -> Vec<&'a str> {
    vec!["--steps", steps, "--clients", clients, "--l0-rows", rows]
}

#[test]
fn sqlite_scans_every_index_in_turn() {
    let bench = Bench::new();
    // Scans of SQLite's small tables take a fraction of a millisecond, less than a thread's
    // start on a busy host: tables large enough for the scanners' spans to overlap.
    let (rows, clients) = (SQLITE_ROWS.to_string(), CLIENTS.to_string());
    let db = bench.db();
    let mut a = args(&rows, &clients, "l.i0,l.x,scan");
    a.extend(["--path", path_str(&db), "--secondary-indexes", "2"]);
    let run = bench.run(&a).result();
    check_scan(&run, &["marketsegment", "registersegment"], SQLITE_ROWS);
    let conn = open_db(&db);
    let n: i64 = conn
        .query_row("SELECT count(*) FROM pi1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n as u64, SQLITE_ROWS);
    // Off by default.
    assert!(!ibench::request::Step::default_sequence().contains(&ibench::request::Step::Scan));
}

#[test]
fn postgres_scans_go_through_each_index() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let (rows, clients) = (ROWS.to_string(), CLIENTS.to_string());
    let mut a = args(&rows, &clients, "l.i0,l.x");
    a.extend(["--server", "postgres", "--keep-server"]);
    let loaded = bench.run(&a).result();
    let kept = Kept {
        pid: loaded.managed_server.as_ref().unwrap().pid.unwrap(),
        signal: "INT",
    };
    let url = crate::common::kept_url(&loaded);
    // PostgreSQL has no hints: what each index served is counted per index.
    let stats = || -> Vec<(i64, i64)> {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        ["pkey", "marketsegment", "registersegment", "pdc"]
            .iter()
            .map(|suffix| {
                let row = c
                    .query_one(
                        "SELECT sum(idx_scan)::bigint, sum(idx_tup_read)::bigint \
                         FROM pg_stat_user_indexes WHERE indexrelname LIKE '%' || $1",
                        &[suffix],
                    )
                    .unwrap();
                (row.get(0), row.get(1))
            })
            .collect()
    };
    let before = stats();
    let mut a = args(&rows, &clients, "scan");
    a.extend(["--url", &url]);
    let run = bench.run(&a).result();
    check_scan(&run, &["marketsegment", "registersegment", "pdc"], ROWS);
    let after = stats();
    for (i, scans) in [2u64, 1, 1, 1].into_iter().enumerate() {
        let (n, read) = (after[i].0 - before[i].0, after[i].1 - before[i].1);
        assert_eq!(n as u64, scans * CLIENTS, "index {i}: scans, one per table");
        assert_eq!(
            read as u64,
            scans * CLIENTS * ROWS,
            "index {i}: entries read"
        );
    }
    kept.stop();
}

fn mariadb_scans_go_through_each_index(engine: &str) {
    if !have("mariadb", engine) {
        return;
    }
    let bench = server_bench();
    let (rows, clients) = (ROWS.to_string(), CLIENTS.to_string());
    let mut a = args(&rows, &clients, "l.i0,l.x");
    a.extend([
        "--server",
        "mariadb",
        "--engine",
        engine,
        "--keep-server",
        "--server-option",
        "userstat=1",
    ]);
    let loaded = bench.run(&a).result();
    let kept = Kept {
        pid: loaded.managed_server.as_ref().unwrap().pid.unwrap(),
        signal: "TERM",
    };
    let url = crate::common::kept_url(&loaded);
    // Rows read per index (userstat), before and after the scan step.
    let read = || -> Vec<u64> {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
        ["PRIMARY", "marketsegment", "registersegment", "pdc"]
            .iter()
            .map(|index| {
                let n: Option<Option<u64>> = c
                    .exec_first(
                        "SELECT sum(rows_read) FROM information_schema.index_statistics \
                         WHERE table_schema = database() \
                         AND (index_name = ? OR index_name LIKE ?)",
                        (index, format!("%\\_{index}")),
                    )
                    .unwrap();
                n.flatten().unwrap_or(0)
            })
            .collect()
    };
    let before = read();
    let mut a = args(&rows, &clients, "scan");
    a.extend(["--url", &url]);
    let run = bench.run(&a).result();
    check_scan(&run, &["marketsegment", "registersegment", "pdc"], ROWS);
    let after = read();
    for (i, scans) in [2u64, 1, 1, 1].into_iter().enumerate() {
        assert_eq!(
            after[i] - before[i],
            scans * CLIENTS * ROWS,
            "{engine} index {i}: rows read by the scans"
        );
    }
    kept.stop();
}

#[test]
fn mariadb_innodb_scans_go_through_each_index() {
    mariadb_scans_go_through_each_index("innodb");
}

#[test]
fn myrocks_scans_go_through_each_index() {
    mariadb_scans_go_through_each_index("rocksdb");
}

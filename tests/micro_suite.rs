//! The whole microbenchmark suite on the four targets (SQLite, PostgreSQL, MariaDB InnoDB and
//! MyRocks) at tiny sizes and one second per benchmark: every benchmark runs, every row count
//! is what it must be, the tables keep their size across deletes and re-inserts, and the
//! rows ibench counts are those the DBMS counted (pg_stat_user_tables, MariaDB's Handler_* and
//! Rows_read, MyRocks' Rocksdb_rows_*, SQLite's rows read back with SQL).

use std::collections::BTreeMap;

use ibench::results::model::{RunResult, StepResult};
use mysql::prelude::Queryable;

use crate::common::{Bench, Kept, have, histogram_len, open_db, path_str, server_bench};

/// One benchmark of each kind of the list (every line of `microbenchmarks.md`), reads before
/// writes, so that only one maintenance pause falls in the run.
const ONE_OF_EACH: &[&str] = &[
    "point-query",
    "random-points_range=100",
    "hot-points",
    "points-covered-pk",
    "points-covered-si",
    "points-notcovered-pk",
    "points-notcovered-si",
    "range-covered-pk_range=100",
    "range-covered-si_range=100",
    "range-notcovered-pk_range=100",
    "range-notcovered-si_range=100",
    "scan",
    "read-only_range=100",
    "read-only-simple",
    "read-only-sum",
    "read-only-order",
    "read-only-distinct",
    "read-only-count",
    "update-index",
    "update-nonindex",
    "update-inlist",
    "update-one",
    "update-zipf",
    "write-only",
    "read-write_range=10",
    "delete",
    "insert",
    "insert-random-pk",
];

const TABLES: u64 = 2;
const ROWS: u64 = 3000;

/// Runs `ibench micro --out <out> -q <args>`.
fn micro(bench: &Bench, args: &[&str]) -> RunResult {
    bench
        .run_raw(&["micro", "--out", path_str(&bench.out()), "-q"], args)
        .result()
}

/// The benchmark of a step (`point-query` of `point-query.c2`).
fn benchmark(step: &StepResult) -> &str {
    step.name.rsplit_once(".c").map_or(&step.name, |(b, _)| b)
}

/// Rows changed per op of each write benchmark: (updated, deleted, inserted into sbtest).
fn writes_per_op(benchmark: &str) -> Option<(u64, u64, u64)> {
    Some(match benchmark {
        "write-only" | "read-write_range=10" | "read-write_range=100" => (2, 1, 1),
        "delete" => (0, 1, 1),
        "update-index" | "update-nonindex" | "update-one" | "update-zipf" => (1, 0, 0),
        _ => return None,
    })
}

/// What every benchmark step must show, whatever the DBMS: complete, each op counted once in
/// the merged and per-client histograms and the per-second series, every statement with the
/// rows expected, and the rows each kind of op must have.
fn check_step(step: &StepResult, clients: usize) {
    let ctx = &step.name;
    assert_eq!(
        step.status,
        ibench::results::model::RunStatus::Complete,
        "{ctx}: {:?}",
        step.error
    );
    assert_eq!(step.clients, clients, "{ctx}");
    let q = &step.ops["query"];
    assert!(step.queries > 0, "{ctx}: no operation");
    assert_eq!(q.count, step.queries, "{ctx}");
    assert_eq!(histogram_len(&q.histogram), step.queries, "{ctx}");
    let per_client: u64 = q
        .per_client
        .iter()
        .map(|c| histogram_len(&c.histogram))
        .sum();
    assert_eq!(per_client, step.queries, "{ctx}");
    let per_second: u64 = step.per_second.total.ops["query"].ops.iter().sum();
    assert_eq!(per_second, step.queries, "{ctx}");
    assert_eq!(
        step.point_query_misses,
        Some(0),
        "{ctx}: statements with other row counts"
    );
    assert_eq!(step.rows_inserted, 0, "{ctx}");
    let b = benchmark(step);
    let ops = step.queries;
    let per_op = match b {
        "point-query" | "update-index" | "update-nonindex" | "update-one" | "update-zipf"
        | "insert" | "insert-random-pk" | "read-only-sum" | "read-only-count" => Some(1),
        "hot-points" => Some(100),
        "delete" => Some(2),
        "write-only" => Some(4),
        "scan" => Some(ROWS),
        "range-covered-pk_range=100" | "range-notcovered-pk_range=100" => Some(100),
        "read-only-simple" | "read-only-order" => Some(1000),
        _ => None,
    };
    if let Some(n) = per_op {
        assert_eq!(q.rows, n * ops, "{ctx}: {n} rows per op");
    } else {
        assert!(q.rows > 0, "{ctx}: no rows");
    }
}

/// Sums over the benchmark steps of `run`: rows updated, deleted, inserted into the sysbench
/// tables, by ibench's count.
fn expected_writes(run: &RunResult) -> (u64, u64, u64) {
    let (mut upd, mut del, mut ins) = (0, 0, 0);
    for s in &run.steps {
        if benchmark(s) == "update-inlist" {
            upd += s.ops["query"].rows;
        } else if let Some((u, d, i)) = writes_per_op(benchmark(s)) {
            upd += u * s.queries;
            del += d * s.queries;
            ins += i * s.queries;
        }
    }
    (upd, del, ins)
}

fn step<'r>(run: &'r RunResult, name: &str) -> &'r StepResult {
    run.steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// The per-step counter `name` the run recorded (the DBMS's own, read at step start and end).
fn counter(s: &StepResult, name: &str) -> u64 {
    *s.dbms_counters
        .get(name)
        .unwrap_or_else(|| panic!("{}: no counter {name}", s.name)) as u64
}

#[test]
fn sqlite_runs_every_benchmark_and_keeps_its_tables() {
    let bench = Bench::new();
    let db = bench.db();
    let tables = TABLES.to_string();
    let rows = ROWS.to_string();
    let base = [
        "--path",
        path_str(&db),
        "--tables",
        &tables,
        "--table-rows",
        &rows,
        "--clients",
        "2",
        "--seconds",
        "1",
        "--post-write-pause",
        "1",
    ];
    // Every benchmark, every range length, in the reference order.
    let run = micro(&bench, &[&base[..], &["--benchmarks", "all"]].concat());
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    let pre = ibench::workload::micro::PRE_WRITE_READS;
    assert_eq!(
        names.len(),
        1 + ibench::workload::micro::BENCHMARKS.len() + pre.len(),
        "{names:?}"
    );
    for s in &run.steps[1..] {
        check_step(s, 2);
    }
    // The .pre reads on the freshly loaded tables, then the writes, then every read again.
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert_eq!(names[1], "point-query.pre.c2");
    let pre_steps: Vec<String> = pre.iter().map(|b| format!("{b}.pre.c2")).collect();
    assert_eq!(names[1..=pre.len()], pre_steps);
    assert_eq!(names[pre.len() + 1], "update-inlist.c2");
    assert!(at("read-write_range=100.c2") < at("point-query.c2"));
    assert_eq!(names[names.len() - 1], "insert-random-pk.c2");
    // Two pauses: after the load, before the first .pre read; after the writes, before the
    // first post-write read (with its wait). None before delete and the inserts.
    let pauses: Vec<&str> = run
        .maintenance
        .iter()
        .map(|m| m.before_step.as_str())
        .collect();
    assert_eq!(pauses, ["point-query.pre.c2", "point-query.c2"]);
    assert!(
        run.maintenance[1].actions.contains("post-write wait 1s"),
        "{:?}",
        run.maintenance
    );

    let conn = open_db(&db);
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    for n in 1..=TABLES {
        // Deletes re-inserted what they deleted: the same rows, the same ids.
        let t = format!("sbtest{n}");
        assert_eq!(
            count(&format!("SELECT count(*) FROM {t}")),
            ROWS as i64,
            "{t}"
        );
        assert_eq!(count(&format!("SELECT max(id) FROM {t}")), ROWS as i64);
    }
    // The insert benchmarks' own tables hold what their (last) step inserted.
    let inserted = |table: &str| {
        (1..=TABLES)
            .map(|n| count(&format!("SELECT count(*) FROM {table}{n}")))
            .sum::<i64>() as u64
    };
    assert_eq!(inserted("sbinsert"), step(&run, "insert.c2").queries);
    assert_eq!(
        inserted("sbrandpk"),
        step(&run, "insert-random-pk.c2").queries
    );
    assert_eq!(
        count("SELECT count(*) FROM sbrandpk1 WHERE length(id) <> 26"),
        0,
        "26-character keys"
    );
    // update-index alone adds one to k of each row it updates: sum(k) says how many.
    let sum_k = || -> i64 {
        (1..=TABLES)
            .map(|n| count(&format!("SELECT sum(k) FROM sbtest{n}")))
            .sum()
    };
    let before = sum_k();
    let again = micro(
        &bench,
        &[&base[..], &["--no-prepare", "--benchmarks", "update-index"]].concat(),
    );
    let s = step(&again, "update-index.c2");
    check_step(s, 2);
    assert_eq!(
        (sum_k() - before) as u64,
        s.queries,
        "sum(k) moved by the updates"
    );
}

#[test]
fn warm_up_is_not_counted_and_writes_are_followed_by_a_pause() {
    let bench = Bench::new();
    let db = bench.db();
    let run = micro(
        &bench,
        &[
            "--path",
            path_str(&db),
            "--tables",
            "1",
            "--table-rows",
            "500",
            "--clients",
            "1",
            "--seconds",
            "1",
            "--warmup",
            "1",
            "--post-write-pause",
            "1",
            "--benchmarks",
            "insert,point-query",
        ],
    );
    let ins = step(&run, "insert.c1");
    check_step(ins, 1);
    // The table holds the warm-up's rows too; the step counts only the measured second's.
    let conn = open_db(&db);
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM sbinsert1", [], |r| r.get(0))
        .unwrap();
    assert!(
        rows as u64 > ins.queries + ins.queries / 4,
        "{rows} rows in the table, {} counted: the warm-up inserted none?",
        ins.queries
    );
    assert!(
        ins.duration_s < 1.5,
        "{}: the warm-up is not in the step's time",
        ins.duration_s
    );
    match &run.config.workload {
        ibench::request::WorkloadSpec::Micro(m) => assert_eq!(m.warmup, 1),
        other => panic!("not a micro run: {other:?}"),
    }
    let pauses: Vec<&str> = run
        .maintenance
        .iter()
        .map(|m| m.before_step.as_str())
        .collect();
    // After the load (before the first benchmark, whatever it is), and after the write,
    // before the read.
    assert_eq!(pauses, ["insert.c1", "point-query.c1"]);
}

/// Runs the suite on a managed server kept running; returns the run, the URL and the server.
fn managed_suite(bench: &Bench, server: &str, extra: &[&str]) -> (RunResult, String, Kept) {
    let tables = TABLES.to_string();
    let rows = ROWS.to_string();
    let mut args = vec![
        "--server",
        server,
        "--keep-server",
        "--tables",
        &tables,
        "--table-rows",
        &rows,
        "--clients",
        "1",
        "--seconds",
        "1",
        "--benchmarks",
        "point-query",
    ];
    args.extend_from_slice(extra);
    // The load, then the suite by URL: what the server counts in between is the suite's alone.
    let prepared = micro(bench, &args);
    let kept = Kept {
        pid: prepared.managed_server.as_ref().unwrap().pid.unwrap(),
        signal: if server == "postgres" { "INT" } else { "TERM" },
    };
    let url = crate::common::kept_url(&prepared);
    (prepared, url, kept)
}

fn suite_by_url(bench: &Bench, url: &str) -> RunResult {
    let tables = TABLES.to_string();
    let rows = ROWS.to_string();
    let list = ONE_OF_EACH.join(",");
    let run = micro(
        bench,
        &[
            "--url",
            url,
            "--no-prepare",
            "--tables",
            &tables,
            "--table-rows",
            &rows,
            "--clients",
            "2",
            "--seconds",
            "1",
            "--benchmarks",
            &list,
        ],
    );
    assert_eq!(run.steps.len(), ONE_OF_EACH.len());
    for s in &run.steps {
        check_step(s, 2);
    }
    run
}

#[test]
fn postgres_counts_what_ibench_counts() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let (_, url, kept) = managed_suite(&bench, "postgres", &[]);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let stats = |c: &mut postgres::Client| -> BTreeMap<String, i64> {
        let row = c
            .query_one(
                "SELECT sum(n_tup_upd)::bigint, sum(n_tup_del)::bigint, sum(n_tup_ins)::bigint \
                 FROM pg_stat_user_tables WHERE relname LIKE 'sbtest%'",
                &[],
            )
            .unwrap();
        ["upd", "del", "ins"]
            .iter()
            .enumerate()
            .map(|(i, k)| (k.to_string(), row.get::<_, i64>(i)))
            .collect()
    };
    let before = stats(&mut c);
    drop(c);
    let run = suite_by_url(&bench, &url);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let after = stats(&mut c);
    let (upd, del, ins) = expected_writes(&run);
    let delta = |k: &str| (after[k] - before[k]) as u64;
    // A statement retried after a deadlock changed rows before it was rolled back: the
    // server counted them, ibench (rightly) not.
    let retried: u64 = run
        .steps
        .iter()
        .map(|s| s.retries.values().sum::<u64>())
        .sum();
    for (what, counted, expected) in [
        ("n_tup_upd", delta("upd"), upd),
        ("n_tup_del", delta("del"), del),
        ("n_tup_ins", delta("ins"), ins),
    ] {
        assert!(
            counted >= expected && counted <= expected + retried * 100,
            "{what}: pg_stat_user_tables {counted}, ibench {expected} ({retried} retries)"
        );
    }
    // Per step, from the counters the run recorded.
    let pq = step(&run, "point-query.c2");
    assert_eq!(counter(pq, "pg_stat_user_tables.idx_scan"), pq.queries);
    assert_eq!(counter(pq, "pg_stat_user_tables.idx_tup_fetch"), pq.queries);
    let scan = step(&run, "scan.c2");
    assert_eq!(counter(scan, "pg_stat_user_tables.seq_scan"), scan.queries);
    assert_eq!(
        counter(scan, "pg_stat_user_tables.seq_tup_read"),
        scan.ops["query"].rows
    );
    let range = step(&run, "range-notcovered-pk_range=100.c2");
    assert_eq!(
        counter(range, "pg_stat_user_tables.idx_tup_fetch"),
        range.ops["query"].rows
    );
    // No index hints: said in the results of the steps that ask for one, and only there.
    for s in &run.steps {
        let b = benchmark(s);
        let asks = b.ends_with("-si") || b.contains("-si_range=");
        assert_eq!(
            s.notes.len(),
            usize::from(asks),
            "{}: {:?}",
            s.name,
            s.notes
        );
        if asks {
            assert!(s.notes[0].contains("no index hints"), "{:?}", s.notes);
        }
    }
    // The tables kept their size; the insert benchmarks' own hold what they inserted.
    for t in ["sbtest1", "sbtest2"] {
        let n: i64 = c
            .query_one(&format!("SELECT count(*) FROM {t}"), &[])
            .unwrap()
            .get(0);
        assert_eq!(n as u64, ROWS, "{t}");
    }
    let n: i64 = c
        .query_one(
            "SELECT (SELECT count(*) FROM sbinsert1) + (SELECT count(*) FROM sbinsert2)",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n as u64, step(&run, "insert.c2").queries);
    drop(c);
    kept.stop();
}

/// MariaDB counts rows read and changed in `SHOW GLOBAL STATUS` (10.11 has no Innodb_rows_*);
/// MyRocks also in its own Rocksdb_rows_*.
fn mariadb_counts_what_ibench_counts(engine: &str) {
    if !have("mariadb", engine) {
        return;
    }
    let bench = server_bench();
    let (_, url, kept) = managed_suite(&bench, "mariadb", &["--engine", engine]);
    let status = |url: &str| -> BTreeMap<String, u64> {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
        let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS").unwrap();
        rows.into_iter()
            .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
            .collect()
    };
    let before = status(&url);
    let run = suite_by_url(&bench, &url);
    let after = status(&url);
    let delta = |k: &str| after[k] - before[k];
    let (upd, del, ins) = expected_writes(&run);
    let inserts = ins + step(&run, "insert.c2").queries + step(&run, "insert-random-pk.c2").queries;
    // A statement retried after a deadlock changed rows before it was rolled back: the DBMS
    // counted them, ibench (rightly) not.
    let retried: u64 = run
        .steps
        .iter()
        .map(|s| s.retries.values().sum::<u64>())
        .sum();
    let slack = retried * 100;
    let within = |what: &str, counted: u64, expected: u64| {
        assert!(
            counted >= expected && counted <= expected + slack,
            "{engine} {what}: the server counted {counted}, ibench {expected} ({retried} retries)"
        );
    };
    within("Handler_update", delta("Handler_update"), upd);
    within("Handler_delete", delta("Handler_delete"), del);
    within("Handler_write", delta("Handler_write"), inserts);
    if engine == "rocksdb" {
        // MyRocks' own counters too (rows_inserted leaves out, once its sessions are gone,
        // the rows of tables created since the server started: sbinsert, sbrandpk).
        within("Rocksdb_rows_updated", delta("Rocksdb_rows_updated"), upd);
        within("Rocksdb_rows_deleted", delta("Rocksdb_rows_deleted"), del);
    }
    // Per step, from the counters the run recorded: a point query reads one row, an IN list
    // as many as it returns, a scan the table. (MariaDB's Rows_read misses MyRocks' batched
    // reads of IN lists; MyRocks counts them itself.)
    let read = if engine == "rocksdb" {
        "Rocksdb_rows_read"
    } else {
        "Rows_read"
    };
    let pq = step(&run, "point-query.c2");
    assert_eq!(counter(pq, read), pq.queries, "{engine}");
    let scan = step(&run, "scan.c2");
    assert_eq!(counter(scan, read), scan.ops["query"].rows, "{engine}");
    let points = step(&run, "random-points_range=100.c2");
    assert_eq!(counter(points, read), points.ops["query"].rows, "{engine}");
    // FORCE INDEX: nothing to note.
    assert!(run.steps.iter().all(|s| s.notes.is_empty()), "{engine}");
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    for t in ["sbtest1", "sbtest2"] {
        let n: Option<u64> = c.query_first(format!("SELECT count(*) FROM {t}")).unwrap();
        assert_eq!(n, Some(ROWS), "{engine} {t}");
    }
    let n: Option<u64> = c
        .query_first("SELECT (SELECT count(*) FROM sbrandpk1) + (SELECT count(*) FROM sbrandpk2)")
        .unwrap();
    assert_eq!(
        n,
        Some(step(&run, "insert-random-pk.c2").queries),
        "{engine}"
    );
    drop(c);
    kept.stop();
}

#[test]
fn mariadb_innodb_counts_what_ibench_counts() {
    mariadb_counts_what_ibench_counts("innodb");
}

#[test]
fn myrocks_counts_what_ibench_counts() {
    mariadb_counts_what_ibench_counts("rocksdb");
}

#[test]
fn a_transaction_held_up_by_a_lock_is_retried_whole() {
    let bench = Bench::new();
    let db = bench.db();
    let target = [
        "--path",
        path_str(&db),
        "--tables",
        "1",
        "--table-rows",
        "500",
    ];
    micro(
        &bench,
        &[&target[..], &["--clients", "1", "--seconds", "1"]].concat(),
    );
    // Another writer takes SQLite's write lock for 150 ms of every 250, while the run is on:
    // ibench's BEGIN IMMEDIATE waits 20 ms (--busy-timeout-ms), fails, and the transaction is
    // tried again from its start.
    let locker_db = db.clone();
    let locker = std::thread::spawn(move || {
        let conn = open_db(&locker_db);
        std::thread::sleep(std::time::Duration::from_millis(800));
        for _ in 0..10 {
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(150));
            conn.execute_batch("COMMIT").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    let run = micro(
        &bench,
        &[
            &target[..],
            &[
                "--no-prepare",
                "--benchmarks",
                "write-only",
                "--clients",
                "2",
                "--seconds",
                "4",
                "--busy-timeout-ms",
                "20",
                "--max-tries",
                "1000",
                "--max-error-rate",
                "100",
            ],
        ]
        .concat(),
    );
    locker.join().unwrap();
    let s = step(&run, "write-only.c2");
    check_step(s, 2);
    assert!(
        s.retries.get("query").copied().unwrap_or(0) > 0,
        "no transaction was retried: {:?}",
        s.retries
    );
    // Whole transactions or nothing: every delete was followed by its re-insert.
    let conn = open_db(&db);
    let (n, max): (i64, i64) = conn
        .query_row("SELECT count(*), max(id) FROM sbtest1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((n, max), (500, 500));
}

#[test]
fn a_managed_postgres_has_room_for_128_clients() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    // PostgreSQL's default is 100 connections: the managed server is sized for the run's.
    let run = micro(
        &bench,
        &[
            "--server",
            "postgres",
            "--tables",
            "1",
            "--table-rows",
            "500",
            "--clients",
            "128",
            "--seconds",
            "1",
        ],
    );
    check_step(step(&run, "point-query.c128"), 128);
    let limit = &run.environment.dbms.settings["max_connections"];
    assert_eq!(limit, "138", "128 clients and ibench's own 10");
}

//! The microbenchmarks' reference order (issue #31): `.pre` reads on the freshly loaded
//! tables named apart from their post-write runs, the post-write pause (maintenance the DBMS
//! shows, then the wait), reports and compare listing pre and post separately; and
//! insert-random-pk into tables `prepare` filled (`--random-pk-rows`).

use ibench::results::model::{RunResult, StepResult};
use serde_json::Value;

use crate::common::{Bench, Kept, have, open_db, path_str, server_bench};

/// Runs `ibench micro --out <out> -q <args>`.
fn micro(bench: &Bench, args: &[&str]) -> RunResult {
    bench
        .run_raw(&["micro", "--out", path_str(&bench.out()), "-q"], args)
        .result()
}

fn step<'r>(run: &'r RunResult, name: &str) -> &'r StepResult {
    run.steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// `ibench <args> --results <out>/results.db`, which must succeed; its stdout.
fn stored(bench: &Bench, args: &[&str]) -> String {
    let store = bench.out().join("results.db");
    let mut all = args.to_vec();
    all.extend(["--results", path_str(&store)]);
    let out = bench.run_raw(&all, &[]);
    out.assert_success();
    out.stdout
}

/// A pre-write read, a write, the same read after the pause: on SQLite, twice (labels a and
/// b); report and compare list `point-query.pre` and `point-query` as two benchmarks.
#[test]
fn sqlite_pre_and_post_reads_are_apart_in_reports_and_compare() {
    let bench = Bench::new();
    let mut runs = Vec::new();
    for label in ["a", "b"] {
        let db = bench.path(&format!("{label}.db"));
        let run = micro(
            &bench,
            &[
                "--path",
                path_str(&db),
                "--tables",
                "1",
                "--table-rows",
                "1000",
                "--clients",
                "1",
                "--seconds",
                "1",
                "--post-write-pause",
                "2",
                "--label",
                label,
                "--benchmarks",
                "point-query.pre,update-one,point-query",
            ],
        );
        let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "prepare",
                "point-query.pre.c1",
                "update-one.c1",
                "point-query.c1"
            ]
        );
        // After the load, and after the write: SQLite's statistics and checkpoint, then the
        // wait, which counts from the pause's start.
        let pauses: Vec<(&str, &str)> = run
            .maintenance
            .iter()
            .map(|m| (m.before_step.as_str(), m.actions.as_str()))
            .collect();
        assert_eq!(pauses.len(), 2, "{pauses:?}");
        assert_eq!(pauses[0].0, "point-query.pre.c1");
        assert!(!pauses[0].1.contains("wait"), "{pauses:?}");
        assert_eq!(pauses[1].0, "point-query.c1");
        assert!(
            pauses[1]
                .1
                .starts_with("ANALYZE per table, PRAGMA wal_checkpoint(TRUNCATE)")
                && pauses[1].1.contains("post-write wait 2s"),
            "{pauses:?}"
        );
        assert!(
            run.maintenance[1].duration_s >= 2.0,
            "{:?}",
            run.maintenance
        );
        // ANALYZE left the planner's statistics of the table.
        let conn = open_db(&db);
        let stats: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'sbtest1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(stats > 0, "no sqlite_stat1 rows for sbtest1");
        runs.push(run);
    }
    // show lists the pauses: what each did and waited for.
    let shown = stored(&bench, &["show", &runs[0].run_id]);
    assert!(
        shown.contains("Maintenance pauses")
            && shown.contains("before point-query.c1")
            && shown.contains("post-write wait 2s"),
        "{shown}"
    );
    let md = stored(&bench, &["report", "a", "b", "--format", "md"]);
    let rows = |bench: &str| {
        md.lines()
            .filter(|l| l.starts_with(&format!("| {bench} |")))
            .count()
    };
    assert!(rows("point-query.pre") > 0, "{md}");
    assert_eq!(rows("point-query.pre"), rows("point-query"), "{md}");
    let cmp: Value = serde_json::from_str(&stored(&bench, &["compare", "a", "b", "--json"]))
        .expect("compare JSON");
    let steps: Vec<&str> = cmp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["step"].as_str())
        .collect();
    for s in ["point-query.pre.c1", "point-query.c1"] {
        assert!(steps.contains(&s), "{s} not compared: {steps:?}");
    }
}

/// insert-random-pk into tables prepare filled, kept from one client count to the next: they
/// hold the prefill and every step's inserts.
#[test]
fn sqlite_random_pk_inserts_go_into_prefilled_tables() {
    let bench = Bench::new();
    let db = bench.db();
    let run = micro(
        &bench,
        &[
            "--path",
            path_str(&db),
            "--tables",
            "2",
            "--table-rows",
            "1000",
            "--random-pk-rows",
            "700",
            "--clients",
            "1,2",
            "--seconds",
            "1",
            "--benchmarks",
            "insert-random-pk",
        ],
    );
    // The load counts the prefill, the steps only their own inserts.
    assert_eq!(step(&run, "prepare").rows_inserted, 2 * 1000 + 2 * 700);
    let inserted =
        step(&run, "insert-random-pk.c1").queries + step(&run, "insert-random-pk.c2").queries;
    assert!(inserted > 0);
    let conn = open_db(&db);
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let rows = count("SELECT count(*) FROM sbrandpk1") + count("SELECT count(*) FROM sbrandpk2");
    assert_eq!(rows as u64, 2 * 700 + inserted);
    assert_eq!(
        count("SELECT count(*) FROM sbrandpk1 WHERE length(id) <> 26"),
        0
    );
    match &run.config.workload {
        ibench::request::WorkloadSpec::Micro(m) => assert_eq!(m.random_pk_rows, 700),
        other => panic!("not a micro run: {other:?}"),
    }
    // Prefilling needs the load.
    let o = bench.run_raw(
        &["micro"],
        &[
            "--path",
            path_str(&db),
            "--no-prepare",
            "--random-pk-rows",
            "5",
        ],
    );
    assert_eq!(o.code, Some(2), "{}", o.describe());
}

/// On a managed PostgreSQL: the post-write pause vacuums (pg_stat_user_tables shows it between
/// the write and the post-write read), and insert-random-pk goes into the prefilled tables.
#[test]
fn postgres_post_write_pause_vacuums_between_the_writes_and_the_reads() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let run = micro(
        &bench,
        &[
            "--server",
            "postgres",
            "--keep-server",
            "--tables",
            "2",
            "--table-rows",
            "2000",
            "--random-pk-rows",
            "300",
            "--clients",
            "1",
            "--seconds",
            "1",
            "--post-write-pause",
            "3",
            "--benchmarks",
            "point-query.pre,update-one,point-query,insert-random-pk",
        ],
    );
    let kept = Kept::of(&run, "postgres");
    let url = crate::common::kept_url(&run);
    let pauses: Vec<&str> = run
        .maintenance
        .iter()
        .map(|m| m.before_step.as_str())
        .collect();
    assert_eq!(pauses, ["point-query.pre.c1", "point-query.c1"]);
    let post = &run.maintenance[1];
    assert!(
        post.actions
            .starts_with("VACUUM (ANALYZE, INDEX_CLEANUP ON) per table, CHECKPOINT")
            && post.actions.contains("post-write wait 3s"),
        "{post:?}"
    );
    assert!(post.duration_s >= 3.0, "{post:?}");
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let write = step(&run, "update-one.c1");
    let write_end =
        write.started_at + chrono::Duration::milliseconds((write.duration_s * 1000.0) as i64);
    let read = step(&run, "point-query.c1");
    for t in ["sbtest1", "sbtest2"] {
        let row = c
            .query_one(
                "SELECT vacuum_count, analyze_count, last_vacuum, last_analyze \
                 FROM pg_stat_user_tables WHERE relname = $1",
                &[&t],
            )
            .unwrap();
        let (vacuums, analyzes): (i64, i64) = (row.get(0), row.get(1));
        // The pause after the load, the one after the write.
        assert_eq!((vacuums, analyzes), (2, 2), "{t}");
        let last: chrono::DateTime<chrono::Utc> = row.get(2);
        let analyzed: chrono::DateTime<chrono::Utc> = row.get(3);
        for at in [last, analyzed] {
            assert!(
                write_end < at && at < read.started_at,
                "{t}: vacuumed at {at}, the write ended {write_end}, the read began {}",
                read.started_at
            );
        }
    }
    let prefilled: i64 = c
        .query_one(
            "SELECT (SELECT count(*) FROM sbrandpk1) + (SELECT count(*) FROM sbrandpk2)",
            &[],
        )
        .unwrap()
        .get(0);
    let inserted = step(&run, "insert-random-pk.c1").queries;
    assert!(inserted > 0);
    assert_eq!(prefilled as u64, 2 * 300 + inserted);
    drop(c);
    kept.stop();
}

/// The reference order on a managed MariaDB InnoDB with a short post-write pause, while the
/// test holds a read view open from the first read on (so purge cannot remove the writes'
/// undo): the pause waits for the purge before its ANALYZE, finds the history list length
/// high and no longer falling, and records that; closed, the history is purged.
#[test]
fn mariadb_reference_order_pause_waits_for_innodb_purge() {
    use mysql::prelude::Queryable;
    if !have("mariadb", "") {
        return;
    }
    let bench = server_bench();
    let out = bench.out();
    let running = bench.spawn_raw(
        &["micro", "--out", path_str(&out), "-q"],
        &[
            "--server",
            "mariadb",
            "--keep-server",
            "--tables",
            "1",
            "--table-rows",
            "2000",
            "--clients",
            "1",
            "--seconds",
            "1",
            "--post-write-pause",
            "8",
            "--benchmarks",
            "all",
        ],
    );
    // prepare done: the .pre reads run, the writes have not begun.
    crate::common::wait_for_steps(&out, 1);
    let partial = crate::common::json_files(&out)
        .first()
        .and_then(|f| ibench::results::file::load(f).ok())
        .expect("the run's results so far");
    let url = crate::common::kept_url(&partial);
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    // A read view from now on, reading no table (no metadata lock for ANALYZE to wait on).
    c.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    let o = running.finish(std::time::Duration::from_secs(900));
    let run = o.result();
    let kept = Kept::of(&run, "mariadb");
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names[1], "point-query.pre.c1", "{names:?}");
    let pre = ibench::workload::micro::PRE_WRITE_READS.len();
    assert_eq!(names[pre + 1], "update-inlist.c1", "{names:?}");
    let pauses: Vec<&str> = run
        .maintenance
        .iter()
        .map(|m| m.before_step.as_str())
        .collect();
    assert_eq!(pauses, ["point-query.pre.c1", "point-query.c1"]);
    assert!(
        run.maintenance[0].settled.is_none(),
        "{:?}",
        run.maintenance
    );
    let post = &run.maintenance[1];
    let s = post.settled.as_ref().expect("the purge wait recorded");
    assert_eq!(s.figure, "Innodb_history_list_length");
    // Every write since the read view left undo purge could not remove: at least one
    // history entry per committed write transaction of update-one, say.
    let update_one = step(&run, "update-one.c1").queries as f64;
    assert!(s.start >= 100.0 && s.start >= update_one, "{s:?}");
    assert!(s.end >= 100.0, "{s:?}");
    assert!(s.outcome.contains("no longer falling"), "{s:?}");
    assert!((5.0..=8.5).contains(&s.seconds), "{s:?}");
    assert!(
        post.actions.contains("InnoDB purge") && post.actions.contains("post-write wait 8s"),
        "{post:?}"
    );
    assert!(post.duration_s >= 8.0, "{post:?}");
    // The read view closed, purge catches up (what the pause would have waited for).
    drop(c);
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let history = loop {
        let row: Option<(String, u64)> = c
            .query_first("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")
            .unwrap();
        let h = row.map_or(0, |r| r.1);
        if h < 100 || std::time::Instant::now() > deadline {
            break h;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(
        history < 100,
        "history list length {history} a minute after"
    );
    drop(c);
    kept.stop();
}

/// On a managed MyRocks: the post-write pause, after its memtable flush and L0 compaction,
/// waits until nothing is pending and no compaction byte is written, and records the
/// compaction bytes it saw written (the server's own counter has at least as many after).
#[test]
fn myrocks_post_write_pause_waits_for_compactions() {
    use mysql::prelude::Queryable;
    if !have("mariadb", "rocksdb") {
        return;
    }
    let bench = server_bench();
    let run = micro(
        &bench,
        &[
            "--server",
            "mariadb",
            "--engine",
            "rocksdb",
            "--keep-server",
            "--tables",
            "1",
            "--table-rows",
            "5000",
            "--clients",
            "1",
            "--seconds",
            "2",
            "--post-write-pause",
            "6",
            "--benchmarks",
            "point-query.pre,update-index,point-query",
        ],
    );
    let kept = Kept::of(&run, "mariadb");
    let url = crate::common::kept_url(&run);
    let post = &run.maintenance[1];
    assert_eq!(post.before_step, "point-query.c1");
    let s = post.settled.as_ref().expect("the compaction wait recorded");
    assert_eq!(s.figure, "Rocksdb_compact_write_bytes");
    assert!(
        post.actions
            .starts_with("ANALYZE TABLE per table, flushed memtable and compacted L0")
            && post.actions.contains("MyRocks flushes and compactions"),
        "{post:?}"
    );
    // Settled on a quiet server (at least the idle time) before the pause's end.
    assert!(
        s.outcome.contains("no flush or compaction pending"),
        "{s:?}"
    );
    assert!((2.0..6.5).contains(&s.seconds), "{s:?}");
    assert!(s.end >= s.start, "{s:?}");
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    let row: Option<(String, f64)> = c
        .query_first("SHOW GLOBAL STATUS LIKE 'Rocksdb_compact_write_bytes'")
        .unwrap();
    let now = row.expect("the counter").1;
    assert!(
        now >= s.end && s.end > 0.0,
        "server says {now}, the pause {s:?}"
    );
    drop(c);
    kept.stop();
}

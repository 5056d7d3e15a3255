//! `ibench micro`: sysbench-style tables prepared as sysbench prepares them, point selects
//! counted against the DBMS's own statistics (PostgreSQL's idx_scan, MariaDB's userstat
//! rows read), tables prepared by sysbench itself used with --no-prepare, and bad input.

use ibench::results::model::{RunResult, StepResult};
use mysql::prelude::Queryable;

use crate::common::{Bench, Kept, ci, have, histogram_len, open_db, path_str, server_bench};

/// Runs `ibench micro --out <out> -q <args>`.
fn micro(bench: &Bench, args: &[&str]) -> crate::common::Outcome {
    bench.run_raw(&["micro", "--out", path_str(&bench.out()), "-q"], args)
}

/// What every point-query step must show, whatever the DBMS: queries counted once each in
/// the merged histogram, the per-client histograms and the per-second series; every id found.
fn check_point_query(step: &StepResult, clients: usize) {
    let ctx = &step.name;
    assert_eq!(step.clients, clients, "{ctx}");
    let q = &step.ops["query"];
    assert!(step.queries > 100, "{ctx}: {} queries", step.queries);
    assert_eq!(q.count, step.queries, "{ctx}");
    assert_eq!(q.rows, step.queries, "{ctx}: one row per point query");
    assert_eq!(histogram_len(&q.histogram), step.queries, "{ctx}");
    assert_eq!(q.per_client.len(), clients, "{ctx}");
    let per_client: u64 = q
        .per_client
        .iter()
        .map(|c| histogram_len(&c.histogram))
        .sum();
    assert_eq!(per_client, step.queries, "{ctx}");
    let per_second: u64 = step.per_second.total.ops["query"].ops.iter().sum();
    assert_eq!(per_second, step.queries, "{ctx}");
    assert_eq!(step.point_query_misses, Some(0), "{ctx}");
    let rate = step.queries as f64 / step.duration_s;
    assert!((step.queries_per_s - rate).abs() <= 0.01 * rate, "{ctx}");
    assert_eq!(step.rows_inserted, 0, "{ctx}");
}

fn step_names(run: &RunResult) -> Vec<&str> {
    run.steps.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn sqlite_tables_are_prepared_as_sysbench_does_and_every_query_counted() {
    let bench = Bench::new();
    let db = bench.db();
    let out = micro(
        &bench,
        &[
            "--path",
            path_str(&db),
            "--tables",
            "3",
            "--table-rows",
            "2500",
            "--clients",
            "1,2",
            "--seconds",
            "1",
        ],
    );
    let run = out.result();
    // The summary has no Insert Benchmark columns, which would be "-" in every row.
    let header = out.stdout.lines().find(|l| l.starts_with("step ")).unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        ["step", "time", "ins/s", "q/s"],
        "{}",
        out.stdout
    );
    assert_eq!(
        step_names(&run),
        ["prepare", "point-query.c1", "point-query.c2"]
    );
    assert_eq!(run.steps[0].rows_inserted, 3 * 2500);
    for (step, clients) in run.steps[1..].iter().zip([1, 2]) {
        check_point_query(step, clients);
    }

    // The tables, read with our own SQL.
    let conn = open_db(&db);
    for n in 1..=3 {
        let t = format!("sbtest{n}");
        let (count, min, max, max_k, c_len, pad_len): (i64, i64, i64, i64, i64, i64) = conn
            .query_row(
                &format!(
                    "SELECT count(*), min(id), max(id), max(k), min(length(c)), \
                     min(length(pad)) FROM {t}"
                ),
                [],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                },
            )
            .unwrap();
        assert_eq!((count, min, max), (2500, 1, 2500), "{t}");
        assert!((1..=2500).contains(&max_k), "{t}: k {max_k}");
        assert_eq!((c_len, pad_len), (119, 59), "{t}");
        assert_eq!(
            crate::common::indexes(&conn, &t),
            vec![(format!("k_{n}"), vec!["k".to_string()])]
        );
    }
    drop(conn);

    // --no-prepare uses the tables as they are: no prepare step, same rows.
    let again = micro(
        &bench,
        &[
            "--path",
            path_str(&db),
            "--no-prepare",
            "--tables",
            "3",
            "--table-rows",
            "2500",
            "--clients",
            "2",
            "--seconds",
            "1",
        ],
    )
    .result();
    assert_eq!(step_names(&again), ["point-query.c2"]);
    check_point_query(&again.steps[0], 2);
}

#[test]
fn missing_tables_and_bad_flags_are_one_line_each() {
    let bench = Bench::new();
    let empty = bench.path("empty.sqlite");
    rusqlite::Connection::open(&empty).unwrap();
    let out = micro(
        &bench,
        &["--path", path_str(&empty), "--no-prepare", "--seconds", "1"],
    );
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(
        out.stderr.contains("sbtest1 does not exist") && out.stderr.contains("sysbench"),
        "{}",
        out.stderr
    );
    for (args, expected) in [
        (&["--clients", "0"][..], "--clients 0 is out of range"),
        (&["--clients", "2,0"][..], "--clients 0 is out of range"),
        (&["--table-rows", "0"][..], "--table-rows 0 is out of range"),
        (&["--tables", "0"][..], "--tables 0 is out of range"),
        (&["--seconds", "0"][..], "--seconds 0 is out of range"),
        (&["--no-prepare"][..], "--no-prepare uses existing tables"),
        (&["--benchmarks", "nope"][..], "nope"),
        (&["--benchmarks", "all.pre"][..], "all.pre"),
    ] {
        let out = micro(&bench, args);
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.describe());
        let errors: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("error"))
            .collect();
        assert_eq!(errors.len(), 1, "{args:?}: {}", out.stderr);
        assert!(errors[0].contains(expected), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(
            out.new_results.is_empty(),
            "{args:?}: no results for bad input"
        );
    }
}

/// Runs micro on a managed server left running, and returns the run and the server's URL.
fn managed(bench: &Bench, server: &str, extra: &[&str]) -> (RunResult, String, Kept) {
    let mut args = vec![
        "--server",
        server,
        "--keep-server",
        "--tables",
        "2",
        "--table-rows",
        "3000",
        "--clients",
        "1,2",
        "--seconds",
        "1",
    ];
    args.extend_from_slice(extra);
    let run = micro(bench, &args).result();
    let kept = Kept {
        pid: run.managed_server.as_ref().unwrap().pid.unwrap(),
        signal: if server == "postgres" { "INT" } else { "TERM" },
    };
    let url = crate::common::kept_url(&run);
    (run, url, kept)
}

#[test]
fn postgres_point_queries_match_the_servers_index_scans() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let (run, url, kept) = managed(&bench, "postgres", &[]);
    assert_eq!(step_names(&run)[0], "prepare");
    let queries: u64 = run.steps[1..].iter().map(|s| s.queries).sum();
    for (step, clients) in run.steps[1..].iter().zip([1, 2]) {
        check_point_query(step, clients);
    }
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for t in ["sbtest1", "sbtest2"] {
        let row = c
            .query_one(&format!("SELECT count(*), min(id), max(id) FROM {t}"), &[])
            .unwrap();
        let (n, min, max): (i64, i32, i32) = (row.get(0), row.get(1), row.get(2));
        assert_eq!((n, min, max), (3000, 1, 3000), "{t}");
    }
    // Every point query is one primary-key index scan, and nothing else scans an index
    // (statistics reach the view when the sessions have ended).
    let scans: i64 = c
        .query_one(
            "SELECT sum(idx_scan)::bigint FROM pg_stat_user_tables \
             WHERE relname IN ('sbtest1', 'sbtest2')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(scans as u64, queries, "idx_scan vs queries");
    drop(c);
    kept.stop();
}

#[test]
fn mariadb_point_queries_match_the_servers_rows_read() {
    if !have("mariadb", "") {
        return;
    }
    let bench = server_bench();
    let (run, url, kept) = managed(&bench, "mariadb", &["--server-option", "userstat=1"]);
    let queries: u64 = run.steps[1..].iter().map(|s| s.queries).sum();
    for (step, clients) in run.steps[1..].iter().zip([1, 2]) {
        check_point_query(step, clients);
    }
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    for t in ["sbtest1", "sbtest2"] {
        let n: Option<u64> = c.query_first(format!("SELECT count(*) FROM {t}")).unwrap();
        assert_eq!(n, Some(3000), "{t}");
    }
    // Rows read through the primary key by the point queries (userstat counts per index).
    let rows: Option<u64> = c
        .query_first(
            "SELECT sum(rows_read) FROM information_schema.index_statistics \
             WHERE table_name IN ('sbtest1', 'sbtest2') AND index_name = 'PRIMARY'",
        )
        .unwrap();
    assert_eq!(rows, Some(queries), "rows read by primary key vs queries");
    drop(c);
    kept.stop();
}

#[test]
fn tables_prepared_by_sysbench_are_used_with_no_prepare() {
    if !std::path::Path::new("/usr/bin/sysbench").exists() {
        assert!(!ci(), "sysbench is not installed: apt-get install sysbench");
        crate::common::skip("sysbench is not installed (apt-get install sysbench)");
        return;
    }
    if !have("mariadb", "") {
        return;
    }
    let bench = server_bench();
    // A throwaway server with the micro tables, then sysbench's own tables in their place.
    let (_, url, kept) = managed(&bench, "mariadb", &[]);
    let u = url::Url::parse(&url).unwrap();
    let sysbench = |command: &str| {
        let out = std::process::Command::new("sysbench")
            .args([
                "oltp_point_select",
                "--db-driver=mysql",
                &format!("--mysql-host={}", u.host_str().unwrap()),
                &format!("--mysql-port={}", u.port().unwrap()),
                &format!("--mysql-user={}", u.username()),
                &format!("--mysql-password={}", u.password().unwrap_or_default()),
                &format!("--mysql-db={}", u.path().trim_start_matches('/')),
                "--tables=2",
                "--table-size=1500",
                command,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "sysbench {command}: {out:?}");
    };
    sysbench("cleanup");
    sysbench("prepare");
    let run = micro(
        &bench,
        &[
            "--url",
            &url,
            "--no-prepare",
            "--tables",
            "2",
            "--table-rows",
            "1500",
            "--clients",
            "2",
            "--seconds",
            "1",
        ],
    )
    .result();
    assert_eq!(step_names(&run), ["point-query.c2"]);
    check_point_query(&run.steps[0], 2);
    kept.stop();
}

/// Against a server ibench did not start, a run that would open more connections than the
/// server accepts is refused before anything starts, in one line naming both numbers: the
/// limit as the test reads it from the server itself.
fn refused_when_the_server_has_no_room(server: &str, limit: impl Fn(&str) -> u64) {
    let bench = server_bench();
    let (_, url, kept) = managed(&bench, server, &[]);
    let limit = limit(&url);
    // micro opens one connection per client, and ibench one of its own.
    let clients = (limit + 5).to_string();
    let out = micro(
        &bench,
        &[
            "--url",
            &url,
            "--no-prepare",
            "--tables",
            "2",
            "--table-rows",
            "3000",
            "--clients",
            &clients,
            "--seconds",
            "1",
        ],
    );
    kept.stop();
    assert_eq!(out.code, Some(2), "{}", out.describe());
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("error"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    let needed = format!("up to {} connections", limit + 6);
    let accepts = format!("accepts {limit} ");
    assert!(
        errors[0].contains(&needed) && errors[0].contains(&accepts),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains(&url),
        "no password shown: {}",
        out.stderr
    );
    assert!(out.new_results.is_empty(), "no results: {}", out.describe());
}

#[test]
fn a_postgres_without_room_for_the_run_is_refused_naming_both_numbers() {
    if !have("postgres", "") {
        return;
    }
    refused_when_the_server_has_no_room("postgres", |url| {
        let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
        let setting = |c: &mut postgres::Client, name: &str| -> u64 {
            // reserved_connections is PostgreSQL 16's.
            let v: String = c
                .query_one("SELECT coalesce(current_setting($1, true), '0')", &[&name])
                .unwrap()
                .get(0);
            v.parse().unwrap()
        };
        setting(&mut c, "max_connections")
            - setting(&mut c, "superuser_reserved_connections")
            - setting(&mut c, "reserved_connections")
    });
}

#[test]
fn a_mariadb_without_room_for_the_run_is_refused_naming_both_numbers() {
    if !have("mariadb", "") {
        return;
    }
    refused_when_the_server_has_no_room("mariadb", |url| {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
        c.query_first::<u64, _>("SELECT @@max_connections")
            .unwrap()
            .unwrap()
    });
}

//! Real servers: managed throwaway PostgreSQL, MariaDB InnoDB and MariaDB MyRocks started by
//! ibench itself, and already-running servers reached by URL. Each check reads the server with
//! its own client, not ibench's account of it.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use ibench::results::model::RunResult;
use mysql::prelude::Queryable;

use crate::common::{Bench, Kept, Outcome, alive, ci, have, histogram_len, path_str, server_bench};

/// Small sizes: the whole default step sequence in a few seconds per server.
const SMALL: &[&str] = &[
    "--l0-rows",
    "5000",
    "--l1-rows",
    "1000",
    "--query-seconds",
    "1",
];

/// Kills the server `pid` with SIGKILL; ibench must then stop within seconds and exit 1.
fn kill_9_and_finish(child: crate::common::Running, pid: u32) -> Outcome {
    let killed_at = Instant::now();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = child.finish(Duration::from_secs(60));
    assert!(
        killed_at.elapsed() < Duration::from_secs(30),
        "stopped within seconds"
    );
    assert_eq!(out.code, Some(1), "{}", out.describe());
    out
}

/// Processes whose command line mentions `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(needle))
                .unwrap_or(false)
        })
        .collect()
}

/// Invariants every full run must show, from the results.
fn check_results(run: &RunResult, clients: u64, l0: u64) {
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"
        ]
    );
    assert_eq!(run.steps[0].rows_inserted, clients * l0);
    for s in &run.steps {
        for (op, r) in &s.ops {
            assert_eq!(histogram_len(&r.histogram), r.count, "{} {op}", s.name);
            let per_client: u64 = r.per_client.iter().map(|c| c.count).sum();
            assert_eq!(per_client, r.count, "{} {op}", s.name);
        }
        if s.name.starts_with('q') {
            assert!(s.queries > 0, "{} ran no queries", s.name);
            assert_eq!(s.rows_inserted, s.rows_deleted, "{}: queue", s.name);
        }
        if s.name.starts_with("qp") {
            assert_eq!(s.point_query_misses, Some(0), "{}", s.name);
        }
    }
    assert!(run.managed_server.is_some());
    // Every step reports what it cost, from the server's own process tree.
    for s in &run.steps {
        let e = s
            .efficiency
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no efficiency", s.name));
        assert!(e.dbms_source.starts_with("managed"), "{}", e.dbms_source);
        let dbms = e
            .dbms
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no DBMS figures", s.name));
        assert!(dbms.processes >= 1);
        assert!(e.peak.dbms_rss_bytes.unwrap() > 0 && e.peak.dbms_pss_bytes.unwrap() > 0);
        assert!(
            e.db_size.disk_bytes.unwrap() > 0,
            "{}: size on disk",
            s.name
        );
        assert!(!s.dbms_counters.is_empty(), "{}: DBMS counters", s.name);
        if s.name != "l.x" {
            let p = e.per_op.as_ref().unwrap();
            assert!(p.dbms_cpu_us.unwrap() > 0.0, "{}: DBMS CPU per op", s.name);
            assert!(p.client_cpu_us > 0.0 && p.host_cpu_us > 0.0, "{}", s.name);
            assert!(p.dbms_cs.unwrap() > 0.0, "{}: context switches", s.name);
            assert!(!e.counters_per_op.is_empty(), "{}: key counters", s.name);
        }
    }
}

fn config_file(bench: &Bench, text: &str) -> String {
    let path = bench.path("server.cnf");
    fs::write(&path, text).unwrap();
    path_str(&path).to_string()
}

#[test]
fn managed_postgres_full_run_keeps_queue_and_applies_config() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let cnf = config_file(&bench, "shared_buffers = 48MB\n");
    let mut args = vec![
        "--server",
        "postgres",
        "--server-config",
        &cnf,
        "--keep-server",
    ];
    args.extend_from_slice(SMALL);
    let out = bench.run(&args);
    let run = out.result();
    check_results(&run, 2, 5000);
    // The server's own count of inserted rows agrees with ibench's, step by step.
    for step in run.steps.iter().filter(|s| s.name.starts_with("l.i")) {
        assert_eq!(
            step.dbms_counters.get("pg_stat_database.tup_inserted"),
            Some(&(step.rows_inserted as f64)),
            "{}: pg_stat_database.tup_inserted",
            step.name
        );
    }
    let pid = run.managed_server.as_ref().unwrap().pid.unwrap();
    let kept = Kept { pid, signal: "INT" };
    assert!(alive(pid), "--keep-server left no server");
    let url = run.environment.dbms.location.clone();
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("connect to kept server");
    let sb: String = c.query_one("SHOW shared_buffers", &[]).unwrap().get(0);
    assert_eq!(sb, "48MB");
    for t in ["pi1", "pi2"] {
        let n: i64 = c
            .query_one(&format!("SELECT count(*) FROM {t}"), &[])
            .unwrap()
            .get(0);
        assert_eq!(n, 5000, "queue invariant on {t}");
        let idx: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_indexes WHERE tablename = $1 AND indexname <> $1 || '_pkey'",
                &[&t],
            )
            .unwrap()
            .get(0);
        assert_eq!(idx, 3, "secondary indexes on {t}");
    }
    let mut found = Vec::new();
    let db = ibench::dbms::open(&run.config.target).unwrap();
    let mut conn = db.connect().unwrap();
    let table = ibench::dbms::Table {
        id: 0,
        name: "pi1".into(),
    };
    let (lo, hi): (i64, i64) = {
        let r = c
            .query_one(
                "SELECT min(transactionid), max(transactionid) FROM pi1",
                &[],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    let ids: Vec<i64> = (0..10).map(|i| lo + (hi - lo) * i / 10).collect();
    conn.point_query(&table, &ids, &mut found).unwrap();
    found.sort();
    assert_eq!(found, ids, "point query returns exactly the ids asked");
    drop(c);
    kept.stop();
}

fn managed_mariadb(engine: &str, cnf_text: &str, variable: &str, expected: u64) {
    if !have("mariadb", engine) {
        return;
    }
    let bench = server_bench();
    let cnf = config_file(&bench, cnf_text);
    let mut args = vec![
        "--server",
        "mariadb",
        "--engine",
        engine,
        "--server-config",
        &cnf,
        "--keep-server",
    ];
    args.extend_from_slice(SMALL);
    let outcome = bench.run(&args);
    let run = outcome.result();
    check_results(&run, 2, 5000);
    let pid = run.managed_server.as_ref().unwrap().pid.unwrap();
    let kept = Kept {
        pid,
        signal: "TERM",
    };
    let url = run.environment.dbms.location.clone();
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).expect("connect");
    let v: Option<u64> = c.query_first(format!("SELECT @@{variable}")).unwrap();
    assert_eq!(v, Some(expected), "{variable} from --server-config");
    // The size the DBMS reports agrees with an independent reading (MyRocks: the same SQL over
    // SST files plus memtables, which background compaction may have moved a little since;
    // InnoDB: the tablespace files of the schema on disk).
    let now = if engine == "rocksdb" {
        let n: Option<u64> = c.query_first(ibench::dbms::mysql::ROCKSDB_SIZE).unwrap();
        n.unwrap() as f64
    } else {
        let db: Option<String> = c.query_first("SELECT database()").unwrap();
        let dir = outcome.new_results[0]
            .with_extension("server")
            .join("data")
            .join(db.unwrap());
        ibd_bytes(&dir) as f64
    };
    let reported = run
        .steps
        .last()
        .unwrap()
        .efficiency
        .as_ref()
        .unwrap()
        .db_size
        .dbms_bytes;
    let reported = reported.expect("DBMS-reported size") as f64;
    // Every step, the load included (whose table statistics InnoDB has not yet updated).
    for s in &run.steps {
        let size = s
            .efficiency
            .as_ref()
            .unwrap()
            .db_size
            .dbms_bytes
            .unwrap_or(0);
        assert!(
            size > 100_000,
            "{engine} {}: {size} bytes for 10000 rows",
            s.name
        );
    }
    assert!(
        (reported - now).abs() <= 0.1 * now,
        "{engine}: reported {reported}, SQL now {now}"
    );
    for t in ["pi1", "pi2"] {
        let n: Option<u64> = c.query_first(format!("SELECT count(*) FROM {t}")).unwrap();
        assert_eq!(n, Some(5000), "queue invariant on {t}");
        let e: Option<String> = c
            .exec_first(
                "SELECT engine FROM information_schema.tables WHERE table_schema = database() AND table_name = ?",
                (t,),
            )
            .unwrap();
        assert_eq!(e.unwrap().to_lowercase(), engine);
        let idx: Option<u64> = c
            .exec_first(
                "SELECT count(DISTINCT index_name) FROM information_schema.statistics \
                 WHERE table_schema = database() AND table_name = ? AND index_name <> 'PRIMARY'",
                (t,),
            )
            .unwrap();
        assert_eq!(idx, Some(3));
    }
    drop(c);
    kept.stop();
}

/// Bytes allocated on disk to the `.ibd` files in `dir`.
fn ibd_bytes(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "ibd"))
        .map(|e| e.metadata().unwrap().blocks() * 512)
        .sum()
}

#[test]
fn managed_mariadb_innodb_full_run() {
    managed_mariadb(
        "innodb",
        "[mysqld]\ninnodb_buffer_pool_size = 96M\n",
        "innodb_buffer_pool_size",
        96 << 20,
    );
}

#[test]
fn managed_mariadb_myrocks_full_run() {
    managed_mariadb(
        "rocksdb",
        "[mysqld]\nrocksdb_block_cache_size = 80M\n",
        "rocksdb_block_cache_size",
        80 << 20,
    );
}

#[test]
fn managed_server_is_gone_after_run_and_jemalloc_is_mapped() {
    if !have("postgres", "") {
        return;
    }
    if !Path::new("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2").exists() {
        assert!(
            !ci(),
            "libjemalloc2 is not installed (apt-get install libjemalloc2)"
        );
        eprintln!("skipping: libjemalloc2 not installed");
        return;
    }
    let bench = server_bench();
    let run = bench
        .run(&[
            "--server",
            "postgres",
            "--malloc",
            "jemalloc",
            "--keep-server",
            "--steps",
            "l.i0",
            "--l0-rows",
            "1000",
        ])
        .result();
    let info = run.managed_server.unwrap();
    let pid = info.pid.unwrap();
    let kept = Kept { pid, signal: "INT" };
    let maps = fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    assert!(
        maps.contains("libjemalloc"),
        "jemalloc not mapped in server {pid}"
    );
    kept.stop();

    // Without --keep-server the server is gone when ibench exits.
    let run = bench
        .run(&[
            "--server",
            "postgres",
            "--steps",
            "l.i0",
            "--l0-rows",
            "1000",
        ])
        .result();
    let pid = run.managed_server.unwrap().pid.unwrap();
    assert!(!alive(pid), "server {pid} still running after the run");
    let log = bench.out().join(format!("{}.server.log", run.run_id));
    assert!(log.exists(), "server log kept beside the results");
}

fn assert_failed_cleanly(out: &Outcome, needle: &str, server_dir_marker: &str) {
    assert_ne!(out.code, Some(0), "{}", out.describe());
    assert!(!out.stderr.contains("panicked"), "{}", out.describe());
    assert!(
        out.stderr.contains(needle),
        "expected {needle:?}:\n{}",
        out.describe()
    );
    assert!(
        processes_with(server_dir_marker).is_empty(),
        "a server process is left behind"
    );
}

#[test]
fn managed_server_failures_leave_no_server() {
    if !have("postgres", "") || !have("mariadb", "innodb") {
        return;
    }
    let bench = server_bench();
    let marker = path_str(&bench.out()).to_string();
    // A bad setting: the server does not start; the log tail names the setting.
    let out = bench.run(&[
        "--server",
        "postgres",
        "--server-option",
        "no_such_setting=1",
    ]);
    assert_failed_cleanly(&out, "no_such_setting", &marker);
    let out = bench.run(&[
        "--server",
        "mariadb",
        "--server-option",
        "no_such_variable=1",
    ]);
    assert_failed_cleanly(&out, "no_such_variable", &marker);
    // A DBMS error after the server started (every statement times out after 1 ms): the step
    // fails, ibench exits 1 and the server is stopped all the same.
    let out = bench.run(&[
        "--server",
        "postgres",
        "--server-option",
        "statement_timeout=1",
        "--steps",
        "l.i0",
        "--l0-rows",
        "200000",
        "--l0-batch",
        "5000",
    ]);
    assert_failed_cleanly(&out, "statement timeout", &marker);
    assert_eq!(out.code, Some(1));
}

/// URL of an already-running server from the environment, or the machine's default service.
fn external(var: &str, default: &str, probe: impl Fn(&str) -> bool) -> Option<String> {
    let url = std::env::var(var).unwrap_or_else(|_| default.to_string());
    if probe(&url) {
        return Some(url);
    }
    let msg = format!(
        "no server at {url} (set {var}, or start one: pg_ctlcluster 15 main start / \
         start-stop-daemon --start --background --exec /usr/sbin/mariadbd)"
    );
    if ci() {
        panic!("{msg}");
    }
    eprintln!("skipping: {msg}");
    None
}

#[test]
fn external_servers_by_url() {
    let pg = external(
        "IBENCH_TEST_PG_URL",
        "postgres://postgres@127.0.0.1:5432/test",
        |u| postgres::Client::connect(u, postgres::NoTls).is_ok(),
    );
    let my = external(
        "IBENCH_TEST_MYSQL_URL",
        "mysql://root@127.0.0.1:3306/test",
        |u| {
            mysql::Opts::from_url(u)
                .ok()
                .and_then(|o| mysql::Conn::new(o).ok())
                .is_some()
        },
    );
    let prefix = format!("ibt{}_", std::process::id());
    let targets = [pg, my].into_iter().flatten();
    // Each server twice: prepared statements (default) and plain SQL text.
    for (url, mode) in targets.flat_map(|u| [(u.clone(), "--plain-sql"), (u, "--seed=42")]) {
        let bench = Bench::new();
        let run = bench
            .run(&[
                mode,
                "--url",
                &url,
                "--table-prefix",
                &prefix,
                "--steps",
                "l.i0,l.x,l.i1,qp200",
                "--l0-rows",
                "3000",
                "--l1-rows",
                "600",
                "--query-seconds",
                "2",
            ])
            .result();
        assert_eq!(
            run.config.statements,
            if mode == "--plain-sql" {
                ibench::dbms::StatementMode::Plain
            } else {
                ibench::dbms::StatementMode::Prepared
            }
        );
        let qp = &run.steps[3];
        assert!(qp.queries > 0);
        assert_eq!(run.steps[2].rows_deleted, 2 * 600, "{mode}: l.i1 deletes");
        assert_eq!(qp.point_query_misses, Some(0));
        assert!(
            !run.environment.dbms.settings.is_empty(),
            "settings recorded"
        );
        // Row counts from the server itself, then clean up.
        let table = |i: u32| format!("{prefix}{i}");
        if url.starts_with("postgres") {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            for i in 1..=2 {
                let n: i64 = c
                    .query_one(&format!("SELECT count(*) FROM {}", table(i)), &[])
                    .unwrap()
                    .get(0);
                assert_eq!(n, 3000);
                c.batch_execute(&format!("DROP TABLE {}", table(i)))
                    .unwrap();
            }
        } else {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
            for i in 1..=2 {
                let n: Option<u64> = c
                    .query_first(format!("SELECT count(*) FROM {}", table(i)))
                    .unwrap();
                assert_eq!(n, Some(3000));
                c.query_drop(format!("DROP TABLE {}", table(i))).unwrap();
            }
        }
    }
}

#[test]
fn plain_sql_on_sqlite_keeps_the_queue_and_finds_every_point() {
    let bench = Bench::new();
    let db = bench.db();
    let run = bench
        .run(&[
            "--plain-sql",
            "--path",
            path_str(&db),
            "--steps",
            "l.i0,l.x,l.i1,qr100,qp100",
            "--l0-rows",
            "3000",
            "--l1-rows",
            "600",
            "--query-seconds",
            "1",
        ])
        .result();
    assert_eq!(run.steps[2].rows_deleted, 1200);
    assert!(run.steps[3].queries > 0 && run.steps[4].queries > 0);
    assert_eq!(run.steps[4].point_query_misses, Some(0));
    let conn = crate::common::open_db(&db);
    for t in ["pi1", "pi2"] {
        let (count, _, _) = crate::common::id_range(&conn, t);
        assert_eq!(count, 3000, "{t}");
    }
}

#[test]
fn bad_urls_and_passwords_fail_with_one_line() {
    let bench = Bench::new();
    let secret = "Sup3rS3cretPW";
    // Nothing listens on port 1.
    let out = bench.run(&[
        "--url",
        &format!("postgres://postgres:{secret}@127.0.0.1:1/x"),
        "--steps",
        "l.i0",
    ]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(
        out.stderr
            .contains("cannot connect to postgres://postgres:***@127.0.0.1:1/x"),
        "{}",
        out.describe()
    );
    assert!(!out.stderr.contains(secret) && !out.stdout.contains(secret));
    // A wrong password (MYSQL_PWD) against the running MariaDB, when there is one.
    if let Some(url) = external(
        "IBENCH_TEST_MYSQL_URL",
        "mysql://root@127.0.0.1:3306/test",
        |u| {
            mysql::Opts::from_url(u)
                .ok()
                .and_then(|o| mysql::Conn::new(o).ok())
                .is_some()
        },
    ) {
        let out = bench.run_raw(
            &["run", "--out", path_str(&bench.out()), "-q"],
            &[
                "--url",
                &url.replace("root@", &format!("ibench_nobody:{secret}@")),
                "--steps",
                "l.i0",
            ],
        );
        assert_ne!(out.code, Some(0));
        assert!(out.stderr.contains("Access denied"), "{}", out.describe());
        assert!(!out.stderr.contains(secret) && !out.stdout.contains(secret));
    }
    // A password in the query string is kept apart too (trust auth ignores it).
    if let Some(url) = external(
        "IBENCH_TEST_PG_URL",
        "postgres://postgres@127.0.0.1:5432/test",
        |u| postgres::Client::connect(u, postgres::NoTls).is_ok(),
    ) {
        let prefix = format!("ibq{}_", std::process::id());
        let sep = if url.contains('?') { '&' } else { '?' };
        let with_secret = format!("{url}{sep}password={secret}");
        let out = bench.run(&[
            "--url",
            &with_secret,
            "--table-prefix",
            &prefix,
            "--steps",
            "l.i0",
            "--l0-rows",
            "100",
            "--clients",
            "1",
        ]);
        out.assert_success();
        assert!(!out.stderr.contains(secret) && !out.stdout.contains(secret));
        // Every artifact of the run: results files, the results database, anything else.
        for entry in fs::read_dir(bench.out()).unwrap().flatten() {
            let bytes = fs::read(entry.path()).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains(secret),
                "password in {}",
                entry.path().display()
            );
        }
        assert!(!out.new_results.is_empty());
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute(&format!("DROP TABLE {prefix}1")).unwrap();
    }
    let out = bench.run(&["--url", "postgres://x@127.0.0.1/db", "--engine", "memory"]);
    assert_eq!(out.code, Some(2));
    let out = bench.run(&["--url", "redis://127.0.0.1/"]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("redis"), "{}", out.describe());
    for f in &out.new_results {
        assert!(ibench::results::file::load(f).is_ok());
    }
}

#[test]
fn ctrl_c_stops_the_managed_server_and_keeps_results() {
    if !have("mariadb", "innodb") {
        return;
    }
    let bench = server_bench();
    let marker = path_str(&bench.out()).to_string();
    let child = bench.spawn(&[
        "--server",
        "mariadb",
        "--steps",
        "l.i0,l.x,qr100",
        "--l0-rows",
        "2000",
        "--query-seconds",
        "60",
    ]);
    // Wait until the query step runs: the results file holds l.i0 and l.x.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let loaded = crate::common::json_files(&bench.out())
            .first()
            .and_then(|f| ibench::results::file::load(f).ok());
        if loaded.is_some_and(|r| r.steps.len() >= 2) {
            break;
        }
        assert!(Instant::now() < deadline, "query step never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !processes_with(&marker).is_empty(),
        "server runs during the step"
    );
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.pid().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.finish(Duration::from_secs(90));
    assert_eq!(out.code, Some(130), "{}", out.describe());
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(run.status, ibench::results::model::RunStatus::Interrupted);
    assert_eq!(run.steps.last().unwrap().name, "qr100");
    assert!(
        processes_with(&marker).is_empty(),
        "server left running after Ctrl-C"
    );
}

/// Spawns `ibench run` with a managed PostgreSQL and waits until its results file lists
/// `steps_before` finished steps; returns the running child and the results so far.
fn spawn_until_step(
    bench: &Bench,
    args: &[&str],
    steps_before: usize,
) -> (crate::common::Running, RunResult) {
    let child = bench.spawn(args);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let loaded = crate::common::json_files(&bench.out())
            .first()
            .and_then(|f| ibench::results::file::load(f).ok());
        if let Some(run) = loaded.filter(|r| r.steps.len() >= steps_before) {
            return (child, run);
        }
        assert!(Instant::now() < deadline, "step never started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn lost_connections_are_reopened_and_counted() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let args = [
        "--server",
        "postgres",
        "--steps",
        "l.i0,l.x,qp100",
        "--l0-rows",
        "5000",
        "--query-seconds",
        "8",
    ];
    let (child, run) = spawn_until_step(&bench, &args, 2);
    std::thread::sleep(Duration::from_millis(1_000));
    // Kill every session of ibench's clients (not this one).
    let mut c = postgres::Client::connect(&run.environment.dbms.location, postgres::NoTls).unwrap();
    let killed: i64 = c
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = 'ibench' AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(killed >= 2, "sessions terminated: {killed}");
    drop(c);
    let out = child.finish(Duration::from_secs(120));
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    let qp = &run.steps[2];
    assert_eq!(qp.status, ibench::results::model::RunStatus::Complete);
    assert!(qp.reconnects >= 1, "reconnects counted");
    assert!(qp.retries.values().sum::<u64>() >= 1, "{:?}", qp.retries);
    assert!(qp.queries > 0);
    // The queue invariant is checked after the reconnects and reported.
    let check = qp
        .queue_check
        .as_ref()
        .expect("queue checked after reconnects");
    assert_eq!(check.rows_at_start, 2 * 5000);
    assert_eq!(
        check.rows_expected,
        check.rows_at_start + qp.rows_inserted - qp.rows_deleted
    );
    // A statement the server committed just before it was terminated reports an error;
    // its retry then finds nothing to delete, so the count may differ by such batches, and
    // the summary must say so. Anything beyond that is an accounting bug.
    let retries: u64 = qp.retries.values().sum();
    let off = check.rows_counted.abs_diff(check.rows_expected);
    assert!(off <= retries * 10, "{check:?} retries {:?}", qp.retries);
    assert!(check.tables_with_gaps.is_empty(), "{check:?}");
    if check.ok {
        assert!(out.stdout.contains("queue checked after"), "{}", out.stdout);
    } else {
        assert!(
            out.stdout.contains("queue invariant broken"),
            "{}",
            out.stdout
        );
    }
    assert!(
        run.steps[0].queue_check.is_none(),
        "no check without trouble"
    );
}

#[test]
fn a_killed_server_fails_the_step_quickly_and_keeps_the_results() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let marker = path_str(&bench.out()).to_string();
    let args = [
        "--server",
        "postgres",
        "--steps",
        "l.i0,l.x,qp100",
        "--l0-rows",
        "5000",
        "--query-seconds",
        "60",
        "--max-reconnects",
        "1",
    ];
    let (child, run) = spawn_until_step(&bench, &args, 2);
    std::thread::sleep(Duration::from_millis(1_000));
    let pid = run.managed_server.unwrap().pid.unwrap();
    let out = kill_9_and_finish(child, pid);
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("qp100") && line.contains("client"), "{line}");
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(run.status, ibench::results::model::RunStatus::Failed);
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["l.i0", "l.x", "qp100"]);
    assert_eq!(
        run.steps[2].status,
        ibench::results::model::RunStatus::Failed
    );
    assert!(
        run.steps[2].queries > 0,
        "figures up to the failure are kept"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        processes_with(&marker).is_empty(),
        "server processes left behind"
    );
}

#[test]
fn managed_servers_accept_a_relative_out_directory() {
    // mariadbd resolves a relative --datadir against /usr, not the working directory.
    for server in ["mariadb", "postgres"] {
        if !have(server, "") {
            continue;
        }
        let bench = server_bench();
        let out = bench.run_raw(
            &["run", "--out", "relative-out", "-q"],
            &["--server", server, "--steps", "l.i0", "--l0-rows", "1000"],
        );
        out.assert_success();
        let store = bench.path("relative-out").join("results.db");
        assert!(store.exists(), "{server}: results in the relative --out");
    }
}

#[test]
fn an_external_server_killed_mid_step_fails_the_step_and_keeps_the_results() {
    if !have("mariadb", "") {
        return;
    }
    let bench = server_bench();
    // A server this run did not start (left running by an earlier one), reached by URL.
    let setup = bench
        .run(&[
            "--server",
            "mariadb",
            "--keep-server",
            "--steps",
            "l.i0,l.x",
            "--l0-rows",
            "5000",
        ])
        .result();
    let pid = setup.managed_server.as_ref().unwrap().pid.unwrap();
    let kept = Kept {
        pid,
        signal: "TERM",
    };
    let url = setup.environment.dbms.location.clone();
    let child = bench.spawn(&[
        "--url",
        &url,
        "--steps",
        "qp100",
        "--query-seconds",
        "60",
        "--max-reconnects",
        "1",
    ]);
    std::thread::sleep(Duration::from_secs(3));
    let out = kill_9_and_finish(child, pid);
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", out.describe());
    assert!(
        errors[0].contains("qp100") && errors[0].contains("client"),
        "{}",
        errors[0]
    );
    assert!(!out.stderr.contains("panicked"));
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(run.status, ibench::results::model::RunStatus::Failed);
    let step = &run.steps[0];
    assert_eq!(step.name, "qp100");
    assert_eq!(step.status, ibench::results::model::RunStatus::Failed);
    assert!(step.queries > 0, "figures up to the failure are kept");
    assert!(step.error.as_deref().unwrap_or("").contains("client"));
    // The run is in the store too, as failed.
    let store =
        ibench::results::store::Store::open_existing(&bench.out().join("results.db")).unwrap();
    assert_eq!(store.load(&run.run_id).unwrap().status, run.status);
    std::mem::forget(kept);
}

#[test]
fn a_postgres_results_store_is_shared_by_runs_and_reports() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    // A throwaway PostgreSQL to hold the results (left running by a first run).
    let setup = bench
        .run(&[
            "--server",
            "postgres",
            "--keep-server",
            "--steps",
            "l.i0",
            "--l0-rows",
            "1000",
        ])
        .result();
    let pid = setup.managed_server.as_ref().unwrap().pid.unwrap();
    let kept = Kept { pid, signal: "INT" };
    let store = setup.environment.dbms.location.clone();
    let mut ids = Vec::new();
    for label in ["base", "base", "variant"] {
        let run = bench
            .run(&[
                "--results",
                &store,
                "--steps",
                "l.i0,qp100",
                "--l0-rows",
                "2000",
                "--query-seconds",
                "1",
                "--label",
                label,
            ])
            .result();
        ids.push(run.run_id);
    }
    // The runs are in PostgreSQL, read back by list, show, report and compare.
    let mut c = postgres::Client::connect(&store, postgres::NoTls).unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 3);
    let steps: i64 = c
        .query_one("SELECT count(*) FROM steps", &[])
        .unwrap()
        .get(0);
    assert_eq!(steps, 6);
    let v: i64 = c
        .query_one("SELECT max(version) FROM ibench_schema", &[])
        .unwrap()
        .get(0);
    assert!(v >= 2);
    drop(c);
    let list = bench.run_raw(&["list", "--results", &store], &[]);
    list.assert_success();
    for id in &ids {
        assert!(list.stdout.contains(id.as_str()), "{}", list.stdout);
    }
    let report = bench.run_raw(
        &[
            "report",
            "base",
            "variant",
            "--format",
            "json",
            "--results",
            &store,
        ],
        &[],
    );
    report.assert_success();
    let r: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(r["groups"][0]["runs"].as_array().unwrap().len(), 2);
    let compare = bench.run_raw(&["compare", "base", "variant", "--results", &store], &[]);
    compare.assert_success();

    // A bad password is one line, without the password.
    let url = url::Url::parse(&store).unwrap();
    let bad = format!(
        "postgres://nobody:s3cret-pw@{}:{}/nosuchdb",
        url.host_str().unwrap(),
        url.port().unwrap()
    );
    let out = bench.run_raw(&["list", "--results", &bad], &[]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(
        out.stderr
            .contains("cannot connect to the results database")
    );
    assert!(!out.stderr.contains("s3cret-pw"), "{}", out.stderr);
    kept.stop();
}

#[test]
fn client_connections_authenticate_with_passwords() {
    // The client threads' own wire clients (pgwire, mywire) must log in the way the servers
    // ask: SCRAM-SHA-256 and MD5 on PostgreSQL, mysql_native_password on MariaDB.
    for server in ["postgres", "mariadb"] {
        if !have(server, "") {
            continue;
        }
        let bench = server_bench();
        let setup = bench.run(&[
            "--server",
            server,
            "--keep-server",
            "--steps",
            "l.i0",
            "--l0-rows",
            "1000",
        ]);
        let run = setup.result();
        let kept = Kept {
            pid: run.managed_server.as_ref().unwrap().pid.unwrap(),
            signal: if server == "postgres" { "INT" } else { "TERM" },
        };
        let admin = run.environment.dbms.location.clone();
        let u = url::Url::parse(&admin).unwrap();
        let (host, port, db) = (
            u.host_str().unwrap().to_string(),
            u.port().unwrap(),
            u.path().trim_start_matches('/').to_string(),
        );
        let users: Vec<(&str, &str)> = if server == "postgres" {
            let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
            c.batch_execute(
                "CREATE ROLE scram_user LOGIN PASSWORD 'Scram-pw-7'; \
                 SET password_encryption = 'md5'; \
                 CREATE ROLE md5_user LOGIN PASSWORD 'Md5-pw-7'; \
                 GRANT ALL ON SCHEMA public TO scram_user, md5_user;",
            )
            .unwrap();
            // Password rules first in pg_hba.conf, then the managed server's own.
            let hba = setup.new_results[0]
                .with_extension("server")
                .join("data")
                .join("pg_hba.conf");
            let old = fs::read_to_string(&hba).unwrap();
            fs::write(
                &hba,
                format!(
                    "host all scram_user 127.0.0.1/32 scram-sha-256\n\
                     host all md5_user 127.0.0.1/32 md5\n{old}"
                ),
            )
            .unwrap();
            c.batch_execute("SELECT pg_reload_conf()").unwrap();
            vec![("scram_user", "Scram-pw-7"), ("md5_user", "Md5-pw-7")]
        } else {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()).unwrap();
            c.query_drop(format!(
                "CREATE USER pw_user@'%' IDENTIFIED BY 'Native-pw-7'; \
                 GRANT ALL ON `{db}`.* TO pw_user@'%'"
            ))
            .unwrap();
            vec![("pw_user", "Native-pw-7")]
        };
        for (user, password) in users {
            let url = format!("{}://{user}:{password}@{host}:{port}/{db}", u.scheme());
            let prefix = format!("{user}_");
            let out = bench.run(&[
                "--url",
                &url,
                "--table-prefix",
                &prefix,
                "--steps",
                "l.i0,qp100",
                "--l0-rows",
                "2000",
                "--query-seconds",
                "1",
            ]);
            let r = out.result();
            assert!(r.steps[1].queries > 0, "{server} {user}");
            assert!(!out.stdout.contains(password) && !out.stderr.contains(password));
            // A wrong password is one line, without it.
            let bad = format!("{}://{user}:Wrong-pw-9@{host}:{port}/{db}", u.scheme());
            let out = bench.run(&["--url", &bad, "--steps", "l.i0", "--l0-rows", "100"]);
            assert_ne!(out.code, Some(0), "{server} {user}: {}", out.describe());
            assert!(!out.stderr.contains("Wrong-pw-9"), "{}", out.stderr);
            assert_eq!(
                out.stderr
                    .lines()
                    .filter(|l| l.starts_with("error"))
                    .count(),
                1,
                "{}",
                out.stderr
            );
        }
        kept.stop();
    }
}

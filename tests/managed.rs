//! Managed throwaway servers: PostgreSQL, MariaDB InnoDB and MariaDB MyRocks started by ibench
//! itself (queue invariants, config fragments in effect, LD_PRELOAD, no server left behind after
//! a run, a failure or Ctrl-C). Each check reads the server with its own client, not ibench's
//! account of it.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use ibench::results::model::RunResult;
use mysql::prelude::Queryable;

use crate::common::{
    Bench, Kept, Outcome, alive, ci, have, histogram_len, path_str, processes_with, server_bench,
};

/// Small sizes: the whole default step sequence in a few seconds per server.
const SMALL: &[&str] = &[
    "--l0-rows",
    "5000",
    "--l1-rows",
    "1000",
    "--query-seconds",
    "1",
];

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
    let mut long_steps = 0;
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
            // CPU time comes in 10 ms ticks: the load steps at this size may end inside one
            // tick of every server process on a fast machine (l.i1's 1,000 rows per client
            // took a few tens of ms). The figure is there; steps of half a second or more
            // (the query steps, 1 s each, at least) must show it.
            // The client's and the host's CPU come in the same ticks (l.i1 read 0 client CPU
            // in a clean-clone CI run on a quiet machine).
            let cpu = p.dbms_cpu_us.expect("DBMS CPU per op");
            if s.duration_s >= 0.5 {
                assert!(cpu > 0.0, "{}: DBMS CPU per op", s.name);
                assert!(p.client_cpu_us > 0.0 && p.host_cpu_us > 0.0, "{}", s.name);
                long_steps += 1;
            }
            assert!(p.dbms_cs.unwrap() > 0.0, "{}: context switches", s.name);
            assert!(!e.counters_per_op.is_empty(), "{}: key counters", s.name);
        }
    }
    assert!(long_steps >= 6, "the query steps show the DBMS's CPU");
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
    let url = crate::common::kept_url(&run);
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
    // The stored target has no password: the kept server's is in its credentials file.
    // The request named no URL; the managed server's (without its password) is resolved.
    assert!(run.config.target.url.is_none());
    let resolved_url = run
        .target()
        .url
        .as_ref()
        .expect("the server's URL")
        .to_string();
    assert!(resolved_url.contains("127.0.0.1"), "{resolved_url}");
    let mut target = run.target().clone();
    target.url =
        Some(ibench::dbms::url::ServerUrl::parse(&crate::common::kept_url(&run), "").unwrap());
    let db = ibench::dbms::open(&target).unwrap();
    let mut conn = db.connect_insert_benchmark().unwrap();
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
    let url = crate::common::kept_url(&run);
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
        crate::common::skip("libjemalloc2 not installed");
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
    crate::common::wait_for_steps(&bench.out(), 2);
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
fn ctrl_c_during_server_set_up_exits_130_and_leaves_nothing_running() {
    if !have("postgres", "") {
        return;
    }
    use std::os::unix::process::CommandExt;
    let bench = server_bench();
    let marker = path_str(&bench.out()).to_string();
    // A terminal's Ctrl-C reaches the whole foreground process group: ibench in a group of its
    // own here, signalled as a group, while initdb runs.
    let mut child = crate::common::ibench()
        .args(["run", "--out", &marker, "-q", "--server", "postgres"])
        .args(["--steps", "l.i0", "--l0-rows", "1000"])
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let in_set_up = || {
        processes_with(&marker).into_iter().any(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains("initdb"))
                .unwrap_or(false)
        })
    };
    while !in_set_up() {
        assert!(Instant::now() < deadline, "initdb never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    let group = format!("-{}", child.id());
    assert!(
        std::process::Command::new("kill")
            .args(["-INT", "--", &group])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        !stderr.contains("initdb failed") && !stderr.contains("hint"),
        "an interrupt is not reported as a failure: {stderr}"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        processes_with(&marker).is_empty(),
        "a process is left behind"
    );
}

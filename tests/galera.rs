//! A managed MariaDB Galera cluster (`--galera 3`, clients on every node): the Insert
//! Benchmark and the update microbenchmarks run with connections on every node, and at the
//! end every node holds the same rows (read by the test on each node with its own
//! connection), which are the run's; every node served queries; the cluster's gauges are
//! recorded per node; its group communication is TLS; bad flags exit 2 with one line.

use ibench::results::model::RunResult;
use mysql::prelude::Queryable;

use crate::common::{
    Bench, have, kept_password, mariadb_root, path_str, with_kept_mariadb_cluster,
};

/// A node's connection as root.
fn connect(port: u16, password: &str) -> mysql::Conn {
    let mut c = mariadb_root(port, password);
    // Reads wait until the node applied what the cluster committed before them.
    c.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
    c.query_drop("SET SESSION group_concat_max_len = 1 << 26")
        .unwrap();
    c
}

/// Every node's port, n1 first.
fn ports(run: &RunResult) -> Vec<u16> {
    let location = &run.environment.dbms.location;
    let n1: u16 = location
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let server = run.managed_server.as_ref().unwrap();
    let mut ports = vec![n1];
    ports.extend(server.replicas.iter().map(|r| r.port));
    ports
}

/// Each table of the `ibench` database: its row count and a digest of its rows (`columns`).
fn contents(c: &mut mysql::Conn, columns: &str, order: &str) -> Vec<(String, u64, String)> {
    let tables: Vec<String> = c
        .query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'ibench' \
             ORDER BY 1",
        )
        .unwrap();
    assert!(!tables.is_empty(), "no tables");
    tables
        .into_iter()
        .map(|t| {
            let (n, digest): (u64, String) = c
                .query_first(format!(
                    "SELECT count(*), md5(coalesce(group_concat(concat_ws(':', {columns}) \
                     ORDER BY {order} SEPARATOR ','), '')) FROM ibench.`{t}`"
                ))
                .unwrap()
                .unwrap();
            (t, n, digest)
        })
        .collect()
}

/// Every node holds the same rows (by `columns`); each node's `Com_select` is above zero.
/// Returns n1's contents.
fn same_rows(run: &RunResult, columns: &str, order: &str) -> Vec<(String, u64, String)> {
    let password = kept_password(run);
    let mut nodes: Vec<mysql::Conn> = ports(run).iter().map(|p| connect(*p, &password)).collect();
    assert_eq!(nodes.len(), 3);
    let expected = contents(&mut nodes[0], columns, order);
    for (i, c) in nodes.iter_mut().enumerate() {
        assert_eq!(contents(c, columns, order), expected, "node n{}", i + 1);
        let size: (String, String) = c
            .query_first("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'")
            .unwrap()
            .unwrap();
        assert_eq!(size.1, "3", "n{} sees the cluster", i + 1);
        let selects: (String, String) = c
            .query_first("SHOW GLOBAL STATUS LIKE 'Com_select'")
            .unwrap()
            .unwrap();
        assert!(
            selects.1.parse::<u64>().unwrap() > 0,
            "n{} served no query: the clients are on every node",
            i + 1
        );
        let options: String = c
            .query_first("SELECT @@wsrep_provider_options")
            .unwrap()
            .unwrap();
        assert!(
            options.contains("socket.ssl = YES"),
            "n{}: group communication without TLS",
            i + 1
        );
    }
    expected
}

/// Every step of a second or more has each node's gauges, >= 0.
fn check_gauges(run: &RunResult) {
    let mut timed = 0;
    for s in &run.steps {
        if s.duration_s < 1.5 {
            continue;
        }
        timed += 1;
        let gauges = &s.efficiency.as_ref().expect("efficiency").per_second.gauges;
        for n in 1..=3 {
            for figure in [
                "wsrep_local_recv_queue",
                "wsrep_flow_control_paused_ns_total",
                "wsrep_local_cert_failures_total",
            ] {
                let key = format!("galera.n{n}.{figure}");
                let read: Vec<f64> = gauges
                    .get(&key)
                    .map(|v| v.iter().flatten().copied().collect())
                    .unwrap_or_default();
                assert!(!read.is_empty(), "{}: no {key}", s.name);
                assert!(read.iter().all(|v| *v >= 0.0), "{}: {key} {read:?}", s.name);
            }
        }
    }
    assert!(timed > 0, "no step of 1.5 s or more");
    // Each node on its own: every node applied l.i0's write-sets (CPU and written bytes),
    // and the nodes add up to the DBMS figures.
    let e = run.steps[0].efficiency.as_ref().unwrap();
    let names: Vec<&str> = e.servers.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["n1", "n2", "n3"]);
    for w in &e.servers {
        assert!(w.work.cpu_s > 0.0 && w.work.work.write_bytes > 0, "{w:?}");
    }
    let sum: f64 = e.servers.iter().map(|w| w.work.cpu_s).sum();
    let total = e.dbms.as_ref().unwrap().cpu_s;
    assert!((sum - total).abs() < 1e-6, "nodes {sum} s, DBMS {total} s");
}

/// The Insert Benchmark with its 3 clients' connections spread over 3 nodes.
#[test]
fn galera_insert_benchmark_rows_agree_on_every_node() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let run = bench
        .run(&[
            "--server",
            "mariadb",
            "--keep-server",
            "--galera",
            "3",
            "--steps",
            "l.i0,l.x,l.i1,qp100",
            "--clients",
            "3",
            "--l0-rows",
            "3000",
            "--l1-rows",
            "600",
            "--query-seconds",
            "2",
        ])
        .result();
    with_kept_mariadb_cluster(&run, || {
        let rows = same_rows(&run, "transactionid, price, customerid", "transactionid");
        let total: u64 = rows.iter().map(|r| r.1).sum();
        let inserted: u64 = run.steps.iter().map(|s| s.rows_inserted).sum();
        let deleted: u64 = run.steps.iter().map(|s| s.rows_deleted).sum();
        assert_eq!(
            total,
            inserted - deleted,
            "the cluster holds the run's rows"
        );
        let qp = run.steps.iter().find(|s| s.name == "qp100").unwrap();
        // Dense ids on every node: no point query asked for an id that never existed.
        assert_eq!(qp.point_query_misses, Some(0), "qp100 misses");
        check_gauges(&run);
        let names: Vec<&str> = run
            .managed_server
            .as_ref()
            .unwrap()
            .replicas
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, ["n2", "n3"]);
    });
}

/// The update microbenchmarks with 3 clients on 3 nodes: the same rows everywhere after.
#[test]
fn galera_update_microbenchmarks_rows_agree_on_every_node() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let out = bench.run_raw(
        &["micro", "--out", path_str(&bench.out()), "-q"],
        &[
            "--server",
            "mariadb",
            "--keep-server",
            "--galera",
            "3",
            "--benchmarks",
            "update-index,update-nonindex",
            "--clients",
            "3",
            // A loader per table, one on each node, as soon as the tables are created.
            "--tables",
            "3",
            "--table-rows",
            "2000",
            "--seconds",
            "2",
        ],
    );
    let run = out.result();
    with_kept_mariadb_cluster(&run, || {
        let rows = same_rows(&run, "id, k, c, pad", "id");
        assert!(rows.iter().all(|r| r.1 == 2000), "{rows:?}");
        for s in run.steps.iter().filter(|s| s.name.starts_with("update-")) {
            assert!(s.queries > 0, "{}: no update", s.name);
        }
    });
}

/// `--galera` out of range, with MyRocks, or with PostgreSQL, or with clients on every node
/// sharing one table, `--on-node-failure` on a single server: exit 2, one line, no results.
#[test]
fn bad_galera_flags_exit_2() {
    let bench = Bench::new();
    for (args, says) in [
        (
            &["--server", "mariadb", "--galera", "1"][..],
            "--galera 1 is out of range",
        ),
        (
            &[
                "--server", "mariadb", "--engine", "rocksdb", "--galera", "3",
            ][..],
            "--galera replicates InnoDB tables only",
        ),
        (
            &["--server", "postgres", "--galera", "3"][..],
            "--galera is for mariadb servers",
        ),
        (
            &[
                "--server",
                "mariadb",
                "--galera",
                "3",
                "--table-mode",
                "shared",
                "--clients",
                "3",
            ][..],
            "--table-mode shared with 3 clients spread over the --galera nodes",
        ),
        (
            &["--server", "mariadb", "--on-node-failure", "continue"][..],
            "--on-node-failure continue is for a cluster: add --replicas N or --galera N",
        ),
        (
            &["--on-node-failure", "fail"][..],
            "--on-node-failure fail is for a cluster",
        ),
    ] {
        let out = bench.run(args);
        assert_eq!(out.code, Some(2), "{}", out.describe());
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.describe());
        assert!(out.stderr.contains(says), "{}", out.describe());
        assert!(out.new_results.is_empty());
    }
}

/// Spawns a 3-node cluster running l.i0, l.x and a qp100 of `seconds` with `extra` flags,
/// waits until qp100 has run queries, sends n2 `signal` (`-9`; its pid from the results the
/// run saved after l.x) and waits for ibench to end. Returns the outcome, the run as saved
/// before the kill, and the server processes' marker (the results directory).
fn kill_n2_mid_step(bench: &Bench, extra: &[&str]) -> Killed {
    signal_n2_mid_step(bench, extra, "-9", "8")
}

/// [`kill_n2_mid_step`] with `signal` and a qp100 of `seconds`.
fn signal_n2_mid_step(bench: &Bench, extra: &[&str], signal: &str, seconds: &str) -> Killed {
    let out = bench.out();
    let mut args = vec![
        "--server",
        "mariadb",
        "--galera",
        "3",
        "--steps",
        "l.i0,l.x,qp100",
        "--clients",
        "3",
        "--l0-rows",
        "2000",
        "--query-seconds",
        seconds,
    ];
    args.extend_from_slice(extra);
    let mut child = bench.spawn_raw(
        &["run", "--out", path_str(&out), "--report-interval", "1"],
        &args,
    );
    // The cluster as the run recorded it at its start: with --keep-server, n1 and n3 are
    // stopped by the test whatever happens next (n2 is killed below).
    let saved = || crate::common::saved_managed_run(&out);
    child.wait_for_stderr(std::time::Duration::from_secs(300), |_| saved().is_some());
    let mut kept = Vec::new();
    if extra.contains(&"--keep-server") {
        let started = saved().unwrap();
        kept.push(crate::common::Kept::of(&started, "mariadb"));
        let n3 = started.managed_server.as_ref().unwrap().replicas[1].pid;
        kept.push(crate::common::Kept {
            pid: n3.unwrap(),
            signal: "TERM",
        });
    }
    child.wait_for_stderr(std::time::Duration::from_secs(300), |line| {
        // "[   2.0s]  qp100 q/s 1.2k": a live line of qp100 with queries in it.
        let rest = line.split_once("s] ").map_or("", |(_, r)| r);
        rest.split_whitespace().next() == Some("qp100") && rest.contains("q/s")
    });
    let before = crate::common::json_files(&out)
        .first()
        .and_then(|f| ibench::results::file::load(f).ok())
        .expect("results of the steps before");
    let n2 = &before.managed_server.as_ref().unwrap().replicas[0];
    assert_eq!(n2.name, "n2");
    let killed = std::process::Command::new("kill")
        .args([signal, &n2.pid.unwrap().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let outcome = child.finish(std::time::Duration::from_secs(300));
    // A stopped node is killed by ibench; in case it was not, it goes on to its end.
    let _ = std::process::Command::new("kill")
        .args(["-CONT", &n2.pid.unwrap().to_string()])
        .status();
    Killed {
        outcome,
        before,
        marker: path_str(&out).to_string(),
        _kept: kept,
    }
}

/// What [`kill_n2_mid_step`] saw: ibench's outcome, the run as saved before the kill, the
/// server processes' marker (the results directory), and the nodes a kept cluster left
/// running (stopped when dropped).
struct Killed {
    outcome: crate::common::Outcome,
    before: RunResult,
    marker: String,
    _kept: Vec<crate::common::Kept>,
}

/// The step's record of n2's death: which node, its pid and port, when, how it was seen.
fn check_death(step: &ibench::results::model::StepResult, before: &RunResult) {
    let n2 = &before.managed_server.as_ref().unwrap().replicas[0];
    assert_eq!(step.node_failures.len(), 1, "{:?}", step.node_failures);
    let d = &step.node_failures[0];
    assert_eq!(
        (d.node.as_str(), d.role.as_str(), d.pid, d.port),
        ("n2", "galera node", n2.pid.unwrap(), n2.port)
    );
    assert_eq!(d.step, "qp100");
    assert!(d.at_s > 0.0 && d.at_s <= step.duration_s + 0.5, "{d:?}");
    assert_eq!(d.seen, "process gone");
    assert!(
        d.message.starts_with(&format!(
            "galera node n2 (pid {}, port {}) died ",
            d.pid, d.port
        )),
        "{d:?}"
    );
}

/// n2 killed mid-step, by default: ibench fails the step and the run with a line naming n2,
/// keeps the figures up to then, and leaves nothing of the cluster running.
#[test]
fn galera_node_killed_mid_step_fails_the_run_naming_it() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let Killed {
        outcome: out,
        before,
        marker,
        ..
    } = kill_n2_mid_step(&bench, &[]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", out.describe());
    assert!(
        errors[0].contains("step qp100 failed: galera node n2 (pid"),
        "{}",
        errors[0]
    );
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(run.status, ibench::results::model::RunStatus::Failed);
    let qp = &run.steps[2];
    assert_eq!(qp.status, ibench::results::model::RunStatus::Failed);
    assert!(qp.queries > 0, "figures up to the failure are kept");
    check_death(qp, &before);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !crate::common::processes_with(&marker).is_empty() && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        crate::common::processes_with(&marker),
        Vec::<u32>::new(),
        "cluster processes left behind"
    );
}

/// n2 stopped with SIGSTOP mid-step (its process lives, answers nothing): ibench finds it
/// silent, fails the step and the run with a line saying n2 stopped answering, and leaves
/// nothing of the cluster running.
#[test]
fn galera_node_that_stops_answering_fails_the_run_naming_it() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let Killed {
        outcome: out,
        before,
        marker,
        ..
    } = signal_n2_mid_step(&bench, &[], "-STOP", "60");
    assert_eq!(out.code, Some(1), "{}", out.describe());
    let n2 = &before.managed_server.as_ref().unwrap().replicas[0];
    let says = format!(
        "step qp100 failed: galera node n2 (pid {}, port {}) stopped answering (no answer for ",
        n2.pid.unwrap(),
        n2.port
    );
    assert!(out.stderr.contains(&says), "{}", out.describe());
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(run.steps[2].node_failures[0].seen, "stopped answering");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !crate::common::processes_with(&marker).is_empty() && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        crate::common::processes_with(&marker),
        Vec::<u32>::new(),
        "cluster processes left behind"
    );
}

/// n2 killed mid-step with `--on-node-failure continue`: the step goes on on n1 and n3, qp100
/// records n2's death (and the summary and the report say it), n2 is started again at the
/// step's end and synced, and every node then holds the same rows, which are the run's.
#[test]
fn galera_node_killed_mid_step_continue_goes_on_and_it_rejoins() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let killed = kill_n2_mid_step(&bench, &["--on-node-failure", "continue", "--keep-server"]);
    let (out, before) = (&killed.outcome, &killed.before);
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    let qp = &run.steps[2];
    // n2 started again (and left running by --keep-server): stopped whatever happens below.
    let rejoin = qp.node_failures.first().and_then(|d| d.rejoin.clone());
    let _n2 = rejoin
        .as_ref()
        .and_then(|r| r.pid)
        .map(|pid| crate::common::Kept {
            pid,
            signal: "TERM",
        });
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert_eq!(run.status, ibench::results::model::RunStatus::Complete);
    check_death(qp, before);
    assert!(qp.node_failures[0].outcome.contains("went on"), "{qp:?}");
    let rejoin = rejoin.expect("n2 started again");
    assert!(rejoin.error.is_none(), "{rejoin:?}");
    assert!(rejoin.synced_s.unwrap() > 0.0, "{rejoin:?}");
    assert!(
        crate::common::alive(rejoin.pid.unwrap()),
        "n2 runs again: {rejoin:?}"
    );
    assert!(out.stdout.contains("synced again in"), "{}", out.stdout);
    assert!(
        out.stdout.contains("warning: qp100: galera node n2 (pid"),
        "{}",
        out.stdout
    );
    assert!(qp.queries > 0);
    // The report lists the death too.
    let html = bench.html_report(&bench.out().join("results.db"));
    assert!(
        html.contains("Cluster nodes that died") && html.contains("galera node n2 (pid"),
        "no node failure in the report"
    );
    let password = kept_password(&run);
    let ports = ports(&run);
    let order = "transactionid";
    let columns = "transactionid, price, customerid";
    let n1 = contents(&mut connect(ports[0], &password), columns, order);
    let n2 = contents(&mut connect(ports[1], &password), columns, order);
    let n3 = contents(&mut connect(ports[2], &password), columns, order);
    assert_eq!(n1, n3, "n1 and n3 hold the same rows");
    assert_eq!(n1, n2, "n2 caught up after it rejoined");
    let total: u64 = n1.iter().map(|r| r.1).sum();
    let inserted: u64 = run.steps.iter().map(|s| s.rows_inserted).sum();
    let deleted: u64 = run.steps.iter().map(|s| s.rows_deleted).sum();
    // A batch n2 committed (and replicated) just before it died reached its client as a lost
    // connection, and the retry on another node inserted it again: off by such batches (10
    // rows each in qp100's writer) at most, as the queue check after the step says.
    let retries: u64 = qp.retries.values().sum();
    let off = total.abs_diff(inserted - deleted);
    assert!(
        off <= retries * 10,
        "{total} rows, retries {:?}",
        qp.retries
    );
    let check = qp
        .queue_check
        .as_ref()
        .expect("queue checked after reconnects");
    assert_eq!(
        check.rows_counted, total,
        "the queue check counted the rows"
    );
}

/// An experiment whose setup runs clients on every Galera node over one shared table: exit
/// 2, one line at the setup's `galera` key, nothing run.
#[test]
fn experiment_galera_with_a_shared_table_exits_2() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let out = bench.out();
    let path = bench.path("shared.toml");
    std::fs::write(
        &path,
        "name = \"x\"\n[workload]\nsteps = \"l.i0\"\nclients = 3\ntable_mode = \"shared\"\n\
         [[target]]\nname = \"m\"\ndbms = \"mysql\"\n\
         [[setup]]\nname = \"g\"\ngalera = 3\n",
    )
    .unwrap();
    let file = path_str(&path);
    let o = bench.run_raw(&["experiment", file, "--out", path_str(&out)], &[]);
    assert_eq!(o.code, Some(2), "{}", o.describe());
    let says = format!(
        "{file}:11: target m: table_mode = \"shared\" with 3 clients spread over the galera \
         nodes: two nodes would hand out the same auto-increment ids"
    );
    assert!(o.stderr.contains(&says), "{}", o.describe());
    assert!(!out.exists(), "nothing is written for a bad experiment");
}

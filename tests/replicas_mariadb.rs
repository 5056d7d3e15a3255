//! A managed MariaDB with binlog replicas (`--replicas 2 --sync-replicas 1 --read-from
//! replicas`): every replica holds exactly the primary's rows at the end (read by the test on
//! each node with its own connection), the query steps were served by the replicas (their own
//! `Com_select` counters), r1 acknowledged the primary's commits semi-synchronously (the
//! primary's `Rpl_semi_sync_master_yes_tx`), the lag series and per-step figures are there and
//! >= 0, and a second synchronous replica is refused with one line.

use ibench::results::model::RunResult;
use mysql::prelude::Queryable;

use crate::common::{
    Bench, alive, have, kept_password, mariadb_root, path_str, with_kept_mariadb_cluster,
};

/// A global status variable of a node, as a number.
fn status(c: &mut mysql::Conn, name: &str) -> u64 {
    let row: Option<(String, String)> = c
        .exec_first("SHOW GLOBAL STATUS WHERE variable_name = ?", (name,))
        .unwrap();
    row.map(|r| r.1.parse().unwrap_or(0)).unwrap_or(0)
}

/// Each of ibench's tables: its row count, smallest and largest id, and a digest of the ids.
fn contents(c: &mut mysql::Conn) -> Vec<(String, u64, i64, i64, String)> {
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
            let (n, lo, hi, digest): (u64, i64, i64, String) = c
                .query_first(format!(
                    "SELECT count(*), coalesce(min(transactionid), 0), \
                     coalesce(max(transactionid), 0), md5(coalesce(group_concat(transactionid \
                     ORDER BY transactionid SEPARATOR ','), '')) FROM ibench.`{t}`"
                ))
                .unwrap()
                .unwrap();
            (t, n, lo, hi, digest)
        })
        .collect()
}

/// The replicas' and the primary's rows, the query counters and the lag series of `run`.
fn check(run: &RunResult) {
    let server = run.managed_server.as_ref().expect("a managed server");
    let password = kept_password(run);
    let port = |url: &str| -> u16 {
        url.rsplit(':')
            .next()
            .unwrap()
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut primary = mariadb_root(port(&run.environment.dbms.location), &password);
    // GTID_GROUP_CONCAT not needed: a group_concat of a few thousand ids fits the default.
    primary
        .query_drop("SET SESSION group_concat_max_len = 1 << 24")
        .unwrap();
    let position: String = primary
        .query_first("SELECT @@gtid_binlog_pos")
        .unwrap()
        .unwrap();
    let expected = contents(&mut primary);
    let rows: u64 = expected.iter().map(|c| c.1).sum();
    let inserted: u64 = run.steps.iter().map(|s| s.rows_inserted).sum();
    let deleted: u64 = run.steps.iter().map(|s| s.rows_deleted).sum();
    assert_eq!(rows, inserted - deleted, "the primary holds the run's rows");
    let queries = run
        .steps
        .iter()
        .find(|s| s.name == "qr100")
        .unwrap()
        .queries;
    assert!(queries > 0);
    let mut served = 0;
    assert_eq!(server.replicas.len(), 2);
    for r in &server.replicas {
        assert!(alive(r.pid.unwrap()), "replica {} not running", r.name);
        let mut c = mariadb_root(r.port, &password);
        c.query_drop("SET SESSION group_concat_max_len = 1 << 24")
            .unwrap();
        let waited: Option<i64> = c
            .exec_first("SELECT MASTER_GTID_WAIT(?, 60)", (&position,))
            .unwrap();
        assert_eq!(waited, Some(0), "{} applied the primary's position", r.name);
        assert_eq!(contents(&mut c), expected, "replica {}", r.name);
        let read_only: u64 = c.query_first("SELECT @@read_only").unwrap().unwrap();
        assert_eq!(read_only, 1, "{} is read-only", r.name);
        served += status(&mut c, "Com_select");
    }
    // Each query of qr100 is one SELECT on a replica.
    assert!(
        served >= queries,
        "replicas served {served} < {queries} queries"
    );
    // r1 is the semi-synchronous replica: the primary's commits waited for its acknowledgement.
    assert!(server.replicas[0].sync && !server.replicas[1].sync);
    let acked = status(&mut primary, "Rpl_semi_sync_master_yes_tx");
    assert!(acked > 0, "no commit acknowledged by a semi-sync replica");
    check_lag(run);
}

/// Every step has each replica's figures (>= 0, caught up); the per-second lag gauges exist
/// in the steps of a second or more.
fn check_lag(run: &RunResult) {
    let mut timed = 0;
    for s in &run.steps {
        let gauges = &s.efficiency.as_ref().expect("efficiency").per_second.gauges;
        assert_eq!(s.replication.len(), 2, "{}: replication", s.name);
        for r in &s.replication {
            assert!(r.max_replay_lag_s >= r.p99_replay_lag_s && r.p99_replay_lag_s >= 0.0);
            assert!(r.max_bytes_behind >= 0.0);
            let c = r
                .catch_up_s
                .unwrap_or_else(|| panic!("{} {}: no catch-up", s.name, r.name));
            assert!(c >= 0.0);
            let key = format!("mysql.replica.{}.replay_lag_s", r.name);
            let read: Vec<f64> = gauges
                .get(&key)
                .map(|v| v.iter().flatten().copied().collect())
                .unwrap_or_default();
            assert!(read.iter().all(|v| *v >= 0.0), "{}: {key} {read:?}", s.name);
            if s.duration_s >= 1.5 {
                assert!(!read.is_empty(), "{}: {key} has no reading", s.name);
                assert!(r.readings > 0);
            }
        }
        timed += usize::from(s.duration_s >= 1.5);
    }
    assert!(timed > 0, "no step of 1.5 s or more (qr100 runs 2 s)");
}

/// Two replicas, r1 semi-synchronous, the query steps reading from them.
#[test]
fn mariadb_replicas_hold_the_primarys_rows() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let run = bench
        .run(&[
            "--server",
            "mariadb",
            "--keep-server",
            "--replicas",
            "2",
            "--sync-replicas",
            "1",
            "--read-from",
            "replicas",
            "--steps",
            "l.i0,l.x,l.i1,qr100",
            "--clients",
            "2",
            "--l0-rows",
            "5000",
            "--l1-rows",
            "1000",
            "--query-seconds",
            "2",
        ])
        .result();
    with_kept_mariadb_cluster(&run, || check(&run));
}

/// MariaDB waits for one semi-synchronous replica at most: exit 2, one line, no results.
#[test]
fn a_second_sync_mariadb_replica_is_refused() {
    let bench = Bench::new();
    let out = bench.run(&[
        "--server",
        "mariadb",
        "--replicas",
        "2",
        "--sync-replicas",
        "2",
    ]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.describe());
    assert!(
        out.stderr.contains("waits for at most 1 replica"),
        "{}",
        out.describe()
    );
    assert!(out.new_results.is_empty());
}

/// An experiment whose setups ask for replicas: the cell's managed server has them and every
/// step records their lag; cluster keys that do not fit a target are each one line at their
/// place, exit 2, nothing run.
#[test]
fn experiment_setups_start_replicas_and_check_cluster_keys() {
    if !have("mariadb", "") {
        return;
    }
    let bench = Bench::new();
    let out = bench.out();
    let write = |name: &str, text: &str| {
        let path = bench.path(name);
        std::fs::write(&path, text).unwrap();
        path_str(&path).to_string()
    };
    let bad = write(
        "bad.toml",
        "name = \"x\"\n[workload]\nsteps = \"l.i0\"\n\
         [[target]]\nname = \"pg\"\ndbms = \"postgres\"\n\
         [[setup]]\nname = \"g\"\ngalera = 3\n\
         [[setup]]\nname = \"s\"\nsync_replicas = 1\n\
         [[setup]]\nname = \"r\"\nreplicas = 1\nread_from = \"elsewhere\"\n",
    );
    let o = bench.run_raw(&["experiment", &bad, "--out", path_str(&out)], &[]);
    assert_eq!(o.code, Some(2), "{}", o.describe());
    for (line, says) in [
        (9, "target pg: galera is for mariadb servers, not postgres"),
        (12, "sync_replicas is for replicas: add replicas = N"),
        (16, "read_from \"elsewhere\": expected primary or replicas"),
    ] {
        assert!(
            o.stderr.contains(&format!("{bad}:{line}: {says}")),
            "{}",
            o.describe()
        );
    }
    assert!(!out.exists(), "nothing is written for a bad experiment");

    let good = write(
        "good.toml",
        "name = \"rep\"\n[workload]\nsteps = \"l.i0,qp100\"\nclients = 1\n\
         rows_per_client = 2000\nquery_seconds = 2\n\
         [[target]]\nname = \"m\"\ndbms = \"mysql\"\n\
         [[setup]]\nname = \"async-1\"\nreplicas = 1\n",
    );
    let o = bench.run_raw(&["experiment", &good, "--out", path_str(&out), "-q"], &[]);
    o.assert_success();
    let results: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("report.json"))
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    let run = ibench::results::file::load(&results[0]).unwrap();
    let server = run.managed_server.as_ref().unwrap();
    assert_eq!(
        server.replicas.len(),
        1,
        "the cell's server has its replica"
    );
    assert_eq!(
        run.config.server.as_ref().unwrap().replicas.unwrap().count,
        1
    );
    for s in &run.steps {
        assert_eq!(s.replication.len(), 1, "{}: replication", s.name);
        assert!(s.replication[0].catch_up_s.is_some(), "{}", s.name);
    }
}

/// r1 killed with SIGKILL mid-qp100 with `--on-node-failure continue`: the run completes, r1
/// is started again at qp100's end (its rejoin records the start and the catch-up), and at
/// the end both replicas hold exactly the primary's rows.
#[test]
fn a_mariadb_replica_killed_with_continue_is_started_again_and_catches_up() {
    if !have("mariadb", "") {
        return;
    }
    use crate::common::Kept;
    use std::time::Duration;
    let bench = Bench::new();
    let out = bench.out();
    let mut child = bench.spawn_raw(
        &["run", "--out", path_str(&out), "--report-interval", "1"],
        &[
            "--server",
            "mariadb",
            "--keep-server",
            "--replicas",
            "2",
            "--read-from",
            "replicas",
            "--on-node-failure",
            "continue",
            "--steps",
            "l.i0,l.x,qp100,l.i1",
            "--clients",
            "2",
            "--l0-rows",
            "5000",
            "--l1-rows",
            "2000",
            "--query-seconds",
            "8",
        ],
    );
    let saved = || crate::common::saved_managed_run(&out);
    child.wait_for_stderr(Duration::from_secs(300), |_| saved().is_some());
    let server = saved().unwrap().managed_server.unwrap();
    let kept = |pid: u32| Kept {
        pid,
        signal: "TERM",
    };
    let _primary = kept(server.pid.unwrap());
    let _r2 = kept(server.replicas[1].pid.unwrap());
    child.wait_for_stderr(Duration::from_secs(300), |line| {
        let rest = line.split_once("s] ").map_or("", |(_, r)| r);
        rest.split_whitespace().next() == Some("qp100") && rest.contains("q/s")
    });
    let r1 = &server.replicas[0];
    let killed = std::process::Command::new("kill")
        .args(["-9", &r1.pid.unwrap().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let outcome = child.finish(Duration::from_secs(400));
    let run = ibench::results::file::load(&outcome.new_results[0]).unwrap();
    let qp = run.steps.iter().find(|s| s.name == "qp100").unwrap();
    let rejoin = qp.node_failures.first().and_then(|d| d.rejoin.clone());
    let _r1 = rejoin.as_ref().and_then(|r| r.pid).map(kept);
    assert_eq!(outcome.code, Some(0), "{}", outcome.describe());
    assert_eq!(qp.node_failures.len(), 1, "{:?}", qp.node_failures);
    assert_eq!(
        (
            qp.node_failures[0].node.as_str(),
            qp.node_failures[0].role.as_str()
        ),
        ("r1", "replica")
    );
    let rejoin = rejoin.expect("r1 started again");
    assert!(rejoin.error.is_none(), "{rejoin:?}");
    assert!(rejoin.started_s.unwrap() > 0.0, "{rejoin:?}");
    assert!(rejoin.caught_up_s.is_some(), "{rejoin:?}");
    assert!(alive(rejoin.pid.unwrap()), "r1 runs again: {rejoin:?}");
    eprintln!(
        "r1 started again in {:.1} s, caught up {:.2} s later",
        rejoin.started_s.unwrap(),
        rejoin.caught_up_s.unwrap()
    );
    let password = kept_password(&run);
    let location = &run.environment.dbms.location;
    let primary_port: u16 = location
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut primary = mariadb_root(primary_port, &password);
    primary
        .query_drop("SET SESSION group_concat_max_len = 1 << 24")
        .unwrap();
    let position: String = primary
        .query_first("SELECT @@gtid_binlog_pos")
        .unwrap()
        .unwrap();
    let expected = contents(&mut primary);
    let rows: u64 = expected.iter().map(|c| c.1).sum();
    let inserted: u64 = run.steps.iter().map(|s| s.rows_inserted).sum();
    let deleted: u64 = run.steps.iter().map(|s| s.rows_deleted).sum();
    assert_eq!(rows, inserted - deleted, "the primary holds the run's rows");
    for r in &server.replicas {
        let mut c = mariadb_root(r.port, &password);
        c.query_drop("SET SESSION group_concat_max_len = 1 << 24")
            .unwrap();
        let waited: Option<i64> = c
            .exec_first("SELECT MASTER_GTID_WAIT(?, 60)", (&position,))
            .unwrap();
        assert_eq!(waited, Some(0), "{} applied the primary's position", r.name);
        assert_eq!(contents(&mut c), expected, "replica {}", r.name);
    }
}

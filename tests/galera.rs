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

/// `--galera` out of range, with MyRocks, or with PostgreSQL: exit 2, one line, no results.
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
    ] {
        let out = bench.run(args);
        assert_eq!(out.code, Some(2), "{}", out.describe());
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.describe());
        assert!(out.stderr.contains(says), "{}", out.describe());
        assert!(out.new_results.is_empty());
    }
}

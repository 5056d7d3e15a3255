//! `ibench micro --replicas 1 --read-from replicas` on a managed PostgreSQL: the point
//! queries go to the replica (its own statistics count them), the updates to the primary,
//! the replica had replayed the updates before the reads after them, and holds the primary's
//! rows at the run's end without the test waiting for it.

use ibench::results::model::RunResult;

use crate::common::{Kept, alive, have, kept_password, kept_url, path_str, server_bench};

fn connect(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).expect("connect to a node")
}

/// The kept replica and primary (stopped when dropped, the replica first), with a client each.
struct Nodes {
    replica: (postgres::Client, Kept),
    primary: (postgres::Client, Kept),
}

impl Nodes {
    fn of(run: &RunResult) -> Nodes {
        let server = run.managed_server.as_ref().expect("a managed server");
        let r = &server.replicas[0];
        let pid = r.pid.expect("replica pid");
        assert!(alive(pid), "replica {} not running", r.name);
        let url = format!(
            "postgres://postgres:{}@127.0.0.1:{}/postgres",
            kept_password(run),
            r.port
        );
        let replica = (connect(&url), Kept { pid, signal: "INT" });
        let pid = server.pid.expect("primary pid");
        let primary = (connect(&kept_url(run)), Kept { pid, signal: "INT" });
        Nodes { replica, primary }
    }

    fn stop(self) {
        drop(self.replica.0);
        self.replica.1.stop();
        drop(self.primary.0);
        self.primary.1.stop();
    }
}

/// Index scans of sbtest1 counted by the node itself.
fn idx_scans(c: &mut postgres::Client) -> i64 {
    c.query_one(
        "SELECT coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'sbtest1'",
        &[],
    )
    .unwrap()
    .get(0)
}

/// sbtest1's rows, and a digest of their ids and `k` (what update-index changes).
fn contents(c: &mut postgres::Client) -> (i64, String) {
    let r = c
        .query_one(
            "SELECT count(*), md5(string_agg(id::text || ':' || k::text, ',' ORDER BY id)) \
             FROM sbtest1",
            &[],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

fn step<'r>(run: &'r RunResult, name: &str) -> &'r ibench::results::model::StepResult {
    run.steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

#[test]
fn micro_reads_from_the_replica_after_it_replayed_the_writes() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let out = bench.run_raw(
        &["micro", "--out", path_str(&bench.out()), "-q"],
        &[
            "--server",
            "postgres",
            "--keep-server",
            "--replicas",
            "1",
            "--read-from",
            "replicas",
            "--benchmarks",
            "point-query.pre,update-index,point-query",
            "--tables",
            "1",
            "--table-rows",
            "2000",
            "--clients",
            "2",
            "--seconds",
            "2",
            "--warmup",
            "0",
            "--post-write-pause",
            "1",
        ],
    );
    let run = out.result();
    let mut nodes = Nodes::of(&run);
    // Compared at once: the run's end waited until the replica had replayed every write.
    let primary_rows = contents(&mut nodes.primary.0);
    assert_eq!(primary_rows.0, 2000);
    assert_eq!(contents(&mut nodes.replica.0), primary_rows);

    let reads = ["point-query.pre.c2", "point-query.c2"];
    let queries: u64 = reads.iter().map(|n| step(&run, n).queries).sum();
    let updates = step(&run, "update-index.c2").queries;
    assert!(
        queries > 0 && updates > 0,
        "{queries} reads, {updates} updates"
    );
    for name in reads {
        let s = step(&run, name);
        assert_eq!(s.point_query_misses, Some(0), "{name}");
        assert!(
            s.notes
                .iter()
                .any(|n| n.starts_with("queries read from the replicas (1,")),
            "{name}: {:?}",
            s.notes
        );
    }
    assert!(step(&run, "update-index.c2").notes.is_empty());
    // The replica counted the point queries (one primary-key scan each); the primary counted
    // the updates' scans and not the point queries'.
    let on_replica = idx_scans(&mut nodes.replica.0);
    let on_primary = idx_scans(&mut nodes.primary.0);
    eprintln!(
        "idx_scan: replica {on_replica}, primary {on_primary}; {queries} reads, {updates} updates"
    );
    assert!(
        on_replica as u64 >= queries,
        "replica {on_replica} < {queries}"
    );
    assert!(
        on_primary as u64 >= updates,
        "primary {on_primary} < {updates}"
    );
    assert!(
        (on_primary as u64) < updates + queries / 2,
        "primary {on_primary}: served point queries"
    );
    // The replica replayed the updates at the step's end, and the pause after it.
    let caught = &step(&run, "update-index.c2").replication;
    assert!(caught[0].catch_up_s.is_some(), "{caught:?}");
    let pause = run
        .maintenance
        .iter()
        .find(|m| m.before_step == "point-query.c2")
        .expect("a pause before the read after the writes");
    assert!(
        pause.actions.contains("replicas caught up with it: r1 in "),
        "{}",
        pause.actions
    );
    nodes.stop();
}

/// TPC-C runs every transaction on the primary: `ibench tpcc --read-from replicas` and an
/// experiment's `read_from = "replicas"` for TPC-C cells are one line each, exit 2.
#[test]
fn tpcc_refuses_reads_from_replicas() {
    let bench = crate::common::Bench::new();
    let out = bench.run_raw(
        &["tpcc", "--out", path_str(&bench.out())],
        &[
            "--server",
            "postgres",
            "--replicas",
            "1",
            "--read-from",
            "replicas",
        ],
    );
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.describe());
    assert!(
        out.stderr
            .contains("--read-from replicas: reads from replicas are for the Insert"),
        "{}",
        out.describe()
    );
    let file = bench.path("t.toml");
    std::fs::write(
        &file,
        "name = \"t\"\n[workload]\nkind = \"tpcc\"\n[[target]]\nname = \"pg\"\n\
         dbms = \"postgres\"\n[[setup]]\nname = \"r\"\nreplicas = 1\nread_from = \"replicas\"\n",
    )
    .unwrap();
    let out = bench.run_raw(&["experiment", path_str(&file), "--dry-run"], &[]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.describe());
    assert!(
        out.stderr
            .contains("t.toml:10: read_from = \"replicas\": reads from replicas are for"),
        "{}",
        out.describe()
    );
}

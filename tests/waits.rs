//! Wait events per step (`steps[].wait_events`): a table lock held by the test during l.i1
//! shows as PostgreSQL's `Lock:relation` wait, in the report's top wait events and as the
//! change `ibench compare` names first against the same step without the lock; MariaDB's
//! performance_schema wait summary when a managed server turns it on.

use std::time::{Duration, Instant};

use crate::common::{have, path_str, server_bench};

/// l.i1 by URL on the kept server, long enough to hold a lock inside it.
const L1: &[&str] = &["--steps", "l.i1", "--l1-rows", "40000", "--l1-batch", "10"];

#[test]
fn a_held_table_lock_is_a_lock_wait_on_postgres() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let (load, kept) = bench.keep_server("postgres", &["--steps", "l.i0", "--l0-rows", "20000"]);
    let url = crate::common::kept_url(&load);
    let by_url = |extra: &[&str]| {
        let mut args = vec!["--url", url.as_str()];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };

    // Without the lock: no lock waits.
    let args = by_url(L1);
    let plain = bench
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .result();
    let waits = &plain.steps[0].wait_events;
    assert!(!waits.is_empty(), "no wait events recorded");
    assert!(
        waits.get("Lock:relation").copied().unwrap_or(0.0) < 0.5,
        "{waits:?}"
    );

    // With it: the step's inserts and deletes wait on pi1 for the 2 s the test holds it.
    let args = by_url(&[L1, &["--label", "locked"]].concat());
    let child = bench.spawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let before: i64 = c
        .query_one("SELECT max(transactionid) FROM pi1", &[])
        .unwrap()
        .get(0);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let max: i64 = c
            .query_one("SELECT max(transactionid) FROM pi1", &[])
            .unwrap()
            .get(0);
        if max > before + 1000 {
            break;
        }
        assert!(Instant::now() < deadline, "l.i1 never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut tx = c.transaction().unwrap();
    tx.batch_execute("LOCK TABLE pi1 IN EXCLUSIVE MODE")
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let max: i64 = tx
        .query_one("SELECT max(transactionid) FROM pi1", &[])
        .unwrap()
        .get(0);
    tx.commit().unwrap();
    assert!(
        max < before + 40_000,
        "l.i1 ended while the lock was held: nothing waited"
    );
    let out = child.finish(Duration::from_secs(300));
    let locked = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let waits = &locked.steps[0].wait_events;
    let lock = waits.get("Lock:relation").copied().unwrap_or(0.0);
    // Two sessions (inserter, deleter) blocked for most of 2 s; sampled ten times a second.
    assert!(lock >= 1.5, "Lock:relation {lock} s in {waits:?}");

    // The report's top wait events show it; compare names it first for l.i1.
    let store = bench.out().join("results.db");
    let md = bench.run_raw(
        &[
            "report",
            "--results",
            path_str(&store),
            "--format",
            "md",
            &plain.run_id,
            "locked",
        ],
        &[],
    );
    md.assert_success();
    assert!(md.stdout.contains("l.i1: top wait events"), "{}", md.stdout);
    assert!(md.stdout.contains("| Lock:relation |"), "{}", md.stdout);
    let cmp = bench.run_raw(
        &[
            "compare",
            "--results",
            path_str(&store),
            "--json",
            &plain.run_id,
            "locked",
        ],
        &[],
    );
    cmp.assert_success();
    let doc: serde_json::Value = serde_json::from_str(&cmp.stdout).unwrap();
    let first = &doc["explain"][0];
    assert_eq!(first["name"], "Lock:relation", "{:#}", doc["explain"]);
    assert_eq!(first["kind"], "wait");
    assert_eq!(first["a"], 0.0);
    drop(c);
    kept.stop();
}

#[test]
fn mariadb_performance_schema_waits_per_step() {
    if !have("mariadb", "innodb") {
        return;
    }
    let bench = server_bench();
    let run = bench
        .run(&[
            "--server",
            "mariadb",
            "--server-option",
            "performance_schema=ON",
            "--steps",
            "l.i0,l.i1",
            "--l0-rows",
            "20000",
            "--l1-rows",
            "10000",
        ])
        .result();
    for s in &run.steps {
        let io: f64 = s
            .wait_events
            .iter()
            .filter(|(k, _)| k.starts_with("wait/io/"))
            .map(|(_, v)| v)
            .sum();
        assert!(io > 0.0, "{}: {:?}", s.name, s.wait_events);
    }
}

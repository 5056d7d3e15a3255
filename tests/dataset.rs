//! Prepared datasets: a one-warehouse TPC-C load with `--prepare-only`, saved by `ibench dataset
//! save` and restored into a fresh run by `--from-dataset`, on SQLite and on a managed
//! PostgreSQL. The tables' contents are checksummed with the test's own SQL (every row, in
//! order) before the save and after the restore: byte-identical; a run on the restored data
//! passes the consistency conditions; a dataset of another DBMS, or of another load, is
//! refused with exit 2 in one line; a saved dataset is listed and removed.

use ibench::results::model::RunResult;
use rusqlite::Connection;
use sha2::{Digest, Sha256};

use crate::common::{Bench, Kept, have, kept_url, open_db, path_str, server_bench};

/// sysbench-tpcc's nine tables of set 1.
const TABLES: [&str; 9] = [
    "warehouse1",
    "district1",
    "customer1",
    "history1",
    "orders1",
    "new_orders1",
    "order_line1",
    "stock1",
    "item1",
];

fn ibench(bench: &Bench, cmd: &str, args: &[&str]) -> crate::common::Outcome {
    let out = bench.out();
    bench.run_raw(&[cmd, "--out", path_str(&out), "-q"], args)
}

fn tpcc(bench: &Bench, args: &[&str]) -> RunResult {
    ibench(bench, "tpcc", args).result()
}

/// `ibench dataset ACTION ... --out OUT`, which must succeed; its stdout.
fn dataset(bench: &Bench, args: &[&str]) -> String {
    let mut all = vec!["dataset"];
    all.extend_from_slice(args);
    let out = bench.out();
    all.extend_from_slice(&["--out", path_str(&out)]);
    let outcome = bench.run_raw(&all, &[]);
    outcome.assert_success();
    outcome.stdout
}

/// Every row of every table, in order, hashed (SQLite): one digest per table.
fn sqlite_digests(conn: &Connection) -> Vec<String> {
    TABLES
        .iter()
        .map(|t| {
            let columns = conn
                .prepare(&format!("SELECT * FROM {t} LIMIT 0"))
                .unwrap()
                .column_count();
            let order: Vec<String> = (1..=columns).map(|i| i.to_string()).collect();
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM {t} ORDER BY {}", order.join(", ")))
                .unwrap();
            let mut hasher = Sha256::new();
            let mut rows = stmt.query([]).unwrap();
            let mut n = 0u64;
            while let Some(row) = rows.next().unwrap() {
                for i in 0..columns {
                    let v: rusqlite::types::Value = row.get(i).unwrap();
                    hasher.update(format!("{v:?}|").as_bytes());
                }
                hasher.update(b"\n");
                n += 1;
            }
            assert!(n > 0, "{t} is empty");
            format!("{t} {n} {:x}", hasher.finalize())
        })
        .collect()
}

/// Every row of every table as text, in order, hashed by PostgreSQL: one digest per table.
fn postgres_digests(url: &str) -> Vec<String> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    TABLES
        .iter()
        .map(|t| {
            let row = client
                .query_one(
                    &format!(
                        "SELECT count(*), md5(string_agg(r::text, E'\\n' ORDER BY r::text)) \
                         FROM {t} r"
                    ),
                    &[],
                )
                .unwrap();
            let n: i64 = row.get(0);
            let digest: String = row.get(1);
            assert!(n > 0, "{t} is empty");
            format!("{t} {n} {digest}")
        })
        .collect()
}

/// The scratch SQLite database a run kept.
fn kept_sqlite(run: &RunResult) -> Connection {
    let path = run
        .resolved
        .as_ref()
        .and_then(|r| r.target.path.clone())
        .expect("a scratch database");
    open_db(&path)
}

/// The consistency conditions of the run's last step all passed.
fn check_consistent(run: &RunResult, what: &str) {
    let step = run.steps.last().expect("a step");
    let f = step.tpcc.as_ref().expect("TPC-C figures");
    assert_eq!(f.consistency.len(), 4, "{what}");
    for c in &f.consistency {
        assert!(c.pass, "{what}: condition {} failed", c.condition);
    }
    let count: u64 = f.transactions.values().map(|t| t.count).sum();
    assert!(count > 50, "{what}: {count} transactions");
}

/// `args` refused with exit 2 and one line naming `needle`.
fn refused(bench: &Bench, cmd: &str, args: &[&str], needle: &str) {
    let outcome = ibench(bench, cmd, args);
    assert_eq!(outcome.code, Some(2), "{}", outcome.describe());
    let lines: Vec<&str> = outcome.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", outcome.describe());
    assert!(lines[0].contains(needle), "{}", outcome.describe());
    assert!(outcome.new_results.is_empty(), "{:?}", outcome.new_results);
}

#[test]
fn sqlite_dataset_restores_the_same_rows_and_runs_consistently() {
    let bench = Bench::new();
    let loaded = tpcc(&bench, &["--warehouses", "1", "--prepare-only"]);
    assert_eq!(loaded.steps.len(), 1, "only the load");
    let before = sqlite_digests(&kept_sqlite(&loaded));
    let saved = dataset(&bench, &["save", "w1"]);
    assert!(saved.starts_with("dataset w1: "), "{saved}");
    let listed = dataset(&bench, &["list"]);
    assert!(
        listed.starts_with("w1\t") && listed.contains("sqlite tpcc"),
        "{listed}"
    );

    // Restored alone (nothing to load, nothing to run): the same rows.
    let restored = tpcc(&bench, &["--from-dataset", "w1", "--prepare-only"]);
    assert!(restored.steps.is_empty());
    let r = restored.dataset.as_ref().expect("the restore is recorded");
    assert_eq!(r.name, "w1");
    assert_eq!(r.sha256.len(), 64);
    assert!(r.bytes > 10 << 20 && r.files >= 1, "{r:?}");
    assert!(["copy", "reflink", "mixed"].contains(&r.method.name()));
    assert_eq!(sqlite_digests(&kept_sqlite(&restored)), before);

    // A run on it is as valid, and does not change the dataset.
    let run = tpcc(&bench, &["--from-dataset", "w1", "--seconds", "5"]);
    assert_eq!(run.steps.len(), 1, "no load step");
    assert_eq!(run.config.dataset.as_deref(), Some("w1"));
    check_consistent(&run, "run on the restored dataset");
    // The database's size: its files' lengths and the blocks allocated to them (no
    // compression on the test's file system: about the same).
    let size = &run.steps[0]
        .efficiency
        .as_ref()
        .expect("cost figures")
        .db_size;
    let (files, disk) = (size.files_bytes.unwrap(), size.disk_bytes.unwrap());
    assert!(
        files >= r.bytes / 2,
        "{files} bytes of files, {} restored",
        r.bytes
    );
    assert!(
        disk >= files / 2 && disk <= files * 2,
        "{disk} on disk, {files} in files"
    );
    let again = tpcc(&bench, &["--from-dataset", "w1", "--prepare-only"]);
    assert_eq!(sqlite_digests(&kept_sqlite(&again)), before);

    // Another load, another workload, a missing name: refused before anything starts.
    refused(
        &bench,
        "tpcc",
        &["--from-dataset", "w1", "--warehouses", "2"],
        "dataset w1 holds sqlite tpcc",
    );
    refused(
        &bench,
        "micro",
        &["--from-dataset", "w1"],
        "this run is sqlite micro",
    );
    refused(
        &bench,
        "tpcc",
        &["--from-dataset", "nope"],
        "no dataset nope",
    );
    // A dataset of an embedded DBMS is not a server's: refused before a server starts.
    if have("postgres", "") {
        refused(
            &bench,
            "tpcc",
            &["--server", "postgres", "--from-dataset", "w1"],
            "dataset w1 holds sqlite",
        );
    }
    dataset(&bench, &["rm", "w1"]);
    assert_eq!(dataset(&bench, &["list"]), "");
    refused(&bench, "tpcc", &["--from-dataset", "w1"], "no dataset w1");
}

#[test]
fn postgres_dataset_restores_the_same_rows_and_runs_consistently() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let server = ["--server", "postgres", "--keep-server"];
    let mut args = server.to_vec();
    args.extend(["--warehouses", "1", "--prepare-only"]);
    let loaded = tpcc(&bench, &args);
    let kept = Kept::of(&loaded, "postgres");
    let before = postgres_digests(&kept_url(&loaded));
    // A server still running on its data is not saved.
    let outcome = bench.run_raw(
        &["dataset", "save", "p1", "--out", path_str(&bench.out())],
        &[],
    );
    assert_eq!(outcome.code, Some(2), "{}", outcome.describe());
    assert!(
        outcome.stderr.contains("still runs"),
        "{}",
        outcome.describe()
    );
    kept.stop();
    dataset(&bench, &["save", "p1"]);

    let mut args = server.to_vec();
    args.extend(["--from-dataset", "p1", "--prepare-only"]);
    let restored = tpcc(&bench, &args);
    let kept = Kept::of(&restored, "postgres");
    assert_eq!(
        restored.dataset.as_ref().map(|d| d.name.as_str()),
        Some("p1")
    );
    assert_eq!(postgres_digests(&kept_url(&restored)), before);
    kept.stop();

    let run = tpcc(
        &bench,
        &[
            "--server",
            "postgres",
            "--from-dataset",
            "p1",
            "--seconds",
            "5",
        ],
    );
    check_consistent(&run, "run on the restored PostgreSQL dataset");

    // A dataset of another server version is refused before a server starts on it.
    let manifest = bench.out().join("datasets/p1/manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["version"] = "PostgreSQL 9.6.24 on x86_64-pc-linux-gnu".into();
    std::fs::write(&manifest, doc.to_string()).unwrap();
    refused(
        &bench,
        "tpcc",
        &["--server", "postgres", "--from-dataset", "p1"],
        "dataset p1 was loaded by postgres 9.6.24",
    );

    // A dataset of PostgreSQL is not SQLite's (an embedded one is not a server's either: the
    // SQLite test checks that on its own dataset rather than loading another here).
    refused(
        &bench,
        "tpcc",
        &["--from-dataset", "p1"],
        "dataset p1 holds postgres",
    );
}

//! The run conditions as experiment keys (issue #31): `post_write_pause`, `random_pk_rows`
//! and `no_sampling` of a micro experiment and `scan_clients` of an Insert Benchmark one, on
//! SQLite, each in effect in the stored run; a bad value refused in one line naming the key.

use std::fs;

use ibench::request::WorkloadSpec;
use ibench::results::model::RunResult;

use crate::common::{Bench, json_files, path_str};

/// Writes `text` as `name` in the bench, runs `ibench experiment` on it (which must succeed)
/// and returns its one run.
fn run_experiment(bench: &Bench, name: &str, text: &str) -> RunResult {
    let file = bench.path(name);
    fs::write(&file, text).unwrap();
    let out = bench.out();
    let o = bench.run_raw(
        &["experiment", path_str(&file), "--out", path_str(&out), "-q"],
        &[],
    );
    o.assert_success();
    let runs: Vec<RunResult> = json_files(&out)
        .iter()
        .filter_map(|p| ibench::results::file::load(p).ok())
        .collect();
    assert_eq!(runs.len(), 1, "{}", o.describe());
    runs.into_iter().next().unwrap()
}

const MICRO: &str = r#"name = "conditions"
[workload]
kind = "micro"
benchmarks = "point-query.pre,update-one,point-query,insert-random-pk"
clients = [1]
tables = 1
table_rows = 1000
seconds = 1
post_write_pause = 9
[[target]]
name = "lite"
dbms = "sqlite"
[[setup]]
name = "s"
post_write_pause = 2
random_pk_rows = 400
no_sampling = true
"#;

#[test]
fn micro_keys_take_effect_in_the_run() {
    let bench = Bench::new();
    let run = run_experiment(&bench, "micro.toml", MICRO);
    // The setup's pause wins over the workload's: the post-write pause waited 2 s.
    let WorkloadSpec::Micro(m) = &run.config.workload else {
        panic!("not micro: {:?}", run.config.workload)
    };
    assert_eq!((m.post_write_pause, m.random_pk_rows), (Some(2), 400));
    let post = run
        .maintenance
        .iter()
        .find(|p| p.before_step == "point-query.c1")
        .expect("a post-write pause");
    assert!(post.actions.contains("post-write wait 2s"), "{post:?}");
    assert!((2.0..9.0).contains(&post.duration_s), "{post:?}");
    // prepare filled sbrandpk1, which the step then inserted into.
    let prepare = run.steps.iter().find(|s| s.name == "prepare").unwrap();
    assert_eq!(prepare.rows_inserted, 1000 + 400);
    let inserted = run
        .steps
        .iter()
        .find(|s| s.name == "insert-random-pk.c1")
        .unwrap()
        .queries;
    assert!(inserted > 0);
    // No sampling: each step's cost has only its start and end readings.
    assert!(run.config.no_sampling);
    let quiet = run
        .steps
        .iter()
        .find(|s| s.name == "point-query.c1")
        .and_then(|s| s.efficiency.clone())
        .expect("efficiency");
    assert_eq!(quiet.samples, 2, "start and end only");
}

const INSERT_BENCHMARK: &str = r#"name = "scanners"
[workload]
steps = "l.i0,l.x,scan"
clients = 2
rows_per_client = 5000
[[target]]
name = "lite"
dbms = "sqlite"
[[setup]]
name = "three-scanners"
scan_clients = 3
"#;

#[test]
fn scan_clients_key_sets_the_scanners() {
    let bench = Bench::new();
    let run = run_experiment(&bench, "ib.toml", INSERT_BENCHMARK);
    let scan = run.steps.iter().find(|s| s.name == "scan").unwrap();
    assert_eq!(scan.clients, 3);
    assert!(!scan.scans.is_empty());
    for s in &scan.scans {
        // Three scanners over two clients' tables: each scans both.
        let tables: Vec<usize> = s.scanners.iter().map(|p| p.tables).collect();
        assert_eq!(tables, [2, 2, 2], "{}: {:?}", s.index, s.scanners);
        assert_eq!(s.rows, 3 * 2 * 5000, "{}", s.index);
    }
}

/// A bad value: one `file:line` line naming the key, exit 2, nothing run.
#[test]
fn a_bad_key_value_is_one_line_naming_the_key() {
    let bench = Bench::new();
    for (good, bad, key) in [
        (
            "post_write_pause = 2",
            "post_write_pause = 99999999999",
            "post_write_pause",
        ),
        ("no_sampling = true", "no_sampling = \"yes\"", "no_sampling"),
    ] {
        let text = MICRO.replace(good, bad);
        let file = bench.path("bad.toml");
        fs::write(&file, &text).unwrap();
        let line = text.lines().position(|l| l == bad).unwrap() + 1;
        let o = bench.run_raw(
            &[
                "experiment",
                path_str(&file),
                "--out",
                path_str(&bench.out()),
            ],
            &[],
        );
        assert_eq!(o.code, Some(2), "{}", o.describe());
        let lines: Vec<&str> = o.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", o.stderr);
        assert!(
            lines[0].contains(&format!("bad.toml:{line}")) && lines[0].contains(key),
            "{}",
            o.stderr
        );
        assert!(!bench.out().join("results.db").exists());
    }
}

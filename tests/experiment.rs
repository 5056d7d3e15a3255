//! `ibench experiment`: a tiny matrix end to end on managed PostgreSQL (each variant's setting
//! in effect on its server, the DBMS cache and the db/cache ratio recorded, runs tagged in the
//! store), resuming after a SIGKILL during the second cell on managed MariaDB (the first
//! cell's run kept, one run per cell, no server left behind), and validation (one
//! `file:line` line per problem, exit 2, nothing run).

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::thread::sleep;
use std::time::{Duration, Instant};

use ibench::results::model::RunResult;
use rusqlite::Connection;

use crate::common::{Bench, have_files, ibench, path_str, server_bench};

/// Writes `text` as `name` in the bench and returns its path.
fn write(bench: &Bench, name: &str, text: &str) -> String {
    let path = bench.path(name);
    fs::write(&path, text).unwrap();
    path_str(&path).to_string()
}

type StoreRun = (String, String, u32, String);

/// (id, cell, repeat, status) of every run of `experiment` in the store, read with our own SQL;
/// an error while ibench is still creating or migrating the store.
fn try_store_runs(db: &Path, experiment: &str) -> rusqlite::Result<Vec<StoreRun>> {
    let conn = Connection::open(db)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    let mut stmt = conn.prepare(
        "SELECT id, cell, repeat, status FROM runs WHERE experiment = ?1 ORDER BY started_at",
    )?;
    stmt.query_map([experiment], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })?
    .collect()
}

fn store_runs(db: &Path, experiment: &str) -> Vec<StoreRun> {
    try_store_runs(db, experiment).unwrap()
}

fn load_run(out: &Path, id: &str) -> RunResult {
    ibench::results::file::load(&out.join(format!("{id}.json"))).unwrap()
}

const TINY_PG: &str = r#"
name = "tiny-pg"
repeats = 2
base = "pg/base/glibc/small"

[workload]
steps = "l.i0,l.x,l.i1,qp100"
clients = 1
l1_rows = 500
query_seconds = 1

[[target]]
name = "pg"
dbms = "postgres"

[[config]]
name = "base"

[[config]]
name = "more-work-mem"
extends = "base"
options = { work_mem = "7MB", random_page_cost = 1.5 }

[[setup]]
name = "small"
rows_per_client = 3000
dbms_cache = "24M"
"#;

#[test]
fn tiny_experiment_runs_every_cell_with_its_settings() {
    if !have_files(&["/usr/bin/pg_config"], "postgresql") {
        return;
    }
    let bench = server_bench();
    let file = write(&bench, "tiny.toml", TINY_PG);
    let out = bench.out();
    let o = bench.run_raw(&["experiment", &file, "--out", path_str(&out), "-q"], &[]);
    o.assert_success();
    // One line per cell start, then the report.
    for n in 1..=4 {
        assert!(
            o.stderr.contains(&format!("cell {n}/4: ")),
            "{}",
            o.describe()
        );
    }
    assert!(o.stderr.contains("ETA"), "{}", o.describe());
    assert!(o.stdout.contains("report"), "{}", o.describe());

    let runs = store_runs(&out.join("results.db"), "tiny-pg");
    let cells: Vec<(String, u32)> = runs.iter().map(|r| (r.1.clone(), r.2)).collect();
    // Repeats are interleaved: every config once, then again, in the other order (A B, B A).
    assert_eq!(
        cells,
        [
            ("pg/base/glibc/small".to_string(), 1),
            ("pg/more-work-mem/glibc/small".to_string(), 1),
            ("pg/more-work-mem/glibc/small".to_string(), 2),
            ("pg/base/glibc/small".to_string(), 2),
        ]
    );
    for (id, cell, repeat, status) in &runs {
        assert_eq!(status, "complete", "{id}");
        let run = load_run(&out, id);
        assert_eq!(run.config.label.as_deref(), Some(cell.as_str()));
        let tag = run.experiment.as_ref().expect("experiment tag");
        assert_eq!(
            (
                tag.name.as_str(),
                tag.cell.as_str(),
                tag.repeat,
                tag.repeats
            ),
            ("tiny-pg", cell.as_str(), *repeat, 2)
        );
        assert_eq!(tag.base, "pg/base/glibc/small");
        let settings = &run.environment.dbms.settings;
        // The setup's cache size is the server's shared_buffers, and the ratio is what the
        // server reported for the database after the load over that.
        assert_eq!(
            settings.get("shared_buffers").map(String::as_str),
            Some("24MB")
        );
        let fit = tag.cache.as_ref().expect("db/cache ratio recorded");
        assert_eq!(fit.setting, "shared_buffers");
        assert_eq!(fit.cache_bytes, 24 << 20);
        assert_eq!(fit.step, "l.i1");
        let db = run.steps[2].efficiency.as_ref().unwrap().db_size.dbms_bytes;
        assert_eq!(Some(fit.db_bytes), db);
        assert!((fit.ratio - fit.db_bytes as f64 / (24u64 << 20) as f64).abs() < 1e-9);
        // Each variant's settings are in effect on its own server, and only there.
        let variant = cell.contains("more-work-mem");
        assert_eq!(
            settings.get("work_mem").map(String::as_str),
            Some(if variant { "7MB" } else { "4MB" }),
            "{cell}"
        );
        assert_eq!(
            settings.get("random_page_cost").map(String::as_str),
            Some(if variant { "1.5" } else { "4" }),
            "{cell}"
        );
        assert_eq!(run.steps.len(), 4);
    }
    // Every cell had its own server (fresh data directory).
    let pids: std::collections::BTreeSet<u32> = runs
        .iter()
        .map(|r| load_run(&out, &r.0).managed_server.unwrap().pid.unwrap())
        .collect();
    assert_eq!(pids.len(), 4);

    // The report: the base as given, the variant relative to it, repeats aggregated.
    let json = std::fs::read_to_string(out.join("report.json")).expect("report.json");
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["base"], "pg/base/glibc/small");
    let groups = report["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0]["name"], "pg/base/glibc/small");
    assert_eq!(groups[1]["name"], "pg/more-work-mem/glibc/small");
    assert_eq!(groups[1]["runs"].as_array().unwrap().len(), 2);
    let diffs = groups[1]["differences"].as_array().unwrap();
    assert!(
        diffs
            .iter()
            .any(|d| d["key"] == "setting.work_mem" && d["value"] == "7MB"),
        "{diffs:?}"
    );
    let qp = report["step_reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "qp100")
        .unwrap();
    let rel = qp["groups"][1]["throughput"]["queries_per_s"]["relative"]
        .as_f64()
        .expect("relative value");
    // The runs' own documents: medians (of 2 repeats: the mean) of qp100 queries/s and of
    // the recorded db/cache ratios, per cell.
    let of_cell = |cell: &str, f: &dyn Fn(&RunResult) -> f64| -> f64 {
        let v: Vec<f64> = runs
            .iter()
            .filter(|r| r.1 == cell)
            .map(|r| f(&load_run(&out, &r.0)))
            .collect();
        assert_eq!(v.len(), 2);
        (v[0] + v[1]) / 2.0
    };
    let qps = |r: &RunResult| r.steps[3].queries_per_s;
    let ratio = |r: &RunResult| r.experiment.as_ref().unwrap().cache.as_ref().unwrap().ratio;
    let (base_cell, variant_cell) = ("pg/base/glibc/small", "pg/more-work-mem/glibc/small");
    let expected = of_cell(variant_cell, &qps) / of_cell(base_cell, &qps);
    assert!(
        (rel - expected).abs() < 1e-9,
        "relative {rel} vs {expected}"
    );
    for (g, cell) in [(0, base_cell), (1, variant_cell)] {
        let got = groups[g]["db_cache_ratio"]["median"].as_f64().unwrap();
        let want = of_cell(cell, &ratio);
        assert!(
            (got - want).abs() < 1e-9,
            "{cell}: db/cache {got} vs {want}"
        );
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("relative to pg&#x2f;base&#x2f;glibc&#x2f;small")
            || html.contains("relative to pg/base/glibc/small")
    );
    assert!(
        html.contains("<th>db&#x2f;cache</th>") || html.contains("<th>db/cache</th>"),
        "the report shows the db/cache ratio"
    );
    assert!(out.join("report.md").exists());

    // Running it again runs nothing and reports again.
    let again = bench.run_raw(&["experiment", &file, "--out", path_str(&out), "-q"], &[]);
    again.assert_success();
    assert!(!again.stderr.contains("cell 1/4:"), "{}", again.describe());
    assert_eq!(store_runs(&out.join("results.db"), "tiny-pg").len(), 4);
}

const RESUME: &str = r#"
name = "resume"
repeats = 3

[workload]
steps = ["l.i0", "l.x", "l.i1"]
clients = 1
l1_rows = 40000
l1_batch = 10

[[target]]
name = "innodb"
dbms = "mariadb"

[[setup]]
name = "s"
rows_per_client = 2000
"#;

fn mariadbd_in(dir: &Path) -> Vec<u32> {
    let mut pids = crate::common::processes_with(path_str(dir));
    pids.retain(|&pid| crate::common::alive(pid));
    pids
}

#[test]
fn killed_experiment_resumes_without_redoing_complete_cells() {
    if !have_files(&["/usr/sbin/mariadbd"], "mariadb-server") {
        return;
    }
    let bench = server_bench();
    let file = write(&bench, "resume.toml", RESUME);
    let out = bench.out();
    let db = out.join("results.db");
    let stderr = bench.path("first.stderr");
    let mut child = ibench()
        .args(["experiment", &file, "--out", path_str(&out), "-q"])
        .current_dir(bench.path(""))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    // Wait until the second cell's run is in the store (its server is up and l.i0 saved).
    let start = Instant::now();
    let first_id = loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "ibench exited ({status}) before the second cell: {}",
                fs::read_to_string(&stderr).unwrap_or_default()
            );
        }
        let runs = if db.exists() {
            try_store_runs(&db, "resume").unwrap_or_default()
        } else {
            Vec::new()
        };
        if runs.len() == 2 && runs[1].3 == "running" {
            assert_eq!(runs[0].3, "complete");
            break runs[0].0.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the second cell did not start: {runs:?}"
        );
        sleep(Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL: no clean-up in ibench at all
    child.wait().unwrap();
    // The killed ibench's server dies with it (PR_SET_PDEATHSIG).
    let deadline = Instant::now() + Duration::from_secs(60);
    while !mariadbd_in(&out).is_empty() && Instant::now() < deadline {
        sleep(Duration::from_millis(100));
    }
    assert!(mariadbd_in(&out).is_empty(), "a server outlived ibench");
    let killed = store_runs(&db, "resume");
    assert_eq!(killed.len(), 2);
    assert_eq!(killed[1].3, "running");

    let o = bench.run_raw(&["experiment", &file, "--out", path_str(&out), "-q"], &[]);
    o.assert_success();
    assert!(
        o.stderr.contains("1 complete from before"),
        "{}",
        o.describe()
    );
    assert!(!o.stderr.contains("cell 1/3:"), "{}", o.describe());
    assert!(o.stderr.contains("cell 2/3:"), "{}", o.describe());
    let runs = store_runs(&db, "resume");
    // One run per cell: the first kept as it was, the half-finished one replaced.
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert_eq!(runs[0].0, first_id);
    assert_ne!(runs[1].0, killed[1].0);
    for (i, (id, cell, repeat, status)) in runs.iter().enumerate() {
        assert_eq!(status, "complete", "{id}");
        assert_eq!(
            (cell.as_str(), *repeat),
            ("innodb/default/glibc/s", i as u32 + 1)
        );
        assert_eq!(load_run(&out, id).steps.len(), 3);
    }
    // The dropped attempt's data directory is gone.
    assert!(!out.join(format!("{}.server", killed[1].0)).exists());
    assert!(mariadbd_in(&out).is_empty());
}

#[test]
fn validation_reports_every_problem_with_its_line_and_runs_nothing() {
    let bench = Bench::new();
    let out = bench.out();
    let run = |text: &str| {
        let file = write(&bench, "bad.toml", text);
        let o = bench.run_raw(&["experiment", &file, "--out", path_str(&out)], &[]);
        assert_eq!(o.code, Some(2), "{}", o.describe());
        assert!(!o.stderr.contains("panicked"), "{}", o.describe());
        assert!(!out.exists(), "nothing is written for a bad experiment");
        (file, o.stderr)
    };
    // An unknown key: the parser stops there.
    let (file, err) = run("name = \"x\"\n[[target]]\nname = \"t\"\ndbms = \"sqlite\"\nbogus = 1\n");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("error: {file}:5: unknown field `bogus`")),
        "{err}"
    );
    // A size too large to estimate is a validation error, not a panic.
    let (file, err) = run(
        "name = \"x\"\n[workload]\nsteps = \"qr100\"\nquery_seconds = 18446744073709551615\n\
         [[target]]\nname = \"t\"\ndbms = \"sqlite\"\n",
    );
    assert!(
        err.starts_with(&format!(
            "error: {file}:2: query_seconds 18446744073709551615 is out of range"
        )),
        "{err}"
    );
    // Several problems at once, each on its own line at its own place.
    let (file, err) = run(r#"name = "x"
base = "lite/nope/glibc/default"

[workload]
steps = "l.i0,l.x"

[[target]]
name = "lite"
dbms = "sqlite"

[[config]]
name = "base"
extends = "missing"

[[config]]
name = "p"
options = { no_such_pragma = 1 }
"#);
    let lines: Vec<&str> = err.lines().collect();
    let expect = [
        (13, "config base extends \"missing\", which is not defined"),
        (17, "SQLite has no pragma \"no_such_pragma\""),
        (
            2,
            "base \"lite/nope/glibc/default\" is not a cell of this experiment",
        ),
    ];
    assert_eq!(lines.len(), expect.len(), "{err}");
    for (line, text) in expect {
        let prefix = format!("error: {file}:{line}: {text}");
        assert!(
            lines.iter().any(|l| l.starts_with(&prefix)),
            "{prefix}\n{err}"
        );
    }

    // Settings the server itself rejects, named where they were written.
    if have_files(&["/usr/sbin/mariadbd"], "mariadb-server") {
        let (file, err) = run(r#"name = "x"

[[target]]
name = "m"
dbms = "mariadb"

[[config]]
name = "c"
text = """
innodb_buffer_pool_size = 64M
innodb_no_such_thing = 1
"""
options = { innodb_io_capacity = "lots" }
"#);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines[0].starts_with(&format!(
                "error: {file}:11: mariadb rejects setting innodb_no_such_thing"
            )) || lines[1].starts_with(&format!(
                "error: {file}:11: mariadb rejects setting innodb_no_such_thing"
            )),
            "{err}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with(&format!(
                "error: {file}:13: mariadb rejects setting innodb_io_capacity"
            ))),
            "{err}"
        );
    }
    // MyRocks parses its column family options only when it starts: ibench starts it once.
    if have_files(
        &["/usr/sbin/mariadbd", "/usr/lib/mysql/plugin/ha_rocksdb.so"],
        "mariadb-server mariadb-plugin-rocksdb",
    ) {
        let (file, err) = run(r#"name = "x"

[[target]]
name = "m"
dbms = "mariadb"
engine = "rocksdb"

[[config]]
name = "c"
options = { rocksdb_default_cf_options = "level0_file_num_compaction_triger=2" }
"#);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "error: {file}:10: MyRocks rejects rocksdb_default_cf_options: Invalid default \
                 column family config: level0_file_num_compaction_triger=2"
            )),
            "{err}"
        );
    }
}

#[test]
fn dry_run_lists_cells_and_estimate_without_running() {
    let bench = Bench::new();
    let out = bench.out();
    let file = write(
        &bench,
        "e.toml",
        r#"name = "dry"
repeats = 2
cooldown_seconds = 10

[workload]
steps = "l.i0,l.x,qp100"
query_seconds = 30

[[target]]
name = "lite"
dbms = "sqlite"

[[config]]
name = "base"

[[config]]
name = "small-cache"
options = { cache_size = -1000 }

[[setup]]
name = "s"
rows_per_client = 120000
"#,
    );
    let o = bench.run_raw(
        &["experiment", &file, "--out", path_str(&out), "--dry-run"],
        &[],
    );
    o.assert_success();
    assert!(!out.exists(), "--dry-run writes nothing");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(
        lines[0].starts_with("experiment dry: 4 cells"),
        "{}",
        o.stdout
    );
    assert!(lines[0].contains("base lite/base/glibc/s"), "{}", o.stdout);
    assert!(lines[1].contains("lite/base/glibc/s #1"), "{}", o.stdout);
    assert!(
        lines[2].contains("lite/small-cache/glibc/s #1"),
        "{}",
        o.stdout
    );
    // Round 2 runs the cells the other way round (ABBA).
    assert!(
        lines[3].contains("lite/small-cache/glibc/s #2"),
        "{}",
        o.stdout
    );
    assert!(lines[4].contains("lite/base/glibc/s #2"), "{}", o.stdout);
    assert!(
        o.stdout.contains("run order: round by round"),
        "{}",
        o.stdout
    );
    // 4 cells of 2 x 120k rows at 120k/s (2 s), l.x at 150k/s (1.6 s), 30.5 s of queries and
    // fixed costs, ~35 s each, plus 3 cool-downs of 10 s: about 2m50s.
    let total = lines
        .iter()
        .find(|l| l.starts_with("estimated time: "))
        .unwrap_or_else(|| panic!("{}", o.stdout));
    assert!(total.contains("for 4 cell(s)"), "{total}");
    assert!(total.contains("30s of cool-down"), "{total}");
    assert!(o.stdout.contains("estimate: rows per step"), "{}", o.stdout);
    // --scale shrinks it.
    let small = bench.run_raw(
        &[
            "experiment",
            &file,
            "--out",
            path_str(&out),
            "--dry-run",
            "--scale",
            "0.1",
        ],
        &[],
    );
    small.assert_success();
    assert!(small.stdout.contains("12000 rows"), "{}", small.stdout);
    assert!(small.stdout.contains("scale 0.1"), "{}", small.stdout);
}

#[test]
fn an_experiment_in_a_postgres_store_knows_its_complete_cells() {
    if !have_files(&["/usr/bin/pg_config"], "postgresql") {
        return;
    }
    let bench = server_bench();
    // A throwaway PostgreSQL to hold the results, left running by a first run.
    let (setup, _server) = bench.keep_server("postgres", &["--steps", "l.i0", "--l0-rows", "500"]);
    let store = crate::common::kept_url(&setup);
    let file = write(
        &bench,
        "lite.toml",
        r#"name = "lite"
repeats = 2

[workload]
steps = "l.i0"

[[target]]
name = "lite"
dbms = "sqlite"

[[setup]]
name = "s"
rows_per_client = 500
"#,
    );
    let out = bench.path("exp");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "experiment",
            file.as_str(),
            "--out",
            path_str(&out),
            "--results",
            store.as_str(),
            "-q",
        ];
        a.extend_from_slice(extra);
        bench.run_raw(&a, &[])
    };
    args(&[]).assert_success();
    let mut c = postgres::Client::connect(&store, postgres::NoTls).unwrap();
    let ids: Vec<String> = c
        .query(
            "SELECT id FROM runs WHERE experiment = 'lite' AND status = 'complete' \
             ORDER BY repeat",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ids.len(), 2);
    // The dry run reads the same store: both cells complete, nothing left to run.
    let dry = args(&["--dry-run"]);
    dry.assert_success();
    for id in &ids {
        assert!(
            dry.stdout.contains(&format!("complete: {id}")),
            "{}",
            dry.describe()
        );
    }
    assert!(
        dry.stdout.contains("for 0 cell(s) to run"),
        "{}",
        dry.describe()
    );
}

const TINY_MICRO: &str = r#"
name = "tiny-micro"
[workload]
kind = "micro"
benchmarks = "point-query,update-index"
clients = [1, 2]
tables = 1
table_rows = 800
seconds = 1
[[target]]
name = "lite"
dbms = "sqlite"
[[config]]
name = "normal"
[[config]]
name = "full"
options = { synchronous = "FULL" }
[[setup]]
name = "s"
dbms_cache = "2M"
"#;

#[test]
fn a_micro_experiment_runs_its_cells_and_reports_them_by_benchmark() {
    let bench = Bench::new();
    let file = write(&bench, "micro.toml", TINY_MICRO);
    let out = bench.out();
    let o = bench.run_raw(&["experiment", &file, "--out", path_str(&out), "-q"], &[]);
    o.assert_success();
    let runs = store_runs(&out.join("results.db"), "tiny-micro");
    let cells: Vec<&str> = runs.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(cells, ["lite/normal/glibc/s", "lite/full/glibc/s"]);
    for (id, cell, _, status) in &runs {
        assert_eq!(status, "complete", "{id}");
        let run = load_run(&out, id);
        let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "prepare",
                "point-query.c1",
                "point-query.c2",
                "update-index.c1",
                "update-index.c2"
            ],
            "{cell}"
        );
        // Each config's pragmas, and the setup's cache, in effect.
        let settings = &run.environment.dbms.settings;
        let full = cell.contains("full");
        assert_eq!(
            settings["synchronous"],
            if full { "2" } else { "1" },
            "{cell}"
        );
        assert_eq!(settings["cache_size"], "-2048", "{cell}");
        let fit = run.experiment.as_ref().unwrap().cache.as_ref().unwrap();
        assert_eq!(fit.step, "prepare");
    }
    // The report: the microbenchmarks' tables, a row per benchmark and client count.
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Microbenchmarks"), "{md}");
    assert!(md.contains("| update-index | 2 |"), "{md}");
    // Resumed: nothing is run again.
    let again = bench.run_raw(&["experiment", &file, "--out", path_str(&out), "-q"], &[]);
    again.assert_success();
    assert_eq!(store_runs(&out.join("results.db"), "tiny-micro").len(), 2);
}

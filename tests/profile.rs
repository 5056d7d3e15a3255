//! `--profile`: a flame graph per step of the DBMS's processes (a managed PostgreSQL's
//! backends; ibench's own process for SQLite), drawn from `perf record -g`, holding the DBMS's
//! own function names; without perf, one line and the run goes on.

use std::fs;
use std::path::Path;

use ibench::results::model::RunResult;

use crate::common::{Bench, have, have_files, path_str, server_bench};

/// Each step's flame graph, read; the folded stacks exist beside it.
fn flame_graphs(run: &RunResult, results: &Path) -> Vec<(String, String)> {
    let dir = results.parent().unwrap();
    run.steps
        .iter()
        .map(|s| {
            let rel = s
                .profile
                .as_ref()
                .unwrap_or_else(|| panic!("{}: no flame graph", s.name));
            let svg = dir.join(rel);
            assert!(svg.with_extension("folded").is_file(), "{}", svg.display());
            let text = fs::read_to_string(&svg).unwrap();
            assert!(text.starts_with("<?xml") && text.contains("<svg"), "{rel}");
            (s.name.clone(), text)
        })
        .collect()
}

#[test]
fn postgres_profile_has_postgres_functions() {
    if !have("postgres", "") || !have_files(&["/usr/bin/perf"], "linux-perf") {
        return;
    }
    let bench = server_bench();
    let out = bench.run(&[
        "--server",
        "postgres",
        "--profile",
        "--steps",
        "l.i0,l.i1",
        "--l0-rows",
        "50000",
        "--l1-rows",
        "50000",
    ]);
    let run = out.result();
    assert!(!out.stderr.contains("--profile:"), "{}", out.stderr);
    for (step, svg) in flame_graphs(&run, &out.new_results[0]) {
        // The backends' executor and WAL: PostgreSQL's own functions, by name.
        for f in ["PostgresMain", "ExecInsert"] {
            assert!(svg.contains(f), "{step}: no {f} in the flame graph");
        }
    }
}

#[test]
fn sqlite_profile_is_of_ibench_itself() {
    if !have_files(&["/usr/bin/perf"], "linux-perf") {
        return;
    }
    let bench = Bench::new();
    let out = bench.run(&["--profile", "--steps", "l.i0", "--l0-rows", "200000"]);
    let run = out.result();
    let graphs = flame_graphs(&run, &out.new_results[0]);
    // SQLite runs inside ibench: its virtual machine and B-tree code are in the graph.
    assert!(
        graphs[0].1.contains("sqlite3VdbeExec"),
        "no sqlite3VdbeExec"
    );
    assert!(
        graphs[0].1.contains("sqlite3BtreeInsert"),
        "no sqlite3BtreeInsert"
    );
    // A second run: compare draws B against A per step, and the report links both graphs.
    let second = bench.run(&["--profile", "--steps", "l.i0", "--l0-rows", "200000"]);
    let b = second.result();
    let store = bench.out().join("results.db");
    let diffs = bench.path("diffs");
    let cmp = bench.run_raw(
        &[
            "compare",
            "--results",
            path_str(&store),
            "--flame-graphs",
            path_str(&diffs),
            &run.run_id,
            &b.run_id,
        ],
        &[],
    );
    cmp.assert_success();
    let diff = fs::read_to_string(diffs.join("l.i0.diff.svg")).expect("differential graph");
    assert!(
        diff.contains("sqlite3VdbeExec"),
        "no sqlite3VdbeExec in the differential"
    );
    let html = bench.html_report(&store);
    for r in [&run, &b] {
        // (HTML-escaped: `/` is `&#x2f;` in the attribute.)
        let path = r.steps[0].profile.as_ref().unwrap().replace('/', "&#x2f;");
        let link = format!("href=\"{path}\"");
        assert!(html.contains(&link), "no {link} in the report");
    }
}

#[test]
fn without_perf_the_run_goes_on_and_says_so_once() {
    let bench = Bench::new();
    let output = crate::common::ibench()
        .env("IBENCH_PERF", bench.path("no-such-perf"))
        .args(["run", "--out", path_str(&bench.out()), "-q", "--profile"])
        .args([
            "--steps",
            "l.i0,l.i1",
            "--l0-rows",
            "20000",
            "--l1-rows",
            "5000",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("--profile")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("cannot run perf") && lines[0].contains("without profiles"),
        "{}",
        lines[0]
    );
    let results = crate::common::json_files(&bench.out());
    let run = ibench::results::file::load(&results[0]).unwrap();
    assert!(run.steps.iter().all(|s| s.profile.is_none()));
    assert_eq!(run.steps.len(), 2);
}

//! `ibench compare` on real runs: A/A comparisons (the same configuration on both sides, on
//! SQLite and on a managed PostgreSQL) call almost nothing a change; an injected change (a
//! server-side sleep in every commit) is found, with an interval that covers the change as
//! measured by other runs; one run a side says that only noise within runs counts.
//! The statistics themselves are unit-tested in src/report/compare/stats.rs.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use ibench::report::compare::{self, Comparison, Options, Unit};
use ibench::results::model::{RunResult, StepResult};
use serde_json::Value;

use crate::common::{Bench, Outcome, compare_row as row, have, path_str};

/// Small sizes: a few seconds per run.
const SMALL: &[&str] = &["--l0-rows", "20000", "--l1-rows", "4000", "--clients", "1"];

fn cmd(bench: &Bench, args: &[&str]) -> Outcome {
    let store = bench.out().join("results.db");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--results", path_str(&store)]);
    bench.run_raw(&all, &[])
}

fn json(bench: &Bench, a: &str, b: &str) -> Value {
    let out = cmd(bench, &["compare", a, b, "--json"]);
    out.assert_success();
    serde_json::from_str(&out.stdout).expect("compare JSON")
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The runs' own figure for `step`, read from their results.
fn figure<'a>(
    runs: impl IntoIterator<Item = &'a RunResult>,
    step: &str,
    get: fn(&StepResult) -> f64,
) -> Vec<f64> {
    runs.into_iter()
        .map(|r| get(r.steps.iter().find(|s| s.name == step).unwrap()))
        .collect()
}

/// Every way of splitting `runs` into two sides of at least `min` runs (each split once).
/// They share their runs, so they are not independent trials, but together they weigh every
/// run alike, where one split may happen to put the runs of a busier minute on one side.
fn splits(runs: &[RunResult], min: usize) -> Vec<(Vec<RunResult>, Vec<RunResult>)> {
    let n = runs.len();
    let mut out = Vec::new();
    for mask in 0u32..(1 << n) {
        // Run 0 always on side A: a split and its mirror are one trial.
        let k = mask.count_ones() as usize;
        if mask & 1 == 0 || k < min || n - k < min {
            continue;
        }
        let (a, b): (Vec<_>, Vec<_>) = (0..n).partition(|i| mask & (1 << i) != 0);
        out.push((
            a.iter().map(|&i| runs[i].clone()).collect(),
            b.iter().map(|&i| runs[i].clone()).collect(),
        ));
    }
    out
}

/// Makes `bench.out()` a link to a fresh directory on /dev/shm, removed when the returned
/// guard drops; `None` (and a normal directory) without /dev/shm.
fn out_on_tmpfs(bench: &Bench) -> Option<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("ibench-compare-")
        .tempdir_in("/dev/shm")
        .ok()?;
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).ok()?;
    std::os::unix::fs::symlink(dir.path(), bench.out()).ok()?;
    Some(dir)
}

/// The command's JSON has the rows, verdicts and p-values of `lib`.
fn same_as_library(cli: &Value, lib: &Comparison) {
    let rows = cli["rows"].as_array().unwrap();
    assert_eq!(rows.len(), lib.rows.len(), "{cli}");
    assert_eq!(cli["tests"], lib.tests);
    for (c, l) in rows.iter().zip(&lib.rows) {
        assert_eq!(
            (&c["step"], &c["key"]),
            (&Value::from(l.step.as_str()), &Value::from(l.key.as_str()))
        );
        assert_eq!(
            c["verdict"],
            serde_json::to_value(l.verdict).unwrap(),
            "{c}"
        );
        // The store and the results file may round a figure in its last digit.
        let p = l.test.as_ref().map(|t| t.p);
        match (c["test"]["p"].as_f64(), p) {
            (Some(x), Some(y)) => assert!((x - y).abs() < 1e-9, "{c}: p {y}"),
            (x, y) => assert_eq!(x, y, "{c}"),
        }
    }
}

/// Tested rows and those called a change, over comparisons.
fn false_changes(cmps: &[Comparison]) -> (usize, Vec<String>) {
    let tested = cmps.iter().map(|c| c.tests).sum();
    let changes = cmps
        .iter()
        .flat_map(|c| &c.rows)
        .filter(|r| r.verdict.is_significant())
        .map(|r| format!("{} {}", r.step, r.text))
        .collect();
    (tested, changes)
}

/// A/A on SQLite: four runs of one configuration against four, through the command and
/// over every split of the eight with at least three a side; one run a side says that only
/// noise within runs counts.
#[test]
fn sqlite_a_a_calls_nothing_a_change() {
    let bench = Bench::new();
    let runs: Vec<RunResult> = (0..8)
        .map(|i| {
            // Interleaved, so that a machine getting busier or quieter touches both alike.
            let label = if i % 2 == 0 { "a" } else { "a2" };
            let mut args = vec![
                "--steps",
                "l.i0,l.x,l.i1,l.i2,qr100",
                "--query-seconds",
                "4",
                "--label",
                label,
            ];
            args.extend_from_slice(SMALL);
            bench.run(&args).result()
        })
        .collect();

    let aa = json(&bench, "a", "a2");
    assert_eq!(
        (
            aa["unit"].as_str(),
            aa["runs_a"].as_u64(),
            aa["runs_b"].as_u64()
        ),
        (Some("runs"), Some(4), Some(4))
    );
    assert!(aa["tests"].as_u64().unwrap() >= 12, "{aa}");
    // The command says what the library says for the same runs (one of the splits below).
    let (side_a, side_a2): (Vec<RunResult>, Vec<RunResult>) = (
        runs.iter().step_by(2).cloned().collect(),
        runs.iter().skip(1).step_by(2).cloned().collect(),
    );
    same_as_library(
        &aa,
        &compare::compare(&side_a, &side_a2, &Options::default()),
    );
    // The background writer is rate-limited: at the rate the runs recorded, and where every
    // run kept to its target (a loaded machine can make one fall short), no change, exactly.
    let writer = row(&aa, "qr100", "inserts_per_s");
    let rates = figure(&runs, "qr100", |s| s.inserts_per_s);
    // Of the runs judged: one a neighbour disturbed in qr100 is left out when two or more a
    // side remain (other tests run beside this one).
    let left_out = |id: &str| {
        aa["left_out"]
            .as_array()
            .is_some_and(|v| v.iter().any(|e| e[0] == "qr100" && e[1] == id))
    };
    let side_a: Vec<f64> = runs
        .iter()
        .zip(&rates)
        .step_by(2)
        .filter(|(r, _)| !left_out(&r.run_id))
        .map(|(_, v)| *v)
        .collect();
    assert!(
        (writer["test"]["mean_a"].as_f64().unwrap() / mean(&side_a) - 1.0).abs() < 1e-9,
        "{writer} vs {rates:?}"
    );
    if rates.iter().all(|&r| r == rates[0]) {
        assert_eq!(writer["verdict"], "no_change", "{writer}");
        assert_eq!(writer["ci_pct"], serde_json::json!([0.0, 0.0]), "{writer}");
    }
    let out = cmd(&bench, &["compare", "a", "a2"]);
    out.assert_success();
    for says in [
        "Unit: the run",
        "Benjamini-Hochberg",
        "noise threshold +-3%",
    ] {
        assert!(out.stdout.contains(says), "{says}: {}", out.stdout);
    }

    // Every split with at least 3 runs a side, not only the interleaved one: some put the
    // runs of a busier minute on one side, as labelling runs a, a, b, b does.
    let cmps: Vec<Comparison> = splits(&runs, 3)
        .into_iter()
        .map(|(x, y)| compare::compare(&x, &y, &Options::default()))
        .collect();
    assert_eq!(cmps.len(), 91);
    assert!(cmps.iter().all(|c| c.unit == Unit::Runs));
    let (tested, changes) = false_changes(&cmps);
    assert!(tested >= 91 * 12, "only {tested} tests");
    assert!(
        changes.len() * 100 <= tested,
        "{} of {tested} A/A tests called a change: {changes:#?}",
        changes.len()
    );

    // One run a side: the seconds are the samples, and the output says so.
    let (one_a, one_b) = (&runs[0].run_id, &runs[1].run_id);
    let one = json(&bench, one_a, one_b);
    assert_eq!(one["unit"], "seconds");
    let writer = row(&one, "qr100", "inserts_per_s");
    assert!(writer["test"]["n_a"].as_u64().unwrap() >= 3, "{writer}");
    let out = cmd(&bench, &["compare", one_a, one_b]);
    out.assert_success();
    assert!(
        out.stdout
            .contains("ONLY NOISE WITHIN RUNS IS ACCOUNTED FOR")
            && out.stdout.contains("at least 3 times"),
        "{}",
        out.stdout
    );
    // A step shorter than 3 full seconds has no samples: it says what would make it testable.
    let short = row(&one, "l.i0", "inserts_per_s");
    assert_eq!(short["verdict"], "untestable", "{short}");
    assert!(
        short["note"].as_str().unwrap().contains("repeated runs"),
        "{short}"
    );
}

/// Managed PostgreSQL, a new server per run. A/A: five runs against three, and every split
/// of the eight with at least three a side. Then a server-side sleep: `commit_delay` with
/// `commit_siblings=0` makes every commit sleep 20 ms before its WAL flush, so l.i0 (100
/// INSERTs of 100 rows) takes 2 s longer; it must come out worse, with an interval covering
/// the change measured by other runs.
#[test]
fn managed_postgres_a_a_calls_nothing_a_change_and_a_server_side_sleep_is_found() {
    if !have("postgres", "") {
        return;
    }
    // Exclusive: the sleep must be found against this machine's noise, not other tests'.
    let bench = Bench::exclusive();
    // Tempdirs are 0700; the server's user must enter the managed server's directory.
    fs::set_permissions(bench.path(""), fs::Permissions::from_mode(0o755)).unwrap();
    // The servers' data on tmpfs where there is one: on a disk shared with other work, the
    // fsync of each commit took from 1 to 12 ms from one run to the next, noise that only
    // dozens of runs would see through.
    let _tmpfs = out_on_tmpfs(&bench);
    let run = |label: &str, steps: &str, sleep: bool| -> RunResult {
        let mut args = vec![
            "--server",
            "postgres",
            "--steps",
            steps,
            "--label",
            label,
            "--l0-rows",
            "10000",
            "--l1-rows",
            "4000",
            "--clients",
            "1",
        ];
        if sleep {
            args.extend([
                "--server-option",
                "commit_delay=20000",
                "--server-option",
                "commit_siblings=0",
            ]);
        }
        bench.run(&args).result()
    };
    // a (5 runs) and d (sleep, 3) are compared; b (3) and d2 (sleep, 2) measure the change
    // apart. Interleaved, so that a machine getting busier or quieter touches all alike.
    let (mut a, mut b, mut d, mut d2) = (vec![], vec![], vec![], vec![]);
    for round in 0..5 {
        a.push(run("a", "l.i0,l.x,l.i1", false));
        if round < 3 {
            d.push(run("d", "l.i0", true));
            b.push(run("b", "l.i0,l.x,l.i1", false));
        }
        if round < 2 {
            d2.push(run("d2", "l.i0", true));
        }
    }

    let aa = json(&bench, "a", "b");
    assert_eq!(aa["unit"], "runs");
    // The server's own CPU is measured (a separate process) and compared.
    row(&aa, "l.i1", "dbms_cpu_us_per_op");
    same_as_library(&aa, &compare::compare(&a, &b, &Options::default()));
    let base: Vec<RunResult> = a.iter().chain(&b).cloned().collect();
    let cmps: Vec<Comparison> = splits(&base, 3)
        .into_iter()
        .map(|(x, y)| compare::compare(&x, &y, &Options::default()))
        .collect();
    assert_eq!(cmps.len(), 91);
    let (tested, changes) = false_changes(&cmps);
    assert!(tested >= 91 * 6, "only {tested} tests");
    assert!(
        changes.len() * 100 <= tested,
        "{} of {tested} A/A tests called a change: {changes:#?}",
        changes.len()
    );

    // The sleep: only l.i0 is in both.
    let cmp = json(&bench, "a", "d");
    let r = row(&cmp, "l.i0", "inserts_per_s");
    assert!(crate::common::calls(r, "worse"), "{r}");
    // The means are the runs' own figures (of the runs judged: a run a neighbour disturbed in
    // l.i0 is left out of it when two or more a side remain, and named).
    let ins = |s: &StepResult| s.inserts_per_s;
    let judged = |runs: &[RunResult]| -> Vec<RunResult> {
        let out = |id: &str| {
            cmp["left_out"]
                .as_array()
                .is_some_and(|v| v.iter().any(|e| e[0] == "l.i0" && e[1] == id))
        };
        runs.iter().filter(|x| !out(&x.run_id)).cloned().collect()
    };
    let t = &r["test"];
    let close = |x: &Value, want: f64| (x.as_f64().unwrap() / want - 1.0).abs() < 1e-9;
    assert!(
        close(&t["mean_a"], mean(&figure(&judged(&a), "l.i0", ins))),
        "{r}"
    );
    assert!(
        close(&t["mean_b"], mean(&figure(&judged(&d), "l.i0", ins))),
        "{r}"
    );
    // The same change measured by other runs (b against d2, made in the same rounds): its own
    // interval meets this one. (Its point estimate alone missed a 99% interval of -97.8% to
    // -97.6% by 0.1 point on a quiet machine: the other runs' estimate has its noise too.)
    let other = compare::compare(&b, &d2, &Options::default());
    let other = other.row("l.i0", "inserts_per_s").expect("b vs d2 l.i0");
    let [olo, ohi] = other.ci_pct.expect("b vs d2 interval");
    let ci = r["ci_pct"].as_array().unwrap();
    let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
    assert!(
        lo <= ohi && olo <= hi,
        "the other runs' change [{olo:.1}%, {ohi:.1}%] outside {r}"
    );
    assert!(hi < -compare::DEFAULT_NOISE_PCT, "{r}");
    let text = cmd(&bench, &["compare", "a", "d"]);
    text.assert_success();
    assert!(
        text.stdout
            .lines()
            .any(|l| l.starts_with("l.i0") && l.contains(" ins/s") && l.contains("worse")),
        "{}",
        text.stdout
    );
}

#[test]
fn compare_bad_thresholds_are_one_clear_line() {
    let bench = Bench::new();
    for (flag, value, says) in [
        ("--noise-threshold", "150", "not a percentage"),
        ("--noise-threshold", "-1%", "not a percentage"),
        ("--noise-threshold", "abc", "not a percentage"),
        ("--alpha", "0", "not a probability"),
    ] {
        let arg = format!("{flag}={value}");
        let out = cmd(&bench, &["compare", "a", "b", &arg]);
        assert_eq!(out.code, Some(2), "{arg}: {}", out.describe());
        let line = out.stderr.lines().find(|l| l.starts_with("error:"));
        let line = line.unwrap_or_else(|| panic!("no error line: {}", out.describe()));
        assert!(line.contains(says) && line.contains(value), "{arg}: {line}");
        assert!(!out.stderr.contains("panicked"));
    }
}

//! Whether a run can judge its own steps, and what its tables call things (SQLite): the default
//! run's steps each have at least 3 full seconds (release builds); a step too short says which
//! flag makes it longer, and that flag does; a DBMS inside ibench has one CPU column; the load
//! of `ibench micro` and `ibench tpcc` (`prepare`) is not judged.

use ibench::report::compare::stats::MIN_SECONDS;
use ibench::report::compare::steady;
use ibench::results::model::{RunResult, StepResult};

use crate::common::{Bench, Outcome, path_str, skip};

/// The verdict's line on the steps' stability in a summary.
fn stability_line(out: &Outcome) -> &str {
    out.stdout
        .lines()
        .find(|l| l.trim_start().starts_with("throughput stability:"))
        .unwrap_or_else(|| panic!("no stability line:\n{}", out.stdout))
}

/// Full seconds of `step` as the verdict counts them (`None`: no per-second ops, as l.x).
fn full_seconds(step: &StepResult) -> Option<usize> {
    steady::sanity(step).map(|s| s.seconds)
}

fn step<'a>(run: &'a RunResult, name: &str) -> &'a StepResult {
    run.steps.iter().find(|s| s.name == name).expect(name)
}

/// What this proves: the real default run (`ibench run`, no sizing flag) gives every step with
/// per-second ops at least [`MIN_SECONDS`] full seconds on this machine, and its verdict says
/// no step was too short. The run takes about two minutes, debug build or release (SQLite's
/// own code dominates), so only release test builds run it (`cargo test --release --test
/// tests judged::`); debug builds skip it.
#[test]
fn the_default_run_gives_every_step_three_full_seconds() {
    if cfg!(debug_assertions) {
        skip("the default run takes two minutes: run it with cargo test --release");
        return;
    }
    // Alone on the CPU: other tests' load would make the steps longer, not shorter, but the
    // run is long enough as it is.
    let bench = Bench::exclusive();
    let out = bench.run(&[]);
    let run = out.result();
    let judged: Vec<(&str, usize)> = run
        .steps
        .iter()
        .filter_map(|s| Some((s.name.as_str(), full_seconds(s)?)))
        .collect();
    assert_eq!(judged.len(), 9, "every step but l.x: {judged:?}");
    for (name, seconds) in &judged {
        assert!(*seconds >= MIN_SECONDS, "{name}: {seconds} full seconds");
    }
    let line = stability_line(&out);
    assert!(!line.contains("too short"), "{line}");
    assert!(!out.stdout.contains("too short"), "{}", out.stdout);
}

/// A load step and a query step too short say, in the verdict and under the tables, the flag
/// that makes each longer; the same steps with those flags raised (l.i0's rows from the rate
/// the short run measured, for about 10 s) are long enough and no longer flagged.
#[test]
fn a_step_too_short_names_the_flag_that_makes_it_longer_and_that_flag_does() {
    let bench = Bench::new();
    let steps = ["--steps", "l.i0,l.x,qr100", "--clients", "1"];
    let short = bench.run(&[&steps[..], &["--l0-rows", "50000", "--query-seconds", "2"]].concat());
    let run = short.result();
    for name in ["l.i0", "qr100"] {
        let seconds = full_seconds(step(&run, name)).unwrap();
        assert!(seconds < MIN_SECONDS, "{name}: {seconds} full seconds");
    }
    let line = stability_line(&short);
    for said in [
        "l.i0",
        "qr100",
        "too short to compare",
        "--l0-rows",
        "--query-seconds",
    ] {
        assert!(line.contains(said), "{said}: {line}");
    }
    for (name, flag) in [("l.i0", "--l0-rows"), ("qr100", "--query-seconds")] {
        let note = short
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}: too short to compare")))
            .unwrap_or_else(|| panic!("no note on {name}:\n{}", short.stdout));
        assert!(note.ends_with(&format!("(longer with {flag})")), "{note}");
    }

    let rate = step(&run, "l.i0").inserts_per_s;
    assert!(rate > 0.0);
    let rows = ((rate * 10.0) as u64).max(50_000).to_string();
    let long = bench.run(&[&steps[..], &["--l0-rows", &rows, "--query-seconds", "6"]].concat());
    let run = long.result();
    for name in ["l.i0", "qr100"] {
        let seconds = full_seconds(step(&run, name)).unwrap();
        assert!(seconds >= MIN_SECONDS, "{name}: {seconds} full seconds");
    }
    let line = stability_line(&long);
    assert!(!line.contains("too short"), "{line}");
}

/// SQLite runs inside ibench: the DBMS's CPU and the client's are the same figure (one
/// process), so the summary, `ibench show` and the Markdown report show one CPU column, named
/// for what it is, where the figure is.
#[test]
fn an_embedded_dbms_has_one_cpu_column_named_for_the_process() {
    let bench = Bench::new();
    let out = bench.run(&["--steps", "l.i0", "--l0-rows", "20000"]);
    let run = out.result();
    let per_op = run.steps[0].efficiency.as_ref().unwrap().per_op.as_ref();
    let per_op = per_op.expect("l.i0 has per-op costs");
    assert_eq!(per_op.dbms_cpu_us, Some(per_op.client_cpu_us), "one figure");

    let store = bench.out().join("results.db");
    let show = bench.run_raw(&["show", &run.run_id, "--results", path_str(&store)], &[]);
    show.assert_success();
    for text in [&out.stdout, &show.stdout] {
        let header = text
            .lines()
            .find(|l| l.starts_with("step ") && l.contains(" per "))
            .unwrap_or_else(|| panic!("no cost table:\n{text}"));
        assert!(header.contains("ibench+dbms us"), "{header}");
        assert!(!header.contains("client us"), "{header}");
        assert!(!header.contains(" dbms us"), "{header}");
    }

    let md = bench.run_raw(
        &["report", "--format", "md", "--results", path_str(&store)],
        &[],
    );
    md.assert_success();
    let verdict = md
        .stdout
        .lines()
        .find(|l| l.starts_with("| step | rate |"))
        .unwrap_or_else(|| panic!("no step table:\n{}", md.stdout));
    assert!(verdict.contains("| ibench+DBMS CPU us/op |"), "{verdict}");
    assert!(!verdict.to_lowercase().contains("| dbms cpu"), "{verdict}");
    assert!(!verdict.contains("client CPU"), "{verdict}");
    let cost_rows: Vec<&str> = md
        .stdout
        .lines()
        .filter(|l| l.contains("CPU us/op |"))
        .collect();
    let row = |name: &str| cost_rows.iter().filter(|l| l.starts_with(name)).count();
    assert_eq!(row("| ibench+DBMS CPU us/op |"), 1, "{cost_rows:?}");
    assert_eq!(row("| client CPU us/op |"), 0, "{cost_rows:?}");
    assert_eq!(row("| dbms CPU us/op |"), 0, "{cost_rows:?}");
}

/// `ibench micro` and `ibench tpcc` load their tables in a step `prepare`: the load is not
/// what they benchmark, so neither the verdict nor the notes judge it, while their measured
/// steps are judged (too short here, naming `--seconds`).
#[test]
fn the_load_of_micro_and_tpcc_is_not_judged() {
    let bench = Bench::new();
    let out = bench.out();
    let micro = bench.run_raw(
        &["micro", "--out", path_str(&out), "-q"],
        &["--tables", "1", "--table-rows", "20000", "--seconds", "2"],
    );
    let tpcc = bench.run_raw(
        &["tpcc", "--out", path_str(&out), "-q"],
        &["--warehouses", "1", "--seconds", "2"],
    );
    for (what, outcome) in [("micro", &micro), ("tpcc", &tpcc)] {
        let run = outcome.result();
        assert_eq!(run.steps[0].name, "prepare", "{what}");
        assert!(
            !run.steps[0].per_second.total.ops.is_empty(),
            "{what}: the load has per-second ops, and is still not judged"
        );
        assert!(steady::sanity(&run.steps[0]).is_none(), "{what}");
        let measured = &run.steps[1];
        assert!(steady::sanity(measured).unwrap().too_short, "{what}");
        let line = stability_line(outcome);
        assert!(!line.contains("prepare"), "{what}: {line}");
        assert!(line.contains(&measured.name), "{what}: {line}");
        assert!(line.contains("(longer with --seconds)"), "{what}: {line}");
        assert!(
            !outcome.stdout.lines().any(|l| {
                l.starts_with("prepare: too short") || l.starts_with("prepare: not steady")
            }),
            "{what}:\n{}",
            outcome.stdout
        );
    }
}

//! `--warmup` on the Insert Benchmark's steps and `--cooldown` between steps: the warm-up runs
//! (the tables hold its rows) but is in no histogram, series or total; a load step's warm-up
//! rows count towards its rows; the pause between steps shows in their recorded times.

use ibench::results::model::{RunResult, StepResult};

use crate::common::{Bench, Kept, have, histogram_len, id_range, open_db, path_str, server_bench};

fn step<'r>(run: &'r RunResult, name: &str) -> &'r StepResult {
    run.steps
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// The table's (rows, min id, max id) through our own connection.
fn table(bench: &Bench) -> (i64, i64, i64) {
    id_range(&open_db(&bench.db()), "pi1")
}

#[test]
fn query_step_warm_up_runs_but_is_not_counted() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let (rows0, min0, max0) = table(&bench);
    let run = bench
        .run(&[
            "--path",
            path_str(&bench.db()),
            "--clients",
            "1",
            "--steps",
            "qp100",
            "--writer-batch",
            "10",
            "--query-seconds",
            "2",
            "--warmup",
            "2",
        ])
        .result();
    let s = step(&run, "qp100");
    let w = s.warmup.as_ref().expect("the step records its warm-up");
    let (rows1, min1, max1) = table(&bench);

    // The warm-up ran: its queries and its background writer's rows, in the table.
    assert!(w.ops.get("query").copied().unwrap_or(0) > 0, "{w:?}");
    assert!(w.rows_inserted > 0, "{w:?}");
    assert_eq!(
        (max1 - max0) as u64,
        s.rows_inserted + w.rows_inserted,
        "ids added to the table vs inserts measured + warm-up's"
    );
    assert_eq!(
        (min1 - min0) as u64,
        s.rows_deleted + w.rows_deleted,
        "ids deleted from the table vs deletes measured + warm-up's"
    );
    assert_eq!(
        rows1, rows0,
        "the queue keeps its size over warm-up and step"
    );
    assert!(
        ((max1 - max0) as u64) > s.rows_inserted,
        "the table holds more new rows than the step counted"
    );

    // Nothing of it in the step's figures: histogram, totals and series agree with one
    // another, and a second warm-up per measured second would show as twice the ops.
    let q = &s.ops["query"];
    assert_eq!(histogram_len(&q.histogram), q.count);
    assert_eq!(q.count, s.queries);
    let series: u64 = s.per_second.total.ops["query"].ops.iter().sum();
    assert_eq!(series, s.queries, "per-second series vs queries counted");
    let ins = &s.ops["insert"];
    assert_eq!(histogram_len(&ins.histogram), ins.count);
    assert_eq!(ins.rows, s.rows_inserted);
    // The series covers the measured seconds only (the step's own clock).
    assert!(
        s.per_second.total.ops["query"].ops.len() as f64 <= s.duration_s.ceil() + 1.0,
        "{} seconds of series for a {} s step",
        s.per_second.total.ops["query"].ops.len(),
        s.duration_s
    );
    match &run.config.workload {
        ibench::request::WorkloadSpec::InsertBenchmark(b) => assert_eq!(b.warmup, 2),
        other => panic!("not an Insert Benchmark run: {other:?}"),
    }

    // Shown: the summary's table of warm-ups.
    let store = bench.out().join("results.db");
    let shown = bench.run_raw(&["show", &run.run_id, "--results", path_str(&store)], &[]);
    shown.assert_success();
    assert!(
        shown.stdout.contains("warm-up") && shown.stdout.contains("qp100"),
        "{}",
        shown.stdout
    );
}

#[test]
fn load_step_warm_up_rows_count_towards_its_rows() {
    let bench = Bench::new();
    bench.load(1, 1_000);
    let (rows0, _, max0) = table(&bench);
    let run = bench
        .run(&[
            "--path",
            path_str(&bench.db()),
            "--clients",
            "1",
            "--steps",
            "l.i1",
            "--l1-rows",
            "20000",
            "--l1-batch",
            "10",
            "--warmup",
            "1",
        ])
        .result();
    let s = step(&run, "l.i1");
    let w = s.warmup.as_ref().expect("the step records its warm-up");
    let (rows1, _, max1) = table(&bench);
    assert!(w.rows_inserted > 0, "{w:?}");
    assert_eq!(
        max1 - max0,
        20_000,
        "l.i1 inserts its rows, warm-up included"
    );
    assert_eq!(s.rows_inserted + w.rows_inserted, 20_000);
    assert_eq!(rows1, rows0, "and deletes as many");
    if let Some(ins) = s.ops.get("insert") {
        assert_eq!(histogram_len(&ins.histogram), ins.count);
        assert_eq!(ins.rows, s.rows_inserted);
    }
}

/// Seconds from the end of `a`'s measured part to the start of `b`'s.
fn gap_s(a: &StepResult, b: &StepResult) -> f64 {
    let a_end = a.started_at + chrono::Duration::microseconds((a.duration_s * 1e6) as i64);
    (b.started_at - a_end).num_microseconds().unwrap() as f64 / 1e6
}

#[test]
fn cooldown_pauses_between_steps_and_client_counts() {
    let bench = Bench::new();
    let run = bench
        .run(&[
            "--path",
            path_str(&bench.db()),
            "--clients",
            "1",
            "--steps",
            "l.i0,qp0",
            "--l0-rows",
            "500",
            "--query-seconds",
            "1",
            "--cooldown",
            "1",
        ])
        .result();
    assert_eq!(run.config.cooldown_s, 1);
    assert_eq!(
        run.steps[0].cooldown_s, None,
        "no pause before the first step"
    );
    let paused = run.steps[1].cooldown_s.expect("a pause before qp0");
    assert!(paused >= 1.0, "{paused}");
    let gap = gap_s(&run.steps[0], &run.steps[1]);
    assert!(
        gap >= paused,
        "{gap} s between the steps, {paused} s paused"
    );

    // The microbenchmarks: between client counts too, each recorded.
    let out = bench.out();
    let micro = bench.run_raw(
        &["micro", "--out", path_str(&out), "-q"],
        &[
            "--path",
            path_str(&bench.path("micro.sqlite")),
            "--tables",
            "1",
            "--table-rows",
            "200",
            "--benchmarks",
            "point-query",
            "--clients",
            "1,2",
            "--seconds",
            "1",
            "--cooldown",
            "1",
        ],
    );
    let run = micro.result();
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["prepare", "point-query.c1", "point-query.c2"]);
    for pair in run.steps.windows(2) {
        let paused = pair[1]
            .cooldown_s
            .expect("a pause before each step but the first");
        assert!(paused >= 1.0, "{}: {paused}", pair[1].name);
        let gap = gap_s(&pair[0], &pair[1]);
        assert!(
            gap >= paused,
            "{}: gap {gap} s, paused {paused} s",
            pair[1].name
        );
    }
    let store = out.join("results.db");
    let shown = bench.run_raw(&["show", &run.run_id, "--results", path_str(&store)], &[]);
    shown.assert_success();
    assert!(shown.stdout.contains("cool-down"), "{}", shown.stdout);
}

/// `--no-sampling` (what scripts/bench-observer compares against): no readings during the
/// step, only its start and end, so the cost per op is still there.
#[test]
fn no_sampling_leaves_only_the_start_and_end_readings() {
    let bench = Bench::new();
    bench.load(1, 500);
    let db = bench.db();
    let query = |extra: &[&str]| {
        let mut args = vec![
            "--path",
            path_str(&db),
            "--clients",
            "1",
            "--steps",
            "qp0",
            "--query-seconds",
            "2",
        ];
        args.extend_from_slice(extra);
        bench.run(&args).result()
    };
    let sampled = query(&[]);
    let quiet = query(&["--no-sampling"]);
    assert!(!sampled.config.no_sampling);
    assert!(quiet.config.no_sampling);
    let eff = |run: &RunResult| run.steps[0].efficiency.clone().expect("efficiency");
    let (on, off) = (eff(&sampled), eff(&quiet));
    assert!(on.samples > 2, "start, a second, end: {}", on.samples);
    assert_eq!(off.samples, 2, "start and end only");
    assert!(off.per_second.client_cpu_s.is_empty());
    let per_op = off.per_op.expect("cost per op without sampling");
    assert!(per_op.client_cpu_us > 0.0);
}

/// On a managed PostgreSQL: the server's own per-table counters, read by us after the run,
/// hold the warm-up's rows beside the step's (the warm-up ran on the server, and the step
/// counted only its measured part).
#[test]
fn managed_postgres_counts_the_warm_up_rows_the_step_does_not() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let run = bench
        .run(&[
            "--server",
            "postgres",
            "--keep-server",
            "--clients",
            "1",
            "--steps",
            "l.i0,l.x,qp100",
            "--l0-rows",
            "1000",
            "--writer-batch",
            "10",
            "--query-seconds",
            "2",
            "--warmup",
            "2",
        ])
        .result();
    let _kept = Kept::of(&run, "postgres");
    let s = step(&run, "qp100");
    let w = s.warmup.as_ref().expect("the step records its warm-up");
    assert!(w.rows_inserted > 0 && w.ops.get("query").copied().unwrap_or(0) > 0);
    let q = &s.ops["query"];
    assert_eq!(histogram_len(&q.histogram), q.count);
    assert_eq!(q.count, s.queries);
    let url = crate::common::kept_url(&run);
    let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let row = c
        .query_one(
            "SELECT n_tup_ins, n_tup_del FROM pg_stat_user_tables WHERE relname = 'pi1'",
            &[],
        )
        .expect("pg_stat_user_tables");
    let (ins, del): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!(
        ins as u64,
        1_000 + s.rows_inserted + w.rows_inserted,
        "PostgreSQL's inserts into pi1: l.i0's, the step's and its warm-up's"
    );
    assert_eq!(del as u64, s.rows_deleted + w.rows_deleted);
    assert!(
        ins as u64 > 1_000 + s.rows_inserted,
        "the warm-up inserted on the server"
    );
}

/// A warm-up no step of the run can have, or seconds out of range: one line, exit 2.
#[test]
fn warm_up_without_a_step_to_warm_up_is_refused() {
    let bench = Bench::new();
    for (args, expected) in [
        (
            &["--steps", "l.i0,l.x", "--warmup", "5"][..],
            "--warmup applies to l.i1, l.i2, qrN and qpN",
        ),
        (&["--cooldown", "99999999999"][..], "--cooldown 99999999999"),
    ] {
        let o = bench.run(args);
        assert_eq!(o.code, Some(2), "{args:?}: {}", o.stderr);
        assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
        assert!(o.stderr.contains(expected), "{}", o.stderr);
        assert!(o.new_results.is_empty(), "nothing ran");
    }
}

/// The Markdown and HTML reports say each step's warm-up (seconds, statements, not counted)
/// and the pause before it, as the run recorded them.
#[test]
fn reports_name_the_warm_up_and_the_cool_down() {
    let bench = Bench::new();
    let out = bench.out();
    let run = bench
        .run_raw(
            &["micro", "--out", path_str(&out), "-q"],
            &[
                "--path",
                path_str(&bench.db()),
                "--tables",
                "1",
                "--table-rows",
                "200",
                "--benchmarks",
                "point-query",
                "--clients",
                "1,2",
                "--seconds",
                "1",
                "--warmup",
                "1",
                "--cooldown",
                "1",
            ],
        )
        .result();
    let store = out.join("results.db");
    let md = bench.run_raw(
        &[
            "report",
            &run.run_id,
            "--results",
            path_str(&store),
            "--format",
            "md",
        ],
        &[],
    );
    md.assert_success();
    let md = md.stdout;
    assert!(md.contains("Warm-up and cool-down"), "{md}");
    for name in ["point-query.c1", "point-query.c2"] {
        let s = step(&run, name);
        let warm = s.warmup.as_ref().expect("a warm-up");
        let queries = warm.ops["query"];
        assert!(queries > 0 && warm.seconds >= 1.0, "{warm:?}");
        // The step's row: its pause, its warm-up's seconds and statements, as recorded.
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {name} |")) && l.contains("query)"))
            .unwrap_or_else(|| panic!("no warm-up row of {name}: {md}"));
        assert!(row.contains(&format!("{queries} query")), "{row}: {warm:?}");
        assert!(
            row.contains(&ibench::output::format::seconds(warm.seconds)),
            "{row}: {warm:?}"
        );
        let paused = s.cooldown_s.expect("a pause before the step");
        assert!(
            row.contains(&ibench::output::format::seconds(paused)),
            "{row}: {paused}"
        );
    }
    let html = bench.html_report(&store);
    assert!(
        html.contains("Warm-up and cool-down"),
        "no section in the HTML"
    );
}

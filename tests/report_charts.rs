//! The charts of `ibench report`: per-second rate charts drawn second by second over each
//! step's real length, and micro runs reported as a table per figure with charts by client
//! count (the rest of `ibench report` is in report.rs).

use std::fs;

use ibench::results::model::RunResult;
use serde_json::Value;

use crate::common::{Bench, path_str};
use crate::report::{check_in_chromium, cmd, group_step};

/// What a rate chart of one step and op plots, checked against the step's per-second series:
/// every drawn second is the count measured in it over its real length (1 s, or the step's
/// partial last second), nothing is drawn after the step's end. Returns the rows the chart
/// accounts for: drawn (rate x length), plus a short last second left out and ops completed
/// after a query step's window closed, which the chart does not draw.
fn check_rate_chart(run: &ibench::results::model::RunResult, step: &str, op: &str) -> u64 {
    use ibench::report::model::Group;
    use ibench::report::per_second::{self, Kind, MIN_PARTIAL_S};
    let groups = [Group {
        name: "x".to_string(),
        runs: vec![run.clone()],
    }];
    let charts = per_second::step_charts(&groups, step, None);
    let chart = charts
        .iter()
        .find(|c| c.op == op && c.kind == Kind::Rate)
        .unwrap_or_else(|| panic!("{step} has no {op} rate chart"));
    let s = run.steps.iter().find(|s| s.name == step).unwrap();
    let series = &s.per_second.total.ops[op];
    let line = &chart.lines[0];
    let d = s.duration_s;
    assert!(!line.samples.is_empty(), "{step} {op}: nothing drawn");
    let mut drawn = 0.0;
    for (i, p) in line.samples.iter().enumerate() {
        let len = (d - i as f64).min(1.0);
        assert_eq!(p.start, i as f64, "{step} {op}: second {i}");
        assert!((p.len - len).abs() < 1e-9, "{step} {op}: second {i}: {p:?}");
        assert!(
            len > 0.0,
            "{step} {op}: second {i} drawn after the end ({d} s)"
        );
        let v = p.value.expect("rates have no gaps");
        assert!(
            (v * len - series.rows[i] as f64).abs() < 1e-6,
            "{step} {op}: second {i} drawn as {v}/s over {len} s, measured {}",
            series.rows[i]
        );
        assert_eq!(p.partial, len < 1.0);
        drawn += v * len;
    }
    // The last second drawn is full, or partial and long enough to be a rate, or the whole step.
    let last = line.samples.last().unwrap();
    assert!(
        !last.partial || last.len >= MIN_PARTIAL_S || line.samples.len() == 1,
        "{step} {op}: {last:?}"
    );
    let n = line.samples.len();
    if let Some(tail) = line.tail_left_out_s {
        assert!(tail < MIN_PARTIAL_S && (tail - (d - n as f64)).abs() < 1e-9);
    }
    // The response-time chart has the same seconds, a gap where no op completed.
    let max = charts
        .iter()
        .find(|c| c.op == op && c.kind == Kind::MaxResponse)
        .unwrap();
    let drawn_max = &max.lines[0].samples;
    assert_eq!(
        drawn_max.len(),
        n,
        "{step} {op}: the same seconds as the rates"
    );
    assert_eq!(max.lines[0].tail_left_out_s, line.tail_left_out_s);
    for (p, &m) in drawn_max.iter().zip(&series.max_us) {
        assert_eq!(p.value, (m > 0).then_some(m as f64), "{step} {op}: {p:?}");
    }
    drawn.round() as u64 + series.rows[n..].iter().sum::<u64>()
}

#[test]
fn per_second_charts_plot_each_second_over_its_real_length() {
    let bench = Bench::new();
    // l.i0 of 20000 rows lasts well under a second: its chart is that one partial second.
    let load = bench.load(1, 20_000);
    let conn = crate::common::open_db(&bench.db());
    let (rows, _, _) = crate::common::id_range(&conn, "pi1");
    assert_eq!(rows, 20_000);
    assert_eq!(check_rate_chart(&load, "l.i0", "insert"), 20_000);
    let l0 = &load.steps[0];
    if l0.duration_s < 1.0 {
        let charts = ibench::report::per_second::step_charts(
            &[ibench::report::model::Group {
                name: "x".to_string(),
                runs: vec![load.clone()],
            }],
            "l.i0",
            None,
        );
        let s = &charts[0].lines[0].samples;
        assert_eq!(s.len(), 1, "{s:?}");
        // Its rate is the rows in the table over the step's length: the step's own rate.
        let v = s[0].value.unwrap();
        assert!((v - rows as f64 / l0.duration_s).abs() < 1e-6 * v, "{v}");
        assert!((v - l0.inserts_per_s).abs() < 1e-6 * v, "{v}");
    }

    // l.i1 lasts a few seconds, usually with a partial last second; qr100 is a 2 s window
    // whose in-flight queries end after it.
    let before = crate::common::id_range(&conn, "pi1");
    let run = bench
        .run(&[
            "--steps",
            "l.i1,qr100",
            "--clients",
            "1",
            "--l1-rows",
            "20000",
            "--query-seconds",
            "2",
            "--path",
            path_str(&bench.db()),
        ])
        .result();
    let after = crate::common::id_range(&conn, "pi1");
    let inserted: u64 = ["l.i1", "qr100"]
        .iter()
        .map(|step| check_rate_chart(&run, step, "insert"))
        .sum();
    let deleted: u64 = ["l.i1", "qr100"]
        .iter()
        .map(|step| check_rate_chart(&run, step, "delete"))
        .sum();
    // What the charts account for is what the table shows.
    assert_eq!(inserted, (after.2 - before.2) as u64, "rows inserted");
    assert_eq!(deleted, (after.1 - before.1) as u64, "rows deleted");
    let qr = run.steps.iter().find(|s| s.name == "qr100").unwrap();
    assert_eq!(check_rate_chart(&run, "qr100", "query"), qr.queries);
    assert_eq!(qr.duration_s, 2.0, "a query step lasts its window");
}

/// A micro run of two benchmarks at two client counts, labelled `label`.
fn micro_run(bench: &Bench, label: &str, db: &str, extra: &[&str]) -> RunResult {
    let db = bench.path(db);
    let out = bench.out();
    let mut args = vec![
        "micro",
        "--path",
        path_str(&db),
        "--out",
        path_str(&out),
        "-q",
        "--tables",
        "1",
        "--table-rows",
        "1000",
        "--clients",
        "1,2",
        "--seconds",
        "1",
        "--benchmarks",
        "point-query,update-index",
        "--label",
        label,
    ];
    args.extend_from_slice(extra);
    bench.run_raw(&args, &[]).result()
}

#[test]
fn micro_runs_report_a_table_per_figure_and_charts_by_clients() {
    let bench = Bench::new();
    let base = micro_run(&bench, "normal", "a.sqlite", &[]);
    let full = micro_run(
        &bench,
        "full",
        "b.sqlite",
        &["--sqlite-pragma", "synchronous=FULL"],
    );
    let json = cmd(&bench, &["report", "normal", "full", "--format", "json"]);
    json.assert_success();
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    let steps = [
        "point-query.c1",
        "point-query.c2",
        "update-index.c1",
        "update-index.c2",
    ];
    for step in steps {
        let b = &group_step(&report, step, "normal")["micro"];
        let f = &group_step(&report, step, "full")["micro"];
        // QPS as the runs measured it; relative = variant / base.
        let qps = |run: &RunResult| {
            run.steps
                .iter()
                .find(|s| s.name == step)
                .unwrap()
                .queries_per_s
        };
        assert_eq!(b["qps"]["median"].as_f64().unwrap(), qps(&base), "{step}");
        assert_eq!(f["qps"]["median"].as_f64().unwrap(), qps(&full), "{step}");
        let rel = f["qps"]["relative"].as_f64().unwrap();
        assert!((rel - qps(&full) / qps(&base)).abs() < 1e-9, "{step}");
        // p95 from the run's own histogram.
        let s = full.steps.iter().find(|s| s.name == step).unwrap();
        let h = ibench::metrics::histogram::decode(&s.ops["query"].histogram).unwrap();
        let p95 = h.value_at_quantile(0.95) as f64 / 1000.0;
        assert_eq!(f["p95_ms"]["median"].as_f64().unwrap(), p95, "{step}");
        for key in ["rows_per_s", "cpu_per_op", "client_cpu_per_op", "cs_per_op"] {
            assert!(b[key]["median"].is_number(), "{step}: {key} in {b}");
        }
    }
    // Markdown: one table per figure, a row per benchmark and client count, the variant's
    // ratio marked where it passes 0.95 or 1.05.
    let md = cmd(&bench, &["report", "normal", "full", "--format", "md"]);
    md.assert_success();
    for title in [
        "QPS (ops/s)",
        "p95 response time, ms",
        "cpu/o:",
        "cs/o:",
        "rKB/o:",
        "wKB/o:",
    ] {
        assert!(
            md.stdout.contains(&format!("*{title}")),
            "{title}:\n{}",
            md.stdout
        );
    }
    let qps_table: Vec<&str> = md
        .stdout
        .split("*QPS (ops/s)")
        .nth(1)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| point-query") || l.starts_with("| update-index"))
        .take(4)
        .collect();
    assert_eq!(qps_table.len(), 4, "{qps_table:?}");
    for (line, step) in qps_table.iter().zip(steps) {
        let rel = group_step(&report, step, "full")["micro"]["qps"]["relative"]
            .as_f64()
            .unwrap();
        let marked = line.contains("**");
        assert_eq!(marked, !(0.95..=1.05).contains(&rel), "{line} ({rel})");
        // A ratio that rounds to 0.00 reads "<0.01" (the run is hundreds of times slower).
        let shown = if rel < 0.005 {
            "<0.01".to_string()
        } else {
            format!("{rel:.2}")
        };
        assert!(line.contains(&shown), "{line} ({rel})");
    }
    // HTML: per benchmark a throughput and a p95 chart, one line per configuration.
    let html_path = bench.path("micro.html");
    cmd(
        &bench,
        &["report", "normal", "full", "-o", path_str(&html_path)],
    )
    .assert_success();
    let page = fs::read_to_string(&html_path).unwrap();
    let clients = page
        .split("id=\"clients\"")
        .nth(1)
        .unwrap()
        .split("id=\"response\"")
        .next()
        .unwrap();
    assert_eq!(
        clients.matches("<svg").count(),
        4,
        "2 benchmarks x 2 charts"
    );
    assert_eq!(
        clients.matches("<circle").count(),
        4 * 2 * 2,
        "a dot per count and line"
    );
    assert!(page.contains("point-query: throughput") && page.contains("update-index: p95"));
    check_in_chromium(&bench, &html_path);
}

//! `ibench report` over runs stored by real SQLite runs: aggregation of repeats, values
//! relative to a base, escaping, the HTML in headless Chromium, and bad input (`ibench
//! compare` has its own module, compare.rs).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{Bench, Outcome, have_files, path_str};

/// Short runs with every kind of step (`label` tags the configuration).
fn short_run(bench: &Bench, label: &str, extra: &[&str]) -> ibench::results::model::RunResult {
    let mut args = vec![
        "--steps",
        "l.i0,l.x,l.i1,qr100,qp100",
        "--clients",
        "1",
        "--l0-rows",
        "3000",
        "--l1-rows",
        "1000",
        "--query-seconds",
        "2",
        "--label",
        label,
    ];
    args.extend_from_slice(extra);
    bench.run(&args).result()
}

fn cmd(bench: &Bench, args: &[&str]) -> Outcome {
    let store = bench.out().join("results.db");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--results", path_str(&store)]);
    bench.run_raw(&all, &[])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn group_step<'a>(report: &'a Value, step: &str, group: &str) -> &'a Value {
    let s = report["step_reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == step)
        .unwrap_or_else(|| panic!("step {step} not in report"));
    s["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == group)
        .unwrap_or_else(|| panic!("group {group} not in step {step}"))
}

const EVIL: &str = "<script>alert(1)</script>";

#[test]
fn report_aggregates_repeats_relative_to_a_base_in_every_format() {
    let bench = Bench::new();
    let base: Vec<_> = (0..3).map(|_| short_run(&bench, "base", &[])).collect();
    let variant: Vec<_> = (0..2)
        .map(|_| short_run(&bench, EVIL, &["--sqlite-pragma", "cache_size=-500"]))
        .collect();

    let json = cmd(&bench, &["report", "base", EVIL, "--format", "json"]);
    json.assert_success();
    let r: Value = serde_json::from_str(&json.stdout).expect("report JSON");
    assert_eq!(r["base"], "base");
    assert_eq!(r["groups"][0]["name"], "base");
    assert_eq!(r["groups"][0]["runs"].as_array().unwrap().len(), 3);
    assert_eq!(r["groups"][1]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(
        r["steps"],
        serde_json::json!(["l.i0", "l.x", "l.i1", "qr100", "qp100"])
    );

    // Medians, min and max over the repeats, from the runs' own results.
    for step in ["l.i0", "l.i1", "qp100"] {
        let pick = |runs: &[ibench::results::model::RunResult],
                    f: &dyn Fn(&ibench::results::model::StepResult) -> f64| {
            runs.iter()
                .map(|run| f(run.steps.iter().find(|s| s.name == step).unwrap()))
                .collect::<Vec<f64>>()
        };
        let key = if step.starts_with('q') {
            "queries_per_s"
        } else {
            "inserts_per_s"
        };
        let get = |s: &ibench::results::model::StepResult| {
            if step.starts_with('q') {
                s.queries_per_s
            } else {
                s.inserts_per_s
            }
        };
        let b = pick(&base, &get);
        let v = pick(&variant, &get);
        let bs = &group_step(&r, step, "base")["throughput"][key];
        let vs = &group_step(&r, step, EVIL)["throughput"][key];
        let close = |a: &Value, b: f64| (a.as_f64().unwrap() - b).abs() <= 1e-6 * b.abs().max(1.0);
        assert!(
            close(&bs["median"], median(b.clone())),
            "{step}: {bs} vs {b:?}"
        );
        assert!(close(
            &bs["min"],
            b.iter().copied().fold(f64::MAX, f64::min)
        ));
        assert!(close(&bs["max"], b.iter().copied().fold(0.0, f64::max)));
        assert_eq!(bs["n"], 3);
        assert!(bs["relative"].is_null(), "the base has no relative value");
        assert!(close(&vs["median"], median(v.clone())));
        assert!(
            close(&vs["relative"], median(v) / median(b)),
            "{step}: relative {vs}"
        );
    }
    // Histograms of the repeats are merged: op counts add up.
    let inserts: u64 = base
        .iter()
        .map(|run| run.steps.iter().find(|s| s.name == "l.i1").unwrap().ops["insert"].count)
        .sum();
    assert_eq!(
        group_step(&r, "l.i1", "base")["ops"]["insert"]["count"],
        inserts
    );
    // ... and the percentiles are those of the merged histogram (merged here, with the
    // hdrhistogram crate), not a median of the runs' percentiles.
    let mut merged = hdrhistogram::Histogram::<u64>::new(3).unwrap();
    for run in &base {
        let step = run.steps.iter().find(|s| s.name == "l.i1").unwrap();
        merged
            .add(ibench::metrics::histogram::decode(&step.ops["insert"].histogram).unwrap())
            .unwrap();
    }
    let agg = &group_step(&r, "l.i1", "base")["ops"]["insert"];
    for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
        assert_eq!(
            agg["percentiles_us"][key].as_u64().unwrap(),
            merged.value_at_quantile(q),
            "{key}: {agg}"
        );
    }
    assert_eq!(agg["percentiles_us"]["max"].as_u64().unwrap(), merged.max());
    let pct: f64 = agg["buckets_pct"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((pct - 100.0).abs() < 1e-6, "buckets add up to {pct}%");
    // The variant's setting is named as the difference from the base.
    let diffs = r["groups"][1]["differences"].as_array().unwrap();
    assert!(
        diffs.iter().any(|d| d["key"] == "setting.cache_size"
            && d["base"] == "-2000"
            && d["value"] == "-500"),
        "{diffs:?}"
    );
    // The writer SLA of query steps is reported.
    let sla = &group_step(&r, "qr100", "base")["sla"];
    assert_eq!(sla["target"], 100.0);
    assert_eq!(sla["runs"], 3);

    // Markdown: the same tables, the label as text.
    let md = cmd(&bench, &["report", "base", EVIL, "--format", "md"]);
    md.assert_success();
    assert!(
        md.stdout.contains("| config | l.i0 ins/s |"),
        "{}",
        md.stdout
    );
    assert!(md.stdout.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!md.stdout.contains(EVIL));

    // HTML: one file, every user string escaped, no external resources.
    let html_path = bench.path("report.html");
    let html = cmd(
        &bench,
        &["report", "base", EVIL, "--out", path_str(&html_path)],
    );
    html.assert_success();
    let page = fs::read_to_string(&html_path).unwrap();
    assert!(!page.contains(EVIL), "label not escaped");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;"), "label missing");
    assert!(!page.contains("<script"), "the report needs no scripts");
    for external in ["<link", " src=", "@import", "url(http"] {
        assert!(!page.contains(external), "report loads {external}");
    }
    assert!(page.matches("<svg").count() >= 10, "charts missing");
    assert!(page.contains("relative to base"));
    check_in_chromium(&bench, &html_path);

    // Without --output, the page goes beside the results, not into the current directory,
    // and stdout says where.
    let default = cmd(&bench, &["report", "base", EVIL]);
    default.assert_success();
    let beside = bench.out().join("ibench-report.html");
    assert_eq!(default.stdout, format!("report: {}\n", beside.display()));
    assert!(beside.exists());
    assert!(
        !bench.path("ibench-report.html").exists(),
        "written to the cwd"
    );
}

/// Opens the report in headless Chromium: no console errors, every chart laid out with a
/// non-zero size, and a screenshot.
fn check_in_chromium(bench: &Bench, report: &Path) {
    let Some(chromium) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
    else {
        let msg = "chromium not found: install Debian's chromium package (.ci/run does)";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}");
        }
        crate::common::skip(&format!("the browser check: {msg}"));
        return;
    };
    // A copy of the page with a probe that records errors and chart sizes into the DOM.
    let probe = r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const sizes = [...document.querySelectorAll('.chart svg')].map(s => {
    const r = s.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)];
  });
  const lines = document.querySelectorAll('.chart svg polyline').length;
  document.body.setAttribute('data-probe', JSON.stringify({sizes, lines, errors: window.__errors}));
});
</script>"#;
    let page = fs::read_to_string(report).unwrap();
    let probed = bench.path("probed.html");
    fs::write(
        &probed,
        page.replacen("<head>", &format!("<head>{probe}"), 1),
    )
    .unwrap();
    let profile = bench.path("chromium-profile");
    let base_args = |extra: &[String]| {
        let mut c = Command::new(&chromium);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2400",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra);
        c
    };
    let dom = base_args(&[
        "--dump-dom".to_string(),
        format!("file://{}", probed.display()),
    ])
    .output()
    .expect("run chromium");
    let stdout = String::from_utf8_lossy(&dom.stdout);
    let stderr = String::from_utf8_lossy(&dom.stderr);
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let attr = stdout
        .split("data-probe=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("probe did not run; chromium said:\n{stderr}"));
    let probe: Value = serde_json::from_str(&attr.replace("&quot;", "\"")).expect("probe JSON");
    assert_eq!(probe["errors"], serde_json::json!([]), "page errors");
    let sizes = probe["sizes"].as_array().unwrap();
    assert!(sizes.len() >= 10, "charts laid out: {probe}");
    for s in sizes {
        assert!(
            s[0].as_f64().unwrap() > 100.0 && s[1].as_f64().unwrap() > 50.0,
            "chart size {s}"
        );
    }
    assert!(
        probe["lines"].as_u64().unwrap() >= sizes.len() as u64,
        "{probe}"
    );

    let shot = bench.path("report.png");
    let out = base_args(&[
        format!("--screenshot={}", shot.display()),
        format!("file://{}", report.display()),
    ])
    .output()
    .expect("run chromium");
    let png = fs::read(&shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "screenshot {} bytes",
        png.len()
    );
}

/// Two runs on managed `server`s, `setting` = `base` and `variant`: the report names exactly
/// that option and that setting as differing (not the ports, paths and ids that each new
/// server instance has).
fn only_the_given_setting_differs(server: &str, setting: &str, base: &str, variant: &str) {
    let bench = Bench::new();
    // Tempdirs are 0700; the server's user must enter the managed server's directory.
    fs::set_permissions(bench.path(""), fs::Permissions::from_mode(0o755)).unwrap();
    let run = |label: &str, value: &str| {
        bench
            .run(&[
                "--server",
                server,
                "--server-option",
                &format!("{setting}={value}"),
                "--steps",
                "l.i0,qp100",
                "--l0-rows",
                "2000",
                "--query-seconds",
                "1",
                "--label",
                label,
            ])
            .result()
    };
    let a = run("base", base);
    let b = run("variant", variant);
    // Each run had its own server on its own port.
    assert_ne!(a.environment.dbms.location, b.environment.dbms.location);
    let json = cmd(
        &bench,
        &[
            "report", "base", "variant", "--base", "base", "--format", "json",
        ],
    );
    json.assert_success();
    let r: Value = serde_json::from_str(&json.stdout).unwrap();
    let diffs: Vec<(String, String, String)> = r["groups"][1]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["key"].as_str().unwrap().to_string(),
                d["base"].as_str().unwrap().to_string(),
                d["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        diffs,
        [
            (
                "config.server.options".to_string(),
                format!("{setting}={base}"),
                format!("{setting}={variant}")
            ),
            (
                format!("setting.{setting}"),
                base.to_string(),
                variant.to_string()
            ),
        ],
        "{server}: only the setting given differs"
    );
}

#[test]
fn two_managed_postgres_runs_differ_only_in_the_setting_they_were_given() {
    if have_files(&["/usr/bin/pg_config"], "postgresql") {
        only_the_given_setting_differs("postgres", "work_mem", "4MB", "7MB");
    }
}

#[test]
fn two_managed_mariadb_runs_differ_only_in_the_setting_they_were_given() {
    if have_files(&["/usr/sbin/mariadbd"], "mariadb-server") {
        only_the_given_setting_differs("mariadb", "innodb_old_blocks_time", "1000", "500");
    }
}

#[test]
fn a_failed_repeat_is_marked_and_does_not_move_the_figures() {
    let bench = Bench::new();
    let run = short_run(&bench, "x", &[]);
    // The same run, failed part-way through its last step at a tenth of the rate, imported
    // as a second repeat of "x".
    let file = bench.path("failed.json");
    let mut doc: Value =
        serde_json::from_str(&fs::read_to_string(run_file(&bench, &run.run_id)).unwrap()).unwrap();
    doc["run_id"] = Value::from(format!("{}-failed", run.run_id));
    doc["status"] = Value::from("failed");
    let last = doc["steps"].as_array_mut().unwrap().last_mut().unwrap();
    last["status"] = Value::from("failed");
    let qps = last["queries_per_s"].as_f64().unwrap();
    last["queries_per_s"] = Value::from(qps / 10.0);
    fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    cmd(&bench, &["import", path_str(&file)]).assert_success();

    let out = cmd(&bench, &["report", "x", "--format", "json"]);
    out.assert_success();
    let r: Value = serde_json::from_str(&out.stdout).unwrap();
    let g = group_step(&r, "qp100", "x");
    assert_eq!(g["incomplete"], serde_json::json!(["failed"]), "{g}");
    let q = &g["throughput"]["queries_per_s"];
    assert_eq!(q["n"], 1, "only the complete repeat counts: {q}");
    assert_eq!(q["median"].as_f64().unwrap(), qps, "{q}");
    // A step every repeat completed still has both.
    assert_eq!(
        group_step(&r, "l.i0", "x")["throughput"]["inserts_per_s"]["n"],
        2
    );
}

/// The results file of run `id`.
fn run_file(bench: &Bench, id: &str) -> PathBuf {
    bench.out().join(format!("{id}.json"))
}

#[test]
fn report_bad_input_is_one_clear_line() {
    let bench = Bench::new();
    // No store, then an empty one.
    let none = cmd(&bench, &["report"]);
    assert_eq!(none.code, Some(2), "{}", none.describe());
    assert!(
        none.stderr.contains("no results database"),
        "{}",
        none.stderr
    );
    fs::create_dir_all(bench.out()).unwrap();
    ibench::results::store::Store::open(&bench.out().join("results.db")).unwrap();
    let empty = cmd(&bench, &["report"]);
    assert_eq!(empty.code, Some(2), "{}", empty.describe());
    assert!(empty.stderr.contains("no runs in"), "{}", empty.stderr);

    short_run(&bench, "base", &[]);
    bench
        .run(&[
            "--steps",
            "l.i0,l.i1",
            "--l0-rows",
            "2000",
            "--l1-rows",
            "500",
            "--label",
            "other",
        ])
        .result();
    // Unknown run.
    let unknown = cmd(&bench, &["report", "base", "nosuchrun"]);
    assert_eq!(unknown.code, Some(2), "{}", unknown.describe());
    assert!(
        unknown.stderr.contains("no run or label \"nosuchrun\""),
        "{}",
        unknown.stderr
    );
    let unknown = cmd(&bench, &["compare", "base", "nosuchrun"]);
    assert_eq!(unknown.code, Some(2), "{}", unknown.describe());
    let unknown_base = cmd(
        &bench,
        &["report", "base", "--base", "nope", "--format", "md"],
    );
    assert_eq!(unknown_base.code, Some(2), "{}", unknown_base.describe());

    // Different step lists: the common steps are reported, the others named.
    let mixed = cmd(&bench, &["report", "base", "other", "--format", "json"]);
    mixed.assert_success();
    let r: Value = serde_json::from_str(&mixed.stdout).unwrap();
    assert_eq!(r["steps"], serde_json::json!(["l.i0", "l.i1"]));
    assert_eq!(r["left_out"]["qp100"], serde_json::json!(["base"]));
    assert!(
        mixed.stderr.contains("step l.x left out"),
        "{}",
        mixed.stderr
    );
    // --base picks the base whatever the order.
    let based = cmd(
        &bench,
        &[
            "report", "base", "other", "--base", "other", "--format", "json",
        ],
    );
    let r: Value = serde_json::from_str(&based.stdout).unwrap();
    assert_eq!(r["groups"][0]["name"], "other");
    assert_eq!(r["groups"][0]["is_base"], true);

    // Unwritable output.
    let bad_out = cmd(
        &bench,
        &["report", "base", "--out", "/proc/nope/report.html"],
    );
    assert_eq!(bad_out.code, Some(2), "{}", bad_out.describe());
    assert!(
        bad_out
            .stderr
            .contains("cannot write /proc/nope/report.html")
    );
    assert_eq!(bad_out.stderr.lines().count(), 1, "{}", bad_out.stderr);

    // A damaged run document in a sound store: one line naming the run and what is damaged.
    let damaged = bench.path("damaged.db");
    fs::copy(bench.out().join("results.db"), &damaged).unwrap();
    {
        let conn = rusqlite::Connection::open(&damaged).unwrap();
        let (id, doc): (String, String) = conn
            .query_row(
                "SELECT id, document FROM runs WHERE label = 'base'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut doc: Value = serde_json::from_str(&doc).unwrap();
        doc["steps"][0]["ops"]["insert"]["histogram"] = Value::from("not base64!");
        conn.execute(
            "UPDATE runs SET document = ?1 WHERE id = ?2",
            [doc.to_string(), id.clone()],
        )
        .unwrap();
        let out = bench.run_raw(
            &[
                "report",
                "base",
                "--results",
                path_str(&damaged),
                "--format",
                "md",
            ],
            &[],
        );
        assert_eq!(out.code, Some(2), "{}", out.describe());
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.describe());
        assert!(
            out.stderr.contains(&format!("run {id} is damaged"))
                && out.stderr.contains("insert histogram of step l.i0"),
            "{}",
            out.describe()
        );
    }

    // Corrupted store.
    let broken = bench.path("broken.db");
    fs::write(&broken, "not a database ".repeat(200)).unwrap();
    let out = bench.run_raw(&["report", "--results", path_str(&broken)], &[]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(out.stderr.contains("not a usable ibench results database"));
    assert!(!out.stderr.contains("panicked"));
}

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

use ibench::results::model::RunResult;

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
        assert!(line.contains(&format!("{rel:.2}")), "{line} ({rel})");
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

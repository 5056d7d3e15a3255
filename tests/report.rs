//! `ibench report` over runs stored by real SQLite runs: aggregation of repeats, values
//! relative to a base, escaping, the HTML in headless Chromium, and bad input (`ibench
//! compare` has its own module, compare.rs; the charts are checked in report_charts.rs).

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

pub(crate) fn cmd(bench: &Bench, args: &[&str]) -> Outcome {
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

pub(crate) fn group_step<'a>(report: &'a Value, step: &str, group: &str) -> &'a Value {
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
    crate::report_html::assert_offline(&page);
    assert!(
        page.matches("<svg").count() >= 5,
        "percentile charts missing"
    );
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

/// What [`check_in_chromium`] runs in the page once loaded (its returned probe).
const PROBE: &str = r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => setTimeout(() => {
  const size = e => { const r = e.getBoundingClientRect(); return [Math.round(r.width), Math.round(r.height)]; };
  const height = document.documentElement.scrollHeight;
  const width = document.documentElement.scrollWidth;
  const plots = [...document.querySelectorAll('.uplot canvas')].map(size);
  // Each step's first main chart (its throughput; a step without ops, l.x, has none, only
  // CPU, IO and gauges when it lasted a few seconds) and the whole run's overview, as laid out.
  const main = q => q.root.parentNode && q.root.parentNode.classList.contains('main');
  const firsts = (window.ibenchPlots || []).filter(p => p && p.some(main))
    .map(p => size(p.find(main).root));
  const overview = window.ibenchOverview ? size(window.ibenchOverview.root) : null;
  // The first step with two charts or more and three seconds: hover the middle of its first
  // chart, then drag across its middle half.
  const step = (window.ibenchPlots || []).find(p => p && p.length >= 2 && p[0].data[0].length >= 3);
  let hover = null;
  if (step) {
    const over = step[0].over, r = over.getBoundingClientRect();
    const at = f => ({clientX: r.left + r.width * f, clientY: r.top + r.height / 2, bubbles: true, button: 0, movementX: 1, movementY: 1});
    over.dispatchEvent(new MouseEvent('mouseenter', at(0.5)));
    over.dispatchEvent(new MouseEvent('mousemove', at(0.5)));
    hover = {
      idx: step.map(p => p.cursor.idx),
      legends: step.map(p => [...p.root.querySelectorAll('.u-value')].slice(1).map(v => v.textContent)),
      full: [step[0].data[0][0], step[0].data[0][step[0].data[0].length - 1]],
    };
    over.dispatchEvent(new MouseEvent('mousedown', at(0.25)));
    over.dispatchEvent(new MouseEvent('mousemove', at(0.75)));
    over.dispatchEvent(new MouseEvent('mouseup', at(0.75)));
  }
  setTimeout(() => {
    const zoom = step ? step.map(p => [p.scales.x.min, p.scales.x.max]) : null;
    document.querySelectorAll('details').forEach(d => d.open = true);
    const sizes = [...document.querySelectorAll('.chart svg')].map(size);
    const lines = document.querySelectorAll('.chart svg polyline').length;
    document.body.setAttribute('data-probe', JSON.stringify({height, width, plots, firsts, overview, hover, zoom, sizes, lines, errors: window.__errors}));
  }, 50);
}, 0));
</script>"#;

/// Opens the report in headless Chromium 1,400 px wide: no console errors (a load the page's
/// Content Security Policy refused would be one), every chart laid out with a non-zero size,
/// and a screenshot. Returns the probe: `height` and `width` of the page with its sections
/// closed, `plots` (the uPlot charts' canvas sizes), `firsts` (each step's first main chart,
/// its throughput; none for a step without ops) and `overview` (the whole run's throughput chart, `null` without one), `hover` (the mouse over the middle of
/// the first chart of a step of three seconds or more: each of the step's charts' cursor index
/// `idx` and legend values `legends`, and the step's `full` time range), `zoom` (each chart's
/// time range after a drag across the middle half of that chart), then, every section opened,
/// `sizes` (the SVG charts') and `lines`.
pub(crate) fn check_in_chromium(bench: &Bench, report: &Path) -> Value {
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
        return Value::Null;
    };
    // A copy of the page with a probe that records errors and chart sizes into the DOM.
    let probe = PROBE;
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
            "--window-size=1400,900",
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
    let plots = probe["plots"].as_array().unwrap();
    assert!(sizes.len() + plots.len() >= 10, "charts laid out: {probe}");
    for s in sizes.iter().chain(plots) {
        assert!(
            s[0].as_f64().unwrap() > 100.0 && s[1].as_f64().unwrap() > 50.0,
            "chart size {s}"
        );
    }
    assert!(
        probe["lines"].as_u64().unwrap() >= sizes.len() as u64,
        "{probe}"
    );
    assert!(
        probe["width"].as_u64().unwrap() <= 1400,
        "the page scrolls sideways at 1,400 px: {probe}"
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
    probe
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

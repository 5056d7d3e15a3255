//! The HTML report of one run as a reader meets it: the verdict first, every step's per-second
//! charts drawn from the JSON in the page (a value for every second of every step's series),
//! the rest collapsed so that the page of a default run stays under 4,000 px at 1,400 px wide
//! (measured in headless Chromium), and nothing loaded from anywhere.

use std::fs;

use ibench::report::per_second;
use ibench::results::model::{RunResult, StepResult};
use serde_json::Value;

use crate::common::{Bench, path_str};
use crate::report::{check_in_chromium, cmd};

/// Asserts that `page` loads nothing from anywhere: no `http(s)://` in a `src` or `href`
/// attribute or in a script (but the vendored uPlot's banner comment naming its home), no
/// stylesheet link or import, and a Content Security Policy that refuses every load.
pub(crate) fn assert_offline(page: &str) {
    for external in ["<link", "@import", "url(http"] {
        assert!(!page.contains(external), "the report loads {external}");
    }
    for attr in ["src=", "href="] {
        for v in page.split(attr).skip(1) {
            let v = v.trim_start_matches(['"', '\'']);
            assert!(
                !v.starts_with("http:") && !v.starts_with("https:") && !v.starts_with("//"),
                "external {attr}{}",
                &v[..v.len().min(80)]
            );
        }
    }
    let scripts: Vec<&str> = page
        .split("<script")
        .skip(1)
        .map(|s| s.split("</script>").next().unwrap())
        .collect();
    assert!(scripts.len() >= 3, "data, uPlot and the charts' script");
    for s in scripts {
        let code = s
            .trim_start_matches(|c| c != '>')
            .trim_start_matches('>')
            .trim_start();
        // uPlot's banner: `/*! https://github.com/leeoniya/uPlot (v1.6.32) */`.
        let code = match code.strip_prefix("/*!") {
            Some(rest) => rest.split_once("*/").map_or("", |(_, after)| after),
            None => code,
        };
        assert!(
            !code.contains("http://") && !code.contains("https://"),
            "a script names a URL"
        );
    }
    assert!(
        page.contains(r#"<meta http-equiv="Content-Security-Policy" content="default-src 'none';"#),
        "no Content Security Policy"
    );
}

/// The seconds drawn of `step`: its longest op series' (per_second::rates), else its cost
/// samples.
fn seconds(step: &StepResult) -> usize {
    step.per_second
        .total
        .ops
        .values()
        .map(|s| per_second::rates(&s.rows, step.duration_s).samples.len())
        .max()
        .unwrap_or_else(|| {
            step.efficiency
                .as_ref()
                .map_or(0, |e| e.per_second.host_cpu_s.len())
        })
}

fn close(got: &Value, want: f64) -> bool {
    // The page keeps 4 significant digits.
    got.as_f64()
        .is_some_and(|g| (g - want).abs() <= 1e-3 * want.abs() + 1e-9)
}

fn chart<'a>(tl: &'a Value, title: &str) -> Option<&'a Value> {
    tl["charts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["title"] == title)
}

fn series<'a>(chart: &'a Value, label: &str) -> &'a [Value] {
    chart["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap_or_else(|| panic!("no {label} in {}", chart["title"]))["values"]
        .as_array()
        .unwrap()
}

/// Checks the page's timelines against the run: a step's axis is its seconds, each op's rate
/// and largest response time one value per second drawn, and the host's CPU one per second
/// sampled.
fn check_timelines(run: &RunResult, timelines: &Value) -> usize {
    let tls = timelines.as_array().expect("timelines");
    assert_eq!(tls.len(), run.steps.len(), "a timeline per step");
    let mut charts = 0;
    for (tl, step) in tls.iter().zip(&run.steps) {
        let name = &step.name;
        assert_eq!(tl["step"], *name);
        let n = seconds(step);
        // (A step shorter than a second without ops, l.x here, has no per-second series.)
        let x = tl["x"].as_array().unwrap();
        assert_eq!(x.len(), n, "{name}: one point per second");
        for c in tl["charts"].as_array().unwrap() {
            charts += 1;
            for s in c["series"].as_array().unwrap() {
                assert_eq!(s["values"].as_array().unwrap().len(), n, "{name}: {s}");
            }
        }
        for (op, series_of) in &step.per_second.total.ops {
            if op == "getmin" {
                continue;
            }
            let rates = per_second::rates(&series_of.rows, step.duration_s);
            let drawn = series(chart(tl, "throughput").expect("throughput chart"), op);
            for (i, p) in rates.samples.iter().enumerate() {
                assert!(
                    close(&drawn[i], p.value.unwrap()),
                    "{name} {op}: second {i} drawn {}, measured {} rows over {} s",
                    drawn[i],
                    series_of.rows[i],
                    p.len
                );
            }
            assert!(drawn[rates.samples.len()..].iter().all(Value::is_null));
            let max = series(chart(tl, "response time (max; p95 dashed)").unwrap(), op);
            for (i, &m) in series_of
                .max_us
                .iter()
                .take(rates.samples.len())
                .enumerate()
            {
                if m == 0 {
                    assert!(max[i].is_null(), "{name} {op}: a gap at {i}");
                } else {
                    assert!(close(&max[i], m as f64), "{name} {op}: {i}: {}", max[i]);
                }
            }
        }
        let e = step.efficiency.as_ref().expect("efficiency");
        // A step shorter than a second has no sample between its start and its end.
        if e.per_second.host_cpu_s.is_empty() {
            continue;
        }
        let host = series(chart(tl, "CPU").expect("CPU chart"), "host");
        for (i, &v) in e.per_second.host_cpu_s.iter().take(n).enumerate() {
            assert!(close(&host[i], v), "{name} host CPU: second {i}");
        }
    }
    charts
}

/// Hovering one chart puts every chart of its step at the same second, each legend showing its
/// values there; a drag across one chart zooms them all to the same span (the probe of
/// [`check_in_chromium`]).
fn check_hover_and_zoom(probe: &Value) {
    let hover = &probe["hover"];
    let idx = hover["idx"].as_array().expect("a step to hover");
    assert!(idx.len() >= 5, "{probe}");
    assert!(
        idx[0].is_u64() && idx.iter().all(|i| *i == idx[0]),
        "{probe}"
    );
    for legend in hover["legends"].as_array().unwrap() {
        let values = legend.as_array().unwrap();
        assert!(
            values.iter().any(|v| v != "-" && v != ""),
            "{legend} in {probe}"
        );
    }
    let full = (
        hover["full"][0].as_f64().unwrap(),
        hover["full"][1].as_f64().unwrap(),
    );
    let zoom = probe["zoom"].as_array().unwrap();
    assert!(zoom.iter().all(|z| *z == zoom[0]), "{probe}");
    let (lo, hi) = (zoom[0][0].as_f64().unwrap(), zoom[0][1].as_f64().unwrap());
    assert!(
        full.0 < lo && lo < hi && hi < full.1,
        "zoomed to {lo}-{hi} of {full:?}"
    );
}

#[test]
fn a_default_runs_page_puts_the_verdict_first_charts_every_second_at_the_pages_width() {
    let bench = Bench::new();
    // Every default step (the page's height grows with them), short.
    let run = bench
        .run(&[
            "--l0-rows",
            "20000",
            "--l1-rows",
            "3000",
            "--query-seconds",
            "3",
        ])
        .result();
    assert_eq!(run.steps.len(), 10, "the default steps");
    let html_path = bench.path("one.html");
    cmd(
        &bench,
        &[
            "report",
            &run.run_id,
            "--format",
            "html",
            "--out",
            path_str(&html_path),
        ],
    )
    .assert_success();
    let page = fs::read_to_string(&html_path).unwrap();
    assert_offline(&page);

    // The verdict comes first: the identity line, then the verdict, one line per step, then
    // the charts; the other sections are collapsed.
    let at = |s: &str| {
        page.find(s)
            .unwrap_or_else(|| panic!("no {s:?} in the page"))
    };
    let identity = format!(
        "{} {} · host {} · 2 clients",
        run.environment.dbms.name, run.environment.dbms.version, run.environment.hostname
    );
    assert!(at(&identity) < at("id=\"verdict\""));
    assert!(at("id=\"verdict\"") < at("one line per step"));
    assert!(at("one line per step") < at("id=\"per-second\""));
    for s in ["Overview", "Efficiency", "DBMS counters"] {
        let summary = format!("<summary>{s}</summary>");
        assert!(at("id=\"per-second\"") < at(&summary), "{s} not collapsed");
    }
    assert!(page.contains("<details class=\"section\" id=\"response\">"));
    // The writer SLA of each of the six query steps as the run judged it (on a loaded host a
    // writer may miss its rate: the verdict then says FAIL, with the rate it reached).
    for step in ["qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000"] {
        let s = run.steps.iter().find(|s| s.name == step).unwrap();
        let sla = s.sla.as_ref().expect("a query step's SLA");
        let said = if sla.pass {
            format!("{step} pass (")
        } else {
            format!("{step} FAIL ")
        };
        assert!(page.contains(&said), "writer SLA of {step}: {sla:?}");
    }

    let json = page
        .split("<script type=\"application/json\" id=\"ibench-timelines\">")
        .nth(1)
        .and_then(|s| s.split("</script>").next())
        .expect("the timelines' JSON");
    let timelines: Value = serde_json::from_str(json).expect("timelines JSON");
    let charts = check_timelines(&run, &timelines);

    let probe = check_in_chromium(&bench, &html_path);
    if probe.is_null() {
        return;
    }
    let height = probe["height"].as_u64().unwrap();
    println!(
        "page of a default run: {height} px tall at 1,400 px wide; throughput charts {}, overview {}",
        probe["firsts"], probe["overview"]
    );
    // Each step's throughput and response time take the page's width (two 200 px charts,
    // the other figures beneath): about 600 px a step.
    assert!(height < 9_000, "{height} px tall: {probe}");
    // Readable: every step's throughput chart, and the whole run's, at least 800 px wide.
    let firsts = probe["firsts"].as_array().unwrap();
    assert!(firsts.len() >= 8, "a throughput chart per step: {probe}");
    for f in firsts.iter().chain([&probe["overview"]]) {
        assert!(
            f[0].as_f64().unwrap() >= 800.0,
            "a chart {f} narrower than 800 px: {probe}"
        );
    }
    // Every chart drawn: uPlot draws each on one canvas, and the overview on one more.
    let plots = probe["plots"].as_array().unwrap().len();
    assert_eq!(
        plots,
        charts + 1,
        "a uPlot chart per chart in the JSON, and the overview"
    );
    check_hover_and_zoom(&probe);
}

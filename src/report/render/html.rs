//! The self-contained HTML report: inline CSS, SVG and scripts, no network.
//!
//! The page opens with the verdict (`sections/verdict.rs`) and each step's per-second charts,
//! drawn by the embedded uPlot (`vendor/`, MIT) from the report's timelines (`timeline.rs`)
//! embedded as JSON; the other sections are collapsed (`<details>`) until opened. A Content
//! Security Policy in the page forbids loading anything from anywhere.
//!
//! Every string from runs (labels, settings, errors) reaches the page through minijinja's
//! HTML auto-escaping, or as JSON whose `<`, `>` and `&` are escaped; only the SVG charts,
//! which carry no user-given text, and the vendored script are inserted as is.

use anyhow::{Context, Result};
use minijinja::Environment;
use minijinja::value::{Serde, Value};
use serde::Serialize;

use super::Renderer;
use crate::report::charts::{self, Line};
use crate::report::measured::{EngineStatus, ProfileLink};
use crate::report::model::Report;
use crate::report::per_second;
use crate::report::sections::view::{self, ViewTable};

const PAGE: &str = include_str!("../templates/report.html");
const TABLE: &str = include_str!("../templates/table.html");
const SECTION: &str = include_str!("../templates/section.html");
/// uPlot 1.6.32 (MIT, unchanged; `vendor/README.md`): the per-second charts.
const UPLOT_JS: &str = include_str!("../vendor/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../vendor/uPlot.min.css");
/// Draws the timelines with uPlot.
const CHARTS_JS: &str = include_str!("../templates/charts.js");

/// Steps whose charts are shown open; a report with more (microbenchmarks: a step per
/// benchmark and client count) collapses them.
const MAX_OPEN_STEPS: usize = 12;

/// The sections shown open, after the verdict: the headline against the base, the throughput
/// matrix when configurations are compared, a versions study. The others are collapsed.
fn open_sections(report: &Report) -> Vec<&'static str> {
    if report.groups.len() > 1 {
        vec!["headline", "throughput", "micro", "versions"]
    } else {
        Vec::new()
    }
}

/// `value` as JSON that can sit inside a `<script>` element: `<`, `>` and `&` escaped, so no
/// label can close the element or open a comment.
fn script_json<T: Serialize>(value: &T) -> Result<String> {
    Ok(serde_json::to_string(value)?
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026"))
}

/// What the page's markup needs of a step's timeline (the series go in as JSON).
#[derive(Serialize)]
struct TimelineView<'a> {
    step: &'a str,
    charts: bool,
    flat_gauges: &'a [String],
}

fn timeline_views(report: &Report) -> Vec<TimelineView<'_>> {
    report
        .timelines
        .iter()
        .map(|t| TimelineView {
            step: &t.step,
            charts: !t.charts.is_empty(),
            flat_gauges: &t.flat_gauges,
        })
        .collect()
}

#[derive(Serialize)]
struct OpView {
    name: String,
    buckets: ViewTable,
    percentiles: ViewTable,
    chart: String,
}

#[derive(Serialize)]
struct StepView {
    name: String,
    ops: Vec<OpView>,
    /// `--profile` flame graphs of the step: run id and path (relative to the results
    /// store's directory).
    profiles: Vec<ProfileLink>,
    /// The engine's status at the step's end, per run and section.
    engine_status: Vec<EngineStatus>,
}

#[derive(Serialize)]
struct LegendItem {
    name: String,
    color: String,
}

fn step_views(report: &Report) -> Result<Vec<StepView>> {
    let mut out = Vec::new();
    for step in &report.step_reports {
        let mut ops = Vec::new();
        for (op, buckets, percentiles) in view::response_tables(report, step) {
            let lines: Vec<Line> = step
                .groups
                .iter()
                .enumerate()
                .filter_map(|(gi, g)| {
                    g.ops.get(&op).map(|a| Line {
                        color: gi,
                        points: a.curve.clone(),
                    })
                })
                .collect();
            // A curve needs ops enough to have percentiles (getmin runs once per step).
            let enough = step
                .groups
                .iter()
                .any(|g| g.ops.get(&op).is_some_and(|a| a.count >= 50));
            let chart = if enough {
                charts::percentile_chart(&format!("{} {op}: response time", step.name), &lines)?
            } else {
                String::new()
            };
            ops.push(OpView {
                name: op,
                buckets,
                percentiles,
                chart,
            });
        }
        let engine_status = step
            .groups
            .iter()
            .flat_map(|g| g.measured.engine_status.iter().cloned())
            .collect();
        let profiles = step
            .groups
            .iter()
            .flat_map(|g| g.measured.profiles.iter().cloned())
            .collect();
        out.push(StepView {
            name: step.name.clone(),
            ops,
            profiles,
            engine_status,
        });
    }
    Ok(out)
}

#[derive(Serialize)]
struct MicroChartsView {
    benchmark: String,
    charts: Vec<String>,
}

/// Throughput and p95 against the client count, per benchmark (micro runs only).
fn micro_charts(report: &Report) -> Result<Vec<MicroChartsView>> {
    if !crate::report::micro::is_micro(report) {
        return Ok(Vec::new());
    }
    Ok(crate::report::micro::charts(report)?
        .into_iter()
        .map(|c| MicroChartsView {
            benchmark: c.benchmark,
            charts: c.charts,
        })
        .collect())
}

/// The HTML renderer: one self-contained page.
pub struct Html;

impl Renderer for Html {
    fn render(&self, report: &Report) -> Result<String> {
        let mut env = Environment::new();
        env.add_template("report.html", PAGE)?;
        env.add_template("table.html", TABLE)?;
        env.add_template("section.html", SECTION)?;
        let title = if report.groups.len() <= 3 {
            report
                .groups
                .iter()
                .map(|g| g.name.as_str())
                .collect::<Vec<_>>()
                .join(" vs ")
        } else {
            format!(
                "{} configurations against {}",
                report.groups.len(),
                report.base
            )
        };
        let legend: Vec<LegendItem> = report
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| LegendItem {
                name: g.name.clone(),
                color: charts::css_color(i),
            })
            .collect();
        let (versions_chart, versions_legend) = match crate::report::versions::chart(report)? {
            Some((svg, legend)) => (svg, legend),
            None => (String::new(), Vec::new()),
        };
        let ctx = minijinja::context! {
            title => title,
            generated_at => report.generated_at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            version => env!("CARGO_PKG_VERSION"),
            base => report.base.clone(),
            legend => Value::from(Serde(&legend)),
            sections => Value::from(Serde(view::sections(report))),
            verdict => Value::from(Serde(crate::report::sections::verdict::section(report))),
            identities => (0..report.groups.len()).map(|gi| crate::report::sections::verdict::identity(report, gi)).collect::<Vec<_>>(),
            several => report.groups.len() > 1,
            open_sections => open_sections(report),
            charts_open => report.timelines.len() <= MAX_OPEN_STEPS,
            timelines => Value::from(Serde(timeline_views(report))),
            timelines_json => script_json(&report.timelines)?,
            uplot_js => UPLOT_JS,
            uplot_css => UPLOT_CSS,
            charts_js => CHARTS_JS,
            steps => Value::from(Serde(step_views(report)?)),
            micro_charts => Value::from(Serde(micro_charts(report)?)),
            min_partial_s => per_second::MIN_PARTIAL_S,
            versions_chart => versions_chart,
            versions_legend => Value::from(Serde(&versions_legend)),
        };
        env.get_template("report.html")?
            .render(ctx)
            .context("cannot render the HTML report")
    }
}

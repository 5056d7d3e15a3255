//! The self-contained HTML report: inline CSS and SVG, no scripts, no network.
//!
//! Every string from runs (labels, settings, errors) reaches the page through minijinja's
//! HTML auto-escaping; only the SVG charts, which carry no user-given text, are inserted as is.

use anyhow::{Context, Result};
use minijinja::Environment;
use minijinja::value::{Serde, Value};
use serde::Serialize;

use crate::report::charts::{self, Line};
use crate::report::gauges;
use crate::report::model::{Group, Report};
use crate::report::per_second;
use crate::report::view::{self, ViewTable};

const PAGE: &str = include_str!("templates/report.html");
const TABLE: &str = include_str!("templates/table.html");

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
    series: Vec<String>,
    /// Per-second charts of the DBMS's gauges.
    gauges: Vec<String>,
    /// Gauges that stayed zero (not drawn), comma-separated.
    flat_gauges: String,
    /// `--profile` flame graphs of the step: run id and path (relative to the results
    /// store's directory).
    profiles: Vec<ProfileLink>,
    /// The engine's status at the step's end, per run and section.
    engine_status: Vec<EngineStatus>,
}

/// One section of an engine's status report at a step's end, of one run.
#[derive(Serialize)]
struct EngineStatus {
    run: String,
    section: String,
    text: String,
}

#[derive(Serialize)]
struct ProfileLink {
    run: String,
    path: String,
}

#[derive(Serialize)]
struct LegendItem {
    name: String,
    color: String,
}

/// Per-second charts of one step: per op type, the rate and the largest, p95 and mean response
/// time in each second, one line per run (see [`per_second`] for what is drawn).
fn series_charts(report: &Report, groups: &[Group], step: &str) -> Result<Vec<String>> {
    let target = report
        .step_reports
        .iter()
        .find(|s| s.name == step)
        .and_then(|s| s.groups.iter().find_map(|g| g.sla.as_ref()))
        .map(|sla| sla.target);
    per_second::step_charts(groups, step, target)
        .iter()
        .map(|c| {
            let what = match c.kind {
                per_second::Kind::Rate => c.unit,
                per_second::Kind::MaxResponse => "max response time",
                per_second::Kind::P95Response => "p95 response time",
                per_second::Kind::MeanResponse => "mean response time",
                per_second::Kind::Gauge => c.unit,
            };
            charts::series_chart(&format!("{step} {}: {what}", c.op), c)
        })
        .collect()
}

/// Per-second charts of the step's DBMS gauges (`report::gauges`), and the names of the gauges
/// that stayed zero.
fn gauge_charts(groups: &[Group], step: &str) -> Result<(Vec<String>, Vec<String>)> {
    let (charts, flat) = gauges::gauge_charts(groups, step);
    let svgs = charts
        .iter()
        .map(|c| charts::series_chart(&format!("{step} {} ({})", c.op, c.unit), c))
        .collect::<Result<_>>()?;
    Ok((svgs, flat))
}

fn step_views(report: &Report, groups: &[Group]) -> Result<Vec<StepView>> {
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
        let (gauges, flat) = gauge_charts(groups, &step.name)?;
        let engine_status = groups
            .iter()
            .flat_map(|g| &g.runs)
            .filter_map(|r| Some((r, r.steps.iter().find(|s| s.name == step.name)?)))
            .flat_map(|(r, s)| {
                s.engine_status.iter().map(|(section, text)| EngineStatus {
                    run: r.run_id.clone(),
                    section: section.clone(),
                    text: text.clone(),
                })
            })
            .collect();
        let profiles = groups
            .iter()
            .flat_map(|g| &g.runs)
            .filter_map(|r| {
                let s = r.steps.iter().find(|s| s.name == step.name)?;
                Some(ProfileLink {
                    run: r.run_id.clone(),
                    path: s.profile.clone()?,
                })
            })
            .collect();
        out.push(StepView {
            name: step.name.clone(),
            ops,
            series: series_charts(report, groups, &step.name)?,
            gauges,
            flat_gauges: flat.join(", "),
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

/// Renders the report as one HTML page; `groups` are the ones the report was built from.
pub fn render(report: &Report, groups: &[Group]) -> Result<String> {
    let mut env = Environment::new();
    env.add_template("report.html", PAGE)?;
    env.add_template("table.html", TABLE)?;
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
        steps => Value::from(Serde(step_views(report, groups)?)),
        micro_charts => Value::from(Serde(micro_charts(report)?)),
        min_partial_s => per_second::MIN_PARTIAL_S,
        versions_chart => versions_chart,
        versions_legend => Value::from(Serde(&versions_legend)),
    };
    env.get_template("report.html")?
        .render(ctx)
        .context("cannot render the HTML report")
}

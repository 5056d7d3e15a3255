//! The data of the HTML report's interactive per-second charts: per step, one time axis (the
//! step's seconds) and the charts drawn on it, each series one value per second (`null` where
//! nothing was measured). The page draws them with uPlot from this data, embedded as JSON.
//!
//! Second `i` of a step covers `[i, i + 1)` since the step start and is drawn at `x = i`:
//! the rows (queries) completed in it over its real length and the largest response time of
//! those ops ([`per_second::rates`], [`per_second::maxima`]: a partial last second shorter
//! than [`per_second::MIN_PARTIAL_S`] is left out, ops after a query step's window are not
//! drawn), the host's, the DBMS's and ibench's CPU and the device's KB/s between the samples
//! taken at its start and its end (the report model's series, `seconds.rs`), the DBMS's RSS and gauges read at its end
//! (`report::gauges`: a `_total` gauge as its increase). Every second is kept: an hour is
//! 3,600 values a series, which uPlot draws at once.

use crate::report::charts::css_color;
use crate::report::gauges;
use crate::report::model::{StepReport, StepTimeline, TimeChart, TimeSeries};
use crate::report::per_second::{self, step_of_runs};
use crate::report::seconds::CostSpreads;
use crate::report::select::Group;
use crate::results::model::StepResult;

/// Who a series belongs to: the run (with its group's colour), or nobody when the report has
/// one run (series then coloured each their own).
struct Who<'a> {
    group: usize,
    run_id: String,
    name: String,
    step: &'a StepResult,
}

/// Rounded to 4 significant digits: the page carries every second, not every digit.
fn round4(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(3 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// `values` on an axis of `n` seconds: rounded, cut or padded with `None`.
fn on_axis(values: impl IntoIterator<Item = Option<f64>>, n: usize) -> Vec<Option<f64>> {
    let mut v: Vec<Option<f64>> = values.into_iter().take(n).map(|x| x.map(round4)).collect();
    v.resize(n, None);
    v
}

/// Builds series: one per (run, name) with `values`; coloured by the run's configuration
/// (a second name of a run dashed) when several runs, by the name's index otherwise.
struct Builder<'a> {
    runs: &'a [Who<'a>],
    n: usize,
    series: Vec<TimeSeries>,
}

impl Builder<'_> {
    fn push(&mut self, run: usize, name: &str, idx: usize, right: bool, v: Vec<Option<f64>>) {
        if !v.iter().any(|x| x.is_some_and(|x| x != 0.0)) {
            return;
        }
        let (label, color, dash) = if self.runs.len() == 1 {
            // Colour by what it is (an op keeps its colour from chart to chart).
            (name.to_string(), css_color(idx), false)
        } else {
            let who = &self.runs[run];
            (
                format!("{} {name}", who.name),
                css_color(who.group),
                idx > 0,
            )
        };
        self.series.push(TimeSeries {
            label,
            color,
            dash,
            right,
            values: on_axis(v, self.n),
        });
    }

    fn chart(&mut self, title: &str, unit: &str, right_unit: &str, log: bool) -> Option<TimeChart> {
        let series = std::mem::take(&mut self.series);
        (!series.is_empty()).then(|| TimeChart {
            title: title.to_string(),
            unit: unit.to_string(),
            right_unit: if series.iter().any(|s| s.right) {
                right_unit.to_string()
            } else {
                String::new()
            },
            log,
            series,
        })
    }
}

/// The step's main op: queries where there are any, else the first op.
fn main_op(ops: &[&String]) -> Option<String> {
    ops.iter()
        .find(|o| o.as_str() == "query")
        .or(ops.first())
        .map(|o| o.to_string())
}

/// Rates and largest response times per op, one chart each.
fn op_charts(b: &mut Builder, out: &mut Vec<TimeChart>) {
    let mut ops: Vec<&String> = b
        .runs
        .iter()
        .flat_map(|w| w.step.per_second.total.ops.keys())
        .collect();
    ops.sort();
    ops.dedup();
    // getmin runs once at a step's start: its one op is in the tables, not a series.
    ops.retain(|o| o.as_str() != "getmin");
    let main = main_op(&ops);
    let unit = if main.as_deref() == Some("query") {
        "queries/s"
    } else {
        "rows/s"
    };
    for (ri, w) in b.runs.iter().enumerate() {
        for (oi, op) in ops.iter().enumerate() {
            let Some(s) = w.step.per_second.total.ops.get(*op) else {
                continue;
            };
            let r = per_second::rates(&s.rows, w.step.duration_s);
            let right = Some(op.as_str()) != main.as_deref() && unit == "queries/s";
            let v = r.samples.iter().map(|p| p.value).collect();
            b.push(ri, op, oi, right, v);
        }
    }
    // The background writer's target rate, dashed, where its rates are drawn.
    let target = b.runs.iter().find_map(|w| w.step.sla.as_ref());
    if let Some(sla) = target.filter(|_| !b.series.is_empty()) {
        b.series.push(TimeSeries {
            label: "writer target".to_string(),
            color: "#555555".to_string(),
            dash: true,
            right: unit == "queries/s",
            values: vec![Some(round4(sla.target_inserts_per_s)); b.n],
        });
    }
    out.extend(b.chart("throughput", unit, "rows/s", false));
    for (ri, w) in b.runs.iter().enumerate() {
        for (oi, op) in ops.iter().enumerate() {
            let Some(s) = w.step.per_second.total.ops.get(*op) else {
                continue;
            };
            let m = per_second::maxima(&s.max_us, w.step.duration_s);
            let before = b.series.len();
            b.push(
                ri,
                op,
                oi,
                false,
                m.samples.iter().map(|p| p.value).collect(),
            );
            // Its p95 in each second, dashed in the same colour (where the run recorded it).
            let Some(max) = b.series.get(before).map(|l| l.color.clone()) else {
                continue;
            };
            let before = b.series.len();
            let p = per_second::maxima(&s.p95_us, w.step.duration_s);
            let p95 = format!("{op} p95");
            b.push(
                ri,
                &p95,
                oi,
                false,
                p.samples.iter().map(|p| p.value).collect(),
            );
            if b.series.len() > before
                && let Some(l) = b.series.last_mut()
            {
                (l.color, l.dash) = (max, true);
            }
        }
    }
    out.extend(b.chart("response time (max; p95 dashed)", "us", "", true));
}

/// Host, DBMS and client CPU, device KB/s and the DBMS's RSS: each run's per-second series
/// as the report model holds them (`seconds.rs`, `measured.seconds`), drawn in cores, KB/s
/// and MB.
fn cost_charts(b: &mut Builder, seconds: &[&CostSpreads], out: &mut Vec<TimeChart>) {
    type Pick = fn(&CostSpreads) -> Vec<f64>;
    /// A chart: title, unit, and its series by name.
    type CostChart<'a> = (&'a str, &'a str, &'a [(&'a str, Pick)]);
    let charts: [CostChart; 3] = [
        (
            "CPU",
            "cores",
            &[
                ("host", |s| {
                    let per_core = 100.0 / s.cores.max(1) as f64;
                    s.series.host_cpu_pct.iter().map(|x| x / per_core).collect()
                }),
                ("DBMS", |s| {
                    s.series.dbms_cpu_pct.iter().map(|x| x / 100.0).collect()
                }),
                ("client", |s| {
                    s.series.client_cpu_pct.iter().map(|x| x / 100.0).collect()
                }),
            ],
        ),
        (
            "device IO",
            "KB/s",
            &[
                ("read", |s| {
                    s.series.read_mb_s.iter().map(|x| x * 1024.0).collect()
                }),
                ("written", |s| {
                    s.series.write_mb_s.iter().map(|x| x * 1024.0).collect()
                }),
            ],
        ),
        ("DBMS RSS", "MB", &[("RSS", |s| s.series.rss_mib.clone())]),
    ];
    for (title, unit, picks) in charts {
        for (ri, w) in b.runs.iter().enumerate() {
            let Some(s) = seconds.iter().find(|s| s.run_id == w.run_id) else {
                continue;
            };
            for (pi, (name, pick)) in picks.iter().enumerate() {
                let v = pick(s).into_iter().map(Some).collect();
                b.push(ri, name, pi, false, v);
            }
        }
        out.extend(b.chart(title, unit, "", false));
    }
}

/// One chart per DBMS gauge that moved (`report::gauges`).
/// Returns the gauges left out, zero throughout.
fn gauge_charts(
    groups: &[Group],
    step: &str,
    b: &mut Builder,
    out: &mut Vec<TimeChart>,
) -> Vec<String> {
    let (charts, flat) = gauges::gauge_charts(groups, step);
    for c in charts {
        for line in &c.lines {
            let Some(ri) = b.runs.iter().position(|w| w.run_id == line.run_id) else {
                continue;
            };
            let v = line.samples.iter().map(|s| s.value).collect();
            b.push(ri, &c.op, 0, false, v);
        }
        let unit = if gauges::is_cumulative(&c.op) {
            "per second"
        } else {
            "level"
        };
        out.extend(b.chart(&c.op, unit, "", false));
    }
    flat
}

/// The seconds on a step's axis: the longest run's drawn seconds (its ops' rates, else its
/// cost samples).
fn seconds(runs: &[Who], cost: &[&CostSpreads]) -> usize {
    runs.iter()
        .map(|w| {
            let ops = w
                .step
                .per_second
                .total
                .ops
                .values()
                .map(|s| per_second::rates(&s.rows, w.step.duration_s).samples.len())
                .max();
            ops.unwrap_or_else(|| {
                cost.iter()
                    .find(|s| s.run_id == w.run_id)
                    .map_or(0, |s| s.seconds)
            })
        })
        .max()
        .unwrap_or(0)
}

/// The timelines of the report's `steps` over the runs of `groups` (the groups the steps
/// were built from): rates and response times from the runs' per-second series, cost from
/// the model's (`measured.seconds`).
pub fn build(groups: &[Group], steps: &[StepReport]) -> Vec<StepTimeline> {
    steps
        .iter()
        .map(|sr| {
            let step = &sr.name;
            let runs: Vec<Who> = step_of_runs(groups, step)
                .into_iter()
                .map(|(gi, id, s)| {
                    let g = &groups[gi];
                    // A repeat is named by its place among its configuration's runs (the
                    // overview lists their ids): `base #2`.
                    let name = match g.runs.iter().position(|r| r.run_id == id) {
                        Some(k) if g.runs.len() > 1 => format!("{} #{}", g.name, k + 1),
                        _ => g.name.clone(),
                    };
                    Who {
                        group: gi,
                        run_id: id.to_string(),
                        name,
                        step: s,
                    }
                })
                .collect();
            let cost: Vec<&CostSpreads> =
                sr.groups.iter().flat_map(|g| &g.measured.seconds).collect();
            let n = seconds(&runs, &cost);
            let mut b = Builder {
                runs: &runs,
                n,
                series: Vec::new(),
            };
            let mut charts = Vec::new();
            op_charts(&mut b, &mut charts);
            cost_charts(&mut b, &cost, &mut charts);
            let flat_gauges = gauge_charts(groups, step, &mut b, &mut charts);
            StepTimeline {
                step: step.clone(),
                x: (0..n).map(|i| i as f64).collect(),
                charts,
                flat_gauges,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::model::{OpSeries, RunResult, Sla};

    #[test]
    fn values_keep_four_digits_and_fit_the_axis() {
        assert_eq!(round4(123_456.0), 123_500.0);
        assert_eq!(round4(0.012_345), 0.012_35);
        assert_eq!(round4(0.0), 0.0);
        assert_eq!(
            on_axis([Some(1.0), None, Some(3.0), Some(4.0)], 3),
            [Some(1.0), None, Some(3.0)]
        );
        assert_eq!(on_axis([Some(1.0)], 2), [Some(1.0), None]);
    }

    /// A run whose one step is a query step of `seconds`: queries at 1,000/s and the writer's
    /// inserts at 100/s, a second without an insert at second 1.
    fn query_run(id: &str, seconds: usize) -> RunResult {
        let text = include_str!("../../tests/fixtures/results-v1.json");
        let mut run: RunResult = serde_json::from_str(text).unwrap();
        run.run_id = id.to_string();
        let step = &mut run.steps[0];
        step.name = "qr100".to_string();
        step.duration_s = seconds as f64;
        let series = |rate: u64| OpSeries {
            ops: vec![rate; seconds],
            rows: vec![rate; seconds],
            max_us: vec![500; seconds],
            ..Default::default()
        };
        let mut inserts = series(100);
        (inserts.rows[1], inserts.ops[1], inserts.max_us[1]) = (0, 0, 0);
        let mut queries = series(1_000);
        queries.p95_us = vec![300; seconds];
        step.per_second.total.ops = [
            ("query".to_string(), queries),
            ("insert".to_string(), inserts),
        ]
        .into();
        step.sla = Some(Sla {
            target_inserts_per_s: 100.0,
            missed_insert_batches: 0,
            inserts_per_s: 75.0,
            deletes_per_s: 0.0,
            ratio: 0.75,
            seconds_met_share: 0.75,
            pass: false,
        });
        run
    }

    /// The timelines of the report over `groups`, its one step `qr100` built as the model's
    /// build does (`build.rs`).
    fn timelines(groups: &[Group]) -> Vec<StepTimeline> {
        let step = StepReport {
            name: "qr100".to_string(),
            groups: groups
                .iter()
                .map(|g| crate::report::step_figures::group_step(g, "qr100").unwrap())
                .collect(),
        };
        build(groups, &[step])
    }

    #[test]
    fn a_query_step_draws_the_writer_on_the_right_and_every_second() {
        let groups = [Group {
            name: "base".to_string(),
            runs: vec![query_run("r1", 4)],
        }];
        let tl = &timelines(&groups)[0];
        assert_eq!(tl.x, [0.0, 1.0, 2.0, 3.0]);
        let rates = &tl.charts[0];
        assert_eq!(
            (rates.title.as_str(), rates.unit.as_str()),
            ("throughput", "queries/s")
        );
        assert_eq!(rates.right_unit, "rows/s");
        let by = |label: &str| rates.series.iter().find(|s| s.label == label).unwrap();
        assert!(!by("query").right && by("insert").right && by("writer target").right);
        assert_eq!(by("query").values, [Some(1_000.0); 4]);
        assert_eq!(
            by("insert").values,
            [Some(100.0), Some(0.0), Some(100.0), Some(100.0)],
            "no insert in second 1 is a real 0"
        );
        let max = &tl.charts[1];
        assert!(max.log);
        let insert_max = &max
            .series
            .iter()
            .find(|s| s.label == "insert")
            .unwrap()
            .values;
        assert_eq!(insert_max[1], None, "a second without an op is a gap");
        let by = |label: &str| max.series.iter().find(|s| s.label == label).unwrap();
        assert_eq!(by("query p95").values, [Some(300.0); 4]);
        assert!(by("query p95").dash && !by("query").dash);
        assert_eq!(by("query p95").color, by("query").color, "an op's colour");
        assert!(
            max.series.iter().all(|s| s.label != "insert p95"),
            "none recorded"
        );
    }

    #[test]
    fn runs_of_several_configurations_are_named_and_padded_to_the_longest() {
        let groups = [
            Group {
                name: "a".to_string(),
                runs: vec![query_run("r1", 4), query_run("r2", 3)],
            },
            Group {
                name: "b".to_string(),
                runs: vec![query_run("r3", 4)],
            },
        ];
        let tl = &timelines(&groups)[0];
        assert_eq!(tl.x.len(), 4);
        let rates = &tl.charts[0];
        let labels: Vec<&str> = rates.series.iter().map(|s| s.label.as_str()).collect();
        assert!(
            labels.contains(&"a #2 query") && labels.contains(&"b query"),
            "{labels:?}"
        );
        let a2 = rates
            .series
            .iter()
            .find(|s| s.label == "a #2 query")
            .unwrap();
        assert_eq!(a2.values[3], None, "a shorter run is padded");
        let b = rates.series.iter().find(|s| s.label == "b query").unwrap();
        assert_eq!(b.color, css_color(1), "a configuration's colour");
    }
}

//! Reports over microbenchmark runs (steps `<benchmark>.c<clients>`): one table per figure
//! ([`MICRO`]: QPS, rows/s, p95, cpu/o, cs/o, rKB/o, wKB/o) with a row per benchmark and
//! client count and a column per configuration, the base's absolute and the others' relative
//! to it (marked where the runs support a change, marks.rs); and, per benchmark, throughput-vs-clients and
//! p95-vs-clients charts with one line per configuration.

pub use crate::report::names::parse_step;
use anyhow::Result;

use crate::report::cells::{Cell, ViewTable, fmt_value, incomplete_note, relative_cell};
use crate::report::charts::{self, ClientsAxis, Line};
use crate::report::model::{MICRO, Report, StepReport};

/// Whether the report is over microbenchmark runs: every step but `prepare` is one.
pub fn is_micro(r: &Report) -> bool {
    are_micro(&r.steps)
}

/// Whether `steps` are a microbenchmark's (every step but `prepare` is `<benchmark>.c<n>`).
pub fn are_micro(steps: &[String]) -> bool {
    let mut steps = steps.iter().filter(|s| *s != "prepare").peekable();
    steps.peek().is_some() && steps.all(|s| parse_step(s).is_some())
}

/// The benchmark steps, in report order.
fn benchmark_steps(r: &Report) -> Vec<(&str, usize, &StepReport)> {
    r.step_reports
        .iter()
        .filter_map(|s| parse_step(&s.name).map(|(b, c)| (b, c, s)))
        .collect()
}

/// The kinds of microbenchmark a report groups its rows by, as the reference harness's
/// summaries do (mdcallag's sysbench reports): point queries, range queries without
/// aggregation, range queries with aggregation, writes.
pub const CLASSES: [&str; 4] = [
    "point queries",
    "range queries without aggregation",
    "range queries with aggregation",
    "writes",
];

/// Which of [`CLASSES`] `benchmark` (a step's benchmark name, `.pre` included) is in: the
/// read-only transactions (`read-only_range=N`, `read-only-sum`, ...) aggregate, the ranges
/// and `scan` do not, and every benchmark that writes (`read-write` too) is a write.
pub fn class(benchmark: &str) -> usize {
    let name = benchmark.trim_end_matches(crate::workload::micro::PRE_SUFFIX);
    let writes = crate::workload::micro::find(name).is_some_and(|b| b.writes);
    if writes || name.starts_with("read-write") {
        3
    } else if name.starts_with("read-only") {
        2
    } else if name.starts_with("range-") || name == "scan" {
        1
    } else {
        0
    }
}

/// One table per figure that some step has; its rows grouped by [`class`] (a row naming the
/// class before each group, when there are several), in run order within a class.
pub fn tables(r: &Report) -> Vec<ViewTable> {
    let mut steps = benchmark_steps(r);
    steps.sort_by_key(|(b, _, _)| class(b));
    let classes = {
        let mut c: Vec<usize> = steps.iter().map(|(b, _, _)| class(b)).collect();
        c.dedup();
        c.len()
    };
    let mut out = Vec::new();
    for d in MICRO {
        if !steps
            .iter()
            .any(|(_, _, s)| s.groups.iter().any(|g| g.micro.contains_key(d.key)))
        {
            continue;
        }
        let mut header = vec!["benchmark".to_string(), "clients".to_string()];
        for g in &r.groups {
            header.push(if g.is_base {
                g.name.clone()
            } else {
                format!("{} (rel.)", g.name)
            });
        }
        let mut rows = Vec::new();
        let mut last = None;
        for (benchmark, clients, s) in &steps {
            if classes > 1 && last != Some(class(benchmark)) {
                last = Some(class(benchmark));
                let mut row = vec![Cell::marked(CLASSES[class(benchmark)], "group")];
                row.resize(header.len(), Cell::plain(""));
                rows.push(row);
            }
            rows.push({
                let mut row = vec![Cell::plain(*benchmark), Cell::plain(clients.to_string())];
                for (gi, g) in r.groups.iter().enumerate() {
                    let gs = &s.groups[gi];
                    let stat = gs.micro.get(d.key);
                    let mut cell = if g.is_base {
                        stat.map(|st| Cell::stat(st, d.digits))
                            .unwrap_or_else(|| Cell::plain("-"))
                    } else {
                        let mut c = relative_cell(stat, d.better, false);
                        if let Some(st) = stat {
                            // The value itself, under its ratio (before "too noisy").
                            let value = fmt_value(st.median, d.digits);
                            c.sub = match c.sub.as_str() {
                                "" => value.clone(),
                                why => format!("{value}, {why}"),
                            };
                            c.title = format!("{value} {}: {}", d.label, c.title);
                        }
                        c
                    };
                    cell.text.push_str(&incomplete_note(gs));
                    row.push(cell);
                }
                row
            });
        }
        out.push(ViewTable {
            title: if r.groups.len() > 1 {
                format!(
                    "{}: {} absolute, the others relative to it (median / base median)",
                    d.label, r.base
                )
            } else {
                d.label.to_string()
            },
            header,
            rows,
        });
    }
    out
}

/// One benchmark's charts.
pub struct BenchmarkCharts {
    /// The benchmark.
    pub benchmark: String,
    /// Throughput vs clients, then p95 vs clients (SVG).
    pub charts: Vec<String>,
}

/// Per benchmark, in report order: ops/s and p95 response time against the client count.
pub fn charts(r: &Report) -> Result<Vec<BenchmarkCharts>> {
    let steps = benchmark_steps(r);
    let mut names: Vec<&str> = Vec::new();
    for (b, _, _) in &steps {
        if !names.contains(b) {
            names.push(b);
        }
    }
    let mut out = Vec::new();
    for name in names {
        let mine: Vec<(usize, &StepReport)> = steps
            .iter()
            .filter(|(b, _, _)| *b == name)
            .map(|(_, c, s)| (*c, *s))
            .collect();
        let lines = |key: &str, scale: f64| -> Vec<Line> {
            (0..r.groups.len())
                .map(|gi| {
                    let mut points: Vec<(f64, f64)> = mine
                        .iter()
                        .filter_map(|(c, s)| {
                            let v = s.groups[gi].micro.get(key)?.median * scale;
                            Some((*c as f64, v))
                        })
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    Line { color: gi, points }
                })
                .filter(|l| !l.points.is_empty())
                .collect()
        };
        let mut svgs = Vec::new();
        let qps = lines("qps", 1.0);
        if !qps.is_empty() {
            svgs.push(charts::clients_chart(
                &format!("{name}: throughput"),
                "ops/s",
                ClientsAxis::Rate,
                &qps,
            )?);
        }
        let p95 = lines("p95_ms", 1000.0);
        if !p95.is_empty() {
            svgs.push(charts::clients_chart(
                &format!("{name}: p95 response time"),
                "p95",
                ClientsAxis::Micros,
                &p95,
            )?);
        }
        out.push(BenchmarkCharts {
            benchmark: name.to_string(),
            charts: svgs,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_parse() {
        assert_eq!(parse_step("point-query.c8"), Some(("point-query", 8)));
        assert_eq!(
            parse_step("read-only_range=100.c128"),
            Some(("read-only_range=100", 128))
        );
        assert_eq!(parse_step("prepare"), None);
        assert_eq!(parse_step("l.i0"), None);
        assert_eq!(parse_step("qr100"), None);
        assert_eq!(parse_step("x.c"), None);
        assert_eq!(parse_step(".c2"), None);
    }

    #[test]
    fn benchmarks_fall_in_the_reference_summaries_classes() {
        let of = |b: &str| CLASSES[class(b)];
        for b in [
            "point-query",
            "point-query.pre",
            "hot-points",
            "points-covered-si",
        ] {
            assert_eq!(of(b), "point queries", "{b}");
        }
        assert_eq!(of("random-points_range=100"), "point queries");
        for b in [
            "range-covered-pk_range=10",
            "range-notcovered-si_range=10",
            "scan",
        ] {
            assert_eq!(of(b), "range queries without aggregation", "{b}");
        }
        for b in ["read-only_range=10", "read-only-sum", "read-only-count.pre"] {
            assert_eq!(of(b), "range queries with aggregation", "{b}");
        }
        for b in [
            "update-index",
            "insert",
            "delete",
            "write-only",
            "read-write_range=10",
        ] {
            assert_eq!(of(b), "writes", "{b}");
        }
        // Every registered benchmark has a class that says what it does.
        for b in crate::workload::micro::BENCHMARKS {
            assert_eq!(
                class(b.name) == 3,
                b.writes || b.name.starts_with("read-write")
            );
        }
    }
}

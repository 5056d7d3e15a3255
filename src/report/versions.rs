//! Studies across versions ("perf over time"): when a report's configurations are one DBMS at
//! several versions, each step's throughput with the versions as columns, in version order,
//! relative to the base version; and a chart of that relative throughput per step across the
//! versions (docs/versions.md). The study's section is `sections/versions.rs`.

pub use crate::report::names::short_version;
use std::cmp::Ordering;

use anyhow::Result;
use plotters::prelude::*;

use crate::report::cells;
use crate::report::charts::{self, axis_rate};
use crate::report::model::Report;

/// Numeric order of versions (`9.6` < `13.2` < `13.10`).
pub fn version_order(a: &str, b: &str) -> Ordering {
    let key = |v: &str| -> Vec<u64> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    key(a).cmp(&key(b))
}

/// One column of a versions study: a configuration, in version order.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Index of the configuration in the report.
    pub group: usize,
    /// Its version.
    pub version: String,
    /// Column header: the version, with the configuration when versions repeat.
    pub header: String,
}

/// The columns when the report is a versions study: every configuration is the same DBMS,
/// at two or more versions. Ordered by version (then report order).
pub fn columns(r: &Report) -> Option<Vec<Column>> {
    let first = r.groups.first()?;
    if r.groups
        .iter()
        .any(|g| g.dbms_name != first.dbms_name || g.version.is_empty())
    {
        return None;
    }
    let mut cols: Vec<Column> = r
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| Column {
            group: i,
            version: g.version.clone(),
            header: g.version.clone(),
        })
        .collect();
    let mut distinct: Vec<&str> = cols.iter().map(|c| c.version.as_str()).collect();
    distinct.sort_by(|a, b| version_order(a, b));
    distinct.dedup();
    if distinct.len() < 2 {
        return None;
    }
    let repeated = distinct.len() < cols.len();
    if repeated {
        for c in &mut cols {
            c.header = format!("{} {}", c.version, r.groups[c.group].name);
        }
    }
    cols.sort_by(|a, b| version_order(&a.version, &b.version).then(a.group.cmp(&b.group)));
    Some(cols)
}

/// The relative throughput of each step at each column (`None` where a figure is missing);
/// rows follow the report's steps.
fn relative(r: &Report, cols: &[Column]) -> Vec<(String, Vec<Option<f64>>)> {
    r.step_reports
        .iter()
        .map(|s| {
            let def = cells::primary(s);
            let values = cols
                .iter()
                .map(|c| {
                    let g = &s.groups[c.group];
                    if r.groups[c.group].is_base {
                        return def.and_then(|d| g.throughput.get(d.key)).map(|_| 1.0);
                    }
                    def.and_then(|d| g.throughput.get(d.key))
                        .and_then(|st| st.relative)
                })
                .collect();
            (s.name.clone(), values)
        })
        .collect()
}

/// One line of the chart, for the legend beside it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LegendItem {
    /// The step.
    pub name: String,
    /// Its CSS colour.
    pub color: String,
    /// Drawn dashed (the palette's second round).
    pub dashed: bool,
}

/// Chart size, pixels.
const SIZE: (u32, u32) = (760, 380);

/// The "perf over time" chart: relative throughput of each step (y, the base version at 1)
/// across the versions in order (x); with its legend. `None` when the report is not a
/// versions study. The SVG holds no user-given text: the axis names versions as numbers.
pub fn chart(r: &Report) -> Result<Option<(String, Vec<LegendItem>)>> {
    let Some(cols) = columns(r) else {
        return Ok(None);
    };
    let rows = relative(r, &cols);
    let values = || rows.iter().flat_map(|(_, v)| v.iter().flatten().copied());
    let top = values().fold(1.0f64, f64::max) * 1.1;
    let bottom = (values().fold(1.0f64, f64::min) * 0.9).max(0.0);
    let n = cols.len();
    let labels: Vec<String> = cols.iter().map(|c| c.version.clone()).collect();
    let palette = charts::PALETTE.len();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(10)
            .margin_right(30)
            .caption(
                "throughput relative to the base version",
                ("sans-serif", 15),
            )
            .x_label_area_size(36)
            .y_label_area_size(56)
            .build_cartesian_2d((0..n as i32 - 1).into_segmented(), bottom..top)
            .map_err(plot_err)?;
        ctx.configure_mesh()
            .axis_desc_style(("sans-serif", 12))
            .x_desc("version")
            .y_desc("relative throughput")
            .x_labels(n)
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    labels.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .y_label_formatter(&|v| axis_rate(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(plot_err)?;
        ctx.draw_series(DashedLineSeries::new(
            [(SegmentValue::Exact(0), 1.0), (SegmentValue::Last, 1.0)],
            6,
            4,
            BLACK.mix(0.6).stroke_width(1),
        ))
        .map_err(plot_err)?;
        for (i, (_, v)) in rows.iter().enumerate() {
            let (cr, cg, cb) = charts::PALETTE[i % palette];
            let color = RGBColor(cr, cg, cb);
            let points: Vec<(SegmentValue<i32>, f64)> = v
                .iter()
                .enumerate()
                .filter_map(|(x, y)| Some((SegmentValue::CenterOf(x as i32), (*y)?)))
                .collect();
            if (i / palette).is_multiple_of(2) {
                ctx.draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                    .map_err(plot_err)?;
            } else {
                ctx.draw_series(DashedLineSeries::new(
                    points.clone(),
                    8,
                    4,
                    color.stroke_width(2),
                ))
                .map_err(plot_err)?;
            }
            ctx.draw_series(
                points
                    .iter()
                    .map(|p| Circle::new(p.clone(), 3, color.filled())),
            )
            .map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    let legend = rows
        .iter()
        .enumerate()
        .map(|(i, (name, _))| LegendItem {
            name: name.clone(),
            color: charts::css_color(i),
            dashed: i / palette % 2 == 1,
        })
        .collect();
    Ok(Some((svg, legend)))
}

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("cannot draw chart: {e:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_what_the_dbms_reports() {
        assert_eq!(
            short_version("PostgreSQL 13.23 on x86_64-pc-linux-gnu, compiled by gcc"),
            "13.23"
        );
        assert_eq!(
            short_version("PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64"),
            "15.14"
        );
        assert_eq!(short_version("10.11.6-MariaDB-0+deb12u1"), "10.11.6");
        assert_eq!(short_version("3.45.1"), "3.45.1");
        assert_eq!(short_version("PostgreSQL 18beta1"), "");
    }

    #[test]
    fn versions_order_numerically() {
        let mut v = vec!["13.10", "9.6", "13.2", "18.4", "12.22"];
        v.sort_by(|a, b| version_order(a, b));
        assert_eq!(v, ["9.6", "12.22", "13.2", "13.10", "18.4"]);
    }
}

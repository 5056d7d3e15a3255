//! SVG charts for the HTML report, drawn with plotters' SVG backend (no fonts, no network).
//!
//! Charts carry no user-given text: series are told apart by colour, and the legend is HTML
//! next to the chart, so labels are escaped once, by the template.

use anyhow::{Result, anyhow};
use plotters::coord::combinators::IntoLogRange;
use plotters::prelude::*;

use crate::output::format::micros;

/// Series colours; group i of the report is drawn in `PALETTE[i % len]`.
pub const PALETTE: [(u8, u8, u8); 8] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (255, 127, 14),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (23, 190, 207),
];

/// The CSS colour of group `i`.
pub fn css_color(i: usize) -> String {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Width and height of every chart, pixels.
pub const SIZE: (u32, u32) = (560, 260);

/// Most points drawn per line; longer series are reduced to this many buckets.
pub const MAX_POINTS: usize = 1500;

/// One line of a chart.
pub struct Line {
    /// Colour index (the group).
    pub color: usize,
    /// Points, x ascending.
    pub points: Vec<(f64, f64)>,
}

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("cannot draw chart: {e:?}")
}

/// Reduces a per-second series to at most [`MAX_POINTS`] points: the mean of each bucket
/// (rates) or its maximum (`keep_max`, response times), so stalls stay visible.
pub fn reduce(values: &[f64], keep_max: bool) -> Vec<(f64, f64)> {
    let per = values.len().div_ceil(MAX_POINTS).max(1);
    values
        .chunks(per)
        .enumerate()
        .map(|(i, c)| {
            let v = if keep_max {
                c.iter().copied().fold(0.0, f64::max)
            } else {
                c.iter().sum::<f64>() / c.len() as f64
            };
            ((i * per) as f64, v)
        })
        .collect()
}

/// A per-second chart: seconds on x, `y_desc` on y (log scale with `log_y`), and an optional
/// dashed target line.
pub fn series_chart(
    title: &str,
    y_desc: &str,
    lines: &[Line],
    target: Option<f64>,
    log_y: bool,
) -> Result<String> {
    let x_max = lines
        .iter()
        .flat_map(|l| l.points.last().map(|p| p.0))
        .fold(1.0, f64::max)
        + 1.0;
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .chain(target)
        .fold(0.0, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut builder = ChartBuilder::on(&root);
        builder
            .margin(8)
            .margin_right(24)
            .caption(title, ("sans-serif", 15))
            .x_label_area_size(32)
            .y_label_area_size(64);
        if log_y {
            let top = (y_max * 2.0).max(10.0);
            let mut chart = builder
                .build_cartesian_2d(0f64..x_max, (1f64..top).log_scale())
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .x_desc("seconds")
                .y_desc(y_desc)
                .y_label_formatter(&|v| micros(*v as u64))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(plot_err)?;
            for l in lines {
                let pts = l.points.iter().map(|&(x, y)| (x, y.max(1.0)));
                chart
                    .draw_series(LineSeries::new(pts, color(l.color).stroke_width(1)))
                    .map_err(plot_err)?;
            }
        } else {
            let top = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
            let mut chart = builder
                .build_cartesian_2d(0f64..x_max, 0f64..top)
                .map_err(plot_err)?;
            chart
                .configure_mesh()
                .x_desc("seconds")
                .y_desc(y_desc)
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(plot_err)?;
            for l in lines {
                chart
                    .draw_series(LineSeries::new(
                        l.points.iter().copied(),
                        color(l.color).stroke_width(1),
                    ))
                    .map_err(plot_err)?;
            }
            if let Some(t) = target {
                chart
                    .draw_series(DashedLineSeries::new(
                        [(0.0, t), (x_max, t)],
                        6,
                        4,
                        BLACK.stroke_width(1),
                    ))
                    .map_err(plot_err)?;
            }
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

fn percentile_label(x: f64) -> String {
    let q = 100.0 * (1.0 - 10f64.powf(-x));
    let s = format!("{q:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// A response-time percentile chart: percentile on a log(1/(1-q)) axis (50%, 90%, 99% ...),
/// response time on a log axis. `lines` hold `(quantile, microseconds)`.
pub fn percentile_chart(title: &str, lines: &[Line]) -> Result<String> {
    let y_max = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(10.0, f64::max);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .margin_right(24)
            .caption(title, ("sans-serif", 15))
            .x_label_area_size(32)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..5f64, (1f64..y_max * 2.0).log_scale())
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("percentile")
            .y_desc("response time")
            .x_labels(6)
            .x_label_formatter(&|x| percentile_label(*x))
            .y_label_formatter(&|v| micros(*v as u64))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(plot_err)?;
        for l in lines {
            let pts = l
                .points
                .iter()
                .filter(|(q, _)| *q < 1.0)
                .map(|&(q, us)| (-(1.0 - q).log10(), us.max(1.0)));
            chart
                .draw_series(LineSeries::new(pts, color(l.color).stroke_width(2)))
                .map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_keeps_short_series_and_buckets_long_ones() {
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(reduce(&v, false).len(), 10);
        let long: Vec<f64> = (0..(MAX_POINTS * 3)).map(|i| (i % 3) as f64).collect();
        let r = reduce(&long, true);
        assert_eq!(r.len(), MAX_POINTS);
        assert!(r.iter().all(|p| p.1 == 2.0));
        let r = reduce(&long, false);
        assert!(r.iter().all(|p| (p.1 - 1.0).abs() < 1e-9));
    }

    #[test]
    fn charts_are_svg_with_lines() {
        let lines = [Line {
            color: 0,
            points: vec![(0.0, 10.0), (1.0, 20.0), (2.0, 15.0)],
        }];
        let svg = series_chart("l.i0 insert", "rows/s", &lines, Some(12.0), false).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("<polyline"));
        let p = percentile_chart(
            "p",
            &[Line {
                color: 1,
                points: vec![(0.5, 100.0), (0.9, 200.0), (0.99, 5000.0)],
            }],
        )
        .unwrap();
        assert!(p.contains("<polyline"));
        assert!(p.contains("99%"));
    }

    #[test]
    fn percentile_labels() {
        assert_eq!(percentile_label(0.0), "0%");
        assert_eq!(percentile_label(1.0), "90%");
        assert_eq!(percentile_label(3.0), "99.9%");
    }
}

//! SVG charts for the HTML report, drawn with plotters' SVG backend (no fonts, no network):
//! percentile curves, throughput by client count, versions (the per-second charts are
//! interactive, drawn in the page: `timeline.rs`).
//!
//! Charts carry no user-given text: series are told apart by colour, and the legend is HTML
//! next to the chart, so labels are escaped once, by the template.

use anyhow::{Result, anyhow};
use plotters::coord::combinators::IntoLogRange;
use plotters::prelude::*;

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

/// One line of a percentile chart.
pub struct Line {
    /// Colour index (the group).
    pub color: usize,
    /// Points, x ascending.
    pub points: Vec<(f64, f64)>,
}

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("cannot draw chart: {e:?}")
}

/// `v` with at most `digits` decimals, without trailing zeros: `2.5`, `40`, `0.1`.
fn trimmed(v: f64, digits: usize) -> String {
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A rate as an axis label: `0`, `500`, `2.5k`, `100k`, `1.2M`.
pub fn axis_rate(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trimmed(v / 1e6, 2))
    } else if a >= 1e3 {
        format!("{}k", trimmed(v / 1e3, 2))
    } else {
        trimmed(v, 2)
    }
}

/// A response time in microseconds as an axis label: `1us`, `100us`, `1ms`, `2.5ms`, `1s`.
pub fn axis_micros(us: f64) -> String {
    if us >= 1e6 {
        format!("{}s", trimmed(us / 1e6, 2))
    } else if us >= 1e3 {
        format!("{}ms", trimmed(us / 1e3, 2))
    } else {
        format!("{}us", trimmed(us, 2))
    }
}

/// Ticks of a log axis from `bottom` to `top`: 1-2-5 in each decade over up to two decades,
/// the decades only over more.
fn log_ticks(bottom: f64, top: f64) -> Vec<f64> {
    let decades = (top / bottom).log10();
    let steps: &[f64] = if decades <= 2.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    let mut decade = 10f64.powf(bottom.log10().floor());
    while decade <= top {
        for m in steps {
            let v = decade * m;
            if v >= bottom * 0.999 && v <= top * 1.001 {
                out.push(v);
            }
        }
        decade *= 10.0;
    }
    out
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
            .y_label_formatter(&|v| axis_micros(*v))
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

/// What a clients chart shows on its y axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientsAxis {
    /// Ops per second, linear from 0.
    Rate,
    /// A response time in microseconds, log scale.
    Micros,
}

/// A figure against the client count (log scale, ticks at the counts measured), one line per
/// configuration with a dot at each count. `lines` hold `(clients, value)`, x ascending.
pub fn clients_chart(
    title: &str,
    y_desc: &str,
    axis: ClientsAxis,
    lines: &[Line],
) -> Result<String> {
    let xs = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let x_min = xs().fold(f64::MAX, f64::min);
    let x_max = xs().fold(0.0, f64::max);
    let (x_min, x_max) = if x_max <= 0.0 {
        (1.0, 2.0)
    } else {
        (x_min.max(1.0), x_max.max(1.0))
    };
    let (left, right) = (x_min / 1.5, x_max * 1.5);
    let mut ticks: Vec<f64> = xs().collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    let values = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let y_max = values().fold(0.0, f64::max);
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
            .y_label_area_size(56);
        let x_range = (left..right).log_scale().with_key_points(ticks);
        macro_rules! draw {
            ($ctx:expr) => {
                for l in lines {
                    let style = color(l.color).stroke_width(2);
                    $ctx.draw_series(LineSeries::new(l.points.iter().copied(), style))
                        .map_err(plot_err)?;
                    $ctx.draw_series(
                        l.points
                            .iter()
                            .map(|&p| Circle::new(p, 3, color(l.color).filled())),
                    )
                    .map_err(plot_err)?;
                }
            };
        }
        match axis {
            ClientsAxis::Rate => {
                let top = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
                let mut ctx = builder
                    .build_cartesian_2d(x_range, 0f64..top)
                    .map_err(plot_err)?;
                ctx.configure_mesh()
                    .axis_desc_style(("sans-serif", 11))
                    .x_desc("clients")
                    .y_desc(y_desc)
                    .x_label_formatter(&|x| trimmed(*x, 0))
                    .y_label_formatter(&|v| axis_rate(*v))
                    .light_line_style(WHITE.mix(0.0))
                    .draw()
                    .map_err(plot_err)?;
                draw!(ctx);
            }
            ClientsAxis::Micros => {
                let y_min = values().filter(|v| *v > 0.0).fold(f64::MAX, f64::min);
                let bottom = if y_min == f64::MAX {
                    1.0
                } else {
                    10f64.powf(y_min.max(1.0).log10().floor())
                };
                let top = (y_max * 2.0).max(bottom * 10.0);
                let mut ctx = builder
                    .build_cartesian_2d(
                        x_range,
                        (bottom..top)
                            .log_scale()
                            .with_key_points(log_ticks(bottom, top)),
                    )
                    .map_err(plot_err)?;
                ctx.configure_mesh()
                    .axis_desc_style(("sans-serif", 11))
                    .x_desc("clients")
                    .y_desc(y_desc)
                    .x_label_formatter(&|x| trimmed(*x, 0))
                    .y_label_formatter(&|v| axis_micros(*v))
                    .light_line_style(WHITE.mix(0.0))
                    .draw()
                    .map_err(plot_err)?;
                draw!(ctx);
            }
        }
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polylines drawn in colour 0 (the runs' lines, not the axes or the target).
    fn polylines(svg: &str) -> usize {
        svg.matches(r##"<polyline fill="none" opacity="1" stroke="#1F77B4""##)
            .count()
    }

    #[test]
    fn axis_labels_read_as_people_write_them() {
        assert_eq!(axis_rate(0.0), "0");
        assert_eq!(axis_rate(500.0), "500");
        assert_eq!(axis_rate(2500.0), "2.5k");
        assert_eq!(axis_rate(100_000.0), "100k");
        assert_eq!(axis_rate(1_250_000.0), "1.25M");
        assert_eq!(axis_micros(1.0), "1us");
        assert_eq!(axis_micros(100.0), "100us");
        assert_eq!(axis_micros(1000.0), "1ms");
        assert_eq!(axis_micros(2500.0), "2.5ms");
        assert_eq!(axis_micros(1e6), "1s");
    }

    #[test]
    fn log_ticks_are_round() {
        assert_eq!(log_ticks(10_000.0, 400_000.0), [1e4, 2e4, 5e4, 1e5, 2e5]);
        assert_eq!(log_ticks(10.0, 1e6), [10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
    }

    #[test]
    fn percentile_charts_are_svg_with_lines() {
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
    fn clients_charts_put_a_dot_at_each_count() {
        let lines = [
            Line {
                color: 0,
                points: vec![(1.0, 1000.0), (8.0, 5000.0), (128.0, 4000.0)],
            },
            Line {
                color: 1,
                points: vec![(1.0, 900.0), (8.0, 5500.0), (128.0, 3000.0)],
            },
        ];
        let svg = clients_chart("t", "ops/s", ClientsAxis::Rate, &lines).unwrap();
        assert_eq!(polylines(&svg), 1, "one line per configuration");
        assert_eq!(svg.matches("<circle").count(), 6, "{svg}");
        for label in ["\n1\n", "\n8\n", "\n128\n", "\n5k\n"] {
            assert!(svg.contains(label), "{label:?} in {svg}");
        }
        let svg = clients_chart("t", "p95", ClientsAxis::Micros, &lines[..1]).unwrap();
        assert!(svg.contains("ms"), "{svg}");
        // One client count: dots, no line to draw between them.
        let one = [Line {
            color: 0,
            points: vec![(2.0, 10.0)],
        }];
        let svg = clients_chart("t", "ops/s", ClientsAxis::Rate, &one).unwrap();
        assert_eq!(svg.matches("<circle").count(), 1);
    }

    #[test]
    fn percentile_labels() {
        assert_eq!(percentile_label(0.0), "0%");
        assert_eq!(percentile_label(1.0), "90%");
        assert_eq!(percentile_label(3.0), "99.9%");
    }
}

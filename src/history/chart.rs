//! The HTML page of a history: per step, one SVG chart per figure over the runs (or over
//! the values of the order key, repeats drawn as their mean with a min-max bar), change
//! points marked (red: regression, green: improvement, grey: weak or within the noise), a
//! hover title per point naming its runs, their tags and their min-max; and the tables.

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use super::analyze::{Analyzed, short};
use super::render::{History, step_rows, summary};

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("cannot draw chart: {e:?}")
}

/// Text for HTML and SVG: `& < > " '` escaped.
pub fn esc(s: &str) -> String {
    crate::output::escape::line(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The x positions of the runs: runs of equal order key share one (repeats), else each run
/// has its own.
fn groups(h: &History) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut of_run = Vec::with_capacity(h.runs.len());
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, r) in h.runs.iter().enumerate() {
        let same = h.order != "start" && i > 0 && h.runs[i - 1].key == r.key;
        if !same {
            members.push(Vec::new());
        }
        if let Some(m) = members.last_mut() {
            m.push(i);
        }
        of_run.push(members.len() - 1);
    }
    (of_run, members)
}

/// One group's point: mean, min, max of its runs' values.
fn stats(a: &Analyzed, runs: &[usize]) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = runs.iter().filter_map(|&i| a.series.values[i]).collect();
    if v.is_empty() {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    Some((mean, min, max))
}

/// The chart of one series; hover titles are added to plotters' SVG as transparent circles.
fn chart(h: &History, a: &Analyzed) -> Result<String> {
    let (of_run, members) = groups(h);
    let points: Vec<(usize, (f64, f64, f64))> = members
        .iter()
        .enumerate()
        .filter_map(|(g, m)| stats(a, m).map(|s| (g, s)))
        .collect();
    let top = points.iter().map(|p| p.1.2).fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.1 } else { 1.0 };
    let x_max = members.len().max(2) as f64 - 0.5;
    let mut hover: Vec<(i32, i32, String)> = Vec::new();
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, crate::report::charts::SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(8)
            .margin_right(24)
            .caption(&a.series.label, ("sans-serif", 15))
            .x_label_area_size(32)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.5f64..x_max, 0f64..top)
            .map_err(plot_err)?;
        ctx.configure_mesh()
            .axis_desc_style(("sans-serif", 11))
            .x_desc(if h.order == "start" {
                "run"
            } else {
                h.order.as_str()
            })
            .x_label_formatter(&|x| format!("{}", x.round() as i64 + 1))
            .y_label_formatter(&|v| crate::report::charts::axis_rate(*v))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(plot_err)?;
        for p in &a.points {
            let color = match (p.cp.strong, p.regression, p.improvement) {
                (true, true, _) => RGBColor(214, 39, 40),
                (true, _, true) => RGBColor(44, 160, 44),
                _ => RGBColor(150, 150, 150),
            };
            let x = of_run[p.run] as f64 - 0.5;
            ctx.draw_series(DashedLineSeries::new(
                [(x, 0.0), (x, top)],
                5,
                3,
                color.stroke_width(2),
            ))
            .map_err(plot_err)?;
        }
        let blue = RGBColor(31, 119, 180);
        ctx.draw_series(LineSeries::new(
            points.iter().map(|(g, s)| (*g as f64, s.0)),
            blue.stroke_width(2),
        ))
        .map_err(plot_err)?;
        for (g, (mean, min, max)) in &points {
            let x = *g as f64;
            if max > min && members[*g].len() > 1 {
                ctx.draw_series(LineSeries::new(
                    [(x, *min), (x, *max)],
                    blue.stroke_width(1),
                ))
                .map_err(plot_err)?;
            }
            ctx.draw_series([Circle::new((x, *mean), 3, blue.filled())])
                .map_err(plot_err)?;
            let (px, py) = ctx.backend_coord(&(x, *mean));
            hover.push((px, py, title(h, a, &members[*g], (*mean, *min, *max))));
        }
        root.present().map_err(plot_err)?;
    }
    let marks: String = hover
        .iter()
        .map(|(x, y, t)| {
            format!(
                "<circle cx=\"{x}\" cy=\"{y}\" r=\"7\" fill=\"transparent\"><title>{}</title></circle>",
                esc(t)
            )
        })
        .collect();
    match svg.rfind("</svg>") {
        Some(at) => svg.insert_str(at, &marks),
        None => svg.push_str(&marks),
    }
    Ok(svg)
}

/// The hover text of a point: its runs, their tags, the mean and min-max.
fn title(h: &History, a: &Analyzed, runs: &[usize], (mean, min, max): (f64, f64, f64)) -> String {
    let mut t = String::new();
    for &i in runs {
        let r = &h.runs[i];
        t.push_str(&format!("run {} #{} {}", r.id, i + 1, &r.started_at));
        if h.order != "start" {
            t.push_str(&format!(" {}={}", h.order, r.key));
        }
        if !r.tags.is_empty() {
            t.push_str(&format!(" [{}]", crate::request::tags::text(&r.tags)));
        }
        t.push('\n');
    }
    t.push_str(&format!("{}: {}", a.series.label, short(mean)));
    if runs.len() > 1 {
        t.push_str(&format!(" (min {} max {})", short(min), short(max)));
    }
    t
}

/// The page.
pub fn html(h: &History) -> Result<String> {
    let mut out = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ibench history {name}</title>\
         <style>body{{font-family:sans-serif;margin:1em}}.charts{{display:flex;flex-wrap:wrap}}\
         table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ccc;padding:2px 6px}}\
         tr.cp td{{background:#fff4d6}}</style></head><body>\n<h1>ibench history {name}</h1>\n<p>{}</p>\n\
         <p>Dashed lines mark change points: red a regression, green an improvement, grey a weak \
         point or a change within the noise. Hover a point for its runs.</p>\n",
        esc(&summary(h)),
        name = esc(&h.name)
    );
    for (step, series) in h.steps() {
        out.push_str(&format!(
            "<h2>step {}</h2>\n<div class=\"charts\">\n",
            esc(step)
        ));
        for a in &series {
            out.push_str(&chart(h, a)?);
            out.push('\n');
        }
        out.push_str("</div>\n<table><thead><tr>");
        let (header, _, rows) = step_rows(h, &series);
        for c in header {
            out.push_str(&format!("<th>{}</th>", esc(&c)));
        }
        out.push_str("</tr></thead><tbody>\n");
        for (cp, row) in rows {
            out.push_str(if cp { "<tr class=\"cp\">" } else { "<tr>" });
            for c in row {
                out.push_str(&format!("<td>{}</td>", esc(&c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
    }
    out.push_str("</body></html>\n");
    Ok(out)
}

//! A history as text, Markdown or JSON: per step, a table of the runs with a column per
//! figure, each change point inline as Otava prints them (a row before the run it starts
//! at, with the change and the means before and after).

use serde::Serialize;

use super::analyze::{Analyzed, Point, short};
use super::changepoint::Params;
use super::series::RunInfo;
use crate::report::table::Table;

/// A history, ready to render.
#[derive(Clone, Debug, Serialize)]
pub struct History {
    /// What was asked for (label, cell or run).
    pub name: String,
    /// How the runs were matched: `label`, `cell`, `experiment` or `configuration`.
    pub matched_by: String,
    /// How the runs are ordered.
    pub order: String,
    /// The detector's parameters.
    pub params: Params,
    /// The runs, in order.
    pub runs: Vec<RunInfo>,
    /// The series and their change points.
    pub series: Vec<Analyzed>,
}

impl History {
    /// The steps, in order, with their series.
    pub fn steps(&self) -> Vec<(&str, Vec<&Analyzed>)> {
        let mut out: Vec<(&str, Vec<&Analyzed>)> = Vec::new();
        for a in &self.series {
            match out.iter_mut().find(|(s, _)| *s == a.series.step) {
                Some((_, v)) => v.push(a),
                None => out.push((&a.series.step, vec![a])),
            }
        }
        out
    }
}

/// A change point's cell: `▼ -45.2% (1000 → 550)`, `REGRESSION` for a regression of a
/// gated figure (`not gated` for one of the device's figures), `weak` for a weak point.
pub fn point_text(p: &Point, gated: bool) -> String {
    let arrow = if p.change < 0.0 { "▼" } else { "▲" };
    let mark = match (p.cp.strong, p.regression, gated) {
        (false, _, _) => " weak",
        (true, true, true) => " REGRESSION",
        (true, true, false) => " worse (not gated)",
        (true, false, _) => "",
    };
    format!(
        "{arrow} {:+.1}% ({} -> {}){mark}",
        p.change * 100.0,
        short(p.cp.mean_before),
        short(p.cp.mean_after)
    )
}

fn value_text(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.digits$}"))
}

/// The rows of a step's table, change-point rows marked `true`.
pub type Rows = Vec<(bool, Vec<String>)>;

/// One step's rows: the header, how many columns name the run, and the rows.
pub fn step_rows(h: &History, series: &[&Analyzed]) -> (Vec<String>, usize, Rows) {
    let by_key = h.order != "start";
    let mut header: Vec<String> = vec!["#".into(), "run".into(), "started".into()];
    if by_key {
        header.push(h.order.clone());
    }
    header.push("tags".into());
    let fixed = header.len();
    header.extend(series.iter().map(|a| a.series.label.clone()));
    let mut rows = Vec::new();
    for (i, run) in h.runs.iter().enumerate() {
        let starting: Vec<Option<(&Point, bool)>> = series
            .iter()
            .map(|a| {
                let p = a.points.iter().find(|p| p.run == i)?;
                Some((p, a.series.gated))
            })
            .collect();
        if starting.iter().any(Option::is_some) {
            let mut row = vec![String::new(); fixed];
            row[1] = "change point".into();
            row.extend(
                starting
                    .iter()
                    .map(|p| p.map(|(p, g)| point_text(p, g)).unwrap_or_default()),
            );
            rows.push((true, row));
        }
        let disturbed = series
            .iter()
            .any(|a| a.series.disturbed.get(i).is_some_and(Option::is_some));
        let mut row = vec![
            (i + 1).to_string(),
            if disturbed {
                format!("{} (disturbed)", run.id)
            } else {
                run.id.clone()
            },
            run.started_at.chars().take(19).collect(),
        ];
        if by_key {
            row.push(run.key.clone());
        }
        row.push(crate::request::tags::text(&run.tags));
        row.extend(
            series
                .iter()
                .map(|a| value_text(a.series.values[i], a.series.digits)),
        );
        rows.push((false, row));
    }
    (header, fixed, rows)
}

/// One step's table (as text or Markdown, each escaping its cells: see `Table`).
fn step_table(h: &History, series: &[&Analyzed]) -> Table {
    let (header, fixed, rows) = step_rows(h, series);
    let mut t = Table::new(header).align_left(1..fixed);
    for (_, row) in rows {
        t.row(row);
    }
    t
}

/// The one-line summary of a history.
pub fn summary(h: &History) -> String {
    let strong = h
        .series
        .iter()
        .flat_map(|a| a.points.iter().map(move |p| (p, a.series.gated)))
        .filter(|(p, _)| p.cp.strong);
    let (n, reg) = strong.fold((0, 0), |(n, r), (p, gated)| {
        (n + 1, r + usize::from(p.regression && gated))
    });
    format!(
        "{} runs of {} {:?} ordered by {}; {n} change point(s), {reg} regression(s) \
         (E-divisive means, p <= {}, window {}, min magnitude {})",
        h.runs.len(),
        h.matched_by,
        h.name,
        h.order,
        h.params.max_pvalue,
        h.params.window,
        h.params.min_magnitude
    )
}

/// The history as text tables (`markdown`: Markdown tables).
pub fn tables(h: &History, markdown: bool) -> String {
    use crate::output::escape::markdown as md;
    let mut out = if markdown {
        format!("# ibench history: {}\n\n{}\n", md(&h.name), md(&summary(h)))
    } else {
        format!("{}\n", summary(h))
    };
    for (step, series) in h.steps() {
        let t = step_table(h, &series);
        if markdown {
            out.push_str(&format!("\n## step {}\n\n{}", md(step), t.to_markdown()));
        } else {
            out.push_str(&format!("\nstep {step}\n{}", t.to_text()));
        }
    }
    out
}

/// The history as JSON.
pub fn json(h: &History) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(h)? + "\n")
}

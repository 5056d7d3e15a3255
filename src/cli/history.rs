//! `ibench history NAME`: the runs of one configuration over time, their figures per step,
//! change points, and a CI gate on the newest runs (`--check-last N`, exit 3).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::error::{RegressionFound, UsageError};
use crate::history::changepoint::{Params, Test};
use crate::history::series::Order;
use crate::output::{escape, stdout};
use crate::report::render::write_atomic;

/// Output formats of `ibench history`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryFormat {
    /// Tables on the terminal.
    Text,
    /// Markdown tables.
    Md,
    /// An HTML page with a chart per step and figure.
    Html,
    /// Every series and change point as JSON.
    Json,
}

/// Flags of `ibench history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// A label, an experiment cell, an experiment (all its cells: a versions study), or a
    /// run (id or unique prefix: the runs of its configuration: workload, target and
    /// settings).
    pub name: String,
    /// Order of the runs: start (time), version (the recorded DBMS version) or tag:KEY
    /// (numbers in versions and tag values compare as numbers).
    #[arg(long, default_value = "start", value_parser = Order::parse)]
    pub order: Order,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: HistoryFormat,
    /// Write to FILE instead of stdout (html: default ibench-history.html beside the store).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A change point's p-value is at most this (Otava's default 0.001).
    #[arg(long, default_value_t = 0.001, value_name = "P", value_parser = parse_pvalue)]
    pub max_pvalue: f64,
    /// Runs per sliding window of the detector (Otava's default 50; 4..=1000).
    #[arg(long, default_value_t = 50, value_name = "RUNS",
          value_parser = clap::value_parser!(u32).range(4..=1000))]
    pub window: u32,
    /// Smallest relative change kept as a change point, e.g. 0.05 for 5 % (0..=10).
    #[arg(long, default_value_t = 0.0, value_name = "X", value_parser = parse_magnitude)]
    pub min_magnitude: f64,
    /// Test splits with Matteson & James's permutation test of B permutations (99..=99999)
    /// instead of Student's t-test (its p-value is at least 1/(B+1), and a split of n runs
    /// into k and n-k is never below 1/C(n,k)).
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(99..=99999))]
    pub permutations: Option<u32>,
    /// Exit 3 when any of the newest N runs starts or follows a regression (a change point
    /// in the worse direction beyond the noise band that the runs before them do not show),
    /// printing one line per regression; 0 otherwise.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub check_last: Option<u32>,
    /// With --check-last: also exit 3 on a regression that only runs a neighbour disturbed
    /// show (by default those are named and the gate passes; docs/history.md).
    #[arg(long, requires = "check_last")]
    pub strict: bool,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

fn parse_pvalue(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!(
            "{s:?} is not a p-value: expected a number above 0 and below 1"
        )),
    }
}

fn parse_magnitude(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(m) if (0.0..=10.0).contains(&m) => Ok(m),
        _ => Err(format!(
            "{s:?} is not a relative change: expected 0 to 10 (0.05 is 5 %)"
        )),
    }
}

/// Runs `ibench history`.
pub fn execute(args: &HistoryArgs) -> Result<()> {
    let params = Params {
        max_pvalue: args.max_pvalue,
        window: args.window as usize,
        min_magnitude: args.min_magnitude,
        test: args.permutations.map_or(Test::TTest, Test::Permutation),
    };
    let mut store = crate::results::store::Store::open_existing(&args.store.results)?;
    let h = crate::history::build(&mut store, &args.name, &args.order, &params)?;
    if h.runs.is_empty() {
        return Err(UsageError::new(format!(
            "{:?} names no complete run (see `ibench list`)",
            args.name
        ))
        .into());
    }
    let text = match args.format {
        HistoryFormat::Text => crate::history::render::tables(&h, false),
        HistoryFormat::Md => crate::history::render::tables(&h, true),
        HistoryFormat::Json => crate::history::render::json(&h)?,
        HistoryFormat::Html => crate::history::chart::html(&h)?,
    };
    let out = match (&args.output, args.format) {
        (Some(p), _) => Some(p.clone()),
        (None, HistoryFormat::Html) => Some(
            super::report::default_html_path(&args.store.results)
                .with_file_name("ibench-history.html"),
        ),
        (None, _) => None,
    };
    match out {
        Some(p) if p.as_os_str() != "-" => {
            write_atomic(&p, &text)?;
            stdout::print(&format!("history: {}\n", p.display()))?;
        }
        _ if args.format == HistoryFormat::Json => stdout::print(&escape::json(&text))?,
        _ => stdout::print(&escape::text(&text))?,
    }
    let Some(n) = args.check_last else {
        return Ok(());
    };
    let gate = crate::history::analyze::gate(&h.series, &params, n as usize, h.runs.len());
    let line = |r: &crate::history::analyze::Regression| {
        crate::history::analyze::regression_line(r, &h.runs) + "\n"
    };
    let mut text: String = gate.failing.iter().map(line).collect();
    for r in &gate.disturbed {
        let runs = h
            .series
            .iter()
            .find(|a| a.series.step == r.step && a.series.label == r.figure)
            .map(|a| crate::history::analyze::disturbed_runs(a, r.point.run))
            .unwrap_or_default();
        text.push_str(&format!(
            "{} (only with disturbed runs: {}{})\n",
            line(r).trim_end(),
            runs.join(", "),
            if args.strict {
                ""
            } else {
                "; not gated without --strict"
            }
        ));
    }
    let fails = gate.failing.len() + if args.strict { gate.disturbed.len() } else { 0 };
    if fails == 0 {
        text.push_str(&format!(
            "check: no regression in the newest {n} of {} runs{}\n",
            h.runs.len(),
            match gate.disturbed.len() {
                0 => String::new(),
                d => format!(
                    " without the runs a neighbour disturbed ({d} regression(s) only they show)"
                ),
            }
        ));
        stdout::print(&escape::text(&text))?;
        return Ok(());
    }
    stdout::print(&escape::text(&text))?;
    Err(RegressionFound(format!(
        "{fails} regression(s) in the newest {n} of {} runs",
        h.runs.len()
    ))
    .into())
}

//! `ibench compare A B`: per step and metric, the change from A to B with a confidence
//! interval and a verdict (better, worse, no change, inconclusive); the method is in
//! `report::compare` and docs/reports.md.

use anyhow::Result;

use clap::Args;
use serde::Serialize;

use super::StoreArgs;
use crate::error::{RegressionFound, UsageError};
use crate::output::escape;
use crate::report::compare::{
    self, Comparison, DEFAULT_ALPHA, DEFAULT_NOISE_PCT, Options, Unit, fmt_ci, fmt_num, fmt_p,
    fmt_pct, fmt_q,
};
use crate::report::table::Table;
use crate::results::store::Store;

/// Flags of `ibench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference: run id, unique prefix, or label (all its runs).
    pub a: String,
    /// Compared with A: run id, unique prefix, or label.
    pub b: String,
    /// False discovery rate over the step x metric table (Benjamini-Hochberg): the expected
    /// share of reported changes that are noise.
    #[arg(long, default_value_t = DEFAULT_ALPHA, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Noise threshold in percent (e.g. 3 or 3%): a change is reported only when its
    /// confidence interval lies beyond +-this, and "no change" only when it lies within.
    #[arg(long, value_name = "PERCENT", default_value_t = DEFAULT_NOISE_PCT, value_parser = parse_noise)]
    pub noise_threshold: f64,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write a differential flame graph per step into DIR (`<step>.diff.svg`) from the runs'
    /// `--profile` stacks, looked for beside the results store.
    #[arg(long, value_name = "DIR")]
    pub flame_graphs: Option<std::path::PathBuf>,
    /// Exit 3 when a step x metric is significantly worse in B (the verdict `worse`),
    /// naming each on a line of its own after the comparison; 0 otherwise.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// With --fail-on-regression: exit 3 also where only a step a neighbour disturbed shows
    /// the regression (verdict `disturbed`, "would be worse"); without it such a row is
    /// named and not gated, as `history --check-last` does.
    #[arg(long, requires = "fail_on_regression")]
    pub strict: bool,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

fn parse_alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a probability between 0 and 1 (e.g. 0.01)"
        )),
    }
}

fn parse_noise(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').trim().parse::<f64>() {
        Ok(v) if (0.0..100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s:?} is not a percentage from 0 to below 100 (e.g. 3 for +-3%)"
        )),
    }
}

/// The JSON output: what was compared, the method in words, the comparison.
#[derive(Serialize)]
struct Json<'a> {
    a: &'a str,
    b: &'a str,
    method: Vec<String>,
    #[serde(flatten)]
    comparison: &'a Comparison,
}

/// Runs `ibench compare`.
pub fn execute(args: &CompareArgs) -> Result<()> {
    let store = Store::open_existing(&args.store.results)?;
    let a = store.load_all(&args.a)?;
    let b = store.load_all(&args.b)?;
    let opts = Options {
        alpha: args.alpha,
        noise_pct: args.noise_threshold,
    };
    let learned = super::compare_history::learned(&store, &a, &b)?;
    let cmp = compare::compare_with(&a, &b, &opts, Some(&learned));
    if cmp.rows.is_empty() {
        return Err(UsageError::new(format!(
            "{} and {} have no step in common to compare",
            args.a, args.b
        ))
        .into());
    }
    if let Some(out) = &args.flame_graphs {
        let dir = match args.store.results.parent() {
            Some(d) if !crate::results::store::is_postgres_url(&args.store.results) => d,
            _ => std::path::Path::new("."),
        };
        let drawn = compare::flames::differentials(dir, &a, &b, out)?;
        if drawn.is_empty() {
            eprintln!(
                "note: no step was profiled (--profile) in a run of both {} and {}: no \
                 differential flame graph",
                escape::line(&args.a),
                escape::line(&args.b)
            );
        }
        for (step, svg) in drawn {
            eprintln!("flame graph of {step}, B against A: {}", svg.display());
        }
    }
    if args.json {
        let doc = Json {
            a: &args.a,
            b: &args.b,
            method: cmp.method(),
            comparison: &cmp,
        };
        // Labels are stored text from anyone: JSON escapes keep control characters out.
        crate::output::stdout::print(&(escape::json(&serde_json::to_string_pretty(&doc)?) + "\n"))?;
    } else {
        crate::output::stdout::print(&render(
            &cmp,
            &escape::line(&args.a),
            &escape::line(&args.b),
        ))?;
    }
    if args.fail_on_regression {
        gate(&cmp, args.strict)?;
    }
    Ok(())
}

/// `--fail-on-regression`: one line on stderr (stdout may be JSON) per row whose verdict is
/// worse, and per row a disturbed step kept from worse (gated with `strict` only), and
/// [`RegressionFound`] when one is gated.
fn gate(cmp: &Comparison, strict: bool) -> Result<()> {
    use compare::Verdict::{Disturbed, Worse};
    let mut gated = 0;
    for r in &cmp.rows {
        let only_disturbed = r.verdict == Disturbed && r.withheld == Some(Worse);
        if r.verdict != Worse && !only_disturbed {
            continue;
        }
        let interval = r
            .ci_pct
            .map(|[lo, hi]| format!("{lo:+.1}% .. {hi:+.1}%"))
            .unwrap_or_else(|| "-".into());
        let tail = match (only_disturbed, strict) {
            (false, _) => "",
            (true, true) => " (only in runs a neighbour disturbed)",
            (true, false) => " (only in runs a neighbour disturbed; not gated without --strict)",
        };
        eprintln!(
            "regression: step {} {}: interval {interval}; {}{tail}",
            escape::line(&r.step),
            escape::line(&r.metric),
            escape::line(&r.text)
        );
        gated += usize::from(!only_disturbed || strict);
    }
    if gated == 0 {
        return Ok(());
    }
    Err(RegressionFound(format!("{gated} significant regression(s) from A to B")).into())
}

/// The comparison as text: who is compared, the method, the table.
fn render(cmp: &Comparison, a: &str, b: &str) -> String {
    let runs = |n: usize| {
        if n == 1 {
            "1 run".to_string()
        } else {
            format!("{n} runs")
        }
    };
    let mut out = format!(
        "A = {a} ({}), B = {b} ({})\n",
        runs(cmp.runs_a),
        runs(cmp.runs_b)
    );
    for line in cmp.method() {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&cmp.headline);
    out.push_str("\n\n");
    let n_header = match cmp.unit {
        Unit::Runs => "runs A/B",
        Unit::Seconds => "n_eff A/B",
    };
    let mut t = Table::new([
        "step", "metric", "A", "B", "change", "interval", "p", "q", n_header, "verdict",
    ]);
    for r in &cmp.rows {
        let verdict = format!("{}: {}", r.verdict.as_str(), r.note);
        match &r.test {
            Some(x) => t.row([
                r.step.clone(),
                r.metric.clone(),
                format!("{:.1}", x.mean_a),
                format!("{:.1}", x.mean_b),
                fmt_pct(x.change_pct),
                fmt_ci(r.ci_pct),
                fmt_p(x.p),
                r.q.map(fmt_q).unwrap_or_default(),
                match cmp.unit {
                    Unit::Runs => format!("{}/{}", x.n_a, x.n_b),
                    Unit::Seconds => format!("{:.0}/{:.0}", x.n_eff_a, x.n_eff_b),
                },
                verdict,
            ]),
            None => t.row([
                r.step.clone(),
                r.metric.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                verdict,
            ]),
        }
    }
    out.push_str(&t.to_text());
    if !cmp.flags.is_empty() {
        out.push_str("\nFlagged steps (docs/reports.md: a change in them is not called):\n");
        for (step, f) in &cmp.flags {
            out.push_str(&format!(
                "  {}: run {}: {}\n",
                escape::line(step),
                escape::line(&f.run),
                f.text
            ));
        }
    }
    if !cmp.disturbed.is_empty() {
        out.push_str(
            "\nDisturbed steps (docs/metrics.md: a neighbour took more than the thresholds; a \
             change in them is not called):\n",
        );
        for (step, run, why) in &cmp.disturbed {
            out.push_str(&format!(
                "  {}: run {}: {why}\n",
                escape::line(step),
                escape::line(run)
            ));
        }
    }
    if !cmp.left_out.is_empty() {
        out.push_str(
            "\nRuns left out of a step (a neighbour disturbed it there; the step is judged on \
             the others, two or more a side):\n",
        );
        for (step, run, why) in &cmp.left_out {
            out.push_str(&format!(
                "  {}: run {}: {why}\n",
                escape::line(step),
                escape::line(run)
            ));
        }
    }
    if !cmp.explain.is_empty() {
        out.push_str(
            "\nInside the DBMS, what changed most (gauges and wait events; descriptive, not \
             tested):\n",
        );
        let mut t = Table::new(["step", "what", "name", "A", "B", "change", "unit"]);
        for c in &cmp.explain {
            t.row([
                c.step.clone(),
                c.kind.to_string(),
                escape::line(&c.name).into_owned(),
                fmt_num(c.a),
                fmt_num(c.b),
                c.change_pct.map(fmt_pct).unwrap_or_else(|| "new".into()),
                c.unit.to_string(),
            ]);
        }
        out.push_str(&t.to_text());
    }
    out
}

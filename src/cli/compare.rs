//! `ibench compare A B`: per step and metric, the change from A to B and whether it is
//! significant (Welch's t-test on per-second samples, autocorrelation-corrected).

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::error::UsageError;
use crate::output::escape;
use crate::report::compare::{self, DEFAULT_ALPHA, fmt_p};
use crate::report::table::Table;
use crate::results::store::Store;

/// Flags of `ibench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The reference: run id, unique prefix, or label (all its runs).
    pub a: String,
    /// Compared with A: run id, unique prefix, or label.
    pub b: String,
    /// Significance level: a change counts when p is below it.
    #[arg(long, default_value_t = DEFAULT_ALPHA, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Print the rows as JSON.
    #[arg(long)]
    pub json: bool,
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

/// Runs `ibench compare`.
pub fn execute(args: &CompareArgs) -> Result<()> {
    let store = Store::open_existing(&args.store.results)?;
    let a = store.load_all(&args.a)?;
    let b = store.load_all(&args.b)?;
    let rows = compare::compare(&a, &b, args.alpha);
    if rows.is_empty() {
        return Err(UsageError::new(format!(
            "{} and {} have no step in common to compare",
            args.a, args.b
        ))
        .into());
    }
    if args.json {
        println!("{}", escape::json(&serde_json::to_string_pretty(&rows)?));
        return Ok(());
    }
    println!(
        "A = {} ({} run(s)), B = {} ({} run(s)); per-second samples, Welch's t-test with \
         autocorrelation-corrected sample sizes, alpha {}",
        escape::line(&args.a),
        a.len(),
        escape::line(&args.b),
        b.len(),
        args.alpha
    );
    let mut t = Table::new([
        "step",
        "metric",
        "A",
        "B",
        "change",
        "p",
        "n_eff A/B",
        "verdict",
    ]);
    for r in &rows {
        match &r.test {
            Some(x) => t.row([
                r.step.clone(),
                r.metric.clone(),
                format!("{:.1}", x.mean_a),
                format!("{:.1}", x.mean_b),
                format!("{:+.1}%", x.change_pct),
                fmt_p(x.p),
                format!("{:.0}/{:.0}", x.n_eff_a, x.n_eff_b),
                r.verdict.clone(),
            ]),
            None => t.row([
                r.step.clone(),
                r.metric.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                r.verdict.clone(),
            ]),
        }
    }
    print!("{}", t.to_text());
    Ok(())
}

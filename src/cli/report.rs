//! `ibench report RUN... [--base RUN]`: one report over stored runs, as HTML, Markdown or JSON.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use super::StoreArgs;
use crate::output::{escape, stdout};
use crate::report::render::{Format, render_by, write_atomic};
use crate::results::store::Store;

/// Flags of `ibench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Runs to report: run ids, unique id prefixes, or labels (a label stands for every run
    /// with it; runs sharing a label are aggregated as repeats). Default: every stored run.
    pub runs: Vec<String>,
    /// The configuration others are compared with (id, prefix or label; default: the first
    /// named).
    #[arg(long, value_name = "RUN")]
    pub base: Option<String>,
    /// What makes runs one column of the report: their label (configuration), or the host
    /// they ran on (runs imported from several machines; --base may then name a host).
    #[arg(long, value_enum, default_value = "label")]
    pub by: crate::report::select::GroupBy,
    /// Output format.
    #[arg(long, value_enum, default_value = "html")]
    pub format: Format,
    /// Output file; `-` for stdout. Default: HTML goes beside the results, to
    /// ibench-report.html in the directory of the results database (the current directory for
    /// a PostgreSQL store); Markdown and JSON go to stdout.
    #[arg(long, short, visible_alias = "out", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The store.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Where the HTML report goes by default: beside the results, in the directory of the results
/// database (`--results`, by default `ibench run --out`'s), or the current directory when the
/// store is a PostgreSQL URL.
pub fn default_html_path(store: &Path) -> PathBuf {
    let dir = if crate::results::store::is_postgres_url(store) {
        None
    } else {
        store.parent().filter(|p| !p.as_os_str().is_empty())
    };
    dir.unwrap_or(Path::new(".")).join("ibench-report.html")
}

/// Runs `ibench report`.
pub fn execute(args: &ReportArgs) -> Result<()> {
    let store = Store::open_existing(&args.store.results)?;
    let text = render_by(
        &store,
        &args.runs,
        args.base.as_deref(),
        args.by,
        args.format,
    )?;
    let out = match (&args.output, args.format) {
        (Some(p), _) => Some(p.clone()),
        (None, Format::Html) => Some(default_html_path(&args.store.results)),
        (None, _) => None,
    };
    match out {
        Some(p) if p.as_os_str() != "-" => {
            write_atomic(&p, &text)?;
            stdout::print(&format!("report: {}\n", p.display()))?;
        }
        // Labels are stored text from anyone: no control character reaches the terminal.
        _ if args.format == Format::Json => stdout::print(&escape::json(&text))?,
        _ => stdout::print(&escape::text(&text))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_html_report_goes_beside_the_results() {
        let at = |s: &str| default_html_path(Path::new(s));
        assert_eq!(
            at("ibench-results/results.db"),
            Path::new("ibench-results/ibench-report.html")
        );
        assert_eq!(
            at("/tmp/r1/results.db"),
            Path::new("/tmp/r1/ibench-report.html")
        );
        assert_eq!(at("results.db"), Path::new("./ibench-report.html"));
        assert_eq!(
            at("postgres://u@h/db"),
            Path::new("./ibench-report.html"),
            "not inside a URL"
        );
    }
}

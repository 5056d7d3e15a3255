//! `ibench report RUN... [--base RUN]`: one report over stored runs, as HTML, Markdown or JSON.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::StoreArgs;
use crate::error::UsageError;
use crate::output::{escape, stdout};
use crate::report::{html, markdown, model, select};
use crate::results::store::Store;

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One self-contained HTML page with charts (works offline).
    Html,
    /// Markdown tables, for pasting into issues.
    Md,
    /// The report model as JSON, for scripts.
    Json,
}

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

/// Renders the report over `names` (base first) in `format`.
pub fn render(
    store: &Store,
    names: &[String],
    base: Option<&str>,
    format: Format,
) -> Result<String> {
    let groups = select::groups(store, names, base)?;
    let report = model::build(&groups)?;
    if report.steps.is_empty() {
        return Err(UsageError::new(format!(
            "the runs have no step in common (steps: {})",
            report
                .left_out
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    }
    for (step, with) in &report.left_out {
        eprintln!(
            "note: step {} left out: not in every run (only in {})",
            escape::line(step),
            escape::line(&with.join(", "))
        );
    }
    Ok(match format {
        Format::Html => html::render(&report, &groups)?,
        Format::Md => markdown::render(&report),
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
    })
}

/// Writes `text` to `path` atomically (temporary file, then rename).
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        UsageError::new(format!("cannot write {}: {e}", path.display()))
    })?;
    Ok(())
}

/// Writes the HTML, Markdown and JSON reports over `names` into `dir` (report.html,
/// report.md, report.json); returns the HTML path. Used by experiments.
pub fn write_all(
    store_path: &Path,
    names: &[String],
    base: Option<&str>,
    dir: &Path,
) -> Result<PathBuf> {
    let store = Store::open_existing(store_path)?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (format, file) in [
        (Format::Html, "report.html"),
        (Format::Md, "report.md"),
        (Format::Json, "report.json"),
    ] {
        write_atomic(&dir.join(file), &render(&store, names, base, format)?)?;
    }
    Ok(dir.join("report.html"))
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
    let text = render(&store, &args.runs, args.base.as_deref(), args.format)?;
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

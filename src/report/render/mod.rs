//! A report over stored runs rendered in one format, and the files experiments write (HTML,
//! Markdown and JSON side by side). Each format is a [`Renderer`] of the report model, one file
//! a format (`html.rs`, `markdown.rs`, `json.rs`); [`Format::renderer`] is the one place that
//! picks it. (The terminal summary, `terminal.rs`, is of one run, not of a report model.)

pub mod html;
pub mod json;
pub mod markdown;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::ValueEnum;

use super::{build, select};
use crate::error::UsageError;
use crate::output::escape;
use crate::report::model::Report;
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

/// A report model rendered in one format, from the model alone.
pub trait Renderer {
    /// The whole report as text in this format.
    fn render(&self, report: &Report) -> Result<String>;
}

impl Format {
    /// The renderer of this format.
    pub fn renderer(self) -> &'static dyn Renderer {
        match self {
            Format::Html => &html::Html,
            Format::Md => &markdown::Markdown,
            Format::Json => &json::Json,
        }
    }
}

/// Renders the report over `names` (base first) in `format`.
pub fn render(
    store: &Store,
    names: &[String],
    base: Option<&str>,
    format: Format,
) -> Result<String> {
    render_by(store, names, base, select::GroupBy::Label, format)
}

/// [`render`], the runs grouped `by` label or host.
pub fn render_by(
    store: &Store,
    names: &[String],
    base: Option<&str>,
    by: select::GroupBy,
    format: Format,
) -> Result<String> {
    let groups = select::groups_by(store, names, base, by)?;
    let report = build::build(&groups)?;
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
    format.renderer().render(&report)
}

/// Writes `text` to `path` atomically (a new temporary file, then rename: see `safe_fs`),
/// in a directory no other user can replace it in; a device or FIFO is written through
/// (`safe_fs::write_output`).
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if crate::safe_fs::dir_access(dir).is_ok() {
        // (A directory that cannot be read is named by the write's own error below.)
        crate::safe_fs::check_dir(dir, "the report's directory")?;
    }
    crate::safe_fs::write_output(path, 0o644, |f| f.write_all(text.as_bytes()))
        .map_err(|e| UsageError::new(format!("cannot write {}: {e}", path.display())))?;
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

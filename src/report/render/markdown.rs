//! The report's tables as Markdown, for pasting into issues. Every text, headings included,
//! goes through `output::escape::markdown` (cells through `Table::to_markdown`): labels and
//! host names of imported runs may hold anything.

use anyhow::Result;

use super::Renderer;
use crate::output::escape;
use crate::report::model::Report;
use crate::report::sections::view::{self, ViewTable};
use crate::report::table::Table;

fn table(t: &ViewTable) -> String {
    let mut out = Table::new(t.header.iter().cloned());
    for row in &t.rows {
        out.row(row.iter().map(|c| {
            let mut text = c.text.clone();
            if !c.sub.is_empty() {
                text.push_str(&format!(" ({})", c.sub));
            }
            match c.class.as_str() {
                "worse" | "better" | "fail" => format!("**{text}**"),
                // A row naming the group of the rows under it (bold would read as a mark).
                "group" => format!("_{text}_"),
                _ => text,
            }
        }));
    }
    format!("*{}*\n\n{}", escape::markdown(&t.title), out.to_markdown())
}

/// The Markdown renderer: every table of the report (no charts).
pub struct Markdown;

impl Renderer for Markdown {
    fn render(&self, report: &Report) -> Result<String> {
        let mut out = format!("# ibench report: base {}\n", escape::markdown(&report.base));
        if !report.headline.is_empty() {
            out.push_str(
                "\nMarked values (better or worse) are in **bold**: only where the runs support \
                 the change (see the headline).\n",
            );
        }
        // The verdict (identity lines, verdict, a line per step) first, after a comparison's
        // headline.
        let mut sections = view::sections(report);
        let at = usize::from(sections.first().is_some_and(|s| s.id == "headline"));
        sections.insert(at, crate::report::sections::verdict::section(report));
        for s in sections {
            // The verdict's note is one identity line per configuration (each escaping its own
            // newlines); any other note is one line, whatever a label in it holds.
            let note = if s.id == "verdict" {
                let lines: Vec<_> = s.note.split('\n').map(escape::markdown).collect();
                lines.join("  \n")
            } else {
                escape::markdown(&s.note).into_owned()
            };
            out.push_str(&format!("\n## {}\n\n{note}\n", escape::markdown(&s.title)));
            for t in &s.tables {
                out.push('\n');
                out.push_str(&table(t));
            }
        }
        out.push_str("\n## Response time\n\nFrom when each op was due; % of ops per bucket.\n");
        for step in &report.step_reports {
            for (_, buckets, percentiles) in view::response_tables(report, step) {
                out.push('\n');
                out.push_str(&table(&buckets));
                out.push('\n');
                out.push_str(&table(&percentiles));
            }
        }
        Ok(out)
    }
}

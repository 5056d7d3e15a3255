//! The report's tables as Markdown, for pasting into issues.

use crate::report::model::Report;
use crate::report::table::Table;
use crate::report::view::{self, ViewTable};

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn table(t: &ViewTable) -> String {
    let mut out = Table::new(t.header.iter().map(|h| escape(h)));
    for row in &t.rows {
        out.row(row.iter().map(|c| {
            let mut text = escape(&c.text);
            if !c.sub.is_empty() {
                text.push_str(&format!(" ({})", escape(&c.sub)));
            }
            match c.class.as_str() {
                "worse" | "better" | "fail" => format!("**{text}**"),
                // A row naming the group of the rows under it (bold would read as a mark).
                "group" => format!("_{text}_"),
                _ => text,
            }
        }));
    }
    format!("*{}*\n\n{}", escape(&t.title), out.to_markdown())
}

/// Renders every table of the report (no charts) as Markdown.
pub fn render(report: &Report) -> String {
    let mut out = format!("# ibench report: base {}\n", escape(&report.base));
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
    sections.insert(at, crate::report::verdict::section(report));
    for s in sections {
        // (The verdict's note is one identity line per configuration.)
        let note = escape(&s.note).replace('\n', "  \n");
        out.push_str(&format!("\n## {}\n\n{note}\n", s.title));
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
    out
}

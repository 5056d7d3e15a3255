//! The building blocks of the report's tables: cells (text and a mark), tables and sections,
//! shared by every section (view.rs and the sections of micro runs, versions, costs).

use serde::Serialize;

use crate::report::figures::{Better, MetricDef, THROUGHPUT};
use crate::report::model::{GroupStep, StepReport};
use crate::report::stat::{Mark, Stat, mark};

/// One table cell: its text and how it is marked.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Cell {
    /// Shown text.
    pub text: String,
    /// A second, smaller line (the min-max range of repeats); Markdown puts it in brackets.
    pub sub: String,
    /// `better`, `worse`, `fail`, `noisy`, `alert` (a verdict that calls for a look), `base` or
    /// empty.
    pub class: String,
    /// Longer explanation (HTML tooltip).
    pub title: String,
}

impl Cell {
    /// A cell with `text` and no mark.
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            ..Cell::default()
        }
    }
    pub fn marked(text: impl Into<String>, class: &str) -> Cell {
        Cell {
            text: text.into(),
            class: class.to_string(),
            ..Cell::default()
        }
    }

    /// The median, with the min-max range of several runs as the second line.
    pub fn stat(s: &Stat, digits: usize) -> Cell {
        Cell {
            text: fmt_value(s.median, digits),
            sub: if s.n > 1 && s.min != s.max {
                format!("{}-{}", fmt_value(s.min, digits), fmt_value(s.max, digits))
            } else {
                String::new()
            },
            ..Cell::default()
        }
    }
}

/// A table with a title.
#[derive(Clone, Debug, Serialize)]
pub struct ViewTable {
    /// Title above the table.
    pub title: String,
    /// Column headers.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<Cell>>,
}

/// A report section: heading, a line of explanation, tables.
#[derive(Clone, Debug, Serialize)]
pub struct Section {
    /// Anchor id.
    pub id: String,
    /// Heading.
    pub title: String,
    /// One line saying what the tables show.
    pub note: String,
    /// The tables.
    pub tables: Vec<ViewTable>,
}

/// `v` as the registry shows a figure with `digits` ([`crate::report::figures::format_value`]).
pub fn fmt_value(v: f64, digits: usize) -> String {
    crate::report::figures::format_value(v, digits)
}

/// A figure relative to the base's (`1.00` for the base itself), marked better or worse only
/// where the runs support it (`marks.rs`): a ratio beyond 0.95/1.05 the runs do not support
/// says "too noisy"; with one run a side the threshold marks it, labelled so.
pub fn relative_cell(s: Option<&Stat>, better: Better, is_base: bool) -> Cell {
    if is_base {
        return Cell::marked("1.00", "base");
    }
    let Some((r, s)) = s.and_then(|s| Some((s.relative?, s))) else {
        return Cell::plain("-");
    };
    // A ratio that rounds to 0.00 but is not 0 reads as "less than 0.01".
    let text = if r > 0.0 && r < 0.005 {
        "<0.01".to_string()
    } else {
        format!("{r:.2}")
    };
    let Some(j) = &s.judged else {
        // Not judged (a report built without runs to test): the threshold, said so.
        let mut c = Cell::marked(text, mark(r, better));
        c.title = "not tested".to_string();
        return c;
    };
    if j.mark == Mark::Negligible {
        let mut c = Cell::plain(crate::report::figures::NEGLIGIBLE);
        c.title = j.note.clone();
        return c;
    }
    let mut c = Cell::plain(text);
    c.title = j.note.clone();
    match j.mark {
        Mark::Better => c.class = "better".to_string(),
        Mark::Worse => c.class = "worse".to_string(),
        Mark::TooNoisy => {
            c.class = "noisy".to_string();
            c.sub = "too noisy".to_string();
        }
        Mark::Flagged => {
            c.class = "noisy".to_string();
            c.sub = "flagged step".to_string();
        }
        Mark::Unchanged | Mark::Untested | Mark::Negligible => {}
    }
    // One run a side: the table's title says so (marks::one_run_note), the tooltip too.
    c
}

/// The figure a step is judged by: queries/s in query steps, indexed rows/s in l.x,
/// inserted rows/s in load steps.
pub fn primary(step: &StepReport) -> Option<&'static MetricDef> {
    ["queries_per_s", "index_rows_per_s", "inserts_per_s"]
        .iter()
        .filter_map(|k| THROUGHPUT.iter().find(|d| d.key == *k))
        .find(|d| step.groups.iter().any(|g| g.throughput.contains_key(d.key)))
}

pub fn incomplete_note(g: &GroupStep) -> String {
    if g.incomplete.is_empty() {
        String::new()
    } else {
        format!(" [{}]", g.incomplete.join(","))
    }
}

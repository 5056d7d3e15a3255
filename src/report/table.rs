//! A plain table rendered as aligned text (terminal) or Markdown.

use crate::output::escape;

/// Rows of cells under a header; the first column is left-aligned, the rest right-aligned
/// (numbers) unless [`Table::align_left`] says otherwise (text).
#[derive(Debug, Default, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    left: Vec<usize>,
}

impl Table {
    /// A table with these column names.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            left: vec![0],
        }
    }

    /// Left-aligns these columns (0-based), header and cells alike: columns of text.
    pub fn align_left(mut self, columns: impl IntoIterator<Item = usize>) -> Self {
        self.left.extend(columns);
        self
    }

    /// Adds a row (missing cells are empty).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// True when the table has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Aligned text with a rule under the header. Cells may hold stored text from anyone
    /// (labels of imported runs): control characters are shown escaped, never sent.
    pub fn to_text(&self) -> String {
        let safe = |cells: &[String]| -> Vec<String> {
            cells.iter().map(|c| escape::line(c).into_owned()).collect()
        };
        let header = safe(&self.header);
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| safe(r)).collect();
        let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (i, c) in row.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(c.chars().count());
                }
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, width) in w.iter().enumerate() {
                let c = cells.get(i).map(String::as_str).unwrap_or("");
                if i > 0 {
                    out.push_str("  ");
                }
                if self.left.contains(&i) {
                    out.push_str(&format!("{c:<width$}"));
                } else {
                    out.push_str(&format!("{c:>width$}"));
                }
            }
            out.trim_end().to_string()
        };
        let mut out = line(&header);
        out.push('\n');
        let total: usize = w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
        out.push_str(&"-".repeat(total));
        out.push('\n');
        for row in &rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }

    /// A Markdown table. Cells are text, stored text from anyone included (labels of imported
    /// runs): each is escaped by [`escape::markdown`] (one row per row, no column added, no
    /// HTML), so Markdown of a caller's own (`**bold**`) must use none of `\\ | ` & < >`.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| escape::markdown(s).into_owned();
        let mut out = format!(
            "| {} |\n|{}|\n",
            self.header
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | "),
            self.header
                .iter()
                .enumerate()
                .map(|(i, _)| if self.left.contains(&i) {
                    ":---"
                } else {
                    "---:"
                })
                .collect::<Vec<_>>()
                .join("|")
        );
        for row in &self.rows {
            let cells: Vec<String> = (0..self.header.len())
                .map(|i| esc(row.get(i).map(String::as_str).unwrap_or("")))
                .collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_markdown() {
        let mut t = Table::new(["step", "ins/s"]);
        t.row(["l.i0", "123.4k"]);
        t.row(["qr100", "100"]);
        assert_eq!(
            t.to_text(),
            "step    ins/s\n-------------\nl.i0   123.4k\nqr100     100\n"
        );
        assert_eq!(
            t.to_markdown(),
            "| step | ins/s |\n|:---|---:|\n| l.i0 | 123.4k |\n| qr100 | 100 |\n"
        );
    }

    #[test]
    fn text_columns_line_up_with_their_header() {
        let mut t = Table::new(["id", "label", "n"]).align_left([1]);
        t.row(["run-1", "a", "5"]);
        t.row(["run-22", "base", "10"]);
        assert_eq!(
            t.to_text(),
            "id      label   n\n-----------------\nrun-1   a       5\nrun-22  base   10\n"
        );
    }
}

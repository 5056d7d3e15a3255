//! The values of the rows a statement returned ([`Rows`]), for a workload that reads what it
//! then writes (TPC-C's next order id, prices, quantities). A DBMS pushes each value as it
//! decodes it, in the form it has it (an integer, a float, text); the workload reads them back
//! as the type it wants, converting where the DBMS sent another (a decimal as text or as a
//! float). The buffers are reused from one statement to the next.

/// One value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Float(f64),
    /// Bytes `start..end` of the text buffer.
    Text(u32, u32),
}

/// The rows of one statement's result, row by row, `width` values each.
#[derive(Debug, Default, Clone)]
pub struct Rows {
    cells: Vec<Cell>,
    text: String,
    width: usize,
}

impl Rows {
    /// Empties the rows for a result of `width` columns.
    pub fn start(&mut self, width: usize) {
        self.cells.clear();
        self.text.clear();
        self.width = width;
    }

    /// Sets the width of a result whose columns are known only with its first value (before
    /// it is pushed): `columns` when [`Rows::start`] gave none.
    pub fn set_width(&mut self, columns: usize) {
        if self.width == 0 {
            self.width = columns;
        }
    }

    /// Appends SQL NULL.
    pub fn push_null(&mut self) {
        self.cells.push(Cell::Null);
    }

    /// Appends an integer.
    pub fn push_int(&mut self, v: i64) {
        self.cells.push(Cell::Int(v));
    }

    /// Appends a float (a decimal read as a number).
    pub fn push_float(&mut self, v: f64) {
        self.cells.push(Cell::Float(v));
    }

    /// Appends text (bytes that are not UTF-8 are replaced).
    pub fn push_text(&mut self, v: &[u8]) {
        let start = self.text.len() as u32;
        self.text.push_str(&String::from_utf8_lossy(v));
        self.cells.push(Cell::Text(start, self.text.len() as u32));
    }

    /// Number of complete rows.
    pub fn len(&self) -> usize {
        self.cells.len().checked_div(self.width).unwrap_or(0)
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn cell(&self, row: usize, col: usize) -> Cell {
        if col >= self.width {
            return Cell::Null;
        }
        self.cells
            .get(row * self.width + col)
            .copied()
            .unwrap_or(Cell::Null)
    }

    /// Value `col` of row `row` as an integer (a float truncated, text parsed); `None` for
    /// NULL, a missing value or text that is not a number.
    pub fn int(&self, row: usize, col: usize) -> Option<i64> {
        match self.cell(row, col) {
            Cell::Null => None,
            Cell::Int(v) => Some(v),
            Cell::Float(v) => Some(v as i64),
            Cell::Text(..) => {
                let t = self.text(row, col).trim();
                t.parse()
                    .ok()
                    .or_else(|| t.parse::<f64>().ok().map(|f| f as i64))
            }
        }
    }

    /// Value `col` of row `row` as a float (text parsed); `None` as for [`Rows::int`].
    pub fn float(&self, row: usize, col: usize) -> Option<f64> {
        match self.cell(row, col) {
            Cell::Null => None,
            Cell::Int(v) => Some(v as f64),
            Cell::Float(v) => Some(v),
            Cell::Text(..) => self.text(row, col).trim().parse().ok(),
        }
    }

    /// Value `col` of row `row` as text (`""` for NULL, a number or a missing value).
    pub fn text(&self, row: usize, col: usize) -> &str {
        match self.cell(row, col) {
            Cell::Text(s, e) => self.text.get(s as usize..e as usize).unwrap_or_default(),
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_the_type_asked_for() {
        let mut r = Rows::default();
        r.start(3);
        r.push_int(7);
        r.push_float(2.5);
        r.push_text(b"12.75");
        r.push_null();
        r.push_text(b"BC");
        r.push_int(-1);
        assert_eq!(r.len(), 2);
        assert_eq!(r.int(0, 0), Some(7));
        assert_eq!(r.float(0, 1), Some(2.5));
        assert_eq!(r.int(0, 1), Some(2));
        assert_eq!(r.float(0, 2), Some(12.75));
        assert_eq!(r.int(0, 2), Some(12));
        assert_eq!(r.int(1, 0), None);
        assert_eq!(r.text(1, 1), "BC");
        assert_eq!(r.int(1, 1), None);
        assert_eq!(r.int(5, 0), None);
        assert_eq!(r.int(0, 3), None);
        r.start(1);
        assert!(r.is_empty());
        r.start(0);
        r.set_width(2);
        r.push_int(1);
        r.set_width(5);
        r.push_int(2);
        assert_eq!((r.len(), r.int(0, 1)), (1, Some(2)));
    }
}

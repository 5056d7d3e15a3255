//! The values bound to one TPC-C statement (or to the rows of one load batch), in reused
//! buffers: integers, amounts and text ranges of one text buffer, as `dbms::sql::Args`.

use anyhow::Result;

use crate::dbms::Table;
use crate::dbms::sql::{Args, Rows, SqlConnection, Statement, Value};

/// Values in order, their text in one buffer.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: Vec<Value>,
    text: String,
}

impl Params {
    /// Empties the values (keeping the buffers).
    pub fn clear(&mut self) -> &mut Self {
        self.values.clear();
        self.text.clear();
        self
    }

    /// Appends an integer.
    pub fn int(&mut self, v: impl Into<i64>) -> &mut Self {
        self.values.push(Value::Int(v.into()));
        self
    }

    /// Appends an amount.
    pub fn float(&mut self, v: f64) -> &mut Self {
        self.values.push(Value::Float(v));
        self
    }

    /// Appends text written by `f` into the buffer.
    pub fn text(&mut self, f: impl FnOnce(&mut String)) -> &mut Self {
        let start = self.text.len() as u32;
        f(&mut self.text);
        let end = self.text.len() as u32;
        self.values.push(Value::Text { start, end });
        self
    }

    /// Appends `s`.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.text(|t| t.push_str(s))
    }

    /// Appends `s`, at most `max` bytes of it (ASCII).
    pub fn str_max(&mut self, s: &str, max: usize) -> &mut Self {
        self.text(|t| t.push_str(&s[..s.len().min(max)]))
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// All values.
    pub fn args(&self) -> Args<'_> {
        Args::new(&self.values, &self.text)
    }

    /// Values `range`.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Args<'_> {
        Args::new(&self.values[range], &self.text)
    }
}

/// Executes `statement` on `table` with `p`; the rows it returned or changed.
pub fn exec(
    c: &mut dyn SqlConnection,
    table: &Table,
    statement: &'static Statement,
    p: &Params,
) -> Result<u64> {
    c.execute(table, statement, p.args())
}

/// Executes `statement` on `table` with `p`, keeping what it returned in `rows`.
pub fn fetch(
    c: &mut dyn SqlConnection,
    table: &Table,
    statement: &'static Statement,
    p: &Params,
    rows: &mut Rows,
) -> Result<u64> {
    c.fetch(table, statement, p.args(), rows)
}

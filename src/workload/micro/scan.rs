//! `scan`: a full table scan, `SELECT * FROM t WHERE length(c) < 0` (true of no row: the DBMS
//! reads every row and sends none), counted as the table's rows: the sequential read path, in
//! rows/s.

use rand_pcg::Pcg64Mcg;

use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{Filter, Hint, Projection, Shape, Statement};

static SCAN_ALL: Statement = Statement::Select {
    what: Projection::All,
    filter: Filter::NoRow,
    order_by: None,
    hint: Hint::None,
};

/// The registry's entry.
pub static SCAN: Benchmark = Benchmark {
    name: "scan",
    about: "SELECT * FROM t WHERE length(c) < 0: a full table scan that returns no row, its \
            rows counted (rows/s): the sequential read path",
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&SCAN_ALL],
    generator: |s| Box::new(Scan(*s)),
};

struct Scan(Scope);

impl Generator for Scan {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        op.push(&SCAN_ALL, table, Some(0));
        // The tables keep their size (deletes re-insert), so this is the rows read.
        op.count_rows(self.0.rows);
    }
}

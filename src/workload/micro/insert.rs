//! `insert`: `INSERT INTO sbinsertN (k, c, pad) VALUES (?, ?, ?)`, the id assigned by the DBMS
//! (auto-increment): an append-only primary key. The tables (`sbinsert1` ... `sbinsertN`, with
//! an index on `k`) are created afresh at the start of each step.

use rand_pcg::Pcg64Mcg;

use super::data::{PAD_GROUPS, push_digit_groups};
use super::sysbench::c_value;
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{IdSource, Shape, Statement};

static APPEND: Statement = Statement::Insert {
    id: IdSource::Generated,
};

/// The registry's entry.
pub static INSERT: Benchmark = Benchmark {
    name: "insert",
    about: "INSERT INTO sbinsertN (k, c, pad), id by auto-increment, tables of its own: an \
            append-only primary key",
    writes: true,
    transaction: false,
    shape: Shape::AutoIncrement,
    statements: &[&APPEND],
    generator: |s| Box::new(Insert(*s)),
};

struct Insert(Scope);

impl Generator for Insert {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        let k = self.0.id(rng);
        op.push(&APPEND, table, Some(1)).int(k);
        c_value(op, rng);
        op.text(|s| push_digit_groups(s, rng, PAD_GROUPS));
    }
}

//! `update-inlist`: `UPDATE t SET c = ? WHERE id IN (100 ids)`, ids uniform: many rows changed
//! by one statement.

use rand_pcg::Pcg64Mcg;

use super::data::push_random_ids;
use super::sysbench::c_value;
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{Column, Filter, Set, Shape, Statement};

const LEN: usize = 100;

static STATEMENT: Statement = Statement::Update {
    set: Set::C,
    filter: Filter::In(Column::Id, LEN),
};

/// The registry's entry.
pub static UPDATE_INLIST: Benchmark = Benchmark {
    name: "update-inlist",
    about: "UPDATE t SET c = ? WHERE id IN (100 ids), ids uniform: many rows changed by one \
            statement",
    writes: true,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&STATEMENT],
    generator: |s| {
        Box::new(UpdateInList {
            scope: *s,
            scratch: Vec::new(),
        })
    },
};

struct UpdateInList {
    scope: Scope,
    scratch: Vec<i64>,
}

impl Generator for UpdateInList {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.scope.table(rng);
        op.push(&STATEMENT, table, None);
        c_value(op, rng);
        let distinct = push_random_ids(op, &self.scope, rng, LEN, &mut self.scratch);
        op.expect_last(Some(distinct));
    }
}

//! `random-points`: `SELECT c FROM t WHERE id IN (L ids)`, the ids uniform (L = 10, 100,
//! 1000): batched point lookups.

use rand_pcg::Pcg64Mcg;

use super::data::push_random_ids;
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{Column, Filter, Hint, Projection, Shape, Statement};

const fn points(len: usize) -> Statement {
    Statement::Select {
        what: Projection::Columns(&[Column::C]),
        filter: Filter::In(Column::Id, len),
        order_by: None,
        hint: Hint::None,
    }
}

static POINTS_10: Statement = points(10);
static POINTS_100: Statement = points(100);
static POINTS_1000: Statement = points(1000);

const ABOUT: &str = "SELECT c FROM t WHERE id IN (L ids), ids uniform: batched point lookups";

/// L = 10.
pub static RANDOM_POINTS_10: Benchmark = Benchmark {
    name: "random-points_range=10",
    about: ABOUT,
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&POINTS_10],
    generator: |s| Box::new(RandomPoints::new(s, &POINTS_10)),
};

/// L = 100.
pub static RANDOM_POINTS_100: Benchmark = Benchmark {
    name: "random-points_range=100",
    statements: &[&POINTS_100],
    generator: |s| Box::new(RandomPoints::new(s, &POINTS_100)),
    ..RANDOM_POINTS_10
};

/// L = 1000.
pub static RANDOM_POINTS_1000: Benchmark = Benchmark {
    name: "random-points_range=1000",
    statements: &[&POINTS_1000],
    generator: |s| Box::new(RandomPoints::new(s, &POINTS_1000)),
    ..RANDOM_POINTS_10
};

/// Draws `statement`'s IN list uniformly; expects as many rows as distinct ids.
pub struct RandomPoints {
    scope: Scope,
    statement: &'static Statement,
    scratch: Vec<i64>,
}

impl RandomPoints {
    /// For `statement`, an `id IN (...)` select.
    pub fn new(scope: &Scope, statement: &'static Statement) -> Self {
        RandomPoints {
            scope: *scope,
            statement,
            scratch: Vec::new(),
        }
    }
}

impl Generator for RandomPoints {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.scope.table(rng);
        op.push(self.statement, table, None);
        let distinct = push_random_ids(op, &self.scope, rng, self.statement.params(), &mut self.scratch);
        op.expect_last(Some(distinct));
    }
}

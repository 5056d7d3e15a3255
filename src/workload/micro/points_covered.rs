//! `points-covered-pk` / `points-covered-si`: `SELECT id FROM t WHERE id IN (100 ids)` and
//! `SELECT k FROM t WHERE k IN (100 values)` (through `k_N`, by a hint where the DBMS takes
//! one): index-only lookups, no row read.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::random_points::RandomPoints;
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{Column, Filter, Hint, Projection, Shape, Statement};

/// Values in each IN list.
pub const LEN: usize = 100;

static PK: Statement = Statement::Select {
    what: Projection::Columns(&[Column::Id]),
    filter: Filter::In(Column::Id, LEN),
    order_by: None,
    hint: Hint::None,
};

static SI: Statement = Statement::Select {
    what: Projection::Columns(&[Column::K]),
    filter: Filter::In(Column::K, LEN),
    order_by: None,
    hint: Hint::K,
};

/// By primary key.
pub static POINTS_COVERED_PK: Benchmark = Benchmark {
    name: "points-covered-pk",
    about: "SELECT id FROM t WHERE id IN (100 ids): index-only lookups in the primary key",
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&PK],
    generator: |s| Box::new(RandomPoints::new(s, &PK)),
};

/// By the secondary index.
pub static POINTS_COVERED_SI: Benchmark = Benchmark {
    name: "points-covered-si",
    about: "SELECT k FROM t WHERE k IN (100 values), through k_N: index-only lookups in the \
            secondary index",
    statements: &[&SI],
    generator: |s| Box::new(KPoints::new(s, &SI)),
    ..POINTS_COVERED_PK
};

/// Draws `statement`'s IN list of `k` values uniformly; how many rows match is not known
/// (`k` values repeat and miss), so nothing is expected.
pub struct KPoints {
    scope: Scope,
    statement: &'static Statement,
}

impl KPoints {
    /// For `statement`, a `k IN (...)` select.
    pub fn new(scope: &Scope, statement: &'static Statement) -> Self {
        KPoints {
            scope: *scope,
            statement,
        }
    }
}

impl Generator for KPoints {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.scope.table(rng);
        op.push(self.statement, table, None);
        for _ in 0..self.statement.params() {
            op.int(rng.random_range(1..=self.scope.rows.max(1) as i64));
        }
    }
}

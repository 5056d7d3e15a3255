//! `range-covered-pk` / `range-covered-si` (L = 10, 100, 1000, 10000): `SELECT id FROM t
//! WHERE id BETWEEN ? AND ?` and `SELECT k FROM t WHERE k BETWEEN ? AND ?` (through `k_N`, by
//! a hint where the DBMS takes one), ranges of L ids or `k` values: covering index scans.

use rand_pcg::Pcg64Mcg;

use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{Column, Filter, Hint, Projection, Shape, Statement};

const fn between(what: Column, on: Column) -> Statement {
    Statement::Select {
        what: Projection::Columns(match what {
            Column::Id => &[Column::Id],
            Column::K => &[Column::K],
            Column::C => &[Column::C],
            Column::Pad | Column::Named(_) => &[Column::Pad],
        }),
        filter: Filter::Between(on),
        order_by: None,
        hint: match on {
            Column::K => Hint::K,
            _ => Hint::None,
        },
    }
}

static PK: Statement = between(Column::Id, Column::Id);
static SI: Statement = between(Column::K, Column::K);

/// Scans of `len` consecutive ids (`BETWEEN` on `id`: that many rows, fewer only when the
/// table is smaller) or `k` values (how many rows is not known).
pub struct Ranges {
    scope: Scope,
    statement: &'static Statement,
    len: u64,
    on_id: bool,
}

impl Ranges {
    /// A generator of `statement`'s ranges of `len`.
    pub fn boxed(scope: &Scope, statement: &'static Statement, len: u64) -> Box<dyn Generator> {
        let on_id = matches!(
            statement,
            Statement::Select {
                filter: Filter::Between(Column::Id),
                ..
            }
        );
        Box::new(Ranges {
            scope: *scope,
            statement,
            len,
            on_id,
        })
    }
}

impl Generator for Ranges {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.scope.table(rng);
        let (first, last) = self.scope.range(rng, self.len);
        let expect = self.on_id.then_some((last - first + 1) as u64);
        op.push(self.statement, table, expect).int(first).int(last);
    }
}

const ABOUT_PK: &str = "SELECT id FROM t WHERE id BETWEEN ? AND ?, L ids: covering scans of the \
                        primary key";
const ABOUT_SI: &str = "SELECT k FROM t WHERE k BETWEEN ? AND ?, L values, through k_N: \
                        covering scans of the secondary index";

/// L = 10 on the primary key.
pub static RANGE_COVERED_PK_10: Benchmark = Benchmark {
    name: "range-covered-pk_range=10",
    about: ABOUT_PK,
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&PK],
    generator: |s| Ranges::boxed(s, &PK, 10),
};
at_lengths!(
    RANGE_COVERED_PK_10,
    "range-covered-pk",
    |s, len| Ranges::boxed(s, &PK, len),
    [RANGE_COVERED_PK_100 = 100, RANGE_COVERED_PK_1000 = 1000, RANGE_COVERED_PK_10000 = 10000]
);

/// L = 10 on the secondary index.
pub static RANGE_COVERED_SI_10: Benchmark = Benchmark {
    name: "range-covered-si_range=10",
    about: ABOUT_SI,
    statements: &[&SI],
    generator: |s| Ranges::boxed(s, &SI, 10),
    ..RANGE_COVERED_PK_10
};
at_lengths!(
    RANGE_COVERED_SI_10,
    "range-covered-si",
    |s, len| Ranges::boxed(s, &SI, len),
    [RANGE_COVERED_SI_100 = 100, RANGE_COVERED_SI_1000 = 1000, RANGE_COVERED_SI_10000 = 10000]
);

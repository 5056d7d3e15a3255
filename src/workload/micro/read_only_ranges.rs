//! `read-only-simple`, `-sum`, `-order`, `-distinct`, `-count`: one of read-only's range
//! kinds alone (and `count(*)`), L = 1000 ids: which range kind regressed.

use rand_pcg::Pcg64Mcg;

use super::sysbench::{COUNT_RANGE, DISTINCT_RANGE, ORDER_RANGE, SIMPLE_RANGE, SUM_RANGE, range};
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{Shape, Statement};

/// Ids in each range.
const LEN: u64 = 1000;

/// Rows each kind returns for a range of `n` ids, when known.
#[derive(Clone, Copy)]
enum Rows {
    /// One per id.
    PerId,
    /// One (an aggregate).
    One,
    /// Not known (DISTINCT of random values).
    Unknown,
}

struct RangeKind {
    scope: Scope,
    statement: &'static Statement,
    rows: Rows,
}

fn boxed(scope: &Scope, statement: &'static Statement, rows: Rows) -> Box<dyn Generator> {
    Box::new(RangeKind {
        scope: *scope,
        statement,
        rows,
    })
}

impl Generator for RangeKind {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.scope.table(rng);
        let r = self.scope.range(rng, LEN);
        let expect = match self.rows {
            Rows::PerId => Some((r.1 - r.0 + 1) as u64),
            Rows::One => Some(1),
            Rows::Unknown => None,
        };
        range(op, self.statement, table, r, expect);
    }
}

/// `SELECT c ... BETWEEN`.
pub static READ_ONLY_SIMPLE: Benchmark = Benchmark {
    name: "read-only-simple",
    about: "SELECT c FROM t WHERE id BETWEEN ? AND ?, 1000 ids: read-only's simple range alone",
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&SIMPLE_RANGE],
    generator: |s| boxed(s, &SIMPLE_RANGE, Rows::PerId),
};
/// `SELECT SUM(k) ... BETWEEN`.
pub static READ_ONLY_SUM: Benchmark = Benchmark {
    name: "read-only-sum",
    about: "SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?, 1000 ids: read-only's SUM range alone",
    statements: &[&SUM_RANGE],
    generator: |s| boxed(s, &SUM_RANGE, Rows::One),
    ..READ_ONLY_SIMPLE
};
/// `SELECT c ... BETWEEN ... ORDER BY c`.
pub static READ_ONLY_ORDER: Benchmark = Benchmark {
    name: "read-only-order",
    about: "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c, 1000 ids: read-only's ORDER BY \
            range alone",
    statements: &[&ORDER_RANGE],
    generator: |s| boxed(s, &ORDER_RANGE, Rows::PerId),
    ..READ_ONLY_SIMPLE
};
/// `SELECT DISTINCT c ... BETWEEN ... ORDER BY c`.
pub static READ_ONLY_DISTINCT: Benchmark = Benchmark {
    name: "read-only-distinct",
    about: "SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c, 1000 ids: read-only's \
            DISTINCT range alone",
    statements: &[&DISTINCT_RANGE],
    generator: |s| boxed(s, &DISTINCT_RANGE, Rows::Unknown),
    ..READ_ONLY_SIMPLE
};
/// `SELECT count(*) ... BETWEEN`.
pub static READ_ONLY_COUNT: Benchmark = Benchmark {
    name: "read-only-count",
    about: "SELECT count(*) FROM t WHERE id BETWEEN ? AND ?, 1000 ids: a range counted, not sent",
    statements: &[&COUNT_RANGE],
    generator: |s| boxed(s, &COUNT_RANGE, Rows::One),
    ..READ_ONLY_SIMPLE
};

//! `read-only` (L = 10, 100, 10000): sysbench's `oltp_read_only` transaction on one table:
//! ten point selects, then a simple, a SUM, an ORDER BY and a DISTINCT range of L ids.

use rand_pcg::Pcg64Mcg;

use super::sysbench::{self, READ_ONLY};
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::Shape;

/// sysbench's read-only transaction with ranges of `len`.
pub struct ReadOnly {
    scope: Scope,
    len: u64,
}

impl ReadOnly {
    /// Ranges of `len` ids.
    pub fn boxed(scope: &Scope, len: u64) -> Box<dyn Generator> {
        Box::new(ReadOnly { scope: *scope, len })
    }
}

impl Generator for ReadOnly {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.scope.table(rng);
        sysbench::read_only(op, &self.scope, rng, table, self.len);
    }
}

/// L = 10.
pub static READ_ONLY_10: Benchmark = Benchmark {
    name: "read-only_range=10",
    about: "one transaction: 10 point selects, then simple, SUM, ORDER BY and DISTINCT ranges \
            of L ids (sysbench oltp_read_only)",
    writes: false,
    transaction: true,
    shape: Shape::Sbtest,
    statements: &READ_ONLY,
    generator: |s| ReadOnly::boxed(s, 10),
};
/// L = 100 (sysbench's default).
pub static READ_ONLY_100: Benchmark = Benchmark {
    name: "read-only_range=100",
    generator: |s| ReadOnly::boxed(s, 100),
    ..READ_ONLY_10
};
/// L = 10000.
pub static READ_ONLY_10000: Benchmark = Benchmark {
    name: "read-only_range=10000",
    generator: |s| ReadOnly::boxed(s, 10_000),
    ..READ_ONLY_10
};

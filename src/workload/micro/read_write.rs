//! `read-write` (L = 10, 100): sysbench's `oltp_read_write` transaction on one table:
//! read-only's statements, then write-only's.

use rand_pcg::Pcg64Mcg;

use super::sysbench::{self, READ_WRITE};
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::Shape;

struct ReadWrite {
    scope: Scope,
    len: u64,
}

fn boxed(scope: &Scope, len: u64) -> Box<dyn Generator> {
    Box::new(ReadWrite { scope: *scope, len })
}

impl Generator for ReadWrite {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.scope.table(rng);
        sysbench::read_only(op, &self.scope, rng, table, self.len);
        sysbench::write_only(op, &self.scope, rng, table);
    }
}

/// L = 10.
pub static READ_WRITE_10: Benchmark = Benchmark {
    name: "read-write_range=10",
    about: "one transaction: read-only's statements (ranges of L ids), then write-only's \
            (sysbench oltp_read_write)",
    writes: true,
    transaction: true,
    shape: Shape::Sbtest,
    statements: &READ_WRITE,
    generator: |s| boxed(s, 10),
};
/// L = 100 (sysbench's default).
pub static READ_WRITE_100: Benchmark = Benchmark {
    name: "read-write_range=100",
    generator: |s| boxed(s, 100),
    ..READ_WRITE_10
};

//! `write-only`: sysbench's `oltp_write_only` transaction on one table: an index update, a
//! non-index update, a delete and the re-insert of the row deleted (each client on rows of
//! its own, so the table keeps its size and every count is exact).

use rand_pcg::Pcg64Mcg;

use super::sysbench::{self, WRITE_ONLY as STATEMENTS};
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::Shape;

/// The registry's entry.
pub static WRITE_ONLY: Benchmark = Benchmark {
    name: "write-only",
    about: "one transaction: update-index, update-nonindex, delete + insert of the same id \
            (sysbench oltp_write_only)",
    writes: true,
    transaction: true,
    shape: Shape::Sbtest,
    statements: &STATEMENTS,
    generator: |s| Box::new(WriteOnly(*s)),
};

struct WriteOnly(Scope);

impl Generator for WriteOnly {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        sysbench::write_only(op, &self.0, rng, table);
    }
}

//! `delete`: `DELETE FROM t WHERE id = ?`, then the re-insert of that id, each committed on
//! its own (sysbench `oltp_delete`'s delete + insert); each client on rows of its own, so the
//! table keeps its size.

use rand_pcg::Pcg64Mcg;

use super::sysbench::{self, DELETE as DELETE_ID, INSERT};
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::Shape;

/// The registry's entry.
pub static DELETE: Benchmark = Benchmark {
    name: "delete",
    about: "DELETE FROM t WHERE id = ?, then INSERT of the same id (each autocommit), so the \
            table keeps its size",
    writes: true,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&DELETE_ID, &INSERT],
    generator: |s| Box::new(Delete(*s)),
};

struct Delete(Scope);

impl Generator for Delete {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        sysbench::delete_insert(op, &self.0, rng, table);
    }
}

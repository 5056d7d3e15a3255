//! `update-index`: `UPDATE t SET k = k + 1 WHERE id = ?`, id uniform (sysbench
//! `oltp_update_index`): secondary index maintenance.

use rand_pcg::Pcg64Mcg;

use super::sysbench::UPDATE_INDEX as STATEMENT;
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::Shape;

/// The registry's entry.
pub static UPDATE_INDEX: Benchmark = Benchmark {
    name: "update-index",
    about: "UPDATE t SET k = k + 1 WHERE id = ?, id uniform (sysbench oltp_update_index): \
            secondary index maintenance",
    writes: true,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&STATEMENT],
    generator: |s| Box::new(UpdateIndex(*s)),
};

struct UpdateIndex(Scope);

impl Generator for UpdateIndex {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        let id = self.0.id(rng);
        op.push(&STATEMENT, table, Some(1)).int(id);
    }
}

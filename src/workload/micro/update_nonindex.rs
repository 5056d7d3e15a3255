//! `update-nonindex`: `UPDATE t SET c = ? WHERE id = ?`, id uniform (sysbench
//! `oltp_update_non_index`): a row changed, no index.

use rand_pcg::Pcg64Mcg;

use super::sysbench::{UPDATE_NONINDEX as STATEMENT, c_value};
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::Shape;

/// The registry's entry.
pub static UPDATE_NONINDEX: Benchmark = Benchmark {
    name: "update-nonindex",
    about: "UPDATE t SET c = ? WHERE id = ?, id uniform (sysbench oltp_update_non_index): a row \
            changed, no index",
    writes: true,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&STATEMENT],
    generator: |s| Box::new(UpdateNonIndex::new(s, Ids::Uniform)),
};

/// Where the rows updated are.
#[derive(Clone, Copy)]
pub enum Ids {
    /// Any row of any table, uniformly.
    Uniform,
    /// Row 1 of the first table, for every client.
    One,
    /// Zipfian over the ids of a uniform table.
    Zipf(super::data::Zipf),
}

/// `UPDATE t SET c = ? WHERE id = ?` on the rows `ids` says.
pub struct UpdateNonIndex {
    scope: Scope,
    ids: Ids,
}

impl UpdateNonIndex {
    /// Updates at `ids`.
    pub fn new(scope: &Scope, ids: Ids) -> Self {
        UpdateNonIndex {
            scope: *scope,
            ids,
        }
    }
}

impl Generator for UpdateNonIndex {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let (table, id) = match self.ids {
            Ids::Uniform => (self.scope.table(rng), self.scope.id(rng)),
            Ids::One => (0, 1),
            Ids::Zipf(z) => (self.scope.table(rng), z.sample(rng) as i64),
        };
        op.push(&STATEMENT, table, Some(1));
        c_value(op, rng);
        op.int(id);
    }
}

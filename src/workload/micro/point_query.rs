//! `point-query`: `SELECT c FROM sbtestN WHERE id = ?`, one row by primary key, on a table
//! and an id drawn uniformly (sysbench `oltp_point_select`). Exposes per-query CPU, and page
//! reads when the tables do not fit in the cache.

use rand_pcg::Pcg64Mcg;

use super::sysbench::POINT_SELECT;
use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::Shape;

/// The registry's entry.
pub static POINT_QUERY: Benchmark = Benchmark {
    name: "point-query",
    about: "SELECT c FROM t WHERE id = ?: one row by primary key (sysbench oltp_point_select); \
            per-query CPU, page reads when IO-bound",
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&POINT_SELECT],
    generator: |s| Box::new(PointQuery(*s)),
};

struct PointQuery(Scope);

impl Generator for PointQuery {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        let id = self.0.id(rng);
        op.push(&POINT_SELECT, table, Some(1)).int(id);
    }
}

//! `hot-points`: as random-points with L = 100, but the ids are the same 100 consecutive ids
//! around the middle of the table for every client: hot pages, mutex contention.

use rand_pcg::Pcg64Mcg;

use super::{Benchmark, Generator, Operation, Scope};
use crate::dbms::sql::{Column, Filter, Hint, Projection, Shape, Statement};

const LEN: usize = 100;

static HOT: Statement = Statement::Select {
    what: Projection::Columns(&[Column::C]),
    filter: Filter::In(Column::Id, LEN),
    order_by: None,
    hint: Hint::None,
};

/// The registry's entry.
pub static HOT_POINTS_100: Benchmark = Benchmark {
    name: "hot-points",
    about: "SELECT c FROM t WHERE id IN (100 ids), the same consecutive ids around rows/2 for \
            every client: hot pages, mutex contention",
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&HOT],
    generator: |s| Box::new(HotPoints(*s)),
};

struct HotPoints(Scope);

impl Generator for HotPoints {
    fn next(&mut self, rng: &mut Pcg64Mcg, op: &mut Operation) {
        let table = self.0.table(rng);
        let (first, last) = self.0.hot_range(LEN as u64);
        let rows = (last - first + 1) as u64;
        op.push(&HOT, table, Some(rows));
        // A table smaller than the list repeats its last id (IN ignores repeats).
        for i in 0..LEN as i64 {
            op.int((first + i).min(last));
        }
    }
}

//! `point-select`: `SELECT c FROM sbtestN WHERE id = ?`, one row by primary key, on a table
//! and an id drawn uniformly (sysbench `oltp_point_select`). Exposes per-query CPU, and page
//! reads when the tables do not fit in the cache.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::{Benchmark, Generator, Operation, Tables, Value};
use crate::dbms::micro::{Column, Filter, Statement};
use crate::metrics::recorder::Op;

static SELECT: Statement = Statement::Select {
    columns: &[Column::C],
    filter: Filter::IdEq,
};

/// The registry's entry.
pub static POINT_SELECT: Benchmark = Benchmark {
    name: "point-select",
    about: "SELECT c FROM sbtestN WHERE id = ?: one row by primary key (sysbench oltp_point_select)",
    op: Op::Query,
    generator: || Box::new(PointSelect),
};

struct PointSelect;

impl Generator for PointSelect {
    fn next(&mut self, rng: &mut Pcg64Mcg, tables: &Tables, op: &mut Operation) {
        let table = rng.random_range(0..tables.count);
        let id = rng.random_range(1..=tables.rows as i64);
        op.push(&SELECT, table, &[Value::Int(id)], Some(1));
    }
}

//! `update-one`: update-nonindex with every client on the same row (id 1 of sbtest1): row-lock
//! and hot-row contention (the mysqlslap same-row test).

use super::Benchmark;
use super::sysbench::UPDATE_NONINDEX as STATEMENT;
use super::update_nonindex::{Ids, UpdateNonIndex};
use crate::dbms::sql::Shape;

/// The registry's entry.
pub static UPDATE_ONE: Benchmark = Benchmark {
    name: "update-one",
    about: "UPDATE t SET c = ? WHERE id = 1 on sbtest1, every client on the same row: row-lock \
            and hot-row contention",
    writes: true,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&STATEMENT],
    generator: |s| Box::new(UpdateNonIndex::new(s, Ids::One)),
};

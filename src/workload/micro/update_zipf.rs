//! `update-zipf`: update-nonindex with zipfian ids (exponent 0.8, sysbench's default; id 1 the
//! hottest): skew.

use super::Benchmark;
use super::data::{ZIPF_EXPONENT, Zipf};
use super::sysbench::UPDATE_NONINDEX as STATEMENT;
use super::update_nonindex::{Ids, UpdateNonIndex};
use crate::dbms::sql::Shape;

/// The registry's entry.
pub static UPDATE_ZIPF: Benchmark = Benchmark {
    name: "update-zipf",
    about: "UPDATE t SET c = ? WHERE id = ?, ids zipfian (exponent 0.8, id 1 hottest): skew",
    writes: true,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&STATEMENT],
    generator: |s| {
        Box::new(UpdateNonIndex::new(
            s,
            Ids::Zipf(Zipf::new(s.rows, ZIPF_EXPONENT)),
        ))
    },
};

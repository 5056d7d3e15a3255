//! `range-notcovered-pk` / `range-notcovered-si` (L = 10, 100, 1000, 10000): `SELECT c FROM
//! t WHERE id BETWEEN ? AND ?` and `... WHERE k BETWEEN ? AND ?` (through `k_N`, by a hint
//! where the DBMS takes one): scans that read each row, per-row lookups from the secondary
//! index, latch contention.

use super::Benchmark;
use super::range_covered::Ranges;
use crate::dbms::sql::{Column, Filter, Hint, Projection, Shape, Statement};

static PK: Statement = Statement::Select {
    what: Projection::Columns(&[Column::C]),
    filter: Filter::Between(Column::Id),
    order_by: None,
    hint: Hint::None,
};

static SI: Statement = Statement::Select {
    what: Projection::Columns(&[Column::C]),
    filter: Filter::Between(Column::K),
    order_by: None,
    hint: Hint::K,
};

const ABOUT_PK: &str = "SELECT c FROM t WHERE id BETWEEN ? AND ?, L ids: scans of the primary \
                        key that read each row";
const ABOUT_SI: &str = "SELECT c FROM t WHERE k BETWEEN ? AND ?, L values, through k_N: a row \
                        lookup per index entry, latch contention";

/// L = 10 on the primary key.
pub static RANGE_NOTCOVERED_PK_10: Benchmark = Benchmark {
    name: "range-notcovered-pk_range=10",
    about: ABOUT_PK,
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&PK],
    generator: |s| Ranges::boxed(s, &PK, 10),
};
at_lengths!(
    RANGE_NOTCOVERED_PK_10,
    "range-notcovered-pk",
    |s, len| Ranges::boxed(s, &PK, len),
    [
        RANGE_NOTCOVERED_PK_100 = 100,
        RANGE_NOTCOVERED_PK_1000 = 1000,
        RANGE_NOTCOVERED_PK_10000 = 10000,
    ]
);

/// L = 10 on the secondary index.
pub static RANGE_NOTCOVERED_SI_10: Benchmark = Benchmark {
    name: "range-notcovered-si_range=10",
    about: ABOUT_SI,
    statements: &[&SI],
    generator: |s| Ranges::boxed(s, &SI, 10),
    ..RANGE_NOTCOVERED_PK_10
};
at_lengths!(
    RANGE_NOTCOVERED_SI_10,
    "range-notcovered-si",
    |s, len| Ranges::boxed(s, &SI, len),
    [
        RANGE_NOTCOVERED_SI_100 = 100,
        RANGE_NOTCOVERED_SI_1000 = 1000,
        RANGE_NOTCOVERED_SI_10000 = 10000,
    ]
);

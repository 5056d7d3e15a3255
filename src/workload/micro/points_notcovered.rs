//! `points-notcovered-pk` / `points-notcovered-si`: `SELECT id, c FROM t WHERE id IN (100
//! ids)` and `... WHERE k IN (100 values)` (through `k_N`, by a hint where the DBMS takes
//! one): per-row lookups.

use super::points_covered::{KPoints, LEN};
use super::random_points::RandomPoints;
use super::Benchmark;
use crate::dbms::sql::{Column, Filter, Hint, Projection, Shape, Statement};

static PK: Statement = Statement::Select {
    what: Projection::Columns(&[Column::Id, Column::C]),
    filter: Filter::In(Column::Id, LEN),
    order_by: None,
    hint: Hint::None,
};

static SI: Statement = Statement::Select {
    what: Projection::Columns(&[Column::Id, Column::C]),
    filter: Filter::In(Column::K, LEN),
    order_by: None,
    hint: Hint::K,
};

/// By primary key.
pub static POINTS_NOTCOVERED_PK: Benchmark = Benchmark {
    name: "points-notcovered-pk",
    about: "SELECT id, c FROM t WHERE id IN (100 ids): per-row lookups by primary key",
    writes: false,
    transaction: false,
    shape: Shape::Sbtest,
    statements: &[&PK],
    generator: |s| Box::new(RandomPoints::new(s, &PK)),
};

/// By the secondary index.
pub static POINTS_NOTCOVERED_SI: Benchmark = Benchmark {
    name: "points-notcovered-si",
    about: "SELECT id, c FROM t WHERE k IN (100 values), through k_N: a row lookup per index \
            entry",
    statements: &[&SI],
    generator: |s| Box::new(KPoints::new(s, &SI)),
    ..POINTS_NOTCOVERED_PK
};

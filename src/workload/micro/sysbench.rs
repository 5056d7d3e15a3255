//! sysbench's OLTP statements, shared by the benchmarks built from them (point-query,
//! read-only, write-only, read-write, the updates, delete), and how each draws its values.

use rand_pcg::Pcg64Mcg;

use super::data::{C_GROUPS, PAD_GROUPS, push_digit_groups};
use super::{Operation, Scope};
use crate::dbms::sql::{Column, Filter, Hint, IdSource, Projection, Set, Statement};

const fn select(what: Projection, filter: Filter, order_by: Option<Column>) -> Statement {
    Statement::Select {
        what,
        filter,
        order_by,
        hint: Hint::None,
    }
}

/// `SELECT c FROM t WHERE id = ?`.
pub static POINT_SELECT: Statement = select(Projection::Columns(&[Column::C]), Filter::IdEq, None);
/// `SELECT c FROM t WHERE id BETWEEN ? AND ?`.
pub static SIMPLE_RANGE: Statement = select(
    Projection::Columns(&[Column::C]),
    Filter::Between(Column::Id),
    None,
);
/// `SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?`.
pub static SUM_RANGE: Statement = select(
    Projection::Sum(Column::K),
    Filter::Between(Column::Id),
    None,
);
/// `SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c`.
pub static ORDER_RANGE: Statement = select(
    Projection::Columns(&[Column::C]),
    Filter::Between(Column::Id),
    Some(Column::C),
);
/// `SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c`.
pub static DISTINCT_RANGE: Statement = select(
    Projection::Distinct(Column::C),
    Filter::Between(Column::Id),
    Some(Column::C),
);
/// `SELECT count(*) FROM t WHERE id BETWEEN ? AND ?`.
pub static COUNT_RANGE: Statement = select(Projection::Count, Filter::Between(Column::Id), None);
/// `UPDATE t SET k = k + 1 WHERE id = ?`.
pub static UPDATE_INDEX: Statement = Statement::Update {
    set: Set::KPlusOne,
    filter: Filter::IdEq,
};
/// `UPDATE t SET c = ? WHERE id = ?`.
pub static UPDATE_NONINDEX: Statement = Statement::Update {
    set: Set::C,
    filter: Filter::IdEq,
};
/// `DELETE FROM t WHERE id = ?`.
pub static DELETE: Statement = Statement::Delete {
    filter: Filter::IdEq,
};
/// `INSERT INTO t (id, k, c, pad) VALUES (?, ?, ?, ?)`.
pub static INSERT: Statement = Statement::Insert {
    id: IdSource::Given,
};

/// The statements of one read-only transaction: point selects and the four ranges.
pub static READ_ONLY: [&Statement; 5] = [
    &POINT_SELECT,
    &SIMPLE_RANGE,
    &SUM_RANGE,
    &ORDER_RANGE,
    &DISTINCT_RANGE,
];
/// The statements of one write-only transaction.
pub static WRITE_ONLY: [&Statement; 4] = [&UPDATE_INDEX, &UPDATE_NONINDEX, &DELETE, &INSERT];
/// Both.
pub static READ_WRITE: [&Statement; 9] = [
    &POINT_SELECT,
    &SIMPLE_RANGE,
    &SUM_RANGE,
    &ORDER_RANGE,
    &DISTINCT_RANGE,
    &UPDATE_INDEX,
    &UPDATE_NONINDEX,
    &DELETE,
    &INSERT,
];

/// Point selects in one read-only transaction, as sysbench's `--point-selects`.
const POINT_SELECTS: usize = 10;

/// Adds a value for `c`, as sysbench generates it.
pub fn c_value(op: &mut Operation, rng: &mut Pcg64Mcg) {
    op.text(|s| push_digit_groups(s, rng, C_GROUPS));
}

/// Adds `range` (`BETWEEN first AND last`) of `statement` on `table`, expecting `expect` rows.
pub fn range(
    op: &mut Operation,
    statement: &'static Statement,
    table: usize,
    (first, last): (i64, i64),
    expect: Option<u64>,
) {
    op.push(statement, table, expect).int(first).int(last);
}

/// sysbench's read-only transaction on `table`: ten point selects, then a simple, a SUM, an
/// ORDER BY and a DISTINCT range of `len` ids.
pub fn read_only(op: &mut Operation, scope: &Scope, rng: &mut Pcg64Mcg, table: usize, len: u64) {
    for _ in 0..POINT_SELECTS {
        let id = scope.id(rng);
        op.push(&POINT_SELECT, table, Some(1)).int(id);
    }
    for (statement, rows) in [
        (&SIMPLE_RANGE, true),
        (&SUM_RANGE, false),
        (&ORDER_RANGE, true),
        (&DISTINCT_RANGE, false),
    ] {
        let r = scope.range(rng, len);
        let expect = if rows {
            Some((r.1 - r.0 + 1) as u64)
        } else if std::ptr::eq(statement, &SUM_RANGE) {
            Some(1)
        } else {
            // DISTINCT c: random values, almost always all different, but not surely.
            None
        };
        range(op, statement, table, r, expect);
    }
}

/// sysbench's write-only transaction on `table`, on ids of this client's own: an index
/// update, a non-index update, a delete and the re-insert of the row deleted.
pub fn write_only(op: &mut Operation, scope: &Scope, rng: &mut Pcg64Mcg, table: usize) {
    let id = scope.own_id(rng);
    op.push(&UPDATE_INDEX, table, Some(1)).int(id);
    let id = scope.own_id(rng);
    op.push(&UPDATE_NONINDEX, table, Some(1));
    c_value(op, rng);
    op.int(id);
    delete_insert(op, scope, rng, table);
}

/// A delete of one of this client's rows and its re-insert (new `k`, `c`, `pad`), so the
/// table keeps its size.
pub fn delete_insert(op: &mut Operation, scope: &Scope, rng: &mut Pcg64Mcg, table: usize) {
    let id = scope.own_id(rng);
    op.push(&DELETE, table, Some(1)).int(id);
    let k = scope.id(rng);
    op.push(&INSERT, table, Some(1)).int(id).int(k);
    c_value(op, rng);
    op.text(|s| push_digit_groups(s, rng, PAD_GROUPS));
}

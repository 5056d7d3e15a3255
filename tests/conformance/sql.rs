//! SQL connections (`SqlConnection`): sysbench's table loaded and indexed,
//! each kind of statement of the vocabulary returning or changing exactly the rows it must
//! (checked with the test's own reads), transactions that commit and roll back, and the
//! insert benchmarks' tables (ids assigned by the DBMS, random text keys).

use ibench::dbms::sql::{
    Args, Column, Filter, Hint, IdSource, Projection, Rows, SbtestRows, Set, Shape, SqlConnection,
    Statement, Value, k_index_name,
};
use ibench::dbms::{Dbms, Table, TableOrigin};

use super::own::SbRow;
use super::{Target, table};

const fn select(
    what: Projection,
    filter: Filter,
    order_by: Option<Column>,
    hint: Hint,
) -> Statement {
    Statement::Select {
        what,
        filter,
        order_by,
        hint,
    }
}

pub static POINT: Statement = select(
    Projection::Columns(&[Column::C]),
    Filter::IdEq,
    None,
    Hint::None,
);
static IN_IDS: Statement = select(
    Projection::Columns(&[Column::Id, Column::C]),
    Filter::In(Column::Id, 3),
    None,
    Hint::None,
);
static RANGE: Statement = select(
    Projection::Columns(&[Column::C]),
    Filter::Between(Column::Id),
    Some(Column::C),
    Hint::None,
);
static SUM: Statement = select(
    Projection::Sum(Column::K),
    Filter::Between(Column::Id),
    None,
    Hint::None,
);
static COUNT: Statement = select(
    Projection::Count,
    Filter::Between(Column::Id),
    None,
    Hint::None,
);
static DISTINCT: Statement = select(
    Projection::Distinct(Column::C),
    Filter::Between(Column::Id),
    Some(Column::C),
    Hint::None,
);
static NO_ROW: Statement = select(Projection::All, Filter::NoRow, None, Hint::None);
static K_RANGE: Statement = select(
    Projection::Columns(&[Column::K]),
    Filter::Between(Column::K),
    None,
    Hint::K,
);
static K_IN: Statement = select(
    Projection::Columns(&[Column::Id]),
    Filter::In(Column::K, 2),
    None,
    Hint::K,
);
/// `k = k + 1` by id.
pub static UPDATE_K: Statement = Statement::Update {
    set: Set::KPlusOne,
    filter: Filter::IdEq,
};
static UPDATE_C: Statement = Statement::Update {
    set: Set::C,
    filter: Filter::In(Column::Id, 2),
};
static DELETE: Statement = Statement::Delete {
    filter: Filter::IdEq,
};
static DELETE_RANGE: Statement = Statement::Delete {
    filter: Filter::Between(Column::Id),
};
/// A row with its id.
pub static INSERT: Statement = Statement::Insert {
    id: IdSource::Given,
};
static INSERT_GENERATED: Statement = Statement::Insert {
    id: IdSource::Generated,
};

/// A value bound to a statement.
#[derive(Clone, Copy)]
pub enum A<'a> {
    /// An integer.
    I(i64),
    /// Text.
    S(&'a str),
    /// A float.
    F(f64),
}

/// Executes `s` on `tbl` with `values`.
pub fn run(
    m: &mut dyn SqlConnection,
    tbl: &Table,
    s: &'static Statement,
    values: &[A<'_>],
) -> anyhow::Result<u64> {
    let (bound, text) = bind(s, values);
    m.execute(tbl, s, Args::new(&bound, &text))
}

/// Executes `s` on `tbl` with `values`, keeping the rows it returned in `out`.
pub fn fetch(
    m: &mut dyn SqlConnection,
    tbl: &Table,
    s: &'static Statement,
    values: &[A<'_>],
    out: &mut Rows,
) -> anyhow::Result<u64> {
    let (bound, text) = bind(s, values);
    m.fetch(tbl, s, Args::new(&bound, &text), out)
}

/// `values` as a statement's values and their text buffer.
fn bind(s: &Statement, values: &[A<'_>]) -> (Vec<Value>, String) {
    assert_eq!(values.len(), s.params(), "{s:?}");
    let mut text = String::new();
    let bound = values
        .iter()
        .map(|v| match *v {
            A::I(i) => Value::Int(i),
            A::F(f) => Value::Float(f),
            A::S(s) => {
                let start = text.len() as u32;
                text.push_str(s);
                Value::Text {
                    start,
                    end: text.len() as u32,
                }
            }
        })
        .collect();
    (bound, text)
}

/// `k` of row `id` as the suite loads it.
fn k_of(id: i64) -> i64 {
    100 + id % 5
}

/// `c` (120 characters) numbered `n`, with a quote and a backslash (plain SQL must escape
/// them).
pub fn c_text(n: i64) -> String {
    format!("c'\\{n:0>117}")
}

/// Sysbench's rows `ids`.
pub fn sbtest_rows(ids: std::ops::RangeInclusive<i64>) -> SbtestRows {
    let mut rows = SbtestRows::default();
    for id in ids {
        rows.id.push(id);
        rows.k.push(k_of(id) as i32);
        rows.c.push(c_text(id));
        rows.pad.push(format!("p{id:0>59}"));
    }
    rows
}

/// The row `id` (as text) of `rows`.
fn row<'r>(rows: &'r [SbRow], id: &str) -> Option<&'r SbRow> {
    rows.iter().find(|r| r.id == id)
}

/// Every check on tables `<prefix>sb1`, `<prefix>auto1` and `<prefix>rand1` of a new
/// connection.
pub fn check(db: &dyn Dbms, t: &Target, prefix: &str) {
    let who = &t.label;
    let mut m = db.connect_sql().expect("connect");
    let m = &mut *m;
    let sb = table(0, &format!("{prefix}sb1"));
    assert_eq!(m.table_origin(&sb).unwrap(), TableOrigin::Missing, "{who}");
    assert!(!m.table_exists(&sb).unwrap(), "{who}");
    m.create_table(&sb, Shape::Sbtest).unwrap();
    assert_eq!(m.table_origin(&sb).unwrap(), TableOrigin::Ibench, "{who}");
    assert!(m.table_exists(&sb).unwrap(), "{who}");
    m.insert_sbtest(&sb, &sbtest_rows(1..=12)).unwrap();
    m.insert_sbtest(&sb, &sbtest_rows(13..=20)).unwrap();
    let own = t.own.sb_rows(&sb.name);
    let expected: Vec<SbRow> = (1..=20)
        .map(|id| SbRow {
            id: id.to_string(),
            k: k_of(id),
            c: c_text(id),
        })
        .collect();
    let mut sorted = own.clone();
    sorted.sort_by_key(|r| r.id.parse::<i64>().unwrap());
    assert_eq!(sorted, expected, "{who}: rows loaded");
    m.create_sbtest_index(&sb, &k_index_name(&sb.name)).unwrap();
    reads(m, t, &sb, &own);
    writes(m, t, &sb);
    transactions(m, t, &sb);
    generated_ids(m, t, &table(1, &format!("{prefix}auto1")));
    text_keys(m, t, &table(2, &format!("{prefix}rand1")));
}

/// Each kind of `SELECT` returns as many rows as the test counts in `own`.
fn reads(m: &mut dyn SqlConnection, t: &Target, sb: &Table, own: &[SbRow]) {
    let who = &t.label;
    let ids = |lo: i64, hi: i64| {
        own.iter()
            .filter(move |r| (lo..=hi).contains(&r.id.parse().unwrap()))
    };
    let ks = |lo: i64, hi: i64| own.iter().filter(move |r| (lo..=hi).contains(&r.k)).count() as u64;
    let distinct = {
        let mut c: Vec<&String> = ids(3, 7).map(|r| &r.c).collect();
        c.sort();
        c.dedup();
        c.len() as u64
    };
    let cases: [(&'static Statement, Vec<A>, u64); 13] = [
        (&POINT, vec![A::I(5)], 1),
        (&POINT, vec![A::I(999)], 0),
        (&IN_IDS, vec![A::I(1), A::I(2), A::I(999)], 2),
        (&RANGE, vec![A::I(3), A::I(7)], ids(3, 7).count() as u64),
        (&RANGE, vec![A::I(7), A::I(3)], 0),
        (&SUM, vec![A::I(3), A::I(7)], 1),
        (&SUM, vec![A::I(500), A::I(600)], 1),
        (&COUNT, vec![A::I(3), A::I(7)], 1),
        (&DISTINCT, vec![A::I(3), A::I(7)], distinct),
        (&NO_ROW, vec![], 0),
        (&K_RANGE, vec![A::I(101), A::I(102)], ks(101, 102)),
        (&K_RANGE, vec![A::I(0), A::I(99)], 0),
        (
            &K_IN,
            vec![A::I(100), A::I(104)],
            ks(100, 100) + ks(104, 104),
        ),
    ];
    for (s, values, expected) in cases {
        let n = run(m, sb, s, &values).unwrap_or_else(|e| panic!("{who}: {s:?}: {e:#}"));
        assert_eq!(n, expected, "{who}: rows of {s:?}");
    }
}

/// Updates, deletes and inserts change exactly the rows they name, and say how many.
fn writes(m: &mut dyn SqlConnection, t: &Target, sb: &Table) {
    let who = &t.label;
    let before = t.own.sb_rows(&sb.name);
    assert_eq!(
        run(m, sb, &UPDATE_K, &[A::I(5)]).unwrap(),
        1,
        "{who}: update k"
    );
    assert_eq!(
        run(m, sb, &UPDATE_K, &[A::I(999)]).unwrap(),
        0,
        "{who}: update k, no row"
    );
    let new_c = c_text(-6);
    let n = run(m, sb, &UPDATE_C, &[A::S(&new_c), A::I(6), A::I(999)]).unwrap();
    assert_eq!(n, 1, "{who}: update c");
    let after = t.own.sb_rows(&sb.name);
    for r in &before {
        let now = row(&after, &r.id).unwrap();
        let (k, c) = match r.id.as_str() {
            "5" => (r.k + 1, r.c.clone()),
            "6" => (r.k, new_c.clone()),
            _ => (r.k, r.c.clone()),
        };
        assert_eq!(
            (now.k, &now.c),
            (k, &c),
            "{who}: row {} after updates",
            r.id
        );
    }

    assert_eq!(run(m, sb, &DELETE, &[A::I(7)]).unwrap(), 1, "{who}: delete");
    assert_eq!(
        run(m, sb, &DELETE, &[A::I(7)]).unwrap(),
        0,
        "{who}: delete again"
    );
    assert!(
        row(&t.own.sb_rows(&sb.name), "7").is_none(),
        "{who}: row 7 deleted"
    );
    assert_eq!(
        run(m, sb, &DELETE_RANGE, &[A::I(15), A::I(17)]).unwrap(),
        3,
        "{who}"
    );
    let pad = format!("p{:0>59}", 7);
    let c7 = c_text(7);
    let n = run(m, sb, &INSERT, &[A::I(7), A::I(77), A::S(&c7), A::S(&pad)]).unwrap();
    assert_eq!(n, 1, "{who}: insert");
    let now = t.own.sb_rows(&sb.name);
    assert_eq!(
        now.len(),
        before.len() - 3,
        "{who}: rows after deletes and insert"
    );
    assert_eq!(
        row(&now, "7").map(|r| r.k),
        Some(77),
        "{who}: row 7 inserted"
    );
    assert!(
        ["15", "16", "17"].iter().all(|id| row(&now, id).is_none()),
        "{who}"
    );
}

/// A transaction rolled back changes nothing; one committed changes its rows.
fn transactions(m: &mut dyn SqlConnection, t: &Target, sb: &Table) {
    let who = &t.label;
    let k1 = || row(&t.own.sb_rows(&sb.name), "1").unwrap().k;
    let k = k1();
    m.begin(true).unwrap();
    assert_eq!(run(m, sb, &UPDATE_K, &[A::I(1)]).unwrap(), 1, "{who}");
    assert_eq!(run(m, sb, &UPDATE_K, &[A::I(1)]).unwrap(), 1, "{who}");
    m.rollback().unwrap();
    assert_eq!(k1(), k, "{who}: rolled back");
    m.begin(true).unwrap();
    assert_eq!(run(m, sb, &UPDATE_K, &[A::I(1)]).unwrap(), 1, "{who}");
    m.commit().unwrap();
    assert_eq!(k1(), k + 1, "{who}: committed");
    m.begin(false).unwrap();
    assert_eq!(
        run(m, sb, &POINT, &[A::I(1)]).unwrap(),
        1,
        "{who}: read in a transaction"
    );
    m.commit().unwrap();
    m.rollback().unwrap();
}

/// An insert benchmark's table: ids assigned by the DBMS grow in insert order.
fn generated_ids(m: &mut dyn SqlConnection, t: &Target, tbl: &Table) {
    let who = &t.label;
    m.create_table(tbl, Shape::AutoIncrement).unwrap();
    assert_eq!(m.table_origin(tbl).unwrap(), TableOrigin::Ibench, "{who}");
    for k in 1..=3 {
        let (c, pad) = (c_text(k), format!("p{k:0>59}"));
        let n = run(m, tbl, &INSERT_GENERATED, &[A::I(k), A::S(&c), A::S(&pad)]).unwrap();
        assert_eq!(n, 1, "{who}: generated insert");
    }
    let mut rows = t.own.sb_rows(&tbl.name);
    rows.sort_by_key(|r| r.id.parse::<i64>().unwrap());
    let ks: Vec<i64> = rows.iter().map(|r| r.k).collect();
    assert_eq!(ks, [1, 2, 3], "{who}: rows by their generated ids");
    let n = run(m, tbl, &K_RANGE, &[A::I(2), A::I(3)]).unwrap();
    assert_eq!(n, 2, "{who}: through its index on k");
}

/// A random-PK table: rows found, changed and deleted by their text key.
fn text_keys(m: &mut dyn SqlConnection, t: &Target, tbl: &Table) {
    let who = &t.label;
    m.create_table(tbl, Shape::RandomPk).unwrap();
    assert_eq!(m.table_origin(tbl).unwrap(), TableOrigin::Ibench, "{who}");
    let keys = ["01hq3zq8v6y1s0k9m2c4d5e6f7", "01hq3zq8v6y1s0k9m2c4d5e6f8"];
    for (i, key) in keys.iter().enumerate() {
        let (c, pad) = (c_text(i as i64), format!("p{i:0>59}"));
        let n = run(
            m,
            tbl,
            &INSERT,
            &[A::S(key), A::I(i as i64), A::S(&c), A::S(&pad)],
        )
        .unwrap();
        assert_eq!(n, 1, "{who}: insert {key}");
    }
    assert_eq!(run(m, tbl, &POINT, &[A::S(keys[1])]).unwrap(), 1, "{who}");
    assert_eq!(
        run(m, tbl, &UPDATE_K, &[A::S(keys[1])]).unwrap(),
        1,
        "{who}"
    );
    assert_eq!(run(m, tbl, &DELETE, &[A::S(keys[0])]).unwrap(), 1, "{who}");
    let rows = t.own.sb_rows(&tbl.name);
    assert_eq!(rows.len(), 1, "{who}");
    assert_eq!(
        (rows[0].id.as_str(), rows[0].k),
        (keys[1], 2),
        "{who}: the row left"
    );
}

//! The vocabulary's general shapes (`dbms/sql/keyed.rs`, TPC-C's) on tables declared
//! neutrally (`Shape::Defined`): a parent and a child of one set, with a composite key, a
//! one-byte column, decimals, text and a date-time; multi-row inserts with `CURRENT_TIMESTAMP`,
//! a join with the set's sibling, aggregates, order and limit, changes by expressions, deletes
//! by conditions, an index and a foreign key, and a row lock (`FOR UPDATE`) that makes another
//! transaction's locking read wait. Values are read back through `fetch` and with the test's
//! own client. The Insert Benchmark's shapes (`Range`, `Append`, `Ddl::Secondary`) are checked
//! through its connection (`insert.rs`).

use std::time::Duration;

use ibench::dbms::sql::{
    Column, ColumnDef, Cond, Ddl, Expr, Item, Query, Rows, Shape, SqlConnection, Statement,
    TableDef, Type,
};
use ibench::dbms::{Dbms, ErrorKind, Table, TableOrigin, error_kind};

use super::sql::{A, fetch, run};
use super::{Target, table};

use Column::Named as N;

const fn col(name: &'static str, ty: Type, not_null: bool) -> ColumnDef {
    ColumnDef { name, ty, not_null }
}

static PARENT: TableDef = TableDef {
    name: "ckparent",
    columns: &[
        col("p_id", Type::Int, true),
        col("p_name", Type::VarChar(10), true),
        col("p_tax", Type::Decimal(4, 4), false),
    ],
    primary_key: &["p_id"],
};

static CHILD: TableDef = TableDef {
    name: "ckchild",
    columns: &[
        col("c_p_id", Type::Int, true),
        col("c_id", Type::TinyInt, true),
        col("c_name", Type::Char(8), true),
        col("c_amount", Type::Decimal(6, 2), true),
        col("c_count", Type::Int, true),
        col("c_at", Type::DateTime, false),
        col("c_note", Type::Text, false),
    ],
    primary_key: &["c_p_id", "c_id"],
};

/// A child row's values but its time.
const CHILD_VALUES: &[(Column, Expr)] = &[
    (N("c_p_id"), Expr::Param),
    (N("c_id"), Expr::Param),
    (N("c_name"), Expr::Param),
    (N("c_amount"), Expr::Param),
    (N("c_count"), Expr::Param),
    (N("c_at"), Expr::Now),
];
/// One child row by its key.
const KEY: &[Cond] = &[Cond::Eq(N("c_p_id")), Cond::Eq(N("c_id"))];

static PUT_PARENTS: Statement = Statement::Put {
    values: &[
        (N("p_id"), Expr::Param),
        (N("p_name"), Expr::Param),
        (N("p_tax"), Expr::Param),
    ],
    rows: 2,
};
static PUT_CHILDREN: Statement = Statement::Put {
    values: CHILD_VALUES,
    rows: 3,
};
static PUT_CHILD: Statement = Statement::Put {
    values: CHILD_VALUES,
    rows: 1,
};
/// The last of a parent's children from `c_id` on, with the parent's name and tax.
static JOINED: Statement = Statement::Query(Query {
    what: &[
        Item::Col(N("c_name")),
        Item::Col(N("p_name")),
        Item::Col(N("p_tax")),
    ],
    join: Some("ckparent"),
    filter: &[
        Cond::Eq(N("c_p_id")),
        Cond::Same(N("c_p_id"), N("p_id")),
        Cond::Ge(N("c_id")),
    ],
    order_by: Some((N("c_id"), true)),
    limit: Some(1),
    lock: false,
});
static TOTALS: Statement = Statement::Query(Query {
    what: &[
        Item::Count,
        Item::CountDistinct(N("c_p_id")),
        Item::Sum(N("c_count")),
        Item::Max(N("c_amount")),
        Item::Min(N("c_id")),
    ],
    join: None,
    filter: &[Cond::Lt(N("c_count"))],
    order_by: None,
    limit: None,
    lock: false,
});
static ONE: Statement = Statement::Query(Query {
    what: &[
        Item::Col(N("c_amount")),
        Item::Col(N("c_count")),
        Item::Col(N("c_name")),
    ],
    join: None,
    filter: KEY,
    order_by: None,
    limit: None,
    lock: false,
});
static LOCKED: Statement = Statement::Query(Query {
    what: &[Item::Col(N("c_count"))],
    join: None,
    filter: KEY,
    order_by: None,
    limit: None,
    lock: true,
});
static CHANGE: Statement = Statement::Change {
    set: &[
        (N("c_amount"), Expr::PlusParam),
        (N("c_count"), Expr::PlusOne),
        (N("c_name"), Expr::Param),
        (N("c_at"), Expr::Now),
    ],
    filter: KEY,
};
static BUMP: Statement = Statement::Change {
    set: &[(N("c_count"), Expr::PlusOne)],
    filter: KEY,
};
static REMOVE: Statement = Statement::Remove {
    filter: &[Cond::Eq(N("c_p_id")), Cond::Ge(N("c_id"))],
};
static INDEX: Statement = Statement::Ddl(Ddl::Index {
    name: "ckchild_count",
    columns: &["c_p_id", "c_count"],
});
static FOREIGN_KEY: Statement = Statement::Ddl(Ddl::ForeignKey {
    name: "ckchild_parent",
    columns: &["c_p_id"],
    parent: "ckparent",
    parent_columns: &["p_id"],
});

/// Asserts that `got` is `want` (floats read back from decimals).
fn near(t: &Target, what: &str, got: Option<f64>, want: f64) {
    let ok = got.is_some_and(|g| (g - want).abs() < 1e-9);
    assert!(ok, "{}: {what}: {got:?}, expected {want}", t.label);
}

/// Every check on set `set` (`ckparent<set>`, `ckchild<set>`) of a new connection.
pub fn check(db: &dyn Dbms, t: &Target, set: usize) {
    let who = &t.label;
    let mut m = db.connect_sql().expect("connect");
    let m = &mut *m;
    let parent = table(0, &format!("ckparent{set}"));
    let child = table(1, &format!("ckchild{set}"));
    for (tbl, def) in [(&parent, &PARENT), (&child, &CHILD)] {
        m.create_table(tbl, Shape::Defined(def))
            .unwrap_or_else(|e| panic!("{who}: create {}: {e:#}", tbl.name));
        assert_eq!(m.table_origin(tbl).unwrap(), TableOrigin::Ibench, "{who}");
    }
    let parents = [
        [A::I(1), A::S("one"), A::F(0.125)],
        [A::I(2), A::S("two"), A::F(0.25)],
    ]
    .concat();
    assert_eq!(run(m, &parent, &PUT_PARENTS, &parents).unwrap(), 2, "{who}");
    let children = [
        [A::I(1), A::I(1), A::S("a"), A::F(1.5), A::I(10)],
        [A::I(1), A::I(2), A::S("b"), A::F(2.25), A::I(20)],
        [A::I(2), A::I(1), A::S("c"), A::F(3.0), A::I(30)],
    ]
    .concat();
    let n = run(m, &child, &PUT_CHILDREN, &children).unwrap();
    assert_eq!(n, 3, "{who}: rows of a multi-row insert");
    let timed = t.own.rows(&format!(
        "SELECT count(*) FROM {} WHERE c_at IS NOT NULL",
        child.name
    ));
    assert_eq!(
        timed[0][0].as_deref(),
        Some("3"),
        "{who}: CURRENT_TIMESTAMP"
    );
    run(m, &child, &INDEX, &[]).unwrap_or_else(|e| panic!("{who}: {INDEX:?}: {e:#}"));
    foreign_key(m, t, &child);
    reads(m, t, &child);
    changes(m, t, &child);
    row_lock(db, t, &child);
    let n = run(m, &child, &REMOVE, &[A::I(1), A::I(2)]).unwrap();
    assert_eq!(n, 1, "{who}: rows removed");
    let left = t
        .own
        .rows(&format!("SELECT c_p_id, c_id FROM {}", child.name));
    assert_eq!(left.len(), 2, "{who}: rows left after the remove: {left:?}");
}

/// A foreign key added after the load refuses a child without its parent, where the DBMS can
/// add one.
fn foreign_key(m: &mut dyn SqlConnection, t: &Target, child: &Table) {
    let who = &t.label;
    if let Some(why) = m.dialect().no_foreign_keys {
        t.not_checked("foreign keys", why);
        return;
    }
    run(m, child, &FOREIGN_KEY, &[]).unwrap_or_else(|e| panic!("{who}: {FOREIGN_KEY:?}: {e:#}"));
    let orphan = [A::I(99), A::I(1), A::S("z"), A::F(1.0), A::I(1)];
    match run(m, child, &PUT_CHILD, &orphan) {
        Ok(n) => panic!("{who}: a child without its parent inserted ({n} rows)"),
        Err(e) => assert_eq!(error_kind(&e), ErrorKind::Fatal, "{who}: {e:#}"),
    }
}

/// A join with the set's sibling, ordered and limited, and aggregates, read back.
fn reads(m: &mut dyn SqlConnection, t: &Target, child: &Table) {
    let who = &t.label;
    let mut rows = Rows::default();
    let n = fetch(m, child, &JOINED, &[A::I(1), A::I(1)], &mut rows).unwrap();
    assert_eq!((n, rows.len()), (1, 1), "{who}: rows of {JOINED:?}");
    assert_eq!(rows.text(0, 0).trim_end(), "b", "{who}: the last child");
    assert_eq!(rows.text(0, 1), "one", "{who}: its parent's name");
    near(t, "its parent's tax", rows.float(0, 2), 0.125);
    let n = run(m, child, &JOINED, &[A::I(2), A::I(2)]).unwrap();
    assert_eq!(n, 0, "{who}: no child from c_id 2 on");
    let n = fetch(m, child, &TOTALS, &[A::I(100)], &mut rows).unwrap();
    assert_eq!((n, rows.len()), (1, 1), "{who}: rows of {TOTALS:?}");
    let ints: Vec<Option<i64>> = [0, 1, 2, 4].iter().map(|&c| rows.int(0, c)).collect();
    assert_eq!(
        ints,
        [Some(3), Some(2), Some(60), Some(1)],
        "{who}: count, count distinct, sum, min"
    );
    near(t, "max of a decimal", rows.float(0, 3), 3.0);
}

/// A change by expressions, read back.
fn changes(m: &mut dyn SqlConnection, t: &Target, child: &Table) {
    let who = &t.label;
    let values = [A::F(0.5), A::S("bb"), A::I(1), A::I(2)];
    assert_eq!(
        run(m, child, &CHANGE, &values).unwrap(),
        1,
        "{who}: changed"
    );
    assert_eq!(
        run(m, child, &BUMP, &[A::I(9), A::I(9)]).unwrap(),
        0,
        "{who}"
    );
    let mut rows = Rows::default();
    fetch(m, child, &ONE, &[A::I(1), A::I(2)], &mut rows).unwrap();
    near(t, "c_amount + 0.5", rows.float(0, 0), 2.75);
    assert_eq!(rows.int(0, 1), Some(21), "{who}: c_count + 1");
    assert_eq!(rows.text(0, 2).trim_end(), "bb", "{who}: c_name");
}

/// A transaction's locking read of a row another transaction has read with `FOR UPDATE` waits
/// for that one's commit and reads what it wrote. SQLite has no row locks and drops `FOR
/// UPDATE`: its writing transactions wait for each other, and the same holds.
fn row_lock(db: &dyn Dbms, t: &Target, child: &Table) {
    let who = &t.label;
    let (mut a, mut b) = (db.connect_sql().unwrap(), db.connect_sql().unwrap());
    if !a.dialect().for_update {
        t.not_checked(
            "FOR UPDATE",
            "no row locks: writing transactions are serialised",
        );
    }
    let key = [A::I(1), A::I(2)];
    let mut rows = Rows::default();
    a.begin(true).unwrap();
    fetch(&mut *a, child, &LOCKED, &key, &mut rows).unwrap();
    let before = rows.int(0, 0).expect("c_count");
    let b = &mut *b;
    let seen = std::thread::scope(|s| {
        let reader = s.spawn(move || {
            let mut rows = Rows::default();
            b.begin(true)?;
            fetch(b, child, &LOCKED, &key, &mut rows)?;
            b.commit()?;
            anyhow::Ok(rows.int(0, 0))
        });
        std::thread::sleep(Duration::from_millis(300));
        run(&mut *a, child, &BUMP, &key).unwrap();
        a.commit().unwrap();
        reader.join().unwrap()
    });
    let seen = seen.unwrap_or_else(|e| panic!("{who}: the waiting locking read: {e:#}"));
    assert_eq!(
        seen,
        Some(before + 1),
        "{who}: a locking read waits for the lock's holder and reads what it wrote"
    );
}

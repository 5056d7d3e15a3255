//! Errors as the runner sees them (`ibench::dbms::error_kind`): a missing table and a
//! duplicate key fail the step (`Fatal`), two transactions locking rows in opposite order end
//! in a deadlock, lock wait timeout or busy error that is tried again (`Transient`), and a
//! session the server ended is a lost connection (`ConnectionLost`). A connection stays usable
//! after an error that does not lose it.

use std::sync::Barrier;

use ibench::dbms::sql::{Shape, SqlConnection};
use ibench::dbms::{Capability, Dbms, ErrorKind, Table, error_kind};

use super::sql::{A, INSERT, POINT, UPDATE_K, c_text, run, sbtest_rows};
use super::{FOREIGN, Target, table};

/// Asserts that `result` failed with an error of `kind`.
fn fails<T: std::fmt::Debug>(t: &Target, what: &str, result: anyhow::Result<T>, kind: ErrorKind) {
    match result {
        Ok(v) => panic!("{}: {what} succeeded ({v:?})", t.label),
        Err(e) => assert_eq!(error_kind(&e), kind, "{}: {what}: {e:#}", t.label),
    }
}

/// Errors that fail the step, and the connection usable after them.
pub fn permanent(db: &dyn Dbms, t: &Target) {
    let who = &t.label;
    if t.can(Capability::InsertBenchmark) {
        let mut c = db.connect_insert_benchmark().expect("connect");
        let missing = table(0, "cnone");
        fails(
            t,
            "count_rows of a missing table",
            c.count_rows(&missing),
            ErrorKind::Fatal,
        );
        let rows = super::insert::rows(0, 2);
        fails(
            t,
            "insert into a missing table",
            c.insert(&missing, &rows),
            ErrorKind::Fatal,
        );
        assert_eq!(
            c.count_rows(&table(1, FOREIGN)).unwrap(),
            3,
            "{who}: usable after errors"
        );
    }
    if !t.can(Capability::Sql) {
        t.not_checked(
            "a duplicate key",
            "no Capability::Sql, whose rows take given ids",
        );
        return;
    }
    let mut m = db.connect_sql().expect("connect");
    let m = &mut *m;
    let dup = table(0, "cdup");
    m.create_table(&dup, Shape::Sbtest).unwrap();
    m.insert_sbtest(&dup, &sbtest_rows(1..=3)).unwrap();
    fails(
        t,
        "a duplicate key loaded",
        m.insert_sbtest(&dup, &sbtest_rows(3..=4)),
        ErrorKind::Fatal,
    );
    let (c, pad) = (c_text(2), format!("p{:0>59}", 2));
    let again = [A::I(2), A::I(1), A::S(&c), A::S(&pad)];
    fails(
        t,
        "a duplicate key inserted",
        run(m, &dup, &INSERT, &again),
        ErrorKind::Fatal,
    );
    m.begin(true).unwrap();
    fails(
        t,
        "a duplicate key in a transaction",
        run(m, &dup, &INSERT, &again),
        ErrorKind::Fatal,
    );
    m.rollback().unwrap();
    assert_eq!(
        run(m, &dup, &POINT, &[A::I(2)]).unwrap(),
        1,
        "{who}: usable after errors"
    );
    assert_eq!(
        t.own.sb_rows(&dup.name).len(),
        3,
        "{who}: rows after the failed inserts"
    );
}

/// Two transactions that lock rows 1 and 2 in opposite orders: one of them at least fails
/// with an error to try again, the other's changes are all kept, the failed one's all undone.
pub fn transient(db: &dyn Dbms, t: &Target) {
    let who = &t.label;
    if !t.can(Capability::Sql) {
        t.not_checked(
            "a transient error",
            "no Capability::Sql, so no transactions to collide",
        );
        return;
    }
    let tbl = table(0, "clocks");
    let mut setup = db.connect_sql().expect("connect");
    setup.create_table(&tbl, Shape::Sbtest).unwrap();
    setup.insert_sbtest(&tbl, &sbtest_rows(1..=2)).unwrap();
    let k = |id: &str| {
        let rows = t.own.sb_rows(&tbl.name);
        rows.iter().find(|r| r.id == id).unwrap().k
    };
    let before = (k("1"), k("2"));
    let barrier = Barrier::new(2);
    let mut conns = [
        db.connect_sql().expect("connect"),
        db.connect_sql().expect("connect"),
    ];
    let outcomes: Vec<anyhow::Result<()>> = std::thread::scope(|s| {
        let [a, b] = &mut conns;
        let (tbl, barrier) = (&tbl, &barrier);
        let one = s.spawn(move || cross(&mut **a, tbl, [1, 2], barrier));
        let two = s.spawn(move || cross(&mut **b, tbl, [2, 1], barrier));
        vec![one.join().unwrap(), two.join().unwrap()]
    });
    let failed: Vec<&anyhow::Error> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert!(
        !failed.is_empty(),
        "{who}: rows locked in opposite orders, and no error"
    );
    for e in &failed {
        assert_eq!(error_kind(e), ErrorKind::Transient, "{who}: {e:#}");
    }
    let committed = (outcomes.len() - failed.len()) as i64;
    assert_eq!(
        (k("1"), k("2")),
        (before.0 + committed, before.1 + committed),
        "{who}: each committed transaction's updates kept, the failed ones' undone"
    );
    for c in &mut conns {
        assert_eq!(
            run(&mut **c, &tbl, &POINT, &[A::I(1)]).unwrap(),
            1,
            "{who}: usable after"
        );
    }
}

/// Locks row `ids[0]`, waits for the other transaction to lock its own, then updates row
/// `ids[1]` and commits; rolls back after an error, which it returns.
fn cross(
    m: &mut dyn SqlConnection,
    tbl: &Table,
    ids: [i64; 2],
    barrier: &Barrier,
) -> anyhow::Result<()> {
    let first = m
        .begin(true)
        .and_then(|_| run(m, tbl, &UPDATE_K, &[A::I(ids[0])]));
    barrier.wait();
    let done = first
        .and_then(|_| run(m, tbl, &UPDATE_K, &[A::I(ids[1])]))
        .and_then(|_| m.commit());
    if done.is_err() {
        m.rollback().expect("rollback after an error");
    }
    done
}

/// A session the server ended: the connection's next statement reports a lost connection, and
/// the DBMS opens new connections.
pub fn lost_connection(db: &dyn Dbms, t: &Target) {
    let who = &t.label;
    if t.kind().embedded() {
        t.not_checked(
            "a lost connection",
            "an embedded DBMS has no connection to lose",
        );
        return;
    }
    let foreign = table(0, FOREIGN);
    let mut ib = t.can(Capability::InsertBenchmark).then(|| {
        let mut c = db.connect_insert_benchmark().expect("connect");
        c.count_rows(&foreign).unwrap();
        c
    });
    let mut sql = t.can(Capability::Sql).then(|| {
        let mut m = db.connect_sql().expect("connect");
        m.table_exists(&foreign).unwrap();
        m
    });
    let ended = t.own.kill_other_sessions();
    assert!(ended >= 1, "{who}: no session of ibench's to end");
    if let Some(c) = &mut ib {
        fails(
            t,
            "a statement on an ended session",
            c.count_rows(&foreign),
            ErrorKind::ConnectionLost,
        );
        let mut again = db.connect_insert_benchmark().expect("connect again");
        assert_eq!(
            again.count_rows(&foreign).unwrap(),
            3,
            "{who}: a new connection"
        );
    }
    if let Some(m) = &mut sql {
        let sb = table(1, "clocks");
        fails(
            t,
            "a statement on an ended session",
            run(&mut **m, &sb, &POINT, &[A::I(1)]),
            ErrorKind::ConnectionLost,
        );
        let mut again = db.connect_sql().expect("connect again");
        assert_eq!(
            run(&mut *again, &sb, &POINT, &[A::I(1)]).unwrap(),
            1,
            "{who}: a new connection"
        );
    }
}

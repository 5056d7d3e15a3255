//! The rows themselves: the same seed gives the same rows, values stay in their configured
//! ranges and formats, and point queries return exactly the rows that exist (through the
//! library's DBMS API, and as the qpN step reports them).

use std::path::Path;

use chrono::{NaiveDateTime, Utc};
use ibench::dbms::{self, Table, TargetSpec};

use crate::common::{Bench, id_range, open_db, path_str};

type Row = (i64, i64, i64, i64, f64, String);

/// Every column but `dateandtime` (the wall clock), ordered by transactionid.
fn rows(db: &Path, table: &str) -> Vec<Row> {
    let conn = open_db(db);
    let mut stmt = conn
        .prepare(&format!(
            "SELECT transactionid, cashregisterid, customerid, productid, price, data \
             FROM {table} ORDER BY transactionid"
        ))
        .unwrap();
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn load_with_seed(bench: &Bench, file: &str, seed: &str) -> std::path::PathBuf {
    let db = bench.path(file);
    bench
        .run(&[
            "--steps",
            "l.i0",
            "--path",
            path_str(&db),
            "--clients",
            "2",
            "--l0-rows",
            "3000",
            "--seed",
            seed,
        ])
        .result();
    db
}

#[test]
fn same_seed_gives_identical_rows_and_another_seed_does_not() {
    let bench = Bench::new();
    let a = load_with_seed(&bench, "a.sqlite", "7");
    let b = load_with_seed(&bench, "b.sqlite", "7");
    let c = load_with_seed(&bench, "c.sqlite", "8");
    for table in ["pi1", "pi2"] {
        let (ra, rb, rc) = (rows(&a, table), rows(&b, table), rows(&c, table));
        assert_eq!(ra.len(), 3000, "{table}");
        assert!(ra == rb, "{table}: --seed 7 twice must give identical rows");
        assert_eq!(rc.len(), ra.len());
        let same = ra.iter().zip(&rc).filter(|(x, y)| x == y).count();
        assert!(
            same < 30,
            "{table}: --seed 8 repeats {same} of 3000 rows of --seed 7"
        );
    }
    // The two clients' tables are not copies of each other either.
    assert!(rows(&a, "pi1") != rows(&a, "pi2"));
}

#[test]
fn generated_values_respect_their_ranges_and_formats() {
    let bench = Bench::new();
    let db = bench.db();
    let before = Utc::now().timestamp();
    bench
        .run(&[
            "--steps",
            "l.i0",
            "--path",
            path_str(&db),
            "--clients",
            "1",
            "--l0-rows",
            "5000",
            "--cashregisters",
            "7",
            "--customers",
            "13",
            "--products",
            "5",
            "--max-price",
            "3",
            "--data-min",
            "30",
            "--data-max",
            "40",
            "--data-random-pct",
            "25",
        ])
        .result();
    let after = Utc::now().timestamp();
    let conn = open_db(&db);
    let ranges: Vec<(i64, i64, i64)> = ["cashregisterid", "customerid", "productid"]
        .iter()
        .map(|c| {
            conn.query_row(
                &format!("SELECT min({c}), max({c}), count(DISTINCT {c}) FROM pi1"),
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap()
        })
        .collect();
    // 5000 uniform draws hit every value of these tiny ranges.
    assert_eq!(ranges, [(0, 6, 7), (0, 12, 13), (0, 4, 5)]);

    let (min_price, max_price, bad_cents): (f64, f64, i64) = conn
        .query_row(
            "SELECT min(price), max(price), \
             sum(abs(price * 100 - round(price * 100)) > 1e-6) FROM pi1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert!(
        min_price >= 0.0 && max_price < 3.0,
        "price in [{min_price}, {max_price}]"
    );
    assert!(
        max_price > 2.5,
        "prices spread over [0, 3): max {max_price}"
    );
    assert_eq!(bad_cents, 0, "prices are whole cents");

    let (min_len, max_len, bad_padding, nulls): (i64, i64, i64, i64) = conn
        .query_row(
            "SELECT min(length(data)), max(length(data)), \
             sum(replace(substr(data, length(data) * 25 / 100 + 1), 'x', '') != ''), \
             sum(data IS NULL) FROM pi1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (min_len, max_len),
        (30, 40),
        "data length uniform in [30, 40]"
    );
    assert_eq!(bad_padding, 0, "all but the random 25% of data is padding");
    assert_eq!(nulls, 0);

    let mut stmt = conn
        .prepare("SELECT DISTINCT dateandtime FROM pi1")
        .unwrap();
    let stamps: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for s in stamps {
        let t = NaiveDateTime::parse_from_str(&s, "%Y-%m-%d %H:%M:%S")
            .unwrap_or_else(|e| panic!("dateandtime {s:?}: {e}"));
        let t = t.and_utc().timestamp();
        assert!(
            before <= t && t <= after,
            "dateandtime {s} outside the run (UTC)"
        );
    }
}

fn open_library(db: &Path) -> Box<dyn dbms::InsertBenchmarkConnection> {
    let sqlite = dbms::DbmsKind::find("sqlite").unwrap();
    let target = TargetSpec::embedded(sqlite, db.to_path_buf()).expect("target");
    dbms::open(&target)
        .expect("open")
        .connect_insert_benchmark()
        .expect("connect")
}

fn exists(conn: &rusqlite::Connection, id: i64) -> bool {
    conn.query_row(
        "SELECT count(*) FROM pi1 WHERE transactionid = ?1",
        [id],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        == 1
}

#[test]
fn library_point_query_returns_exactly_the_rows_that_exist() {
    let bench = Bench::new();
    let db = bench.db();
    // Ids 1..=1000 are loaded and then deleted by l.i1; 1001..=4000 exist.
    bench
        .run(&[
            "--steps",
            "l.i0,l.x,l.i1",
            "--path",
            path_str(&db),
            "--clients",
            "1",
            "--l0-rows",
            "3000",
            "--l1-rows",
            "1000",
        ])
        .result();
    let sql = open_db(&db);
    let (count, min, max) = id_range(&sql, "pi1");
    assert_eq!((count, min, max), (3000, 1001, 4000));

    let existing: Vec<i64> = vec![min, 1002, 1500, 1999, 2000, 2500, 3001, 3333, 3999, max];
    let missing: Vec<i64> = vec![1, 2, 500, 999, 1000, max + 1, max + 1000, 0, -5, i64::MAX];
    assert!(existing.iter().all(|&id| exists(&sql, id)));
    assert!(missing.iter().all(|&id| !exists(&sql, id)));

    let mut conn = open_library(&db);
    let table = Table {
        id: 0,
        name: "pi1".to_string(),
    };
    let mut found = vec![-1, -2, -3]; // stale contents must be cleared
    let sorted = |v: &[i64]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };

    let n = conn.point_query(&table, &existing, &mut found).unwrap();
    assert_eq!(n, 10);
    assert_eq!(sorted(&found), sorted(&existing), "10 existing ids");

    let n = conn.point_query(&table, &missing, &mut found).unwrap();
    assert_eq!((n, found.as_slice()), (0, &[][..]), "10 missing ids");

    let mixed: Vec<i64> = existing[..5].iter().chain(&missing[..5]).copied().collect();
    conn.point_query(&table, &mixed, &mut found).unwrap();
    assert_eq!(sorted(&found), sorted(&existing[..5]), "5 of 10 exist");

    let few = [missing[0], existing[3], existing[7]];
    let n = conn.point_query(&table, &few, &mut found).unwrap();
    assert_eq!(n, 2);
    assert_eq!(
        sorted(&found),
        sorted(&[existing[3], existing[7]]),
        "fewer than 10 ids"
    );

    // The rest of the read API agrees with our own SQL.
    assert_eq!(conn.count_rows(&table).unwrap(), count as u64);
    assert_eq!(conn.min_id(&table).unwrap(), Some(min));
    assert_eq!(conn.max_id(&table).unwrap(), Some(max));
    assert!(conn.table_exists(&table).unwrap());
    let absent = Table {
        id: 1,
        name: "pi2".to_string(),
    };
    assert!(!conn.table_exists(&absent).unwrap());
    assert_eq!(
        conn.index_names(&table).unwrap(),
        ["pi1_marketsegment", "pi1_pdc", "pi1_registersegment"]
    );
}

#[test]
fn qp_step_finds_every_id_it_asks_for_while_rows_are_deleted() {
    let bench = Bench::new();
    bench.load(2, 3_000);
    let run = bench
        .run(&[
            "--steps",
            "qp500",
            "--query-seconds",
            "3",
            "--clients",
            "2",
            "--path",
            path_str(&bench.db()),
        ])
        .result();
    let step = &run.steps[0];
    assert!(step.queries > 0, "point queries ran");
    assert!(step.rows_deleted > 0, "deletes ran at the same time");
    assert_eq!(
        step.point_query_misses,
        Some(0),
        "no id asked for was missing"
    );
    let conn = open_db(&bench.db());
    for t in ["pi1", "pi2"] {
        assert_eq!(id_range(&conn, t).0, 3000, "{t}");
    }
}

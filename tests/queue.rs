//! The queue invariant (inserts at the head, the same number of oldest rows deleted, so every
//! table keeps its size) and the schema l.i0 and l.x create, checked with our own SQL.

use std::path::PathBuf;

use crate::common::{Bench, id_range, indexes, open_db, path_str, tables};

fn idx(name: &str, cols: &[&str]) -> (String, Vec<String>) {
    (
        name.to_string(),
        cols.iter().map(|c| c.to_string()).collect(),
    )
}

/// The three indexes of `table`, as sqlite_master lists them (sorted by name).
fn all_indexes(table: &str) -> Vec<(String, Vec<String>)> {
    vec![
        idx(&format!("{table}_marketsegment"), &["price", "customerid"]),
        idx(
            &format!("{table}_pdc"),
            &["price", "dateandtime", "customerid"],
        ),
        idx(
            &format!("{table}_registersegment"),
            &["cashregisterid", "price", "customerid"],
        ),
    ]
}

#[test]
fn tables_keep_their_size_through_l_i1_and_l_i2_and_lose_their_oldest_rows() {
    let bench = Bench::new();
    let db = bench.db();
    let (l0, l1, l2) = (4_000i64, 2_000i64, 500i64);
    let run = bench
        .run(&[
            "--steps",
            "l.i0,l.x,l.i1",
            "--path",
            path_str(&db),
            "--clients",
            "2",
            "--l0-rows",
            &l0.to_string(),
            "--l1-rows",
            &l1.to_string(),
        ])
        .result();
    assert_eq!(run.steps[2].rows_inserted, 2 * l1 as u64);
    assert_eq!(run.steps[2].rows_deleted, 2 * l1 as u64);
    {
        let conn = open_db(&db);
        assert_eq!(tables(&conn), ["pi1", "pi2"]);
        for t in ["pi1", "pi2"] {
            let (count, min, max) = id_range(&conn, t);
            assert_eq!(count, l0, "{t}: size after l.i1");
            assert_eq!(min, 1 + l1, "{t}: the l1 oldest rows are deleted");
            assert_eq!(max, l0 + l1, "{t}: newest id");
            assert_eq!(indexes(&conn, t), all_indexes(t), "{t}: indexes after l.i1");
        }
    }

    // l.i2 in a second run on the same file: it starts from the queue as the first run left it.
    let run = bench
        .run(&[
            "--steps",
            "l.i2",
            "--path",
            path_str(&db),
            "--clients",
            "2",
            "--l2-rows",
            &l2.to_string(),
        ])
        .result();
    let step = &run.steps[0];
    assert_eq!(
        (step.rows_inserted, step.rows_deleted),
        (2 * l2 as u64, 2 * l2 as u64)
    );
    assert_eq!(
        step.ops["insert"].count,
        2 * l2 as u64 / 5,
        "l.i2 inserts 5 rows at a time"
    );
    let conn = open_db(&db);
    for t in ["pi1", "pi2"] {
        let (count, min, max) = id_range(&conn, t);
        assert_eq!(count, l0, "{t}: size after l.i2");
        assert_eq!(min, 1 + l1 + l2, "{t}: oldest id after l.i2");
        assert_eq!(max, l0 + l1 + l2, "{t}: newest id after l.i2");
    }
}

#[test]
fn keep_data_keeps_the_scratch_database_with_a_constant_size_queue() {
    let bench = Bench::new();
    let (l0, l1) = (3_000i64, 2_000i64);
    let outcome = bench.run(&[
        "--steps",
        "l.i0,l.x,l.i1,l.i2",
        "--clients",
        "2",
        "--l0-rows",
        &l0.to_string(),
        "--l1-rows",
        &l1.to_string(),
        "--keep-data",
    ]);
    let run = outcome.result();
    let l2 = l1 / 4; // the default of --l2-rows
    assert_eq!(
        run.config.workload.insert_benchmark().unwrap().l2_rows,
        l2 as u64
    );
    let db: PathBuf = outcome.new_results[0]
        .with_extension("data")
        .join("ibench.sqlite");
    let conn = open_db(&db);
    assert_eq!(tables(&conn), ["pi1", "pi2"]);
    for t in ["pi1", "pi2"] {
        let (count, min, max) = id_range(&conn, t);
        assert_eq!(count, l0, "{t}: size");
        assert_eq!(min, 1 + l1 + l2, "{t}: oldest id");
        assert_eq!(max, l0 + l1 + l2, "{t}: newest id");
        assert_eq!(count, max - min + 1, "{t}: ids have no gaps");
    }
}

#[test]
fn l_x_creates_the_secondary_indexes_asked_for() {
    let bench = Bench::new();
    let run = bench.load(2, 2_000);
    assert_eq!(run.steps[1].name, "l.x");
    let conn = open_db(&bench.db());
    for t in ["pi1", "pi2"] {
        assert_eq!(indexes(&conn, t), all_indexes(t), "{t}");
    }

    for (n, expected) in [
        (
            "1",
            vec![idx("pi1_marketsegment", &["price", "customerid"])],
        ),
        (
            "2",
            vec![
                idx("pi1_marketsegment", &["price", "customerid"]),
                idx(
                    "pi1_registersegment",
                    &["cashregisterid", "price", "customerid"],
                ),
            ],
        ),
    ] {
        let db = bench.path(&format!("indexes{n}.sqlite"));
        let run = bench
            .run(&[
                "--steps",
                "l.i0,l.x",
                "--path",
                path_str(&db),
                "--clients",
                "1",
                "--l0-rows",
                "2000",
                "--secondary-indexes",
                n,
            ])
            .result();
        let build = run.steps[1].index_build.as_ref().expect("index_build");
        assert_eq!(build.indexes.len(), n.parse::<usize>().unwrap());
        assert_eq!(
            indexes(&open_db(&db), "pi1"),
            expected,
            "--secondary-indexes {n}"
        );
    }
}

#[test]
fn l_i0_creates_the_table_without_secondary_indexes() {
    let bench = Bench::new();
    let db = bench.db();
    bench.load_steps("l.i0", 1, 2000);
    let conn = open_db(&db);
    assert!(indexes(&conn, "pi1").is_empty());
    let mut stmt = conn.prepare("PRAGMA table_info(pi1)").unwrap();
    let cols: Vec<(String, String, bool, i64)> = stmt
        .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?, r.get(5)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let names: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "transactionid",
            "dateandtime",
            "cashregisterid",
            "customerid",
            "productid",
            "price",
            "data"
        ]
    );
    let pk: Vec<&str> = cols
        .iter()
        .filter(|c| c.3 > 0)
        .map(|c| c.0.as_str())
        .collect();
    assert_eq!(pk, ["transactionid"], "primary key");
    for (name, _, notnull, _) in &cols[2..6] {
        assert!(*notnull, "{name} is NOT NULL");
    }
    // ids are assigned by the DBMS, in load order, from 1.
    let (count, min, max) = id_range(&conn, "pi1");
    assert_eq!((count, min, max), (2000, 1, 2000));

    // A new l.i0 on the same file starts over: the table is dropped and recreated.
    bench.load_steps("l.i0", 1, 1000);
    assert_eq!(id_range(&open_db(&db), "pi1"), (1000, 1, 1000));
}

#[test]
fn shared_table_mode_uses_one_table_of_constant_size() {
    let bench = Bench::new();
    let db = bench.db();
    let (l0, l1) = (3_000i64, 1_000i64);
    let run = bench
        .run(&[
            "--steps",
            "l.i0,l.x,l.i1",
            "--path",
            path_str(&db),
            "--table-mode",
            "shared",
            "--clients",
            "2",
            "--l0-rows",
            &l0.to_string(),
            "--l1-rows",
            &l1.to_string(),
        ])
        .result();
    assert_eq!(run.steps[0].rows_inserted, 2 * l0 as u64);
    let l_i1 = &run.steps[2];
    assert_eq!(
        (l_i1.rows_inserted, l_i1.rows_deleted),
        (2 * l1 as u64, 2 * l1 as u64)
    );
    let timed: Vec<&String> = l_i1.select_min.as_ref().unwrap().tables.keys().collect();
    assert_eq!(timed, ["pi1"]);
    assert_eq!(run.steps[1].index_build.as_ref().unwrap().tables, 1);

    let conn = open_db(&db);
    assert_eq!(tables(&conn), ["pi1"], "one table shared by both clients");
    let (count, min, max) = id_range(&conn, "pi1");
    assert_eq!(count, 2 * l0, "both clients' rows, constant after l.i1");
    assert_eq!(min, 1 + 2 * l1, "oldest rows deleted");
    assert_eq!(max, 2 * (l0 + l1));
    assert_eq!(indexes(&conn, "pi1"), all_indexes("pi1"));
}

#[test]
fn no_deletes_lets_tables_grow() {
    let bench = Bench::new();
    let db = bench.db();
    let run = bench
        .run(&[
            "--steps",
            "l.i0,l.x,l.i1",
            "--path",
            path_str(&db),
            "--clients",
            "1",
            "--l0-rows",
            "2000",
            "--l1-rows",
            "1000",
            "--no-deletes",
        ])
        .result();
    let l_i1 = &run.steps[2];
    assert_eq!((l_i1.rows_inserted, l_i1.rows_deleted), (1000, 0));
    assert!(!l_i1.ops.contains_key("delete") && l_i1.select_min.is_none());
    assert_eq!(id_range(&open_db(&db), "pi1"), (3000, 1, 3000));
}

#[test]
fn table_prefix_names_the_tables_and_indexes() {
    let bench = Bench::new();
    let db = bench.db();
    bench
        .run(&[
            "--steps",
            "l.i0,l.x",
            "--path",
            path_str(&db),
            "--clients",
            "3",
            "--l0-rows",
            "1000",
            "--table-prefix",
            "queue_",
        ])
        .result();
    let conn = open_db(&db);
    assert_eq!(tables(&conn), ["queue_1", "queue_2", "queue_3"]);
    for t in ["queue_1", "queue_2", "queue_3"] {
        assert_eq!(id_range(&conn, t), (1000, 1, 1000), "{t}");
        assert_eq!(indexes(&conn, t), all_indexes(t), "{t}");
    }
}

#[test]
fn plain_sql_on_sqlite_keeps_the_queue_and_finds_every_point() {
    let bench = Bench::new();
    let db = bench.db();
    let run = bench
        .run(&[
            "--plain-sql",
            "--path",
            path_str(&db),
            "--steps",
            "l.i0,l.x,l.i1,qr100,qp100",
            "--l0-rows",
            "3000",
            "--l1-rows",
            "600",
            "--query-seconds",
            "1",
        ])
        .result();
    assert_eq!(run.steps[2].rows_deleted, 1200);
    assert!(run.steps[3].queries > 0 && run.steps[4].queries > 0);
    assert_eq!(run.steps[4].point_query_misses, Some(0));
    let conn = crate::common::open_db(&db);
    for t in ["pi1", "pi2"] {
        let (count, _, _) = crate::common::id_range(&conn, t);
        assert_eq!(count, 3000, "{t}");
    }
}

#[test]
fn a_failed_l_x_claims_no_rate_for_rows_it_never_indexed() {
    let bench = Bench::new();
    let db = bench.db();
    bench.load_steps("l.i0", 1, 2000);
    // Hold the write lock past ibench's busy timeout: CREATE INDEX fails.
    let conn = open_db(&db);
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let o = bench.run(&[
        "--steps",
        "l.x",
        "--path",
        path_str(&db),
        "--clients",
        "1",
        "--l0-rows",
        "2000",
        "--busy-timeout-ms",
        "200",
        "--max-tries",
        "1",
    ]);
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(o.code, Some(1), "{}", o.describe());
    assert!(o.stderr.contains("database is locked"), "{}", o.describe());
    assert!(indexes(&conn, "pi1").is_empty(), "no index was built");
    // It used to print `l.x: 3 index(es) on 1 table(s), 2000 rows, 9.90k rows/s`.
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("l.x:"))
        .unwrap_or_else(|| panic!("no l.x line:\n{}", o.describe()));
    assert!(
        line.contains("failed after") && line.contains("no rate") && !line.contains("rows/s"),
        "{line}"
    );
    let run = ibench::results::file::load(&o.new_results[0]).unwrap();
    let step = &run.steps[0];
    assert_eq!(step.status, ibench::results::model::RunStatus::Failed);
    assert_eq!(step.index_build.as_ref().unwrap().rows_per_s, 0.0);
}

//! Tables ibench did not create are never written into: every step that writes (rows,
//! indexes) checks, before anything runs, that each table it touches carries ibench's mark,
//! and refuses naming the table unless the user said `--write-existing` (or
//! `--drop-existing`). The tables are made foreign for real: a table ibench loaded loses its
//! mark (SQLite: the comment in its SQL; PostgreSQL: `COMMENT ON TABLE ... IS NULL`; MariaDB:
//! `ALTER TABLE ... COMMENT ''`), so it has the benchmark's columns and rows but is another
//! program's; the test then reads the rows and indexes itself.

use crate::common::{Bench, LocalService, open_db, path_str};

/// What a test reads of a table to tell whether ibench changed it.
#[derive(Debug, PartialEq)]
struct Contents {
    rows: i64,
    min: i64,
    max: i64,
    indexes: usize,
}

fn sqlite_contents(db: &std::path::Path, table: &str) -> Contents {
    let conn = open_db(db);
    let (rows, min, max) = conn
        .query_row(
            &format!("SELECT count(*), min(transactionid), max(transactionid) FROM {table}"),
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let indexes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1",
            [table],
            |r| r.get(0),
        )
        .unwrap();
    Contents {
        rows,
        min,
        max,
        indexes: indexes as usize,
    }
}

/// Takes ibench's mark off an SQLite table: the comment in its `CREATE TABLE` text.
fn unmark_sqlite(db: &std::path::Path, table: &str) {
    let conn = open_db(db);
    conn.execute_batch(&format!(
        "PRAGMA writable_schema = ON;
         UPDATE sqlite_master SET sql = replace(sql, 'created by ibench', 'made by hand')
           WHERE type = 'table' AND name = '{table}';
         PRAGMA writable_schema = OFF;"
    ))
    .unwrap();
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = ?1",
            [table],
            |r| r.get(0),
        )
        .unwrap();
    assert!(!sql.contains("ibench"), "{sql}");
}

/// The first `error:` line of a refused run, checked to exit 2 and name `table` and the flag.
fn refusal(out: &crate::common::Outcome, table: &str, flag: &str) -> String {
    assert_eq!(out.code, Some(2), "{}", out.describe());
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("no error line: {}", out.describe()))
        .to_string();
    assert!(line.contains(table) && line.contains(flag), "{line}");
    assert!(out.new_results.is_empty(), "{:?}", out.new_results);
    line
}

#[test]
fn steps_that_write_leave_a_table_ibench_did_not_create_alone() {
    let bench = Bench::new();
    let db = bench.db();
    let target = ["--path", path_str(&db), "--table-prefix", "fpi"];
    fn with<'a>(target: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
        [target, &["--clients", "1"], more].concat()
    }
    bench
        .run(&with(&target, &["--steps", "l.i0", "--l0-rows", "300"]))
        .result();
    unmark_sqlite(&db, "fpi1");
    let before = sqlite_contents(&db, "fpi1");
    assert_eq!(before.rows, 300);

    // Each step that writes, alone or first: rows (l.i1, l.i2), indexes (l.x), the query
    // steps' background writer (qp100, whose deletes emptied such a table).
    for steps in ["l.i1", "l.i2", "l.x", "qp100", "qr100,l.i1", "l.x,l.i1"] {
        let args = with(
            &target,
            &["--steps", steps, "--l1-rows", "50", "--l2-rows", "10"],
        );
        let args = [&args[..], &["--query-seconds", "1"]].concat();
        let line = refusal(&bench.run(&args), "fpi1", "--write-existing");
        let first = steps.split(',').next().unwrap();
        assert!(line.contains(&format!("step {first}")), "{steps}: {line}");
        assert_eq!(
            sqlite_contents(&db, "fpi1"),
            before,
            "{steps} changed the table"
        );
    }

    // A step that only reads may read it.
    bench
        .run(&with(&target, &["--steps", "qp0", "--query-seconds", "1"]))
        .result();
    assert_eq!(sqlite_contents(&db, "fpi1"), before);

    // Told so, ibench writes into it as it is (and never replaces it).
    let run = bench
        .run(&with(
            &target,
            &[
                "--steps",
                "l.i1",
                "--l1-rows",
                "40",
                "--l1-batch",
                "10",
                "--write-existing",
            ],
        ))
        .result();
    assert_eq!(run.steps[0].rows_inserted, 40, "{:?}", run.steps[0]);
    let after = sqlite_contents(&db, "fpi1");
    assert_eq!(after.max, before.max + 40, "{after:?}");
    let sql: String = open_db(&db)
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'fpi1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(sql.contains("made by hand"), "not replaced: {sql}");
}

#[test]
fn microbenchmarks_write_into_sysbench_tables_only_when_told() {
    let bench = Bench::new();
    let db = bench.path("micro.db");
    {
        // As `sysbench prepare` makes it (its SQLite driver's DDL), with its own rows.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE sbtest1 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER DEFAULT 0 NOT NULL,
               c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL);
             CREATE INDEX k_1 ON sbtest1 (k);",
        )
        .unwrap();
        let tx = conn.unchecked_transaction().unwrap();
        for id in 1..=200 {
            tx.execute(
                "INSERT INTO sbtest1 VALUES (?1, ?2, 'c', 'pad')",
                [id, id % 17],
            )
            .unwrap();
        }
        tx.commit().unwrap();
    }
    let checksum = || -> (i64, i64, String) {
        open_db(&db)
            .query_row(
                "SELECT count(*), sum(k), group_concat(c || pad, '') FROM sbtest1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap()
    };
    let before = checksum();
    let micro = |benchmarks: &str, more: &[&str]| {
        let args = [
            &[
                "--path",
                path_str(&db),
                "--no-prepare",
                "--tables",
                "1",
                "--table-rows",
                "200",
                "--clients",
                "1",
                "--seconds",
                "1",
                "--benchmarks",
                benchmarks,
            ][..],
            more,
        ]
        .concat();
        bench.run_raw(&["micro", "--out", path_str(&bench.out()), "-q"], &args)
    };
    for writer in ["update-index", "update-nonindex", "write-only", "delete"] {
        let line = refusal(&micro(writer, &[]), "sbtest1", "--write-existing");
        assert!(line.contains(writer), "{line}");
        assert_eq!(checksum(), before, "{writer} changed sysbench's table");
    }
    // Reading them is what --no-prepare is for.
    micro("point-query", &[]).assert_success();
    assert_eq!(checksum(), before);
    // Told so, the writes happen.
    micro("update-nonindex", &["--write-existing"]).assert_success();
    assert_ne!(checksum(), before, "update-nonindex wrote nothing");
}

#[test]
fn steps_that_write_leave_a_foreign_table_on_a_server_alone() {
    let prefix = format!("zzfor{}_", std::process::id());
    let table = format!("{prefix}1");
    for service in LocalService::reachable() {
        let (server, url, pg) = (service.server, service.url, service.is_postgres());
        let exec = |sql: &str| service.exec(sql);
        // Rows, id range and the number of indexes, read with the test's own SQL.
        let contents = || -> Vec<i64> {
            let mut v = service.row(&format!("SELECT count(*), max(transactionid) FROM {table}"));
            v.extend(service.row(&if pg {
                format!("SELECT count(*) FROM pg_indexes WHERE tablename = '{table}'")
            } else {
                format!(
                    "SELECT count(DISTINCT index_name) FROM information_schema.statistics \
                     WHERE table_schema = 'test' AND table_name = '{table}'"
                )
            }));
            v
        };
        let bench = Bench::new();
        let target = [
            "--url",
            url,
            "--table-prefix",
            &prefix,
            "--clients",
            "1",
            "--l0-rows",
            "1000",
            "--l1-rows",
            "30",
            "--l1-batch",
            "10",
            "--query-seconds",
            "1",
        ];
        let run = |steps: &str| bench.run(&[&target[..], &["--steps", steps]].concat());
        run("l.i0").result();
        exec(&if pg {
            format!("COMMENT ON TABLE {table} IS NULL")
        } else {
            format!("ALTER TABLE {table} COMMENT = ''")
        });
        let before = contents();
        for steps in ["l.i1", "l.x", "qp100"] {
            refusal(&run(steps), &table, "--write-existing");
            assert_eq!(contents(), before, "{server}: {steps} changed the table");
        }
        exec(&format!("DROP TABLE {table}"));
    }
}

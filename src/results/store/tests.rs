//! Unit tests of the results database: opening, migrating, telling stores from other files.

use super::sql::pg_sql;
use super::*;

#[test]
fn corrupt_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    std::fs::write(&path, "this is not a database, just text ".repeat(100)).unwrap();
    let err = Store::open(&path).err().unwrap();
    assert_eq!(crate::error::exit_code(&err), crate::error::EXIT_USAGE);
    assert!(format!("{err:#}").contains("not a usable ibench results database"));
}

#[test]
fn a_version_1_store_gains_the_experiment_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&schema::migration(0, false)).unwrap();
        conn.execute_batch("PRAGMA user_version = 1").unwrap();
        conn.execute(
            "INSERT INTO runs (id, started_at, dbms, dbms_version, status, steps, \
             schema_version, document) VALUES ('old', '2026-01-01', 'sqlite', '3', \
             'complete', 'l.i0', 1, '{}')",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let v: i64 = store.rows("PRAGMA user_version", &[]).unwrap()[0][0]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(v as usize, schema::VERSION);
    assert_eq!(store.list().unwrap().len(), 1, "old runs are kept");
    assert!(store.experiment_runs("x").unwrap().is_empty());
    assert!(
        store.host_prices().unwrap().is_empty(),
        "and gain the hosts table"
    );
}

#[test]
fn pg_placeholders() {
    assert_eq!(
        pg_sql("SELECT a FROM t WHERE id = ?1 OR x = ?12"),
        "SELECT a FROM t WHERE id = $1 OR x = $12"
    );
    assert_eq!(schema::VERSION, 4);
    assert!(is_postgres_url(Path::new("postgres://u@h/db")));
    assert!(is_postgres_url(Path::new("postgresql://h/db")));
    assert!(!is_postgres_url(Path::new("ibench-results/results.db")));
}

#[test]
fn migrations_bring_a_new_store_to_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.db")).unwrap();
    let v: i64 = store.rows("PRAGMA user_version", &[]).unwrap()[0][0]
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(v as usize, schema::VERSION);
    assert!(store.list().unwrap().is_empty());
}

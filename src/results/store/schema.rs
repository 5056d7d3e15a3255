//! The store's schema: one migration per version, written once in SQLite's types and
//! given to PostgreSQL with 64-bit integers and double precision.

use std::borrow::Cow;

/// Schema migrations; migration i brings the schema from version i to i + 1.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        dbms TEXT NOT NULL,
        dbms_version TEXT NOT NULL,
        label TEXT,
        status TEXT NOT NULL,
        steps TEXT NOT NULL,
        schema_version INTEGER NOT NULL,
        document TEXT NOT NULL);
     CREATE INDEX runs_label ON runs (label);
     CREATE TABLE steps (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        duration_s REAL NOT NULL,
        inserts_per_s REAL NOT NULL,
        deletes_per_s REAL NOT NULL,
        queries_per_s REAL NOT NULL,
        PRIMARY KEY (run_id, idx));",
    // 2: runs of `ibench experiment` are tagged with the experiment, cell and repeat.
    "ALTER TABLE runs ADD COLUMN experiment TEXT;
     ALTER TABLE runs ADD COLUMN cell TEXT;
     ALTER TABLE runs ADD COLUMN repeat INTEGER;
     CREATE INDEX runs_experiment ON runs (experiment, cell);",
    // 3: prices of hosts per hour (`ibench host price`), for reports per unit of cost.
    "CREATE TABLE hosts (hostname TEXT PRIMARY KEY, cost_per_hour REAL NOT NULL);",
    // 4: provenance tags of runs (`--tag commit=...`), and `ibench history`'s cache of the
    // change points found per series (a document per series key).
    "CREATE TABLE run_tags (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key));
     CREATE INDEX run_tags_key ON run_tags (key, value);
     CREATE TABLE history_cache (
        series TEXT PRIMARY KEY,
        document TEXT NOT NULL);",
];

/// The schema version the migrations end at.
pub const VERSION: usize = MIGRATIONS.len();

/// Migration `i` (from version i to i + 1) in the types of the backend: SQLite's as
/// written, or PostgreSQL's (`pg`).
pub fn migration(i: usize, pg: bool) -> Cow<'static, str> {
    let sql = MIGRATIONS[i];
    if pg {
        Cow::Owned(
            sql.replace(" INTEGER", " BIGINT")
                .replace(" REAL", " DOUBLE PRECISION"),
        )
    } else {
        Cow::Borrowed(sql)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_gets_its_own_types() {
        for i in 0..VERSION {
            let pg = migration(i, true);
            assert!(!pg.contains("INTEGER") && !pg.contains(" REAL"), "{pg}");
        }
        assert!(migration(0, true).contains("idx BIGINT NOT NULL"));
        assert!(migration(0, true).contains("duration_s DOUBLE PRECISION NOT NULL"));
        assert!(migration(0, false).contains("duration_s REAL NOT NULL"));
    }
}

//! The test's own client of each DBMS, to check what ibench did without asking ibench: its own
//! SQL over the DBMS's own client library (rusqlite, postgres, mysql), or, for RocksDB, the
//! `rocksdb` crate's handle with the key encoding written out here. A new DBMS adds its client
//! here; it is the only part of the suite that names DBMS.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ibench::dbms::TargetSpec;

/// A row of an Insert Benchmark table as the test reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct IbRow {
    /// `transactionid`.
    pub id: i64,
    /// `customerid` (the suite's rows number themselves by it).
    pub customerid: i64,
    /// `cashregisterid`.
    pub cashregisterid: i64,
    /// `productid`.
    pub productid: i64,
    /// `price`.
    pub price: f64,
    /// `dateandtime` as `YYYY-MM-DD HH:MM:SS`.
    pub dateandtime: String,
    /// `data`.
    pub data: String,
}

/// A row of a microbenchmark table as the test reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct SbRow {
    /// `id`, as text (an integer, or a random-PK table's text key).
    pub id: String,
    /// `k`.
    pub k: i64,
    /// `c`.
    pub c: String,
}

/// The test's own way into a target.
pub enum Own {
    /// The database file.
    Sqlite(PathBuf),
    /// A PostgreSQL server.
    Postgres(Box<postgres::Config>),
    /// A MariaDB/MySQL server.
    Mysql(mysql::Opts),
    /// The database directory.
    #[cfg(feature = "rocksdb")]
    Rocksdb(PathBuf),
}

/// Rows as text (`None`: NULL).
type Rows = Vec<Vec<Option<String>>>;

impl Own {
    /// The client of `spec`'s DBMS.
    pub fn of(spec: &TargetSpec) -> Own {
        let path = || spec.path.clone().expect("an embedded target's path");
        let url = || spec.url.as_ref().expect("a server's URL");
        match spec.kind.name() {
            "sqlite" => Own::Sqlite(path()),
            "postgres" => {
                let mut config: postgres::Config = url().without_password().parse().unwrap();
                if let Some(pw) = url().password() {
                    config.password(pw);
                }
                Own::Postgres(Box::new(config))
            }
            "mysql" => {
                let opts = mysql::Opts::from_url(&url().without_password()).unwrap();
                let builder = mysql::OptsBuilder::from_opts(opts)
                    .pass(url().password())
                    .prefer_socket(false);
                Own::Mysql(builder.into())
            }
            #[cfg(feature = "rocksdb")]
            "rocksdb" => Own::Rocksdb(path()),
            other => panic!(
                "the conformance suite has no client of its own for {other}: add one to \
                 tests/conformance/own.rs"
            ),
        }
    }

    /// Runs `sql` (statements separated by `;`).
    fn exec(&self, sql: &str) {
        match self {
            Own::Sqlite(path) => sqlite(path).execute_batch(sql).unwrap(),
            Own::Postgres(config) => config
                .connect(postgres::NoTls)
                .unwrap()
                .batch_execute(sql)
                .unwrap(),
            Own::Mysql(opts) => {
                use mysql::prelude::Queryable;
                mysql::Conn::new(opts.clone())
                    .unwrap()
                    .query_drop(sql)
                    .unwrap()
            }
            #[cfg(feature = "rocksdb")]
            Own::Rocksdb(_) => panic!("RocksDB takes no SQL"),
        }
    }

    /// The rows of query `sql`, every value as text.
    pub fn rows(&self, sql: &str) -> Rows {
        match self {
            Own::Sqlite(path) => {
                use rusqlite::types::ValueRef;
                let conn = sqlite(path);
                let mut stmt = conn.prepare(sql).unwrap();
                let n = stmt.column_count();
                let rows = stmt.query_map([], |r| {
                    (0..n)
                        .map(|i| {
                            Ok(match r.get_ref(i)? {
                                ValueRef::Null => None,
                                ValueRef::Integer(v) => Some(v.to_string()),
                                ValueRef::Real(v) => Some(v.to_string()),
                                ValueRef::Text(b) | ValueRef::Blob(b) => {
                                    Some(String::from_utf8_lossy(b).into_owned())
                                }
                            })
                        })
                        .collect()
                });
                rows.unwrap().collect::<Result<_, _>>().unwrap()
            }
            Own::Postgres(config) => {
                let mut c = config.connect(postgres::NoTls).unwrap();
                c.simple_query(sql)
                    .unwrap()
                    .into_iter()
                    .filter_map(|m| match m {
                        postgres::SimpleQueryMessage::Row(r) => {
                            Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                        }
                        _ => None,
                    })
                    .collect()
            }
            Own::Mysql(opts) => {
                use mysql::prelude::Queryable;
                let mut c = mysql::Conn::new(opts.clone()).unwrap();
                let rows: Vec<mysql::Row> = c.query(sql).unwrap();
                rows.into_iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| match r.as_ref(i) {
                                None | Some(mysql::Value::NULL) => None,
                                Some(mysql::Value::Bytes(b)) => {
                                    Some(String::from_utf8_lossy(b).into_owned())
                                }
                                Some(v) => Some(v.as_sql(true)),
                            })
                            .collect()
                    })
                    .collect()
            }
            #[cfg(feature = "rocksdb")]
            Own::Rocksdb(_) => panic!("RocksDB takes no SQL"),
        }
    }

    /// Creates `table` with the Insert Benchmark's columns and one row, without ibench's mark.
    pub fn create_foreign(&self, table: &str) {
        let ddl = match self {
            Own::Sqlite(_) => {
                "CREATE TABLE {t} (transactionid INTEGER PRIMARY KEY, dateandtime TEXT, \
                 cashregisterid INTEGER, customerid INTEGER, productid INTEGER, price REAL, \
                 data TEXT)"
            }
            Own::Postgres(_) => {
                "CREATE TABLE {t} (transactionid bigint PRIMARY KEY, dateandtime timestamp, \
                 cashregisterid int, customerid int, productid int, price float8, \
                 data varchar(4000))"
            }
            Own::Mysql(_) => {
                "CREATE TABLE {t} (transactionid bigint PRIMARY KEY, dateandtime datetime, \
                 cashregisterid int, customerid int, productid int, price float, \
                 data varchar(4000)) COMMENT='made by hand'"
            }
            #[cfg(feature = "rocksdb")]
            Own::Rocksdb(dir) => return rocks::create_foreign(dir, table),
        };
        self.exec(&format!(
            "{}; INSERT INTO {table} VALUES (1, '2024-01-02 03:04:05', 1, 2, 3, 4.5, 'by hand')",
            ddl.replace("{t}", table)
        ));
    }

    /// Every row of Insert Benchmark table `table`, by `transactionid`.
    pub fn ib_rows(&self, table: &str) -> Vec<IbRow> {
        #[cfg(feature = "rocksdb")]
        if let Own::Rocksdb(dir) = self {
            return rocks::ib_rows(dir, table);
        }
        let sql = format!(
            "SELECT transactionid, customerid, cashregisterid, productid, price, dateandtime, \
             data FROM {table} ORDER BY transactionid"
        );
        self.rows(&sql)
            .into_iter()
            .map(|r| {
                let v = |i: usize| r[i].clone().expect("a value");
                IbRow {
                    id: v(0).parse().unwrap(),
                    customerid: v(1).parse().unwrap(),
                    cashregisterid: v(2).parse().unwrap(),
                    productid: v(3).parse().unwrap(),
                    price: v(4).parse().unwrap(),
                    dateandtime: v(5),
                    data: v(6),
                }
            })
            .collect()
    }

    /// Every row of microbenchmark table `table`, by `id`.
    pub fn sb_rows(&self, table: &str) -> Vec<SbRow> {
        let sql = format!("SELECT id, k, c FROM {table} ORDER BY id");
        self.rows(&sql)
            .into_iter()
            .map(|r| {
                let v = |i: usize| r[i].clone().expect("a value");
                SbRow {
                    id: v(0).trim_end().to_string(),
                    k: v(1).parse().unwrap(),
                    c: v(2).trim_end().to_string(),
                }
            })
            .collect()
    }

    /// Ends every other client session of the server (ibench's); returns how many.
    pub fn kill_other_sessions(&self) -> usize {
        match self {
            Own::Postgres(_) => {
                let rows = self.rows(
                    "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity \
                     WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
                );
                rows[0][0].as_deref().unwrap().parse().unwrap()
            }
            Own::Mysql(opts) => {
                use mysql::prelude::Queryable;
                let mut c = mysql::Conn::new(opts.clone()).unwrap();
                let ids: Vec<u64> = c
                    .query(
                        "SELECT id FROM information_schema.processlist \
                         WHERE id <> connection_id() AND command <> 'Daemon' \
                         AND user NOT IN ('system user', 'event_scheduler')",
                    )
                    .unwrap();
                for id in &ids {
                    let _ = c.query_drop(format!("KILL {id}"));
                }
                let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
                let left =
                    format!("SELECT id FROM information_schema.processlist WHERE id IN ({list})");
                let deadline = Instant::now() + Duration::from_secs(10);
                while !ids.is_empty() && !c.query::<u64, _>(&left).unwrap().is_empty() {
                    assert!(Instant::now() < deadline, "killed sessions linger");
                    std::thread::sleep(Duration::from_millis(20));
                }
                ids.len()
            }
            _ => panic!("an embedded DBMS has no sessions to end"),
        }
    }
}

/// A connection to the SQLite file (created if missing) that waits for locks.
fn sqlite(path: &std::path::Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn
}

/// RocksDB through the `rocksdb` crate, with ibench's data model written out independently:
/// a table is a column family keyed by the 8-byte big-endian id; a row is `dateandtime` (i64),
/// `cashregisterid`, `customerid`, `productid` (i32), `price` (f64), then `data`, big-endian.
#[cfg(feature = "rocksdb")]
mod rocks {
    use std::path::Path;

    use ::rocksdb::{DB, IteratorMode, Options};

    use super::IbRow;

    /// Creates family `table` holding one row (id 1), and no mark, in a database that ibench
    /// has not opened yet.
    pub fn create_foreign(dir: &Path, table: &str) {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        let names = DB::list_cf(&opts, dir).unwrap_or_default();
        let mut db = DB::open_cf(&opts, dir, names).unwrap();
        db.create_cf(table, &Options::default()).unwrap();
        let mut row = Vec::new();
        row.extend_from_slice(&1_704_164_645_i64.to_be_bytes());
        for v in [1_i32, 2, 3] {
            row.extend_from_slice(&v.to_be_bytes());
        }
        row.extend_from_slice(&4.5_f64.to_bits().to_be_bytes());
        row.extend_from_slice(b"by hand");
        let cf = db.cf_handle(table).unwrap();
        db.put_cf(cf, 1_u64.to_be_bytes(), row).unwrap();
    }

    /// Every row of family `table`, read-only beside ibench's open handle.
    pub fn ib_rows(dir: &Path, table: &str) -> Vec<IbRow> {
        let opts = Options::default();
        let names = DB::list_cf(&opts, dir).unwrap();
        let db = DB::open_cf_for_read_only(&opts, dir, names, false).unwrap();
        let cf = db
            .cf_handle(table)
            .unwrap_or_else(|| panic!("no family {table}"));
        db.iterator_cf(cf, IteratorMode::Start)
            .map(|kv| {
                let (k, v) = kv.unwrap();
                let int = |at: usize| i32::from_be_bytes(v[at..at + 4].try_into().unwrap());
                let unix = i64::from_be_bytes(v[0..8].try_into().unwrap());
                IbRow {
                    id: u64::from_be_bytes(k[..].try_into().unwrap()) as i64,
                    cashregisterid: int(8).into(),
                    customerid: int(12).into(),
                    productid: int(16).into(),
                    price: f64::from_bits(u64::from_be_bytes(v[20..28].try_into().unwrap())),
                    dateandtime: chrono::DateTime::from_timestamp(unix, 0)
                        .unwrap()
                        .format("%Y-%m-%d %H:%M:%S")
                        .to_string(),
                    data: String::from_utf8_lossy(&v[28..]).into_owned(),
                }
            })
            .collect()
    }
}

//! One MariaDB/MySQL client connection over the lean wire client (see `wire.rs` for why):
//! the shared statement vocabulary executed (every workload's statements, prepared once per
//! table), its tables created and marked, and the Insert Benchmark's catalog and scan.

use anyhow::Result;

use super::Engine;
use crate::dbms::DbError;
use crate::dbms::literal::{self, Literal};
use super::wire::{Done, MyWire, Param, Statement, Value as WireValue};
use crate::dbms::sql::{
    Args, Dialect, GeneratedIds, InsertBenchmarkCatalog, Rows, SbtestRows, Shape, SqlConnection,
    Statement as SqlStatement, TableSql, Transactions, question_mark,
};
use crate::dbms::{SecondaryIndex, StatementCache, Table, TableOrigin};

const CREATE_TABLE: &str = "CREATE TABLE {t} (
    transactionid bigint NOT NULL AUTO_INCREMENT,
    dateandtime datetime NOT NULL,
    cashregisterid int NOT NULL,
    customerid int NOT NULL,
    productid int NOT NULL,
    price float NOT NULL,
    data varchar(4000),
    PRIMARY KEY (transactionid)) ENGINE={e} COMMENT='created by ibench'";
/// The scan step: every row through the clustered primary key, counted by the server.
const SCAN_PK: &str = "SELECT count(*) FROM {t} FORCE INDEX (PRIMARY)";
/// The scan step: every entry of a secondary index.
const SCAN_INDEX: &str = "SELECT count(*) FROM {t} FORCE INDEX ({i})";
const INDEX_NAMES: &str = "SELECT DISTINCT index_name FROM information_schema.statistics \
     WHERE table_schema = database() AND table_name = ? AND index_name <> 'PRIMARY' \
     ORDER BY index_name";
/// ibench marks its tables with a table comment.
const TABLE_ORIGIN: &str = "SELECT CASE WHEN count(*) = 0 THEN 'missing' \
     WHEN max(table_comment) = 'created by ibench' THEN 'ibench' ELSE 'other' END \
     FROM information_schema.tables WHERE table_schema = database() AND table_name = ?";
/// sysbench's table.
const CREATE_SBTEST: &str = "CREATE TABLE {t} (
    id int NOT NULL,
    k int NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id)) ENGINE={e} COMMENT='created by ibench'";
const INSERT_SBTEST_PREFIX: &str = "INSERT INTO {t} (id, k, c, pad) VALUES ";
const INSERT_SBTEST_ROW: &str = "(?,?,?,?)";
/// The options after a declared table's columns (TPC-C's): its engine and ibench's mark.
const DEFINED_OPTIONS: &str = " ENGINE={e} COMMENT='created by ibench'";
const CREATE_SBTEST_INDEX: &str = "CREATE INDEX {i} ON {t} (k)";
/// The insert benchmark's table: `id` assigned by AUTO_INCREMENT (appended).
const CREATE_AUTO_INCREMENT: &str = "CREATE TABLE {t} (
    id int NOT NULL AUTO_INCREMENT,
    k int NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id),
    KEY {i} (k)) ENGINE={e} COMMENT='created by ibench'";
/// The random-PK insert benchmark's table: a 26-character text key, which the engine
/// clusters the rows by.
const CREATE_RANDOM_PK: &str = "CREATE TABLE {t} (
    id char(26) NOT NULL,
    k int NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id),
    KEY {i} (k)) ENGINE={e} COMMENT='created by ibench'";
const BEGIN: &str = "BEGIN";
const COMMIT: &str = "COMMIT";
const ROLLBACK: &str = "ROLLBACK";

/// MySQL's placeholders and index hints (`FORCE INDEX`).
static DIALECT: Dialect = Dialect {
    placeholder: question_mark,
    index_hint: Some(|index| format!(" FORCE INDEX ({index})")),
    for_update: true,
    tiny_int: "tinyint",
    date_time: "datetime",
    no_foreign_keys: None,
    isolation: "REPEATABLE READ (MariaDB's default)",
    generated_ids: GeneratedIds::First,
    range_hints: true,
    one_index_per_statement: None,
};
/// MySQL's tables: engine and ibench's mark (a table comment) in their `CREATE TABLE`, the
/// insert benchmarks' index on `k` too.
static TABLES: TableSql = TableSql {
    sbtest: CREATE_SBTEST,
    auto_increment: CREATE_AUTO_INCREMENT,
    random_pk: CREATE_RANDOM_PK,
    insert_benchmark: CREATE_TABLE,
    defined_options: DEFINED_OPTIONS,
    defined_mark: None,
    mark: None,
    k_index: None,
};
/// MyRocks: as InnoDB, but it has no foreign keys and adds one index per statement.
static DIALECT_ROCKSDB: Dialect = Dialect {
    no_foreign_keys: Some("MyRocks has no foreign keys"),
    one_index_per_statement: Some("MyRocks creates one index per statement"),
    ..DIALECT
};

/// A client thread's connection, over the lean wire client (see `wire.rs` for why).
pub(super) struct MyConnection {
    wire: MyWire,
    engine: Engine,
    /// Statements prepared on this connection, by table and statement.
    statements: StatementCache<usize, Statement>,
    /// Plain-SQL mode: text protocol with values inlined, nothing prepared.
    plain: bool,
    /// `auto_increment_increment` of the server.
    id_step: i64,
    /// The first id the last statement's insert assigned (`LAST_INSERT_ID()`).
    last_insert_id: u64,
}

fn t(sql: &str, table: &Table) -> String {
    sql.replace("{t}", &table.name)
}

/// Maps a wire error to one naming what was done, keeping its kind; formats only on error.
fn sql_err<'a>(what: &'a str, name: &'a str) -> impl FnOnce(DbError) -> anyhow::Error + 'a {
    move |e| {
        anyhow::Error::new(DbError {
            message: format!("{what} {name}: {}", e.message),
            kind: e.kind,
        })
    }
}

/// Ignores rows.
fn no_rows(_: WireValue<'_>) -> Result<(), DbError> {
    Ok(())
}

impl MyConnection {
    /// A connection with nothing prepared yet.
    pub(super) fn new(wire: MyWire, engine: Engine, plain: bool, id_step: i64) -> Self {
        MyConnection {
            wire,
            engine,
            statements: StatementCache::new(),
            plain,
            id_step,
            last_insert_id: 0,
        }
    }

    /// Runs one-off SQL text (DDL) on the connection.
    fn run(&mut self, sql: &str, what: &str, name: &str) -> Result<()> {
        self.wire.query(sql, no_rows).map_err(sql_err(what, name))?;
        Ok(())
    }
}

impl MyConnection {
    /// Plain-SQL mode: runs `sql` with `values` inlined over the text protocol; returns the
    /// rows' first column as an integer where it is one, and the statement's outcome.
    fn plain_query(
        &mut self,
        sql: &str,
        values: &[Literal<'_>],
        table: &Table,
    ) -> Result<(Vec<Option<i64>>, Done)> {
        let text = literal::bind(&t(sql, table), values, true);
        let mut first = Vec::new();
        let done = self
            .wire
            .query(&text, |v| {
                // Range queries return prices here; only integer columns are read as ids.
                first.push(v.as_i64());
                Ok(())
            })
            .map_err(sql_err("plain SQL on", &table.name))?;
        Ok((first, done))
    }
}

impl MyConnection {
    /// Whether `table` exists and carries ibench's comment.
    fn origin(&mut self, table: &Table) -> Result<TableOrigin> {
        let sql = literal::bind(TABLE_ORIGIN, &[Literal::Str(&table.name)], true);
        let mut origin = TableOrigin::Other;
        self.wire
            .query(&sql, |v| {
                if let WireValue::Bytes(b) = v {
                    origin = match b {
                        b"missing" => TableOrigin::Missing,
                        b"ibench" => TableOrigin::Ibench,
                        _ => TableOrigin::Other,
                    };
                }
                Ok(())
            })
            .map_err(sql_err("look up table", &table.name))?;
        Ok(origin)
    }
}

impl InsertBenchmarkCatalog for MyConnection {
    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        let sql = literal::bind(INDEX_NAMES, &[Literal::Str(&table.name)], true);
        let mut names = Vec::new();
        self.wire
            .query(&sql, |v| {
                if let WireValue::Bytes(b) = v {
                    names.push(String::from_utf8_lossy(b).into_owned());
                }
                Ok(())
            })
            .map_err(sql_err("list indexes of", &table.name))?;
        Ok(names)
    }

    fn can_scan(&self) -> bool {
        true
    }

    fn scan(&mut self, table: &Table, index: Option<SecondaryIndex>) -> Result<u64> {
        let sql = match index {
            None => t(SCAN_PK, table),
            Some(i) => t(SCAN_INDEX, table).replace("{i}", &i.name_on(&table.name)),
        };
        let mut n = 0;
        self.wire
            .query(&sql, |v| {
                n = v.as_i64().unwrap_or(0);
                Ok(())
            })
            .map_err(sql_err("scan", &table.name))?;
        Ok(n.max(0) as u64)
    }
}

impl Transactions for MyConnection {
    fn begin(&mut self, _writes: bool) -> Result<()> {
        self.wire.query(BEGIN, no_rows).map_err(sql_err("transaction", "BEGIN"))?;
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.wire.query(COMMIT, no_rows).map_err(sql_err("transaction", "COMMIT"))?;
        Ok(())
    }

    fn rollback(&mut self) -> Result<()> {
        self.wire
            .query(ROLLBACK, no_rows)
            .map_err(sql_err("transaction", "ROLLBACK"))?;
        Ok(())
    }
}

impl SqlConnection for MyConnection {
    fn dialect(&self) -> &'static Dialect {
        match self.engine {
            Engine::Innodb => &DIALECT,
            Engine::Rocksdb => &DIALECT_ROCKSDB,
        }
    }

    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin> {
        self.origin(table)
    }

    fn create_table(&mut self, table: &Table, shape: Shape) -> Result<()> {
        // The table is new: statements prepared on the old one must be prepared again.
        self.statements.forget(table);
        for (what, sql) in TABLES.replace(&table.name, shape, self.dialect()) {
            let sql = sql.replace("{e}", self.engine.sql_name());
            self.run(&sql, what, &table.name)?;
        }
        Ok(())
    }

    fn insert_sbtest(&mut self, table: &Table, rows: &SbtestRows) -> Result<()> {
        // The load is not the measured path: one text statement per batch.
        let mut sql = t(INSERT_SBTEST_PREFIX, table);
        for i in 0..rows.len() {
            if i > 0 {
                sql.push(',');
            }
            let values = [
                Literal::Int(rows.id[i]),
                Literal::Int(i64::from(rows.k[i])),
                Literal::Str(&rows.c[i]),
                Literal::Str(&rows.pad[i]),
            ];
            sql.push_str(&literal::bind(INSERT_SBTEST_ROW, &values, true));
        }
        self.run(&sql, "insert into", &table.name)
    }

    fn create_sbtest_index(&mut self, table: &Table, index: &str) -> Result<()> {
        let sql = t(CREATE_SBTEST_INDEX, table).replace("{i}", index);
        self.run(&sql, "create index", index)
    }

    fn run_statement(
        &mut self,
        table: &Table,
        statement: &'static SqlStatement,
        args: Args<'_>,
        out: Option<&mut Rows>,
    ) -> Result<u64> {
        match out {
            None => self.execute_dropping(table, statement, args),
            Some(out) => self.execute_keeping(table, statement, args, out),
        }
    }

    fn last_insert_id(&mut self) -> Result<i64> {
        Ok(self.last_insert_id as i64)
    }

    fn id_step(&self) -> i64 {
        self.id_step
    }
}

impl MyConnection {
    /// Runs `statement`, reading each value of the rows it returned and dropping it.
    fn execute_dropping(
        &mut self,
        table: &Table,
        statement: &'static SqlStatement,
        args: Args<'_>,
    ) -> Result<u64> {
        if self.plain {
            let sql = statement.sql(&table.name, self.dialect());
            let values: Vec<Literal<'_>> = args.iter().collect();
            let (rows, done) = self.plain_query(&sql, &values, table)?;
            self.last_insert_id = done.last_insert_id;
            return Ok(if statement.writes() {
                done.affected_rows
            } else {
                rows.len() as u64
            });
        }
        let stmt = self.prepared(table, statement)?;
        let mut rows = 0;
        let done = self
            .wire
            .execute_with(&stmt, args.len(), |i| param(args, i), |v| {
                // Read the value, as a client would.
                std::hint::black_box(v);
                rows += 1;
                Ok(())
            })
            .map_err(sql_err("statement on", &table.name))?;
        self.last_insert_id = done.last_insert_id;
        Ok(if statement.writes() {
            done.affected_rows
        } else {
            rows
        })
    }

    /// Runs `statement`, keeping the values of the rows it returned in `out`.
    fn execute_keeping(
        &mut self,
        table: &Table,
        statement: &'static SqlStatement,
        args: Args<'_>,
        out: &mut Rows,
    ) -> Result<u64> {
        out.start(0);
        let mut keep = |columns: usize, v: WireValue<'_>| {
            out.set_width(columns);
            match v {
                WireValue::Null => out.push_null(),
                WireValue::Int(i) => out.push_int(i),
                WireValue::Double(f) => out.push_float(f),
                WireValue::Bytes(b) => out.push_text(b),
            }
            Ok(())
        };
        let done = if self.plain {
            let sql = statement.sql(&table.name, self.dialect());
            let values: Vec<Literal<'_>> = args.iter().collect();
            let text = literal::bind(&sql, &values, true);
            self.wire.query_all(&text, &mut keep)
        } else {
            let stmt = self.prepared(table, statement)?;
            self.wire
                .execute_all(&stmt, args.len(), |i| param(args, i), &mut keep)
        }
        .map_err(sql_err("statement on", &table.name))?;
        self.last_insert_id = done.last_insert_id;
        Ok(if statement.writes() {
            done.affected_rows
        } else {
            out.len() as u64
        })
    }

    /// `statement` on `table`, prepared on its first use.
    fn prepared(&mut self, table: &Table, statement: &'static SqlStatement) -> Result<Statement> {
        let dialect = self.dialect();
        let wire = &mut self.wire;
        Ok(*self.statements.get_or_try_insert_with(table, statement.key(), || {
            wire.prepare(&statement.sql(&table.name, dialect))
                .map_err(sql_err("prepare statement on", &table.name))
        })?)
    }
}

/// Value `i` of `args` as a wire parameter.
fn param<'a>(args: Args<'a>, i: usize) -> Param<'a> {
    match args.get(i) {
        Literal::Int(v) => Param::Int(v),
        Literal::Float(v) => Param::Double(v),
        Literal::Str(v) => Param::Bytes(v.as_bytes()),
    }
}

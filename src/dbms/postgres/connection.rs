//! One PostgreSQL client connection over the lean wire client (see `wire.rs` for why): the
//! shared statement vocabulary executed (every workload's statements, prepared once per
//! table), its tables created and marked, and the Insert Benchmark's catalog and scan.

use anyhow::{Context, Result};
use postgres::types::{IsNull, ToSql, Type};

use crate::dbms::DbError;
use crate::dbms::literal::{self, Literal};
use super::wire::{PgWire, Row, Statement};
use crate::dbms::sql::{
    Args, Dialect, GeneratedIds, InsertBenchmarkCatalog, Rows, SbtestRows, Shape, SqlConnection,
    Statement as SqlStatement, TableSql, Transactions, dollar,
};
use crate::dbms::{SecondaryIndex, StatementCache, Table, TableOrigin};

const CREATE_TABLE: &str = "CREATE TABLE {t} (
    transactionid bigserial PRIMARY KEY,
    dateandtime timestamp without time zone NOT NULL,
    cashregisterid integer NOT NULL,
    customerid integer NOT NULL,
    productid integer NOT NULL,
    price float8 NOT NULL,
    data varchar(4000))";
/// The scan step: PostgreSQL has no index hints, so the scanning transaction turns the
/// planner's other choices off and asks for the index's order (OFFSET 0 keeps the subquery
/// from being flattened away): every row through the primary key.
const SCAN_PK: &str = "BEGIN; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; \
     SELECT count(*) FROM (SELECT * FROM {t} ORDER BY transactionid OFFSET 0) s; COMMIT";
/// The scan step: every entry of a secondary index (its columns `{c}`, an index-only scan).
const SCAN_INDEX: &str = "BEGIN; SET LOCAL enable_seqscan = off; \
     SET LOCAL enable_bitmapscan = off; \
     SELECT count(*) FROM (SELECT {c} FROM {t} ORDER BY {c} OFFSET 0) s; COMMIT";
const INDEX_NAMES: &str = "SELECT indexname::text FROM pg_indexes \
     WHERE schemaname = current_schema() AND tablename = $1 AND indexname <> $1 || '_pkey' \
     ORDER BY indexname";
/// ibench marks its tables with a comment.
const MARK_TABLE: &str = "COMMENT ON TABLE {t} IS 'created by ibench'";
const TABLE_ORIGIN: &str = "SELECT CASE WHEN to_regclass($1) IS NULL THEN 'missing' \
     WHEN obj_description(to_regclass($1), 'pg_class') = 'created by ibench' THEN 'ibench' \
     ELSE 'other' END";
/// sysbench's table (`id` is integer there: ids are bound as int4).
const CREATE_SBTEST: &str = "CREATE TABLE {t} (
    id integer NOT NULL,
    k integer NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id))";
const INSERT_SBTEST_PREFIX: &str = "INSERT INTO {t} (id, k, c, pad) VALUES ";
const CREATE_SBTEST_INDEX: &str = "CREATE INDEX {i} ON {t} (k)";
/// The insert benchmark's table: `id` assigned by a sequence (appended).
const CREATE_AUTO_INCREMENT: &str = "CREATE TABLE {t} (
    id serial NOT NULL,
    k integer NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id))";
/// The random-PK insert benchmark's table: a 26-character text key.
const CREATE_RANDOM_PK: &str = "CREATE TABLE {t} (
    id char(26) NOT NULL,
    k integer NOT NULL DEFAULT 0,
    c char(120) NOT NULL DEFAULT '',
    pad char(60) NOT NULL DEFAULT '',
    PRIMARY KEY (id))";
const BEGIN: &str = "BEGIN";
const COMMIT: &str = "COMMIT";
const ROLLBACK: &str = "ROLLBACK";

/// PostgreSQL's placeholders; it has no index hints (the planner chooses).
static DIALECT: Dialect = Dialect {
    placeholder: dollar,
    index_hint: None,
    for_update: true,
    tiny_int: "smallint",
    date_time: "timestamp",
    no_foreign_keys: None,
    isolation: "READ COMMITTED (PostgreSQL's default)",
    generated_ids: GeneratedIds::Returning,
    range_hints: false,
    one_index_per_statement: Some("PostgreSQL creates one index per statement"),
};

/// PostgreSQL's tables: marked by a comment after their `CREATE TABLE`, the insert
/// benchmarks' index on `k` created after the table.
static TABLES: TableSql = TableSql {
    sbtest: CREATE_SBTEST,
    auto_increment: CREATE_AUTO_INCREMENT,
    random_pk: CREATE_RANDOM_PK,
    insert_benchmark: CREATE_TABLE,
    defined_options: "",
    defined_mark: None,
    mark: Some(MARK_TABLE),
    k_index: Some(CREATE_SBTEST_INDEX),
};

/// A client thread's connection, over the lean wire client (see `wire.rs` for why).
pub(super) struct PgConnection {
    wire: PgWire,
    /// Statements prepared on this connection, by table and statement.
    statements: StatementCache<usize, Statement>,
    /// Plain-SQL mode: simple-query protocol with values inlined, nothing prepared.
    plain: bool,
    /// The last date-time text bound as a `timestamp` and its value: an Insert Benchmark
    /// batch binds one date-time per row, the same for all of them.
    timestamp: (String, chrono::NaiveDateTime),
}

/// Maps a wire error to one naming the statement and table, keeping its kind; formats only
/// on error.
fn sql_err<'a>(what: &'a str, table: &'a Table) -> impl FnOnce(DbError) -> anyhow::Error + 'a {
    move |e| {
        anyhow::Error::new(DbError {
            message: format!("{what} {}: {}", table.name, e.message),
            kind: e.kind,
        })
    }
}

/// Ignores the rows of a statement run for its effect.
fn no_rows(_: &Row<'_>) -> Result<(), DbError> {
    Ok(())
}

impl PgConnection {
    /// A connection with nothing prepared yet.
    pub(super) fn new(wire: PgWire, plain: bool) -> Self {
        PgConnection {
            wire,
            statements: StatementCache::new(),
            plain,
            timestamp: (String::new(), chrono::NaiveDateTime::default()),
        }
    }
}

/// Plain-SQL mode (and one-off statements): runs `sql` (placeholders filled with `values`)
/// over the simple-query protocol; returns the rows' first column as text, and the
/// affected-row count.
fn simple(
    wire: &mut PgWire,
    sql: &str,
    values: &[Literal<'_>],
    table: &Table,
) -> Result<(Vec<Option<String>>, u64)> {
    let text = literal::bind(&sql.replace("{t}", &table.name), values, false);
    let mut first = Vec::new();
    let affected = wire
        .simple_query(&text, |r| {
            first.push(r.text(0).map(str::to_string));
            Ok(())
        })
        .map_err(sql_err("SQL on", table))?;
    Ok((first, affected))
}

/// Whether `table` exists and carries ibench's comment.
fn origin(wire: &mut PgWire, table: &Table) -> Result<TableOrigin> {
    let (rows, _) = simple(wire, TABLE_ORIGIN, &[Literal::Str(&table.name)], table)?;
    Ok(match rows.first().and_then(|r| r.as_deref()) {
        Some("missing") => TableOrigin::Missing,
        Some("ibench") => TableOrigin::Ibench,
        _ => TableOrigin::Other,
    })
}

fn parse_i64(v: Option<&Option<String>>) -> Result<Option<i64>> {
    match v {
        Some(Some(s)) => Ok(Some(s.parse().context("server returned a non-integer")?)),
        _ => Ok(None),
    }
}

impl InsertBenchmarkCatalog for PgConnection {
    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        let (names, _) = simple(
            &mut self.wire,
            INDEX_NAMES,
            &[Literal::Str(&table.name)],
            table,
        )?;
        Ok(names.into_iter().flatten().collect())
    }

    fn can_scan(&self) -> bool {
        true
    }

    fn scan(&mut self, table: &Table, index: Option<SecondaryIndex>) -> Result<u64> {
        let sql = match index {
            None => SCAN_PK.to_string(),
            Some(i) => SCAN_INDEX.replace("{c}", &i.columns().join(", ")),
        };
        let (rows, _) = simple(&mut self.wire, &sql, &[], table)?;
        Ok(parse_i64(rows.first())?.unwrap_or(0) as u64)
    }
}

impl Transactions for PgConnection {
    fn begin(&mut self, _writes: bool) -> Result<()> {
        self.wire
            .simple_query(BEGIN, |_| Ok(()))
            .map_err(|e| anyhow::Error::new(e).context("BEGIN"))?;
        Ok(())
    }

    fn commit(&mut self) -> Result<()> {
        self.wire
            .simple_query(COMMIT, |_| Ok(()))
            .map_err(|e| anyhow::Error::new(e).context("COMMIT"))?;
        Ok(())
    }

    fn rollback(&mut self) -> Result<()> {
        self.wire
            .simple_query(ROLLBACK, |_| Ok(()))
            .map_err(|e| anyhow::Error::new(e).context("ROLLBACK"))?;
        Ok(())
    }
}

impl SqlConnection for PgConnection {
    fn dialect(&self) -> &'static Dialect {
        &DIALECT
    }

    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin> {
        origin(&mut self.wire, table)
    }

    fn create_table(&mut self, table: &Table, shape: Shape) -> Result<()> {
        // The table is new: statements prepared on the old one must be prepared again.
        self.statements.forget(table);
        for (_, sql) in TABLES.replace(&table.name, shape, &DIALECT) {
            simple(&mut self.wire, &sql, &[], table)?;
        }
        Ok(())
    }

    fn insert_sbtest(&mut self, table: &Table, rows: &SbtestRows) -> Result<()> {
        let mut sql = INSERT_SBTEST_PREFIX.replace("{t}", &table.name);
        for i in 0..rows.len() {
            let p = 4 * i;
            if i > 0 {
                sql.push(',');
            }
            sql.push_str(&format!("(${},${},${},${})", p + 1, p + 2, p + 3, p + 4));
        }
        let ids: Vec<i32> = rows.id.iter().map(|&id| id as i32).collect();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(4 * rows.len());
        for (i, id) in ids.iter().enumerate() {
            params.extend([
                id as &(dyn ToSql + Sync),
                &rows.k[i],
                &rows.c[i],
                &rows.pad[i],
            ]);
        }
        // The load is not the measured path: a one-off (unnamed) statement per batch.
        let stmt = self
            .wire
            .prepare_unnamed(&sql)
            .map_err(sql_err("prepare insert into", table))?;
        self.wire
            .query(&stmt, &params, no_rows)
            .map_err(sql_err("insert into", table))?;
        Ok(())
    }

    fn create_sbtest_index(&mut self, table: &Table, index: &str) -> Result<()> {
        simple(
            &mut self.wire,
            &CREATE_SBTEST_INDEX.replace("{i}", index),
            &[],
            table,
        )?;
        Ok(())
    }

    fn run_statement(
        &mut self,
        table: &Table,
        statement: &'static SqlStatement,
        args: Args<'_>,
        mut out: Option<&mut Rows>,
    ) -> Result<u64> {
        if let Some(out) = out.as_deref_mut() {
            out.start(0);
        }
        if self.plain {
            let sql = statement.sql(&table.name, &DIALECT);
            let values: Vec<Literal<'_>> = args.iter().collect();
            let text = literal::bind(&sql, &values, false);
            let mut rows = 0;
            let affected = self
                .wire
                .simple_query(&text, |r| {
                    keep_row(out.as_deref_mut(), r);
                    rows += 1;
                    Ok(())
                })
                .map_err(sql_err("SQL on", table))?;
            return Ok(if statement.writes() { affected } else { rows });
        }
        let wire = &mut self.wire;
        let stmt = self.statements.get_or_try_insert_with(table, statement.key(), || {
            wire.prepare(&statement.sql(&table.name, &DIALECT))
                .map_err(sql_err("prepare on", table))
        })?;
        let timestamp = &mut self.timestamp;
        let mut rows = 0;
        let affected = wire
            .query_with(
                stmt,
                args.len(),
                |i, ty, buf| match (args.get(i), ty) {
                    (Literal::Str(text), &Type::TIMESTAMP) => {
                        timestamp_of(timestamp, text)?.to_sql(ty, buf)
                    }
                    (value, _) => Bound(value).to_sql(ty, buf),
                },
                |r| {
                    keep_row(out.as_deref_mut(), r);
                    rows += 1;
                    Ok(())
                },
            )
            .map_err(sql_err("statement on", table))?;
        Ok(if statement.writes() { affected } else { rows })
    }
}

/// The `timestamp` written as `text` (`YYYY-MM-DD HH:MM:SS`), parsed only when it differs
/// from the last one (`last`).
fn timestamp_of(
    last: &mut (String, chrono::NaiveDateTime),
    text: &str,
) -> Result<chrono::NaiveDateTime, Box<dyn std::error::Error + Sync + Send>> {
    if last.0 != text {
        last.1 = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S")?;
        last.0.clear();
        last.0.push_str(text);
    }
    Ok(last.1)
}

/// Keeps the values of `r` in `out`, by their types (text as sent where the type is not one
/// of the numbers or strings a workload reads back); without `out`, reads each and drops it,
/// as a client would.
fn keep_row(out: Option<&mut Rows>, r: &Row<'_>) {
    let Some(out) = out else {
        for i in 0..r.len() {
            std::hint::black_box(r.raw(i));
        }
        return;
    };
    out.set_width(r.len());
    for i in 0..r.len() {
        let Some(raw) = r.raw(i) else {
            out.push_null();
            continue;
        };
        let int = |n: usize| raw.get(..n).map(|b| b.iter().fold(0i64, |a, &x| a << 8 | i64::from(x)));
        match r.ty(i) {
            Some(&Type::INT2) => out.push_int(int(2).map_or(0, |v| i64::from(v as i16))),
            Some(&Type::INT4) => out.push_int(int(4).map_or(0, |v| i64::from(v as i32))),
            Some(&Type::INT8) => out.push_int(int(8).unwrap_or(0)),
            Some(&Type::FLOAT8) => out.push_float(f64::from_bits(int(8).unwrap_or(0) as u64)),
            Some(&Type::FLOAT4) => {
                out.push_float(f64::from(f32::from_bits(int(4).unwrap_or(0) as u32)))
            }
            Some(&Type::NUMERIC) => match super::numeric::decode(raw) {
                Some(v) => out.push_float(v),
                None => out.push_null(),
            },
            _ => out.push_text(raw),
        }
    }
}

/// A value bound as the type the server inferred for its parameter (`id` is `integer` in
/// sysbench's tables, so an `Int` goes as int4 there and as int8 where the server wants that).
#[derive(Debug)]
struct Bound<'a>(Literal<'a>);

impl ToSql for Bound<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Literal::Int(i) => match *ty {
                Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
                Type::NUMERIC => {
                    super::numeric::encode(i as f64, out);
                    Ok(IsNull::No)
                }
                Type::FLOAT8 => (i as f64).to_sql(ty, out),
                _ => i.to_sql(ty, out),
            },
            Literal::Float(f) => match *ty {
                Type::FLOAT4 => (f as f32).to_sql(ty, out),
                Type::NUMERIC => {
                    super::numeric::encode(f, out);
                    Ok(IsNull::No)
                }
                _ => f.to_sql(ty, out),
            },
            Literal::Str(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

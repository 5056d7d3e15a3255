//! The Insert Benchmark's operations for every SQL DBMS, in the shared statement vocabulary
//! ([`SqlInsertBenchmark`]): each operation is a [`Statement`] the DBMS renders in its
//! [`super::Dialect`] and executes through its [`SqlConnection`]. A DBMS supplies only what
//! no statement says: its table ([`Shape::InsertBenchmark`]), how its inserts tell the ids they
//! assigned ([`GeneratedIds`]), and its catalog and scan ([`InsertBenchmarkCatalog`]).

use std::sync::Mutex;

use anyhow::{Result, bail};

use super::{
    Args, Column, Cond, Ddl, Expr, Filter, GeneratedIds, Hint, Item, Projection, Query, Range,
    Rows, Shape, SqlConnection, Statement, Value,
};
use crate::dbms::insert_benchmark::{
    InsertBenchmarkConnection, POINT_QUERY_IDS, RANGE_QUERY_LIMIT, RangeQuery, RowBatch,
    SecondaryIndex, Table, TableOrigin, datetime_text,
};

/// What the Insert Benchmark asks of a SQL DBMS beyond its statements: the names of a table's
/// indexes from its catalog, and the scan step where it has one.
pub trait InsertBenchmarkCatalog: SqlConnection {
    /// Names of the secondary indexes on `table`.
    fn index_names(&mut self, table: &Table) -> Result<Vec<String>>;

    /// Whether [`InsertBenchmarkCatalog::scan`] is implemented. Default: no.
    fn can_scan(&self) -> bool {
        false
    }

    /// Reads every row of `table` through `index` (the primary key for `None`), counted by
    /// the DBMS; returns the rows read. Default: refused.
    fn scan(&mut self, table: &Table, index: Option<SecondaryIndex>) -> Result<u64> {
        let _ = index;
        bail!(
            "cannot scan {}: this DBMS's connection has no full-index scan",
            table.name
        )
    }
}

const TID: Column = Column::Named("transactionid");
const DATE: Column = Column::Named("dateandtime");
const REGISTER: Column = Column::Named("cashregisterid");
const CUSTOMER: Column = Column::Named("customerid");
const PRODUCT: Column = Column::Named("productid");
const PRICE: Column = Column::Named("price");
const DATA: Column = Column::Named("data");

/// The columns of an inserted row, in the order their values are bound.
const ROW: &[(Column, Expr)] = &[
    (DATE, Expr::Param),
    (REGISTER, Expr::Param),
    (CUSTOMER, Expr::Param),
    (PRODUCT, Expr::Param),
    (PRICE, Expr::Param),
    (DATA, Expr::Param),
];

const fn aggregate(item: &'static [Item]) -> Statement {
    Statement::Query(Query {
        what: item,
        join: None,
        filter: &[],
        order_by: None,
        limit: None,
        lock: false,
    })
}

static DELETE_RANGE: Statement = Statement::Remove {
    filter: &[Cond::Ge(TID), Cond::Lt(TID)],
};
static MIN_ID: Statement = aggregate(&[Item::Min(TID)]);
static MAX_ID: Statement = aggregate(&[Item::Max(TID)]);
static COUNT_ROWS: Statement = aggregate(&[Item::Count]);
static POINT: Statement = Statement::Select {
    what: Projection::Columns(&[TID, DATE, REGISTER, CUSTOMER, PRODUCT, PRICE, DATA]),
    filter: Filter::In(TID, POINT_QUERY_IDS),
    order_by: None,
    hint: Hint::None,
};
static MARKET: Statement = Statement::Range(Range {
    what: &[PRICE, CUSTOMER],
    from: PRICE,
    order_by: &[PRICE, CUSTOMER],
    limit: RANGE_QUERY_LIMIT as u32,
    index: "marketsegment",
});
static REGISTER_RANGE: Statement = Statement::Range(Range {
    what: &[REGISTER, PRICE, CUSTOMER],
    from: REGISTER,
    order_by: &[REGISTER, PRICE, CUSTOMER],
    limit: RANGE_QUERY_LIMIT as u32,
    index: "registersegment",
});
static PDC: Statement = Statement::Range(Range {
    what: &[PRICE, DATE, CUSTOMER],
    from: PRICE,
    order_by: &[PRICE, DATE, CUSTOMER],
    limit: RANGE_QUERY_LIMIT as u32,
    index: "pdc",
});

use SecondaryIndex::{MarketSegment as M, Pdc as P, RegisterSegment as R};
/// One index per statement, in [`SecondaryIndex::ALL`]'s order.
static SEPARATE: [Statement; 3] = [
    Statement::Ddl(Ddl::Secondary(&[M])),
    Statement::Ddl(Ddl::Secondary(&[R])),
    Statement::Ddl(Ddl::Secondary(&[P])),
];
/// The first 1, 2 or 3 indexes in one statement (the combined DDL).
static COMBINED: [Statement; 3] = [
    Statement::Ddl(Ddl::Secondary(&[M])),
    Statement::Ddl(Ddl::Secondary(&[M, R])),
    Statement::Ddl(Ddl::Secondary(&[M, R, P])),
];

/// The statements made at run time (a multi-row insert per batch size), each made once per
/// process: statements are `'static` so that connections key their prepared forms by address.
static MADE: Mutex<Vec<&'static Statement>> = Mutex::new(Vec::new());

/// `statement`, as the one `'static` copy of it.
fn intern(statement: Statement) -> &'static Statement {
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&found) = made.iter().find(|&&s| *s == statement) {
        return found;
    }
    let made_now: &'static Statement = Box::leak(Box::new(statement));
    made.push(made_now);
    made_now
}

/// The Insert Benchmark's operations over a SQL DBMS's connection `C`, in statements of the
/// shared vocabulary. Buffers are kept between operations, so that an insert allocates
/// nothing once they have grown to the batch size.
pub struct SqlInsertBenchmark<C> {
    conn: C,
    /// The values of the statement being executed.
    values: Vec<Value>,
    /// The text they refer to: the batch's `dateandtime`, then its `data`.
    text: String,
    /// The last `dateandtime` formatted (Unix seconds, text): once per second.
    date: (i64, String),
    /// This connection's multi-row inserts, by batch size.
    appends: Vec<(usize, &'static Statement)>,
    /// The rows a query returned, where they are read.
    rows: Rows,
}

impl<C: InsertBenchmarkCatalog> SqlInsertBenchmark<C> {
    /// The operations over `conn`.
    pub fn new(conn: C) -> Self {
        SqlInsertBenchmark {
            conn,
            values: Vec::new(),
            text: String::new(),
            date: (i64::MIN, String::new()),
            appends: Vec::new(),
            rows: Rows::default(),
        }
    }

    /// The multi-row insert of `rows` rows.
    fn append(&mut self, rows: usize) -> &'static Statement {
        if let Some(&(_, s)) = self.appends.iter().find(|(n, _)| *n == rows) {
            return s;
        }
        let s = intern(Statement::Append {
            values: ROW,
            rows,
            id: TID,
        });
        self.appends.push((rows, s));
        s
    }

    /// Runs `statement` (no parameters) and returns its one value, `None` for NULL.
    fn one_value(&mut self, table: &Table, statement: &'static Statement) -> Result<Option<i64>> {
        let args = Args::new(&[], "");
        self.conn.fetch(table, statement, args, &mut self.rows)?;
        Ok(self.rows.int(0, 0))
    }
}

impl<C: InsertBenchmarkCatalog> InsertBenchmarkConnection for SqlInsertBenchmark<C> {
    fn create_table(&mut self, table: &Table) -> Result<()> {
        self.conn.create_table(table, Shape::InsertBenchmark)
    }

    fn table_origin(&mut self, table: &Table) -> Result<TableOrigin> {
        self.conn.table_origin(table)
    }

    fn create_indexes(
        &mut self,
        table: &Table,
        indexes: &[SecondaryIndex],
        combined: bool,
    ) -> Result<()> {
        let position = |i: &SecondaryIndex| SecondaryIndex::ALL.iter().position(|a| a == i);
        if combined {
            if indexes.is_empty() {
                return Ok(());
            }
            if let Some(why) = self.conn.dialect().one_index_per_statement {
                bail!("{why}; use --index-ddl separate");
            }
            if indexes != &SecondaryIndex::ALL[..indexes.len()] {
                bail!("combined index DDL creates the first secondary indexes in their order");
            }
            let ddl = &COMBINED[indexes.len() - 1];
            self.conn.execute(table, ddl, Args::new(&[], ""))?;
            return Ok(());
        }
        for index in indexes {
            let ddl = &SEPARATE[position(index).expect("one of ALL")];
            self.conn.execute(table, ddl, Args::new(&[], ""))?;
        }
        Ok(())
    }

    fn index_names(&mut self, table: &Table) -> Result<Vec<String>> {
        self.conn.index_names(table)
    }

    fn insert(&mut self, table: &Table, rows: &RowBatch) -> Result<i64> {
        let n = rows.len();
        if self.date.0 != rows.dateandtime {
            self.date = (rows.dateandtime, datetime_text(rows.dateandtime));
        }
        self.text.clear();
        self.text.push_str(&self.date.1);
        self.text.push_str(&rows.data);
        let date_end = self.date.1.len() as u32;
        let date = Value::Text {
            start: 0,
            end: date_end,
        };
        self.values.clear();
        let mut start = date_end;
        for i in 0..n {
            let end = date_end + rows.data_ends[i] as u32;
            self.values.extend_from_slice(&[
                date,
                Value::Int(i64::from(rows.cashregisterid[i])),
                Value::Int(i64::from(rows.customerid[i])),
                Value::Int(i64::from(rows.productid[i])),
                Value::Float(rows.price[i]),
                Value::Text { start, end },
            ]);
            start = end;
        }
        let statement = self.append(n);
        let args = Args::new(&self.values, &self.text);
        match self.conn.dialect().generated_ids {
            GeneratedIds::Returning => {
                self.conn.fetch(table, statement, args, &mut self.rows)?;
                Ok(self.rows.int(0, 0).unwrap_or(0))
            }
            GeneratedIds::Last => {
                self.conn.execute(table, statement, args)?;
                self.conn.last_insert_id()
            }
            GeneratedIds::First => {
                self.conn.execute(table, statement, args)?;
                Ok(self.conn.last_insert_id()? + (n as i64 - 1) * self.conn.id_step())
            }
        }
    }

    fn delete_range(&mut self, table: &Table, lo: i64, hi: i64) -> Result<u64> {
        let values = [Value::Int(lo), Value::Int(hi)];
        self.conn
            .execute(table, &DELETE_RANGE, Args::new(&values, ""))
    }

    fn min_id(&mut self, table: &Table) -> Result<Option<i64>> {
        self.one_value(table, &MIN_ID)
    }

    fn max_id(&mut self, table: &Table) -> Result<Option<i64>> {
        self.one_value(table, &MAX_ID)
    }

    fn count_rows(&mut self, table: &Table) -> Result<u64> {
        Ok(self.one_value(table, &COUNT_ROWS)?.unwrap_or(0) as u64)
    }

    fn range_query(&mut self, table: &Table, query: RangeQuery, start: f64) -> Result<usize> {
        let (statement, value) = match query {
            RangeQuery::Market => (&MARKET, Value::Float(start)),
            RangeQuery::Register => (&REGISTER_RANGE, Value::Int(start.ceil() as i64)),
            RangeQuery::Pdc => (&PDC, Value::Float(start)),
        };
        let n = self
            .conn
            .execute(table, statement, Args::new(&[value], ""))?;
        Ok(n as usize)
    }

    fn point_query(&mut self, table: &Table, ids: &[i64], found: &mut Vec<i64>) -> Result<usize> {
        found.clear();
        if ids.is_empty() {
            return Ok(0);
        }
        // Fewer ids than the statement's placeholders: the first again fills the rest.
        let values: [Value; POINT_QUERY_IDS] =
            std::array::from_fn(|i| Value::Int(ids.get(i).copied().unwrap_or(ids[0])));
        self.conn
            .fetch(table, &POINT, Args::new(&values, ""), &mut self.rows)?;
        found.extend((0..self.rows.len()).filter_map(|r| self.rows.int(r, 0)));
        Ok(found.len())
    }

    fn can_scan(&self) -> bool {
        self.conn.can_scan()
    }

    fn scan(&mut self, table: &Table, index: Option<SecondaryIndex>) -> Result<u64> {
        self.conn.scan(table, index)
    }
}

#[cfg(test)]
mod tests {
    use super::super::dialect::{Dialect, dollar, question_mark};
    use super::*;

    const LITE: Dialect = Dialect {
        placeholder: question_mark,
        index_hint: Some(|index| format!(" INDEXED BY {index}")),
        for_update: false,
        tiny_int: "smallint",
        date_time: "timestamp",
        no_foreign_keys: None,
        isolation: "",
        generated_ids: GeneratedIds::Last,
        range_hints: false,
        one_index_per_statement: None,
    };
    const PG: Dialect = Dialect {
        placeholder: dollar,
        index_hint: None,
        generated_ids: GeneratedIds::Returning,
        ..LITE
    };
    const MY: Dialect = Dialect {
        index_hint: Some(|index| format!(" FORCE INDEX ({index})")),
        generated_ids: GeneratedIds::First,
        range_hints: true,
        one_index_per_statement: None,
        ..LITE
    };

    #[test]
    fn the_operations_render_the_insert_benchmarks_sql() {
        assert_eq!(
            DELETE_RANGE.sql("pi1", &PG),
            "DELETE FROM pi1 WHERE transactionid >= $1 AND transactionid < $2"
        );
        assert_eq!(
            MIN_ID.sql("pi1", &LITE),
            "SELECT min(transactionid) FROM pi1"
        );
        assert_eq!(COUNT_ROWS.sql("pi1", &LITE), "SELECT count(*) FROM pi1");
        assert_eq!(
            POINT.sql("pi1", &LITE),
            "SELECT transactionid, dateandtime, cashregisterid, customerid, productid, price, \
             data FROM pi1 WHERE transactionid IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        );
        assert_eq!(POINT.params(), POINT_QUERY_IDS);
        assert_eq!(
            REGISTER_RANGE.sql("pi1", &LITE),
            "SELECT cashregisterid, price, customerid FROM pi1 WHERE cashregisterid >= ? \
             ORDER BY cashregisterid, price, customerid LIMIT 10"
        );
        assert_eq!(
            MARKET.sql("pi2", &MY),
            "SELECT price, customerid FROM pi2 FORCE INDEX (pi2_marketsegment) \
             WHERE price >= ? ORDER BY price, customerid LIMIT 10"
        );
        assert_eq!(
            PDC.sql("pi1", &PG),
            "SELECT price, dateandtime, customerid FROM pi1 WHERE price >= $1 \
             ORDER BY price, dateandtime, customerid LIMIT 10"
        );
        assert!(!MARKET.writes() && DELETE_RANGE.writes());
    }

    #[test]
    fn inserts_tell_the_largest_id_as_the_dialect_does() {
        let two = intern(Statement::Append {
            values: ROW,
            rows: 2,
            id: TID,
        });
        let again = intern(Statement::Append {
            values: ROW,
            rows: 2,
            id: TID,
        });
        assert!(std::ptr::eq(two, again), "one statement per batch size");
        assert_eq!(two.params(), 12);
        let cols = "dateandtime, cashregisterid, customerid, productid, price, data";
        assert_eq!(
            two.sql("pi1", &LITE),
            format!("INSERT INTO pi1 ({cols}) VALUES (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)")
        );
        assert_eq!(
            two.sql("pi1", &PG),
            format!(
                "WITH ins AS (INSERT INTO pi1 ({cols}) VALUES ($1, $2, $3, $4, $5, $6), \
                 ($7, $8, $9, $10, $11, $12) RETURNING transactionid) \
                 SELECT max(transactionid) FROM ins"
            )
        );
    }

    #[test]
    fn index_ddl_is_one_statement_per_index_or_combined() {
        assert_eq!(
            SEPARATE[1].sql("pi1", &LITE),
            "CREATE INDEX pi1_registersegment ON pi1 (cashregisterid, price, customerid)"
        );
        assert_eq!(
            COMBINED[1].sql("pi1", &MY),
            "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (price, customerid), \
             ADD INDEX pi1_registersegment (cashregisterid, price, customerid)"
        );
    }
}

//! The vocabulary's general shapes, for workloads over tables of many columns and composite keys
//! (TPC-C): a [`Query`] (projections, aggregates, a join with a sibling table, conditions,
//! order, limit, a row lock), a change of several columns by expressions ([`Change`]), a delete
//! and a multi-row insert by conditions and columns, and the DDL of indexes and foreign keys.
//!
//! Tables other than the statement's own are named by their base name and rendered with the
//! statement table's set number, its trailing digits (`warehouse` beside `customer3` is
//! `warehouse3`): a statement executed on one table may read its set's siblings, and is still
//! prepared once per connection and table.

use std::fmt::Write as _;

use super::dialect::{Column, Dialect, GeneratedIds};
use crate::dbms::insert_benchmark::SecondaryIndex;

/// What a [`Query`] returns, one item per column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// The column's value.
    Col(Column),
    /// `count(*)`.
    Count,
    /// `count(DISTINCT c)`.
    CountDistinct(Column),
    /// `sum(c)`.
    Sum(Column),
    /// `max(c)`.
    Max(Column),
    /// `min(c)`.
    Min(Column),
}

/// One condition of a `WHERE`, joined by `AND`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    /// `c = ?`.
    Eq(Column),
    /// `c < ?`.
    Lt(Column),
    /// `c >= ?`.
    Ge(Column),
    /// `a = b`: a join condition, no parameter.
    Same(Column, Column),
}

impl Cond {
    fn params(self) -> usize {
        usize::from(!matches!(self, Cond::Same(..)))
    }
}

/// The value a column is set to, in an `UPDATE` or an `INSERT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expr {
    /// `?`.
    Param,
    /// The current date and time (`CURRENT_TIMESTAMP`, standard in every DBMS here).
    Now,
    /// `c + ?` (in an `UPDATE` only).
    PlusParam,
    /// `c + 1` (in an `UPDATE` only).
    PlusOne,
}

impl Expr {
    fn params(self) -> usize {
        usize::from(matches!(self, Expr::Param | Expr::PlusParam))
    }
}

/// `SELECT <what> FROM <table>[, <join>] WHERE <filter> [ORDER BY c [DESC]] [LIMIT n] [FOR
/// UPDATE]`.
#[derive(Debug, PartialEq, Eq)]
pub struct Query {
    /// The columns returned.
    pub what: &'static [Item],
    /// A sibling table joined (its base name), if any.
    pub join: Option<&'static str>,
    /// The conditions.
    pub filter: &'static [Cond],
    /// `ORDER BY` a column, descending when `true`.
    pub order_by: Option<(Column, bool)>,
    /// `LIMIT n`.
    pub limit: Option<u32>,
    /// Locks the rows read (`FOR UPDATE`) where the DBMS has row locks; SQLite has none (its
    /// writers are serialised: a writing transaction holds the database's write lock).
    pub lock: bool,
}

/// The DDL of a table's set, executed on the table it changes.
#[derive(Debug, PartialEq, Eq)]
pub enum Ddl {
    /// `CREATE INDEX <name><set> ON <table> (<columns>)`.
    Index {
        /// The index's name before the set number.
        name: &'static str,
        /// Its columns.
        columns: &'static [&'static str],
    },
    /// `ALTER TABLE <table> ADD CONSTRAINT <name><set> FOREIGN KEY (<columns>) REFERENCES
    /// <parent><set> (<parent_columns>)`.
    ForeignKey {
        /// The constraint's name before the set number.
        name: &'static str,
        /// The referencing columns.
        columns: &'static [&'static str],
        /// The referenced table's base name.
        parent: &'static str,
        /// The referenced columns.
        parent_columns: &'static [&'static str],
    },
    /// The Insert Benchmark's secondary indexes, named `<table>_<suffix>`: one `CREATE INDEX`
    /// for one index, one `ALTER TABLE <table> ADD INDEX ..., ADD INDEX ...` for several (the
    /// combined DDL, only where the DBMS's descriptor allows it).
    Secondary(&'static [SecondaryIndex]),
}

/// `SELECT <what> FROM <table> [hint] WHERE <from> >= ? ORDER BY <order_by> LIMIT <limit>`:
/// a covering range query through the index `<table>_<index>`, named by a hint where the
/// dialect's range queries take one ([`Dialect::range_hints`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Range {
    /// The columns returned.
    pub what: &'static [Column],
    /// The column compared with the one parameter.
    pub from: Column,
    /// The order, ascending.
    pub order_by: &'static [Column],
    /// `LIMIT n`.
    pub limit: u32,
    /// The index's name after `<table>_`.
    pub index: &'static str,
}

impl Range {
    /// The SQL of the query on `table`.
    pub fn sql(&self, table: &str, dialect: &Dialect) -> String {
        let names = |cols: &[Column]| cols.iter().map(|c| c.name()).collect::<Vec<_>>();
        let mut sql = format!("SELECT {} FROM {table}", names(self.what).join(", "));
        if let (true, Some(hint)) = (dialect.range_hints, dialect.index_hint) {
            sql.push_str(&hint(&format!("{table}_{}", self.index)));
        }
        let _ = write!(
            sql,
            " WHERE {} >= {} ORDER BY {} LIMIT {}",
            self.from.name(),
            (dialect.placeholder)(1),
            names(self.order_by).join(", "),
            self.limit
        );
        sql
    }
}

/// The set number of `table`: its trailing digits (`3` of `customer3`; empty for none).
pub fn set_suffix(table: &str) -> &str {
    let digits = table.bytes().rev().take_while(u8::is_ascii_digit).count();
    &table[table.len() - digits..]
}

/// `base` in the set of `table`: `warehouse3` beside `customer3`.
pub fn sibling(base: &str, table: &str) -> String {
    format!("{base}{}", set_suffix(table))
}

fn item(sql: &mut String, item: Item) {
    let _ = match item {
        Item::Col(c) => write!(sql, "{}", c.name()),
        Item::Count => write!(sql, "count(*)"),
        Item::CountDistinct(c) => write!(sql, "count(DISTINCT {})", c.name()),
        Item::Sum(c) => write!(sql, "sum({})", c.name()),
        Item::Max(c) => write!(sql, "max({})", c.name()),
        Item::Min(c) => write!(sql, "min({})", c.name()),
    };
}

/// Appends ` WHERE a = ? AND ...` (nothing for no conditions), placeholders from `*next`.
fn conds(sql: &mut String, filter: &[Cond], next: &mut usize, p: fn(usize) -> String) {
    for (i, cond) in filter.iter().enumerate() {
        sql.push_str(if i == 0 { " WHERE " } else { " AND " });
        let (c, op) = match *cond {
            Cond::Same(a, b) => {
                let _ = write!(sql, "{} = {}", a.name(), b.name());
                continue;
            }
            Cond::Eq(c) => (c, "="),
            Cond::Lt(c) => (c, "<"),
            Cond::Ge(c) => (c, ">="),
        };
        let _ = write!(sql, "{} {op} {}", c.name(), p(*next));
        *next += 1;
    }
}

impl Query {
    /// The SQL of the query on `table`.
    pub fn sql(&self, table: &str, dialect: &Dialect) -> String {
        let mut sql = String::from("SELECT ");
        for (i, &it) in self.what.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            item(&mut sql, it);
        }
        let _ = write!(sql, " FROM {table}");
        if let Some(join) = self.join {
            let _ = write!(sql, ", {}", sibling(join, table));
        }
        conds(&mut sql, self.filter, &mut 1, dialect.placeholder);
        if let Some((c, desc)) = self.order_by {
            let _ = write!(
                sql,
                " ORDER BY {}{}",
                c.name(),
                if desc { " DESC" } else { "" }
            );
        }
        if let Some(n) = self.limit {
            let _ = write!(sql, " LIMIT {n}");
        }
        if self.lock && dialect.for_update {
            sql.push_str(" FOR UPDATE");
        }
        sql
    }

    /// Parameters bound on each execution.
    pub fn params(&self) -> usize {
        self.filter.iter().map(|c| c.params()).sum()
    }
}

/// `UPDATE <table> SET c = <expr>, ... WHERE <filter>`.
pub fn change_sql(
    table: &str,
    set: &[(Column, Expr)],
    filter: &[Cond],
    dialect: &Dialect,
) -> String {
    let p = dialect.placeholder;
    let mut sql = format!("UPDATE {table} SET ");
    let mut next = 1;
    for (i, &(c, e)) in set.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        let c = c.name();
        let _ = match e {
            Expr::Param => write!(sql, "{c} = {}", p(next)),
            Expr::Now => write!(sql, "{c} = CURRENT_TIMESTAMP"),
            Expr::PlusParam => write!(sql, "{c} = {c} + {}", p(next)),
            Expr::PlusOne => write!(sql, "{c} = {c} + 1"),
        };
        next += e.params();
    }
    conds(&mut sql, filter, &mut next, p);
    sql
}

/// `DELETE FROM <table> WHERE <filter>`.
pub fn remove_sql(table: &str, filter: &[Cond], dialect: &Dialect) -> String {
    let mut sql = format!("DELETE FROM {table}");
    conds(&mut sql, filter, &mut 1, dialect.placeholder);
    sql
}

/// `INSERT INTO <table> (c, ...) VALUES (...), ...`: `rows` rows.
pub fn put_sql(table: &str, values: &[(Column, Expr)], rows: usize, dialect: &Dialect) -> String {
    let p = dialect.placeholder;
    let mut sql = format!("INSERT INTO {table} (");
    for (i, (c, _)) in values.iter().enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(c.name());
    }
    sql.push_str(") VALUES ");
    let mut next = 1;
    for r in 0..rows {
        sql.push_str(if r == 0 { "(" } else { ", (" });
        for (i, &(_, e)) in values.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            if e == Expr::Now {
                sql.push_str("CURRENT_TIMESTAMP");
            } else {
                sql.push_str(&p(next));
                next += 1;
            }
        }
        sql.push(')');
    }
    sql
}

/// A multi-row insert of rows whose `id` the DBMS assigns ([`put_sql`]), written where the
/// dialect's statements return the ids ([`GeneratedIds::Returning`]) to return the largest
/// as its one row; elsewhere the connection's last insert id tells it.
pub fn append_sql(
    table: &str,
    values: &[(Column, Expr)],
    rows: usize,
    id: Column,
    dialect: &Dialect,
) -> String {
    let insert = put_sql(table, values, rows, dialect);
    match dialect.generated_ids {
        GeneratedIds::Returning => {
            let id = id.name();
            format!("WITH ins AS ({insert} RETURNING {id}) SELECT max({id}) FROM ins")
        }
        GeneratedIds::Last | GeneratedIds::First => insert,
    }
}

/// Parameters of a change, or of one row of an insert.
pub fn exprs_params(values: &[(Column, Expr)]) -> usize {
    values.iter().map(|(_, e)| e.params()).sum()
}

/// Parameters of a filter.
pub fn conds_params(filter: &[Cond]) -> usize {
    filter.iter().map(|c| c.params()).sum()
}

impl Ddl {
    /// The SQL of the DDL on `table`.
    pub fn sql(&self, table: &str) -> String {
        let set = set_suffix(table);
        match self {
            Ddl::Index { name, columns } => {
                format!(
                    "CREATE INDEX {name}{set} ON {table} ({})",
                    columns.join(", ")
                )
            }
            Ddl::ForeignKey {
                name,
                columns,
                parent,
                parent_columns,
            } => format!(
                "ALTER TABLE {table} ADD CONSTRAINT {name}{set} FOREIGN KEY ({}) \
                 REFERENCES {parent}{set} ({})",
                columns.join(", "),
                parent_columns.join(", ")
            ),
            Ddl::Secondary([index]) => format!(
                "CREATE INDEX {} ON {table} ({})",
                index.name_on(table),
                index.columns().join(", ")
            ),
            Ddl::Secondary(indexes) => {
                let adds: Vec<String> = indexes
                    .iter()
                    .map(|i| {
                        format!(
                            "ADD INDEX {} ({})",
                            i.name_on(table),
                            i.columns().join(", ")
                        )
                    })
                    .collect();
                format!("ALTER TABLE {table} {}", adds.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::dialect::{dollar, question_mark};
    use super::*;
    use Column::Named as N;

    const PG: Dialect = Dialect {
        placeholder: dollar,
        index_hint: None,
        for_update: true,
        tiny_int: "smallint",
        date_time: "timestamp",
        no_foreign_keys: None,
        isolation: "",
        generated_ids: GeneratedIds::Last,
        range_hints: false,
        one_index_per_statement: None,
    };
    const LITE: Dialect = Dialect {
        placeholder: question_mark,
        index_hint: None,
        for_update: false,
        tiny_int: "smallint",
        date_time: "timestamp",
        no_foreign_keys: Some("none here"),
        isolation: "",
        generated_ids: GeneratedIds::Last,
        range_hints: false,
        one_index_per_statement: None,
    };

    #[test]
    fn queries_join_siblings_order_limit_and_lock() {
        let q = Query {
            what: &[Item::Col(N("c_discount")), Item::Col(N("w_tax"))],
            join: Some("warehouse"),
            filter: &[
                Cond::Eq(N("w_id")),
                Cond::Same(N("c_w_id"), N("w_id")),
                Cond::Eq(N("c_id")),
            ],
            order_by: None,
            limit: None,
            lock: false,
        };
        assert_eq!(
            q.sql("customer12", &PG),
            "SELECT c_discount, w_tax FROM customer12, warehouse12 \
             WHERE w_id = $1 AND c_w_id = w_id AND c_id = $2"
        );
        assert_eq!(q.params(), 2);
        let q = Query {
            what: &[Item::Col(N("no_o_id"))],
            join: None,
            filter: &[Cond::Eq(N("no_d_id")), Cond::Lt(N("a")), Cond::Ge(N("b"))],
            order_by: Some((N("no_o_id"), true)),
            limit: Some(1),
            lock: true,
        };
        assert_eq!(
            q.sql("new_orders1", &PG),
            "SELECT no_o_id FROM new_orders1 WHERE no_d_id = $1 AND a < $2 AND b >= $3 \
             ORDER BY no_o_id DESC LIMIT 1 FOR UPDATE"
        );
        assert_eq!(
            q.sql("new_orders1", &LITE),
            "SELECT no_o_id FROM new_orders1 WHERE no_d_id = ? AND a < ? AND b >= ? \
             ORDER BY no_o_id DESC LIMIT 1"
        );
        let agg = Query {
            what: &[
                Item::Count,
                Item::CountDistinct(N("s")),
                Item::Sum(N("x")),
                Item::Max(N("y")),
                Item::Min(N("z")),
            ],
            join: None,
            filter: &[],
            order_by: None,
            limit: None,
            lock: false,
        };
        assert_eq!(
            agg.sql("t", &LITE),
            "SELECT count(*), count(DISTINCT s), sum(x), max(y), min(z) FROM t"
        );
        assert_eq!(agg.params(), 0);
    }

    #[test]
    fn changes_removes_and_puts_number_their_parameters() {
        let set = [
            (N("a"), Expr::Param),
            (N("b"), Expr::PlusParam),
            (N("c"), Expr::PlusOne),
            (N("d"), Expr::Now),
        ];
        let filter = [Cond::Eq(N("k1")), Cond::Eq(N("k2"))];
        assert_eq!(
            change_sql("t1", &set, &filter, &PG),
            "UPDATE t1 SET a = $1, b = b + $2, c = c + 1, d = CURRENT_TIMESTAMP \
             WHERE k1 = $3 AND k2 = $4"
        );
        assert_eq!(exprs_params(&set) + conds_params(&filter), 4);
        assert_eq!(
            remove_sql("t1", &filter, &LITE),
            "DELETE FROM t1 WHERE k1 = ? AND k2 = ?"
        );
        let values = [
            (N("a"), Expr::Param),
            (N("d"), Expr::Now),
            (N("b"), Expr::Param),
        ];
        assert_eq!(
            put_sql("t2", &values, 2, &PG),
            "INSERT INTO t2 (a, d, b) VALUES ($1, CURRENT_TIMESTAMP, $2), \
             ($3, CURRENT_TIMESTAMP, $4)"
        );
        assert_eq!(exprs_params(&values), 2);
    }

    #[test]
    fn ddl_names_carry_the_set_number() {
        assert_eq!(set_suffix("order_line12"), "12");
        assert_eq!(set_suffix("item"), "");
        assert_eq!(sibling("stock", "order_line12"), "stock12");
        let idx = Ddl::Index {
            name: "idx_customer",
            columns: &["c_w_id", "c_last"],
        };
        assert_eq!(
            idx.sql("customer2"),
            "CREATE INDEX idx_customer2 ON customer2 (c_w_id, c_last)"
        );
        let fk = Ddl::ForeignKey {
            name: "fkey_district_1_",
            columns: &["d_w_id"],
            parent: "warehouse",
            parent_columns: &["w_id"],
        };
        assert_eq!(
            fk.sql("district2"),
            "ALTER TABLE district2 ADD CONSTRAINT fkey_district_1_2 FOREIGN KEY (d_w_id) \
             REFERENCES warehouse2 (w_id)"
        );
    }
}

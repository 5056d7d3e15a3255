//! The vocabulary's statements in DBMS-neutral terms ([`Statement`]) and their SQL
//! ([`Statement::sql`]) in a DBMS's [`Dialect`]: its placeholders and, where it has them, its
//! index hints. Each DBMS file declares its dialect; nothing else about SQL varies here.

use std::fmt::Write as _;

pub use super::dialect::{Column, Dialect, GeneratedIds, dollar, question_mark};
use super::keyed::{self, Cond, Ddl, Expr, Query, Range};

/// What a `SELECT` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Projection {
    /// These columns.
    Columns(&'static [Column]),
    /// Every column (`*`).
    All,
    /// `DISTINCT <column>`.
    Distinct(Column),
    /// `SUM(<column>)`: one row.
    Sum(Column),
    /// `count(*)`: one row.
    Count,
}

/// Which rows a statement reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// `id = ?`: one row by primary key.
    IdEq,
    /// `<column> IN (?, ...)` with this many values.
    In(Column, usize),
    /// `<column> BETWEEN ? AND ?`.
    Between(Column),
    /// `length(c) < 0`: true of no row, so the DBMS reads every row and returns none (a full
    /// scan that measures the read path, not the network).
    NoRow,
}

impl Filter {
    /// Number of parameters the filter binds.
    pub fn params(self) -> usize {
        match self {
            Filter::IdEq => 1,
            Filter::In(_, n) => n,
            Filter::Between(_) => 2,
            Filter::NoRow => 0,
        }
    }
}

/// The index a statement asks the DBMS to read through, where its dialect has index hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// None: the planner chooses.
    None,
    /// The secondary index on `k` (`k_N` on `sbtestN`; see [`k_index_name`]).
    K,
}

/// What an `UPDATE` sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// `k = k + 1`: changes the indexed column.
    KPlusOne,
    /// `c = ?`: changes a column no index has.
    C,
}

/// Where an inserted row's `id` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdSource {
    /// Bound with the row: `(id, k, c, pad)`.
    Given,
    /// Assigned by the DBMS (auto-increment): `(k, c, pad)`.
    Generated,
}

/// A statement of a workload, in DBMS-neutral terms: sysbench's shapes, and the general
/// ones of `keyed.rs` for tables of many columns and composite keys.
#[derive(Debug, PartialEq, Eq)]
pub enum Statement {
    /// `SELECT <what> FROM <table> [hint] WHERE <filter> [ORDER BY <column>]`.
    Select {
        /// What it returns.
        what: Projection,
        /// Rows read.
        filter: Filter,
        /// `ORDER BY` column, if any.
        order_by: Option<Column>,
        /// The index to read through, where the DBMS takes hints.
        hint: Hint,
    },
    /// `UPDATE <table> SET <set> WHERE <filter>`.
    Update {
        /// What changes.
        set: Set,
        /// Rows changed.
        filter: Filter,
    },
    /// `DELETE FROM <table> WHERE <filter>`.
    Delete {
        /// Rows deleted.
        filter: Filter,
    },
    /// `INSERT INTO <table> (...) VALUES (...)`: one row.
    Insert {
        /// Whether the row's id is bound or assigned by the DBMS.
        id: IdSource,
    },
    /// A general `SELECT` ([`Query`]).
    Query(Query),
    /// `UPDATE <table> SET c = <expr>, ... WHERE <filter>`.
    Change {
        /// The columns set.
        set: &'static [(Column, Expr)],
        /// The rows changed.
        filter: &'static [Cond],
    },
    /// `DELETE FROM <table> WHERE <filter>`.
    Remove {
        /// The rows deleted.
        filter: &'static [Cond],
    },
    /// `INSERT INTO <table> (c, ...) VALUES (...), ...`.
    Put {
        /// The columns and their values.
        values: &'static [(Column, Expr)],
        /// Rows per statement.
        rows: usize,
    },
    /// An index or a foreign key of the table ([`Ddl`]).
    Ddl(Ddl),
    /// A covering range query through a named index ([`Range`]).
    Range(Range),
    /// `INSERT INTO <table> (c, ...) VALUES (...), ...` of rows whose `id` the DBMS assigns,
    /// telling the largest id assigned as the dialect says ([`keyed::append_sql`]).
    Append {
        /// The columns and their values (`id` is not one).
        values: &'static [(Column, Expr)],
        /// Rows per statement.
        rows: usize,
        /// The generated column.
        id: Column,
    },
}

/// The secondary index on `k` of `table`: sysbench's `k_N` on `sbtestN`, `<table>_k` on the
/// other tables ibench creates (index names are per schema in PostgreSQL).
pub fn k_index_name(table: &str) -> String {
    match table.strip_prefix("sbtest") {
        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => format!("k_{n}"),
        _ => format!("{table}_k"),
    }
}

impl Statement {
    /// SQL text of the statement on `table` in `dialect`.
    pub fn sql(&self, table: &str, dialect: &Dialect) -> String {
        let p = dialect.placeholder;
        let mut sql = String::new();
        match self {
            Statement::Select {
                what,
                filter,
                order_by,
                hint,
            } => {
                sql.push_str("SELECT ");
                match what {
                    Projection::Columns(cols) => {
                        for (i, c) in cols.iter().enumerate() {
                            if i > 0 {
                                sql.push_str(", ");
                            }
                            sql.push_str(c.name());
                        }
                    }
                    Projection::All => sql.push('*'),
                    Projection::Distinct(c) => {
                        let _ = write!(sql, "DISTINCT {}", c.name());
                    }
                    Projection::Sum(c) => {
                        let _ = write!(sql, "SUM({})", c.name());
                    }
                    Projection::Count => sql.push_str("count(*)"),
                }
                let _ = write!(sql, " FROM {table}");
                if let (Hint::K, Some(render)) = (hint, dialect.index_hint) {
                    sql.push_str(&render(&k_index_name(table)));
                }
                where_clause(&mut sql, *filter, 1, p);
                if let Some(c) = order_by {
                    let _ = write!(sql, " ORDER BY {}", c.name());
                }
            }
            Statement::Update { set, filter } => {
                let _ = write!(sql, "UPDATE {table} SET ");
                let first = match set {
                    Set::KPlusOne => {
                        sql.push_str("k = k + 1");
                        1
                    }
                    Set::C => {
                        let _ = write!(sql, "c = {}", p(1));
                        2
                    }
                };
                where_clause(&mut sql, *filter, first, p);
            }
            Statement::Delete { filter } => {
                let _ = write!(sql, "DELETE FROM {table}");
                where_clause(&mut sql, *filter, 1, p);
            }
            Statement::Insert { id } => {
                let (cols, n) = match id {
                    IdSource::Given => ("id, k, c, pad", 4),
                    IdSource::Generated => ("k, c, pad", 3),
                };
                let _ = write!(sql, "INSERT INTO {table} ({cols}) VALUES (");
                for i in 1..=n {
                    if i > 1 {
                        sql.push_str(", ");
                    }
                    sql.push_str(&p(i));
                }
                sql.push(')');
            }
            Statement::Query(q) => return q.sql(table, dialect),
            Statement::Change { set, filter } => {
                return keyed::change_sql(table, set, filter, dialect);
            }
            Statement::Remove { filter } => return keyed::remove_sql(table, filter, dialect),
            Statement::Put { values, rows } => {
                return keyed::put_sql(table, values, *rows, dialect);
            }
            Statement::Ddl(d) => return d.sql(table),
            Statement::Range(r) => return r.sql(table, dialect),
            Statement::Append { values, rows, id } => {
                return keyed::append_sql(table, values, *rows, *id, dialect);
            }
        }
        sql
    }

    /// Number of parameters bound on each execution.
    pub fn params(&self) -> usize {
        match self {
            Statement::Select { filter, .. } | Statement::Delete { filter } => filter.params(),
            Statement::Update { set, filter } => {
                filter.params() + usize::from(matches!(set, Set::C))
            }
            Statement::Insert {
                id: IdSource::Given,
            } => 4,
            Statement::Insert {
                id: IdSource::Generated,
            } => 3,
            Statement::Query(q) => q.params(),
            Statement::Change { set, filter } => {
                keyed::exprs_params(set) + keyed::conds_params(filter)
            }
            Statement::Remove { filter } => keyed::conds_params(filter),
            Statement::Put { values, rows } | Statement::Append { values, rows, .. } => {
                keyed::exprs_params(values) * rows
            }
            Statement::Ddl(_) => 0,
            Statement::Range(_) => 1,
        }
    }

    /// Whether the statement changes rows.
    pub fn writes(&self) -> bool {
        !matches!(
            self,
            Statement::Select { .. } | Statement::Query(_) | Statement::Range(_)
        )
    }

    /// Whether the statement asks for an index by a hint.
    pub fn has_hint(&self) -> bool {
        matches!(self, Statement::Select { hint: Hint::K, .. })
    }

    /// A key for caching the prepared form: statements are `'static`, so their address is.
    pub fn key(&'static self) -> usize {
        self as *const Statement as usize
    }
}

/// Appends ` WHERE <filter>`, its placeholders numbered from `first`.
fn where_clause(sql: &mut String, filter: Filter, first: usize, p: fn(usize) -> String) {
    match filter {
        Filter::IdEq => {
            let _ = write!(sql, " WHERE id = {}", p(first));
        }
        Filter::In(c, n) => {
            let _ = write!(sql, " WHERE {} IN (", c.name());
            for i in 0..n {
                if i > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&p(first + i));
            }
            sql.push(')');
        }
        Filter::Between(c) => {
            let _ = write!(
                sql,
                " WHERE {} BETWEEN {} AND {}",
                c.name(),
                p(first),
                p(first + 1)
            );
        }
        Filter::NoRow => sql.push_str(" WHERE length(c) < 0"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QM: Dialect = Dialect {
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
    const FORCE: Dialect = Dialect {
        placeholder: question_mark,
        index_hint: Some(|i| format!(" FORCE INDEX ({i})")),
        for_update: true,
        tiny_int: "tinyint",
        date_time: "datetime",
        no_foreign_keys: None,
        isolation: "",
        generated_ids: GeneratedIds::Last,
        range_hints: false,
        one_index_per_statement: None,
    };

    fn select(what: Projection, filter: Filter, order_by: Option<Column>, hint: Hint) -> Statement {
        Statement::Select {
            what,
            filter,
            order_by,
            hint,
        }
    }

    #[test]
    fn point_select_renders_in_each_placeholder_style() {
        let s = select(
            Projection::Columns(&[Column::C]),
            Filter::IdEq,
            None,
            Hint::None,
        );
        assert_eq!(s.sql("sbtest3", &QM), "SELECT c FROM sbtest3 WHERE id = ?");
        assert_eq!(s.sql("sbtest3", &PG), "SELECT c FROM sbtest3 WHERE id = $1");
        assert_eq!(s.params(), 1);
        assert!(!s.writes());
        assert!(!s.has_hint());
    }

    #[test]
    fn in_lists_bind_one_value_each() {
        let s = select(
            Projection::Columns(&[Column::Id, Column::C]),
            Filter::In(Column::Id, 3),
            None,
            Hint::None,
        );
        assert_eq!(
            s.sql("sbtest1", &PG),
            "SELECT id, c FROM sbtest1 WHERE id IN ($1, $2, $3)"
        );
        assert_eq!(s.params(), 3);
        let s = Statement::Update {
            set: Set::C,
            filter: Filter::In(Column::Id, 2),
        };
        assert_eq!(
            s.sql("sbtest1", &PG),
            "UPDATE sbtest1 SET c = $1 WHERE id IN ($2, $3)"
        );
        assert_eq!(s.params(), 3);
        assert!(s.writes());
    }

    #[test]
    fn ranges_aggregates_and_order() {
        let between =
            |what, order_by| select(what, Filter::Between(Column::Id), order_by, Hint::None);
        assert_eq!(
            between(Projection::Sum(Column::K), None).sql("sbtest2", &PG),
            "SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN $1 AND $2"
        );
        assert_eq!(
            between(Projection::Columns(&[Column::C]), Some(Column::C)).sql("sbtest2", &QM),
            "SELECT c FROM sbtest2 WHERE id BETWEEN ? AND ? ORDER BY c"
        );
        assert_eq!(
            between(Projection::Distinct(Column::C), Some(Column::C)).sql("sbtest2", &QM),
            "SELECT DISTINCT c FROM sbtest2 WHERE id BETWEEN ? AND ? ORDER BY c"
        );
        assert_eq!(
            between(Projection::Count, None).sql("sbtest2", &QM),
            "SELECT count(*) FROM sbtest2 WHERE id BETWEEN ? AND ?"
        );
        assert_eq!(between(Projection::Count, None).params(), 2);
        let scan = select(Projection::All, Filter::NoRow, None, Hint::None);
        assert_eq!(
            scan.sql("sbtest4", &QM),
            "SELECT * FROM sbtest4 WHERE length(c) < 0"
        );
        assert_eq!(scan.params(), 0);
    }

    #[test]
    fn hints_only_where_the_dialect_has_them() {
        let s = select(
            Projection::Columns(&[Column::K]),
            Filter::Between(Column::K),
            None,
            Hint::K,
        );
        assert!(s.has_hint());
        assert_eq!(
            s.sql("sbtest12", &FORCE),
            "SELECT k FROM sbtest12 FORCE INDEX (k_12) WHERE k BETWEEN ? AND ?"
        );
        assert_eq!(
            s.sql("sbtest12", &PG),
            "SELECT k FROM sbtest12 WHERE k BETWEEN $1 AND $2"
        );
        assert_eq!(k_index_name("sbtest7"), "k_7");
        assert_eq!(k_index_name("sbinsert7"), "sbinsert7_k");
        assert_eq!(k_index_name("sbtest"), "sbtest_k");
        assert_eq!(k_index_name("sbtestx"), "sbtestx_k");
    }

    #[test]
    fn writes_render_their_parameters_in_order() {
        let s = Statement::Update {
            set: Set::KPlusOne,
            filter: Filter::IdEq,
        };
        assert_eq!(
            s.sql("sbtest1", &PG),
            "UPDATE sbtest1 SET k = k + 1 WHERE id = $1"
        );
        assert_eq!(s.params(), 1);
        let s = Statement::Update {
            set: Set::C,
            filter: Filter::IdEq,
        };
        assert_eq!(
            s.sql("sbtest1", &PG),
            "UPDATE sbtest1 SET c = $1 WHERE id = $2"
        );
        assert_eq!(s.params(), 2);
        let s = Statement::Delete {
            filter: Filter::IdEq,
        };
        assert_eq!(s.sql("sbtest1", &QM), "DELETE FROM sbtest1 WHERE id = ?");
        let s = Statement::Insert {
            id: IdSource::Given,
        };
        assert_eq!(
            s.sql("sbtest1", &PG),
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4)"
        );
        assert_eq!(s.params(), 4);
        let s = Statement::Insert {
            id: IdSource::Generated,
        };
        assert_eq!(
            s.sql("sbinsert1", &QM),
            "INSERT INTO sbinsert1 (k, c, pad) VALUES (?, ?, ?)"
        );
        assert_eq!(s.params(), 3);
        assert!(s.writes());
    }
}

//! Tables described in DBMS-neutral terms ([`TableDef`]: columns of neutral [`Type`]s and a
//! primary key), whose `CREATE TABLE` a DBMS renders in its [`Dialect`] and finishes with what
//! is its own (MySQL's engine and table comment, SQLite's SQL comment, PostgreSQL's `COMMENT
//! ON`): a workload with tables of its own (TPC-C) declares them once for every DBMS.

use std::fmt::Write as _;

use super::dialect::Dialect;

/// A column type, as sysbench-tpcc declares its columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// `tinyint` where the DBMS has it, else `smallint`.
    TinyInt,
    /// `smallint`.
    SmallInt,
    /// `int`.
    Int,
    /// `bigint`.
    BigInt,
    /// `decimal(p, s)`.
    Decimal(u8, u8),
    /// `varchar(n)`.
    VarChar(u16),
    /// `char(n)`.
    Char(u16),
    /// `text`.
    Text,
    /// `datetime` where the DBMS has it, else `timestamp`.
    DateTime,
}

/// One column: name, type, and whether it is `NOT NULL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    /// The column's name.
    pub name: &'static str,
    /// Its type.
    pub ty: Type,
    /// `NOT NULL`.
    pub not_null: bool,
}

/// A table: its base name (the set number is appended), columns and primary key.
#[derive(Debug, PartialEq, Eq)]
pub struct TableDef {
    /// The base name (`warehouse`).
    pub name: &'static str,
    /// The columns, in order.
    pub columns: &'static [ColumnDef],
    /// The primary key's columns (none: a table without one, as sysbench-tpcc's history).
    pub primary_key: &'static [&'static str],
}

impl TableDef {
    /// `CREATE TABLE <table> (...)` in `dialect`, without table options; `mark`, if given, is
    /// written as an SQL comment before the closing parenthesis (SQLite keeps it in the
    /// table's SQL).
    pub fn create_sql(&self, table: &str, dialect: &Dialect, mark: Option<&str>) -> String {
        let mut sql = format!("CREATE TABLE {table} (");
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                sql.push(',');
            }
            let _ = write!(sql, "\n    {} ", c.name);
            let _ = match c.ty {
                Type::TinyInt => write!(sql, "{}", dialect.tiny_int),
                Type::SmallInt => write!(sql, "smallint"),
                Type::Int => write!(sql, "int"),
                Type::BigInt => write!(sql, "bigint"),
                Type::Decimal(p, s) => write!(sql, "decimal({p},{s})"),
                Type::VarChar(n) => write!(sql, "varchar({n})"),
                Type::Char(n) => write!(sql, "char({n})"),
                Type::Text => write!(sql, "text"),
                Type::DateTime => write!(sql, "{}", dialect.date_time),
            };
            if c.not_null {
                sql.push_str(" NOT NULL");
            }
        }
        if !self.primary_key.is_empty() {
            let _ = write!(sql, ",\n    PRIMARY KEY ({})", self.primary_key.join(", "));
        }
        if let Some(mark) = mark {
            let _ = write!(sql, " /* {mark} */");
        }
        sql.push(')');
        sql
    }
}

#[cfg(test)]
mod tests {
    use super::super::dialect::{GeneratedIds, question_mark};
    use super::*;

    #[test]
    fn create_table_in_each_dialect() {
        const T: TableDef = TableDef {
            name: "orders",
            columns: &[
                ColumnDef {
                    name: "o_id",
                    ty: Type::Int,
                    not_null: true,
                },
                ColumnDef {
                    name: "o_d_id",
                    ty: Type::TinyInt,
                    not_null: true,
                },
                ColumnDef {
                    name: "o_entry_d",
                    ty: Type::DateTime,
                    not_null: false,
                },
                ColumnDef {
                    name: "o_amount",
                    ty: Type::Decimal(6, 2),
                    not_null: false,
                },
            ],
            primary_key: &["o_d_id", "o_id"],
        };
        let my = Dialect {
            placeholder: question_mark,
            index_hint: None,
            for_update: true,
            tiny_int: "tinyint",
            date_time: "datetime",
            no_foreign_keys: None,
            isolation: "",
            generated_ids: GeneratedIds::Last,
            range_hints: false,
            one_index_per_statement: None,
        };
        assert_eq!(
            T.create_sql("orders1", &my, None),
            "CREATE TABLE orders1 (\n    o_id int NOT NULL,\n    o_d_id tinyint NOT NULL,\n    \
             o_entry_d datetime,\n    o_amount decimal(6,2),\n    PRIMARY KEY (o_d_id, o_id))"
        );
        let lite = Dialect {
            tiny_int: "smallint",
            date_time: "timestamp",
            ..my
        };
        let sql = T.create_sql("orders1", &lite, Some("created by ibench"));
        assert!(sql.contains("o_d_id smallint NOT NULL"), "{sql}");
        assert!(sql.contains("o_entry_d timestamp,"), "{sql}");
        assert!(
            sql.ends_with("PRIMARY KEY (o_d_id, o_id) /* created by ibench */)"),
            "{sql}"
        );
    }
}

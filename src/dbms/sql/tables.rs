//! The statements that replace a table by an empty one of a [`Shape`], in one order for every
//! SQL DBMS (drop, create, mark, index on `k`), from the texts a DBMS declares ([`TableSql`]):
//! a connection's `create_table` forgets what it prepared on the table and runs them.

use super::Shape;
use super::dialect::Dialect;
use super::statement::k_index_name;

/// Drops the table, where it exists.
const DROP_TABLE: &str = "DROP TABLE IF EXISTS {t}";

/// What a DBMS writes to create each [`Shape`] of table (`{t}` is the table's name, `{i}` its
/// index on `k`; any other placeholder, MySQL's `{e}`, is the DBMS's to fill), one static per
/// DBMS file beside its [`Dialect`].
pub struct TableSql {
    /// [`Shape::Sbtest`]'s `CREATE TABLE`.
    pub sbtest: &'static str,
    /// [`Shape::AutoIncrement`]'s `CREATE TABLE`.
    pub auto_increment: &'static str,
    /// [`Shape::RandomPk`]'s `CREATE TABLE`.
    pub random_pk: &'static str,
    /// [`Shape::InsertBenchmark`]'s `CREATE TABLE`.
    pub insert_benchmark: &'static str,
    /// Written after a declared table's columns ([`Shape::Defined`]): MySQL's engine and
    /// comment; empty for none.
    pub defined_options: &'static str,
    /// ibench's mark as an SQL comment in a declared table's SQL, where the DBMS keeps the mark
    /// there (SQLite).
    pub defined_mark: Option<&'static str>,
    /// The statement that marks a table after its `CREATE TABLE`, where that does not
    /// (PostgreSQL's `COMMENT ON`).
    pub mark: Option<&'static str>,
    /// The index on `k` of the auto-increment and random-PK tables, created after the table;
    /// `None` where their `CREATE TABLE` declares it.
    pub k_index: Option<&'static str>,
}

impl TableSql {
    /// The statements that drop `table` where it exists and create it empty as `shape`, in
    /// order, each with what it does (for messages).
    pub fn replace(
        &self,
        table: &str,
        shape: Shape,
        dialect: &Dialect,
    ) -> Vec<(&'static str, String)> {
        let fill = |sql: &str| {
            sql.replace("{t}", table)
                .replace("{i}", &k_index_name(table))
        };
        let create = match shape {
            Shape::Sbtest => fill(self.sbtest),
            Shape::AutoIncrement => fill(self.auto_increment),
            Shape::RandomPk => fill(self.random_pk),
            Shape::InsertBenchmark => fill(self.insert_benchmark),
            Shape::Defined(def) => {
                let sql = def.create_sql(table, dialect, self.defined_mark);
                fill(&format!("{sql}{}", self.defined_options))
            }
        };
        let mut out = vec![("drop table", fill(DROP_TABLE)), ("create table", create)];
        if let Some(mark) = self.mark {
            out.push(("mark table", fill(mark)));
        }
        if let (Some(index), Shape::AutoIncrement | Shape::RandomPk) = (self.k_index, shape) {
            out.push(("create index", fill(index)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::dialect::{GeneratedIds, question_mark};
    use super::super::schema::{ColumnDef, TableDef, Type};
    use super::*;

    const DIALECT: Dialect = Dialect {
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
    static DEF: TableDef = TableDef {
        name: "item",
        columns: &[ColumnDef {
            name: "i_id",
            ty: Type::Int,
            not_null: true,
        }],
        primary_key: &["i_id"],
    };

    fn sql(tables: &TableSql, shape: Shape) -> Vec<String> {
        let statements = tables.replace("sbinsert2", shape, &DIALECT);
        statements.into_iter().map(|(_, s)| s).collect()
    }

    #[test]
    fn a_mark_and_an_index_after_the_table_where_the_dbms_wants_them() {
        let after = TableSql {
            sbtest: "CREATE TABLE {t} (id int)",
            auto_increment: "CREATE TABLE {t} (id serial)",
            random_pk: "CREATE TABLE {t} (id char(26))",
            insert_benchmark: "CREATE TABLE {t} (transactionid bigserial)",
            defined_options: "",
            defined_mark: None,
            mark: Some("COMMENT ON TABLE {t} IS 'created by ibench'"),
            k_index: Some("CREATE INDEX {i} ON {t} (k)"),
        };
        assert_eq!(
            sql(&after, Shape::AutoIncrement),
            [
                "DROP TABLE IF EXISTS sbinsert2",
                "CREATE TABLE sbinsert2 (id serial)",
                "COMMENT ON TABLE sbinsert2 IS 'created by ibench'",
                "CREATE INDEX sbinsert2_k ON sbinsert2 (k)",
            ]
        );
        assert_eq!(
            sql(&after, Shape::Sbtest).len(),
            3,
            "no index on sbtest's k yet"
        );
        assert_eq!(
            sql(&after, Shape::Defined(&DEF))[1],
            "CREATE TABLE sbinsert2 (\n    i_id int NOT NULL,\n    PRIMARY KEY (i_id))"
        );
    }

    #[test]
    fn options_and_marks_inside_the_table_where_the_dbms_keeps_them() {
        let inside = TableSql {
            sbtest: "CREATE TABLE {t} (id int) ENGINE={e}",
            auto_increment: "CREATE TABLE {t} (id int, KEY {i} (k)) ENGINE={e}",
            random_pk: "",
            insert_benchmark: "",
            defined_options: " ENGINE={e} COMMENT='created by ibench'",
            defined_mark: Some("created by ibench"),
            mark: None,
            k_index: None,
        };
        assert_eq!(
            sql(&inside, Shape::AutoIncrement),
            [
                "DROP TABLE IF EXISTS sbinsert2",
                "CREATE TABLE sbinsert2 (id int, KEY sbinsert2_k (k)) ENGINE={e}",
            ]
        );
        assert_eq!(
            sql(&inside, Shape::Defined(&DEF))[1],
            "CREATE TABLE sbinsert2 (\n    i_id int NOT NULL,\n    PRIMARY KEY (i_id) \
             /* created by ibench */) ENGINE={e} COMMENT='created by ibench'"
        );
    }
}

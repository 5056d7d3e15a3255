//! What varies between SQL dialects ([`Dialect`]: placeholders, index hints, row locks, type
//! names, foreign keys, the isolation level) and the columns statements name ([`Column`]):
//! below both the statements of `statement.rs` and the general shapes of `keyed.rs`.

/// A column of a sysbench-style table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// `id`, the primary key.
    Id,
    /// `k`, indexed by `k_N`.
    K,
    /// `c`, char(120).
    C,
    /// `pad`, char(60).
    Pad,
    /// A column of another workload's tables, by name (TPC-C's `d_next_o_id`).
    Named(&'static str),
}

impl Column {
    /// The column's name.
    pub fn name(self) -> &'static str {
        match self {
            Column::Id => "id",
            Column::K => "k",
            Column::C => "c",
            Column::Pad => "pad",
            Column::Named(name) => name,
        }
    }
}

/// How a DBMS writes what varies between SQL dialects here. Each DBMS file declares one.
pub struct Dialect {
    /// The `n`th parameter's placeholder (1-based): [`question_mark`] or [`dollar`].
    pub placeholder: fn(usize) -> String,
    /// The text after the table name that makes a `SELECT` read through index `index`
    /// (` FORCE INDEX (k_1)`, ` INDEXED BY k_1`); `None` for a DBMS without index hints, whose
    /// planner then chooses (the workload says so once per benchmark).
    pub index_hint: Option<fn(index: &str) -> String>,
    /// Whether `SELECT ... FOR UPDATE` locks rows (SQLite has no row locks: its writers are
    /// serialised, so a locking read is written without it).
    pub for_update: bool,
    /// The type of TPC-C's one-byte columns (`tinyint`, or `smallint` where there is none).
    pub tiny_int: &'static str,
    /// The type of a date and time (`datetime`, `timestamp`).
    pub date_time: &'static str,
    /// Why foreign keys cannot be added to a table after it is created (`ALTER TABLE ... ADD
    /// CONSTRAINT`), as results say it (SQLite cannot, MyRocks has none); `None`: they can.
    pub no_foreign_keys: Option<&'static str>,
    /// The isolation level transactions run at (the DBMS's default, which ibench keeps), as
    /// results record it.
    pub isolation: &'static str,
    /// How a multi-row insert of generated ids tells the largest id it assigned
    /// ([`super::Statement::Append`]).
    pub generated_ids: GeneratedIds,
    /// Whether the Insert Benchmark's covering range queries name their index by a hint
    /// (MySQL's `FORCE INDEX`; SQLite's planner takes the covering index by itself).
    pub range_hints: bool,
    /// Why the Insert Benchmark's secondary indexes cannot be created in one statement
    /// (`--index-ddl combined`, [`super::Ddl::Secondary`] of several), as the refusal says it;
    /// `None`: they can.
    pub one_index_per_statement: Option<&'static str>,
}

/// How a DBMS tells the ids a multi-row insert assigned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneratedIds {
    /// The statement returns them (`INSERT ... RETURNING`): it is written to return their
    /// largest as its one row.
    Returning,
    /// The connection's last insert id is the batch's last id (SQLite's `last_insert_rowid()`).
    Last,
    /// The connection's last insert id is the batch's first (MySQL's `LAST_INSERT_ID()`); the
    /// others follow it at the connection's auto-increment step.
    First,
}

/// `?`, MySQL's and SQLite's placeholder.
pub fn question_mark(_n: usize) -> String {
    "?".to_string()
}

/// `$n`, PostgreSQL's placeholder.
pub fn dollar(n: usize) -> String {
    format!("${n}")
}

//! Statements on either backend: parameters bound the same way, writes in one transaction,
//! rows read back as text; errors name the store.

use anyhow::Result;

use super::{Backend, Store, store_error};

/// A statement parameter, bound the same way on either backend.
#[derive(Clone, Debug)]
pub(super) enum Param {
    Text(Option<String>),
    Int(Option<i64>),
    Real(f64),
}

/// A text parameter.
pub(super) fn text(v: impl Into<String>) -> Param {
    Param::Text(Some(v.into()))
}

impl rusqlite::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Param::Text(v) => v.to_sql(),
            Param::Int(v) => v.to_sql(),
            Param::Real(v) => v.to_sql(),
        }
    }
}

impl Param {
    fn pg(&self) -> &(dyn postgres::types::ToSql + Sync) {
        match self {
            Param::Text(v) => v,
            Param::Int(v) => v,
            Param::Real(v) => v,
        }
    }
}

/// SQL is written with SQLite's `?N` placeholders; PostgreSQL's are `$N`.
pub(super) fn pg_sql(sql: &str) -> String {
    sql.replace('?', "$")
}

impl Store {
    /// Runs `statements` in one transaction.
    pub(super) fn write(&mut self, statements: &[(&str, Vec<Param>)]) -> Result<()> {
        self.write_unnamed(statements)
            .map_err(|e| store_error(&self.path, e))
    }

    fn write_unnamed(&mut self, statements: &[(&str, Vec<Param>)]) -> Result<()> {
        match &mut self.backend {
            Backend::Sqlite(conn) => {
                let tx = conn.transaction()?;
                for (sql, params) in statements {
                    tx.execute(sql, rusqlite::params_from_iter(params.iter()))?;
                }
                tx.commit()?;
            }
            Backend::Postgres(client) => {
                let client = client
                    .get_mut()
                    .map_err(|_| anyhow::anyhow!("store lock"))?;
                let mut tx = client.transaction()?;
                for (sql, params) in statements {
                    let values: Vec<_> = params.iter().map(Param::pg).collect();
                    tx.execute(pg_sql(sql).as_str(), &values)?;
                }
                tx.commit()?;
            }
        }
        Ok(())
    }

    /// Rows of `sql` as text (`NULL` as `None`); select only text columns, or cast.
    pub(super) fn rows(&self, sql: &str, params: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        self.rows_unnamed(sql, params)
            .map_err(|e| store_error(&self.path, e))
    }

    fn rows_unnamed(&self, sql: &str, params: &[&str]) -> Result<Vec<Vec<Option<String>>>> {
        match &self.backend {
            Backend::Sqlite(conn) => {
                let mut stmt = conn.prepare(sql)?;
                let n = stmt.column_count();
                let rows = stmt
                    .query_map(rusqlite::params_from_iter(params.iter()), |r| {
                        (0..n)
                            .map(|i| {
                                use rusqlite::types::ValueRef;
                                Ok(match r.get_ref(i)? {
                                    ValueRef::Null => None,
                                    ValueRef::Integer(v) => Some(v.to_string()),
                                    ValueRef::Real(v) => Some(v.to_string()),
                                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                                        Some(String::from_utf8_lossy(t).into_owned())
                                    }
                                })
                            })
                            .collect()
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(rows)
            }
            Backend::Postgres(client) => {
                let mut client = client.lock().map_err(|_| anyhow::anyhow!("store lock"))?;
                let values: Vec<&(dyn postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|p| p as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let rows = client.query(pg_sql(sql).as_str(), &values)?;
                Ok(rows
                    .iter()
                    .map(|r| {
                        (0..r.len())
                            .map(|i| r.get::<_, Option<String>>(i))
                            .collect()
                    })
                    .collect())
            }
        }
    }

    /// The documents `sql` selects (first column).
    pub(super) fn documents(&self, sql: &str, params: &[&str]) -> Result<Vec<String>> {
        Ok(self
            .rows(sql, params)?
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }
}

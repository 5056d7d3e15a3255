//! The store's cache of `ibench history` (`history_cache`): one document per series key,
//! written by the history module (change points found over a prefix of the series, so that
//! a run added to a long history does not cost a full recomputation).

use anyhow::Result;

use super::{Param, Store, text};

impl Store {
    /// The cached documents of the series `keys` (those that have one), by key.
    pub fn history_cache(
        &self,
        keys: &[String],
    ) -> Result<std::collections::HashMap<String, String>> {
        let rows = self.rows("SELECT series, document FROM history_cache", &[])?;
        let wanted: std::collections::HashSet<&str> = keys.iter().map(String::as_str).collect();
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                let key = it.next().flatten()?;
                let doc = it.next().flatten()?;
                wanted.contains(key.as_str()).then_some((key, doc))
            })
            .collect())
    }

    /// Replaces the cached documents of the series in `entries` (key, document), in one
    /// transaction.
    pub fn put_history_cache(&mut self, entries: &[(String, String)]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut statements: Vec<(&str, Vec<Param>)> = Vec::new();
        for (key, doc) in entries {
            statements.push((
                "DELETE FROM history_cache WHERE series = ?1",
                vec![text(key)],
            ));
            statements.push((
                "INSERT INTO history_cache (series, document) VALUES (?1, ?2)",
                vec![text(key), text(doc)],
            ));
        }
        self.write(&statements)
    }
}

impl Store {
    /// The runs `sql` selects (its first column the document), unreadable ones named.
    fn runs_where(
        &self,
        sql: &str,
        params: &[&str],
    ) -> Result<Vec<crate::results::model::RunResult>> {
        self.documents(sql, params)?
            .iter()
            .map(|d| {
                serde_json::from_str(d).map_err(|e| {
                    anyhow::anyhow!("a run in {} cannot be read: {e}", self.path.display())
                })
            })
            .collect()
    }

    /// Every run labelled `label`, oldest first.
    pub fn runs_labelled(&self, label: &str) -> Result<Vec<crate::results::model::RunResult>> {
        self.runs_where(
            "SELECT document FROM runs WHERE label = ?1 ORDER BY started_at, id",
            &[label],
        )
    }

    /// Every run of experiment cell `cell` (of any experiment), oldest first.
    pub fn runs_of_cell(&self, cell: &str) -> Result<Vec<crate::results::model::RunResult>> {
        self.runs_where(
            "SELECT document FROM runs WHERE cell = ?1 ORDER BY started_at, id",
            &[cell],
        )
    }

    /// The runs of experiment `name` (every cell: a versions study's runs, one per version),
    /// oldest first.
    pub fn runs_of_experiment(&self, name: &str) -> Result<Vec<crate::results::model::RunResult>> {
        self.runs_where(
            "SELECT document FROM runs WHERE experiment = ?1 ORDER BY started_at, id",
            &[name],
        )
    }

    /// Every complete run of `dbms`, oldest first.
    pub fn complete_runs_of(&self, dbms: &str) -> Result<Vec<crate::results::model::RunResult>> {
        self.runs_where(
            "SELECT document FROM runs WHERE dbms = ?1 AND status = 'complete' \
             ORDER BY started_at, id",
            &[dbms],
        )
    }
}

//! The runs in the store: listed, found by id, label or id prefix and loaded, an experiment's
//! runs for resuming it, and a run removed.

use anyhow::{Context, Result};

use super::{ExperimentRun, RunRow, Store, text};
use crate::error::UsageError;
use crate::results::model::RunResult;

impl Store {
    /// Every run, oldest first.
    pub fn list(&self) -> Result<Vec<RunRow>> {
        let rows = self.rows(
            "SELECT id, started_at, dbms || ' ' || dbms_version, label, steps, status \
             FROM runs ORDER BY started_at, id",
            &[],
        )?;
        let mut tags = self.all_tags()?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let mut it = r.into_iter();
                let mut next = || it.next().flatten();
                RunRow {
                    id: next().unwrap_or_default(),
                    started_at: next().unwrap_or_default(),
                    dbms: next().unwrap_or_default(),
                    label: next(),
                    steps: next().unwrap_or_default(),
                    status: next().unwrap_or_default(),
                    tags: Default::default(),
                }
            })
            .map(|mut row| {
                row.tags = tags.remove(&row.id).unwrap_or_default();
                row
            })
            .collect())
    }

    /// The runs `name` stands for: the run with that id, else every run with that label
    /// (oldest first), else the run with that unique id prefix. Unknown names are usage errors.
    pub fn load_all(&self, name: &str) -> Result<Vec<RunResult>> {
        let exact = self.rows("SELECT id FROM runs WHERE id = ?1", &[name])?;
        if !exact.is_empty() {
            return Ok(vec![self.load(name)?]);
        }
        let documents = self.documents(
            "SELECT document FROM runs WHERE label = ?1 ORDER BY started_at, id",
            &[name],
        )?;
        if documents.is_empty() {
            let by_prefix = self.rows(
                "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1 LIMIT 1",
                &[name],
            )?;
            if !by_prefix.is_empty() {
                return Ok(vec![self.load(name)?]);
            }
            let hint = if self.list()?.is_empty() {
                "the store is empty: run `ibench run` first".to_string()
            } else {
                "see `ibench list`".to_string()
            };
            return Err(UsageError::new(format!(
                "no run or label {name:?} in {} ({hint})",
                self.path.display()
            ))
            .into());
        }
        documents
            .iter()
            .map(|d| {
                serde_json::from_str(d).with_context(|| {
                    format!(
                        "a run labelled {name} in {} cannot be read",
                        self.path.display()
                    )
                })
            })
            .collect()
    }

    /// Every run of experiment `name`, oldest first.
    pub fn experiment_runs(&self, name: &str) -> Result<Vec<ExperimentRun>> {
        let rows = self.rows(
            "SELECT id, cell, CAST(repeat AS TEXT), status, document FROM runs \
             WHERE experiment = ?1 ORDER BY started_at, id",
            &[name],
        )?;
        rows.into_iter()
            .map(|r| {
                let mut it = r.into_iter();
                let mut next = || it.next().flatten().unwrap_or_default();
                let (id, cell, repeat, status, document) = (next(), next(), next(), next(), next());
                let fingerprint = serde_json::from_str::<serde_json::Value>(&document)
                    .ok()
                    .and_then(|d| d["experiment"]["fingerprint"].as_str().map(String::from))
                    .unwrap_or_default();
                Ok(ExperimentRun {
                    id,
                    cell,
                    repeat: repeat.parse().unwrap_or(0),
                    status,
                    fingerprint,
                })
            })
            .collect()
    }

    /// Whether run `id` is in the store.
    pub fn has_run(&self, id: &str) -> Result<bool> {
        Ok(!self
            .rows("SELECT id FROM runs WHERE id = ?1", &[id])?
            .is_empty())
    }

    /// When run `id` is stored as still `running`: its start time as stored (RFC 3339);
    /// `None` when it is not stored or has ended.
    pub fn running_since(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .rows(
                "SELECT started_at FROM runs WHERE id = ?1 AND status = 'running'",
                &[id],
            )?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }

    /// Removes run `id` and its steps.
    pub fn delete(&mut self, id: &str) -> Result<()> {
        self.write(&[
            ("DELETE FROM run_tags WHERE run_id = ?1", vec![text(id)]),
            ("DELETE FROM steps WHERE run_id = ?1", vec![text(id)]),
            ("DELETE FROM runs WHERE id = ?1", vec![text(id)]),
        ])
        .with_context(|| format!("cannot delete run {id}"))
    }

    /// The run named `name`: its id, a label (the latest run with that label), or a unique
    /// prefix of an id. Unknown or ambiguous names are usage errors.
    pub fn load(&self, name: &str) -> Result<RunResult> {
        let mut documents = self.documents("SELECT document FROM runs WHERE id = ?1", &[name])?;
        if documents.is_empty() {
            documents = self.documents(
                "SELECT document FROM runs WHERE label = ?1 ORDER BY started_at DESC LIMIT 1",
                &[name],
            )?;
        }
        if documents.is_empty() {
            documents = self.documents(
                "SELECT document FROM runs WHERE substr(id, 1, length(?1)) = ?1",
                &[name],
            )?;
            if documents.len() > 1 {
                return Err(UsageError::new(format!(
                    "run {name:?} is ambiguous: {} runs start with it",
                    documents.len()
                ))
                .into());
            }
        }
        let document = documents.into_iter().next().ok_or_else(|| {
            UsageError::new(format!(
                "no run {name:?} in {} (see `ibench list`)",
                self.path.display()
            ))
        })?;
        serde_json::from_str(&document)
            .with_context(|| format!("run {name} in {} cannot be read", self.path.display()))
    }
}

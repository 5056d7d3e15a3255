//! A run as the store writes it: its document as compact JSON, and the fields `list`, reports
//! and experiments look runs up by. Built from the run in one go, so that a caller holding
//! many runs to store (`ibench import`) keeps their text, not the runs themselves, whose
//! per-second series take several times the memory of their JSON.

use anyhow::Result;

use crate::results::model::RunResult;

/// One step's row in the store.
#[derive(Clone, Debug)]
pub(super) struct StepRow {
    pub name: String,
    pub status: String,
    pub duration_s: f64,
    pub inserts_per_s: f64,
    pub deletes_per_s: f64,
    pub queries_per_s: f64,
}

/// A run ready to be written by [`super::Store::save_all`].
#[derive(Clone, Debug)]
pub struct Record {
    pub(super) run_id: String,
    pub(super) started_at: String,
    pub(super) finished_at: Option<String>,
    pub(super) dbms: String,
    pub(super) dbms_version: String,
    pub(super) label: Option<String>,
    pub(super) status: String,
    pub(super) steps: Vec<StepRow>,
    pub(super) schema_version: i64,
    pub(super) document: String,
    /// Experiment, cell and repeat of an experiment's run.
    pub(super) experiment: Option<(String, String, i64)>,
    /// Provenance tags.
    pub(super) tags: crate::request::tags::Tags,
}

/// A status as the document spells it (`complete`, `failed`...).
fn status_text(status: impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_value(status)?
        .as_str()
        .unwrap_or_default()
        .to_string())
}

impl Record {
    /// The record of `run`.
    pub fn of(run: &RunResult) -> Result<Record> {
        let steps = run
            .steps
            .iter()
            .map(|s| {
                Ok(StepRow {
                    name: s.name.clone(),
                    status: status_text(s.status)?,
                    duration_s: s.duration_s,
                    inserts_per_s: s.inserts_per_s,
                    deletes_per_s: s.deletes_per_s,
                    queries_per_s: s.queries_per_s,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Record {
            run_id: run.run_id.clone(),
            started_at: run.started_at.to_rfc3339(),
            finished_at: run.finished_at.map(|t| t.to_rfc3339()),
            dbms: run.environment.dbms.name.clone(),
            dbms_version: run.environment.dbms.version.clone(),
            label: run.config.label.clone(),
            status: status_text(run.status)?,
            steps,
            schema_version: i64::from(run.schema_version),
            document: serde_json::to_string(run)?,
            experiment: run
                .experiment
                .as_ref()
                .map(|t| (t.name.clone(), t.cell.clone(), i64::from(t.repeat))),
            tags: run.config.tags.clone(),
        })
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }
}

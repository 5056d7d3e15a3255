//! Writing runs into the store: each run's row, its steps and its tags, in one transaction,
//! replacing an earlier version of the run ([`Store::save_all`]) or refusing to
//! ([`Store::save_new`], `ibench import` without `--replace`).

use anyhow::{Context, Result};

use super::{Param, Record, Store, text};
use crate::results::model::RunResult;

impl Store {
    /// Writes `run` (replacing an earlier version of it) in one transaction.
    pub fn save(&mut self, run: &RunResult) -> Result<()> {
        self.save_all(vec![Record::of(run)?])
    }

    /// Writes `records` (replacing earlier versions of their runs) in one transaction: all of
    /// them or, on an error, none. Their documents move into the statements uncopied.
    pub fn save_all(&mut self, records: Vec<Record>) -> Result<()> {
        self.save_records(records, true)
    }

    /// Writes `records` of runs the store does not hold, in one transaction: all of them or,
    /// on an error, none. A run stored meanwhile (by another process) is never replaced: the
    /// transaction fails on its id instead.
    pub fn save_new(&mut self, records: Vec<Record>) -> Result<()> {
        self.save_records(records, false)
    }

    fn save_records(&mut self, records: Vec<Record>, replace: bool) -> Result<()> {
        let ids: Vec<String> = records.iter().map(|r| r.run_id.clone()).collect();
        let mut statements = Vec::new();
        for r in records {
            if replace {
                statements.extend([
                    (
                        "DELETE FROM run_tags WHERE run_id = ?1",
                        vec![text(&r.run_id)],
                    ),
                    ("DELETE FROM steps WHERE run_id = ?1", vec![text(&r.run_id)]),
                    ("DELETE FROM runs WHERE id = ?1", vec![text(&r.run_id)]),
                ]);
            }
            let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
            let names = names.join(",");
            let (experiment, cell, repeat) = match r.experiment {
                Some((e, c, n)) => (Some(e), Some(c), Some(n)),
                None => (None, None, None),
            };
            statements.push((
                "INSERT INTO runs (id, started_at, finished_at, dbms, dbms_version, label, \
                     status, steps, schema_version, document, experiment, cell, repeat) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                vec![
                    text(&r.run_id),
                    text(r.started_at),
                    Param::Text(r.finished_at),
                    text(r.dbms),
                    text(r.dbms_version),
                    Param::Text(r.label),
                    text(r.status),
                    text(names),
                    Param::Int(Some(r.schema_version)),
                    text(r.document),
                    Param::Text(experiment),
                    Param::Text(cell),
                    Param::Int(repeat),
                ],
            ));
            for (k, v) in &r.tags {
                statements.push((
                    "INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)",
                    vec![text(&r.run_id), text(k), text(v)],
                ));
            }
            for (i, s) in r.steps.into_iter().enumerate() {
                statements.push((
                    "INSERT INTO steps (run_id, idx, name, status, duration_s, inserts_per_s, \
                     deletes_per_s, queries_per_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    vec![
                        text(&r.run_id),
                        Param::Int(Some(i as i64)),
                        text(s.name),
                        text(s.status),
                        Param::Real(s.duration_s),
                        Param::Real(s.inserts_per_s),
                        Param::Real(s.deletes_per_s),
                        Param::Real(s.queries_per_s),
                    ],
                ));
            }
        }
        self.write(&statements)
            .with_context(|| match ids.as_slice() {
                [id] => format!("cannot save run {id}"),
                _ => format!("cannot save runs {}", ids.join(", ")),
            })
    }
}

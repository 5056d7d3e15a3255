//! The scan step (`scan`, named in `--steps`, off by default), as the reference harness has
//! it after the load: a timed full scan of the primary key of every table, then of each
//! secondary index the tables have, then of the primary key again (now cached: the first
//! scan shows reads from storage, the last one the in-memory rate). Each scan is counted by
//! the DBMS (no row is sent); its seconds and rows/s go into the step's results.

use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result};

use super::InsertBenchmark;
use crate::dbms::SecondaryIndex;
use crate::metrics::recorder::Op;
use crate::metrics::summary::summarize;
use crate::results::model::{IndexScan, StepResult};
use crate::runner::client::ThreadSpec;
use crate::runner::{Expect, StepEnv};

/// Name of the primary key in the step's figures.
const PRIMARY: &str = "PRIMARY";

impl InsertBenchmark {
    /// The scan step: one connection scans every table through each index in turn.
    pub(super) fn scan(&self, env: &StepEnv) -> Result<StepResult> {
        // The secondary indexes the tables have now (l.x may not have run).
        let mut conn = self.dbms.connect_insert_benchmark()?;
        let first = &self.tables[0];
        let present = conn.index_names(first)?;
        drop(conn);
        let mut phases: Vec<(String, Option<SecondaryIndex>)> = vec![(PRIMARY.to_string(), None)];
        for i in SecondaryIndex::ALL {
            if present.contains(&i.name_on(&first.name)) {
                phases.push((i.suffix().to_string(), Some(i)));
            }
        }
        phases.push((format!("{PRIMARY} (again)"), None));
        let scans = Mutex::new(Vec::new());
        let (tables, dbms) = (&self.tables, &self.dbms);
        let (phases_ref, scans_ref) = (&phases, &scans);
        let thread = ThreadSpec {
            client: 0,
            role: "scanner",
            body: Box::new(move |ctx| {
                let mut conn = dbms.connect_insert_benchmark()?;
                ctx.start();
                for (name, index) in phases_ref {
                    let began = Instant::now();
                    let mut rows = 0;
                    for table in tables {
                        if ctx.should_stop() {
                            return Ok(());
                        }
                        let start = Instant::now();
                        let n = conn
                            .scan(table, *index)
                            .with_context(|| format!("scan {name} of {}", table.name))?;
                        ctx.rec.record(Op::Query, n, start, Instant::now());
                        rows += n;
                    }
                    let seconds = began.elapsed().as_secs_f64();
                    scans_ref
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(IndexScan {
                            index: name.clone(),
                            rows,
                            seconds,
                            rows_per_s: if seconds > 0.0 {
                                rows as f64 / seconds
                            } else {
                                0.0
                            },
                        });
                }
                Ok(())
            }),
        };
        let outcome = env.run_threads(vec![thread], Expect::Spinner);
        let mut result = summarize(env.name(), 1, outcome, Vec::new(), None, None);
        result.scans = scans.into_inner().unwrap_or_else(|e| e.into_inner());
        Ok(result)
    }
}

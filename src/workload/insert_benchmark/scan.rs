//! The scan step (`scan`, named in `--steps`, off by default), as the reference harness has
//! it after the load: a timed full scan of the primary key of every table, then of each
//! secondary index the tables have, then of the primary key again (now cached: the first
//! scan shows reads from storage, the last one the in-memory rate). Each scan is counted by
//! the DBMS (no row is sent); its seconds and rows/s go into the step's results.
//!
//! Scanners (`--scan-clients`, one per client by default) run at once, a connection each,
//! every one through the phases in turn at its own pace. The tables are split among them
//! (scanner i takes tables i, i + N, ...), so the rows of a phase add up to every table's
//! once; with fewer tables than scanners (one shared table) every scanner scans every table,
//! and a phase reads each table once per scanner. A phase's figures are its scanners' rows
//! summed over the time from the first one's start to the last one's end, with each
//! scanner's part beside them.

use std::sync::Mutex;
use std::time::Instant;

use crate::dbms::Table;

use anyhow::{Context, Result};

use super::InsertBenchmark;
use crate::dbms::SecondaryIndex;
use crate::metrics::recorder::Op;
use crate::metrics::summary::summarize;
use crate::results::model::{IndexScan, ScannerScan, StepResult};
use crate::runner::client::ThreadSpec;
use crate::runner::{Expect, StepEnv};

/// Name of the primary key in the step's figures.
const PRIMARY: &str = "PRIMARY";

/// One scanner's scan of one phase.
struct Part {
    phase: usize,
    scan: ScannerScan,
}

/// The tables scanner `client` of `scanners` scans: every `scanners`-th from its own, or
/// every table when there are fewer tables than scanners.
fn tables_of(tables: &[Table], client: usize, scanners: usize) -> Vec<&Table> {
    if tables.len() < scanners {
        return tables.iter().collect();
    }
    tables.iter().skip(client).step_by(scanners).collect()
}

/// A phase's figures from its scanners' parts.
fn phase_scan(index: &str, mut parts: Vec<ScannerScan>, scanners: usize) -> IndexScan {
    parts.sort_by_key(|p| p.client);
    let rows = parts.iter().map(|p| p.rows).sum();
    let first = parts
        .iter()
        .map(|p| p.start_s)
        .fold(f64::INFINITY, f64::min);
    let last = parts.iter().map(|p| p.end_s).fold(0.0, f64::max);
    let seconds = if parts.is_empty() { 0.0 } else { last - first };
    IndexScan {
        index: index.to_string(),
        rows,
        seconds,
        rows_per_s: if seconds > 0.0 {
            rows as f64 / seconds
        } else {
            0.0
        },
        scanners: if scanners > 1 { parts } else { Vec::new() },
    }
}

impl InsertBenchmark {
    /// The scan step: the scanners at once, each through its tables by each index in turn.
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
        let scanners = self.spec.scanners().max(1);
        let parts = Mutex::new(Vec::new());
        let (dbms, phases_ref, parts_ref) = (&self.dbms, &phases, &parts);
        let threads = (0..scanners)
            .map(|client| {
                let tables = tables_of(&self.tables, client, scanners);
                ThreadSpec {
                    client,
                    role: "scanner",
                    body: Box::new(move |ctx| {
                        let mut conn = dbms.connect_insert_benchmark()?;
                        let step_start = ctx.start();
                        let since = |t: Instant| t.duration_since(step_start).as_secs_f64();
                        for (phase, (name, index)) in phases_ref.iter().enumerate() {
                            let began = Instant::now();
                            let mut rows = 0;
                            for table in &tables {
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
                            let scan = ScannerScan {
                                client,
                                tables: tables.len(),
                                rows,
                                start_s: since(began),
                                end_s: since(Instant::now()),
                            };
                            parts_ref
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push(Part { phase, scan });
                        }
                        Ok(())
                    }),
                }
            })
            .collect();
        let outcome = env.run_threads(threads, Expect::Spinner);
        let mut result = summarize(env.name(), scanners, outcome, Vec::new(), None, None);
        let mut parts = parts.into_inner().unwrap_or_else(|e| e.into_inner());
        for (phase, (name, _)) in phases.iter().enumerate() {
            let mine: Vec<ScannerScan> = parts
                .iter()
                .filter(|p| p.phase == phase)
                .map(|p| p.scan.clone())
                .collect();
            if !mine.is_empty() {
                result.scans.push(phase_scan(name, mine, scanners));
            }
        }
        parts.clear();
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(n: usize) -> Vec<Table> {
        (0..n)
            .map(|id| Table {
                id,
                name: format!("pi{}", id + 1),
            })
            .collect()
    }

    #[test]
    fn tables_are_split_among_scanners_or_shared() {
        let t = tables(5);
        let names =
            |c, s| -> Vec<String> { tables_of(&t, c, s).iter().map(|t| t.name.clone()).collect() };
        assert_eq!(names(0, 2), ["pi1", "pi3", "pi5"]);
        assert_eq!(names(1, 2), ["pi2", "pi4"]);
        assert_eq!(names(0, 1).len(), 5);
        // Fewer tables than scanners: each scans them all.
        assert_eq!(names(3, 8).len(), 5);
    }

    #[test]
    fn a_phase_spans_its_scanners() {
        let part = |client, rows, start_s, end_s| ScannerScan {
            client,
            tables: 1,
            rows,
            start_s,
            end_s,
        };
        let s = phase_scan(
            "PRIMARY",
            vec![part(1, 30, 0.5, 2.0), part(0, 10, 0.0, 1.0)],
            2,
        );
        assert_eq!(s.rows, 40);
        assert_eq!(s.seconds, 2.0);
        assert_eq!(s.rows_per_s, 20.0);
        assert_eq!(s.scanners[0].client, 0);
        assert!(
            phase_scan("PRIMARY", vec![part(0, 10, 0.0, 1.0)], 1)
                .scanners
                .is_empty()
        );
    }
}

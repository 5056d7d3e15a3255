//! OLTP microbenchmarks (`../shared/docs/microbenchmarks.md`): sysbench-style tables
//! (`sbtest1` ... `sbtestN`: `id` primary key, `k` with a secondary index, `c` char(120),
//! `pad` char(60)), loaded by the `prepare` step, then each benchmark for a fixed time at each
//! client count (`point-select.c1`, `point-select.c2`, ...).
//!
//! Each query picks a table and an id uniformly (sysbench `--rand-type=uniform`), so a run is
//! comparable with `sysbench oltp_point_select` on the same tables. No SQL lives here.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rand::Rng;

use crate::dbms::{Dbms, SbtestRows, Table};
use crate::metrics::recorder::Op;
use crate::metrics::summary::{check_error_rate, summarize};
use crate::results::model::StepResult;
use crate::runner::client::{ThreadCtx, ThreadSpec};
use crate::runner::session::Session;
use crate::runner::{Expect, StepEnv};
use crate::spec::{MICRO_LOAD_BATCH, MicroBenchmark, MicroSpec};
use crate::workload::Workload;
use crate::workload::insert_benchmark::data::stream;

/// The microbenchmarks of one run.
pub struct Micro {
    spec: MicroSpec,
    dbms: Arc<dyn Dbms>,
    tables: Vec<Table>,
}

/// What a step after `prepare` runs.
#[derive(Clone, Copy, Debug)]
struct Bench {
    benchmark: MicroBenchmark,
    clients: usize,
}

impl Micro {
    /// The workload for `spec` on `dbms`; `spec` must be validated.
    pub fn new(spec: MicroSpec, dbms: Arc<dyn Dbms>) -> Self {
        let tables = spec
            .table_names()
            .into_iter()
            .enumerate()
            .map(|(id, name)| Table { id, name })
            .collect();
        Micro { spec, dbms, tables }
    }

    /// The benchmark steps, in run order (after `prepare`).
    fn benches(&self) -> Vec<Bench> {
        let mut out = Vec::new();
        for &benchmark in &self.spec.benchmarks {
            for &clients in &self.spec.clients {
                out.push(Bench { benchmark, clients });
            }
        }
        out
    }

    /// Creates the tables, loads them (one thread per table, ids 1..=rows in batches) and
    /// creates sysbench's index on `k` (`k_1` on sbtest1...), as `sysbench prepare` does.
    fn prepare(&self, env: &StepEnv) -> Result<StepResult> {
        let mut conn = self.dbms.connect()?;
        for table in &self.tables {
            conn.create_sbtest(table)
                .with_context(|| format!("create table {}", table.name))?;
        }
        drop(conn);
        let spec = &self.spec;
        let threads = self
            .tables
            .iter()
            .map(|table| ThreadSpec {
                client: table.id,
                role: "loader",
                body: Box::new(move |ctx: &mut ThreadCtx| {
                    let mut session =
                        Session::connect(&self.dbms, spec.max_tries, spec.max_reconnects)?;
                    let mut rng = stream(spec.seed, "prepare", table.id);
                    let mut rows = SbtestRows::default();
                    ctx.start();
                    let mut next_id = 1;
                    while next_id <= spec.table_rows as i64 && !ctx.should_stop() {
                        let n = (MICRO_LOAD_BATCH as i64).min(spec.table_rows as i64 - next_id + 1);
                        fill_rows(&mut rows, &mut rng, next_id, n, spec.table_rows);
                        let sent = Instant::now();
                        session
                            .run(&mut ctx.rec, Op::Insert, |c| c.insert_sbtest(table, &rows))
                            .with_context(|| format!("insert into {}", table.name))?;
                        ctx.rec.record(Op::Insert, n as u64, sent, Instant::now());
                        next_id += n;
                    }
                    if !ctx.should_stop() {
                        let index = format!("k_{}", table.id + 1);
                        session
                            .run(&mut ctx.rec, Op::Insert, |c| {
                                c.create_sbtest_index(table, &index)
                            })
                            .with_context(|| format!("create index {index}"))?;
                    }
                    ctx.hold(session.into_connection());
                    Ok(())
                }),
            })
            .collect();
        let total = spec.table_rows * spec.tables as u64;
        let outcome = env.run_threads(threads, Expect::Rows(Op::Insert, total));
        Ok(summarize(
            env.name(),
            self.tables.len(),
            outcome,
            Vec::new(),
            None,
            None,
        ))
    }

    /// Point selects as fast as possible on `clients` connections for the step's duration.
    fn point_select(&self, env: &StepEnv, clients: usize) -> Result<StepResult> {
        let spec = &self.spec;
        let duration = Duration::from_secs(spec.seconds);
        let misses = AtomicU64::new(0);
        let tables = &self.tables;
        let rows = spec.table_rows as i64;
        let threads = (0..clients)
            .map(|client| {
                let misses = &misses;
                ThreadSpec {
                    client,
                    role: "query",
                    body: Box::new(move |ctx: &mut ThreadCtx| {
                        let mut session =
                            Session::connect(&self.dbms, spec.max_tries, spec.max_reconnects)?;
                        let mut rng = stream(spec.seed, env.name(), client);
                        let start = ctx.start();
                        let deadline = start + duration;
                        let mut now = start;
                        while now < deadline && !ctx.should_stop() {
                            let table = &tables[rng.random_range(0..tables.len())];
                            let id = rng.random_range(1..=rows);
                            let sent = Instant::now();
                            let n = session
                                .run(&mut ctx.rec, Op::Query, |c| c.point_select(table, id))
                                .with_context(|| format!("point select on {}", table.name))?;
                            now = Instant::now();
                            if n != 1 {
                                misses.fetch_add(1, Ordering::Relaxed);
                            }
                            ctx.rec.record(Op::Query, n as u64, sent, now);
                        }
                        ctx.hold(session.into_connection());
                        Ok(())
                    }),
                }
            })
            .collect();
        let outcome = env.run_threads(threads, Expect::Time(duration));
        let mut result = summarize(
            env.name(),
            clients,
            outcome,
            Vec::new(),
            Some(duration),
            None,
        );
        result.point_query_misses = Some(misses.load(Ordering::Relaxed));
        Ok(result)
    }
}

/// Replaces `rows` with `n` rows from `first_id` on, as sysbench generates them: `k` uniform
/// in 1..=`table_rows`, `c` ten and `pad` five groups of eleven random digits, joined by `-`.
fn fill_rows(rows: &mut SbtestRows, rng: &mut impl Rng, first_id: i64, n: i64, table_rows: u64) {
    rows.id.clear();
    rows.k.clear();
    rows.c.clear();
    rows.pad.clear();
    for i in 0..n {
        rows.id.push(first_id + i);
        rows.k.push(rng.random_range(1..=table_rows as i32));
        rows.c.push(digit_groups(rng, 10));
        rows.pad.push(digit_groups(rng, 5));
    }
}

/// `groups` groups of eleven random digits joined by `-`.
fn digit_groups(rng: &mut impl Rng, groups: usize) -> String {
    let mut s = String::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..11 {
            s.push(char::from(b'0' + rng.random_range(0..10u8)));
        }
    }
    s
}

impl Workload for Micro {
    fn name(&self) -> &'static str {
        "micro"
    }

    fn step_names(&self) -> Vec<String> {
        self.spec.step_names()
    }

    fn check_ready(&mut self) -> Result<()> {
        if self.spec.prepare {
            return Ok(());
        }
        let mut conn = self.dbms.connect()?;
        for table in &self.tables {
            if !conn.table_exists(table)? {
                bail!(
                    "table {} does not exist: let ibench create the tables (drop --no-prepare), \
                     or run `sysbench oltp_point_select --tables={} --table-size={} prepare`",
                    table.name,
                    self.spec.tables,
                    self.spec.table_rows
                );
            }
        }
        Ok(())
    }

    fn maintenance_before(&self, index: usize) -> bool {
        // Between the load and the first benchmark, as in the Insert Benchmark.
        self.spec.prepare && index == 1
    }

    fn maintenance(&self) -> Result<Option<String>> {
        self.dbms.maintenance(&self.tables)
    }

    fn run_step(&mut self, index: usize, env: &StepEnv) -> Result<StepResult> {
        let bench_index = if self.spec.prepare {
            if index == 0 {
                return self.prepare(env);
            }
            index - 1
        } else {
            index
        };
        let Some(bench) = self.benches().get(bench_index).copied() else {
            bail!("no step {index}");
        };
        let mut result = match bench.benchmark {
            MicroBenchmark::PointSelect => self.point_select(env, bench.clients)?,
        };
        check_error_rate(&mut result, self.spec.max_error_pct);
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_look_like_sysbench_rows() {
        let mut rows = SbtestRows::default();
        let mut rng = stream(1, "prepare", 0);
        fill_rows(&mut rows, &mut rng, 11, 5, 100);
        assert_eq!(rows.id, vec![11, 12, 13, 14, 15]);
        assert!(rows.k.iter().all(|k| (1..=100).contains(k)));
        for (c, pad) in rows.c.iter().zip(&rows.pad) {
            assert_eq!(c.len(), 119);
            assert_eq!(pad.len(), 59);
            assert!(c.split('-').all(|g| g.len() == 11));
            assert!(c.chars().all(|ch| ch.is_ascii_digit() || ch == '-'));
        }
        // The same seed gives the same rows.
        let mut again = SbtestRows::default();
        fill_rows(&mut again, &mut stream(1, "prepare", 0), 11, 5, 100);
        assert_eq!(rows, again);
    }
}

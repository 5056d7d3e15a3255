//! OLTP microbenchmarks (`../shared/docs/microbenchmarks.md`): sysbench-style tables
//! (`sbtest1` ... `sbtestN`: `id` primary key, `k` with a secondary index, `c` char(120),
//! `pad` char(60)), loaded by the `prepare` step, then each benchmark for a fixed time at each
//! client count (`point-select.c1`, `point-select.c2`, ...).
//!
//! A benchmark is one small file: its statements in the DBMS-neutral vocabulary of
//! [`crate::dbms::micro::Statement`] and a [`Generator`] that picks each operation's table and
//! parameters; it is listed once in [`registry!`]. The generic client loop runs it (pacing,
//! timing, retries); no SQL lives here.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::dbms::literal::Literal;
use crate::dbms::micro::{MicroConnection, SbtestRows, Statement};
use crate::dbms::{Dbms, Table};
use crate::error::UsageError;
use crate::metrics::recorder::{Op, Recorder};
use crate::metrics::summary::{check_error_rate, summarize};
use crate::results::model::StepResult;
use crate::runner::client::{ThreadCtx, ThreadSpec};
use crate::runner::client_loop::{self, Driver, Pacing};
use crate::runner::session::Session;
use crate::runner::{Expect, StepEnv};
use crate::spec::{MICRO_LOAD_BATCH, MicroSpec};
use crate::workload::Workload;
use crate::workload::insert_benchmark::data::stream;

/// The registry: declares each benchmark's module and lists its entry, in `--list` order.
macro_rules! registry {
    ($($module:ident :: $benchmark:ident),* $(,)?) => {
        $(mod $module;)*
        /// Every microbenchmark.
        pub static BENCHMARKS: &[&Benchmark] = &[$(&$module::$benchmark),*];
    };
}

registry! {
    point_select::POINT_SELECT,
}

/// One microbenchmark.
pub struct Benchmark {
    /// Name in `--benchmarks`, step names and results (`point-select`).
    pub name: &'static str,
    /// One line for `--list`.
    pub about: &'static str,
    /// The kind of op each operation is recorded as.
    pub op: Op,
    /// A new generator for one client.
    pub generator: fn() -> Box<dyn Generator>,
}

/// The benchmark called `name`.
pub fn find(name: &str) -> Option<&'static Benchmark> {
    BENCHMARKS.iter().copied().find(|b| b.name == name)
}

/// Every benchmark name, for messages.
pub fn names() -> Vec<&'static str> {
    BENCHMARKS.iter().map(|b| b.name).collect()
}

/// The tables a benchmark runs on.
#[derive(Clone, Copy, Debug)]
pub struct Tables {
    /// Number of tables (`sbtest1` ... `sbtestN`).
    pub count: usize,
    /// Rows per table (ids 1..=rows).
    pub rows: u64,
}

/// A parameter value of a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer (`id`, `k`).
    Int(i64),
    /// Text (`c`, `pad`).
    Text(String),
}

/// One operation of a client: its statements, sent in order. Buffers are reused.
#[derive(Debug, Default)]
pub struct Operation {
    calls: Vec<Call>,
    values: Vec<Value>,
}

#[derive(Debug)]
struct Call {
    statement: &'static Statement,
    table: usize,
    values: Range<usize>,
    expect: Option<u64>,
}

impl Operation {
    /// Adds `statement` on table `table` (0-based) with `values`; `expect` is the number of
    /// rows it must read or change, when known (a difference counts as a miss).
    pub fn push(
        &mut self,
        statement: &'static Statement,
        table: usize,
        values: &[Value],
        expect: Option<u64>,
    ) {
        let start = self.values.len();
        self.values.extend_from_slice(values);
        self.calls.push(Call {
            statement,
            table,
            values: start..self.values.len(),
            expect,
        });
    }

    fn clear(&mut self) {
        self.calls.clear();
        self.values.clear();
    }
}

/// Chooses each operation of one client of a microbenchmark.
pub trait Generator: Send {
    /// Writes the next operation into `op` (empty when called), drawing from `rng`.
    fn next(&mut self, rng: &mut Pcg64Mcg, tables: &Tables, op: &mut Operation);
}

/// The microbenchmarks of one run.
pub struct Micro {
    spec: MicroSpec,
    dbms: Arc<dyn Dbms>,
    tables: Vec<Table>,
    benchmarks: Vec<&'static Benchmark>,
    /// Replace tables of the benchmark's names that ibench did not create.
    drop_existing: bool,
}

/// What a step after `prepare` runs.
#[derive(Clone, Copy)]
struct Bench {
    benchmark: &'static Benchmark,
    clients: usize,
}

impl Micro {
    /// The workload for `spec` on `dbms`; `spec` must be validated. An unknown benchmark name
    /// is a usage error. Tables of its names that ibench did not create (sysbench's) are
    /// replaced only with `drop_existing`.
    pub fn new(spec: MicroSpec, dbms: Arc<dyn Dbms>, drop_existing: bool) -> Result<Self> {
        let benchmarks = spec
            .benchmarks
            .iter()
            .map(|name| {
                find(name).ok_or_else(|| {
                    UsageError::new(format!(
                        "unknown benchmark {name:?}: expected one of {}",
                        names().join(", ")
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tables = spec
            .table_names()
            .into_iter()
            .enumerate()
            .map(|(id, name)| Table { id, name })
            .collect();
        Ok(Micro {
            spec,
            dbms,
            tables,
            benchmarks,
            drop_existing,
        })
    }

    /// Refuses when a table `prepare` would replace was not created by ibench (sysbench's).
    fn check_replaceable(&self, conn: &mut dyn MicroConnection) -> Result<()> {
        let location = self.dbms.location();
        let also = "give --no-prepare to use it as it is (sysbench's tables)";
        super::check_replaceable(&self.tables, self.drop_existing, &location, also, |t| {
            conn.table_origin(t)
        })
    }

    /// The benchmark steps, in run order (after `prepare`).
    fn benches(&self) -> Vec<Bench> {
        let mut out = Vec::new();
        for &benchmark in &self.benchmarks {
            for &clients in &self.spec.clients {
                out.push(Bench { benchmark, clients });
            }
        }
        out
    }

    /// A thread running `driver` on a new connection at `pacing`.
    fn thread<'s, D>(
        &'s self,
        client: usize,
        role: &'static str,
        mut driver: D,
        pacing: Pacing,
    ) -> ThreadSpec<'s>
    where
        D: Driver<Conn = dyn MicroConnection> + Send + 's,
    {
        ThreadSpec {
            client,
            role,
            body: Box::new(move |ctx: &mut ThreadCtx| {
                let connect = || self.dbms.connect_micro();
                let session =
                    Session::connect(&connect, self.spec.max_tries, self.spec.max_reconnects)?;
                client_loop::run(ctx, session, &mut driver, pacing)
            }),
        }
    }

    /// Creates the tables, loads them (one thread per table, ids 1..=rows in batches) and
    /// creates sysbench's index on `k` (`k_1` on sbtest1...), as `sysbench prepare` does.
    fn prepare(&self, env: &StepEnv) -> Result<StepResult> {
        let mut conn = self.dbms.connect_micro()?;
        self.check_replaceable(conn.as_mut())?;
        for table in &self.tables {
            conn.create_sbtest(table)
                .with_context(|| format!("create table {}", table.name))?;
        }
        drop(conn);
        let spec = &self.spec;
        let threads = self
            .tables
            .iter()
            .map(|table| {
                let loader = Loader {
                    table,
                    rng: stream(spec.seed, "prepare", table.id),
                    rows: SbtestRows::default(),
                    next_id: 1,
                    table_rows: spec.table_rows,
                };
                self.thread(table.id, "loader", loader, Pacing::Closed(None))
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

    /// `bench` as fast as possible on its clients for the step's duration.
    fn benchmark(&self, env: &StepEnv, bench: Bench) -> Result<StepResult> {
        let duration = Duration::from_secs(self.spec.seconds);
        let misses = AtomicU64::new(0);
        let tables = Tables {
            count: self.tables.len(),
            rows: self.spec.table_rows,
        };
        let threads = (0..bench.clients)
            .map(|client| {
                let driver = Client {
                    benchmark: bench.benchmark,
                    generator: (bench.benchmark.generator)(),
                    rng: stream(self.spec.seed, env.name(), client),
                    tables,
                    table_list: &self.tables,
                    op: Operation::default(),
                    misses: &misses,
                };
                self.thread(client, "query", driver, Pacing::Closed(Some(duration)))
            })
            .collect();
        let outcome = env.run_threads(threads, Expect::Time(duration));
        let mut result = summarize(
            env.name(),
            bench.clients,
            outcome,
            Vec::new(),
            Some(duration),
            None,
        );
        result.point_query_misses = Some(misses.load(Ordering::Relaxed));
        Ok(result)
    }
}

/// One client of a benchmark: its generator's operations, statement by statement.
struct Client<'s> {
    benchmark: &'static Benchmark,
    generator: Box<dyn Generator>,
    rng: Pcg64Mcg,
    tables: Tables,
    table_list: &'s [Table],
    op: Operation,
    /// Statements that read or changed another number of rows than expected.
    misses: &'s AtomicU64,
}

impl Driver for Client<'_> {
    type Conn = dyn MicroConnection;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        self.op.clear();
        self.generator
            .next(&mut self.rng, &self.tables, &mut self.op);
        Ok(Some(self.benchmark.op))
    }

    fn send(
        &mut self,
        session: &mut Session<'_, dyn MicroConnection>,
        rec: &mut Recorder,
    ) -> Result<u64> {
        let mut rows = 0;
        let mut params: Vec<Literal<'_>> = Vec::with_capacity(8);
        for call in &self.op.calls {
            let table = &self.table_list[call.table];
            params.clear();
            params.extend(self.op.values[call.values.clone()].iter().map(|v| match v {
                Value::Int(i) => Literal::Int(*i),
                Value::Text(t) => Literal::Str(t),
            }));
            let n = session
                .run(rec, self.benchmark.op, |c| {
                    c.execute(table, call.statement, &params)
                })
                .with_context(|| format!("{} on {}", self.benchmark.name, table.name))?;
            if call.expect.is_some_and(|e| e != n) {
                self.misses.fetch_add(1, Ordering::Relaxed);
            }
            rows += n;
        }
        Ok(rows)
    }
}

/// Loads one table in batches, then creates its index on `k`.
struct Loader<'s> {
    table: &'s Table,
    rng: Pcg64Mcg,
    rows: SbtestRows,
    next_id: i64,
    table_rows: u64,
}

impl Driver for Loader<'_> {
    type Conn = dyn MicroConnection;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        let left = self.table_rows as i64 - self.next_id + 1;
        if left <= 0 {
            return Ok(None);
        }
        let n = (MICRO_LOAD_BATCH as i64).min(left);
        fill_rows(
            &mut self.rows,
            &mut self.rng,
            self.next_id,
            n,
            self.table_rows,
        );
        Ok(Some(Op::Insert))
    }

    fn send(
        &mut self,
        session: &mut Session<'_, dyn MicroConnection>,
        rec: &mut Recorder,
    ) -> Result<u64> {
        let (table, rows) = (self.table, &self.rows);
        session
            .run(rec, Op::Insert, |c| c.insert_sbtest(table, rows))
            .with_context(|| format!("insert into {}", table.name))?;
        self.next_id += rows.len() as i64;
        Ok(rows.len() as u64)
    }

    fn after(
        &mut self,
        session: &mut Session<'_, dyn MicroConnection>,
        rec: &mut Recorder,
    ) -> Result<()> {
        let table = self.table;
        let index = format!("k_{}", table.id + 1);
        session
            .run(rec, Op::Insert, |c| c.create_sbtest_index(table, &index))
            .with_context(|| format!("create index {index}"))
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
            let mut conn = self.dbms.connect_micro()?;
            return self.check_replaceable(conn.as_mut());
        }
        let mut conn = self.dbms.connect_micro()?;
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

    fn maintenance(&self, change_settings: bool) -> Result<Option<String>> {
        self.dbms.maintenance(&self.tables, change_settings)
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
        let mut result = self.benchmark(env, bench)?;
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

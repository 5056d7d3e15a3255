//! A microbenchmark's client and the `prepare` step's loader, as drivers of the client loop.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use rand_pcg::Pcg64Mcg;

use super::data::fill_rows;
use super::{Benchmark, Call, Generator, Operation};
use crate::dbms::Table;
use crate::dbms::sql::{Args, SbtestRows, SqlConnection};
use crate::metrics::recorder::{Op, Recorder};
use crate::request::MICRO_LOAD_BATCH;
use crate::runner::client::ThreadCtx;
use crate::runner::client_loop::Driver;
use crate::runner::session::Session;

/// Every operation of a microbenchmark is recorded as one `query` op: a statement, or a
/// transaction of several.
pub const MICRO_OP: Op = Op::Query;

/// One client of a benchmark: its generator's operations, statement by statement or as one
/// transaction.
pub struct Client<'s> {
    /// The benchmark.
    pub benchmark: &'static Benchmark,
    /// Its generator for this client.
    pub generator: Box<dyn Generator>,
    /// This client's random stream.
    pub rng: Pcg64Mcg,
    /// The tables of the benchmark's shape, by the generator's table numbers.
    pub tables: &'s [Table],
    /// The operation being sent (buffers reused).
    pub op: Operation,
    /// Statements that returned or changed another number of rows than expected.
    pub misses: &'s AtomicU64,
}

/// Runs `calls` of `op` in order on `conn`; returns the rows they returned or changed and how
/// many differed from what was expected.
fn run_calls(
    conn: &mut dyn SqlConnection,
    tables: &[Table],
    op: &Operation,
    calls: &[Call],
) -> Result<(u64, u64)> {
    let (mut rows, mut misses) = (0, 0);
    for call in calls {
        let table = &tables[call.table];
        let args = Args::new(&op.values[call.values.clone()], &op.text);
        let n = conn.execute(table, call.statement, args)?;
        if call.expect.is_some_and(|e| e != n) {
            misses += 1;
        }
        rows += n;
    }
    Ok((rows, misses))
}

impl Driver for Client<'_> {
    type Conn = dyn SqlConnection;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        self.op.clear();
        self.generator.next(&mut self.rng, &mut self.op);
        Ok(Some(MICRO_OP))
    }

    fn send(
        &mut self,
        session: &mut Session<'_, dyn SqlConnection>,
        rec: &mut Recorder,
    ) -> Result<u64> {
        let (tables, op, name) = (self.tables, &self.op, self.benchmark.name);
        let (rows, misses) = if self.benchmark.transaction {
            session
                .transaction(rec, MICRO_OP, self.benchmark.writes, |c| {
                    run_calls(c, tables, op, &op.calls)
                })
                .with_context(|| format!("{name}: transaction"))?
        } else {
            let (mut rows, mut misses) = (0, 0);
            for i in 0..op.calls.len() {
                let calls = &op.calls[i..=i];
                let (r, m) = session
                    .run(rec, MICRO_OP, |c| run_calls(c, tables, op, calls))
                    .with_context(|| format!("{name} on {}", tables[calls[0].table].name))?;
                rows += r;
                misses += m;
            }
            (rows, misses)
        };
        if misses > 0 {
            self.misses.fetch_add(misses, Ordering::Relaxed);
        }
        Ok(op.rows.unwrap_or(rows))
    }
}

/// Loads one table in batches, then creates its index on `k`.
pub struct Loader<'s> {
    /// The table.
    pub table: &'s Table,
    /// The loader's random stream.
    pub rng: Pcg64Mcg,
    /// The batch (buffers reused).
    pub rows: SbtestRows,
    /// The next id to insert.
    pub next_id: i64,
    /// Rows to load.
    pub table_rows: u64,
}

impl Driver for Loader<'_> {
    type Conn = dyn SqlConnection;

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
        session: &mut Session<'_, dyn SqlConnection>,
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
        session: &mut Session<'_, dyn SqlConnection>,
        rec: &mut Recorder,
    ) -> Result<()> {
        let table = self.table;
        let index = crate::dbms::sql::k_index_name(&table.name);
        session
            .run(rec, Op::Insert, |c| c.create_sbtest_index(table, &index))
            .with_context(|| format!("create index {index}"))
    }
}

/// Loads `rows` rows with random keys into one of insert-random-pk's tables (`prepare` with
/// `--random-pk-rows`), [`MICRO_LOAD_BATCH`] rows per transaction of one-row inserts.
pub struct RandomPkLoader<'s> {
    /// The tables of the shape; the loader writes into `table` of them.
    pub tables: &'s [Table],
    /// The table, 0-based in `tables`.
    pub table: usize,
    /// Its keys' `k` range (the sysbench tables' rows).
    pub scope: super::Scope,
    /// The loader's random stream.
    pub rng: Pcg64Mcg,
    /// The batch being sent (buffers reused).
    pub op: Operation,
    /// Rows still to load.
    pub left: u64,
}

impl Driver for RandomPkLoader<'_> {
    type Conn = dyn SqlConnection;

    fn next(&mut self, _ctx: &ThreadCtx) -> Result<Option<Op>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.op.clear();
        let n = (MICRO_LOAD_BATCH as u64).min(self.left);
        for _ in 0..n {
            super::insert_random_pk::push_row(&self.scope, &mut self.rng, &mut self.op, self.table);
        }
        Ok(Some(Op::Insert))
    }

    fn send(
        &mut self,
        session: &mut Session<'_, dyn SqlConnection>,
        rec: &mut Recorder,
    ) -> Result<u64> {
        let (tables, op) = (self.tables, &self.op);
        let (rows, _) = session
            .transaction(rec, Op::Insert, true, |c| {
                run_calls(c, tables, op, &op.calls)
            })
            .with_context(|| format!("insert into {}", tables[self.table].name))?;
        self.left -= op.calls.len() as u64;
        Ok(rows)
    }
}

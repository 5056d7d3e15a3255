//! The Insert Benchmark: steps l.i0, l.x, l.i1, l.i2, qrN, qpN on a queue table (inserts at
//! the head, deletes of the oldest rows at the tail). Spec: `../shared/docs/insert-benchmark.md`.
//!
//! `schema.rs` names the tables, `data.rs` generates seeded values, `steps.rs` holds the client
//! threads' loops; this file sets each step up (select-min, table state) and assembles results.

pub mod data;
mod scan;
pub mod schema;
pub mod steps;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::dbms::{Dbms, InsertBenchmarkConnection, Table};
use crate::error::UsageError;
use crate::metrics::recorder::{Op, Recorder};
use crate::metrics::summary::{SlaTarget, check_error_rate, summarize};
use crate::request::{InsertBenchmarkSpec, Step};
use crate::results::model::{IndexBuild, QueueCheck, SelectMin, StepResult};
use crate::runner::Workload;
use crate::runner::client::ThreadSpec;
use crate::runner::{Expect, StepEnv};
use crate::workload::ForeignTables;

/// Where a table's queue stands during a step; shared only by the threads of that table.
#[derive(Debug, Default)]
pub struct TableState {
    /// Largest committed `transactionid`.
    head: AtomicI64,
    /// Next id to delete: ids below it are deleted or being deleted.
    cursor: AtomicI64,
    /// Rows inserted in this step.
    inserted: AtomicU64,
    /// Rows claimed for deletion in this step (never more than `inserted`).
    delete_claimed: AtomicU64,
    /// Inserting threads still running.
    inserters_running: AtomicUsize,
    /// Deleting threads, woken after each insert.
    deleters: Mutex<Vec<Thread>>,
}

impl TableState {
    fn new(min_id: i64, max_id: i64, inserters: usize) -> Self {
        TableState {
            head: AtomicI64::new(max_id),
            cursor: AtomicI64::new(min_id),
            inserters_running: AtomicUsize::new(inserters),
            ..Default::default()
        }
    }

    /// Lowest and highest id a query may ask for without racing a delete: `guard` ids above
    /// the delete cursor, up to the last committed id.
    pub fn live_ids(&self, guard: i64) -> (i64, i64) {
        (
            self.cursor.load(Ordering::Acquire) + guard,
            self.head.load(Ordering::Acquire),
        )
    }
}

/// What a step knows before its threads start.
struct StepStart {
    /// Queue state per table.
    states: Vec<Arc<TableState>>,
    /// One recorder per table holding its timed select-min.
    getmin: Vec<Recorder>,
    /// Select-min times, when timed.
    select_min: Option<SelectMin>,
}

/// The Insert Benchmark on one target.
pub struct InsertBenchmark {
    spec: InsertBenchmarkSpec,
    dbms: Arc<dyn Dbms>,
    /// The tables this process's clients work on (all of them unless a share is set).
    tables: Vec<Table>,
    /// Every table of the run (the maintenance pause covers them all).
    all_tables: Vec<Table>,
    /// The client numbers this process runs: all of them, or its share of a group's
    /// ([`InsertBenchmark::with_share`]).
    clients: Vec<usize>,
    /// Rows in all tables when the current step started (from its min/max ids).
    rows_at_start: AtomicU64,
    /// What the user allows on tables of the benchmark's names that ibench did not create.
    foreign: ForeignTables,
}

impl InsertBenchmark {
    /// The workload for `spec` on `dbms`; `spec` must be validated. Tables of its names that
    /// ibench did not create are replaced or written into only as `foreign` allows.
    pub fn new(spec: InsertBenchmarkSpec, dbms: Arc<dyn Dbms>, foreign: ForeignTables) -> Self {
        let tables = schema::tables(&spec);
        InsertBenchmark {
            clients: (0..spec.clients).collect(),
            spec,
            dbms,
            all_tables: tables.clone(),
            tables,
            rows_at_start: AtomicU64::new(0),
            foreign,
        }
    }

    /// Runs only clients `share` (client numbers of the whole run) and works only on their
    /// tables: this host's part of a group run across hosts. With one table per client the
    /// shares of different hosts never touch the same table, so each table's queue stays
    /// one process's, as in a single-host run.
    pub fn with_share(mut self, share: std::ops::Range<usize>) -> Self {
        self.clients = share.filter(|&c| c < self.spec.clients).collect();
        let mine: std::collections::BTreeSet<usize> = self
            .clients
            .iter()
            .map(|&c| schema::table_of(&self.spec, c))
            .collect();
        self.tables = self
            .all_tables
            .iter()
            .filter(|t| mine.contains(&t.id))
            .cloned()
            .collect();
        self
    }

    /// Clients of this process.
    fn share(&self) -> usize {
        self.clients.len()
    }

    /// Refuses when a table l.i0 would replace was not created by ibench.
    fn check_replaceable(&self, conn: &mut dyn InsertBenchmarkConnection) -> Result<()> {
        let location = self.dbms.location();
        let also = "choose another --table-prefix";
        super::check_replaceable(&self.tables, self.foreign, &location, also, |t| {
            conn.table_origin(t)
        })
    }

    /// Refuses when a step of `steps` before any l.i0 would write into a table ibench did not
    /// create (rows, indexes): l.x, l.i1, l.i2 and the query steps' writers on tables of the
    /// benchmark's names that another program made.
    fn check_writable(
        &self,
        conn: &mut dyn InsertBenchmarkConnection,
        steps: &[Step],
    ) -> Result<()> {
        let first_write = steps
            .iter()
            .take_while(|s| **s != Step::LoadInitial)
            .find_map(|s| s.writes_into().map(|w| (s, w)));
        let Some((step, what)) = first_write else {
            return Ok(());
        };
        let location = self.dbms.location();
        let action = format!("step {step} would {what} it");
        super::check_writable(&self.tables, self.foreign, &location, &action, |t| {
            conn.table_origin(t)
        })
    }

    /// Refuses to start `steps` (which do not begin with l.i0) on `table` when it does not
    /// exist, lacks the indexes the qrN steps need, or already has an index the first step,
    /// l.x, would create (a run that failed in l.x may have left it).
    fn check_table(
        &self,
        conn: &mut dyn InsertBenchmarkConnection,
        table: &Table,
        steps: &[Step],
    ) -> Result<()> {
        if !conn.table_exists(table)? {
            return Err(UsageError::new(format!(
                "table {} does not exist in {}: the run starts with step {}, so the database \
                 must already be loaded (run l.i0 first)",
                table.name,
                self.dbms.location(),
                steps[0]
            ))
            .into());
        }
        let indexes = conn.index_names(table)?;
        let needs_indexes = steps.iter().any(|s| matches!(s, Step::QueryRange(_)))
            && !steps.contains(&Step::CreateIndexes);
        for index in self.spec.indexes() {
            let name = index.name_on(&table.name);
            if needs_indexes && !indexes.contains(&name) {
                bail!(UsageError::new(format!(
                    "index {name} does not exist: qrN steps need the secondary indexes (run l.x \
                     first, or lower --secondary-indexes)"
                )));
            }
            if steps[0] == Step::CreateIndexes && indexes.contains(&name) {
                bail!(UsageError::new(format!(
                    "index {name} already exists in {}: the run starts with step l.x, which \
                     creates it (drop it first)",
                    self.dbms.location()
                )));
            }
        }
        Ok(())
    }

    /// Times `select min(transactionid)` per table (reported as `getmin`) when `timed`, reads
    /// the max, and returns a fresh state per table.
    fn table_states(&self, timed: bool, inserters_per_table: usize) -> Result<StepStart> {
        let mut conn = self.dbms.connect_insert_benchmark()?;
        let mut states = Vec::new();
        let mut recorders = Vec::new();
        let mut per_table = BTreeMap::new();
        let mut rows_at_start = 0;
        // The engine's perf context around each select-min (MyRocks: deleted keys skipped).
        let mut perf_context: BTreeMap<String, f64> = BTreeMap::new();
        for table in &self.tables {
            let perf_before = if timed {
                self.dbms.perf_context().unwrap_or_default()
            } else {
                BTreeMap::new()
            };
            let start = Instant::now();
            let min = conn
                .min_id(table)
                .with_context(|| format!("select min(transactionid) from {}", table.name))?;
            let end = Instant::now();
            if !perf_before.is_empty() {
                for (k, after) in self.dbms.perf_context().unwrap_or_default() {
                    if let Some(before) = perf_before.get(&k) {
                        *perf_context.entry(k).or_default() += after - before;
                    }
                }
            }
            if timed {
                // The table's first client owns its select-min.
                let mut rec = Recorder::new(schema::owner(&self.spec, table.id));
                rec.record(Op::GetMin, 0, start, end);
                recorders.push(rec);
                per_table.insert(table.name.clone(), (end - start).as_micros() as u64);
            }
            let max = conn.max_id(table)?;
            let (min, max) = match (min, max) {
                (Some(min), Some(max)) => (min, max),
                _ => (1, 0),
            };
            rows_at_start += (max - min + 1).max(0) as u64;
            states.push(Arc::new(TableState::new(min, max, inserters_per_table)));
        }
        let select_min = timed.then(|| SelectMin {
            max_us: per_table.values().copied().max().unwrap_or(0),
            tables: per_table,
            perf_context,
        });
        self.rows_at_start.store(rows_at_start, Ordering::Relaxed);
        Ok(StepStart {
            states,
            getmin: recorders,
            select_min,
        })
    }

    fn inserters_per_table(&self) -> usize {
        self.spec.clients / self.spec.table_count()
    }

    fn load_initial(&self, env: &StepEnv) -> Result<StepResult> {
        let mut conn = self.dbms.connect_insert_benchmark()?;
        self.check_replaceable(conn.as_mut())?;
        for table in &self.tables {
            conn.create_table(table)
                .with_context(|| format!("create table {}", table.name))?;
        }
        drop(conn);
        // A Galera cluster: the clients on the other nodes find the tables there.
        self.dbms.ddl_applied()?;
        let states = self.table_states(false, self.inserters_per_table())?.states;
        let threads = self
            .clients
            .iter()
            .map(|&c| {
                let pace = steps::Pace::Rows(self.spec.l0_rows, self.spec.l0_batch);
                steps::inserter(self.client_table(env, c, &states), pace)
            })
            .collect();
        let total = self.spec.l0_rows * self.share() as u64;
        let outcome = env.run_threads(threads, Expect::Rows(Op::Insert, total));
        Ok(self.summarize(env, outcome, Vec::new(), None, None))
    }

    fn create_indexes(&self, env: &StepEnv) -> Result<StepResult> {
        let mut conn = self.dbms.connect_insert_benchmark()?;
        let mut rows = 0;
        for table in &self.tables {
            rows += conn.count_rows(table)?;
        }
        drop(conn);
        let combined = self.spec.index_ddl == crate::request::IndexDdl::Combined;
        let indexes = self.spec.indexes();
        let threads = self
            .tables
            .iter()
            .map(|table| {
                let dbms = &self.dbms;
                let client = schema::owner(&self.spec, table.id);
                ThreadSpec {
                    client,
                    role: "indexer",
                    body: Box::new(move |ctx| {
                        let mut conn = dbms.connect_insert_benchmark()?;
                        ctx.start();
                        conn.create_indexes(table, indexes, combined)
                            .with_context(|| format!("create indexes on {}", table.name))
                    }),
                }
            })
            .collect();
        let outcome = env.run_threads(threads, Expect::Spinner);
        let secs = outcome.duration.as_secs_f64();
        // A Galera cluster: the next step's clients on any node find the indexes built there
        // (the time each other node takes is not l.x's rate: it is the nodes' own work).
        self.dbms.ddl_applied()?;
        let mut result = self.summarize(env, outcome, Vec::new(), None, None);
        // A failed or interrupted l.x did not index its rows: it claims no rate.
        let built = result.status == crate::results::model::RunStatus::Complete;
        result.index_build = Some(IndexBuild {
            indexes: indexes.iter().map(|i| i.suffix().to_string()).collect(),
            tables: self.tables.len(),
            rows,
            rows_per_s: if built && secs > 0.0 {
                rows as f64 / secs
            } else {
                0.0
            },
        });
        Ok(result)
    }

    fn load_more(&self, env: &StepEnv, rows: u64, batch: usize) -> Result<StepResult> {
        let deletes = self.spec.deletes;
        let StepStart {
            states,
            getmin,
            select_min,
        } = self.table_states(deletes, self.inserters_per_table())?;
        let mut threads = Vec::new();
        for &c in &self.clients {
            let pace = steps::Pace::Rows(rows, batch);
            threads.push(steps::inserter(self.warmed_table(env, c, &states), pace));
            if deletes {
                threads.push(steps::deleter(
                    self.warmed_table(env, c, &states),
                    batch,
                    None,
                ));
            }
        }
        let total = rows * self.share() as u64;
        let outcome = env.run_threads(threads, Expect::Rows(Op::Insert, total));
        let mut result = self.summarize(env, outcome, getmin, None, None);
        result.select_min = select_min;
        Ok(result)
    }

    fn query(&self, env: &StepEnv, rate: u32, point: bool) -> Result<StepResult> {
        let deletes = self.spec.deletes && rate > 0;
        let writers = if rate > 0 {
            self.inserters_per_table()
        } else {
            0
        };
        let StepStart {
            states,
            getmin,
            select_min,
        } = self.table_states(deletes, writers)?;
        let duration = Duration::from_secs(self.spec.query_seconds);
        let batch = self.spec.writer_batch;
        let misses = AtomicU64::new(0);
        let raced = AtomicU64::new(0);
        // Every deleter of a table advances its cursor; stay two batches per deleter ahead.
        let guard = if deletes {
            2 * batch as i64 * self.inserters_per_table() as i64
        } else {
            0
        };
        let mut threads = Vec::new();
        for &c in &self.clients {
            let query = steps::Query {
                point,
                duration,
                guard,
                misses: &misses,
                raced: &raced,
            };
            threads.push(steps::querier(self.warmed_table(env, c, &states), query));
            if rate > 0 {
                let pace = steps::Pace::Rate(rate, batch, duration);
                threads.push(steps::inserter(self.warmed_table(env, c, &states), pace));
                if deletes {
                    let schedule = Some((rate, duration));
                    threads.push(steps::deleter(
                        self.warmed_table(env, c, &states),
                        batch,
                        schedule,
                    ));
                }
            }
        }
        let outcome = env.run_threads(threads, Expect::Time(duration));
        let sla = (rate > 0).then_some(SlaTarget {
            rate_per_writer: rate as u64,
            batch: batch as u64,
            writers: self.share() as u64,
        });
        let mut result = self.summarize(env, outcome, getmin, Some(duration), sla);
        result.select_min = select_min;
        if point {
            result.point_query_misses = Some(misses.load(Ordering::Relaxed));
            result.point_query_raced = Some(raced.load(Ordering::Relaxed));
        }
        Ok(result)
    }

    /// Counts the rows of every table with the step's own SQL and compares them with what
    /// the step counted: the queue invariant after retries and reconnects.
    fn queue_check(&self, result: &StepResult) -> Result<QueueCheck> {
        let mut conn = self.dbms.connect_insert_benchmark()?;
        let mut rows_counted = 0;
        let mut tables_with_gaps = Vec::new();
        for table in &self.tables {
            let n = conn.count_rows(table)?;
            rows_counted += n;
            let span = match (conn.min_id(table)?, conn.max_id(table)?) {
                (Some(min), Some(max)) => (max - min + 1) as u64,
                _ => 0,
            };
            if span != n {
                tables_with_gaps.push(table.name.clone());
            }
        }
        let rows_at_start = self.rows_at_start.load(Ordering::Relaxed);
        // The warm-up's rows are in the tables too, though in no figure of the step.
        let (warm_inserted, warm_deleted) = result
            .warmup
            .as_ref()
            .map_or((0, 0), |w| (w.rows_inserted, w.rows_deleted));
        let rows_expected = (rows_at_start + result.rows_inserted + warm_inserted)
            .saturating_sub(result.rows_deleted + warm_deleted);
        Ok(QueueCheck {
            rows_at_start,
            rows_expected,
            rows_counted,
            ok: rows_counted == rows_expected && tables_with_gaps.is_empty(),
            tables_with_gaps,
        })
    }

    /// [`summarize`] over the run's client numbers (a share's clients keep theirs), counting
    /// this process's clients.
    fn summarize(
        &self,
        env: &StepEnv,
        outcome: crate::metrics::outcome::StepOutcome,
        extra: Vec<Recorder>,
        window: Option<Duration>,
        sla: Option<SlaTarget>,
    ) -> StepResult {
        let mut result = summarize(env.name(), self.spec.clients, outcome, extra, window, sla);
        result.clients = self.share();
        result
    }

    /// What the threads of client `client` work with in this step.
    fn client_table<'s>(
        &'s self,
        env: &'s StepEnv,
        client: usize,
        states: &[Arc<TableState>],
    ) -> steps::ClientTable<'s> {
        let id = schema::table_of(&self.spec, client);
        let t = self
            .tables
            .iter()
            .position(|t| t.id == id)
            .expect("a client's table is among its process's tables");
        steps::ClientTable {
            dbms: &self.dbms,
            spec: &self.spec,
            table: &self.tables[t],
            state: Arc::clone(&states[t]),
            client,
            step: env.name(),
            warmup: Duration::ZERO,
        }
    }

    /// [`InsertBenchmark::client_table`] with the spec's warm-up (l.i1, l.i2 and the query
    /// steps: every thread of the step warms up).
    fn warmed_table<'s>(
        &'s self,
        env: &'s StepEnv,
        client: usize,
        states: &[Arc<TableState>],
    ) -> steps::ClientTable<'s> {
        steps::ClientTable {
            warmup: Duration::from_secs(self.spec.warmup),
            ..self.client_table(env, client, states)
        }
    }
}

impl Workload for InsertBenchmark {
    fn name(&self) -> &'static str {
        "insert-benchmark"
    }

    fn step_names(&self) -> Vec<String> {
        self.spec.steps.iter().map(|s| s.to_string()).collect()
    }

    fn check_ready(&mut self, first: usize) -> Result<()> {
        let steps = &self.spec.steps[first.min(self.spec.steps.len())..];
        let Some(start) = steps.first() else {
            return Ok(());
        };
        if steps.contains(&Step::Scan) {
            let conn = self.dbms.connect_insert_benchmark()?;
            if !conn.can_scan() {
                return Err(UsageError::new(format!(
                    "{} cannot run the scan step: its connections have no full-index scan",
                    self.dbms.kind()
                ))
                .into());
            }
        }
        if steps.contains(&Step::LoadInitial) {
            let mut conn = self.dbms.connect_insert_benchmark()?;
            self.check_replaceable(conn.as_mut())?;
        }
        if *start == Step::LoadInitial {
            return Ok(());
        }
        let mut conn = self.dbms.connect_insert_benchmark()?;
        self.check_writable(conn.as_mut(), steps)?;
        for table in &self.tables {
            self.check_table(conn.as_mut(), table, steps)?;
        }
        Ok(())
    }

    fn maintenance_before(&self, index: usize) -> bool {
        let steps = &self.spec.steps;
        steps[index].is_query() && index > 0 && !steps[index - 1].is_query()
    }

    fn maintenance(
        &self,
        change_settings: bool,
    ) -> Result<Option<crate::runner::MaintenanceOutcome>> {
        Ok(self
            .dbms
            .maintenance(&self.all_tables, change_settings)?
            .map(Into::into))
    }

    fn run_step(&mut self, index: usize, env: &StepEnv) -> Result<StepResult> {
        let mut result = match self.spec.steps[index] {
            Step::LoadInitial => self.load_initial(env),
            Step::CreateIndexes => self.create_indexes(env),
            Step::LoadMore => self.load_more(env, self.spec.l1_rows, self.spec.l1_batch),
            Step::LoadMoreSmall => self.load_more(env, self.spec.l2_rows, self.spec.l2_batch),
            Step::QueryRange(rate) => self.query(env, rate, false),
            Step::QueryPoint(rate) => self.query(env, rate, true),
            Step::Scan => self.scan(env),
        }?;
        check_error_rate(&mut result, self.spec.max_error_pct);
        let trouble = result.reconnects > 0 || result.retries.values().any(|&n| n > 0);
        if trouble
            && !matches!(self.spec.steps[index], Step::CreateIndexes | Step::Scan)
            && result.status == crate::results::model::RunStatus::Complete
        {
            // Best effort: a DBMS that cannot answer now has already failed the step.
            result.queue_check = self.queue_check(&result).ok();
        }
        Ok(result)
    }
}

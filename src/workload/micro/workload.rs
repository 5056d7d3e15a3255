//! The microbenchmarks of one run as a [`Workload`]: the `prepare` step, then each benchmark at
//! each client count; the insert benchmarks' own tables, created at the start of each of their
//! steps; the maintenance pause after writes; what a DBMS cannot do, said once.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::client::{Client, Loader, RandomPkLoader};
use super::data::rng;
use super::{Benchmark, Entry, Operation, Scope, expand, names};
use crate::dbms::sql::{SbtestRows, Shape, SqlConnection};
use crate::dbms::{Dbms, Table};
use crate::error::UsageError;
use crate::metrics::recorder::Op;
use crate::metrics::summary::{check_error_rate, summarize};
use crate::request::MicroSpec;
use crate::results::model::StepResult;
use crate::runner::client::ThreadSpec;
use crate::runner::client_loop::{Driver, Pacing};
use crate::runner::{Expect, StepEnv};
use crate::runner::{MaintenanceOutcome, Workload};
use crate::workload::{ForeignTables, sql};

/// Table names of each shape: `sbtestN` (sysbench's), `sbinsertN`, `sbrandpkN`.
fn prefix(shape: Shape) -> &'static str {
    match shape {
        Shape::Sbtest => "sbtest",
        Shape::AutoIncrement => "sbinsert",
        Shape::RandomPk => "sbrandpk",
        Shape::Defined(def) => def.name,
        Shape::InsertBenchmark => "pi",
    }
}

const SHAPES: [Shape; 3] = [Shape::Sbtest, Shape::AutoIncrement, Shape::RandomPk];

/// The microbenchmarks of one run.
pub struct Micro {
    spec: MicroSpec,
    dbms: Arc<dyn Dbms>,
    /// Tables of every shape the run uses, `spec.tables` of each, in [`SHAPES`] order.
    tables: Vec<Table>,
    benchmarks: Vec<Entry>,
    /// What the user allows on tables of the benchmarks' names that ibench did not create.
    foreign: ForeignTables,
    /// Shapes whose tables a step of this run has created (so the pause includes them).
    created: BTreeSet<usize>,
    /// Benchmarks whose missing hint was already noted.
    noted: BTreeSet<&'static str>,
    /// A benchmark that writes ran since the last pause: the next pause is a post-write one
    /// (with its wait).
    wrote: AtomicBool,
}

/// What a step after `prepare` runs.
#[derive(Clone, Copy)]
struct Bench {
    benchmark: &'static Benchmark,
    clients: usize,
}

fn shape_index(shape: Shape) -> usize {
    SHAPES.iter().position(|&s| s == shape).unwrap_or(0)
}

impl Micro {
    /// The workload for `spec` on `dbms`; `spec` must be validated. An unknown benchmark name
    /// is a usage error. Tables of its names that ibench did not create (sysbench's) are
    /// replaced or written into only as `foreign` allows.
    pub fn new(spec: MicroSpec, dbms: Arc<dyn Dbms>, foreign: ForeignTables) -> Result<Self> {
        let mut benchmarks = Vec::new();
        for name in &spec.benchmarks {
            let found = expand(name);
            if found.is_empty() {
                return Err(UsageError::new(format!(
                    "unknown benchmark {name:?}: expected one of {} (ibench micro --list)",
                    names().join(", ")
                ))
                .into());
            }
            benchmarks.extend(found);
        }
        let mut tables = Vec::new();
        for shape in SHAPES {
            for i in 1..=spec.tables {
                tables.push(Table {
                    id: tables.len(),
                    name: format!("{}{i}", prefix(shape)),
                });
            }
        }
        Ok(Micro {
            spec,
            dbms,
            tables,
            benchmarks,
            foreign,
            created: BTreeSet::new(),
            noted: BTreeSet::new(),
            wrote: AtomicBool::new(false),
        })
    }

    /// The tables of `shape`.
    fn tables_of(&self, shape: Shape) -> &[Table] {
        let n = self.spec.tables;
        let i = shape_index(shape);
        &self.tables[i * n..(i + 1) * n]
    }

    /// The tables the run replaces: sysbench's when it prepares them, and those of the insert
    /// benchmarks it runs.
    fn replaced(&self) -> Vec<Table> {
        let mut out = Vec::new();
        for shape in SHAPES {
            let used = self.benchmarks.iter().any(|e| e.benchmark.shape == shape);
            let replaced = match shape {
                Shape::Sbtest => self.spec.prepare,
                _ => used,
            };
            if replaced {
                out.extend_from_slice(self.tables_of(shape));
            }
        }
        out
    }

    /// What a refusal to replace a table says the user can do instead.
    fn replace_also(&self) -> &'static str {
        // --no-prepare keeps sysbench's sbtestN tables; the insert benchmarks' own tables are
        // created at the start of their steps either way.
        if self.spec.prepare {
            "give --no-prepare to use sysbench's sbtestN tables as they are (insert and \
             insert-random-pk always create their own sbinsertN / sbrandpkN tables)"
        } else {
            "insert and insert-random-pk create their own sbinsertN / sbrandpkN tables even \
             with --no-prepare: rename or drop that table"
        }
    }

    /// Refuses when a table the run would replace was not created by ibench (sysbench's).
    fn check_replaceable(&self, conn: &mut dyn SqlConnection) -> Result<()> {
        let location = self.dbms.location();
        let also = self.replace_also();
        super::super::check_replaceable(&self.replaced(), self.foreign, &location, also, |t| {
            conn.table_origin(t)
        })
    }

    /// What would write into sysbench's tables as they are (`--no-prepare`): the first
    /// benchmark that writes into them, in words; `None` when the run prepares them.
    fn sbtest_writer(&self) -> Option<String> {
        let writer = self
            .benchmarks
            .iter()
            .map(|e| e.benchmark)
            .find(|b| b.writes && b.shape == Shape::Sbtest);
        let writer = writer.filter(|_| !self.spec.prepare)?;
        Some(format!("benchmark {} would write into it", writer.name))
    }

    /// The benchmark steps, in run order (after `prepare`).
    fn benches(&self) -> Vec<Bench> {
        let mut out = Vec::new();
        for e in &self.benchmarks {
            for &clients in &self.spec.clients {
                out.push(Bench {
                    benchmark: e.benchmark,
                    clients,
                });
            }
        }
        out
    }

    /// The step of index `index` (a run's steps: `prepare` when preparing, then the benches).
    fn bench_at(&self, index: usize) -> Option<Bench> {
        let i = if self.spec.prepare {
            index.checked_sub(1)?
        } else {
            index
        };
        self.benches().get(i).copied()
    }

    /// Per step of the run, whether the maintenance pause comes before it: between the load
    /// and the first benchmark, as in the Insert Benchmark; and before a benchmark that only
    /// reads when a benchmark that wrote ran since the last pause, so that reads do not pay
    /// for the writes' debt (vacuum, purge, compaction).
    fn pauses(&self) -> Vec<bool> {
        let mut out = Vec::new();
        let mut dirty = false;
        if self.spec.prepare {
            out.push(false);
            dirty = true;
        }
        let after_load = self.spec.prepare;
        for (i, bench) in self.benches().iter().enumerate() {
            let first = i == 0 && after_load;
            let pause = dirty && (first || !bench.benchmark.writes);
            if pause {
                dirty = false;
            }
            dirty |= bench.benchmark.writes;
            out.push(pause);
        }
        out
    }

    /// A thread running `driver` on a new connection at `pacing`: a reader's (a replica's with
    /// `--read-from replicas`) when `reads_only`, else the primary's.
    fn thread<'s, D>(
        &'s self,
        client: usize,
        role: (&'static str, bool),
        driver: D,
        pacing: Pacing,
    ) -> ThreadSpec<'s>
    where
        D: Driver<Conn = dyn SqlConnection> + Send + 's,
    {
        let tries = (self.spec.max_tries, self.spec.max_reconnects);
        sql::thread(&*self.dbms, tries, client, role, driver, pacing)
    }

    /// Whether `prepare` loads insert-random-pk's tables (`--random-pk-rows`, and a benchmark
    /// of the run uses them), which its steps then keep.
    fn prefills_random_pk(&self) -> bool {
        self.spec.random_pk_rows > 0
            && self
                .benchmarks
                .iter()
                .any(|e| e.benchmark.shape == Shape::RandomPk)
    }

    /// Creates the tables, loads them (one thread per table, ids 1..=rows in batches) and
    /// creates sysbench's index on `k` (`k_1` on sbtest1...), as `sysbench prepare` does;
    /// with `--random-pk-rows`, also insert-random-pk's tables, a thread each.
    fn prepare(&self, env: &StepEnv) -> Result<StepResult> {
        let mut conn = self.dbms.connect_sql()?;
        self.check_replaceable(conn.as_mut())?;
        let mut shapes = vec![Shape::Sbtest];
        if self.prefills_random_pk() {
            shapes.push(Shape::RandomPk);
        }
        for &shape in &shapes {
            for table in self.tables_of(shape) {
                conn.create_table(table, shape)
                    .with_context(|| format!("create table {}", table.name))?;
            }
        }
        drop(conn);
        // A Galera cluster: the loaders on the other nodes find the tables there.
        self.dbms.ddl_applied()?;
        let spec = &self.spec;
        let mut threads: Vec<ThreadSpec> = self
            .tables_of(Shape::Sbtest)
            .iter()
            .map(|table| {
                let loader = Loader {
                    table,
                    rng: rng(spec.seed, "prepare", table.id),
                    rows: SbtestRows::default(),
                    next_id: 1,
                    table_rows: spec.table_rows,
                };
                self.thread(table.id, ("loader", false), loader, Pacing::Closed(None))
            })
            .collect();
        let mut total = spec.table_rows * spec.tables as u64;
        if self.prefills_random_pk() {
            let tables = self.tables_of(Shape::RandomPk);
            for i in 0..tables.len() {
                let loader = RandomPkLoader {
                    tables,
                    table: i,
                    scope: Scope {
                        tables: spec.tables,
                        rows: spec.table_rows,
                        client: i,
                        clients: spec.tables,
                    },
                    rng: rng(spec.seed, "prepare-random-pk", i),
                    op: Operation::default(),
                    left: spec.random_pk_rows,
                };
                let client = spec.tables + i;
                threads.push(self.thread(client, ("loader", false), loader, Pacing::Closed(None)));
            }
            total += spec.random_pk_rows * spec.tables as u64;
        }
        let loaders = threads.len();
        let outcome = env.run_threads(threads, Expect::Rows(Op::Insert, total));
        Ok(summarize(
            env.name(),
            loaders,
            outcome,
            Vec::new(),
            None,
            None,
        ))
    }

    /// `bench` as fast as possible on its clients for the step's duration, after the warm-up.
    fn benchmark(&self, env: &StepEnv, bench: Bench) -> Result<StepResult> {
        let b = bench.benchmark;
        let kept = b.shape == Shape::RandomPk && self.prefills_random_pk();
        if b.shape != Shape::Sbtest && !kept {
            // A fresh table for each step, so every client count starts from the same one.
            let mut conn = self.dbms.connect_sql()?;
            for table in self.tables_of(b.shape) {
                conn.create_table(table, b.shape)
                    .with_context(|| format!("create table {}", table.name))?;
            }
            // A Galera cluster: the clients on the other nodes find the tables there.
            self.dbms.ddl_applied()?;
        }
        let duration = Duration::from_secs(self.spec.seconds);
        let pacing = Pacing::Warmed {
            warmup: Duration::from_secs(self.spec.warmup),
            duration,
        };
        let misses = AtomicU64::new(0);
        let threads = (0..bench.clients)
            .map(|client| {
                let scope = Scope {
                    tables: self.spec.tables,
                    rows: self.spec.table_rows,
                    client,
                    clients: bench.clients,
                };
                let driver = Client {
                    benchmark: b,
                    generator: (b.generator)(&scope),
                    rng: rng(self.spec.seed, env.name(), client),
                    tables: self.tables_of(b.shape),
                    op: Operation::default(),
                    misses: &misses,
                };
                self.thread(client, ("query", !b.writes), driver, pacing)
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

    /// Where `b`'s clients read when not from the primary: the replicas (`--read-from
    /// replicas`), for a benchmark that only reads.
    fn replica_note(&self, b: &Benchmark) -> Option<String> {
        let n = self.dbms.read_replicas();
        (n > 0 && !b.writes)
            .then(|| format!("queries read from the replicas ({n}, round-robin per client)"))
    }

    /// What to say about `b` on this DBMS, once per run and in each of its steps' results:
    /// a hint it asks for that the DBMS cannot give.
    fn note(&self, b: &Benchmark) -> Result<Option<String>> {
        if !b.has_hint() {
            return Ok(None);
        }
        let conn = self.dbms.connect_sql()?;
        if conn.dialect().index_hint.is_some() {
            return Ok(None);
        }
        Ok(Some(format!(
            "{} has no index hints: {} runs without one (the planner picks the index)",
            self.dbms.kind(),
            b.name
        )))
    }
}

impl Workload for Micro {
    fn name(&self) -> &'static str {
        "micro"
    }

    fn step_names(&self) -> Vec<String> {
        self.spec.step_names()
    }

    fn check_ready(&mut self, first: usize) -> Result<()> {
        let sbtest = self.tables_of(Shape::Sbtest);
        let writer = self.sbtest_writer();
        let missing = format!(
            "let ibench create the tables (drop --no-prepare), or run `sysbench \
             oltp_read_write --tables={} --table-size={} prepare`",
            self.spec.tables, self.spec.table_rows
        );
        let ready = sql::Readiness {
            replaced: &self.replaced(),
            also: self.replace_also(),
            loads: self.spec.prepare && first == 0,
            written: writer.as_deref().map(|action| (sbtest, action)),
            needed: sbtest,
            missing: &missing,
        };
        sql::check_ready(&*self.dbms, self.foreign, ready)
    }

    fn maintenance_before(&self, index: usize) -> bool {
        self.pauses().get(index).copied().unwrap_or(false)
    }

    fn maintenance(&self, change_settings: bool) -> Result<Option<MaintenanceOutcome>> {
        let start = Instant::now();
        let mut tables = self.tables_of(Shape::Sbtest).to_vec();
        for &shape in &self.created {
            tables.extend_from_slice(self.tables_of(SHAPES[shape]));
        }
        if !self.wrote.swap(false, Ordering::Relaxed) {
            let done = self.dbms.maintenance(&tables, change_settings)?;
            return Ok(done.map(Into::into));
        }
        // After writes: the DBMS's background work (purge, flush, compaction) settles, waited
        // for where the DBMS can tell, within the pause.
        let wait = self.spec.post_write_wait();
        let until = start + Duration::from_secs(wait);
        let (done, settled) = self
            .dbms
            .post_write_maintenance(&tables, change_settings, until)?;
        let slept = wait_until(until)?;
        let mut waited = String::new();
        if let Some(s) = &settled {
            waited.push_str(&format!(
                "waited {:.1}s for {}: {} ({} {} -> {}), ",
                s.seconds, s.waited_for, s.outcome, s.figure, s.start, s.end
            ));
        }
        waited.push_str(&format!(
            "post-write wait {wait}s from the pause's start ({:.1}s after the maintenance)",
            slept.as_secs_f64()
        ));
        let actions = match done {
            Some(d) => format!("{d}, {waited}"),
            None => waited,
        };
        Ok(Some(MaintenanceOutcome { actions, settled }))
    }

    fn run_step(&mut self, index: usize, env: &StepEnv) -> Result<StepResult> {
        if self.spec.prepare && index == 0 {
            if self.prefills_random_pk() {
                self.created.insert(shape_index(Shape::RandomPk));
            }
            return self.prepare(env);
        }
        let Some(bench) = self.bench_at(index) else {
            bail!("no step {index}");
        };
        let b = bench.benchmark;
        let note = self.note(b)?;
        if let Some(n) = &note
            && self.noted.insert(b.name)
        {
            env.note(n);
        }
        if b.shape != Shape::Sbtest {
            self.created.insert(shape_index(b.shape));
        }
        if b.writes {
            self.wrote.store(true, Ordering::Relaxed);
        }
        let mut result = self.benchmark(env, bench)?;
        result.notes.extend(note);
        result.notes.extend(self.replica_note(b));
        check_error_rate(&mut result, self.spec.max_error_pct);
        Ok(result)
    }
}

/// Sleeps until `until` (at once when past), a second at a time so that an interrupt stops
/// it; returns how long it slept.
fn wait_until(until: Instant) -> Result<Duration> {
    let began = Instant::now();
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        if crate::interrupt::requested() {
            return Err(crate::error::Interrupted.into());
        }
        std::thread::sleep(left.min(Duration::from_secs(1)));
    }
    Ok(began.elapsed())
}

#[cfg(test)]
mod tests {
    use super::super::data::fill_rows;
    use super::*;

    #[test]
    fn rows_look_like_sysbench_rows() {
        let mut rows = SbtestRows::default();
        let mut r = rng(1, "prepare", 0);
        fill_rows(&mut rows, &mut r, 11, 5, 100);
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
        fill_rows(&mut again, &mut rng(1, "prepare", 0), 11, 5, 100);
        assert_eq!(rows, again);
    }

    /// Not a test: the client loop of one benchmark against a server, without the /proc
    /// sampler (which valgrind cannot run), for counting instructions per op with callgrind:
    ///
    /// ```sh
    /// IBENCH_PROFILE_URL=mysql://root@127.0.0.1:3306/ibench IBENCH_PROFILE_BENCH=point-query \
    ///   valgrind --tool=callgrind target/release/deps/ibench-HASH profile_client --ignored
    /// ```
    ///
    /// The tables must exist (`ibench micro --keep-server` first; 4 x 100000 rows). Prints the
    /// ops run.
    #[test]
    #[ignore]
    fn profile_client() {
        use crate::dbms::{DbmsKind, TargetSettings, TargetSpec};
        let url = std::env::var("IBENCH_PROFILE_URL").expect("IBENCH_PROFILE_URL");
        let scheme = url.split("://").next().unwrap_or_default();
        let kind = DbmsKind::from_scheme(scheme).expect("a DBMS for the URL's scheme");
        let target = TargetSpec {
            kind,
            path: None,
            url: Some(crate::dbms::url::ServerUrl::parse(&url, kind.password_env()).unwrap()),
            client_url: None,
            replica_urls: Vec::new(),
            read_from_replicas: false,
            node_urls: Vec::new(),
            clients_on_all_nodes: false,
            params: kind.params(&TargetSettings::default()).unwrap(),
        };
        let dbms: Arc<dyn Dbms> = Arc::from(crate::dbms::open(&target).unwrap());
        let bench = std::env::var("IBENCH_PROFILE_BENCH").unwrap_or("point-query".into());
        let spec = MicroSpec {
            benchmarks: vec![bench],
            clients: vec![1],
            seconds: 3,
            prepare: false,
            ..MicroSpec::default()
        };
        let mut micro = Micro::new(spec, dbms, ForeignTables::default()).unwrap();
        let display = crate::runner::DisplayOptions {
            quiet: true,
            ..Default::default()
        };
        let env = StepEnv::new("profile".to_string(), &display, None);
        let result = micro.run_step(0, &env).unwrap();
        println!("ops {}", result.queries);
    }
}

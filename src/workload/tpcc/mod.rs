//! A TPC-C-like workload compatible with sysbench-tpcc (`ibench tpcc`): its nine tables per
//! set, loaded as its prepare loads them (`load.rs`), the five transactions of clause 2 with
//! their profiles (`txn.rs`) in the statements of `dbms::sql`'s vocabulary
//! (`statements.rs`), so every DBMS that runs the microbenchmarks runs it with no code of its
//! own; tpmC, the mix, rollbacks and the consistency conditions recorded per step.

mod check;
mod data;
mod load;
mod params;
mod schema;
mod statements;
mod txn;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::dbms::sql::{Shape, SqlConnection};
use crate::dbms::{Dbms, Table};
use crate::metrics::recorder::Op;
use crate::metrics::summary::{check_error_rate, summarize};
use crate::request::TpccSpec;
use crate::results::model::StepResult;
use crate::results::tpcc::{TpccFigures, TransactionFigures};
use crate::runner::client::ThreadSpec;
use crate::runner::client_loop::{Driver, Pacing};
use crate::runner::{Expect, StepEnv, Workload};
use crate::workload::{ForeignTables, sql};
use data::{Constants, rng};
use schema::KINDS;
use txn::{Tally, Terminal};

/// What a refusal to replace a table says the user can do instead.
const REPLACE_ALSO: &str = "give --no-prepare to run on the tables as they are";

/// The TPC-C-like workload of one run.
pub struct Tpcc {
    spec: TpccSpec,
    dbms: Arc<dyn Dbms>,
    /// Every set's nine tables.
    tables: Vec<Table>,
    foreign: ForeignTables,
}

impl Tpcc {
    /// The workload for `spec` (validated) on `dbms`; tables of its names that ibench did not
    /// create are replaced or written into only as `foreign` allows.
    pub fn new(spec: TpccSpec, dbms: Arc<dyn Dbms>, foreign: ForeignTables) -> Self {
        let tables = schema::tables(spec.tables);
        Tpcc {
            spec,
            dbms,
            tables,
            foreign,
        }
    }

    /// A thread running `driver` on a new connection at `pacing`.
    fn thread<'s, D>(
        &'s self,
        client: usize,
        role: &'static str,
        driver: D,
        pacing: Pacing,
    ) -> ThreadSpec<'s>
    where
        D: Driver<Conn = dyn SqlConnection> + Send + 's,
    {
        let tries = (self.spec.max_tries, self.spec.max_reconnects);
        sql::thread(&*self.dbms, tries, client, (role, false), driver, pacing)
    }

    /// What the figures say of the isolation level and the foreign keys.
    fn settings(&self, conn: &dyn SqlConnection) -> (String, String) {
        let d = conn.dialect();
        let fks = if !self.spec.foreign_keys {
            "no (--no-foreign-keys)".to_string()
        } else if let Some(why) = d.no_foreign_keys {
            format!("no: {why}")
        } else {
            "yes".to_string()
        };
        (d.isolation.to_string(), fks)
    }

    /// Creates the tables and loads them on `load_threads` threads, which share the parts of
    /// the load; the last to finish creates the indexes and foreign keys.
    fn prepare(&self, env: &StepEnv) -> Result<StepResult> {
        let mut conn = self.dbms.connect_sql()?;
        self.check_replaceable(conn.as_mut())?;
        for set in 1..=self.spec.tables {
            for kind in KINDS {
                let t = schema::table(&self.tables, set, kind);
                conn.create_table(t, Shape::Defined(kind.def()))
                    .with_context(|| format!("create table {}", t.name))?;
            }
        }
        // A Galera cluster: the loaders on the other nodes find the tables there.
        self.dbms.ddl_applied()?;
        let units = load::units(self.spec.tables, self.spec.warehouses as u32);
        let threads = self.spec.load_threads.min(units.len());
        let running = AtomicUsize::new(threads);
        let specs = (0..threads)
            .map(|i| {
                let mine: Vec<_> = units
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|(k, _)| k % threads == i)
                    .rev()
                    .collect();
                let loader = load::Loader {
                    tables: &self.tables,
                    units: mine,
                    seed: self.spec.seed,
                    pending: Vec::new(),
                    current: None,
                    running: &running,
                    sets: self.spec.tables,
                    foreign_keys: self.spec.foreign_keys,
                };
                self.thread(i, "loader", loader, Pacing::Closed(None))
            })
            .collect();
        let expect = Expect::Rows(Op::Insert, self.spec.loaded_rows());
        let outcome = env.run_threads(specs, expect);
        // The last loader's indexes and foreign keys, applied on every node before the steps.
        self.dbms.ddl_applied()?;
        let mut result = summarize(env.name(), threads, outcome, Vec::new(), None, None);
        let (isolation, foreign_keys) = self.settings(conn.as_ref());
        let rows = check::cardinalities(conn.as_mut(), &self.tables, self.spec.tables)?;
        result.tpcc = Some(TpccFigures {
            isolation,
            foreign_keys,
            rows,
            ..TpccFigures::default()
        });
        Ok(result)
    }

    /// The transactions on `clients` clients for the step's duration, after the warm-up; then
    /// the consistency conditions.
    fn transactions(&self, env: &StepEnv, clients: usize) -> Result<StepResult> {
        let duration = Duration::from_secs(self.spec.seconds);
        // With `rate` over all clients: each client's k-th transaction is due at
        // (k + client / clients) * clients / rate seconds, so the clients take turns.
        let pacing = |client: usize| match self.spec.rate {
            Some(rate) => Pacing::Scheduled {
                op: Op::NewOrder,
                rate,
                batch: clients as u64,
                window: duration,
                drain: false,
                offset: Duration::from_nanos(client as u64 * 1_000_000_000 / rate),
            },
            None => Pacing::Warmed {
                warmup: Duration::from_secs(self.spec.warmup),
                duration,
            },
        };
        let tally = Tally::default();
        let constants = Constants::run(self.spec.seed);
        let size = (self.spec.tables, self.spec.warehouses as u32);
        let threads = (0..clients)
            .map(|client| {
                let r = rng(self.spec.seed, env.name(), client);
                let weights = self.spec.mix.weights();
                let t = Terminal::new(&self.tables, size, weights, constants, r, &tally);
                self.thread(client, "terminal", t, pacing(client))
            })
            .collect();
        let outcome = env.run_threads(threads, Expect::Time(duration));
        // The schedule's misses are kept under New-Order (see the pacing above).
        let missed = outcome
            .recorders
            .iter()
            .map(|r| r.missed(Op::NewOrder))
            .sum();
        let mut result = summarize(
            env.name(),
            clients,
            outcome,
            Vec::new(),
            Some(duration),
            None,
        );
        let mut conn = self.dbms.connect_sql()?;
        let (isolation, foreign_keys) = self.settings(conn.as_ref());
        let consistency = check::consistency(
            conn.as_mut(),
            &self.tables,
            self.spec.tables,
            self.spec.warehouses as u32,
        )?;
        let mut figures = figures(&result, &tally);
        figures.isolation = isolation;
        figures.foreign_keys = foreign_keys;
        figures.consistency = consistency;
        figures.rate = self.spec.rate;
        figures.missed = missed;
        result.tpcc = Some(figures);
        Ok(result)
    }

    /// Refuses when a table the load would replace was not created by ibench.
    fn check_replaceable(&self, conn: &mut dyn SqlConnection) -> Result<()> {
        let location = self.dbms.location();
        super::check_replaceable(&self.tables, self.foreign, &location, REPLACE_ALSO, |t| {
            conn.table_origin(t)
        })
    }
}

/// tpmC and each type's figures from a step's result and what its clients counted.
fn figures(result: &StepResult, tally: &Tally) -> TpccFigures {
    let total: u64 = Op::TPCC
        .iter()
        .filter_map(|op| result.ops.get(op.name()))
        .map(|o| o.count)
        .sum();
    let mut out = TpccFigures {
        delivery_skipped: tally.delivery_skipped.load(Ordering::Relaxed),
        ..TpccFigures::default()
    };
    let minutes = result.duration_s / 60.0;
    for (k, op) in Op::TPCC.iter().enumerate() {
        let count = result.ops.get(op.name()).map_or(0, |o| o.count);
        let rollbacks = tally.rollbacks[k].load(Ordering::Relaxed);
        let per_s = if result.duration_s > 0.0 {
            count as f64 / result.duration_s
        } else {
            0.0
        };
        if *op == Op::NewOrder && minutes > 0.0 {
            out.tpmc = count.saturating_sub(rollbacks) as f64 / minutes;
        }
        let share_pct = if total > 0 {
            100.0 * count as f64 / total as f64
        } else {
            0.0
        };
        out.transactions.insert(
            op.name().to_string(),
            TransactionFigures {
                count,
                per_s,
                share_pct,
                rollbacks,
                retries: result.retries.get(op.name()).copied().unwrap_or(0),
            },
        );
    }
    out
}

impl Workload for Tpcc {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn step_names(&self) -> Vec<String> {
        self.spec.step_names()
    }

    fn check_ready(&mut self, first: usize) -> Result<()> {
        // The load replaces the tables; without it (--no-prepare, or a resumed run) the
        // transactions write into them as they are, which --write-existing allows.
        let loads = self.spec.prepare && first == 0;
        let ready = sql::Readiness {
            replaced: if loads { &self.tables } else { &[] },
            also: REPLACE_ALSO,
            loads,
            written: Some((&self.tables, "the transactions would write into it")),
            needed: &self.tables,
            missing: "let ibench create the tables (drop --no-prepare)",
        };
        sql::check_ready(&*self.dbms, self.foreign, ready)
    }

    fn maintenance_before(&self, index: usize) -> bool {
        self.spec.prepare && index == 1
    }

    fn maintenance(
        &self,
        change_settings: bool,
    ) -> Result<Option<crate::runner::MaintenanceOutcome>> {
        Ok(self
            .dbms
            .maintenance(&self.tables, change_settings)?
            .map(Into::into))
    }

    fn run_step(&mut self, index: usize, env: &StepEnv) -> Result<StepResult> {
        if self.spec.prepare && index == 0 {
            return self.prepare(env);
        }
        let i = index - usize::from(self.spec.prepare);
        let Some(&clients) = self.spec.clients.get(i) else {
            bail!("no step {index}");
        };
        let mut result = self.transactions(env, clients)?;
        check_error_rate(&mut result, self.spec.max_error_pct);
        Ok(result)
    }
}

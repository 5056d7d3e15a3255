//! What a run's steps run on. `steps.rs` runs a [`Workload`]'s steps in order (the
//! maintenance pause between them, the results saved after each); [`StepEnv`] starts a step's
//! client threads together (`client.rs`), shows progress (`progress.rs`), and samples what the step costs
//! (`sampler.rs`); `client_loop.rs` is the one loop every client thread runs (closed, or on a
//! schedule of due times: `rate.rs`); `session.rs` is the clients' retry policy;
//! `duet_gate.rs` starts a duet run's steps together with its partner's.

pub mod client;
pub mod client_loop;
pub mod duet_gate;
pub mod nodes;
pub mod os_cache;
pub mod progress;
pub mod rate;
mod sampler;
pub mod session;
pub mod steps;
mod workload;

pub use workload::{MaintenanceOutcome, Workload};

use std::sync::Arc;
use std::time::Duration;

use crate::dbms::Dbms;
use crate::metrics::outcome::StepOutcome;
use crate::metrics::proc::Watch;
use crate::metrics::recorder::LiveCounters;
use crate::runner::client::ThreadSpec;
pub use progress::Expect;
use progress::StepProgress;
use sampler::Sampler;

/// How the run is displayed.
#[derive(Clone, Debug, Default)]
pub struct DisplayOptions {
    /// No progress bars or step lines.
    pub quiet: bool,
    /// Print a progress line every this often (zero: never).
    pub report_interval: Duration,
}

/// What the runner samples for each step's cost.
pub struct CostWatch {
    /// Processes, device and files to read.
    pub watch: Watch,
    /// The DBMS, for its counters and its own idea of the database size.
    pub dbms: Arc<dyn Dbms>,
    /// Whose figures the DBMS figures are (recorded with every step).
    pub dbms_source: String,
    /// `--profile`: a flame graph of the DBMS's processes per step.
    pub profiler: Option<crate::metrics::profile::Profiler>,
    /// Sample during steps (the default): /proc and the DBMS's gauges once a second, wait
    /// events. Without (`--no-sampling`), only the readings at each step's start and end.
    pub sampling: bool,
    /// A managed cluster's nodes, watched for one that dies during a step.
    pub nodes: Option<nodes::NodeWatch>,
}

impl CostWatch {
    fn counters(&self) -> std::collections::BTreeMap<String, f64> {
        self.dbms.counters().unwrap_or_default()
    }
}

/// What a workload's step sees of the runner.
pub struct StepEnv<'a> {
    name: String,
    display: &'a DisplayOptions,
    costs: Option<&'a CostWatch>,
    client_threads: client::ClientThreads,
    per_client_series: bool,
}

impl<'a> StepEnv<'a> {
    /// The environment of step `name`, shown as `display` says, its cost sampled when
    /// `costs` is given.
    pub fn new(name: String, display: &'a DisplayOptions, costs: Option<&'a CostWatch>) -> Self {
        StepEnv {
            name,
            display,
            costs,
            client_threads: client::ClientThreads::default(),
            per_client_series: false,
        }
    }

    /// Keeps each client's full per-second series in the step's results, not only their
    /// summaries (`--per-client-series`).
    pub fn with_per_client_series(mut self, keep: bool) -> Self {
        self.per_client_series = keep;
        self
    }

    /// Runs the step's clients as tasks on `pool.threads` threads (`crate::mux`) instead of
    /// a thread each (0, the default). Only for a DBMS whose client connections do all their
    /// waiting through `dbms::socket` ([`crate::dbms::Dbms::multiplexed_clients`]).
    pub fn with_client_threads(mut self, pool: client::ClientThreads) -> Self {
        self.client_threads = pool;
        self
    }

    /// The step's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Says `text` to the user (stderr, `note: ...`) unless the run is quiet.
    pub fn note(&self, text: &str) {
        if !self.display.quiet {
            eprintln!("note: {text}");
        }
    }

    /// Runs `threads` together, showing progress towards `expect` and sampling the step's
    /// cost when the run watches it.
    pub fn run_threads(&self, threads: Vec<ThreadSpec<'_>>, expect: Expect) -> StepOutcome {
        let mut watcher = Watcher {
            progress: StepProgress::new(
                &self.name,
                expect,
                self.display.quiet,
                self.display.report_interval,
            ),
            sampler: self.costs.map(|cw| Sampler::new(cw, &self.name)),
            nodes: self
                .costs
                .and_then(|cw| Some((cw.nodes.as_ref()?, cw.dbms.as_ref()))),
            step: &self.name,
        };
        let mut outcome = client::run_clients(threads, self.client_threads, &mut watcher);
        watcher.progress.finish();
        // The clients' connections are closed now.
        outcome.costs = watcher.sampler.and_then(Sampler::costs);
        outcome.per_client_series = self.per_client_series;
        outcome
    }
}

/// What watches a step from the coordinator thread: its progress, and its cost.
struct Watcher<'a> {
    progress: StepProgress,
    sampler: Option<Sampler<'a>>,
    /// The cluster's nodes, and the DBMS to take a dead one out of.
    nodes: Option<(&'a nodes::NodeWatch, &'a dyn Dbms)>,
    step: &'a str,
}

impl client::Observer for Watcher<'_> {
    fn ready(&mut self) {
        if let Some(s) = &mut self.sampler {
            s.ready();
        }
    }

    fn monitor(&mut self, live: &[Arc<LiveCounters>], elapsed: Duration) -> Option<String> {
        // Before the sampler, which would read a dead node's gauges.
        let failure = self
            .nodes
            .and_then(|(nodes, dbms)| nodes.check(self.step, Some(elapsed), dbms));
        if let Some(s) = &mut self.sampler {
            s.tick(elapsed);
        }
        self.progress.update(live, elapsed);
        failure
    }

    fn finished(&mut self) {
        if let Some(s) = &mut self.sampler {
            s.finished();
        }
    }
}

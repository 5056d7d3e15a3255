//! What a workload's step runs on: [`StepEnv`] starts the step's client threads together
//! (`client.rs`), shows progress, and samples what the step costs; `client_loop.rs` is the one
//! loop every client thread runs (closed, or on a schedule of due times: `rate.rs`);
//! `session.rs` is the clients' retry policy.

pub mod client;
pub mod client_loop;
pub mod rate;
pub mod session;

use std::sync::Arc;
use std::time::Duration;

use crate::dbms::Dbms;
use crate::metrics::efficiency::StepCosts;
use crate::metrics::outcome::StepOutcome;
use crate::metrics::proc::Watch;
pub use crate::output::progress::Expect;
use crate::output::progress::{LiveRates, step_bar};
use crate::runner::client::ThreadSpec;

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

    /// Runs `threads` together, showing progress towards `expect`.
    pub fn run_threads(&self, threads: Vec<ThreadSpec<'_>>, expect: Expect) -> StepOutcome {
        let bar = step_bar(&self.name, expect, self.display.quiet);
        let mut rates = LiveRates::default();
        let mut last_report = Duration::ZERO;
        let interval = self.display.report_interval;
        let mut costs: Option<StepCosts> = None;
        let sampler_cpu = std::cell::Cell::new(Duration::ZERO);
        let mut next_sample = Duration::from_secs(1);
        let cost_watch = self.costs;
        // `--profile`: the step's perf recording (started when the clients are ready, stopped
        // when they are done).
        let recording: std::cell::RefCell<Option<crate::metrics::profile::Recording>> =
            std::cell::RefCell::new(None);
        let mut ready = || {
            if let Some(cw) = cost_watch {
                // Counters first: the query that reads them is then not part of the step.
                let counters = cw.counters();
                let first = timed(&sampler_cpu, || cw.watch.sample(true));
                let mut c = StepCosts::new(&cw.watch, first, cw.dbms_source.clone());
                c.counters_start = counters;
                // Wait events from here to the clients' end (a failure: none for the step).
                let _ = cw.dbms.waits_start();
                if let Some(p) = &cw.profiler {
                    match p.start(&cw.watch, &self.name) {
                        Ok(r) => *recording.borrow_mut() = r,
                        // Asked for, so said even in a quiet run.
                        Err(line) => eprintln!("warning: {line}"),
                    }
                }
                costs = Some(c);
            }
        };
        let mut samples: Vec<crate::metrics::proc::Sample> = Vec::new();
        let mut gauges: Vec<std::collections::BTreeMap<String, f64>> = Vec::new();
        let mut end_sample = None;
        let mut wait_events = std::collections::BTreeMap::new();
        let mut finished = || {
            if let Some(cw) = cost_watch {
                if let Some(r) = recording.borrow_mut().as_mut() {
                    r.stop();
                }
                end_sample = Some(timed(&sampler_cpu, || cw.watch.sample(true)));
                // After the end sample: reading them is not part of the step's cost.
                wait_events = cw.dbms.waits_end().unwrap_or_default();
            }
        };
        let mut outcome = client::run_threads(
            threads,
            self.client_threads,
            &mut ready,
            &mut |live, elapsed| {
                if let Some(cw) = cost_watch
                    && elapsed >= next_sample
                {
                    // PSS walks every mapping (about 0.6 ms per process): every 5th second only.
                    let with_pss = samples.len() % 5 == 4;
                    samples.push(timed(&sampler_cpu, || cw.watch.sample(with_pss)));
                    // The DBMS's gauges at the same instant (a failed reading: none this second).
                    gauges.push(timed(&sampler_cpu, || cw.dbms.gauges().unwrap_or_default()));
                    // A slow sample skips the seconds it overran rather than catching up.
                    next_sample = (next_sample + Duration::from_secs(1))
                        .max(Duration::from_secs(elapsed.as_secs() + 1));
                }
                match expect {
                    Expect::Rows(_, total) => {
                        bar.set_position(LiveRates::totals(live)[0].min(total))
                    }
                    Expect::Time(d) => bar.set_position(elapsed.min(d).as_millis() as u64),
                    Expect::Spinner => {}
                }
                if rates.update(live, elapsed, Duration::from_secs(1)) {
                    bar.set_message(rates.message());
                }
                if !interval.is_zero() && elapsed >= last_report + interval {
                    last_report = elapsed;
                    let line = format!(
                        "[{:>6.1}s] {:>6} {}",
                        elapsed.as_secs_f64(),
                        self.name,
                        rates.message()
                    );
                    if bar.is_hidden() && !self.display.quiet {
                        eprintln!("{line}");
                    } else {
                        bar.println(line);
                    }
                }
            },
            &mut finished,
        );
        bar.finish_and_clear();
        if let (Some(cw), Some(mut c), Some(end)) = (cost_watch, costs, end_sample) {
            // The clients' connections are closed now; counters the DBMS reports only when a
            // session ends or idles (PostgreSQL flushes a backend's statistics at most once a
            // second) are complete once those sessions are gone.
            cw.dbms.settle_counters();
            let counters = cw.counters();
            c.end = end;
            c.seconds = samples;
            c.gauges = gauges;
            c.key_counters = counters
                .keys()
                .filter(|k| cw.dbms.is_key_counter(k))
                .cloned()
                .collect();
            c.counters_end = counters;
            // The engine's own report of where it stands (not counted as sampler CPU).
            c.engine_status = cw.dbms.engine_status().unwrap_or_default();
            c.wait_events = wait_events;
            // Folding and drawing take a while: after the step, off its clock.
            if let Some(r) = recording.borrow_mut().take() {
                match r.finish(&format!("{}: DBMS processes", self.name)) {
                    Ok(svg) => c.profile = Some(svg),
                    Err(e) => eprintln!("warning: --profile: {}: no flame graph: {e:#}", self.name),
                }
            }
            c.sampler_cpu = sampler_cpu.get();
            c.dbms_size_bytes = cw.dbms.size_bytes().ok().flatten();
            c.disk_size_bytes = cw.watch.data_size_bytes();
            outcome.costs = Some(c);
        }
        outcome.per_client_series = self.per_client_series;
        outcome
    }
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// Runs `f`, adding the CPU time it took on this thread to `total`.
fn timed<T>(total: &std::cell::Cell<Duration>, f: impl FnOnce() -> T) -> T {
    let before = thread_cpu();
    let value = f();
    total.set(total.get() + thread_cpu().saturating_sub(before));
    value
}

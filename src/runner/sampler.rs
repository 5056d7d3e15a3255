//! What a step cost, sampled from the coordinator thread while its clients run: /proc and
//! the DBMS's counters when every client is ready, /proc and the DBMS's gauges once a second,
//! /proc at the end (before the clients' connections close), then the counters, the engine's
//! status, wait events and the flame graph after the step, off its clock. The sampler's own
//! CPU is counted. Without sampling (`--no-sampling`: to measure what sampling costs), only
//! the readings at the start and the end: no per-second readings, no wait events.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::Duration;

use super::CostWatch;
use crate::metrics::efficiency::StepCosts;
use crate::metrics::proc::Sample;
use crate::metrics::profile::Recording;

/// One step's cost sampling.
pub struct Sampler<'a> {
    watch: &'a CostWatch,
    step: &'a str,
    /// CPU the sampling took on this thread.
    cpu: Cell<Duration>,
    next_sample: Duration,
    costs: Option<StepCosts>,
    samples: Vec<Sample>,
    gauges: Vec<BTreeMap<String, f64>>,
    end: Option<Sample>,
    wait_events: BTreeMap<String, f64>,
    /// `--profile`: the step's perf recording, from the clients' start to their end.
    recording: Option<Recording>,
}

impl<'a> Sampler<'a> {
    /// A sampler of step `step` on `watch`.
    pub fn new(watch: &'a CostWatch, step: &'a str) -> Self {
        Sampler {
            watch,
            step,
            cpu: Cell::new(Duration::ZERO),
            next_sample: Duration::from_secs(1),
            costs: None,
            samples: Vec::new(),
            gauges: Vec::new(),
            end: None,
            wait_events: BTreeMap::new(),
            recording: None,
        }
    }

    /// Every client is ready: the first reading, wait events and the profile start.
    pub fn ready(&mut self) {
        let cw = self.watch;
        // Counters first: the query that reads them is then not part of the step.
        let counters = cw.counters();
        if let Some(c) = &cw.watch.cgroup {
            c.reset_peak();
        }
        let first = self.timed(|| cw.watch.sample(true));
        let mut costs = StepCosts::new(&cw.watch, first, cw.dbms_source.clone());
        costs.counters_start = counters;
        // Wait events from here to the clients' end (a failure: none for the step).
        if cw.sampling {
            let _ = cw.dbms.waits_start();
        }
        if let Some(p) = &cw.profiler {
            match p.start(&cw.watch, self.step) {
                Ok(r) => self.recording = r,
                // Asked for, so said even in a quiet run.
                Err(line) => eprintln!("warning: {line}"),
            }
        }
        self.costs = Some(costs);
    }

    /// Takes a reading of /proc and the gauges when a second of the step has passed.
    pub fn tick(&mut self, elapsed: Duration) {
        if !self.watch.sampling || elapsed < self.next_sample {
            return;
        }
        let cw = self.watch;
        // PSS walks every mapping (about 0.6 ms per process): every 5th second only.
        let with_pss = self.samples.len() % 5 == 4;
        let sample = self.timed(|| cw.watch.sample(with_pss));
        self.samples.push(sample);
        // The DBMS's gauges at the same instant (a failed reading: none this second).
        let gauges = self.timed(|| cw.dbms.gauges().unwrap_or_default());
        self.gauges.push(gauges);
        // A slow sample skips the seconds it overran rather than catching up.
        self.next_sample = (self.next_sample + Duration::from_secs(1))
            .max(Duration::from_secs(elapsed.as_secs() + 1));
    }

    /// Every client is done, their connections still open: the last reading.
    pub fn finished(&mut self) {
        let cw = self.watch;
        if let Some(r) = self.recording.as_mut() {
            r.stop();
        }
        self.end = Some(self.timed(|| cw.watch.sample(true)));
        // After the end sample: reading them is not part of the step's cost.
        if cw.sampling {
            self.wait_events = cw.dbms.waits_end().unwrap_or_default();
        }
    }

    /// What the step cost, once its connections are closed (`None` when it never started).
    pub fn costs(mut self) -> Option<StepCosts> {
        let cw = self.watch;
        let (mut c, end) = (self.costs.take()?, self.end.take()?);
        // Counters the DBMS reports only when a session ends or idles (PostgreSQL flushes a
        // backend's statistics at most once a second) are complete once those are gone.
        cw.dbms.settle_counters();
        let counters = cw.counters();
        c.end = end;
        c.seconds = std::mem::take(&mut self.samples);
        c.gauges = std::mem::take(&mut self.gauges);
        c.key_counters = counters
            .keys()
            .filter(|k| cw.dbms.is_key_counter(k))
            .cloned()
            .collect();
        c.counters_end = counters;
        // The engine's own report of where it stands (not counted as sampler CPU).
        c.engine_status = cw.dbms.engine_status().unwrap_or_default();
        c.wait_events = std::mem::take(&mut self.wait_events);
        // Folding and drawing take a while: after the step, off its clock.
        if let Some(r) = self.recording.take() {
            match r.finish(&format!("{}: DBMS processes", self.step)) {
                Ok(svg) => c.profile = Some(svg),
                Err(e) => eprintln!("warning: --profile: {}: no flame graph: {e:#}", self.step),
            }
        }
        c.sampler_cpu = self.cpu.get();
        c.dbms_size_bytes = cw.dbms.size_bytes().ok().flatten();
        c.disk_size_bytes = cw.watch.data_size_bytes();
        c.files_size_bytes = cw.watch.data_files_bytes();
        c.compressed_size_bytes = cw.watch.data_compressed_bytes();
        Some(c)
    }

    /// Runs `f`, counting the CPU time it took on this thread as the sampler's.
    fn timed<T>(&self, f: impl FnOnce() -> T) -> T {
        let before = thread_cpu();
        let value = f();
        self.cpu
            .set(self.cpu.get() + thread_cpu().saturating_sub(before));
        value
    }
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

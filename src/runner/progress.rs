//! Progress display: one bar per step with elapsed time, ETA and live rates, plus optional
//! periodic report lines (`--report-interval`) for logs and non-terminal output.
//!
//! Callers never style bars themselves; they get one from [`step_bar`].

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::metrics::recorder::{LiveCounters, Op};
use crate::metrics::seconds::{LIVE_BUCKETS, live_bucket_max};
use crate::output::format::{micros, rate};

/// What a step's bar counts towards.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    /// A number of rows of one op type (load steps).
    Rows(Op, u64),
    /// A fixed duration (query steps).
    Time(Duration),
    /// Unknown length (index creation).
    Spinner,
}

/// A styled bar for step `name`, hidden when `quiet` or when stderr is not a terminal.
pub fn step_bar(name: &str, expect: Expect, quiet: bool) -> ProgressBar {
    let bar = match expect {
        Expect::Rows(_, total) => ProgressBar::new(total),
        Expect::Time(d) => ProgressBar::new(d.as_millis() as u64),
        Expect::Spinner => ProgressBar::new_spinner(),
    };
    if quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let template = match expect {
        Expect::Spinner => "{prefix:>7} {spinner} [{elapsed_precise}] {msg}",
        _ => "{prefix:>7} [{elapsed_precise}] {wide_bar} ETA {eta:>4} {msg}",
    };
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("progress template is valid")
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A step's progress as its clients run: the bar (towards `expect`), its live rates, and a
/// report line every `interval` (`--report-interval`; zero: none).
pub struct StepProgress {
    name: String,
    bar: ProgressBar,
    expect: Expect,
    rates: LiveRates,
    interval: Duration,
    last_report: Duration,
    quiet: bool,
}

impl StepProgress {
    /// The progress of step `name`; hidden when `quiet`.
    pub fn new(name: &str, expect: Expect, quiet: bool, interval: Duration) -> Self {
        StepProgress {
            name: name.to_string(),
            bar: step_bar(name, expect, quiet),
            expect,
            rates: LiveRates::default(),
            interval,
            last_report: Duration::ZERO,
            quiet,
        }
    }

    /// Shows the clients' `live` counters `elapsed` into the step.
    pub fn update(&mut self, live: &[Arc<LiveCounters>], elapsed: Duration) {
        match self.expect {
            Expect::Rows(_, total) => self.bar.set_position(LiveRates::totals(live)[0].min(total)),
            Expect::Time(d) => self.bar.set_position(elapsed.min(d).as_millis() as u64),
            Expect::Spinner => {}
        }
        if self.rates.update(live, elapsed, Duration::from_secs(1)) {
            self.bar.set_message(self.rates.message());
        }
        if !self.interval.is_zero() && elapsed >= self.last_report + self.interval {
            self.last_report = elapsed;
            let line = format!(
                "[{:>6.1}s] {:>6} {}",
                elapsed.as_secs_f64(),
                self.name,
                self.rates.message()
            );
            if self.bar.is_hidden() && !self.quiet {
                eprintln!("{line}");
            } else {
                self.bar.println(line);
            }
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Live rates over the last interval, computed from the threads' counters.
#[derive(Debug, Default)]
pub struct LiveRates {
    last: [u64; 3],
    last_elapsed: Duration,
    /// Rows inserted/s, rows deleted/s, queries/s over the last interval.
    pub rates: [f64; 3],
    /// Each TPC-C transaction type's completions so far, and per second over the interval.
    last_tpcc: [u64; 5],
    /// Transactions per second of each TPC-C type (New-Order first) over the interval.
    pub tpcc: [f64; 5],
    /// Ops so far per live response-time bucket.
    last_latency: Vec<u64>,
    /// The 95th percentile response time of the interval's ops, microseconds (within 25%).
    pub p95_us: Option<u64>,
}

impl LiveRates {
    /// Totals so far: rows inserted, rows deleted, queries.
    pub fn totals(live: &[Arc<LiveCounters>]) -> [u64; 3] {
        let mut t = [0; 3];
        for l in live {
            t[0] += l.rows(Op::Insert);
            t[1] += l.rows(Op::Delete);
            t[2] += Op::ALL
                .iter()
                .filter(|op| op.counts_as_query())
                .map(|&op| l.ops(op))
                .sum::<u64>();
        }
        t
    }

    /// Updates the rates when at least `min_interval` has passed; returns whether it did.
    pub fn update(
        &mut self,
        live: &[Arc<LiveCounters>],
        elapsed: Duration,
        min_interval: Duration,
    ) -> bool {
        let dt = elapsed.saturating_sub(self.last_elapsed);
        if dt < min_interval {
            return false;
        }
        let now = Self::totals(live);
        for ((rate, now), last) in self.rates.iter_mut().zip(now).zip(self.last) {
            *rate = (now - last) as f64 / dt.as_secs_f64();
        }
        self.last = now;
        for (k, op) in Op::TPCC.iter().enumerate() {
            let now: u64 = live.iter().map(|l| l.ops(*op)).sum();
            self.tpcc[k] = now.saturating_sub(self.last_tpcc[k]) as f64 / dt.as_secs_f64();
            self.last_tpcc[k] = now;
        }
        self.update_p95(live);
        self.last_elapsed = elapsed;
        true
    }

    /// The interval's 95th percentile from the live response-time buckets.
    fn update_p95(&mut self, live: &[Arc<LiveCounters>]) {
        let now: Vec<u64> = (0..LIVE_BUCKETS)
            .map(|b| live.iter().map(|l| l.latency(b)).sum())
            .collect();
        let last = std::mem::replace(&mut self.last_latency, now);
        let delta: Vec<u64> = self
            .last_latency
            .iter()
            .enumerate()
            .map(|(b, n)| n.saturating_sub(last.get(b).copied().unwrap_or(0)))
            .collect();
        let total: u64 = delta.iter().sum();
        self.p95_us = None;
        let mut seen = 0;
        for (b, n) in delta.iter().enumerate() {
            seen += n;
            if total > 0 && seen * 100 >= total * 95 {
                self.p95_us = Some(live_bucket_max(b));
                break;
            }
        }
    }

    /// `ins/s 12.3k  del/s 12.3k  q/s 4.5k`, leaving out rates that are zero.
    pub fn message(&self) -> String {
        use crate::metrics::figures::header;
        let names = [
            header("inserts_per_s"),
            header("deletes_per_s"),
            header("queries_per_s"),
        ];
        let parts: Vec<String> = names
            .iter()
            .zip(self.rates)
            .filter(|(_, r)| *r > 0.0)
            .map(|(n, r)| format!("{n} {}", rate(r)))
            .collect();
        let mut text = parts.join("  ");
        let tps: f64 = self.tpcc.iter().sum();
        if tps > 0.0 {
            // As sysbench's report lines: tps in total and per type, then the p95.
            let names = ["no", "pay", "os", "dl", "sl"];
            let types: Vec<String> = names
                .iter()
                .zip(self.tpcc)
                .map(|(n, r)| format!("{n} {}", rate(r)))
                .collect();
            text = format!("tps {} ({})", rate(tps), types.join(" "));
        }
        if let Some(p95) = self.p95_us.filter(|_| !text.is_empty()) {
            text.push_str(&format!("  p95 {}", micros(p95)));
        }
        text
    }
}

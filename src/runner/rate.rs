//! The background writer's schedule: batch k is due at `start + k * batch / rate`.
//!
//! A writer that falls behind does not skip what it missed and does not sleep: the next batch is
//! already due, so it is sent at once and the writer catches up. Each op's response time counts
//! from its due time (as pgbench -R and sysbench --rate do), so a stall shows in the latency of
//! every op it delayed, not just the one that hit it.

use std::time::{Duration, Instant};

/// Due times of a rate-limited sequence of batches.
#[derive(Clone, Debug)]
pub struct Schedule {
    start: Instant,
    /// Nanoseconds per row, times `batch`, kept as a rational to avoid drift.
    batch: u64,
    rate_per_s: u64,
    next: u64,
}

impl Schedule {
    /// `rate_per_s` rows per second in batches of `batch` rows, from `start`.
    pub fn new(start: Instant, rate_per_s: u64, batch: u64) -> Self {
        assert!(
            rate_per_s > 0 && batch > 0,
            "schedule needs a positive rate and batch"
        );
        Schedule {
            start,
            batch,
            rate_per_s,
            next: 0,
        }
    }

    /// Due time of batch `k`.
    pub fn due(&self, k: u64) -> Instant {
        let nanos = (k as u128 * self.batch as u128 * 1_000_000_000) / self.rate_per_s as u128;
        self.start + Duration::from_nanos(nanos as u64)
    }

    /// Due time of the next batch, without taking it.
    pub fn peek(&self) -> Instant {
        self.due(self.next)
    }

    /// Takes the next batch's due time.
    pub fn take(&mut self) -> Instant {
        let due = self.due(self.next);
        self.next += 1;
        due
    }

    /// Batches taken so far.
    pub fn taken(&self) -> u64 {
        self.next
    }
}

/// A schedule limited to a window: batches due before the deadline are sent (late ones at
/// once, catching up); none is sent after the deadline. Batches still unsent then are missed.
#[derive(Clone, Debug)]
pub struct Pacer {
    schedule: Schedule,
    deadline: Instant,
    due_in_window: u64,
}

impl Pacer {
    /// `rate_per_s` rows/s in batches of `batch` for `window` from `start`.
    pub fn new(start: Instant, rate_per_s: u64, batch: u64, window: Duration) -> Self {
        // Batches k with k * batch / rate < window: ceil(window * rate / batch).
        let num = window.as_nanos() * rate_per_s as u128;
        let den = batch as u128 * 1_000_000_000;
        Pacer {
            schedule: Schedule::new(start, rate_per_s, batch),
            deadline: start + window,
            due_in_window: num.div_ceil(den) as u64,
        }
    }

    /// The due time of the next batch, or `None` once the window has closed.
    pub fn next_due(&mut self) -> Option<Instant> {
        if self.schedule.taken() >= self.due_in_window || Instant::now() >= self.deadline {
            return None;
        }
        Some(self.schedule.take())
    }

    /// Batches due in the window that were not sent.
    pub fn missed(&self) -> u64 {
        self.due_in_window - self.schedule.taken().min(self.due_in_window)
    }
}

/// Sleeps until `due` if it is in the future; returns at once when behind schedule. A client
/// multiplexed with others waits on a timer of its thread (`crate::mux`), which serves the
/// others meanwhile.
pub fn wait_until(due: Instant) {
    crate::mux::sleep_until(due);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_times_follow_rate_without_drift() {
        let start = Instant::now();
        let s = Schedule::new(start, 1000, 10); // 100 batches/s
        assert_eq!(s.due(0), start);
        assert_eq!(s.due(1) - start, Duration::from_millis(10));
        assert_eq!(s.due(100_000) - start, Duration::from_secs(1000));
    }

    #[test]
    fn pacer_sends_what_is_due_in_the_window() {
        let start = Instant::now();
        let mut p = Pacer::new(start, 100, 10, Duration::from_secs(3600));
        assert_eq!(p.missed(), 36_000); // 10 batches/s for an hour
        assert_eq!(p.next_due(), Some(start));
        assert_eq!(p.next_due(), Some(start + Duration::from_millis(100)));
        assert_eq!(p.missed(), 36_000 - 2);
        // A window already over sends nothing and misses everything due in it.
        let mut q = Pacer::new(start, 5, 10, Duration::from_nanos(1));
        std::thread::sleep(Duration::from_millis(1));
        assert_eq!(q.next_due(), None);
        assert_eq!(q.missed(), 1);
    }

    #[test]
    fn odd_rates_stay_exact() {
        let start = Instant::now();
        let s = Schedule::new(start, 3, 1);
        assert_eq!(s.due(3) - start, Duration::from_secs(1));
        assert_eq!(s.due(1) - start, Duration::from_nanos(333_333_333));
    }
}

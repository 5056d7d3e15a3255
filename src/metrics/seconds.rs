//! Response times per second of a step, all its clients together: for the per-second mean and
//! p95 beside the largest (`OpSeries::mean_us`, `OpSeries::p95_us`).
//!
//! Each client thread counts the second it is in ([`OpenSecond`]: the live buckets, defined
//! here and counted by the recorder too ([`live_bucket`]), four per power of two of
//! microseconds, so a p95 is within 25%) and adds it into the step's [`SecondHistograms`] when
//! its next op falls in a later second, and at the step's end. The shared table is touched once per thread, op type and second, never per op,
//! and its size is bounded by the step's length, not by its clients: 656 bytes per second
//! and op type that occurred (2.4 MB for an hour), however many clients there are.

use std::sync::Mutex;

use crate::results::model::Op;

/// Buckets of the live response times: four per power of two of microseconds (within 25%).
pub const LIVE_BUCKETS: usize = 160;

/// The live bucket of a response time of `us` microseconds.
pub fn live_bucket(us: u64) -> usize {
    if us < 4 {
        return us as usize;
    }
    let p = 63 - us.leading_zeros() as usize;
    let sub = ((us >> (p - 2)) & 3) as usize;
    ((p - 1) * 4 + sub).min(LIVE_BUCKETS - 1)
}

/// The largest response time, microseconds, of live bucket `b`.
pub fn live_bucket_max(b: usize) -> u64 {
    if b < 4 {
        return b as u64;
    }
    let (p, sub) = (b / 4 + 1, (b % 4) as u64);
    ((4 + sub) << (p - 2)) + (1u64 << (p - 2)) - 1
}

/// Response times in one second: how many, their sum, and their live buckets.
#[derive(Clone, Debug)]
pub struct SecondHist {
    /// Ops that completed in the second.
    pub count: u64,
    /// Sum of their response times, microseconds.
    pub sum_us: u64,
    /// Ops per live bucket ([`live_bucket`]).
    pub buckets: [u32; LIVE_BUCKETS],
}

impl Default for SecondHist {
    fn default() -> Self {
        SecondHist {
            count: 0,
            sum_us: 0,
            buckets: [0; LIVE_BUCKETS],
        }
    }
}

impl SecondHist {
    /// Counts one response time of `us` microseconds.
    #[inline]
    pub fn record(&mut self, us: u64) {
        self.count += 1;
        self.sum_us = self.sum_us.saturating_add(us);
        let b = &mut self.buckets[live_bucket(us)];
        *b = b.saturating_add(1);
    }

    /// Adds `other` into this one.
    pub fn add(&mut self, other: &SecondHist) {
        self.count += other.count;
        self.sum_us = self.sum_us.saturating_add(other.sum_us);
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a = a.saturating_add(*b);
        }
    }

    /// Mean response time, microseconds (0 when none completed).
    pub fn mean_us(&self) -> u64 {
        self.sum_us.checked_div(self.count).unwrap_or(0)
    }

    /// The response time 95% of the second's ops met: the top of the live bucket that holds
    /// the op at rank ceil(0.95 n), so at most 25% above the exact value (0 when none).
    pub fn p95_us(&self) -> u64 {
        let rank = (self.count * 95).div_ceil(100).max(1);
        let mut seen = 0u64;
        for (b, &n) in self.buckets.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank && self.count > 0 {
                return live_bucket_max(b);
            }
        }
        0
    }
}

/// One thread's response times of one op type in the second it is in.
#[derive(Debug)]
pub struct OpenSecond {
    /// Which second of the step.
    pub second: usize,
    /// Its response times so far.
    pub hist: Box<SecondHist>,
}

/// A step's response times per second and op type, all its threads together.
#[derive(Debug, Default)]
pub struct SecondHistograms {
    ops: [Mutex<Vec<SecondHist>>; Op::COUNT],
}

impl SecondHistograms {
    /// Adds a thread's second `open` of `op`.
    pub fn add(&self, op: Op, open: &OpenSecond) {
        let mut seconds = self.ops[op.index()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if seconds.len() <= open.second {
            seconds.resize(open.second + 1, SecondHist::default());
        }
        seconds[open.second].add(&open.hist);
    }

    /// `op`'s seconds: per second its mean and p95 response time, microseconds (0: none).
    pub fn mean_p95(&self, op: Op) -> (Vec<u64>, Vec<u64>) {
        let seconds = self.ops[op.index()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        seconds.iter().map(|s| (s.mean_us(), s.p95_us())).unzip()
    }

    /// `op`'s ops per second, as counted here (what the series' `ops` also count).
    pub fn counts(&self, op: Op) -> Vec<u64> {
        let seconds = self.ops[op.index()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        seconds.iter().map(|s| s.count).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_buckets_hold_their_times_within_a_quarter() {
        let mut last = 0;
        for us in [
            0u64, 1, 3, 4, 7, 8, 9, 15, 16, 100, 999, 1_000, 65_432, 10_000_000,
        ] {
            let b = live_bucket(us);
            assert!(b >= last, "{us}");
            last = b;
            let max = live_bucket_max(b);
            assert!(
                max >= us && max as f64 <= us as f64 * 1.25 + 1.0,
                "{us}: {max}"
            );
            assert!(b == 0 || live_bucket_max(b - 1) < us, "{us}");
        }
    }

    #[test]
    fn mean_and_p95_of_a_second_are_within_a_bucket_of_the_exact_ones() {
        let mut h = SecondHist::default();
        // 1..=1000 us: mean 500.5, exact p95 950.
        for us in 1..=1000 {
            h.record(us);
        }
        assert_eq!(h.count, 1000);
        assert_eq!(h.mean_us(), 500);
        let p95 = h.p95_us();
        assert!((950..=1_188).contains(&p95), "{p95}");
        assert_eq!(SecondHist::default().p95_us(), 0);
        assert_eq!(SecondHist::default().mean_us(), 0);
    }

    #[test]
    fn threads_seconds_add_up() {
        let all = SecondHistograms::default();
        for (second, us) in [(0, 100), (0, 300), (2, 50)] {
            let mut open = OpenSecond {
                second,
                hist: Box::default(),
            };
            open.hist.record(us);
            all.add(Op::Insert, &open);
        }
        assert_eq!(all.counts(Op::Insert), [2, 0, 1]);
        let (mean, p95) = all.mean_p95(Op::Insert);
        assert_eq!(mean, [200, 0, 50]);
        assert_eq!(p95[1], 0);
        assert!(p95[0] >= 300 && p95[2] >= 50);
        assert!(all.counts(Op::Query).is_empty());
    }
}

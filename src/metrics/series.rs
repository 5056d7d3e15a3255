//! A step's per-second series: what its threads recorded second by second, all clients
//! together and per client, the rate percentiles read from them, and series of several hosts
//! added together.

use crate::metrics::recorder::{Op, Recorder};
use crate::results::model::{PerSecond, RatePercentiles, Series, SeriesSet};

/// Adds `rec`'s seconds into `set` (sums of counts, max of maxima), `len` seconds long.
fn add_seconds(set: &mut SeriesSet, rec: &Recorder, len: usize) {
    for op in Op::ALL {
        let seconds = rec.seconds(op);
        if rec.ops(op) == 0 || seconds.iter().all(|s| s.ops == 0) {
            continue;
        }
        let series = set
            .ops
            .entry(op.name().to_string())
            .or_insert_with(|| Series {
                ops: vec![0; len],
                rows: vec![0; len],
                max_us: vec![0; len],
            });
        for (s, sec) in seconds.iter().enumerate().take(len) {
            series.ops[s] += u64::from(sec.ops);
            series.rows[s] += u64::from(if op == Op::Query { sec.ops } else { sec.rows });
            series.max_us[s] = series.max_us[s].max(u64::from(sec.max_us));
        }
    }
}

/// The per-second series of a step's timed `recorders` (threads of `clients` clients), `len`
/// seconds long: all clients together, and per client.
pub fn per_second(recorders: &[Recorder], clients: usize, len: usize) -> PerSecond {
    let mut per_second = PerSecond {
        total: SeriesSet::default(),
        clients: vec![SeriesSet::default(); clients],
    };
    for rec in recorders {
        add_seconds(&mut per_second.total, rec, len);
        add_seconds(&mut per_second.clients[rec.client], rec, len);
    }
    per_second
}

/// The rate met or exceeded in x% of `seconds`.
pub fn rate_percentiles(seconds: &[u64]) -> Option<RatePercentiles> {
    if seconds.is_empty() {
        return None;
    }
    let mut sorted = seconds.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    // Met or exceeded in x% of seconds: the value at rank ceil(x% * n) in descending order.
    let at = |pct: f64| {
        let rank = ((pct / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    };
    Some(RatePercentiles {
        p50: at(50.0),
        p90: at(90.0),
        p95: at(95.0),
        p99: at(99.0),
        min: *sorted.last().unwrap_or(&0),
        seconds: sorted.len(),
    })
}

/// Adds `from` into `into`, `shift` seconds later: counts summed, maxima taken.
pub fn add_series(into: &mut SeriesSet, from: &SeriesSet, shift: usize) {
    for (op, s) in &from.ops {
        let t = into.ops.entry(op.clone()).or_default();
        let len = shift + s.ops.len();
        for v in [&mut t.ops, &mut t.rows, &mut t.max_us] {
            if v.len() < len {
                v.resize(len, 0);
            }
        }
        for (i, ((&n, &r), &m)) in s.ops.iter().zip(&s.rows).zip(&s.max_us).enumerate() {
            t.ops[shift + i] += n;
            t.rows[shift + i] += r;
            t.max_us[shift + i] = t.max_us[shift + i].max(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(ops: &[u64]) -> SeriesSet {
        let mut set = SeriesSet::default();
        set.ops.insert(
            "insert".into(),
            Series {
                ops: ops.to_vec(),
                rows: ops.iter().map(|n| n * 10).collect(),
                max_us: ops.iter().map(|n| n * 100).collect(),
            },
        );
        set
    }

    #[test]
    fn series_add_second_by_second_after_the_shift() {
        let mut total = SeriesSet::default();
        add_series(&mut total, &series(&[1, 2, 3]), 0);
        add_series(&mut total, &series(&[5, 5]), 1);
        let s = &total.ops["insert"];
        assert_eq!(s.ops, [1, 7, 8]);
        assert_eq!(s.rows, [10, 70, 80]);
        assert_eq!(s.max_us, [100, 500, 500]);
    }

    #[test]
    fn rate_percentiles_are_rates_met_in_share_of_seconds() {
        let secs: Vec<u64> = (1..=100).collect();
        let p = rate_percentiles(&secs).unwrap();
        assert_eq!(p.p50, 51); // 50 seconds had >= 51
        assert_eq!(p.p90, 11);
        assert_eq!(p.p99, 2);
        assert_eq!(p.min, 1);
        assert_eq!(p.seconds, 100);
        assert!(rate_percentiles(&[]).is_none());
    }
}

//! A step's per-second series: what its threads recorded second by second, merged over all
//! clients (kept in full) and per client (summarised; kept in full only on request), the rate
//! percentiles read from them, and series of several hosts added together.

use crate::metrics::recorder::{Op, Recorder};
use crate::metrics::seconds::SecondHistograms;
use crate::results::model::{
    ClientSeconds, OpSeries, PerSecond, RatePercentiles, SecondsSummary, SeriesSet,
};

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
            .or_insert_with(|| OpSeries {
                ops: vec![0; len],
                rows: vec![0; len],
                max_us: vec![0; len],
                ..OpSeries::default()
            });
        for (s, sec) in seconds.iter().enumerate().take(len) {
            series.ops[s] += u64::from(sec.ops);
            series.rows[s] += u64::from(if op.counts_as_query() {
                sec.ops
            } else {
                sec.rows
            });
            series.max_us[s] = series.max_us[s].max(u64::from(sec.max_us));
        }
    }
}

/// The per-second series of a step's timed `recorders` (threads of `clients` clients), `len`
/// seconds long: merged over all clients; each client's summarised over the step's first
/// `full_seconds` (its sums over all `len`), and kept in full when `keep_clients`.
///
/// One client's series is built at a time (a client has up to three threads), so a step of
/// 1,024 clients never holds them all unless they are kept.
pub fn per_second(
    recorders: &[Recorder],
    clients: usize,
    len: usize,
    full_seconds: usize,
    keep_clients: bool,
) -> PerSecond {
    let mut by_client: Vec<Vec<&Recorder>> = vec![Vec::new(); clients];
    let mut per_second = PerSecond::default();
    for rec in recorders {
        add_seconds(&mut per_second.total, rec, len);
        by_client[rec.client].push(rec);
    }
    if let Some(shared) = recorders.iter().find_map(Recorder::second_histograms) {
        add_mean_p95(&mut per_second.total, shared, len);
    }
    if keep_clients {
        per_second.clients = vec![SeriesSet::default(); clients];
    }
    for (client, recs) in by_client.iter().enumerate() {
        let mut set = SeriesSet::default();
        for rec in recs {
            add_seconds(&mut set, rec, len);
        }
        if !set.ops.is_empty() {
            per_second.client_summaries.push(ClientSeconds {
                client,
                ops: set
                    .ops
                    .iter()
                    .map(|(op, s)| (op.clone(), summarize_series(s, full_seconds)))
                    .collect(),
            });
        }
        if keep_clients {
            per_second.clients[client] = set;
        }
    }
    per_second
}

/// The mean and p95 response time of each second of `set`'s op types, from the step's
/// response times per second `shared`; a p95 is never above the second's largest.
fn add_mean_p95(set: &mut SeriesSet, shared: &SecondHistograms, len: usize) {
    for op in Op::ALL {
        let Some(series) = set.ops.get_mut(op.name()) else {
            continue;
        };
        let (mut mean, mut p95) = shared.mean_p95(op);
        mean.resize(len, 0);
        p95.resize(len, 0);
        for (p, &max) in p95.iter_mut().zip(&series.max_us) {
            *p = (*p).min(max);
        }
        series.mean_us = mean;
        series.p95_us = p95;
    }
}

/// `s` in a few figures: its sums and largest response time over all its seconds, its rates
/// and idle seconds over its first `full_seconds`.
pub fn summarize_series(s: &OpSeries, full_seconds: usize) -> SecondsSummary {
    let full = full_seconds.min(s.rows.len()).min(s.ops.len());
    let rows = &s.rows[..full];
    let (mut idle, mut run, mut longest) = (0, 0, 0);
    for &n in &s.ops[..full] {
        if n == 0 {
            idle += 1;
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    SecondsSummary {
        ops: s.ops.iter().sum(),
        rows: s.rows.iter().sum(),
        max_us: s.max_us.iter().copied().max().unwrap_or(0),
        rate: rate_percentiles(rows),
        max_rate: rows.iter().copied().max().unwrap_or(0),
        idle_seconds: idle,
        longest_idle_s: longest,
    }
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

/// Adds `from` into `into`, `shift` seconds later: counts summed, maxima taken, means
/// weighted by their ops, and p95s the larger (an upper bound: the hosts' response times are
/// not kept). Mean and p95 are kept only where both sides have them (or `into` is new).
pub fn add_series(into: &mut SeriesSet, from: &SeriesSet, shift: usize) {
    for (op, s) in &from.ops {
        let fresh = !into.ops.contains_key(op);
        let t = into.ops.entry(op.clone()).or_default();
        let timed = !s.mean_us.is_empty() && (fresh || !t.mean_us.is_empty());
        let len = shift + s.ops.len();
        let mut vectors = vec![&mut t.ops, &mut t.rows, &mut t.max_us];
        if timed {
            vectors.extend([&mut t.mean_us, &mut t.p95_us]);
        } else {
            t.mean_us.clear();
            t.p95_us.clear();
        }
        for v in vectors {
            if v.len() < len {
                v.resize(len, 0);
            }
        }
        for (i, ((&n, &r), &m)) in s.ops.iter().zip(&s.rows).zip(&s.max_us).enumerate() {
            let at = shift + i;
            if timed {
                let (before, total) = (t.ops[at], t.ops[at] + n);
                let sum = t.mean_us[at] * before + s.mean_us.get(i).copied().unwrap_or(0) * n;
                t.mean_us[at] = sum.checked_div(total).unwrap_or(0);
                t.p95_us[at] = t.p95_us[at].max(s.p95_us.get(i).copied().unwrap_or(0));
            }
            t.ops[at] += n;
            t.rows[at] += r;
            t.max_us[at] = t.max_us[at].max(m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn series(ops: &[u64]) -> SeriesSet {
        let mut set = SeriesSet::default();
        set.ops.insert(
            "insert".into(),
            OpSeries {
                ops: ops.to_vec(),
                rows: ops.iter().map(|n| n * 10).collect(),
                max_us: ops.iter().map(|n| n * 100).collect(),
                ..OpSeries::default()
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

    #[test]
    fn a_summary_sums_every_second_and_rates_full_ones() {
        // Seconds 1, 2 and 4 idle; the last (partial) second is summed but not rated.
        let set = series(&[3, 0, 0, 2, 0, 9]);
        let s = summarize_series(&set.ops["insert"], 5);
        assert_eq!((s.ops, s.rows, s.max_us), (14, 140, 900));
        assert_eq!((s.idle_seconds, s.longest_idle_s), (3, 2));
        assert_eq!(s.max_rate, 30);
        let rate = s.rate.expect("full seconds");
        assert_eq!((rate.min, rate.p50, rate.seconds), (0, 0, 5));
        assert!(summarize_series(&set.ops["insert"], 0).rate.is_none());
    }

    #[test]
    fn the_total_has_each_second_s_mean_and_p95_below_its_max() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let shared = std::sync::Arc::new(SecondHistograms::default());
        let mut a = Recorder::new(0).with_seconds(shared.clone());
        let mut b = Recorder::new(1).with_seconds(shared.clone());
        a.set_start(start);
        b.set_start(start);
        // Second 0: 100 and 300 us; second 1: 1 ms; second 2: none; second 3: 40 us.
        a.record(Op::Insert, 1, at(0), at(0) + Duration::from_micros(100));
        b.record(Op::Insert, 1, at(10), at(10) + Duration::from_micros(300));
        a.record(Op::Insert, 1, at(1_000), at(1_001));
        b.record(
            Op::Insert,
            1,
            at(3_000),
            at(3_000) + Duration::from_micros(40),
        );
        a.flush_seconds();
        b.flush_seconds();
        let total = per_second(&[a, b], 2, 4, 4, false).total;
        let s = &total.ops["insert"];
        assert_eq!(s.ops, [2, 1, 0, 1]);
        assert_eq!(s.mean_us, [200, 1_000, 0, 40]);
        assert_eq!(
            s.p95_us,
            [300, 1_000, 0, 40],
            "clamped to each second's max"
        );
        assert_eq!(shared.counts(Op::Insert), [2, 1, 0, 1]);
        // Merged with another host's series: means weighted by ops, p95s the larger.
        let mut merged = SeriesSet::default();
        add_series(&mut merged, &total, 0);
        add_series(&mut merged, &total, 1);
        let m = &merged.ops["insert"];
        assert_eq!(m.ops, [2, 3, 1, 1, 1]);
        assert_eq!(m.mean_us[1], (1_000 + 2 * 200) / 3);
        assert_eq!(m.p95_us[1], 1_000);
    }

    #[test]
    fn clients_are_summarised_and_kept_only_on_request() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        // Client 1 has two threads (queries and inserts); client 0 does nothing.
        let mut a = Recorder::new(1);
        let mut b = Recorder::new(1);
        let mut c = Recorder::new(2);
        for r in [&mut a, &mut b, &mut c] {
            r.set_start(start);
        }
        a.record(Op::Query, 1, at(0), at(100));
        a.record(Op::Query, 1, at(1_000), at(1_500));
        b.record(Op::Insert, 10, at(0), at(200));
        c.record(Op::Query, 1, at(1_100), at(1_200));
        let recs = [a, b, c];
        let summarised = per_second(&recs, 3, 2, 2, false);
        assert!(summarised.clients.is_empty());
        assert_eq!(summarised.total.ops["query"].ops, [1, 2]);
        let clients: Vec<usize> = summarised
            .client_summaries
            .iter()
            .map(|c| c.client)
            .collect();
        assert_eq!(clients, [1, 2]);
        let one = &summarised.client_summaries[0].ops;
        assert_eq!((one["query"].ops, one["query"].max_us), (2, 500_000));
        assert_eq!((one["insert"].rows, one["insert"].idle_seconds), (10, 1));
        let kept = per_second(&recs, 3, 2, 2, true);
        assert_eq!(kept.client_summaries, summarised.client_summaries);
        assert_eq!(kept.clients.len(), 3);
        assert!(kept.clients[0].ops.is_empty());
        assert_eq!(kept.clients[1].ops["insert"].rows, [10, 0]);
        assert_eq!(kept.clients[2].ops["query"].ops, [0, 1]);
    }
}

//! The data behind the per-second charts: each second of a step as it was measured.
//!
//! A step's series ([`OpSeries`]) hold one count per second since the step start, second `i`
//! covering `[i, i + 1)`. The step itself ends at `duration_s`, so:
//!
//! * its last second is usually **partial**: it lasted `duration_s - i`, not 1 s. Its rate is
//!   its count over that real length, and it is drawn (marked as partial) when it lasted at
//!   least [`MIN_PARTIAL_S`]; a shorter tail is left out of both charts, since one op more or
//!   less would swing its rate and its largest response time would be over a sliver of time.
//!   A step shorter than a second is one partial second, drawn whatever its length (its rate
//!   is the step's average).
//! * a query step's series may hold ops that completed after its window closed (queries in
//!   flight, a writer's last batches), in a second the step does not cover: they count in the
//!   step's totals and histograms but are not drawn.
//! * a second in which no op completed has no response time: it is a gap in response-time
//!   charts (in rate charts it is a real 0).

use crate::report::select::Group;
use crate::results::model::{OpSeries, StepResult};

/// A partial last second shorter than this (seconds) is left out of the charts.
pub const MIN_PARTIAL_S: f64 = 0.5;

/// Most samples drawn per line; longer series are reduced to this many buckets.
pub const MAX_POINTS: usize = 1500;

/// One plotted sample: the part of the step it covers and the value over it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Start, seconds since the step start.
    pub start: f64,
    /// Length covered, seconds: 1 for a full second, less for a partial last second (more for
    /// a bucket of a long series reduced to [`MAX_POINTS`]).
    pub len: f64,
    /// The value over it; `None` where nothing was measured (no op completed: a gap).
    pub value: Option<f64>,
    /// The step's last second, cut short by the step's end.
    pub partial: bool,
}

impl Sample {
    /// Where the sample is drawn: the middle of what it covers.
    pub fn mid(&self) -> f64 {
        self.start + self.len / 2.0
    }
}

/// The part of second `i` that lies inside a step lasting `duration_s` seconds: 1 for a full
/// second, less for the last, 0 for a second after the step's end.
pub fn second_len(i: usize, duration_s: f64) -> f64 {
    (duration_s - i as f64).clamp(0.0, 1.0)
}

/// One line's samples, and what was left out of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Drawn {
    /// Per second drawn, in time order.
    pub samples: Vec<Sample>,
    /// The length of a partial last second left out (shorter than [`MIN_PARTIAL_S`]).
    pub tail_left_out_s: Option<f64>,
}

/// The seconds drawn of a series of `n` seconds in a step lasting `duration_s`: each second
/// that lies in the step, with its real length, but a partial last second shorter than
/// [`MIN_PARTIAL_S`] (unless it is the whole step), whose length is returned apart.
fn drawn_seconds(n: usize, duration_s: f64) -> (Vec<(usize, f64)>, Option<f64>) {
    let mut out = Vec::new();
    for i in 0..n {
        let len = second_len(i, duration_s);
        if len <= 0.0 {
            break;
        }
        if len < MIN_PARTIAL_S && i > 0 {
            return (out, Some(len));
        }
        out.push((i, len));
    }
    (out, None)
}

/// Rates per second: `counts[i]` over the real length of second `i` in a step lasting
/// `duration_s`; see the module documentation for the last second and what lies after the end.
pub fn rates(counts: &[u64], duration_s: f64) -> Drawn {
    let (seconds, tail_left_out_s) = drawn_seconds(counts.len(), duration_s);
    Drawn {
        samples: seconds
            .into_iter()
            .map(|(i, len)| Sample {
                start: i as f64,
                len,
                value: Some(counts[i] as f64 / len),
                partial: len < 1.0,
            })
            .collect(),
        tail_left_out_s,
    }
}

/// The largest (or p95, or mean) response time in each second of a step lasting `duration_s`
/// (microseconds), over the same seconds as [`rates`]; seconds in which no op completed are
/// gaps.
pub fn maxima(max_us: &[u64], duration_s: f64) -> Drawn {
    let (seconds, tail_left_out_s) = drawn_seconds(max_us.len(), duration_s);
    Drawn {
        samples: seconds
            .into_iter()
            .map(|(i, len)| Sample {
                start: i as f64,
                len,
                value: (max_us[i] > 0).then_some(max_us[i] as f64),
                partial: len < 1.0,
            })
            .collect(),
        tail_left_out_s,
    }
}

/// Reduces `samples` to at most [`MAX_POINTS`] buckets of consecutive samples: the rate over
/// the bucket (`sum(value * len) / sum(len)`) or, with `keep_max`, its largest value, so stalls
/// stay visible. A bucket of gaps only is a gap.
pub fn reduce(samples: &[Sample], keep_max: bool) -> Vec<Sample> {
    let per = samples.len().div_ceil(MAX_POINTS).max(1);
    if per == 1 {
        return samples.to_vec();
    }
    samples
        .chunks(per)
        .map(|c| {
            let len: f64 = c.iter().map(|s| s.len).sum();
            let measured: Vec<(f64, f64)> =
                c.iter().filter_map(|s| Some((s.value?, s.len))).collect();
            let value = if measured.is_empty() {
                None
            } else if keep_max {
                Some(measured.iter().map(|m| m.0).fold(f64::MIN, f64::max))
            } else {
                let covered: f64 = measured.iter().map(|m| m.1).sum();
                Some(measured.iter().map(|(v, l)| v * l).sum::<f64>() / covered)
            };
            Sample {
                start: c[0].start,
                len,
                value,
                partial: c.iter().any(|s| s.partial),
            }
        })
        .collect()
}

/// What a per-second chart shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Rows (or queries) per second.
    Rate,
    /// The largest response time in each second, microseconds.
    MaxResponse,
    /// The p95 response time of each second, microseconds (reduced buckets: their largest).
    P95Response,
    /// The mean response time of each second, microseconds (reduced buckets: their largest,
    /// so a slow second stays visible).
    MeanResponse,
    /// A DBMS gauge (`op` is its name): its level at the end of each second, or its increase
    /// in each second (`report::gauges`).
    Gauge,
}

impl Kind {
    /// A response time per second (log scale; a second without an op is a gap).
    pub fn is_response(self) -> bool {
        matches!(
            self,
            Kind::MaxResponse | Kind::P95Response | Kind::MeanResponse
        )
    }
}

/// Which per-second response time of a series a chart draws.
type Pick = fn(&OpSeries) -> &[u64];

/// One run's line in a chart.
#[derive(Clone, Debug)]
pub struct Line {
    /// Colour index: the run's group.
    pub color: usize,
    /// The run.
    pub run_id: String,
    /// The samples, in time order (at most [`MAX_POINTS`]).
    pub samples: Vec<Sample>,
    /// A partial last second left out, seconds.
    pub tail_left_out_s: Option<f64>,
}

/// One per-second chart of a step: one op type, rates or largest response times, one line per
/// run.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Op type (`insert`, `delete`, `query`).
    pub op: String,
    /// Rates or response times.
    pub kind: Kind,
    /// The unit of rates: `rows/s`, or `queries/s`.
    pub unit: &'static str,
    /// The background writer's target (insert rates of query steps), rows/s.
    pub target: Option<f64>,
    /// One line per run that has the op in this step.
    pub lines: Vec<Line>,
}

/// Step `step` of each run in `groups` that has it, with its group's index and run id.
pub fn step_of_runs<'a>(groups: &'a [Group], step: &str) -> Vec<(usize, &'a str, &'a StepResult)> {
    groups
        .iter()
        .enumerate()
        .flat_map(|(gi, g)| g.runs.iter().map(move |r| (gi, r)))
        .filter_map(|(gi, r)| {
            Some((
                gi,
                r.run_id.as_str(),
                r.steps.iter().find(|s| s.name == step)?,
            ))
        })
        .collect()
}

/// The per-second charts of `step` over the runs of `groups`: per op type, its rate and its
/// largest, p95 and mean response time in each second (the last two where runs have them). `target` is the background writer's insert rate.
pub fn step_charts(groups: &[Group], step: &str, target: Option<f64>) -> Vec<Chart> {
    let runs = step_of_runs(groups, step);
    let mut op_names: Vec<&String> = runs
        .iter()
        .flat_map(|(_, _, s)| s.per_second.total.ops.keys())
        .collect();
    op_names.sort();
    op_names.dedup();
    let mut out = Vec::new();
    for op in op_names {
        let series: Vec<(usize, &str, &OpSeries, f64)> = runs
            .iter()
            .filter_map(|&(gi, id, s)| {
                Some((gi, id, s.per_second.total.ops.get(op)?, s.duration_s))
            })
            .collect();
        let unit = if op == "query" { "queries/s" } else { "rows/s" };
        out.push(Chart {
            op: op.clone(),
            kind: Kind::Rate,
            unit,
            target: if op == "insert" { target } else { None },
            lines: series
                .iter()
                .map(|&(gi, id, s, d)| {
                    let r = rates(&s.rows, d);
                    Line {
                        color: gi,
                        run_id: id.to_string(),
                        samples: reduce(&r.samples, false),
                        tail_left_out_s: r.tail_left_out_s,
                    }
                })
                .collect(),
        });
        let responses: [(Kind, Pick); 3] = [
            (Kind::MaxResponse, |s| &s.max_us),
            (Kind::P95Response, |s| &s.p95_us),
            (Kind::MeanResponse, |s| &s.mean_us),
        ];
        for (kind, values) in responses {
            // Mean and p95 only where a run recorded them (documents before them have none).
            let lines: Vec<Line> = series
                .iter()
                .filter(|&&(_, _, s, _)| !values(s).is_empty())
                .map(|&(gi, id, s, d)| {
                    let m = maxima(values(s), d);
                    Line {
                        color: gi,
                        run_id: id.to_string(),
                        samples: reduce(&m.samples, true),
                        tail_left_out_s: m.tail_left_out_s,
                    }
                })
                .collect();
            if !lines.is_empty() {
                out.push(Chart {
                    op: op.clone(),
                    kind,
                    unit,
                    target: None,
                    lines,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(s: &[Sample]) -> Vec<Option<f64>> {
        s.iter().map(|s| s.value).collect()
    }

    #[test]
    fn a_long_partial_last_second_is_a_rate_over_its_length() {
        // 2.6 s: two full seconds and 0.6 s holding 60 rows: 100 rows/s, not 60.
        let r = rates(&[100, 100, 60], 2.6);
        assert_eq!(r.samples.len(), 3);
        assert!(
            r.samples
                .iter()
                .all(|s| (s.value.unwrap() - 100.0).abs() < 1e-9)
        );
        assert!((r.samples[2].len - 0.6).abs() < 1e-12);
        assert!(r.samples[2].partial && !r.samples[1].partial);
        assert!((r.samples[2].mid() - 2.3).abs() < 1e-12);
        assert_eq!(r.tail_left_out_s, None);
    }

    #[test]
    fn a_short_partial_last_second_is_left_out_and_said_so() {
        // The qr100 case of issue #14: 2 queries in the last 0.004 s.
        let r = rates(&[134918, 168261, 2], 2.004);
        assert_eq!(values(&r.samples), [Some(134918.0), Some(168261.0)]);
        assert!((r.tail_left_out_s.unwrap() - 0.004).abs() < 1e-9);
    }

    #[test]
    fn ops_after_the_window_are_not_drawn() {
        // A 3 s query step whose in-flight queries ended at 3.001 s, in second 3.
        let r = rates(&[10, 10, 10, 2], 3.0);
        assert_eq!(r.samples.len(), 3);
        assert_eq!(r.tail_left_out_s, None);
        assert_eq!(maxima(&[5, 6, 7, 8], 3.0).samples.len(), 3);
    }

    #[test]
    fn a_step_shorter_than_a_second_is_its_average_rate() {
        // 104k rows/s over 0.3 s, however short.
        let r = rates(&[31_200], 0.3);
        assert_eq!(r.samples.len(), 1);
        assert!((r.samples[0].value.unwrap() - 104_000.0).abs() < 1e-6);
        assert!(r.samples[0].partial);
        let r = rates(&[1_000], 0.01);
        assert_eq!(r.samples.len(), 1, "the whole step is drawn");
    }

    #[test]
    fn seconds_without_an_op_are_gaps_in_response_times_and_zero_in_rates() {
        let m = maxima(&[50, 0, 70], 2.5).samples;
        assert_eq!(values(&m), [Some(50.0), None, Some(70.0)]);
        assert!(m[2].partial);
        // The same seconds as the rates: a short last second is left out of both.
        let m = maxima(&[50, 60, 70], 2.2);
        assert_eq!(values(&m.samples), [Some(50.0), Some(60.0)]);
        assert!((m.tail_left_out_s.unwrap() - 0.2).abs() < 1e-9);
        let r = rates(&[5, 0, 5], 3.0);
        assert_eq!(values(&r.samples), [Some(5.0), Some(0.0), Some(5.0)]);
    }

    #[test]
    fn reduce_keeps_short_series_and_buckets_long_ones() {
        let short = rates(&[1, 2, 3], 3.0).samples;
        assert_eq!(reduce(&short, false), short);
        let counts: Vec<u64> = (0..(MAX_POINTS * 3)).map(|i| (i % 3) as u64).collect();
        let n = counts.len() as f64;
        let r = reduce(&rates(&counts, n).samples, false);
        assert_eq!(r.len(), MAX_POINTS);
        assert!(r.iter().all(|s| (s.value.unwrap() - 1.0).abs() < 1e-9));
        assert!(r.iter().all(|s| (s.len - 3.0).abs() < 1e-9));
        let m = reduce(&maxima(&counts, n).samples, true);
        assert!(m.iter().all(|s| s.value == Some(2.0)));
        // Buckets with only gaps stay gaps; a rate bucket with a partial second weighs it by
        // its length.
        let gaps = reduce(
            &maxima(&vec![0; MAX_POINTS * 2], (MAX_POINTS * 2) as f64).samples,
            true,
        );
        assert!(gaps.iter().all(|s| s.value.is_none()));
        let mut counts = vec![10u64; MAX_POINTS * 2];
        counts.push(5);
        let d = (MAX_POINTS * 2) as f64 + 0.5;
        let r = reduce(&rates(&counts, d).samples, false);
        let last = r.last().unwrap();
        assert!(last.partial);
        assert!((last.value.unwrap() - 10.0).abs() < 1e-9, "{last:?}");
    }
}

//! Per-second charts of the DBMS's gauges (`efficiency.per_second.gauges`, read once a second
//! by the runner, see `Dbms::gauges`), on the same time axis as the step's rate charts.
//!
//! Reading `i` was taken at the end of second `i` of the step; it is drawn over that second.
//! A gauge whose name ends in `_total` is cumulative (WAL bytes, checkpoints, stall
//! microseconds): it is drawn as its increase in each second, the first second (which has no
//! reading before it) left as a gap. Gauges that are zero in every reading of every run are
//! left out (listed under the charts).

use std::collections::BTreeSet;

use crate::report::per_second::{Chart, Kind, Line, MAX_POINTS, Sample, reduce, step_of_runs};
use crate::report::select::Group;

/// Whether gauge `name` is cumulative (drawn per second).
pub fn is_cumulative(name: &str) -> bool {
    name.ends_with("_total")
}

/// One run's samples of one gauge: its level at the end of each second, or its increase over
/// each second for a cumulative gauge.
pub fn gauge_samples(readings: &[Option<f64>], cumulative: bool) -> Vec<Sample> {
    readings
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let value = if cumulative {
                match (i.checked_sub(1).and_then(|p| readings[p]), v) {
                    (Some(prev), Some(now)) => Some((now - prev).max(0.0)),
                    _ => None,
                }
            } else {
                *v
            };
            Sample {
                start: i as f64,
                len: 1.0,
                value,
                partial: false,
            }
        })
        .collect()
}

/// The gauge charts of `step` over the runs of `groups`, one per gauge (by name), and the
/// names of the gauges left out because they were zero throughout.
pub fn gauge_charts(groups: &[Group], step: &str) -> (Vec<Chart>, Vec<String>) {
    let runs = step_of_runs(groups, step);
    let names: BTreeSet<&String> = runs
        .iter()
        .filter_map(|(_, _, s)| s.efficiency.as_ref())
        .flat_map(|e| e.per_second.gauges.keys())
        .collect();
    let mut charts = Vec::new();
    let mut flat = Vec::new();
    for name in names {
        let cumulative = is_cumulative(name);
        let lines: Vec<Line> = runs
            .iter()
            .filter_map(|&(gi, id, s)| {
                let readings = s.efficiency.as_ref()?.per_second.gauges.get(name)?;
                let samples = gauge_samples(readings, cumulative);
                Some(Line {
                    color: gi,
                    run_id: id.to_string(),
                    samples: if samples.len() > MAX_POINTS {
                        reduce(&samples, false)
                    } else {
                        samples
                    },
                    tail_left_out_s: None,
                })
            })
            .collect();
        let any = lines
            .iter()
            .any(|l| l.samples.iter().any(|s| s.value.is_some_and(|v| v != 0.0)));
        if !any {
            flat.push(name.clone());
            continue;
        }
        charts.push(Chart {
            op: name.clone(),
            kind: Kind::Gauge,
            unit: if cumulative { "per second" } else { "level" },
            target: None,
            lines,
        });
    }
    (charts, flat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(s: &[Sample]) -> Vec<Option<f64>> {
        s.iter().map(|s| s.value).collect()
    }

    #[test]
    fn levels_are_drawn_as_read_and_totals_as_increases() {
        let r = [Some(5.0), None, Some(7.0), Some(10.0)];
        assert_eq!(values(&gauge_samples(&r, false)), r.to_vec());
        assert_eq!(
            values(&gauge_samples(&r, true)),
            vec![None, None, None, Some(3.0)]
        );
        let s = gauge_samples(&r, false);
        assert_eq!((s[2].start, s[2].len), (2.0, 1.0));
        assert!(is_cumulative("pg.wal_bytes_total"));
        assert!(!is_cumulative("Innodb_history_list_length"));
    }
}

//! A step's replication figures: each replica's replay lag over the step, from the
//! per-second gauges `<dbms>.replica.<name>.replay_lag_s` / `.bytes_behind` (`pg.replica.`:
//! PostgreSQL's streaming replicas, `mysql.replica.`: MariaDB's binlog replicas), and its
//! catch-up at the step's end (`Dbms::replica_catch_up`).

use crate::results::model::{ReplicaLag, StepResult};

/// The gauge prefixes of a replica's lag, by DBMS.
const PREFIXES: [&str; 2] = ["pg.replica.", "mysql.replica."];

/// Each replica's lag over `step` and its `catch_up` (by name, in the replicas' order; a
/// replica seen only in the gauges comes after, without a catch-up).
pub fn replica_lags(step: &StepResult, catch_up: &[(String, Option<f64>)]) -> Vec<ReplicaLag> {
    let gauges = step.efficiency.as_ref().map(|e| &e.per_second.gauges);
    let readings = |name: &str, figure: &str| -> Vec<f64> {
        PREFIXES
            .iter()
            .find_map(|p| gauges.and_then(|g| g.get(&format!("{p}{name}.{figure}"))))
            .map(|v| v.iter().flatten().copied().collect())
            .unwrap_or_default()
    };
    let mut names: Vec<String> = catch_up.iter().map(|(n, _)| n.clone()).collect();
    for key in gauges.into_iter().flat_map(|g| g.keys()) {
        if let Some(name) = PREFIXES
            .iter()
            .find_map(|p| key.strip_prefix(p))
            .and_then(|k| k.strip_suffix(".replay_lag_s"))
            && !names.iter().any(|n| n == name)
        {
            names.push(name.to_string());
        }
    }
    names
        .into_iter()
        .map(|name| {
            let lag = readings(&name, "replay_lag_s");
            let behind = readings(&name, "bytes_behind");
            ReplicaLag {
                readings: lag.len(),
                max_replay_lag_s: lag.iter().copied().fold(0.0, f64::max),
                p99_replay_lag_s: percentile(&lag, 0.99),
                max_bytes_behind: behind.iter().copied().fold(0.0, f64::max),
                catch_up_s: catch_up.iter().find(|(n, _)| *n == name).and_then(|c| c.1),
                name,
            }
        })
        .collect()
}

/// The `q` quantile of `values` (nearest rank); 0 when there are none.
fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentile() {
        assert_eq!(percentile(&[], 0.99), 0.0);
        assert_eq!(percentile(&[3.0], 0.99), 3.0);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.99), 99.0);
        assert_eq!(percentile(&v, 0.5), 50.0);
    }
}

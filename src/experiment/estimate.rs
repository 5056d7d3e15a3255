//! How long a cell should take, before it has run: each step's rows divided by a rate assumed
//! for the DBMS on a 2-core machine (its descriptor's [`crate::dbms::AssumedRates`]), query
//! steps by their seconds, plus the server's start and stop and the maintenance pause. Once cells have run, the runner scales the remaining
//! estimates by how far the finished ones were off.

use std::time::Duration;

use crate::dbms::{DbmsKind, Params};
use crate::request::{InsertBenchmarkSpec, MicroSpec, Step, WorkloadSpec};

/// One line saying how estimates are made, for `--dry-run`.
pub const METHOD: &str = "estimate: rows per step / an assumed rate for the DBMS on a 2-core \
     machine (l.i0 80-120k rows/s, l.x 35k rows/s for MyRocks and 150-300k for the others, l.i1 7-25k rows/s, l.i2 6-7k rows/s), \
     query steps by their seconds, plus server start/stop and the maintenance pause (InnoDB's \
     flush ~20 s); larger databases and slower disks take longer. While running, the ETA is \
     rescaled by how long the finished cells actually took.";

/// Estimated duration of one cell running `w`.
pub fn workload(kind: DbmsKind, params: &Params, w: &WorkloadSpec, maintenance: bool) -> Duration {
    match w {
        WorkloadSpec::InsertBenchmark(w) => cell(kind, params, w, maintenance),
        WorkloadSpec::Micro(m) => micro(kind, params, m, maintenance),
        WorkloadSpec::Tpcc(t) => tpcc(kind, params, t, maintenance),
    }
}

/// The pauses of `[workload] cooldown` (`--cooldown`): `secs` before every step of `w` but
/// the first.
pub fn cooldowns(w: &WorkloadSpec, secs: u64) -> Duration {
    let steps = match w {
        WorkloadSpec::InsertBenchmark(w) => w.steps.len(),
        WorkloadSpec::Micro(m) => m.step_names().len(),
        WorkloadSpec::Tpcc(t) => t.step_names().len(),
    };
    Duration::from_secs(secs.saturating_mul(steps.saturating_sub(1) as u64))
}

/// Estimated duration of one TPC-C cell: the load at the Insert Benchmark's load rate, the
/// warm-up and seconds at each client count, a maintenance pause after the load.
pub fn tpcc(
    kind: DbmsKind,
    params: &Params,
    t: &crate::request::TpccSpec,
    maintenance: bool,
) -> Duration {
    let r = kind.assumed_rates(params);
    let mut s = r.server_s;
    if t.prepare {
        s += t.loaded_rows() as f64 / r.load + t.loaded_rows() as f64 / r.index;
        if maintenance {
            s += r.pause_s;
        }
    }
    s += t.clients.len() as f64 * ((t.warmup + t.seconds) as f64 + 0.8);
    Duration::from_secs_f64(s)
}

/// Estimated duration of one cell of microbenchmarks: the load and the index at the Insert
/// Benchmark's rates, each benchmark's warm-up and seconds at each client count, and a
/// maintenance pause after the load and after each benchmark that writes.
pub fn micro(kind: DbmsKind, params: &Params, m: &MicroSpec, maintenance: bool) -> Duration {
    let r = kind.assumed_rates(params);
    let rows = m.tables as f64 * m.table_rows as f64;
    let mut s = r.server_s;
    if m.prepare {
        s += rows / r.load + rows / r.index;
    }
    for _ in &m.benchmarks {
        // Connecting the clients, sampling, saving the results; an insert step's tables.
        s += m.clients.len() as f64 * ((m.warmup + m.seconds) as f64 + 0.8);
    }
    if maintenance {
        let (pauses, post_write) = micro_pauses(m);
        // A post-write pause lasts its wait from its start, maintenance included.
        let wait = (m.post_write_wait() as f64).max(r.pause_s);
        s += (pauses - post_write) as f64 * r.pause_s + post_write as f64 * wait;
    }
    Duration::try_from_secs_f64(s)
        .unwrap_or(MAX_ESTIMATE)
        .min(MAX_ESTIMATE)
}

/// The maintenance pauses of a microbenchmark run and how many of them follow writes (and so
/// wait), as the workload places them: after the load before the first benchmark, and before
/// a read that follows writes.
fn micro_pauses(m: &MicroSpec) -> (usize, usize) {
    let (mut pauses, mut post_write) = (0, 0);
    let (mut dirty, mut wrote, mut first) = (m.prepare, false, m.prepare);
    for name in &m.benchmarks {
        let writes = crate::workload::micro::find(name).is_some_and(|b| b.writes);
        for _ in &m.clients {
            if dirty && (first || !writes) {
                pauses += 1;
                post_write += usize::from(wrote);
                (dirty, wrote) = (false, false);
            }
            first = false;
            dirty |= writes;
            wrote |= writes;
        }
    }
    (pauses, post_write)
}

/// Estimated duration of one cell of the Insert Benchmark.
pub fn cell(
    kind: DbmsKind,
    params: &Params,
    w: &InsertBenchmarkSpec,
    maintenance: bool,
) -> Duration {
    let r = kind.assumed_rates(params);
    let clients = w.clients as f64;
    let mut s = r.server_s;
    let mut has_query = false;
    for step in &w.steps {
        s += match step {
            Step::LoadInitial => w.l0_rows as f64 * clients / r.load,
            Step::CreateIndexes => w.l0_rows as f64 * clients / r.index,
            Step::LoadMore => w.l1_rows as f64 * clients / r.more,
            Step::LoadMoreSmall => w.l2_rows as f64 * clients / r.more_small,
            // Each scan reads every row: the primary key twice and each index once, at about
            // ten times the load's rate.
            Step::Scan => {
                w.l0_rows as f64 * clients * (2 + w.secondary_indexes) as f64 / (10.0 * r.load)
            }
            Step::QueryRange(_) | Step::QueryPoint(_) => {
                has_query = true;
                (w.warmup + w.query_seconds) as f64 + 0.5
            }
        };
        // Connecting the clients, sampling, saving the results.
        s += 0.3;
    }
    if maintenance && has_query {
        s += r.pause_s;
    }
    // Sizes are validated after they are estimated (and huge ones may be valid): an estimate
    // is capped so that neither it nor the sum over every cell can overflow.
    Duration::try_from_secs_f64(s)
        .unwrap_or(MAX_ESTIMATE)
        .min(MAX_ESTIMATE)
}

/// The largest estimate of one cell (100 years); 10,000 cells of it still add up.
pub const MAX_ESTIMATE: Duration = Duration::from_secs(100 * 365 * 86_400);

/// `1h02m`, `3m05s`, `42s`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_adds_steps_and_fixed_costs() {
        let w = InsertBenchmarkSpec {
            clients: 2,
            steps: vec![Step::LoadInitial, Step::QueryPoint(100)],
            l0_rows: 120_000,
            query_seconds: 10,
            ..InsertBenchmarkSpec::default()
        };
        let kind = DbmsKind::find("mariadb").unwrap();
        let params = kind
            .params(&crate::dbms::TargetSettings {
                engine: Some("rocksdb".into()),
                ..Default::default()
            })
            .unwrap();
        let d = cell(kind, &params, &w, true);
        // 6 s server + 2.4 s load + 10.5 s query + 2 s pause + 0.6 s overhead
        assert!((d.as_secs_f64() - 21.5).abs() < 0.01, "{d:?}");
        assert_eq!(human(Duration::from_secs(42)), "42s");
        assert_eq!(human(Duration::from_secs(185)), "3m05s");
        assert_eq!(human(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn micro_pauses_after_the_load_and_before_reads_after_writes() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect();
        let m = MicroSpec {
            benchmarks: names(&[
                "point-query.pre",
                "update-one",
                "update-index",
                "point-query",
            ]),
            clients: vec![1, 2],
            post_write_pause: Some(30),
            ..MicroSpec::default()
        };
        // After the load; before point-query.c1, after the writes (and with its wait).
        assert_eq!(micro_pauses(&m), (2, 1));
        let kind = DbmsKind::find("sqlite").unwrap();
        let params = kind.params(&Default::default()).unwrap();
        let with = micro(kind, &params, &m, true);
        let without = micro(kind, &params, &m, false);
        assert!(
            with >= without + Duration::from_secs(30),
            "{with:?} {without:?}"
        );
    }

    #[test]
    fn cooldowns_come_between_steps_only() {
        let w = WorkloadSpec::InsertBenchmark(InsertBenchmarkSpec {
            steps: vec![
                Step::LoadInitial,
                Step::QueryPoint(100),
                Step::QueryRange(100),
            ],
            ..InsertBenchmarkSpec::default()
        });
        assert_eq!(cooldowns(&w, 5), Duration::from_secs(10));
        assert_eq!(cooldowns(&w, 0), Duration::ZERO);
        // Micro: prepare + 2 benchmarks x 2 client counts = 5 steps, 4 pauses.
        let m = WorkloadSpec::Micro(MicroSpec {
            benchmarks: vec!["point-query".into(), "insert".into()],
            clients: vec![1, 2],
            ..MicroSpec::default()
        });
        assert_eq!(cooldowns(&m, 3), Duration::from_secs(12));
    }

    #[test]
    fn huge_sizes_give_a_capped_estimate_not_a_panic() {
        let w = InsertBenchmarkSpec {
            clients: 1024,
            steps: vec![Step::LoadInitial, Step::QueryRange(100)],
            l0_rows: u64::MAX,
            query_seconds: u64::MAX,
            ..InsertBenchmarkSpec::default()
        };
        let d = cell(DbmsKind::find("sqlite").unwrap(), &Params::new(), &w, true);
        assert_eq!(d, MAX_ESTIMATE);
        let total: Duration = std::iter::repeat_n(d, crate::experiment::plan::MAX_CELLS).sum();
        assert!(total >= MAX_ESTIMATE);
    }
}

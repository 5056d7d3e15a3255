//! What `ibench compare` compares per step: each metric's value for one run (the sample when
//! runs are the unit) and its per-second samples (when a side has a single run).
//!
//! Keys are those of the report's figures where the report has the figure
//! (`inserts_per_s`, `dbms_cpu_us_per_op`, ...), so a report can look a comparison up by them.

use super::stats::Second;
pub use crate::report::figures::Better;
use crate::report::figures::{find, label};
use crate::results::model::{Op, OpSeries, StepResult};

type RunFn = Box<dyn Fn(&StepResult) -> Option<f64>>;
type SecondsFn = Box<dyn Fn(&StepResult) -> Vec<Second>>;
type Total = fn(&StepResult) -> f64;

/// A metric compared between two sides.
pub struct Metric {
    /// Stable key (JSON; the report's key for the same figure).
    pub key: String,
    /// Name in the output: the registry's label (`ins/s`, `q/s`, ...; `figures.rs`).
    pub name: String,
    /// Which direction is better.
    pub better: Better,
    /// What a run needs to have the metric, said when one does not (`""`: nothing special).
    pub needs: &'static str,
    /// The step in which a run's value is read (0: continuous), e.g. one clock tick of CPU
    /// time over the step's ops.
    pub quantum: fn(&StepResult) -> f64,
    run: RunFn,
    seconds: Option<SecondsFn>,
}

impl Metric {
    /// The run's value for the step (`None` when the run did not measure it).
    pub fn run_value(&self, step: &StepResult) -> Option<f64> {
        (self.run)(step).filter(|v| v.is_finite())
    }

    /// The step's full seconds as samples (`None`: the metric has one value per run only).
    pub fn seconds(&self, step: &StepResult) -> Option<Vec<Second>> {
        self.seconds.as_ref().map(|f| f(step))
    }
}

/// Drops the first and the last (partial) second.
pub fn trim<T: Clone>(v: Vec<T>) -> Vec<T> {
    if v.len() > 2 {
        v[1..v.len() - 1].to_vec()
    } else {
        Vec::new()
    }
}

fn op_series(s: &StepResult, op: &str) -> Vec<f64> {
    s.per_second
        .total
        .ops
        .get(op)
        .map(|x| x.rows.iter().map(|&v| v as f64).collect())
        .unwrap_or_default()
}

/// The largest response time of each full second in which at least one `op` completed (a
/// second with none has no response time: its recorded 0 is not a sample, and counting it
/// would pull the mean down exactly where a stall is).
pub fn max_response(x: &OpSeries) -> Vec<f64> {
    let ops = trim(x.ops.iter().map(|&v| v as f64).collect());
    let max = trim(x.max_us.iter().map(|&v| v as f64).collect());
    max.into_iter()
        .zip(ops)
        .filter(|(_, n)| *n > 0.0)
        .map(|(m, _)| m)
        .collect()
}

fn max_response_of(s: &StepResult, op: &str) -> Vec<f64> {
    s.per_second
        .total
        .ops
        .get(op)
        .map(max_response)
        .unwrap_or_default()
}

/// The per-op divisor of a step's cost series: rows inserted per second in load steps,
/// queries per second in query steps.
fn ops_per_second(s: &StepResult) -> Vec<f64> {
    let per = s
        .efficiency
        .as_ref()
        .map(|e| e.per.as_str())
        .unwrap_or("insert");
    if per != "query" {
        return op_series(s, per);
    }
    // Per query: every op that counts as one (a query, or a TPC-C transaction of any type).
    let mut total: Vec<f64> = Vec::new();
    for op in Op::ALL.into_iter().filter(|o| o.counts_as_query()) {
        let series = op_series(s, op.name());
        if total.len() < series.len() {
            total.resize(series.len(), 0.0);
        }
        for (t, v) in total.iter_mut().zip(series) {
            *t += v;
        }
    }
    total
}

/// Full seconds of a cost series as (cost in us, ops) samples, seconds without ops dropped.
fn per_op_seconds(cost_s: &[f64], ops: &[f64]) -> Vec<Second> {
    let pairs: Vec<(f64, f64)> = cost_s.iter().copied().zip(ops.iter().copied()).collect();
    trim(pairs)
        .into_iter()
        .filter(|(_, o)| *o > 0.0)
        .map(|(c, o)| Second {
            num: c * 1e6,
            den: o,
        })
        .collect()
}

/// One clock tick of CPU time over the step's ops, in us per op (0 without ops).
fn cpu_tick_per_op_us(s: &StepResult) -> f64 {
    match s.efficiency.as_ref().map(|e| e.ops) {
        Some(ops) if ops > 0 => crate::report::figures::resolution("dbms_cpu_us_per_op", s),
        _ => 0.0,
    }
}

/// Which way figure `key` is better, as the registry (`figures.rs`) says; higher for a key it
/// lacks (none of those compared but a TPC-C transaction type's rate, which names its own).
fn better(key: &str) -> Better {
    find(key).map_or(Better::Higher, |d| d.better)
}

fn positive(v: f64) -> Option<f64> {
    (v > 0.0).then_some(v)
}

fn plain(v: Vec<f64>) -> Vec<Second> {
    v.into_iter().map(Second::value).collect()
}

/// The metrics compared for a step, given what it recorded (op types, index build, cost).
pub fn for_step(step: &StepResult) -> Vec<Metric> {
    let mut out: Vec<Metric> = Vec::new();
    let has_op = |op: &str| step.per_second.total.ops.contains_key(op);
    let rates: [(&str, &str, Total); 3] = [
        ("insert", "inserts_per_s", |s| s.inserts_per_s),
        ("delete", "deletes_per_s", |s| s.deletes_per_s),
        ("query", "queries_per_s", |s| s.queries_per_s),
    ];
    // Steps that delete what they insert (l.i1, l.i2, the background writer) have del/s equal
    // to ins/s: testing it twice would count one finding twice.
    let same_rows = step.rows_deleted == step.rows_inserted;
    for (op, key, total) in rates {
        if has_op(op) && !(op == "delete" && same_rows && has_op("insert")) {
            out.push(Metric {
                key: key.to_string(),
                name: label(key),
                better: better(key),
                needs: "",
                quantum: |_| 0.0,
                run: Box::new(move |s| positive(total(s))),
                seconds: Some(Box::new(move |s| plain(trim(op_series(s, op))))),
            });
        }
    }
    // TPC-C: each transaction type's rate beside the total (q/s).
    for op in crate::results::model::Op::TPCC.map(|o| o.name()) {
        if has_op(op) {
            out.push(Metric {
                key: format!("{op}_per_s"),
                name: format!("{op}/s"),
                better: Better::Higher,
                needs: "",
                quantum: |_| 0.0,
                run: Box::new(move |s| {
                    let n = s.ops.get(op).map_or(0, |o| o.count) as f64;
                    positive(if s.duration_s > 0.0 {
                        n / s.duration_s
                    } else {
                        0.0
                    })
                }),
                seconds: Some(Box::new(move |s| plain(trim(op_series(s, op))))),
            });
        }
    }
    if step.index_build.is_some() {
        out.push(Metric {
            key: "index_rows_per_s".to_string(),
            name: label("index_rows_per_s"),
            better: better("index_rows_per_s"),
            needs: "",
            quantum: |_| 0.0,
            run: Box::new(|s| s.index_build.as_ref().and_then(|i| positive(i.rows_per_s))),
            seconds: None,
        });
    }
    for op in ["insert", "delete", "query"] {
        if has_op(op) {
            out.push(Metric {
                key: format!("{op}_max_response_us"),
                name: label(&format!("{op}_max_response_us")),
                better: better(&format!("{op}_max_response_us")),
                needs: "a full second with an op (a step under about 2 s has none)",
                quantum: |_| 0.0,
                run: Box::new(move |s| {
                    let v = max_response_of(s, op);
                    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
                }),
                seconds: Some(Box::new(move |s| plain(max_response_of(s, op)))),
            });
        }
    }
    if let Some(e) = step.efficiency.as_ref() {
        out.extend(cost_metrics(e));
    }
    out
}

/// The cost metrics compared for a step that measured `e`: CPU per op of the DBMS (unless it
/// is the client's own process) and of the client.
fn cost_metrics(e: &crate::results::model::Efficiency) -> Vec<Metric> {
    let mut out = Vec::new();
    let per_op = e.per_op.as_ref();
    // An embedded DBMS (SQLite) is the client's own process: its DBMS figures are the
    // client's, and testing them twice would only dilute the false discovery rate.
    let same_process = e.dbms.as_ref().is_some_and(|d| {
        d.cpu_s == e.client.cpu_s
            && d.work.voluntary_cs == e.client.work.voluntary_cs
            && d.work.involuntary_cs == e.client.work.involuntary_cs
            && d.work.write_calls == e.client.work.write_calls
    });
    let dbms_cpu =
        per_op.is_some_and(|p| p.dbms_cpu_us.is_some()) || !e.per_second.dbms_cpu_s.is_empty();
    if e.dbms.is_some() && dbms_cpu && !same_process {
        out.push(Metric {
            key: "dbms_cpu_us_per_op".to_string(),
            name: label("dbms_cpu_us_per_op"),
            better: better("dbms_cpu_us_per_op"),
            needs: "",
            quantum: cpu_tick_per_op_us,
            run: Box::new(|s| s.efficiency.as_ref()?.per_op.as_ref()?.dbms_cpu_us),
            seconds: Some(Box::new(|s| {
                let cpu = s
                    .efficiency
                    .as_ref()
                    .map(|e| e.per_second.dbms_cpu_s.clone())
                    .unwrap_or_default();
                per_op_seconds(&cpu, &ops_per_second(s))
            })),
        });
    }
    if per_op.is_some() || !e.per_second.client_cpu_s.is_empty() {
        out.push(Metric {
            key: "client_cpu_us_per_op".to_string(),
            name: label("client_cpu_us_per_op"),
            better: better("client_cpu_us_per_op"),
            needs: "",
            quantum: cpu_tick_per_op_us,
            run: Box::new(|s| Some(s.efficiency.as_ref()?.per_op.as_ref()?.client_cpu_us)),
            seconds: Some(Box::new(|s| {
                let cpu = s
                    .efficiency
                    .as_ref()
                    .map(|e| e.per_second.client_cpu_s.clone())
                    .unwrap_or_default();
                per_op_seconds(&cpu, &ops_per_second(s))
            })),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_compared_are_the_registrys() {
        for key in [
            "inserts_per_s",
            "deletes_per_s",
            "queries_per_s",
            "index_rows_per_s",
            "insert_max_response_us",
            "delete_max_response_us",
            "query_max_response_us",
            "dbms_cpu_us_per_op",
            "client_cpu_us_per_op",
        ] {
            assert!(find(key).is_some(), "{key} is not in the registry");
        }
        assert_eq!(better("query_max_response_us"), Better::Lower);
        assert_eq!(better("index_rows_per_s"), Better::Higher);
    }

    #[test]
    fn seconds_without_a_completed_op_are_no_response_time_sample() {
        // A stall: nothing completes in seconds 3 and 4, then the op that waited completes
        // after 2.5 s. The seconds with no op recorded 0, which is not a response time.
        let x = OpSeries {
            ops: vec![5, 10, 10, 0, 0, 1, 10, 4],
            rows: vec![5, 10, 10, 0, 0, 1, 10, 4],
            max_us: vec![900, 1000, 1000, 0, 0, 2_500_000, 1000, 800],
            ..OpSeries::default()
        };
        assert_eq!(max_response(&x), vec![1000.0, 1000.0, 2_500_000.0, 1000.0]);
        assert!(max_response(&OpSeries::default()).is_empty());
    }

    #[test]
    fn cost_seconds_drop_the_partial_ends_then_the_idle_seconds() {
        let cpu = [0.5, 0.001, 0.0, 0.002, 0.9];
        let ops = [1.0, 10.0, 0.0, 20.0, 1.0];
        assert_eq!(
            per_op_seconds(&cpu, &ops),
            vec![
                Second {
                    num: 1000.0,
                    den: 10.0
                },
                Second {
                    num: 2000.0,
                    den: 20.0
                }
            ]
        );
    }
}

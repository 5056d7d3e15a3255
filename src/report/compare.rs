//! `ibench compare`: per step and metric, the change from A to B and whether it is significant.
//!
//! Samples are the per-second values of each run (the first and last second, which are
//! partial, are dropped). Per-second values are autocorrelated (a stall spans seconds), which
//! would make a plain t-test claim significance too often, so each run's sample size is
//! replaced by its effective size `n (1 - r1) / (1 + r1)`, with `r1` the lag-1
//! autocorrelation (taken as 0 unless it exceeds Bartlett's bound `2 / sqrt(n)`). Welch's t-test then compares the means with
//! the Welch–Satterthwaite degrees of freedom; p is two-sided.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::results::model::{RunResult, Series, StepResult};

/// Default significance level.
pub const DEFAULT_ALPHA: f64 = 0.01;

/// The outcome of one test.
#[derive(Clone, Debug, Serialize)]
pub struct Test {
    /// Mean of A's samples.
    pub mean_a: f64,
    /// Mean of B's samples.
    pub mean_b: f64,
    /// `(mean_b / mean_a - 1) * 100`.
    pub change_pct: f64,
    /// Samples of A, and their effective number.
    pub n_a: usize,
    /// Effective sample size of A.
    pub n_eff_a: f64,
    /// Samples of B.
    pub n_b: usize,
    /// Effective sample size of B.
    pub n_eff_b: f64,
    /// Welch's t.
    pub t: f64,
    /// Degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Lag-1 autocorrelation of `v` (0 when undefined).
pub fn lag1_autocorrelation(v: &[f64]) -> f64 {
    if v.len() < 3 {
        return 0.0;
    }
    let m = mean(v);
    let var: f64 = v.iter().map(|x| (x - m).powi(2)).sum();
    if var == 0.0 {
        return 0.0;
    }
    let cov: f64 = v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    cov / var
}

/// Effective sample size of one run's series. The lag-1 autocorrelation counts only when it
/// exceeds Bartlett's bound `2 / sqrt(n)` (what white noise reaches by chance 5% of the time):
/// a few seconds of samples cannot tell drift from noise.
pub fn effective_n(v: &[f64]) -> f64 {
    let r1 = lag1_autocorrelation(v);
    let bound = 2.0 / (v.len().max(1) as f64).sqrt();
    let r = if r1 > bound { r1.min(0.99) } else { 0.0 };
    (v.len() as f64 * (1.0 - r) / (1.0 + r)).max(1.0)
}

/// Welch's t-test between the runs of A and of B (each a per-second series). `None` when a
/// side has fewer than 3 samples.
pub fn welch(a: &[Vec<f64>], b: &[Vec<f64>]) -> Option<Test> {
    let all_a: Vec<f64> = a.iter().flatten().copied().collect();
    let all_b: Vec<f64> = b.iter().flatten().copied().collect();
    if all_a.len() < 3 || all_b.len() < 3 {
        return None;
    }
    let n_eff_a: f64 = a
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| effective_n(r))
        .sum();
    let n_eff_b: f64 = b
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| effective_n(r))
        .sum();
    let (ma, mb) = (mean(&all_a), mean(&all_b));
    let var =
        |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    let (va, vb) = (var(&all_a, ma), var(&all_b, mb));
    let change_pct = if ma != 0.0 {
        (mb / ma - 1.0) * 100.0
    } else {
        0.0
    };
    let (sa, sb) = (va / n_eff_a, vb / n_eff_b);
    let se = (sa + sb).sqrt();
    let (t, df, p) = if se == 0.0 {
        if ma == mb {
            (0.0, 1.0, 1.0)
        } else {
            (f64::INFINITY, 1.0, 0.0)
        }
    } else {
        let t = (mb - ma) / se;
        let df_den = sa * sa / (n_eff_a - 1.0).max(1.0) + sb * sb / (n_eff_b - 1.0).max(1.0);
        let df = if df_den > 0.0 {
            ((sa + sb).powi(2) / df_den).max(1.0)
        } else {
            1.0
        };
        let dist = StudentsT::new(0.0, 1.0, df).ok()?;
        (t, df, 2.0 * (1.0 - dist.cdf(t.abs())))
    };
    Some(Test {
        mean_a: ma,
        mean_b: mb,
        change_pct,
        n_a: all_a.len(),
        n_eff_a,
        n_b: all_b.len(),
        n_eff_b,
        t,
        df,
        p: p.clamp(0.0, 1.0),
    })
}

/// `p<0.001`, `p<0.01` or `p=0.034`.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".to_string()
    } else if p < 0.01 {
        "p<0.01".to_string()
    } else {
        format!("p={p:.3}")
    }
}

/// Reads one per-second series from a step.
pub type SeriesFn = Box<dyn Fn(&StepResult) -> Vec<f64>>;

/// A metric compared per second.
pub struct SeriesDef {
    /// Name in the output (`ins/s`, `qps`, ...).
    pub name: String,
    /// Per-second values of one step of one run.
    pub get: SeriesFn,
}

/// Drops the first and the last (partial) second.
fn trim(v: Vec<f64>) -> Vec<f64> {
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

/// The largest response time of each second in which at least one `op` completed (a second
/// with none has no response time: its recorded 0 is not a sample, and counting it would pull
/// the mean down exactly where a stall is), first and last second dropped.
fn max_response_series(s: &StepResult, op: &str) -> Vec<f64> {
    s.per_second
        .total
        .ops
        .get(op)
        .map(max_response)
        .unwrap_or_default()
}

fn max_response(x: &Series) -> Vec<f64> {
    let ops = trim(x.ops.iter().map(|&v| v as f64).collect());
    let max = trim(x.max_us.iter().map(|&v| v as f64).collect());
    max.into_iter()
        .zip(ops)
        .filter(|(_, n)| *n > 0.0)
        .map(|(m, _)| m)
        .collect()
}

/// The per-op divisor of a step's cost series: rows inserted per second in load steps,
/// queries per second in query steps.
fn ops_per_second(s: &StepResult) -> Vec<f64> {
    let per = s
        .efficiency
        .as_ref()
        .map(|e| e.per.as_str())
        .unwrap_or("insert");
    op_series(s, per)
}

fn per_op_series(cost: &[f64], ops: &[f64], scale: f64) -> Vec<f64> {
    cost.iter()
        .zip(ops)
        .filter(|(_, o)| **o > 0.0)
        .map(|(c, o)| c * scale / o)
        .collect()
}

/// The metrics compared for a step, given the op types it has.
pub fn series_defs(step: &StepResult) -> Vec<SeriesDef> {
    let mut out: Vec<SeriesDef> = Vec::new();
    for (op, name) in [("insert", "ins/s"), ("delete", "del/s"), ("query", "qps")] {
        if step.per_second.total.ops.contains_key(op) {
            out.push(SeriesDef {
                name: name.to_string(),
                get: Box::new(move |s| trim(op_series(s, op))),
            });
        }
    }
    for op in ["insert", "delete", "query"] {
        if step.per_second.total.ops.contains_key(op) {
            out.push(SeriesDef {
                name: format!("{op} max response us"),
                get: Box::new(move |s| max_response_series(s, op)),
            });
        }
    }
    if step
        .efficiency
        .as_ref()
        .is_some_and(|e| !e.per_second.dbms_cpu_s.is_empty() && e.dbms.is_some())
    {
        out.push(SeriesDef {
            name: "dbms CPU us/op".to_string(),
            get: Box::new(|s| {
                let e = s.efficiency.as_ref();
                let cpu = e
                    .map(|e| e.per_second.dbms_cpu_s.clone())
                    .unwrap_or_default();
                trim(per_op_series(&cpu, &ops_per_second(s), 1e6))
            }),
        });
    }
    if step
        .efficiency
        .as_ref()
        .is_some_and(|e| !e.per_second.client_cpu_s.is_empty())
    {
        out.push(SeriesDef {
            name: "client CPU us/op".to_string(),
            get: Box::new(|s| {
                let e = s.efficiency.as_ref();
                let cpu = e
                    .map(|e| e.per_second.client_cpu_s.clone())
                    .unwrap_or_default();
                trim(per_op_series(&cpu, &ops_per_second(s), 1e6))
            }),
        });
    }
    out
}

/// One row of the comparison.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Step name.
    pub step: String,
    /// Metric name.
    pub metric: String,
    /// The test, when both sides had enough samples.
    pub test: Option<Test>,
    /// Whether `p < alpha`.
    pub significant: bool,
    /// The plain-words verdict.
    pub verdict: String,
}

/// Compares the runs of A with the runs of B, step by step over the steps both have.
pub fn compare(a: &[RunResult], b: &[RunResult], alpha: f64) -> Vec<Row> {
    let mut rows = Vec::new();
    let Some(first) = a.first() else { return rows };
    for step in &first.steps {
        let find = |r: &RunResult| r.steps.iter().find(|s| s.name == step.name).cloned();
        let sa: Vec<StepResult> = a.iter().filter_map(find).collect();
        let sb: Vec<StepResult> = b.iter().filter_map(find).collect();
        if sa.len() < a.len() || sb.len() < b.len() || sb.is_empty() {
            continue;
        }
        for def in series_defs(step) {
            let va: Vec<Vec<f64>> = sa.iter().map(|s| (def.get)(s)).collect();
            let vb: Vec<Vec<f64>> = sb.iter().map(|s| (def.get)(s)).collect();
            let test = welch(&va, &vb);
            let (significant, verdict) = match &test {
                None => (false, "too few seconds to test".to_string()),
                Some(t) if t.p < alpha => (
                    true,
                    format!("{} {:+.1}% ({})", def.name, t.change_pct, fmt_p(t.p)),
                ),
                Some(t) => (
                    false,
                    format!(
                        "no significant change ({:+.1}%, {})",
                        t.change_pct,
                        fmt_p(t.p)
                    ),
                ),
            };
            rows.push(Row {
                step: step.name.clone(),
                metric: def.name,
                test,
                significant,
                verdict,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64, mean: f64, sd: f64) -> Vec<f64> {
        // A small deterministic generator (xorshift) with a Box-Muller transform.
        let mut x = seed.max(1);
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (next().max(1e-12), next());
                mean + sd * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
            })
            .collect()
    }

    #[test]
    fn same_distribution_is_not_significant_and_a_shift_is() {
        let a = vec![noise(200, 1, 1000.0, 50.0)];
        let b = vec![noise(200, 2, 1000.0, 50.0)];
        let t = welch(&a, &b).unwrap();
        assert!(t.p > 0.01, "p = {}", t.p);
        let c = vec![noise(200, 3, 930.0, 50.0)];
        let t = welch(&a, &c).unwrap();
        assert!(t.p < 0.001, "p = {}", t.p);
        assert!((t.change_pct + 7.0).abs() < 2.0, "{}", t.change_pct);
    }

    #[test]
    fn autocorrelation_shrinks_the_sample() {
        // A slowly drifting series: each value repeats 10 times.
        let v: Vec<f64> = noise(30, 5, 100.0, 10.0)
            .into_iter()
            .flat_map(|x| std::iter::repeat_n(x, 10))
            .collect();
        let r = lag1_autocorrelation(&v);
        assert!(r > 0.8, "r1 = {r}");
        assert!(effective_n(&v) < 30.0);
        let white = noise(300, 9, 100.0, 10.0);
        assert!(effective_n(&white) > 200.0);
    }

    #[test]
    fn welch_matches_a_published_example() {
        // Welch's t-test, example 1 of its Wikipedia article (t 2.46, df 24.99, p 0.021);
        // neither series' lag-1 autocorrelation reaches Bartlett's bound, so n_eff = n.
        let a = vec![vec![
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ]];
        let b = vec![vec![
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ]];
        let t = welch(&a, &b).unwrap();
        assert_eq!((t.n_eff_a, t.n_eff_b), (15.0, 15.0));
        assert!((t.t - 2.455356).abs() < 1e-5, "t = {}", t.t);
        assert!((t.df - 24.988529).abs() < 1e-5, "df = {}", t.df);
        assert!((t.p - 0.021378).abs() < 1e-5, "p = {}", t.p);
    }

    #[test]
    fn effective_size_by_hand() {
        // Five 1s then five 2s: r1 = 1.75 / 2.5 = 0.7 > 2 / sqrt(10), so
        // n_eff = 10 * 0.3 / 1.7.
        let v = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0];
        assert!((lag1_autocorrelation(&v) - 0.7).abs() < 1e-12);
        assert!((effective_n(&v) - 3.0 / 1.7).abs() < 1e-12);
        // Alternating values: negative r1 does not enlarge the sample.
        let alt = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0];
        assert!(lag1_autocorrelation(&alt) < 0.0);
        assert_eq!(effective_n(&alt), 8.0);
    }

    #[test]
    fn p_wording() {
        assert_eq!(fmt_p(0.0001), "p<0.001");
        assert_eq!(fmt_p(0.005), "p<0.01");
        assert_eq!(fmt_p(0.25), "p=0.250");
    }

    #[test]
    fn seconds_without_a_completed_op_are_no_response_time_sample() {
        // A stall: nothing completes in seconds 3 and 4, then the op that waited completes
        // after 2.5 s. The seconds with no op recorded 0, which is not a response time.
        let x = Series {
            ops: vec![5, 10, 10, 0, 0, 1, 10, 4],
            rows: vec![5, 10, 10, 0, 0, 1, 10, 4],
            max_us: vec![900, 1000, 1000, 0, 0, 2_500_000, 1000, 800],
        };
        assert_eq!(max_response(&x), vec![1000.0, 1000.0, 2_500_000.0, 1000.0]);
        assert!(max_response(&Series::default()).is_empty());
    }

    #[test]
    fn constant_equal_series_are_not_significant() {
        let a = vec![vec![10.0; 20]];
        let t = welch(&a, &a.clone()).unwrap();
        assert_eq!(t.p, 1.0);
    }
}

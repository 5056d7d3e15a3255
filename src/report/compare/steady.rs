//! Step sanity: was a step's throughput steady, and is it long enough to compare? Computed when
//! reading a run (older results files have them too), from each op type's per-second rates,
//! the first and the last second dropped as `compare` drops them.
//!
//! **Too short.** Fewer than [`MIN_SECONDS`] full seconds: what `ibench compare` needs to
//! test a step with one run on a side (the seconds are then the samples), so such a step
//! cannot be compared on its own (it needs repeated runs).
//!
//! **Not steady.** The mean rate of the step's last third against its first third. The step
//! is not steady when the two differ by more than [`DRIFT_PCT`] of the first third's rate **and**
//! by more than the noise of its seconds explains: `|last - first| / (sigma sqrt(2 / k)) >
//! t(1 - alpha / 2, 2k - 2)`, `k` seconds a third, at compare's false discovery rate alpha
//! (1%). `sigma` is the noise of one second, estimated from the differences of consecutive
//! seconds (`1.4826 median |x[i+1] - x[i]| / sqrt(2)`), which a level shift or a trend barely
//! moves (one large difference among many), unlike the seconds' standard deviation; at least
//! `sqrt(mean)`, counting noise, so that a rate limiter's flat seconds do not make a few rows
//! of drift significant. A steady noisy step has thirds within its noise; a rate that falls
//! by half midway has thirds half apart with the noise of a half. Judged from
//! [`MIN_JUDGED`] full seconds on.
//!
//! **Not judged.** The `prepare` step of `ibench micro` and `ibench tpcc`: it loads the tables
//! the benchmarks then run on, and the load is not what those commands benchmark.
//!
//! Here, in `compare/`, because compare judges with it: a change in a step flagged in a run of
//! either side is not called (`withheld.rs`); the report's model keeps each run's flag
//! (`StepFlag`), its sanity section and the verdict show them (`sections/`).

use serde::Serialize;

use super::metrics::trim;
use super::stats::{MIN_SECONDS, t_quantile};
use crate::report::stat::StepFlag;
use crate::results::model::{SeriesSet, StepResult};

/// The level of the drift test (two-sided): a step is called not steady at 1%.
pub const DRIFT_ALPHA: f64 = 0.01;

/// Smallest change between the first and the last third called a drift, percent of the
/// first third's rate (beyond compare's 3% noise threshold: within one step a rate moves more).
pub const DRIFT_PCT: f64 = 10.0;

/// Full seconds from which steadiness is judged (two a third).
pub const MIN_JUDGED: usize = 6;

/// One op type's rate over a step: its first and last third.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drift {
    /// Op type.
    pub op: String,
    /// Full seconds judged.
    pub seconds: usize,
    /// Mean rate of the first third, rows/s (queries/s).
    pub first: f64,
    /// Mean rate of the last third.
    pub last: f64,
    /// `(last - first) / first`, percent: -71 when the rate fell from 21414 to 6159/s (a fall
    /// is never beyond -100); 100 when it rose from 0 (said without a percentage).
    pub change_pct: f64,
    /// The change over its standard error (noise of one second from consecutive differences).
    pub t: f64,
    /// Beyond [`DRIFT_PCT`] and beyond the noise.
    pub steady: bool,
}

/// What a step's sanity check says.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Sanity {
    /// Full seconds of the step's longest op series (first and last dropped).
    pub seconds: usize,
    /// Fewer than [`MIN_SECONDS`] full seconds.
    pub too_short: bool,
    /// Per op type judged, its drift.
    pub drifts: Vec<Drift>,
}

impl Sanity {
    /// Some op type's rate drifted.
    pub fn not_steady(&self) -> bool {
        self.drifts.iter().any(|d| !d.steady)
    }

    /// Flagged: too short, or not steady.
    pub fn flagged(&self) -> bool {
        self.too_short || self.not_steady()
    }

    /// The flag in one line (`None` when not flagged).
    pub fn flag(&self) -> Option<String> {
        if self.too_short {
            return Some(format!(
                "too short to compare: {} full second(s), one run a side needs {MIN_SECONDS}",
                self.seconds
            ));
        }
        let d = self.drifts.iter().find(|d| !d.steady)?;
        let change = if d.change_pct < 0.0 {
            format!("fell {:.0}%", -d.change_pct)
        } else if d.first > 0.0 {
            format!("rose {:.0}%", d.change_pct)
        } else {
            // From 0: no percentage; the figures in brackets say it.
            "rose".to_string()
        };
        Some(format!(
            "not steady: {} rate {change} from the first to the last third ({:.0} -> {:.0}/s, \
             t = {:.1})",
            d.op,
            d.first,
            d.last,
            d.t.abs()
        ))
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The drift of full seconds `x` (rates), `None` with fewer than [`MIN_JUDGED`] or a zero mean.
pub fn drift(op: &str, x: &[f64]) -> Option<Drift> {
    let n = x.len();
    let m = if n > 0 { mean(x) } else { 0.0 };
    if n < MIN_JUDGED || m <= 0.0 {
        return None;
    }
    let k = n / 3;
    let (first, last) = (mean(&x[..k]), mean(&x[n - k..]));
    let diffs: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let sigma = (1.4826 * median(diffs) / 2f64.sqrt()).max(m.sqrt());
    let se = sigma * (2.0 / k as f64).sqrt();
    let t = (last - first) / se;
    let change_pct = if first > 0.0 {
        (last - first) / first * 100.0
    } else if last > 0.0 {
        100.0
    } else {
        0.0
    };
    let critical = t_quantile((2 * k - 2).max(1) as f64, 1.0 - DRIFT_ALPHA / 2.0);
    Some(Drift {
        op: op.to_string(),
        seconds: n,
        first,
        last,
        change_pct,
        t,
        steady: change_pct.abs() <= DRIFT_PCT || t.abs() <= critical,
    })
}

/// The step of `ibench micro` and `ibench tpcc` that loads their tables: not judged.
pub const PREPARE: &str = "prepare";

/// The sanity of `step`, `None` for a step without per-second ops (an index build, a pause)
/// and for [`PREPARE`] (the load is not what micro and tpcc benchmark).
pub fn sanity(step: &StepResult) -> Option<Sanity> {
    if step.name == PREPARE {
        return None;
    }
    of_series(&step.per_second.total)
}

/// The flag that makes step `step` longer, for a step too short to compare: `--l0-rows`
/// (l.i0), `--l1-rows` (l.i1), `--l2-rows` (l.i2), `--query-seconds` (qrN, qpN), `--seconds`
/// (a benchmark of micro or tpcc at a client count, `point.c4`); `None` for other steps.
pub fn longer_with(step: &str) -> Option<&'static str> {
    match step {
        "l.i0" => Some("--l0-rows"),
        "l.i1" => Some("--l1-rows"),
        "l.i2" => Some("--l2-rows"),
        _ if crate::report::names::parse_step(step).is_some() => Some("--seconds"),
        _ if ["qr", "qp"].iter().any(|p| {
            step.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        }) =>
        {
            Some("--query-seconds")
        }
        _ => None,
    }
}

/// The sanity of a step's all-clients series `set`.
pub fn of_series(set: &SeriesSet) -> Option<Sanity> {
    let ops = &set.ops;
    if ops.is_empty() {
        return None;
    }
    let mut out = Sanity::default();
    for (op, s) in ops {
        let x = trim(s.rows.iter().map(|&v| v as f64).collect());
        out.seconds = out.seconds.max(x.len());
        out.drifts.extend(drift(op, &x));
    }
    out.too_short = out.seconds < MIN_SECONDS;
    Some(out)
}

/// What makes `steps`, too short to compare, longer: `longer with --l0-rows` (one flag for
/// them all), `longer with --l0-rows (l.i0), --l2-rows (l.i2)`; `None` when no step has such
/// a flag ([`longer_with`]).
pub fn longer_hint(steps: &[&str]) -> Option<String> {
    let mut flags: Vec<(&str, Vec<&str>)> = Vec::new();
    for &step in steps {
        let Some(flag) = longer_with(step) else {
            continue;
        };
        match flags.iter_mut().find(|(f, _)| *f == flag) {
            Some((_, named)) => named.push(step),
            None => flags.push((flag, vec![step])),
        }
    }
    match flags.as_slice() {
        [] => None,
        [(flag, _)] => Some(format!("longer with {flag}")),
        _ => Some(format!(
            "longer with {}",
            flags
                .iter()
                .map(|(flag, named)| format!("{flag} ({})", named.join(", ")))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The flag of step `step` of run `run`, `None` when it is fine.
pub fn run_flag(run: &str, step: &StepResult) -> Option<StepFlag> {
    let s = sanity(step)?;
    Some(StepFlag {
        run: run.to_string(),
        too_short: s.too_short,
        text: s.flag()?,
    })
}

/// The flag of `step` in one line, `None` when it is fine (or has no per-second ops).
pub fn flag(step: &StepResult) -> Option<String> {
    sanity(step)?.flag()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reproducible noisy series: `n` seconds around `level` with +-`noise` (a fixed LCG).
    fn noisy(n: usize, level: f64, noise: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (s >> 11) as f64 / (1u64 << 53) as f64;
                level + noise * (2.0 * u - 1.0)
            })
            .collect()
    }

    #[test]
    fn a_steady_noisy_rate_is_steady() {
        // +-10% of noise each second, no trend: never flagged, whatever the seed.
        for seed in 0..200 {
            let x = noisy(30, 1_000.0, 100.0, seed);
            let d = drift("insert", &x).unwrap();
            assert!(d.steady, "seed {seed}: {d:?}");
        }
        // +-30%: a third's mean can then differ by more than DRIFT_PCT by chance, but the
        // test at alpha 1% flags it rarely.
        let flagged = (0..1_000)
            .filter(|&seed| {
                !drift("insert", &noisy(30, 1_000.0, 300.0, seed))
                    .unwrap()
                    .steady
            })
            .count();
        assert!(
            flagged <= 20,
            "{flagged} of 1000 steady noisy steps flagged"
        );
    }

    #[test]
    fn a_rate_that_falls_by_half_midway_is_not_steady() {
        for seed in 0..200 {
            let mut x = noisy(20, 1_000.0, 100.0, seed);
            for v in &mut x[10..] {
                *v /= 2.0;
            }
            let d = drift("query", &x).unwrap();
            assert!(!d.steady, "seed {seed}: {d:?}");
            assert!(d.change_pct < -40.0, "{d:?}");
        }
        // Also in a short step, from a noisy level.
        let x = [
            1_000.0, 1_100.0, 950.0, 1_050.0, 500.0, 480.0, 520.0, 500.0, 490.0,
        ];
        assert!(!drift("query", &x).unwrap().steady);
    }

    #[test]
    fn a_small_or_unsupported_drift_is_steady() {
        // 5% down over the step, noiseless: significant, but within DRIFT_PCT.
        let x: Vec<f64> = (0..30).map(|i| 1_000.0 - i as f64 * 2.0).collect();
        assert!(drift("insert", &x).unwrap().steady);
        // A 20% difference made of two noisy seconds a third: not beyond the noise.
        let x = [1_000.0, 600.0, 1_100.0, 700.0, 1_000.0, 500.0];
        assert!(drift("insert", &x).unwrap().steady);
        assert!(drift("insert", &[1.0; MIN_JUDGED - 1]).is_none());
        assert!(drift("insert", &[0.0; 10]).is_none());
    }

    #[test]
    fn a_step_with_fewer_full_seconds_than_compare_needs_is_too_short() {
        let mut set = SeriesSet::default();
        set.ops.insert(
            "insert".into(),
            crate::results::model::OpSeries {
                ops: vec![10; MIN_SECONDS + 1],
                rows: vec![10; MIN_SECONDS + 1],
                ..Default::default()
            },
        );
        let s = of_series(&set).unwrap();
        assert!(s.too_short && s.seconds == MIN_SECONDS - 1, "{s:?}");
        assert!(s.flag().unwrap().starts_with("too short to compare"));
        set.ops.get_mut("insert").unwrap().rows = vec![10; MIN_SECONDS + 2];
        assert!(of_series(&set).unwrap().flag().is_none());
        assert!(of_series(&SeriesSet::default()).is_none());
    }

    #[test]
    fn a_fall_is_said_against_the_first_third_and_never_beyond_100_percent() {
        // The step: 21414 -> 6159/s, once "fell 120%" (against the step's mean).
        let mut x = vec![21_414.0; 4];
        x.extend([12_000.0; 4]);
        x.extend([6_159.0; 4]);
        let d = drift("query", &x).unwrap();
        assert!(!d.steady && (d.change_pct + 71.2).abs() < 0.1, "{d:?}");
        let s = Sanity {
            seconds: 12,
            too_short: false,
            drifts: vec![d],
        };
        let flag = s.flag().unwrap();
        assert!(flag.contains("query rate fell 71% from"), "{flag}");
        // A rate from 0 rose, by no percentage.
        let mut x = vec![0.0; 4];
        x.extend([500.0; 8]);
        let d = drift("insert", &x).unwrap();
        assert_eq!(d.change_pct, 100.0);
        let s = Sanity {
            seconds: 12,
            too_short: false,
            drifts: vec![d],
        };
        let flag = s.flag().unwrap();
        assert!(
            flag.contains("insert rate rose from the first to the last third (0 -> 500/s"),
            "{flag}"
        );
    }

    #[test]
    fn each_step_too_short_names_the_flag_that_makes_it_longer() {
        assert_eq!(longer_with("l.i0"), Some("--l0-rows"));
        assert_eq!(longer_with("qp1000"), Some("--query-seconds"));
        assert_eq!(longer_with("point-query.c4"), Some("--seconds"));
        assert_eq!(longer_with("l.x"), None);
        assert_eq!(longer_with("qrx"), None);
        assert_eq!(
            longer_hint(&["qr100", "qp100"]).unwrap(),
            "longer with --query-seconds"
        );
        assert_eq!(
            longer_hint(&["l.i0", "l.x", "l.i2"]).unwrap(),
            "longer with --l0-rows (l.i0), --l2-rows (l.i2)"
        );
        assert_eq!(longer_hint(&["scan"]), None);
    }
}

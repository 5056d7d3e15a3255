//! Change points of every series of a history, and the gate on its newest runs.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::changepoint::{self, ChangePoint, Params, incremental};
use super::series::{RunInfo, Series};
use crate::metrics::figures::Better;
use crate::report::compare::families;

/// A change point of a series, located in the history's runs.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// The detector's figures (its index is into the runs that have the figure).
    #[serde(flatten)]
    pub cp: ChangePoint,
    /// Index of the run it starts at, in the history's runs.
    pub run: usize,
    /// Relative change of the mean, after / before - 1.
    pub change: f64,
    /// 95 % confidence interval of the relative change (Student's t, pooled variance).
    pub interval: (f64, f64),
    /// Whether the change is in the figure's worse direction, beyond its noise band, with at
    /// least [`MIN_SIDE`] runs on each side, and its p-value still at most the detector's once
    /// adjusted with the history's other figures ([`adjust`]).
    pub regression: bool,
    /// Whether the change is in the better direction and beyond the noise band.
    pub improvement: bool,
}

/// A series with its change points.
#[derive(Clone, Debug, Serialize)]
pub struct Analyzed {
    /// The series.
    #[serde(flatten)]
    pub series: Series,
    /// Its change points, weak and strong, in run order.
    pub points: Vec<Point>,
}

/// Runs a change point needs on each side (between it and its neighbours) before it is
/// called a regression or an improvement.
pub const MIN_SIDE: usize = 2;

/// The noise band of a change: twice the larger standard deviation of the segments, at
/// least the figure's noise floor ([`super::series::noise_floor`]).
pub fn noise_band(cp: &ChangePoint, floor: f64) -> f64 {
    (2.0 * cp.std_before.max(cp.std_after)).max(floor)
}

/// 95 % confidence interval of `after / before - 1` from the segments' figures.
fn interval(cp: &ChangePoint, n1: usize, n2: usize) -> (f64, f64) {
    let change = cp.change();
    if n1 + n2 <= 2 || cp.mean_before == 0.0 {
        return (change, change);
    }
    let (a, b) = (n1 as f64, n2 as f64);
    let df = a + b - 2.0;
    let pooled = ((a - 1.0) * cp.std_before.powi(2) + (b - 1.0) * cp.std_after.powi(2)) / df;
    let se = (pooled * (1.0 / a + 1.0 / b)).sqrt();
    let t = StudentsT::new(0.0, 1.0, df).map_or(2.0, |d| d.inverse_cdf(0.975));
    let half = t * se / cp.mean_before.abs();
    (change - half, change + half)
}

/// The dense values of a series (runs that have the figure) and their run indexes.
fn dense(series: &Series) -> (Vec<f64>, Vec<usize>) {
    series
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (v, i)))
        .unzip()
}

/// Locates and classifies the detector's points of `series`.
fn points(series: &Series, found: Vec<ChangePoint>, at: &[usize], n: usize) -> Vec<Point> {
    let bounds: Vec<usize> = found.iter().filter(|p| p.strong).map(|p| p.index).collect();
    found
        .into_iter()
        .map(|cp| {
            // Segment sizes between the neighbouring strong points.
            let before = bounds
                .iter()
                .copied()
                .filter(|&b| b < cp.index)
                .max()
                .unwrap_or(0);
            let after = bounds.iter().copied().find(|&b| b > cp.index).unwrap_or(n);
            let delta = cp.mean_after - cp.mean_before;
            // One run alone on a side is an outlier as much as a shift: not judged until a
            // second run confirms it.
            let (n1, n2) = (cp.index - before, after - cp.index);
            let beyond =
                n1 >= MIN_SIDE && n2 >= MIN_SIDE && delta.abs() > noise_band(&cp, series.floor);
            let worse = match series.better {
                Better::Higher => delta < 0.0,
                Better::Lower => delta > 0.0,
            };
            Point {
                run: at[cp.index],
                change: cp.change(),
                interval: interval(&cp, n1, n2),
                regression: beyond && worse,
                improvement: beyond && !worse,
                cp,
            }
        })
        .collect()
}

/// The change points of `series`, with the store's cache entry (`cached`, by key) used and
/// renewed: returns the analyzed series and the new cache entries (key, document).
pub fn analyze(
    series: Vec<Series>,
    params: &Params,
    cache_key: impl Fn(&Series) -> String,
    cached: &std::collections::HashMap<String, String>,
) -> (Vec<Analyzed>, Vec<(String, String)>) {
    let mut renewed = Vec::new();
    let mut analyzed: Vec<Analyzed> = series
        .into_iter()
        .map(|s| {
            let (z, at) = dense(&s);
            let key = cache_key(&s);
            let old: Option<incremental::Cached> =
                cached.get(&key).and_then(|d| serde_json::from_str(d).ok());
            let (found, entry, _) = incremental::detect(&z, params, old.as_ref());
            if old.as_ref() != Some(&entry)
                && let Ok(doc) = serde_json::to_string(&entry)
            {
                renewed.push((key, doc));
            }
            let points = points(&s, found, &at, z.len());
            Analyzed { series: s, points }
        })
        .collect();
    adjust(&mut analyzed, params.max_pvalue);
    (analyzed, renewed)
}

/// Benjamini–Hochberg over a history's figures, in the families `compare` adjusts apart
/// (throughput, and the other figures: [`families::adjust`]), at the detector's max p-value:
/// a point stays a regression or an improvement only when its adjusted p-value is at most
/// `alpha`. Each series is one test (each judged point one, p = 1 for a series with none),
/// so the gate's chance of a false alarm does not grow with the steps and figures it watches.
///
/// Measured on 100 A/A histories of 10 runs resampled from 12 real runs (SQLite, 4 steps,
/// 26 series): the gate failed on 6 without it, each on a different figure (a p99, a CPU
/// per op, a q/s...) at p 2e-5 .. 8e-4.
pub fn adjust(analyzed: &mut [Analyzed], alpha: f64) {
    let called = |p: &Point| p.cp.strong && (p.regression || p.improvement);
    let mut tested: Vec<(&str, f64)> = Vec::new();
    let mut at: Vec<(usize, Option<usize>)> = Vec::new();
    for (i, a) in analyzed.iter().enumerate() {
        let before = tested.len();
        for (j, p) in a.points.iter().enumerate().filter(|(_, p)| called(p)) {
            tested.push((a.series.figure.as_str(), p.cp.pvalue));
            at.push((i, Some(j)));
        }
        if tested.len() == before {
            tested.push((a.series.figure.as_str(), 1.0));
            at.push((i, None));
        }
    }
    let (adjusted, _) = families::adjust(&tested, alpha);
    for ((i, j), (q, _)) in at.into_iter().zip(adjusted) {
        if let Some(j) = j
            && q > alpha
        {
            let p = &mut analyzed[i].points[j];
            p.regression = false;
            p.improvement = false;
        }
    }
}

/// `series` with its change points found and judged alone (before [`adjust`]).
fn judged(series: Series, z: &[f64], at: &[usize], params: &Params) -> Analyzed {
    let points = points(&series, changepoint::detect(z, params), at, z.len());
    Analyzed { series, points }
}

/// A regression the gate reports.
#[derive(Clone, Debug, Serialize)]
pub struct Regression {
    /// Step.
    pub step: String,
    /// Figure label.
    pub figure: String,
    /// The change point.
    pub point: Point,
}

/// The strong regressions the newest `n` runs start or follow: a change point among them,
/// or one that the history without them does not have (it became visible with them).
pub fn check_last(
    analyzed: &[Analyzed],
    params: &Params,
    n: usize,
    runs: usize,
) -> Vec<Regression> {
    let first_new = runs.saturating_sub(n);
    // The history without the newest runs, judged by the same rule.
    let mut old: Vec<Analyzed> = analyzed
        .iter()
        .map(|a| {
            let (z, at) = dense(&a.series);
            let old_len = at.iter().filter(|&&i| i < first_new).count();
            judged(a.series.clone(), &z[..old_len], &at, params)
        })
        .collect();
    adjust(&mut old, params.max_pvalue);
    let mut out = Vec::new();
    for (a, old) in analyzed.iter().zip(&old).filter(|(a, _)| a.series.gated) {
        let before: Vec<usize> = old
            .points
            .iter()
            .filter(|p| p.cp.strong && p.regression)
            .map(|p| p.run)
            .collect();
        for p in a.points.iter().filter(|p| p.cp.strong && p.regression) {
            if p.run >= first_new || !before.contains(&p.run) {
                out.push(Regression {
                    step: a.series.step.clone(),
                    figure: a.series.label.clone(),
                    point: p.clone(),
                });
            }
        }
    }
    out
}

/// What the gate found in the newest runs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Gate {
    /// Regressions the runs no neighbour disturbed show: the gate fails on them.
    pub failing: Vec<Regression>,
    /// Regressions only the disturbed runs show (the series without them has none there):
    /// named, and the gate fails on them only when strict.
    pub disturbed: Vec<Regression>,
}

/// The gate on the newest `n` of `runs` runs: [`check_last`] on each gated series without its
/// disturbed runs (`failing`), and the regressions the series with them adds (`disturbed`).
pub fn gate(analyzed: &[Analyzed], params: &Params, n: usize, runs: usize) -> Gate {
    let mut clean: Vec<Analyzed> = analyzed
        .iter()
        .map(|a| {
            let series = a.series.undisturbed();
            let (z, at) = dense(&series);
            judged(series, &z, &at, params)
        })
        .collect();
    adjust(&mut clean, params.max_pvalue);
    let failing = check_last(&clean, params, n, runs);
    let disturbed = check_last(analyzed, params, n, runs)
        .into_iter()
        .filter(|r| {
            !failing
                .iter()
                .any(|f| f.step == r.step && f.figure == r.figure)
        })
        .collect();
    Gate { failing, disturbed }
}

/// The runs of `a`'s series, from index `from` on, disturbed in its step: `#7 (why)`.
pub fn disturbed_runs(a: &Analyzed, from: usize) -> Vec<String> {
    a.series
        .disturbed
        .iter()
        .enumerate()
        .skip(from)
        .filter_map(|(i, d)| Some(format!("#{} ({})", i + 1, d.as_ref()?)))
        .collect()
}

/// One line naming a regression: step, figure, change, its interval, where it starts.
pub fn regression_line(r: &Regression, runs: &[RunInfo]) -> String {
    let p = &r.point;
    let run = &runs[p.run];
    let tags = if run.tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", crate::request::tags::text(&run.tags))
    };
    format!(
        "regression: step {} {}: {:+.1}% (95% interval {:+.1}% .. {:+.1}%; mean {} -> {}) \
         from run {}{tags} (#{} of {}), p {:.2e}",
        r.step,
        r.figure,
        p.change * 100.0,
        p.interval.0 * 100.0,
        p.interval.1 * 100.0,
        short(p.cp.mean_before),
        short(p.cp.mean_after),
        run.id,
        p.run + 1,
        runs.len(),
        p.cp.pvalue,
    )
}

/// A figure with 4 significant digits.
pub fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A series of `figure` whose one point (a strong regression unless `p` is `None`) has
    /// p-value `p`.
    fn one(figure: &str, p: Option<f64>) -> Analyzed {
        let series = Series {
            step: "l.i0".into(),
            figure: figure.into(),
            label: figure.into(),
            better: Better::Higher,
            digits: 0,
            floor: 0.0,
            gated: true,
            values: vec![Some(1.0); 10],
            disturbed: vec![None; 10],
        };
        let points = p
            .map(|pvalue| Point {
                cp: ChangePoint {
                    index: 5,
                    pvalue,
                    mean_before: 2.0,
                    mean_after: 1.0,
                    std_before: 0.0,
                    std_after: 0.0,
                    strong: true,
                },
                run: 5,
                change: -0.5,
                interval: (-0.6, -0.4),
                regression: true,
                improvement: false,
            })
            .into_iter()
            .collect();
        Analyzed { series, points }
    }

    fn regressions(analyzed: &[Analyzed]) -> Vec<&str> {
        analyzed
            .iter()
            .filter(|a| a.points.iter().any(|p| p.regression))
            .map(|a| a.series.figure.as_str())
            .collect()
    }

    #[test]
    fn a_lone_change_must_beat_the_detectors_p_over_its_family() {
        // 7 throughput series and 13 others, as a 4-step history has; one point each at p
        // 0.0005 (a false alarm's p in the A/A histories) and one at 0.00001.
        let mut h: Vec<Analyzed> = (0..6).map(|_| one("inserts_per_s", None)).collect();
        h.push(one("queries_per_s", Some(0.0005)));
        h.extend((0..12).map(|_| one("dbms_cpu_us_per_op", None)));
        h.push(one("p99_ms", Some(0.00001)));
        adjust(&mut h, 0.001);
        assert_eq!(regressions(&h), ["p99_ms"]);
        // Alone, each would have been a regression.
        let mut alone = vec![one("queries_per_s", Some(0.0005))];
        adjust(&mut alone, 0.001);
        assert_eq!(regressions(&alone), ["queries_per_s"]);
    }

    #[test]
    fn a_change_many_throughput_figures_share_passes() {
        // All 7 throughput series moved at p 0.0005: BH keeps them all (q = 0.0005).
        let mut h: Vec<Analyzed> = (0..7).map(|_| one("inserts_per_s", Some(0.0005))).collect();
        h.extend((0..13).map(|_| one("dbms_cpu_us_per_op", None)));
        adjust(&mut h, 0.001);
        assert_eq!(regressions(&h).len(), 7);
    }
}

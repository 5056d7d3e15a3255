//! Change points of a series of runs' figures: E-divisive means (Matteson & James 2014) in
//! Otava's form (Fleming et al., ICPE 2023: sliding windows, a Student's t-test for the
//! significance of a split, weak points found at 10x the p-value and merged away unless they
//! stay significant), or with the original permutation test. See docs/history.md.

pub mod divisive;
pub mod incremental;
mod significance;

use serde::{Deserialize, Serialize};

pub use significance::{Segments, permutation_pvalue, t_test};

/// How a split's significance is tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Test {
    /// Student's t-test of the two segments (Otava's default; decides with few runs).
    TTest,
    /// Matteson & James's permutation test with this many permutations (p >= 1/(B+1)).
    Permutation(u32),
}

/// What the detector is given: Otava's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// A change point's p-value is at most this (strong points).
    pub max_pvalue: f64,
    /// Sliding window, runs.
    pub window: usize,
    /// Smallest relative change kept (0.05: 5 %); smaller ones are merged away.
    pub min_magnitude: f64,
    /// The significance test.
    pub test: Test,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            max_pvalue: 0.001,
            window: 50,
            min_magnitude: 0.0,
            test: Test::TTest,
        }
    }
}

/// A change point: the series differs before and after `index`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// First point after the change.
    pub index: usize,
    /// The p-value of the split between its neighbouring change points.
    pub pvalue: f64,
    /// Mean of the segment before.
    pub mean_before: f64,
    /// Mean of the segment after.
    pub mean_after: f64,
    /// Standard deviation (population) of the segment before.
    pub std_before: f64,
    /// Standard deviation (population) of the segment after.
    pub std_after: f64,
    /// Kept by the merge step at `max_pvalue` (a weak point is significant at 10x only).
    pub strong: bool,
}

impl ChangePoint {
    /// Relative change of the mean, after / before - 1.
    pub fn change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    /// Otava's magnitude: the larger of the relative changes forward and backward.
    pub fn magnitude(&self) -> f64 {
        let back = if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        };
        self.change().abs().max(back.abs())
    }
}

/// The p-value of the first pass (weak points): 10x, as Otava.
pub fn first_pass_pvalue(max_pvalue: f64) -> f64 {
    if max_pvalue < 0.05 {
        max_pvalue * 10.0
    } else if max_pvalue < 0.5 {
        max_pvalue * 2.0
    } else {
        max_pvalue
    }
}

/// The change point at `index` between its neighbours in `cps` (sorted), with the
/// segments' statistics by `test`.
fn stats_at(z: &[f64], cps: &[usize], at: usize, strong: bool) -> ChangePoint {
    let index = cps[at];
    let start = if at == 0 { 0 } else { cps[at - 1] };
    let end = cps.get(at + 1).copied().unwrap_or(z.len());
    let seg = Segments::of(&z[start..index], &z[index..end]);
    ChangePoint {
        index,
        pvalue: seg.t_test(),
        mean_before: seg.mean_1,
        mean_after: seg.mean_2,
        std_before: seg.std_1,
        std_after: seg.std_2,
        strong,
    }
}

/// Change points of one window `z` (indexes within it) at `max_pvalue`.
fn window_points(z: &[f64], max_pvalue: f64, test: Test, seed: u64) -> Vec<usize> {
    let d = divisive::Distances::new(z);
    divisive::detect(z, |c, cps| match test {
        Test::TTest => {
            let (s, e) = divisive::intervals(cps, z.len())
                .into_iter()
                .find(|&(s, e)| s < c.index && c.index < e)
                .unwrap_or((0, z.len()));
            Segments::of(&z[s..c.index], &z[c.index..e]).t_test() <= max_pvalue
        }
        Test::Permutation(b) => {
            permutation_pvalue(z, &d, cps, c.qhat, b, max_pvalue, seed) <= max_pvalue
        }
    })
}

/// One window of the split step: where it starts and the points found in it (indexes in
/// the series).
pub type Window = (usize, Vec<usize>);

/// The split step: the windows of `z` and their weak change points. The windows of `known`
/// (found in the first `known_len` values of the same series) that end within them are
/// taken as they are: a window's points depend on its values alone.
pub fn split_windows(
    z: &[f64],
    params: &Params,
    known: &[Window],
    known_len: usize,
) -> Vec<Window> {
    let window = params.window.max(2);
    let step = (window / 2).max(1);
    let pvalue = match params.test {
        Test::TTest => first_pass_pvalue(params.max_pvalue),
        Test::Permutation(_) => params.max_pvalue,
    };
    let mut windows: Vec<Window> = Vec::new();
    let mut start = 0;
    let mut known = known.iter();
    while start < z.len() {
        let end = (start + window).min(z.len());
        let found = match known.next() {
            Some((s, found)) if *s == start && start + window <= known_len => found.clone(),
            _ => {
                known = [].iter();
                window_points(&z[start..end], pvalue, params.test, start as u64)
                    .into_iter()
                    .map(|i| i + start)
                    .collect()
            }
        };
        let last = found.last().copied().unwrap_or(0);
        windows.push((start, found));
        start = last.max(start + step);
    }
    windows
}

/// The weak change points of the windows, sorted, each once.
pub fn weak_points(windows: &[Window]) -> Vec<usize> {
    let mut cps: Vec<usize> = windows
        .iter()
        .flat_map(|(_, f)| f.iter().copied())
        .collect();
    cps.sort_unstable();
    cps.dedup();
    cps
}

/// The merge step (Fleming et al.): removes the weakest point while one is not significant
/// at `max_pvalue` or, all being significant, while the smallest change is not above
/// `min_magnitude`; the neighbours of a removed point are re-tested. Returns every weak point,
/// those kept marked strong.
pub fn merge(z: &[f64], weak: &[usize], params: &Params) -> Vec<ChangePoint> {
    let mut kept: Vec<usize> = weak.to_vec();
    let mut points: Vec<ChangePoint> = (0..kept.len())
        .map(|i| stats_at(z, &kept, i, true))
        .collect();
    while !points.is_empty() {
        let by_p = (0..points.len())
            .max_by(|&a, &b| points[a].pvalue.total_cmp(&points[b].pvalue))
            .unwrap_or(0);
        let mut weakest = by_p;
        if !(points[by_p].pvalue >= params.max_pvalue || points[by_p].pvalue.is_nan()) {
            weakest = (0..points.len())
                .min_by(|&a, &b| points[a].magnitude().total_cmp(&points[b].magnitude()))
                .unwrap_or(0);
            if points[weakest].magnitude() > params.min_magnitude {
                break;
            }
        }
        points.remove(weakest);
        kept.remove(weakest);
        // The points at the removed one's index and the next, as Otava's merge does (its
        // published results are reproduced by this).
        for at in [weakest, weakest + 1] {
            if at < points.len() {
                points[at] = stats_at(z, &kept, at, true);
            }
        }
    }
    let strong: Vec<usize> = kept.clone();
    let all: Vec<usize> = weak.to_vec();
    (0..all.len())
        .map(|i| {
            let is_strong = strong.contains(&all[i]);
            match is_strong {
                true => points[strong.iter().position(|&s| s == all[i]).unwrap_or(0)].clone(),
                false => {
                    // A weak point's figures between the strong points around it.
                    let mut around = strong.clone();
                    let at = around.partition_point(|&s| s < all[i]);
                    around.insert(at, all[i]);
                    stats_at(z, &around, at, false)
                }
            }
        })
        .collect()
}

/// Change points of `z`, weak and strong: split, then merge.
pub fn detect(z: &[f64], params: &Params) -> Vec<ChangePoint> {
    let weak = weak_points(&split_windows(z, params, &[], 0));
    merge(z, &weak, params)
}

#[cfg(test)]
mod tests;

//! Noise learned from history: each figure's run-to-run noise for a configuration on a host,
//! from the earlier runs of the compared configurations stored on that host. With two or three
//! runs a side a step's own estimate of its noise has two to four degrees of freedom; fourteen
//! earlier runs of the same configuration on the same host know it far better. `compare` lends
//! it as the prior of the moderated t (`moderate.rs`: the row's own variance squeezed towards
//! it, on its degrees of freedom plus the row's), in place of the prior fitted over the other
//! steps, and says so ("noise from 14 earlier runs of these configurations on this host").
//!
//! The variance is that of the log of one run's value within each configuration, pooled over
//! the configurations: `sum (n_g - 1) s_g^2 / sum (n_g - 1)` on `sum (n_g - 1)` degrees of
//! freedom. Earlier runs spread over days include the host's drift, so the noise they give is
//! if anything too large: the conservative side.

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics;
use super::moderate::Prior;
use crate::results::model::{RunResult, RunStatus};

/// Fewest degrees of freedom (earlier runs less one per configuration) a figure's history
/// needs to be lent.
pub const MIN_DF: f64 = 3.0;

/// What earlier runs say about the noise of each figure.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Learned {
    /// Per (step, figure key): the prior (variance of one run's log value, degrees of
    /// freedom).
    pub figures: BTreeMap<(String, String), Prior>,
    /// Earlier runs it came from.
    pub runs: usize,
}

impl Learned {
    /// The prior for `step`'s figure `key`, when its history has [`MIN_DF`] or more degrees
    /// of freedom.
    pub fn prior(&self, step: &str, key: &str) -> Option<&Prior> {
        self.figures
            .get(&(step.to_string(), key.to_string()))
            .filter(|p| p.df >= MIN_DF && p.s2 > 0.0)
    }
}

/// Learns from `groups`, each the earlier complete runs of one configuration on one host.
pub fn learn(groups: &[Vec<RunResult>]) -> Learned {
    // (step, key) -> (sum of (n - 1) s^2, sum of (n - 1))
    let mut acc: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
    let mut runs = 0;
    for group in groups {
        runs += group.len();
        let Some(first) = group.first() else {
            continue;
        };
        for step in &first.steps {
            for metric in metrics::for_step(step) {
                let logs: Vec<f64> = group
                    .iter()
                    .filter_map(|r| {
                        let s = r
                            .steps
                            .iter()
                            .find(|s| s.name == step.name && s.status == RunStatus::Complete)?;
                        metric.run_value(s).filter(|v| *v > 0.0).map(f64::ln)
                    })
                    .collect();
                if logs.len() < 2 {
                    continue;
                }
                let n = logs.len() as f64;
                let mean = logs.iter().sum::<f64>() / n;
                let ss: f64 = logs.iter().map(|x| (x - mean).powi(2)).sum();
                let e = acc
                    .entry((step.name.clone(), metric.key.clone()))
                    .or_default();
                e.0 += ss;
                e.1 += n - 1.0;
            }
        }
    }
    Learned {
        figures: acc
            .into_iter()
            .filter(|(_, (_, df))| *df > 0.0)
            .map(|(k, (ss, df))| (k, Prior { s2: ss / df, df }))
            .collect(),
        runs,
    }
}

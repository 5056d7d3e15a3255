//! The method of a comparison in a few lines, for the head of `compare`'s output: the unit,
//! the test, rounds as blocks, noise borrowed from history, the false discovery rate and the
//! verdict's threshold.

use super::{ADVISED_RUNS, Comparison, Unit, fmt_level, fmt_num};

impl Comparison {
    /// The method in a few lines, for the head of the output.
    pub fn method(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.unit {
            Unit::Runs => {
                out.push(
                    "Unit: the run. Each run's figure for the step (its rate, cost per op, mean \
                     of the per-second largest response times) is one sample, so the variation \
                     between runs is in the error; change = mean B / mean A - 1, tested on its \
                     logarithm: a moderated t (Smyth 2004) where the noise of one run, pooled \
                     over both sides, is shrunk towards that of the same figure in the other \
                     steps (prior_df: the degrees of freedom borrowed), else Welch's t."
                        .to_string(),
                );
                if self.rounds > 0 {
                    out.push(format!(
                        "Rounds as blocks: both sides ran in the same {} rounds of one \
                         experiment; {} of the rows are tested paired by round (a paired t on \
                         the rounds' log ratios ln(B/A), moderated the same way; change = \
                         their geometric mean - 1), those where pairing pays: where the \
                         rounds share enough of the noise to make up for the degrees of \
                         freedom it spends (its interval at 1 - alpha narrower); the others \
                         as above.",
                        self.rounds,
                        self.paired_rows()
                    ));
                }
                if self.duet_rounds > 0 {
                    out.push(format!(
                        "Duet: in {} of the rounds the two runs ran at the same time on the \
                         host (ibench experiment --duet), so what the host did to one (a \
                         neighbour, steal, a slower disk) it did to the other, and the round's \
                         ratio B/A keeps little of it (Bulej et al. 2020).",
                        self.duet_rounds
                    ));
                }
                if self.history_rows > 0 {
                    out.push(format!(
                        "Noise from history: {} row(s) borrow the run-to-run noise of {} \
                         earlier runs of these configurations on this host (the moderated t's \
                         prior, prior_df its degrees of freedom) instead of the other steps'.",
                        self.history_rows, self.history_runs
                    ));
                }
                if self.runs_a.min(self.runs_b) < ADVISED_RUNS {
                    out.push(format!(
                        "With 2 runs on a side a step's own noise has 2 degrees of freedom: a \
                         change can be told only when far beyond the noise, and where the \
                         figure's many steps agree in their noise (prior_df > 0); a step \
                         noisier than its peers, a change of a few percent, or a figure of \
                         two or three steps cannot be told. {ADVISED_RUNS} or more runs a side are advised."
                    ));
                }
            }
            Unit::Seconds => out.push(format!(
                "ONLY NOISE WITHIN RUNS IS ACCOUNTED FOR: {} a single run, so the samples are \
                 the runs' seconds (first and last dropped, their number corrected for \
                 autocorrelation). The variation between runs (a new process, server, file \
                 layout), usually the larger, is not in these intervals. Repeat each \
                 configuration at least {ADVISED_RUNS} times (same --label) to test on runs.",
                match (self.runs_a, self.runs_b) {
                    (1, 1) => "A and B each have",
                    (1, _) => "A has",
                    _ => "B has",
                }
            )),
        }
        if self.tests == 0 {
            out.push("No step and metric had enough samples to test.".to_string());
            return out;
        }
        let families: Vec<String> = self
            .families
            .iter()
            .map(|f| {
                format!(
                    "{}: {} tests, {} discovered, intervals at {}",
                    f.name,
                    f.tests,
                    f.discoveries,
                    fmt_level(f.ci_level)
                )
            })
            .collect();
        out.push(format!(
            "False discovery rate {}% within each family of tests (Benjamini-Hochberg; q = \
             adjusted p): {}. Intervals of the ratio of the means (delta method, log scale) at \
             the family's level (1 - max(R,1) alpha/m, Benjamini-Yekutieli), so they exclude 0 \
             exactly for the discoveries.",
            fmt_num(self.alpha * 100.0),
            families.join("; "),
        ));
        out.push(format!(
            "Better/worse: interval beyond the noise threshold +-{}% (--noise-threshold); \
             no change: interval within it; inconclusive: neither.",
            fmt_num(self.noise_pct)
        ));
        out
    }
}

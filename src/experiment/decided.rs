//! Repeats until decided (`ibench experiment --until-decided`): after each round, every cell is
//! compared with the base by `compare`'s own test (rounds as blocks where they pay), and
//! another round runs while a main figure (a step's throughput) is inconclusive, up to a
//! maximum. The machine time a verdict costs is then what it needs, and the output says how
//! many rounds each decision took.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;

use super::Plan;
use crate::report::compare::families::main_figure;
use crate::report::compare::{self, Verdict};

/// Rounds `--until-decided` runs at most unless told (`--max-repeats`).
pub const DEFAULT_MAX_REPEATS: u32 = 10;

/// A main figure of one cell against the base: what its verdict is after this many rounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The cell (label).
    pub cell: String,
    /// Step.
    pub step: String,
    /// Figure (label).
    pub figure: String,
    /// The verdict.
    pub verdict: Verdict,
}

/// Every cell's main figures against the base, from the runs in `store`.
pub fn decisions(store: &Path, plan: &Plan) -> Result<Vec<Decision>> {
    let store = crate::results::store::Store::open_existing(store)?;
    let base = store.load_all(&plan.base)?;
    let cells: BTreeSet<&str> = plan
        .cells
        .iter()
        .map(|c| c.label.as_str())
        .filter(|l| *l != plan.base)
        .collect();
    let mut out = Vec::new();
    for cell in cells {
        let runs = store.load_all(cell)?;
        let cmp = compare::compare(&base, &runs, &compare::Options::default());
        out.extend(
            cmp.rows
                .iter()
                .filter(|r| main_figure(&r.key) && r.verdict != Verdict::Untestable)
                .map(|r| Decision {
                    cell: cell.to_string(),
                    step: r.step.clone(),
                    figure: r.metric.clone(),
                    verdict: r.verdict,
                }),
        );
    }
    Ok(out)
}

/// The decisions still open: inconclusive (another round may settle them; a step flagged or
/// disturbed in a run stays so whatever follows).
pub fn open(decisions: &[Decision]) -> Vec<&Decision> {
    decisions
        .iter()
        .filter(|d| d.verdict == Verdict::Inconclusive)
        .collect()
}

/// One line per decision for the end of the experiment: `lite/full/glibc/s l.i1 ins/s:
/// worse after 3 rounds`.
pub fn summary(decisions: &[Decision], rounds: u32) -> String {
    decisions
        .iter()
        .map(|d| {
            format!(
                "  {} {} {}: {} after {rounds} round(s)\n",
                d.cell,
                d.step,
                d.figure,
                d.verdict.as_str()
            )
        })
        .collect()
}

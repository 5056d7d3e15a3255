//! `ibench compare --flame-graphs DIR`: per step, a differential flame graph of B against A
//! from the runs' `--profile` stacks (`<run>.profiles/<step>.folded`, found beside the
//! results store): B's stacks, red where their share of the samples grew, blue where it shrank.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::metrics::profile::{draw_differential, file_stem};
use crate::results::model::RunResult;

/// The folded stacks of `step` in the first of `runs` that has them.
fn folded(dir: &Path, runs: &[RunResult], step: &str) -> Option<PathBuf> {
    runs.iter()
        .filter_map(|r| r.steps.iter().find(|s| s.name == step)?.profile.as_ref())
        .map(|p| dir.join(p).with_extension("folded"))
        .find(|p| p.is_file())
}

/// Draws `<out>/<step>.diff.svg` for each step that a run of A and a run of B profiled, with
/// their stacks found under `dir`; returns the steps and files drawn.
pub fn differentials(
    dir: &Path,
    a: &[RunResult],
    b: &[RunResult],
    out: &Path,
) -> Result<Vec<(String, PathBuf)>> {
    let mut drawn = Vec::new();
    let Some(first) = a.first() else {
        return Ok(drawn);
    };
    for step in &first.steps {
        let (Some(fa), Some(fb)) = (folded(dir, a, &step.name), folded(dir, b, &step.name)) else {
            continue;
        };
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        crate::safe_fs::check_dir(out, "--flame-graphs")?;
        let svg = out.join(format!("{}.diff.svg", file_stem(&step.name)));
        let title = format!(
            "{}: B against A (red: a larger share in B, blue: smaller)",
            step.name
        );
        draw_differential(&fa, &fb, &svg, &title)?;
        drawn.push((step.name.clone(), svg));
    }
    Ok(drawn)
}

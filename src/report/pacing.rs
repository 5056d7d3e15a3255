//! The terminal summary's section on each step's warm-up and cool-down (`--warmup`,
//! `--cooldown`): what ran before the measured part and is in none of its figures, and the
//! pause the run took before the step.

use crate::output::format::seconds;
use crate::report::table::Table;
use crate::results::model::RunResult;

/// A table of the steps that warmed up or paused before; empty for a run with neither.
pub fn section(run: &RunResult) -> String {
    let mut t = Table::new(["step", "cool-down", "warm-up", "warm-up ops (not counted)"]);
    for s in &run.steps {
        if s.warmup.is_none() && s.cooldown_s.is_none() {
            continue;
        }
        let (warm, ops) = match &s.warmup {
            Some(w) => (
                seconds(w.seconds),
                w.ops
                    .iter()
                    .map(|(op, n)| format!("{n} {op}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            None => ("-".to_string(), "-".to_string()),
        };
        let cool = s.cooldown_s.map_or_else(|| "-".to_string(), seconds);
        t.row([
            crate::output::escape::line(&s.name).into_owned(),
            cool,
            warm,
            ops,
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    format!(
        "\nBefore each step: the pause (--cooldown) and the warm-up (--warmup), in no figure \
         above\n\n{}",
        t.to_text()
    )
}

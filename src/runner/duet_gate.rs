//! The steps of a duet run start together with its partner's (`ibench experiment --duet`):
//! before each step, once its maintenance pause is done, the run says so on its stdout (one
//! line, [`PREFIX`]) and waits for one byte on its stdin, which the experiment writes when the
//! partner has reached a step too, or has ended (`experiment/duet.rs` relays). So the faster
//! run waits at the end of each step for the slower one, and the two runs' steps meet the
//! same host from their first second: a step of one is never measured beside the other's
//! maintenance pause or a different step.
//!
//! The experiment closes the pipe when it is interrupted or ends: the wait then ends, as
//! interrupted when this process got the signal too, else with an error naming the
//! experiment.

use std::io::{Read, Write};

use anyhow::{Result, bail};

use super::steps::StepGate;
use crate::error::Interrupted;
use crate::results::model::RunResult;

/// What every line of the protocol starts with (lines without it are the run's own output,
/// passed on).
pub const PREFIX: &str = "ibench-duet:";
/// The line a run writes before each step, after [`PREFIX`] and a space: `step INDEX NAME`.
pub const STEP: &str = "step";
/// The line a run writes when its steps are over (it waits for nothing more).
pub const END: &str = "end";

/// A duet run's [`StepGate`]: this process's stdio is the pipe to its experiment.
#[derive(Debug, Default)]
pub struct DuetGate;

impl DuetGate {
    /// Says `line` to the experiment.
    fn say(line: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{PREFIX} {line}")?;
        out.flush()?;
        Ok(())
    }
}

impl StepGate for DuetGate {
    fn start_step(
        &mut self,
        index: usize,
        name: &str,
        maintenance: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        maintenance()?;
        Self::say(&format!("{STEP} {index} {name}"))?;
        let mut byte = [0u8; 1];
        loop {
            match std::io::stdin().lock().read(&mut byte) {
                Ok(1) => return Ok(()),
                Err(e)
                    if e.kind() == std::io::ErrorKind::Interrupted
                        && !crate::interrupt::requested() =>
                {
                    continue;
                }
                _ => break,
            }
        }
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        bail!("the experiment that started this duet run has ended before step {name}")
    }

    fn end_step(&mut self, _index: usize, _run: &RunResult) -> Result<()> {
        Ok(())
    }

    fn end_run(&mut self, _run: &RunResult, _outcome: &Result<()>) {
        let _ = Self::say(END);
    }

    fn records_refusal(&self) -> bool {
        false
    }
}

/// One line a duet run wrote, as the experiment reads it: `Some(true)` at a step, `Some(false)`
/// at the end, `None` when it is the run's own output.
pub fn parse(line: &str) -> Option<bool> {
    let rest = line.strip_prefix(PREFIX)?.trim();
    if rest == END {
        return Some(false);
    }
    rest.strip_prefix(STEP).map(|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_a_run_writes_are_read_back() {
        assert_eq!(parse("ibench-duet: step 0 l.i0\n"), Some(true));
        assert_eq!(parse("ibench-duet: end\n"), Some(false));
        assert_eq!(parse("l.i0 done\n"), None);
        assert_eq!(parse("ibench-duet: what\n"), None);
    }
}

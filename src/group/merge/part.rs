//! A host's part as the merge sees it, and when the hosts ran a step on the store's clock.

use chrono::{DateTime, Duration as ChronoDuration, Utc};

use crate::results::group::GroupHost;
use crate::results::model::{RunResult, StepResult};

/// A part's step as the merge sees it.
pub(super) struct Part<'a> {
    /// The host that wrote it.
    pub(super) host: &'a GroupHost,
    /// Its document.
    pub(super) run: &'a RunResult,
    /// The step.
    pub(super) step: &'a StepResult,
    /// Its start on the store's clock.
    pub(super) start: DateTime<Utc>,
}

impl<'a> Part<'a> {
    /// Step `i` of the group's steps in `run`, when `run` has it (a resumed attempt's part
    /// has the steps from its first on).
    pub(super) fn at(run: &'a RunResult, i: usize) -> Option<Self> {
        let host = host_of(run)?;
        let step = run.steps.get(i.checked_sub(host.first_step)?)?;
        Some(Part {
            host,
            run,
            step,
            start: on_store_clock(step.started_at, host),
        })
    }
}

/// The host record a part carries (its own, the only member of its group).
pub(super) fn host_of(run: &RunResult) -> Option<&GroupHost> {
    run.group.as_ref()?.members.first()
}

/// `t`, read on `host`'s clock, on the store's.
pub(super) fn on_store_clock(t: DateTime<Utc>, host: &GroupHost) -> DateTime<Utc> {
    t + ChronoDuration::microseconds(host.clock_offset_us)
}

/// When the hosts ran a step, on the store's clock.
pub(super) struct Timeline {
    /// The first host's start.
    pub(super) start: DateTime<Utc>,
    /// From the first host's start to the last host's end, seconds.
    pub(super) span_s: f64,
}

impl Timeline {
    /// The step's timeline over the hosts that ran it.
    pub(super) fn of(parts: &[Part]) -> Self {
        let start = parts
            .iter()
            .map(|p| p.start)
            .min()
            .unwrap_or(parts[0].step.started_at);
        let span_s = parts
            .iter()
            .map(|p| {
                (p.start - start).num_microseconds().unwrap_or(0) as f64 / 1e6 + p.step.duration_s
            })
            .fold(0.0, f64::max);
        Timeline { start, span_s }
    }

    /// Whole seconds `part`'s per-second series lag the group's first start by.
    pub(super) fn shift(&self, part: &Part) -> usize {
        ((part.start - self.start).num_milliseconds().max(0) as f64 / 1e3).round() as usize
    }
}

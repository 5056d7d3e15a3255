//! What the results hold for a step beyond the model's figures, per run, for the report's
//! sections that show it: the per-second series in a few figures (`seconds.rs`), MyRocks'
//! compaction statistics (`compaction.rs`), each client host's part of a group run
//! (`client_hosts.rs`), the engine's perf context over select-min (`perf_context.rs`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::client_hosts::HostPart;
use crate::report::compaction::RunCompaction;
use crate::report::model::Stat;
use crate::report::seconds::StepSeconds;
use crate::results::model::{RunResult, StepResult};

/// One group's step, run by run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Measured {
    /// Per run: the per-second series' spreads and the memory beyond the cache.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seconds: Vec<StepSeconds>,
    /// Per run with any: the compaction statistics at the step's end.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compaction: Vec<RunCompaction>,
    /// Per host of each merged group run: its part of the step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostPart>,
    /// The engine's perf context counters over the step's select-min that are not zero,
    /// median over the runs (`perf_context.rs`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub perf_context: BTreeMap<String, Stat>,
}

impl Measured {
    /// Whether nothing was measured (left out of the report's JSON).
    pub fn is_empty(&self) -> bool {
        self.seconds.is_empty()
            && self.compaction.is_empty()
            && self.hosts.is_empty()
            && self.perf_context.is_empty()
    }

    /// The figures of the group's `runs` and their `steps` (one each, same order).
    pub fn of(runs: &[&RunResult], steps: &[&StepResult]) -> Measured {
        let pairs = || runs.iter().zip(steps);
        Measured {
            seconds: pairs().filter_map(|(r, s)| StepSeconds::of(r, s)).collect(),
            compaction: pairs()
                .filter_map(|(r, s)| {
                    let tables = crate::dbms::mysql::compaction::of_step(&s.engine_status);
                    (!tables.is_empty()).then(|| RunCompaction {
                        run_id: r.run_id.clone(),
                        tables,
                    })
                })
                .collect(),
            hosts: pairs()
                .flat_map(|(r, s)| crate::report::client_hosts::parts(r, &s.name))
                .collect(),
            perf_context: crate::report::perf_context::stats(steps),
        }
    }
}

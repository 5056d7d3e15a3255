//! What the results hold for a step beyond the model's figures, per run, for the report's
//! sections that show it: the per-second series in a few figures (`seconds.rs`), MyRocks'
//! compaction statistics (`compaction.rs`), each client host's part of a group run
//! (`client_hosts.rs`), the engine's perf context over select-min (`perf_context.rs`), and
//! what the runs left beside their figures: the engine's status texts at the step's end and
//! the `--profile` flame graphs. The HTML report renders these from the model alone.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::report::client_hosts::HostPart;
use crate::report::compaction::RunCompaction;
use crate::report::seconds::CostSpreads;
use crate::report::stat::Stat;
use crate::results::model::{RunResult, StepResult};

/// One group's step, run by run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Measured {
    /// Per run: the per-second series' spreads and the memory beyond the cache.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seconds: Vec<CostSpreads>,
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
    /// Per run and section, the engine's status report at the step's end (not in the JSON
    /// report: the runs' documents have it).
    #[serde(skip)]
    pub engine_status: Vec<EngineStatus>,
    /// Per run with one, the step's `--profile` flame graph.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<ProfileLink>,
}

/// One section of an engine's status report at a step's end, of one run.
#[derive(Clone, Debug, Serialize)]
pub struct EngineStatus {
    /// The run.
    pub run: String,
    /// The section (`innodb`, `rocksdb DBSTATS rocksdb`).
    pub section: String,
    /// Its text.
    pub text: String,
}

/// A run's flame graph of a step.
#[derive(Clone, Debug, Serialize)]
pub struct ProfileLink {
    /// The run.
    pub run: String,
    /// The SVG's path, relative to the results store's directory.
    pub path: String,
}

impl Measured {
    /// Whether nothing was measured (left out of the report's JSON).
    pub fn is_empty(&self) -> bool {
        self.seconds.is_empty()
            && self.compaction.is_empty()
            && self.hosts.is_empty()
            && self.perf_context.is_empty()
            && self.engine_status.is_empty()
            && self.profiles.is_empty()
    }

    /// The figures of the group's `runs` and their `steps` (one each, same order); what is
    /// per run (the per-second series, the status texts, the flame graphs) of `all_runs` and
    /// `all_steps`, the step in every run of the group whether it completed or not (the
    /// HTML charts draw every run's seconds).
    pub fn of(
        (all_runs, all_steps): (&[&RunResult], &[&StepResult]),
        runs: &[&RunResult],
        steps: &[&StepResult],
    ) -> Measured {
        let pairs = || runs.iter().zip(steps);
        let all = || all_runs.iter().zip(all_steps);
        Measured {
            seconds: all().filter_map(|(r, s)| CostSpreads::of(r, s)).collect(),
            engine_status: all()
                .flat_map(|(r, s)| {
                    s.engine_status.iter().map(|(section, text)| EngineStatus {
                        run: r.run_id.clone(),
                        section: section.clone(),
                        text: text.clone(),
                    })
                })
                .collect(),
            profiles: all()
                .filter_map(|(r, s)| {
                    Some(ProfileLink {
                        run: r.run_id.clone(),
                        path: s.profile.clone()?,
                    })
                })
                .collect(),
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

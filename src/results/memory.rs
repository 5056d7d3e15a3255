//! A managed server's memory as its settings allow it, against the run's memory limit: the
//! record the results keep (`managed_server.memory_estimate`); `crate::server::memory` makes it.

use serde::{Deserialize, Serialize};

/// A managed server's memory as its settings allow it, recorded in the results
/// (`managed_server.memory_estimate`) when the run had a memory limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryEstimate {
    /// The sum of the parts, bytes.
    pub bytes: u64,
    /// The run's memory limit, bytes.
    pub limit_bytes: u64,
    /// What it is made of, largest first.
    pub parts: Vec<MemoryPart>,
}

/// One part of a [`MemoryEstimate`]: `times` x the value of `setting`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryPart {
    /// The setting (`maintenance_work_mem`; a few of MariaDB's per-connection buffers are one
    /// part, named by a description).
    pub setting: String,
    /// Its value, bytes.
    pub each_bytes: u64,
    /// How many of it the run may use at once.
    pub times: u64,
    /// What each one is for (`index builds`; empty for one of a single thing).
    pub per: String,
    /// `each_bytes` x `times`.
    pub bytes: u64,
}

impl MemoryPart {
    /// `maintenance_work_mem 64 MiB x 2 index builds`.
    pub fn describe(&self) -> String {
        let each = mib(self.each_bytes);
        match self.times {
            1 => format!("{} {each}", self.setting),
            n => format!("{} {each} x {n} {}", self.setting, self.per),
        }
    }
}

/// Bytes as whole MiB, rounded.
pub fn mib(b: u64) -> String {
    format!("{} MiB", b.saturating_add(1 << 19) >> 20)
}

//! What a results document records about a run made by several client hosts (`ibench run
//! --group NAME --hosts N`): the group, each host and its own figures per step. The group's
//! code (joining, barriers, merging the parts) is `crate::group`; this is only its record,
//! part of the results model. See docs/multihost.md.

use serde::{Deserialize, Serialize};

/// A run's group: in a host's part, that host alone; in the merged run, every host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupInfo {
    /// The group's name (`--group`); the merged run's id.
    pub name: String,
    /// Hosts the group was started with (`--hosts`).
    pub hosts: usize,
    /// The hosts whose parts are known, by index.
    pub members: Vec<GroupHost>,
}

/// One host of a group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupHost {
    /// Index in the group (0: the host that runs the maintenance pause), in join order.
    pub index: usize,
    /// Host name.
    pub hostname: String,
    /// Process id of its ibench.
    pub pid: u32,
    /// Id of its part (the stem of its results file on that host).
    pub run_id: String,
    /// First client number it runs.
    pub first_client: usize,
    /// Clients it runs (numbers `first_client..first_client + clients`).
    pub clients: usize,
    /// The store's clock minus this host's clock when it joined, microseconds (the sample
    /// with the shortest round trip, corrected by half of it).
    pub clock_offset_us: i64,
    /// Round trip of that sample, microseconds (the offset is good to about half of it).
    pub clock_rtt_us: u64,
    /// Its price per hour (`--cost-per-hour`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    /// Its part's status, as a run's (`running` for a host that vanished mid-step).
    pub status: String,
    /// The group's attempt it ran in: 0, then one more each time the group was resumed
    /// (`--resume`).
    #[serde(default, skip_serializing_if = "crate::serde_skip::is_zero")]
    pub attempt: usize,
    /// Index, in the group's steps, of the first step it ran (0, or where its attempt went
    /// on): its part's steps are those from there.
    #[serde(default, skip_serializing_if = "crate::serde_skip::is_zero")]
    pub first_step: usize,
    /// What each step measured on this host (filled in the merged run).
    #[serde(default)]
    pub steps: Vec<HostStep>,
}

/// One step as one host of a group measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostStep {
    /// Step name.
    pub name: String,
    /// Its status on this host, as a step's (`complete`, `failed`...).
    pub status: String,
    /// When it started on this host, after the group's first host started it, on the store's
    /// clock, milliseconds.
    pub start_offset_ms: f64,
    /// Measured duration on this host, seconds.
    pub duration_s: f64,
    /// Rows inserted.
    pub rows_inserted: u64,
    /// Rows deleted.
    pub rows_deleted: u64,
    /// Queries.
    pub queries: u64,
    /// Rows inserted per second.
    pub inserts_per_s: f64,
    /// Rows deleted per second.
    pub deletes_per_s: f64,
    /// Queries per second.
    pub queries_per_s: f64,
    /// ibench CPU per op on this host, microseconds (ops as the step's cost counts them).
    pub client_cpu_us_per_op: Option<f64>,
    /// Host CPU per op on this host, microseconds.
    pub host_cpu_us_per_op: Option<f64>,
}

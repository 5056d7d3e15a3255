//! The record of a cluster's node that died during a step (`--on-node-failure`), and of its
//! start again at the step's end.

use serde::{Deserialize, Serialize};

/// A replica or Galera node that died during a step: which, when, how it was seen, and what
/// it did to the step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeDeath {
    /// `n2`, `r1`, `primary`.
    pub node: String,
    /// `galera node`, `replica`, `primary`.
    pub role: String,
    /// Its server's process id.
    pub pid: u32,
    /// Its SQL port on 127.0.0.1.
    pub port: u16,
    /// The step it died in.
    pub step: String,
    /// Seconds into the step it was seen dead (to a tenth of a second).
    pub at_s: f64,
    /// How it was seen (`process gone`, `stopped answering`).
    pub seen: String,
    /// What it did to the step (`failed the step`, or the step went on without it).
    pub outcome: String,
    /// The line said of it (`galera node n2 (pid .., port ..) died 4.2 s into l.i1`).
    pub message: String,
    /// With `continue`, a node started again at the step's end: how it rejoined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejoin: Option<NodeRejoin>,
}

/// A node started again after it died (`--on-node-failure continue`): a Galera node, a
/// replica.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRejoin {
    /// Its new server's pid.
    pub pid: Option<u32>,
    /// A Galera node: seconds from starting it until it was `Synced` with the cluster again.
    pub synced_s: Option<f64>,
    /// A replica: seconds from starting it until it accepted connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_s: Option<f64>,
    /// A replica: seconds from then until it had replayed up to the primary's position as it
    /// was when the replica was started again; `None` when not within
    /// `server::replicas::rejoin::CATCH_UP_WAIT_S` (it runs, and is read from, anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caught_up_s: Option<f64>,
    /// Why it could not be started or did not sync (then it stays down).
    pub error: Option<String>,
}

//! What a TPC-C step records beside every step's figures (`steps[].tpcc`): tpmC, each
//! transaction type's count, share of the mix, rollbacks and retries, the isolation level and
//! foreign keys it ran with, the rows of each table after a load, and the consistency
//! conditions checked after the step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One transaction type's figures in a step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TransactionFigures {
    /// Transactions completed (committed, or rolled back by their own logic).
    pub count: u64,
    /// Per second of the step.
    pub per_s: f64,
    /// Percent of all the step's transactions.
    pub share_pct: f64,
    /// Rolled back by their own logic (New-Order's unused item: ~1% of New-Orders).
    pub rollbacks: u64,
    /// Tried again after a deadlock, serialization failure or lost connection.
    pub retries: u64,
}

/// One consistency condition (clause 3.3.2), checked over every district.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsistencyCheck {
    /// Its number in the specification (1-4).
    pub condition: u8,
    /// What it says.
    pub name: String,
    /// Whether every warehouse or district met it.
    pub pass: bool,
    /// The first district that did not, with its values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A TPC-C step's own figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TpccFigures {
    /// New-Order transactions per minute (committed ones: those rolled back are not counted).
    pub tpmc: f64,
    /// Per transaction type (`new_order`, `payment`, ...).
    #[serde(default)]
    pub transactions: BTreeMap<String, TransactionFigures>,
    /// Districts that Delivery transactions found without a new order.
    #[serde(default)]
    pub delivery_skipped: u64,
    /// The isolation level the transactions ran at (the DBMS's default, named).
    #[serde(default)]
    pub isolation: String,
    /// Whether the tables have sysbench-tpcc's foreign keys (and why not, where not).
    #[serde(default)]
    pub foreign_keys: String,
    /// After a load: the rows of each table (summed over the sets), by base name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rows: BTreeMap<String, u64>,
    /// The consistency conditions, checked after the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consistency: Vec<ConsistencyCheck>,
    /// With `--rate`: the transactions per second asked for over all clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// With `--rate`: transactions the schedule had due in the step that the clients, behind
    /// it at the end, never started.
    #[serde(default, skip_serializing_if = "crate::serde_skip::is_zero")]
    pub missed: u64,
}

//! A step's per-second series in the results document: all clients together, and per client.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Per-second series of one scope (all clients, or one client), by op type.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SeriesSet {
    /// Per op type that occurred.
    pub ops: BTreeMap<String, Series>,
}

/// One op type's per-second series; index i covers seconds [i, i+1) after the step start.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Series {
    /// Statements completed per second.
    pub ops: Vec<u64>,
    /// Rows per second (inserts, deletes); equals `ops` for queries.
    pub rows: Vec<u64>,
    /// Largest response time in each second, microseconds (0: none completed).
    pub max_us: Vec<u64>,
}

/// Per-second series for a step.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PerSecond {
    /// All clients together.
    pub total: SeriesSet,
    /// One per client, by client number.
    pub clients: Vec<SeriesSet>,
}

/// The rate met or exceeded in x% of the step's full seconds (rows/s; queries/s for queries).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RatePercentiles {
    /// Met or exceeded in 50% of seconds.
    pub p50: u64,
    /// ... in 90% of seconds.
    pub p90: u64,
    /// ... in 95% of seconds.
    pub p95: u64,
    /// ... in 99% of seconds.
    pub p99: u64,
    /// Lowest full second.
    pub min: u64,
    /// Full seconds considered.
    pub seconds: usize,
}

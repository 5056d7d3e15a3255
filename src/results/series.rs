//! A step's per-second series in the results document: the merged series of all clients, and
//! per client a summary of its own (its full series only when the run asked for them,
//! `--per-client-series`: an hour at 1,024 clients of full series is hundreds of MB).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Per-second series of one scope (all clients, or one client), by op type.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SeriesSet {
    /// Per op type that occurred.
    pub ops: BTreeMap<String, OpSeries>,
}

/// One op type's per-second series; index i covers seconds [i, i+1) after the step start.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpSeries {
    /// Statements completed per second.
    pub ops: Vec<u64>,
    /// Rows per second (inserts, deletes); equals `ops` for queries.
    pub rows: Vec<u64>,
    /// Largest response time in each second, microseconds (0: none completed).
    pub max_us: Vec<u64>,
    /// Mean response time in each second, microseconds (0: none completed). All clients'
    /// series only (not one client's); absent in documents written before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mean_us: Vec<u64>,
    /// The response time 95% of each second's ops met, microseconds, within 25% above
    /// (`metrics/seconds.rs`) and never above that second's `max_us` (0: none completed).
    /// All clients' series only; absent in documents written before it. In a group's merged
    /// document the largest of its hosts' (an upper bound).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub p95_us: Vec<u64>,
}

/// Per-second series for a step.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PerSecond {
    /// All clients together.
    pub total: SeriesSet,
    /// One per client, by client number: only when the run asked for them (the config's
    /// `per_client_series`), empty (absent) otherwise. Documents written before the
    /// summaries always have them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<SeriesSet>,
    /// Each client's series summarised, by client number, for the clients that completed an
    /// op in the step's seconds. Absent in documents written before them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_summaries: Vec<ClientSeconds>,
}

/// One client's per-second series, summarised per op type.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientSeconds {
    /// Client number, 0-based.
    pub client: usize,
    /// Per op type it completed.
    pub ops: BTreeMap<String, SecondsSummary>,
}

/// One client's per-second series of one op type in a few figures. Its sums cover every
/// second of the series (they add up, over the clients, to the merged series' sums); its
/// rates cover the step's full seconds, as the step's `rate_percentiles` do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondsSummary {
    /// Statements completed (the sum of its per-second `ops`).
    pub ops: u64,
    /// Rows (the sum of its per-second `rows`: queries for queries).
    pub rows: u64,
    /// Largest response time in any second, microseconds.
    pub max_us: u64,
    /// Its rate (rows/s) met or exceeded in x% of the step's full seconds; absent when the
    /// step had no full second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RatePercentiles>,
    /// Its highest rate in a full second (rows/s).
    pub max_rate: u64,
    /// Full seconds in which it completed none of these ops (a stall; or, for a rate-limited
    /// writer, a second no batch fell due in).
    pub idle_seconds: usize,
    /// Longest run of consecutive such seconds.
    pub longest_idle_s: usize,
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

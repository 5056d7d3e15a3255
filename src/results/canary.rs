//! The host probe of `--canary` as the results record it: a fixed CPU loop, an fsync's
//! latency and a memory copy, measured before and after the run (`crate::metrics::canary`), so
//! that drift of the host itself shows as drift of the canary.

use serde::{Deserialize, Serialize};

/// One probe of the host.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Milliseconds a fixed single-threaded CPU loop took (less is faster).
    pub cpu_ms: f64,
    /// Median milliseconds of a 4 KiB write and fdatasync in the results' directory.
    pub fsync_ms: f64,
    /// GB per second a 64 MiB memory copy ran at.
    pub memcpy_gb_s: f64,
}

/// The probes of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Canary {
    /// Before the first step.
    pub before: Probe,
    /// After the last step (absent when the run stopped before it could be taken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Probe>,
}

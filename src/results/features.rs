//! What the host could do when a run started (`ibench doctor`'s checks, in their cheap form):
//! one entry per feature ibench may use, available or not, and why.

use serde::{Deserialize, Serialize};

/// One feature of the host (`ibench doctor` prints one line of each).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFeature {
    /// Its name (`postgres`, `perf`, `cgroup`, `sysbench`).
    pub name: String,
    /// Whether ibench can use it here.
    pub available: bool,
    /// What was found (a path, a version) when available, else why not.
    pub detail: String,
    /// The command that installs or enables it (Debian), when it is missing and one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}

/// The names of the features in `features` that are missing, in order.
pub fn missing(features: &[HostFeature]) -> Vec<&str> {
    features
        .iter()
        .filter(|f| !f.available)
        .map(|f| f.name.as_str())
        .collect()
}

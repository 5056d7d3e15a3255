//! What a run records of the prepared dataset it started from (`crate::dataset`).

use serde::{Deserialize, Serialize};

/// How the files of a tree reached their copy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Every file cloned (reflink): no bytes copied.
    Reflink,
    /// Every file's bytes copied (the file system cannot clone, or the trees are on
    /// different file systems).
    #[default]
    Copy,
    /// Some files cloned, some copied.
    Mixed,
}

impl Method {
    /// Its name in messages and results (`reflink`, `copy`, `mixed`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Reflink => "reflink",
            Method::Copy => "copy",
            Method::Mixed => "mixed",
        }
    }
}

/// What restoring a dataset did, recorded with the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Restored {
    /// The dataset's name.
    pub name: String,
    /// Its digest (its manifest's).
    pub sha256: String,
    /// Files restored.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Reflink, copy, or mixed.
    pub method: Method,
    /// Seconds the restore took, its check included.
    pub seconds: f64,
    /// Seconds of them spent checking the restored files against the dataset's SHA-256
    /// (0 in the results of an earlier ibench, which did not check).
    #[serde(default)]
    pub verify_seconds: f64,
}

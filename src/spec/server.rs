//! How to start a managed server: binaries, configuration, allocator. Stored with the results;
//! `server/` starts it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dbms::mysql::Engine;
use crate::error::UsageError;
use crate::server::ServerKind;

/// Memory allocator of the server process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Malloc {
    /// The C library's malloc (no LD_PRELOAD).
    #[default]
    Glibc,
    /// jemalloc (Debian: libjemalloc2).
    Jemalloc,
    /// tcmalloc (Debian: libtcmalloc-minimal4).
    Tcmalloc,
}

const LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/lib/x86_64-linux-gnu",
];

impl Malloc {
    /// The library to LD_PRELOAD, if any; a usage error naming the package when missing.
    pub fn library(self) -> Result<Option<PathBuf>, UsageError> {
        let (file, package) = match self {
            Malloc::Glibc => return Ok(None),
            Malloc::Jemalloc => ("libjemalloc.so.2", "libjemalloc2"),
            Malloc::Tcmalloc => ("libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"),
        };
        LIB_DIRS
            .iter()
            .map(|d| Path::new(d).join(file))
            .find(|p| p.exists())
            .map(Some)
            .ok_or_else(|| {
                UsageError::new(format!(
                    "--malloc {}: {file} not found in {}; install it (apt-get install {package})",
                    format!("{self:?}").to_lowercase(),
                    LIB_DIRS.join(", ")
                ))
            })
    }
}

/// How to start a managed server; stored with the results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerSpec {
    /// Which server.
    pub kind: ServerKind,
    /// Table engine (MariaDB).
    pub engine: Engine,
    /// Directory holding the server binaries (default: discovered).
    pub bin_dir: Option<PathBuf>,
    /// Config fragment (postgresql.conf or my.cnf [mysqld] lines), as given.
    pub config_text: Option<String>,
    /// Where `config_text` came from.
    pub config_file: Option<PathBuf>,
    /// `key=value` settings applied after the fragment.
    pub options: Vec<(String, String)>,
    /// Allocator.
    pub malloc: Malloc,
    /// Leave the server running after the run.
    pub keep: bool,
    /// Seconds to wait for the server to accept connections.
    pub start_timeout_s: u64,
}

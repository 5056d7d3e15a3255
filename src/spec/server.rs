//! How to start a managed server: binaries, configuration, allocator. Stored with the results;
//! `server/` starts it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::dbms::DbmsKind;

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
    /// Name as written (`glibc`, `jemalloc`, `tcmalloc`).
    pub fn name(self) -> &'static str {
        match self {
            Malloc::Glibc => "glibc",
            Malloc::Jemalloc => "jemalloc",
            Malloc::Tcmalloc => "tcmalloc",
        }
    }

    /// The library to LD_PRELOAD, if any. When it is missing, the message starts with the
    /// allocator's name and names the package to install (callers put their own name for
    /// the setting before it: `--malloc`, `allocator`).
    pub fn find_library(self) -> Result<Option<PathBuf>, String> {
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
                format!(
                    "{}: {file} not found in {}; install it (apt-get install {package})",
                    self.name(),
                    LIB_DIRS.join(", ")
                )
            })
    }
}

/// How to start a managed server; stored with the results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerSpec {
    /// Which server: the DBMS it serves, written as its server name (`mariadb`).
    #[serde(with = "crate::dbms::kind::server_name")]
    pub kind: DbmsKind,
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
    /// Directory the server's data directory is created in, to study a file system or device
    /// (default: beside the results, in --out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_root: Option<PathBuf>,
}

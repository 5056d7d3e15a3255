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

/// Where [`Malloc::find_library`] looks for an allocator's library.
pub const LIB_DIRS: &[&str] = &[
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

    /// The library file to LD_PRELOAD and the Debian package that installs it (`None` for
    /// glibc's own).
    pub fn library(self) -> Option<(&'static str, &'static str)> {
        match self {
            Malloc::Glibc => None,
            Malloc::Jemalloc => Some(("libjemalloc.so.2", "libjemalloc2")),
            Malloc::Tcmalloc => Some(("libtcmalloc_minimal.so.4", "libtcmalloc-minimal4")),
        }
    }

    /// The library to LD_PRELOAD, if any. When it is missing, the message starts with the
    /// allocator's name and names the package to install (callers put their own name for
    /// the setting before it: `--malloc`, `allocator`).
    pub fn find_library(self) -> Result<Option<PathBuf>, String> {
        let Some((file, package)) = self.library() else {
            return Ok(None);
        };
        LIB_DIRS
            .iter()
            .map(|d| Path::new(d).join(file))
            .find(|p| crate::hide::exists(p))
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
    /// A connection pooler started in front of the server, which the benchmark's clients
    /// connect through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooler: Option<PoolerSpec>,
    /// The account the server runs as, when one was named (`--server-user`); by default the
    /// system account `ibench-server` when ibench runs as root, else ibench's own user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Replicas started beside the server (`--replicas`: PostgreSQL streaming, MariaDB binlog).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<ReplicaSpec>,
    /// A Galera cluster of this many MariaDB nodes instead of one server (`--galera N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub galera: Option<GaleraSpec>,
    /// What a replica or Galera node that dies during a step does to the run
    /// (`--on-node-failure`; only with replicas or a Galera cluster).
    #[serde(default, skip_serializing_if = "NodeFailure::is_fail")]
    pub on_node_failure: NodeFailure,
}

/// What a replica or Galera node that dies during a step does to the run
/// (`--on-node-failure`, experiment key `on_node_failure`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum NodeFailure {
    /// The step and the run fail with one line naming the node.
    #[default]
    Fail,
    /// The step goes on on the remaining nodes; the death is recorded on the step, and a
    /// Galera node is started again at the step's end (a replica stays down).
    Continue,
}

impl NodeFailure {
    /// The default (for serde's `skip_serializing_if`).
    pub fn is_fail(&self) -> bool {
        *self == NodeFailure::Fail
    }

    /// As written on the command line and in experiment files.
    pub fn name(self) -> &'static str {
        match self {
            NodeFailure::Fail => "fail",
            NodeFailure::Continue => "continue",
        }
    }
}

/// Most nodes `--galera` starts.
pub const MAX_GALERA_NODES: usize = 5;

/// A MariaDB Galera cluster on this host (`--galera N --client-nodes all|first`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GaleraSpec {
    /// Nodes (`n1` .. `nN`; n1 bootstraps the cluster).
    pub nodes: usize,
    /// The clients' connections go to every node in turn (`--client-nodes all`), else all to
    /// n1.
    pub clients_on_all: bool,
}

/// Which Galera nodes the clients connect to (`--client-nodes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientNodes {
    /// Every node, connection by connection in turn.
    All,
    /// The first node only.
    First,
}

/// Most replicas `--replicas` starts (each is a whole server on this host).
pub const MAX_REPLICAS: usize = 8;

/// Where the Insert Benchmark's query steps and the read-only microbenchmarks read
/// (`--read-from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReadFrom {
    /// The primary, as the writers.
    Primary,
    /// The replicas, round-robin per client.
    Replicas,
}

/// Why `--read-from replicas` (`read_from = "replicas"`) is refused for TPC-C: every one of
/// its transactions, the read-only ones included, runs on the primary.
pub const TPCC_READS_ON_PRIMARY: &str = "reads from replicas are for the Insert Benchmark's \
     query steps and the microbenchmarks that only read: TPC-C's transactions all run on the \
     primary";

/// Replicas of a managed server (`--replicas N --sync-replicas K --read-from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaSpec {
    /// Replicas started (`r1` .. `rN`, their application_name).
    pub count: usize,
    /// The first this many are synchronous standbys (`FIRST K (r1, ..)`).
    pub sync: usize,
    /// The Insert Benchmark's query steps and the read-only microbenchmarks read from the
    /// replicas, round-robin per client.
    pub read_from_replicas: bool,
}

impl ReplicaSpec {
    /// The replicas' application names, `r1` .. `rN`.
    pub fn names(&self) -> Vec<String> {
        (1..=self.count).map(|i| format!("r{i}")).collect()
    }
}

/// A connection pooler ibench can start in front of a managed server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pooler {
    /// PgBouncer (Debian: pgbouncer), in front of PostgreSQL.
    Pgbouncer,
}

/// When a pooled client connection gets a server connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PoolMode {
    /// For the whole client session.
    Session,
    /// For each transaction (a statement outside one).
    Transaction,
}

/// The pooler in front of a managed server: which, how many server connections, which mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolerSpec {
    /// Which pooler.
    pub kind: Pooler,
    /// Server connections in the pool.
    pub pool_size: u32,
    /// Session or transaction pooling.
    pub pool_mode: PoolMode,
}

impl Pooler {
    /// Name as written (`pgbouncer`).
    pub fn name(self) -> &'static str {
        match self {
            Pooler::Pgbouncer => "pgbouncer",
        }
    }
}

impl PoolMode {
    /// Name as written (`session`, `transaction`).
    pub fn name(self) -> &'static str {
        match self {
            PoolMode::Session => "session",
            PoolMode::Transaction => "transaction",
        }
    }
}

impl PoolerSpec {
    /// Checks the pool against the connections a workload opens (`connections`): in session
    /// mode each holds a server connection for the whole run, so a smaller pool would keep
    /// clients waiting for one before the step starts. The message names the pool's
    /// settings as `size` and `mode` call them.
    pub fn check(&self, connections: usize, size: &str, mode: &str) -> Result<(), String> {
        if !(1..=10_000).contains(&self.pool_size) {
            return Err(format!(
                "{size} {} is out of range: expected 1..=10000",
                self.pool_size
            ));
        }
        if self.pool_mode == PoolMode::Session && (self.pool_size as usize) < connections {
            return Err(format!(
                "{mode} session gives each client connection a server connection for the \
                 whole run: a pool of {} cannot serve the workload's {connections} \
                 connections (they would wait for one before the step starts); use {mode} \
                 transaction, or {size} {connections}",
                self.pool_size
            ));
        }
        Ok(())
    }
}

//! The server's flags: a managed server ibench starts for the run (its build, settings,
//! account, data directory, pooler, replicas or Galera cluster), or an external one it reaches
//! by URL (its processes and data directory, for the figures per operation, and whether the
//! maintenance pause may change its settings).

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use super::parse_key_value;
use crate::dbms::DbmsKind;
use crate::error::UsageError;
use crate::request::{
    ClientNodes, GaleraSpec, Malloc, NodeFailure, PoolMode, Pooler, PoolerSpec, ReadFrom,
    ReplicaSpec, ServerSpec,
};
use crate::server::replicas::{ClusterNames, galera_spec, on_node_failure, replica_spec};
use crate::server::{Refusal, ServerProblem, ServerSetting, ServerSettings};

/// The server the DBMS runs on: one ibench starts, or an external one.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Start a throwaway server for the run (fresh data directory under --out, free port,
    /// reachable by ibench alone), stopped at the end.
    #[arg(long, value_name = "SERVER", value_parser = server_parser())]
    pub server: Option<DbmsKind>,
    /// Config fragment for the managed server: postgresql.conf lines, or my.cnf lines.
    #[arg(long, value_name = "FILE", requires = "server")]
    pub server_config: Option<PathBuf>,
    /// Setting for the managed server, applied after --server-config; repeatable.
    #[arg(long = "server-option", value_name = "KEY=VALUE", value_parser = parse_key_value, requires = "server")]
    pub server_options: Vec<(String, String)>,
    /// Memory allocator of the managed server (LD_PRELOAD).
    #[arg(long, value_enum, default_value = "glibc", requires = "server")]
    pub malloc: Malloc,
    /// Directory with the server binaries (initdb + postgres, or mariadb-install-db +
    /// mariadbd) [default: Debian's locations, then PATH].
    #[arg(long, value_name = "DIR", requires = "server")]
    pub server_bin: Option<PathBuf>,
    /// Account the managed server runs as [default: when ibench runs as root, the system
    /// account ibench-server (created when missing), which shares nothing with the host's own
    /// DBMS; else ibench's own user]. Never root.
    #[arg(long, value_name = "NAME", requires = "server")]
    pub server_user: Option<String>,
    /// Leave the managed server running after the run, for inspection (its credentials go to
    /// a file only you can read).
    #[arg(long, requires = "server")]
    pub keep_server: bool,
    /// Process id of an external server on this host (its children are counted too), so its
    /// CPU, IO and memory per operation are reported.
    #[arg(long, value_name = "PID", conflicts_with = "server")]
    pub server_pid: Option<u32>,
    /// File holding the external server's pid (e.g. postmaster.pid, mysqld.pid).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["server", "server_pid"])]
    pub server_pid_file: Option<PathBuf>,
    /// Data directory of an external server: its size on disk and its device are reported.
    #[arg(long, value_name = "DIR", conflicts_with = "server")]
    pub data_dir: Option<PathBuf>,
    /// Directory the managed server's data directory is created in (a mount of the file
    /// system or device under study) [default: beside the results, in --out].
    #[arg(long, value_name = "DIR", requires = "server")]
    pub server_data_root: Option<PathBuf>,
    /// Start a connection pooler in front of the managed server; the benchmark's clients
    /// connect through it (ibench's own reads of settings and counters go to the server).
    #[arg(long, value_enum, value_name = "POOLER", requires = "server")]
    pub pooler: Option<Pooler>,
    /// Server connections in the pooler's pool.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "pooler")]
    pub pool_size: u32,
    /// When a client connection gets a server connection: for each transaction, or for its
    /// whole session.
    #[arg(long, value_enum, default_value = "transaction", requires = "pooler")]
    pub pool_mode: PoolMode,
    /// Start this many replicas of the managed server on their own ports: PostgreSQL
    /// streaming replicas (pg_basebackup, a replication slot each), MariaDB binlog replicas
    /// (GTID); their lag is recorded per second.
    #[arg(long, value_name = "N", requires = "server")]
    pub replicas: Option<usize>,
    /// The first K replicas are synchronous (PostgreSQL: synchronous_standby_names FIRST K;
    /// MariaDB: semi-synchronous, K <= 1).
    #[arg(long, value_name = "K", requires = "replicas")]
    pub sync_replicas: Option<usize>,
    /// Where the Insert Benchmark's query steps and the microbenchmarks that only read
    /// (`ibench micro`) read: the primary, or the replicas (round-robin per client). Writers
    /// always go to the primary.
    #[arg(long, value_enum, value_name = "NODES", requires = "replicas")]
    pub read_from: Option<ReadFrom>,
    /// Start a MariaDB Galera cluster of N nodes on this host (Debian's galera-4; n1
    /// bootstraps it, the others join by state transfer), InnoDB only.
    #[arg(
        long,
        value_name = "N",
        requires = "server",
        conflicts_with = "replicas"
    )]
    pub galera: Option<usize>,
    /// Which Galera nodes the clients connect to: every node in turn, or the first.
    #[arg(long, value_enum, value_name = "NODES", requires = "galera")]
    pub client_nodes: Option<ClientNodes>,
    /// What a replica or Galera node that dies during a step does: `fail` (the default) fails
    /// the step and the run with a line naming the node; `continue` goes on on the remaining
    /// nodes and records the death on the step (a Galera node is started again at the step's
    /// end, a replica stays down). With `--replicas` or `--galera` only.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub on_node_failure: Option<NodeFailure>,
    /// Seconds to wait for the managed server to accept connections.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub server_start_timeout: u64,
    /// Let the maintenance pause change the global settings of a server ibench did not start,
    /// for a moment (InnoDB: innodb_max_dirty_pages_pct = 0 until the buffer pool is flushed,
    /// then set back, by a guard process if ibench is killed meanwhile). Without it the
    /// pause changes no setting of such a server.
    #[arg(long, conflicts_with = "server")]
    pub allow_server_changes: bool,
}

/// `--server`: the names of the managed server families.
fn server_parser() -> impl TypedValueParser<Value = DbmsKind> {
    let names: Vec<&'static str> = DbmsKind::all()
        .iter()
        .filter(|k| crate::server::family(**k).is_some())
        .map(|k| k.server_name())
        .collect();
    PossibleValuesParser::new(names)
        .map(|name| crate::server::parse_server(&name).expect("a possible value names a family"))
}

/// The flag that gave a managed server's setting.
fn server_flag(setting: ServerSetting) -> &'static str {
    match setting {
        ServerSetting::User => "--server-user",
        ServerSetting::Malloc => "--malloc",
        ServerSetting::Engine => "--engine",
        ServerSetting::DataRoot => "--server-data-root",
        ServerSetting::Pooler => "--pooler",
    }
}

/// A managed server's refused setting (of a `kind` server), naming its flag.
fn server_problem(kind: DbmsKind, p: &ServerProblem) -> UsageError {
    let flag = server_flag(p.setting);
    UsageError::new(match &p.refusal {
        Refusal::Said(m) => format!("{flag} {m}"),
        Refusal::NotADirectory(root) => format!(
            "{flag} {} is not a directory (create or mount it first)",
            root.display()
        ),
        Refusal::PoolerIsFor { pooler, servers } => format!(
            "{flag} {} is for a {servers} server, not {}",
            pooler.name(),
            kind.server_name()
        ),
    })
}

impl ServerArgs {
    /// The managed server to start, when --server is given.
    pub fn server_spec(
        &self,
        kind: DbmsKind,
        params: &crate::dbms::Params,
    ) -> Result<Option<ServerSpec>, UsageError> {
        if self.server.is_none() {
            return match self.on_node_failure {
                Some(p) => Err(UsageError::new(
                    on_node_failure(false, p, ClusterNames::FLAGS).unwrap_err(),
                )),
                None => Ok(None),
            };
        }
        let family = crate::server::require_family(kind)?;
        let problems = ServerSettings {
            family: Some(family),
            user: self.server_user.as_deref(),
            malloc: Some(self.malloc),
            params: Some(params),
            data_root: self.server_data_root.as_deref(),
            pooler: self.pooler,
        }
        .check(&mut |setting, w| eprintln!("warning: {} {w}", server_flag(setting)));
        // The first problem, in the flags' order: the config file is read once the account,
        // allocator and engine are known to be good, the data root checked after it.
        let refused = |upto: ServerSetting| match problems.iter().find(|p| p.setting <= upto) {
            Some(p) => Err(server_problem(kind, p)),
            None => Ok(()),
        };
        refused(ServerSetting::Engine)?;
        let config_text = match &self.server_config {
            Some(path) => Some(crate::bounded::read_to_string(path, 1 << 20).map_err(|e| {
                UsageError::new(format!(
                    "cannot read --server-config {}: {e}",
                    path.display()
                ))
            })?),
            None => None,
        };
        refused(ServerSetting::DataRoot)?;
        for (k, v) in &self.server_options {
            let ok = |s: &str| !s.is_empty() && !s.contains(['\n', '\r', '[', ']']);
            if !ok(k) || !ok(v) || k.contains(['=', ' ']) {
                // Shown escaped: a newline in it must not start a second line.
                let given = crate::output::escape::line(&format!("{k}={v}")).into_owned();
                return Err(UsageError::new(format!(
                    "invalid --server-option {given}: expected KEY=VALUE on one line"
                )));
            }
        }
        refused(ServerSetting::Pooler)?;
        let mut spec = ServerSpec {
            kind,
            bin_dir: self.server_bin.clone(),
            config_text,
            config_file: self.server_config.clone(),
            options: self.server_options.clone(),
            malloc: self.malloc,
            keep: self.keep_server,
            start_timeout_s: self.server_start_timeout,
            data_root: self.server_data_root.clone(),
            pooler: self.pooler.map(|kind| PoolerSpec {
                kind,
                pool_size: self.pool_size,
                pool_mode: self.pool_mode,
            }),
            user: self.server_user.clone(),
            replicas: self.replica_spec(kind)?,
            galera: self.galera_spec(kind, params)?,
            on_node_failure: Default::default(),
        };
        if let Some(p) = self.on_node_failure {
            let cluster = spec.replicas.is_some() || spec.galera.is_some();
            spec.on_node_failure =
                on_node_failure(cluster, p, ClusterNames::FLAGS).map_err(UsageError::new)?;
        }
        Ok(Some(spec))
    }

    /// `--replicas`, `--sync-replicas`, `--read-from`, checked (`server::replicas`).
    fn replica_spec(&self, kind: DbmsKind) -> Result<Option<ReplicaSpec>, UsageError> {
        let Some(count) = self.replicas else {
            return Ok(None);
        };
        let read = self.read_from == Some(ReadFrom::Replicas);
        let sync = self.sync_replicas.unwrap_or(0);
        replica_spec(kind, count, sync, read, ClusterNames::FLAGS)
            .map(Some)
            .map_err(UsageError::new)
    }

    /// `--galera`, `--client-nodes`, checked (`server::replicas`).
    fn galera_spec(
        &self,
        kind: DbmsKind,
        params: &crate::dbms::Params,
    ) -> Result<Option<GaleraSpec>, UsageError> {
        let Some(nodes) = self.galera else {
            return Ok(None);
        };
        let all = self.client_nodes != Some(ClientNodes::First);
        galera_spec(kind, params, nodes, all, ClusterNames::FLAGS)
            .map(Some)
            .map_err(UsageError::new)
    }

    /// The external server's pid: --server-pid, or the first line of --server-pid-file.
    pub fn external_pid(&self) -> Result<Option<u32>, UsageError> {
        match (&self.server_pid, &self.server_pid_file) {
            (Some(pid), _) => Ok(Some(*pid)),
            (None, Some(file)) => crate::launch::pid_from_file(file, "--server-pid-file").map(Some),
            (None, None) => Ok(None),
        }
    }
}

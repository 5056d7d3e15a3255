//! Replicas of a managed server (`--replicas N`), one file per family: PostgreSQL's streaming
//! replicas (`postgres.rs`) and MariaDB's binlog replicas (`mariadb.rs`). Each replica is a
//! whole server of the family on this host, named `r1` .. `rN`, on a free port of 127.0.0.1,
//! in a private directory under the primary's, as the same account, in the primary's cgroup;
//! stopped before the primary (`ManagedServer::stop`) and gone with its directory.

pub mod galera;
pub mod mariadb;
pub mod postgres;

/// What replication a server family offers (`ServerFamily::replication`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replication {
    /// What it is called in messages ("streaming replication").
    pub name: &'static str,
    /// The most synchronous replicas a commit can wait for (`--sync-replicas`).
    pub max_sync: usize,
}

use crate::dbms::mysql::{Engine, MysqlParams};
use crate::dbms::{DbmsKind, Params};
use crate::spec::{GaleraSpec, MAX_GALERA_NODES, MAX_REPLICAS, NodeFailure, ReplicaSpec};

/// How a request names the cluster settings (`--replicas` on the command line, `replicas` in
/// an experiment file), for messages.
#[derive(Clone, Copy, Debug)]
pub struct ClusterNames {
    /// The replica count.
    pub replicas: &'static str,
    /// The synchronous replica count.
    pub sync_replicas: &'static str,
    /// The Galera node count.
    pub galera: &'static str,
    /// What a dead node does to the run.
    pub on_node_failure: &'static str,
}

impl ClusterNames {
    /// The command line's flags.
    pub const FLAGS: ClusterNames = ClusterNames {
        replicas: "--replicas",
        sync_replicas: "--sync-replicas",
        galera: "--galera",
        on_node_failure: "--on-node-failure",
    };
    /// An experiment setup's keys.
    pub const KEYS: ClusterNames = ClusterNames {
        replicas: "replicas",
        sync_replicas: "sync_replicas",
        galera: "galera",
        on_node_failure: "on_node_failure",
    };
}

/// `count` replicas, the first `sync` synchronous, for a managed server of `kind`: the family
/// must have replication, 1..=[`MAX_REPLICAS`], `sync` <= `count` and within what the family
/// can wait for. The one-line problem otherwise.
pub fn replica_spec(
    kind: DbmsKind,
    count: usize,
    sync: usize,
    read_from_replicas: bool,
    names: ClusterNames,
) -> Result<ReplicaSpec, String> {
    let Some(replication) = super::family(kind).and_then(|f| f.replication()) else {
        return Err(format!(
            "{} is for postgres or mariadb servers, not {}",
            names.replicas,
            kind.server_name()
        ));
    };
    if !(1..=MAX_REPLICAS).contains(&count) {
        return Err(format!(
            "{} {count} is out of range: expected 1..={MAX_REPLICAS}",
            names.replicas
        ));
    }
    if sync > count {
        return Err(format!(
            "{} {sync} is more than {} {count}",
            names.sync_replicas, names.replicas
        ));
    }
    if sync > replication.max_sync {
        return Err(format!(
            "{} {sync}: {}'s {} waits for at most {} replica(s)",
            names.sync_replicas,
            kind.server_name(),
            replication.name,
            replication.max_sync
        ));
    }
    Ok(ReplicaSpec {
        count,
        sync,
        read_from_replicas,
    })
}

/// A Galera cluster of `nodes` for a managed server of `kind` with `params`: MariaDB with
/// InnoDB, 2..=[`MAX_GALERA_NODES`]. The one-line problem otherwise.
pub fn galera_spec(
    kind: DbmsKind,
    params: &Params,
    nodes: usize,
    clients_on_all: bool,
    names: ClusterNames,
) -> Result<GaleraSpec, String> {
    if kind != DbmsKind::of(&crate::dbms::mysql::MYSQL) {
        return Err(format!(
            "{} is for mariadb servers, not {}",
            names.galera,
            kind.server_name()
        ));
    }
    if MysqlParams::of(params).engine != Engine::Innodb {
        return Err(format!(
            "{} replicates InnoDB tables only, not MyRocks (use {} for MyRocks)",
            names.galera, names.replicas
        ));
    }
    if !(2..=MAX_GALERA_NODES).contains(&nodes) {
        return Err(format!(
            "{} {nodes} is out of range: expected 2..={MAX_GALERA_NODES}",
            names.galera
        ));
    }
    Ok(GaleraSpec {
        nodes,
        clients_on_all,
    })
}

/// `policy` for a run whose managed server has replicas or a Galera cluster (`cluster`): a
/// single server (or one ibench did not start) has no other node whose death the run could
/// fail on or continue past. The one-line problem otherwise.
pub fn on_node_failure(
    cluster: bool,
    policy: NodeFailure,
    names: ClusterNames,
) -> Result<NodeFailure, String> {
    if !cluster {
        // `--galera N` on the command line, `galera = N` in an experiment file.
        let n = if names.galera.starts_with("--") {
            " N"
        } else {
            " = N"
        };
        return Err(format!(
            "{} {} is for a cluster: add {}{n} or {}{n} (a single server has no other node)",
            names.on_node_failure,
            policy.name(),
            names.replicas,
            names.galera
        ));
    }
    Ok(policy)
}

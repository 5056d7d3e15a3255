//! Replicas of a managed server (`--replicas N`), one file per family: PostgreSQL's streaming
//! replicas (`postgres.rs`) and MariaDB's binlog replicas (`mariadb.rs`). Each replica is a
//! whole server of the family on this host, named `r1` .. `rN`, on a free port of 127.0.0.1,
//! in a private directory under the primary's, as the same account, in the primary's cgroup;
//! stopped before the primary (`ManagedServer::stop`) and gone with its directory.

pub mod galera;
pub mod mariadb;
pub mod postgres;
pub mod rejoin;

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
use crate::request::{GaleraSpec, MAX_GALERA_NODES, MAX_REPLICAS, NodeFailure, ReplicaSpec};

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

/// The Insert Benchmark's `workload` on the Galera cluster `galera`: clients sharing one
/// table (`table_mode` shared, more than one client) may not connect to more than one node.
/// Each node hands out the table's auto-increment ids from its own counter
/// (`wsrep_auto_increment_control = OFF`, for dense ids), which learns another node's ids
/// only once it has applied them: two nodes then take the same id, and the loser gets either
/// a certification conflict (a deadlock error, retried) or, when the winner's row was
/// applied between its id being taken and its row being written, a duplicate key error
/// (1062) that no retry makes right, and the ids the queue walks are no longer dense nor
/// growing in commit order. With a table per client, or every client on n1, one counter
/// hands out each table's ids, as on a lone server. The one-line problem otherwise.
pub fn galera_workload(
    galera: &GaleraSpec,
    workload: &crate::request::InsertBenchmarkSpec,
    names: ClusterNames,
) -> Result<(), String> {
    use crate::request::insert_benchmark::TableMode;
    if galera.clients_on_all && workload.table_mode == TableMode::Shared && workload.clients > 1 {
        let (mode, nodes) = if names.galera.starts_with("--") {
            ("--table-mode shared", "--client-nodes first")
        } else {
            ("table_mode = \"shared\"", "client_nodes = \"first\"")
        };
        return Err(format!(
            "{mode} with {} clients spread over the {} nodes: two nodes would hand out the same \
             auto-increment ids of the shared table; use one table per client or {nodes}",
            workload.clients, names.galera
        ));
    }
    Ok(())
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

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

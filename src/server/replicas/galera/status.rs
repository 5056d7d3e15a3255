//! What a Galera node says of itself, read by the cluster's start (`galera.rs`) and by a
//! node started again after it died (`rejoin.rs`): its `wsrep` status (synced) and its log
//! (one of its ports taken). Imports neither of them.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use mysql::prelude::Queryable;

use crate::error::Interrupted;
use crate::server::mariadb::node::root_opts;

/// What a joiner's log says when it failed because one of its ports was taken by another
/// process between the moment ibench found it free and the moment it was bound: the
/// server's own ports ("Address already in use"), or the state transfer's port (the rsync
/// daemon exits or finds the port taken, and the joiner gives up: "Failed to prepare for
/// 'rsync' SST").
pub(in crate::server::replicas) const PORT_TAKEN: &[&str] = &[
    "Address already in use",
    "has been taken by another program",
    "daemon (PID: ",
];

/// The first line of a node's `log` saying one of its ports was taken ([`PORT_TAKEN`]).
pub(in crate::server::replicas) fn port_taken(log: &str) -> Option<String> {
    log.lines()
        .find(|l| PORT_TAKEN.iter().any(|p| l.contains(p)))
        .map(|l| l.trim().to_string())
}

/// Waits until the node on `port` is synced (with a cluster of `size` nodes, when given).
pub(in crate::server::replicas) fn wait_synced_at(
    port: u16,
    password: Option<&str>,
    name: &str,
    size: Option<usize>,
    timeout_s: u64,
) -> Result<()> {
    // A joiner accepts connections during its state transfer and may never answer one
    // accepted then (seen: the handshake still waiting minutes after the node synced).
    let io = Some(Duration::from_secs(5));
    let opts: mysql::Opts = root_opts(port, password, Duration::from_secs(2), io).into();
    let deadline = Instant::now() + Duration::from_secs(timeout_s);
    let mut last = String::new();
    loop {
        if let Ok(mut c) = mysql::Conn::new(opts.clone()) {
            let rows: Vec<(String, String)> = c
                .query(
                    "SHOW GLOBAL STATUS WHERE variable_name IN \
                     ('wsrep_local_state_comment', 'wsrep_cluster_size')",
                )
                .unwrap_or_default();
            let get = |n: &str| {
                rows.iter()
                    .find(|r| r.0.eq_ignore_ascii_case(n))
                    .map(|r| r.1.clone())
                    .unwrap_or_default()
            };
            let (state, members) = (get("wsrep_local_state_comment"), get("wsrep_cluster_size"));
            if state == "Synced" && size.is_none_or(|n| members == n.to_string()) {
                return Ok(());
            }
            last = format!("{state}, cluster size {members}");
        }
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        if Instant::now() >= deadline {
            bail!("Galera node {name} was not synced within {timeout_s} s (last: {last})");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

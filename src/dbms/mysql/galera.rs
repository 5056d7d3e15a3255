//! A managed Galera cluster's nodes (`--galera N`): where each new client connection goes
//! (every node in turn with `--client-nodes all`, else n1), and each node's replication
//! status as gauges, once a second on a connection of its own per node.
//!
//! Gauges `galera.nI.<variable>`: the levels `wsrep_local_recv_queue` and
//! `wsrep_local_send_queue` (write-sets waiting to be applied / sent), `wsrep_cluster_size`;
//! the cumulative counters (named with `_total`, reports draw them per second)
//! `wsrep_flow_control_paused_ns` (time the node's replication was paused by flow control:
//! per second, the fraction paused x 1e9), `wsrep_flow_control_sent` / `_recv` (pause
//! requests), `wsrep_local_cert_failures` (transactions that failed certification) and
//! `wsrep_local_bf_aborts` (local transactions aborted by a replicated one); both of the last
//! reach the client as deadlock errors and are retried as deadlocks are.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts};

use crate::dbms::url::ServerUrl;

/// The status variables read: (name, cumulative).
const STATUS: &[(&str, bool)] = &[
    ("wsrep_local_recv_queue", false),
    ("wsrep_local_send_queue", false),
    ("wsrep_cluster_size", false),
    ("wsrep_flow_control_paused_ns", true),
    ("wsrep_flow_control_sent", true),
    ("wsrep_flow_control_recv", true),
    ("wsrep_local_cert_failures", true),
    ("wsrep_local_bf_aborts", true),
];

/// The cluster's nodes, n1 first.
#[derive(Default)]
pub(super) struct Nodes {
    /// Each node's connection options and URL.
    nodes: Vec<(Opts, ServerUrl)>,
    /// Client connections go to every node in turn.
    spread: bool,
    /// The node the next client connection goes to.
    next: AtomicUsize,
    /// The gauges' connections, one per node (reopened after an error).
    conns: Mutex<Vec<Option<Conn>>>,
}

impl Nodes {
    /// n1 at `first` (its options) and the others at `others`.
    pub(super) fn new(
        first: (&Opts, &ServerUrl),
        others: &[ServerUrl],
        spread: bool,
    ) -> Result<Nodes> {
        let mut nodes = vec![(first.0.clone(), first.1.clone())];
        for u in others {
            nodes.push((super::opts_of(u)?, u.clone()));
        }
        Ok(Nodes {
            conns: Mutex::new((0..nodes.len()).map(|_| None).collect()),
            nodes,
            spread,
            next: AtomicUsize::new(0),
        })
    }

    /// Whether this is a cluster.
    pub(super) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Where the next client connection goes, when connections spread over the nodes.
    pub(super) fn next_node(&self) -> Option<&(Opts, ServerUrl)> {
        if !self.spread || self.nodes.is_empty() {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.nodes.len();
        self.nodes.get(i)
    }

    /// Every node's status now, into `gauges` (a node that cannot be read is left out of
    /// this reading).
    pub(super) fn gauges(&self, gauges: &mut BTreeMap<String, f64>) {
        let names: Vec<String> = STATUS.iter().map(|(n, _)| format!("'{n}'")).collect();
        let sql = format!(
            "SHOW GLOBAL STATUS WHERE variable_name IN ({})",
            names.join(", ")
        );
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        for (i, (opts, _)) in self.nodes.iter().enumerate() {
            let conn = &mut conns[i];
            if conn.is_none() {
                *conn = Conn::new(opts.clone()).ok();
            }
            let Some(c) = conn.as_mut() else { continue };
            let rows: Vec<(String, String)> = match c.query(&sql) {
                Ok(r) => r,
                Err(_) => {
                    *conn = None;
                    continue;
                }
            };
            for (name, value) in rows {
                let Ok(v) = value.parse::<f64>() else { continue };
                let Some((known, total)) =
                    STATUS.iter().find(|(n, _)| n.eq_ignore_ascii_case(&name))
                else {
                    continue;
                };
                let suffix = if *total { "_total" } else { "" };
                gauges.insert(format!("galera.n{}.{known}{suffix}", i + 1), v);
            }
        }
    }
}

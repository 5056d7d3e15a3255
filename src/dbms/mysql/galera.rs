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
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
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
    /// Each node is down (`--on-node-failure continue`): no connection goes to it.
    down: Vec<AtomicBool>,
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
            down: (0..nodes.len()).map(|_| AtomicBool::new(false)).collect(),
            nodes,
            spread,
            next: AtomicUsize::new(0),
        })
    }

    /// Whether this is a cluster.
    pub(super) fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Where the next client connection goes, when connections spread over the nodes: the
    /// next node in turn that is not down.
    pub(super) fn next_node(&self) -> Option<&(Opts, ServerUrl)> {
        if !self.spread || self.nodes.is_empty() {
            return None;
        }
        for _ in 0..self.nodes.len() {
            let i = self.next.fetch_add(1, Ordering::Relaxed) % self.nodes.len();
            if !self.down[i].load(Ordering::Relaxed) {
                return self.nodes.get(i);
            }
        }
        self.nodes.first()
    }

    /// Node `name` (`n2`) died (`down`): no connection goes to it from now on, its gauges
    /// are no longer read; or it is back. True when it is one of these nodes.
    pub(super) fn set_down(&self, name: &str, down: bool) -> bool {
        let index = name
            .strip_prefix('n')
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| n.checked_sub(1));
        match index.and_then(|i| self.down.get(i)) {
            Some(flag) => {
                flag.store(down, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Every node's status now, into `gauges` (a node that cannot be read is left out of
    /// this reading).
    pub(super) fn gauges(&self, gauges: &mut BTreeMap<String, f64>) {
        for (i, rows) in self.status_each(STATUS.iter().map(|(n, _)| *n)) {
            for (name, v) in rows {
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

    /// The status `variables` (plain names) on every node that is up: each node's index and
    /// (variable, numeric value) rows, for the nodes that answered.
    fn status_each<'a>(
        &self,
        variables: impl Iterator<Item = &'a str>,
    ) -> Vec<(usize, Vec<(String, f64)>)> {
        let names: Vec<String> = variables.map(|n| format!("'{n}'")).collect();
        let sql = format!(
            "SHOW GLOBAL STATUS WHERE variable_name IN ({})",
            names.join(", ")
        );
        self.query_each(&sql)
            .into_iter()
            .map(|(i, rows)| {
                let values = rows
                    .into_iter()
                    .filter_map(|(name, value)| Some((name, value.parse::<f64>().ok()?)))
                    .collect();
                (i, values)
            })
            .collect()
    }
}

/// The conflict counters read on every node at a step's start and end (their differences
/// are the step's errors of these kinds): (status variable, error kind).
const CONFLICTS: &[(&str, &str)] = &[
    ("wsrep_local_cert_failures", "cert_failure"),
    ("wsrep_local_bf_aborts", "bf_abort"),
];

impl Nodes {
    /// Each node's conflict counters now, into `counters` as `galera.nI.<variable>` (a node
    /// down or that cannot be read is left out: its difference over the step is then none).
    pub(super) fn conflict_counters(&self, counters: &mut BTreeMap<String, f64>) {
        for (i, rows) in self.status_each(CONFLICTS.iter().map(|(n, _)| *n)) {
            for (name, v) in rows {
                counters.insert(format!("galera.n{}.{}", i + 1, name.to_lowercase()), v);
            }
        }
    }

    /// `sql` on every node that is up, on the gauges' connections (reopened after an
    /// error): each node's index and rows, for the nodes that answered.
    fn query_each(&self, sql: &str) -> Vec<(usize, Vec<(String, String)>)> {
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (i, (opts, _)) in self.nodes.iter().enumerate() {
            if self.down[i].load(Ordering::Relaxed) {
                continue;
            }
            let conn = &mut conns[i];
            if conn.is_none() {
                *conn = Conn::new(gauge_opts(opts)).ok();
            }
            let Some(c) = conn.as_mut() else { continue };
            match c.query(sql) {
                Ok(rows) => out.push((i, rows)),
                Err(_) => *conn = None,
            }
        }
        out
    }
}

impl Nodes {
    /// Waits until every node that is up has applied what the cluster had committed when it
    /// was called (each node's `wsrep_last_committed` at least the largest read at the
    /// start): a DDL statement just returned on one node (total order isolation: the node
    /// that ran it returns once it has, the others apply it in their own time) is then in
    /// every node's data dictionary. `wsrep_sync_wait` does not cover it: a client's first
    /// statement on another node (a prepared `SELECT min(transactionid)`, an `INSERT`) found
    /// no table there ("Table 'ibench.pi1' doesn't exist") right after `l.i0` created it.
    pub(super) fn wait_applied(&self, timeout: Duration) -> Result<()> {
        let sql = "SHOW GLOBAL STATUS LIKE 'wsrep_last_committed'";
        let read = || -> Vec<(usize, i64)> {
            self.query_each(sql)
                .into_iter()
                .filter_map(|(i, rows)| Some((i, rows.first()?.1.parse::<i64>().ok()?)))
                .collect()
        };
        let Some(target) = read().iter().map(|r| r.1).max() else {
            return Ok(());
        };
        let deadline = Instant::now() + timeout;
        loop {
            let seqnos = read();
            let behind = (0..self.nodes.len())
                .filter(|&i| !self.down[i].load(Ordering::Relaxed))
                .find(|&i| !seqnos.iter().any(|&(n, s)| n == i && s >= target));
            let Some(i) = behind else { return Ok(()) };
            if crate::interrupt::requested() {
                return Err(crate::error::Interrupted.into());
            }
            if Instant::now() >= deadline {
                bail!(
                    "Galera node n{} had not applied the cluster's DDL within {} s \
                     (wsrep_last_committed below {target})",
                    i + 1,
                    timeout.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// How long a gauge's connection waits to connect, and for an answer: the gauges are read on
/// the step's coordinator thread, which a node that stopped answering must not hold for
/// longer (the node watch finds it silent and ends it; docs/replication.md).
const GAUGE_TIMEOUT: Duration = Duration::from_secs(2);

/// `opts` with [`GAUGE_TIMEOUT`] for connecting, reading and writing.
pub(super) fn gauge_opts(opts: &Opts) -> Opts {
    mysql::OptsBuilder::from_opts(opts.clone())
        .tcp_connect_timeout(Some(GAUGE_TIMEOUT))
        .read_timeout(Some(GAUGE_TIMEOUT))
        .write_timeout(Some(GAUGE_TIMEOUT))
        .into()
}

/// A step's certification failures and brute-force aborts, summed over the nodes, from its
/// counter differences (`galera.nI.wsrep_local_cert_failures`, `..._bf_aborts`); none for
/// a server that is not a Galera node.
pub(super) fn error_counts(deltas: &BTreeMap<String, f64>) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for (variable, kind) in CONFLICTS {
        let suffix = format!(".{variable}");
        let mut any = false;
        let sum: f64 = deltas
            .iter()
            .filter(|(k, _)| k.starts_with("galera.n") && k.ends_with(&suffix))
            .inspect(|_| any = true)
            .map(|(_, v)| v.max(0.0))
            .sum();
        if any {
            counts.insert(kind.to_string(), sum.round() as u64);
        }
    }
    counts
}

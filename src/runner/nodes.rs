//! The nodes of a managed cluster (`--replicas`, `--galera`) watched while the steps run: a
//! node whose process is gone (killed, crashed) is seen within a tenth of a second by the
//! step's coordinator thread, which then fails the step with one line naming the node
//! (`--on-node-failure fail`, the default) or records the death on the step and goes on on
//! the remaining nodes (`continue`: new client connections no longer go to the node until
//! it is back). The first node (Galera's n1, a replicated server's primary) carries ibench's
//! own connection: its death fails the step whatever the policy. With `continue`, a node
//! that died is started again at the step's end and the time it took to be synced with the
//! cluster (a replica: to accept connections, then to catch up with the primary) is recorded.
//! A node whose process lives but does not answer a fresh connection for 10 s (`probe.rs`:
//! stopped, hung) is killed (its clients would wait on it for ever) and is then a dead node
//! under the same policy, said to have stopped answering.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::metrics::proc::running;
use crate::server::replicas::rejoin::Rejoin;

mod probe;

use crate::dbms::Topology;
use crate::metrics::proc::SharedPid;
use crate::request::{NodeFailure, ServerSpec};
use crate::results::model::{ManagedServerInfo, NodeDeath, NodeRejoin};

/// One node of the cluster, as the results name it.
struct Node {
    /// `n1` .. `nN`, `primary`, `r1` .. `rN`.
    name: String,
    /// `galera node`, `primary`, `replica`.
    role: &'static str,
    /// Its server's pid (another once it was started again), shared with the cost sampler.
    pid: SharedPid,
    port: u16,
    /// ibench's own connection is to it: its death always fails the step.
    first: bool,
    /// How to start it again after it died (Galera's joined nodes, replicas).
    rejoin: Option<Arc<Rejoin>>,
}

impl Node {
    fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    fn label(&self) -> String {
        format!(
            "{} {} (pid {}, port {})",
            self.role,
            self.name,
            self.pid(),
            self.port
        )
    }
}

/// The cluster's nodes and what their death does; the deaths seen and not yet recorded.
pub struct NodeWatch {
    nodes: Vec<Node>,
    policy: NodeFailure,
    /// Names of the nodes seen dead (never watched again).
    down: Mutex<Vec<String>>,
    /// Deaths seen since the last [`NodeWatch::take`].
    seen: Mutex<Vec<NodeDeath>>,
    /// Whether each node answers (in `nodes`' order).
    probes: probe::Probes,
}

impl NodeWatch {
    /// The nodes of the cluster `server` (as recorded, with `info`'s pids and ports; how to
    /// start each of the others again, in `rejoins`), or `None` for a single server. `port`
    /// is the first node's; `pids`, the other nodes' pids the cost sampler reads, by name;
    /// `password`, the superuser's (every node's), for the probes that log in.
    pub fn of(
        server: &ServerSpec,
        info: &ManagedServerInfo,
        port: u16,
        rejoins: Vec<Option<Arc<Rejoin>>>,
        pids: &[(String, SharedPid)],
        password: Option<&str>,
    ) -> Option<NodeWatch> {
        if info.replicas.is_empty() {
            return None;
        }
        let galera = server.galera.is_some();
        let mut nodes = vec![Node {
            name: if galera { "n1" } else { "primary" }.to_string(),
            role: if galera { "galera node" } else { "primary" },
            pid: Arc::new(AtomicU32::new(info.pid?)),
            port,
            first: true,
            rejoin: None,
        }];
        for (i, r) in info.replicas.iter().enumerate() {
            nodes.push(Node {
                name: r.name.clone(),
                role: if galera { "galera node" } else { "replica" },
                pid: match pids.iter().find(|(n, _)| n == &r.name) {
                    Some((_, shared)) => Arc::clone(shared),
                    None => Arc::new(AtomicU32::new(r.pid?)),
                },
                port: r.port,
                first: false,
                rejoin: rejoins.get(i).cloned().flatten(),
            });
        }
        let ports: Vec<u16> = nodes.iter().map(|n| n.port).collect();
        let postgres = server.kind == crate::dbms::DbmsKind::of(&crate::dbms::postgres::POSTGRES);
        Some(NodeWatch {
            probes: probe::Probes::start(&ports, postgres, password),
            nodes,
            policy: server.on_node_failure,
            down: Mutex::new(Vec::new()),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// Looks at every node still up, `elapsed` into step `step` (`None`: before it starts); a
    /// node found dead is recorded (and, with `continue`, taken out of `dbms`'s rotation).
    /// Returns the line the step fails with when a death must fail it.
    pub fn check(
        &self,
        step: &str,
        elapsed: Option<Duration>,
        dbms: &dyn Topology,
    ) -> Option<String> {
        let mut down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        let mut failure = None;
        for (i, node) in self.nodes.iter().enumerate() {
            if down.contains(&node.name) {
                continue;
            }
            let (seen, what) = if !running(node.pid()) {
                ("process gone", "died".to_string())
            } else if let Some(quiet) = self.probes.silent(i) {
                // Its clients wait on it for ever: killed, it is then a dead node.
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(node.pid() as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                let what = format!(
                    "stopped answering (no answer for {:.0} s: killed)",
                    quiet.as_secs_f64()
                );
                ("stopped answering", what)
            } else {
                continue;
            };
            down.push(node.name.clone());
            let at_s = elapsed.map_or(0.0, |e| (e.as_secs_f64() * 10.0).round() / 10.0);
            let line = match elapsed {
                Some(_) => format!("{} {what} {at_s:.1} s into {step}", node.label()),
                None => format!("{} {what} before {step}", node.label()),
            };
            let fails = self.policy == NodeFailure::Fail || node.first;
            let outcome = if fails {
                if node.first && self.policy == NodeFailure::Continue {
                    "failed the step: ibench's own connection is to it".to_string()
                } else {
                    "failed the step".to_string()
                }
            } else {
                dbms.node_down(&node.name);
                if node.rejoin.is_some() {
                    "the step went on on the other nodes; started again at its end".to_string()
                } else {
                    "the step went on on the other nodes; it stays down for the rest of the run"
                        .to_string()
                }
            };
            if fails && failure.is_none() {
                failure = Some(line.clone());
            }
            self.seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(NodeDeath {
                    node: node.name.clone(),
                    role: node.role.to_string(),
                    pid: node.pid(),
                    port: node.port,
                    step: step.to_string(),
                    at_s,
                    seen: seen.to_string(),
                    outcome,
                    message: line,
                    rejoin: None,
                });
        }
        failure
    }

    /// With `continue`: starts each node of `deaths` that can be started again (Galera's
    /// joined nodes, replicas) and waits until it is synced with the cluster (a replica: has
    /// caught up with the primary, within a bound); records on its death how long that took
    /// (or why it could not), and takes it back into `dbms`'s rotation.
    pub fn rejoin(&self, deaths: &mut [NodeDeath], dbms: &dyn Topology) {
        if self.policy != NodeFailure::Continue {
            return;
        }
        for d in deaths.iter_mut() {
            let Some((i, node)) = self
                .nodes
                .iter()
                .enumerate()
                .find(|(_, n)| n.name == d.node)
            else {
                continue;
            };
            let Some(rejoin) = &node.rejoin else { continue };
            d.rejoin = Some(match rejoin.start() {
                Ok(r) => {
                    // The cost sampler reads the new server from the next step on.
                    node.pid.store(r.pid, Ordering::Relaxed);
                    self.probes.restarted(i);
                    self.down
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .retain(|n| n != &node.name);
                    dbms.node_up(&node.name);
                    NodeRejoin {
                        pid: Some(r.pid),
                        synced_s: r.synced_s,
                        started_s: r.started_s,
                        caught_up_s: r.caught_up_s,
                        error: None,
                    }
                }
                Err(e) => NodeRejoin {
                    pid: None,
                    synced_s: None,
                    started_s: None,
                    caught_up_s: None,
                    error: Some(format!("{e:#}")),
                },
            });
        }
    }

    /// The deaths seen since the last call.
    pub fn take(&self) -> Vec<NodeDeath> {
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Whether a death in `deaths` fails the step.
    pub fn fails(&self, deaths: &[NodeDeath]) -> bool {
        deaths
            .iter()
            .any(|d| self.policy == NodeFailure::Fail || d.node == self.nodes[0].name)
    }
}

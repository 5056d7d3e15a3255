//! The nodes of a managed cluster (`--replicas`, `--galera`) watched while the steps run: a
//! node whose process is gone (killed, crashed) is seen within a tenth of a second by the
//! step's coordinator thread, which then fails the step with one line naming the node
//! (`--on-node-failure fail`, the default) or records the death on the step and goes on on
//! the remaining nodes (`continue`: the node stays down for the rest of the run; new client
//! connections no longer go to it). The first node (Galera's n1, a replicated server's
//! primary) carries ibench's own connection: its death fails the step whatever the policy.

use std::sync::Mutex;
use std::time::Duration;

use crate::dbms::Dbms;
use crate::results::model::{ManagedServerInfo, NodeDeath};
use crate::spec::{NodeFailure, ServerSpec};

/// One node of the cluster, as the results name it.
#[derive(Clone, Debug)]
struct Node {
    /// `n1` .. `nN`, `primary`, `r1` .. `rN`.
    name: String,
    /// `galera node`, `primary`, `replica`.
    role: &'static str,
    pid: u32,
    port: u16,
    /// ibench's own connection is to it: its death always fails the step.
    first: bool,
}

impl Node {
    fn label(&self) -> String {
        format!(
            "{} {} (pid {}, port {})",
            self.role, self.name, self.pid, self.port
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
}

impl NodeWatch {
    /// The nodes of the cluster `server` (as recorded, with `info`'s pids and ports), or
    /// `None` for a single server. `port` is the first node's.
    pub fn of(server: &ServerSpec, info: &ManagedServerInfo, port: u16) -> Option<NodeWatch> {
        if info.replicas.is_empty() {
            return None;
        }
        let galera = server.galera.is_some();
        let mut nodes = vec![Node {
            name: if galera { "n1" } else { "primary" }.to_string(),
            role: if galera { "galera node" } else { "primary" },
            pid: info.pid?,
            port,
            first: true,
        }];
        for r in &info.replicas {
            nodes.push(Node {
                name: r.name.clone(),
                role: if galera { "galera node" } else { "replica" },
                pid: r.pid?,
                port: r.port,
                first: false,
            });
        }
        Some(NodeWatch {
            nodes,
            policy: server.on_node_failure,
            down: Mutex::new(Vec::new()),
            seen: Mutex::new(Vec::new()),
        })
    }

    /// Looks at every node still up, `elapsed` into step `step` (`None`: before it starts); a
    /// node found dead is recorded (and, with `continue`, taken out of `dbms`'s rotation).
    /// Returns the line the step fails with when a death must fail it.
    pub fn check(&self, step: &str, elapsed: Option<Duration>, dbms: &dyn Dbms) -> Option<String> {
        let mut down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        let mut failure = None;
        for node in &self.nodes {
            if down.contains(&node.name) || alive(node.pid) {
                continue;
            }
            down.push(node.name.clone());
            let at_s = elapsed.map_or(0.0, |e| (e.as_secs_f64() * 10.0).round() / 10.0);
            let line = match elapsed {
                Some(_) => format!("{} died {at_s:.1} s into {step}", node.label()),
                None => format!("{} died before {step}", node.label()),
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
                "the step went on on the other nodes; it stays down for the rest of the run"
                    .to_string()
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
                    pid: node.pid,
                    port: node.port,
                    step: step.to_string(),
                    at_s,
                    seen: "process gone".to_string(),
                    outcome,
                    message: line,
                });
        }
        failure
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

/// Whether process `pid` runs: it exists and is not a zombie (a server ibench started and
/// has not reaped yet stays one after SIGKILL).
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // "pid (comm) S ...": the state follows the last ')'.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z" | "X" | "x"))
}

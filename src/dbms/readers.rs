//! A primary's replicas as readers (`--read-from replicas`), the same for every DBMS: each
//! replica's connection settings (the DBMS's own type) and URL, named `r1` .. `rN` in order
//! as the managed server names them; a query client reads from one of those still up,
//! round-robin per client, or from the primary when none is.

use std::sync::Mutex;

use crate::dbms::url::ServerUrl;

/// A run's replicas: where readers connect, and which of them died.
pub struct Readers<C> {
    /// Each replica's connection settings and URL.
    nodes: Vec<(C, ServerUrl)>,
    /// Query clients connect to the replicas.
    read: bool,
    /// Names of the replicas that died (`--on-node-failure continue`): no reader goes there.
    down: Mutex<Vec<String>>,
}

impl<C> Default for Readers<C> {
    fn default() -> Self {
        Readers {
            nodes: Vec::new(),
            read: false,
            down: Mutex::new(Vec::new()),
        }
    }
}

impl<C> Readers<C> {
    /// The replicas `nodes` (query clients read from them when `read`).
    pub fn new(nodes: Vec<(C, ServerUrl)>, read: bool) -> Self {
        Readers {
            nodes,
            read,
            down: Mutex::new(Vec::new()),
        }
    }

    /// Each replica's connection settings and URL, `r1` first.
    pub fn nodes(&self) -> &[(C, ServerUrl)] {
        &self.nodes
    }

    /// Whether there are any.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// How many replicas the run's readers connect to (0: they read from the primary).
    pub fn readers(&self) -> usize {
        if self.read { self.nodes.len() } else { 0 }
    }

    /// Where `client`'s query thread reads, when the run reads from replicas: one of those
    /// still up, round-robin; `None` for the primary.
    pub fn reader(&self, client: usize) -> Option<&(C, ServerUrl)> {
        if !self.read || self.nodes.is_empty() {
            return None;
        }
        let down = self.down.lock().unwrap_or_else(|e| e.into_inner());
        let up: Vec<usize> = (0..self.nodes.len())
            .filter(|i| !down.contains(&format!("r{}", i + 1)))
            .collect();
        // With every replica down, the primary.
        up.get(client % up.len().max(1))
            .and_then(|&i| self.nodes.get(i))
    }

    /// Replica `name` (`r1`) died: no reader connects to it from now on.
    pub fn set_down(&self, name: &str) {
        self.down
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(name.to_string());
    }

    /// Replica `name` is back (started again): readers connect to it again.
    pub fn set_up(&self, name: &str) {
        self.down
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|n| n != name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(port: u16) -> ServerUrl {
        ServerUrl::parse(
            &format!("postgres://u@127.0.0.1:{port}/db"),
            "IBENCH_NO_SUCH_ENV",
        )
        .unwrap()
    }

    #[test]
    fn readers_go_round_robin_over_the_replicas_up_then_to_the_primary() {
        let r = Readers::new(vec![(1, url(1)), (2, url(2)), (3, url(3))], true);
        let at = |c| r.reader(c).map(|(n, _)| *n);
        assert_eq!(
            (at(0), at(1), at(2), at(3)),
            (Some(1), Some(2), Some(3), Some(1))
        );
        r.set_down("r2");
        assert_eq!((at(0), at(1), at(2)), (Some(1), Some(3), Some(1)));
        r.set_down("r1");
        r.set_down("r3");
        assert_eq!(at(0), None);
        r.set_up("r2");
        assert_eq!((at(0), at(1)), (Some(2), Some(2)));
        let off = Readers::new(vec![(1, url(1))], false);
        assert!(off.reader(0).is_none());
        assert_eq!(off.readers(), 0);
    }
}

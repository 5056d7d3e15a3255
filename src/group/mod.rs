//! Runs across several client hosts (`ibench run --group NAME --hosts N`): every host runs the
//! same command against one server; they meet in the PostgreSQL results store, take shares of
//! the clients, start every step together and make one run named `NAME`. See
//! docs/multihost.md.
//!
//! * this file — what a group is: its settings, its names, the clients each host runs, the
//!   points where every host waits for the others, its outcome.
//! * `coord.rs` — a host's connection to the meeting point in the store: the parts, the
//!   group's outcome; `join.rs` — the group's tables, joining (or resuming a failed group,
//!   `--resume`); `barrier.rs` — waiting there for every host, bounded for a host gone or
//!   hung.
//! * `member.rs` — one host's membership of its group, around each step (the runner's
//!   `StepGate`): the first step to run, barriers, the maintenance pause on host 0, its part
//!   left after each step, the merged run written.
//! * `merge/` — the merged run out of the hosts' parts.
//!
//! What a results document records of a group (`GroupInfo`, `GroupHost`, `HostStep`) is part
//! of the results model (`crate::results::group`); the report's per-host section is
//! `crate::report::group`.

pub mod barrier;
pub mod coord;
pub mod join;
pub mod member;
pub mod merge;

use std::path::PathBuf;
use std::time::Duration;

use crate::results::model::RunStatus;

/// A group run's settings (`--group`, `--hosts`, `--join-timeout`, `--host-timeout`,
/// `--results`).
#[derive(Clone, Debug)]
pub struct GroupOptions {
    /// Group name; the merged run's id.
    pub name: String,
    /// Hosts in the group.
    pub hosts: usize,
    /// How long to wait for every host to join.
    pub join_timeout: Duration,
    /// How late, beyond what the work before a barrier took this host, another host may reach
    /// it before the group fails naming it (stopped or hung).
    pub host_timeout: Duration,
    /// Resume the group, which failed, from the first step not every host completed
    /// (`--resume`).
    pub resume: bool,
    /// The PostgreSQL results store (`postgres://` URL) the hosts meet in.
    pub store: PathBuf,
}

/// A point every host of the group reaches before any goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    /// Every host joined.
    Joined,
    /// Every host is ready to start step `i` (host 0 then runs the pause, when it has one).
    Ready(usize),
    /// The pause before step `i` is over: the step starts.
    Paused(usize),
    /// Every host finished step `i` and left its part.
    Done(usize),
}

impl Point {
    /// Its number in `ibench_group_barrier`: -1, then three per step.
    pub(super) fn seq(self) -> i64 {
        match self {
            Point::Joined => -1,
            Point::Ready(i) => 3 * i as i64,
            Point::Paused(i) => 3 * i as i64 + 1,
            Point::Done(i) => 3 * i as i64 + 2,
        }
    }

    /// The step a group that fails at this point fails in (`first`: this attempt's first).
    pub(super) fn step(self, first: usize) -> usize {
        match self {
            Point::Joined => first,
            Point::Ready(i) | Point::Paused(i) | Point::Done(i) => i,
        }
    }
}

/// A group's outcome as the store records it.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupOutcome {
    /// `Running` until every host finished, then `Complete`, or `Failed` from the first
    /// failure on.
    pub status: RunStatus,
    /// The first failure, naming the host.
    pub error: Option<String>,
    /// The step the group failed in: it and any later one are failed in the merged run.
    pub failed_step: Option<usize>,
}

/// A run's or step's status as results write it (`complete`, `failed`...).
pub fn status_name(status: impl std::fmt::Debug) -> String {
    format!("{status:?}").to_lowercase()
}

/// Whether `name` can name a group (and the merged run): 1-64 of `A-Za-z0-9._-`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The clients host `index` of `hosts` runs out of `clients`: contiguous, sizes differing by
/// at most one, the first hosts taking the extra ones.
pub fn share(clients: usize, hosts: usize, index: usize) -> std::ops::Range<usize> {
    let hosts = hosts.max(1);
    let (base, extra) = (clients / hosts, clients % hosts);
    let start = index * base + index.min(extra);
    start..start + base + usize::from(index < extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_client_once() {
        for clients in 1..12 {
            for hosts in 1..=clients {
                let mut all: Vec<usize> =
                    (0..hosts).flat_map(|i| share(clients, hosts, i)).collect();
                all.sort();
                assert_eq!(
                    all,
                    (0..clients).collect::<Vec<_>>(),
                    "{clients} over {hosts}"
                );
            }
        }
        assert_eq!(share(5, 2, 0), 0..3);
        assert_eq!(share(5, 2, 1), 3..5);
    }

    #[test]
    fn names() {
        assert!(valid_name("nightly-2026.11_a"));
        assert!(!valid_name(""));
        assert!(!valid_name("a b"));
        assert!(!valid_name(&"x".repeat(65)));
    }
}

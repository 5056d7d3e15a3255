//! Runs across several client hosts merged into one (`ibench run --group NAME --hosts N`):
//! what the merged document records about the group and each host (this file), and the
//! meeting point in the PostgreSQL results store where the hosts join, wait for each other
//! before every step and leave their parts (`coord.rs`). See docs/multihost.md.

pub mod coord;

use serde::{Deserialize, Serialize};

/// A run's group: in a host's part, that host alone; in the merged run, every host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupInfo {
    /// The group's name (`--group`); the merged run's id.
    pub name: String,
    /// Hosts the group was started with (`--hosts`).
    pub hosts: usize,
    /// The hosts whose parts are known, by index.
    pub members: Vec<GroupHost>,
}

/// One host of a group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupHost {
    /// Index in the group (0: the host that runs the maintenance pause), in join order.
    pub index: usize,
    /// Host name.
    pub hostname: String,
    /// Process id of its ibench.
    pub pid: u32,
    /// Id of its part (the stem of its results file on that host).
    pub run_id: String,
    /// First client number it runs.
    pub first_client: usize,
    /// Clients it runs (numbers `first_client..first_client + clients`).
    pub clients: usize,
    /// The store's clock minus this host's clock when it joined, microseconds (the sample
    /// with the shortest round trip, corrected by half of it).
    pub clock_offset_us: i64,
    /// Round trip of that sample, microseconds (the offset is good to about half of it).
    pub clock_rtt_us: u64,
    /// Its price per hour (`--cost-per-hour`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    /// Its part's status, as a run's (`running` for a host that vanished mid-step).
    pub status: String,
    /// What each step measured on this host (filled in the merged run).
    #[serde(default)]
    pub steps: Vec<HostStep>,
}

/// One step as one host of a group measured it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostStep {
    /// Step name.
    pub name: String,
    /// Its status on this host, as a step's (`complete`, `failed`...).
    pub status: String,
    /// When it started on this host, after the group's first host started it, on the store's
    /// clock, milliseconds.
    pub start_offset_ms: f64,
    /// Measured duration on this host, seconds.
    pub duration_s: f64,
    /// Rows inserted.
    pub rows_inserted: u64,
    /// Rows deleted.
    pub rows_deleted: u64,
    /// Queries.
    pub queries: u64,
    /// Rows inserted per second.
    pub inserts_per_s: f64,
    /// Rows deleted per second.
    pub deletes_per_s: f64,
    /// Queries per second.
    pub queries_per_s: f64,
    /// ibench CPU per op on this host, microseconds (ops as the step's cost counts them).
    pub client_cpu_us_per_op: Option<f64>,
    /// Host CPU per op on this host, microseconds.
    pub host_cpu_us_per_op: Option<f64>,
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

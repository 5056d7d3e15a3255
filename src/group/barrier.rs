//! Waiting for every host of the group at a point of the run (`ibench_group_barrier`: one row
//! per host and point it reached).
//!
//! A waiting host polls (woken early by `NOTIFY ibench_group`). Meanwhile it checks the hosts
//! it still waits for: one whose store connection's backend left `pg_stat_activity` is gone
//! (its process ended: killed, crashed); one still connected that has not arrived within the
//! point's time limit ([`Wait`]) is stopped or hung. Either fails the group, naming the host
//! and the point, and every other host stops at its next barrier.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use fallible_iterator::FallibleIterator;

use super::Point;
use super::coord::Coordinator;

/// How often a waiting host looks again when no notification wakes it.
const POLL: Duration = Duration::from_millis(200);

/// How long a host waits at a point for the others, from its own arrival, and why that long
/// (said in the failure).
#[derive(Clone, Debug)]
pub struct Wait {
    limit: Duration,
    why: String,
}

impl Wait {
    /// Every host must join within `limit` (`--join-timeout`).
    pub fn join(limit: Duration) -> Self {
        Wait {
            limit,
            why: "--join-timeout".to_string(),
        }
    }

    /// A host may arrive as long after this one as the work leading to the point took this
    /// host (`work`, which `work_is` describes: "qp100 took 4s here"), plus `host_timeout`.
    pub fn late(host_timeout: Duration, work: Duration, work_is: &str) -> Self {
        let timeout = format!("--host-timeout {}s", host_timeout.as_secs());
        Wait {
            limit: host_timeout + work,
            why: if work_is.is_empty() {
                timeout
            } else {
                format!("{work_is}, plus {timeout}")
            },
        }
    }
}

/// A host as the others see it.
#[derive(Clone, Debug)]
struct Member {
    index: usize,
    hostname: String,
    pid: i64,
    alive: bool,
}

impl Member {
    fn named(&self) -> String {
        format!("host {} ({}, pid {})", self.index, self.hostname, self.pid)
    }
}

impl Coordinator {
    /// Reaches `point` and waits until every host has (`what` names it in messages). Fails,
    /// naming the host, when a host it waits for is gone, or has not arrived within `wait`
    /// of this host; or when the group failed. The failure is recorded as the group's (in
    /// the step the point belongs to), so that every other host stops at its next barrier.
    pub fn barrier(&mut self, point: Point, what: &str, wait: &Wait) -> Result<()> {
        let seq = point.seq();
        self.client.execute(
            "INSERT INTO ibench_group_barrier (group_name, seq, idx) VALUES ($1, $2, $3) \
             ON CONFLICT DO NOTHING",
            &[&self.name, &seq, &(self.index as i64)],
        )?;
        self.client
            .execute("SELECT pg_notify('ibench_group', $1)", &[&self.name])?;
        let start = Instant::now();
        loop {
            if let Some(error) = self.failure()? {
                bail!("group {} failed: {error}", self.name);
            }
            let arrived = self.arrived(seq)?;
            if arrived.len() >= self.hosts {
                return Ok(());
            }
            let members = self.members()?;
            let missing: Vec<usize> = (0..self.hosts).filter(|i| !arrived.contains(i)).collect();
            let message = if let Some(gone) = members
                .iter()
                .find(|m| missing.contains(&m.index) && !m.alive)
            {
                Some(format!(
                    "{} is gone before {what}: its ibench process ended (its store connection \
                     closed); the parts already written are kept",
                    gone.named()
                ))
            } else if start.elapsed() >= wait.limit {
                Some(late(&missing, &members, what, wait))
            } else {
                None
            };
            if let Some(message) = message {
                self.fail(&message, point.step(self.first_step))?;
                bail!("group {} failed: {message}", self.name);
            }
            // Woken by the next arrival, or look again after POLL.
            let _ = self.client.notifications().timeout_iter(POLL).next();
        }
    }

    /// The hosts that reached barrier `seq`.
    fn arrived(&mut self, seq: i64) -> Result<Vec<usize>> {
        Ok(self
            .client
            .query(
                "SELECT idx FROM ibench_group_barrier WHERE group_name = $1 AND seq = $2",
                &[&self.name, &seq],
            )?
            .iter()
            .map(|r| r.get::<_, i64>(0) as usize)
            .collect())
    }

    /// The hosts that joined, and whether their store connection is still open.
    fn members(&mut self) -> Result<Vec<Member>> {
        Ok(self
            .client
            .query(
                "SELECT idx, hostname, pid, \
                 backend_pid IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL) \
                 FROM ibench_group_host WHERE group_name = $1 ORDER BY idx",
                &[&self.name],
            )?
            .iter()
            .map(|r| Member {
                index: r.get::<_, i64>(0) as usize,
                hostname: r.get(1),
                pid: r.get(2),
                alive: r.get(3),
            })
            .collect())
    }
}

/// The failure of the hosts `missing` from `what` past `wait`: those that never joined, and
/// those connected but not arriving (stopped or hung).
fn late(missing: &[usize], members: &[Member], what: &str, wait: &Wait) -> String {
    let mut hung = false;
    let named: Vec<String> = missing
        .iter()
        .map(|&i| match members.iter().find(|m| m.index == i) {
            Some(m) => {
                hung = true;
                m.named()
            }
            None => format!("host {i} (never joined)"),
        })
        .collect();
    let seconds = wait.limit.as_secs_f64().round();
    let why = &wait.why;
    let state = if hung {
        ": still connected to the store, so stopped or hung, not gone; the parts already \
         written are kept"
    } else {
        ""
    };
    format!(
        "{} did not reach {what} within {seconds}s ({why}){state}",
        named.join(", ")
    )
}

//! The group's meeting point in the PostgreSQL results store: no coordinator service of
//! ibench's own, only tables every host reads and writes.
//!
//! * `ibench_group`: one row per group (hosts expected, the workload every host must run, its
//!   status `joining`, `running`, `complete` or `failed`, the first failure's message and the
//!   step the group failed in; its attempt, one more each time it was resumed, and the step
//!   that attempt starts from).
//! * `ibench_group_host`: one row per host of the current attempt (index, host name, pid, the
//!   backend pid of its store connection) holding its part: its own results document,
//!   rewritten after every step.
//! * `ibench_group_barrier`: one row per host and barrier it reached (`barrier.rs`).
//! * `ibench_group_part`: the parts of the attempts before the current one.
//!
//! Joining (and resuming) is `join.rs`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use super::GroupOutcome;
use super::join::{JoinRequest, admit};
use crate::results::model::{RunResult, RunStatus};

/// How often a host tries again to take the lock on the merged run.
const LOCK_POLL: Duration = Duration::from_millis(50);

/// A host's membership of a group, over its own connection to the store.
pub struct Coordinator {
    pub(super) client: postgres::Client,
    shown: PathBuf,
    pub(super) name: String,
    pub(super) hosts: usize,
    pub(super) index: usize,
    /// The group's attempt this host belongs to.
    attempt: usize,
    /// The first step this attempt runs.
    pub(super) first_step: usize,
}

impl std::fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Coordinator({} host {})", self.name, self.index)
    }
}

fn micros_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

impl Coordinator {
    /// Joins group `req.name` in the store at `url` (a `postgres://` URL): creates the group
    /// when it is new, refuses one that already ran or whose workload differs, resumes a
    /// failed one with `req.resume`, and takes the lowest free host index. Does not wait for
    /// the others (the barrier [`super::Point::Joined`] does).
    pub fn join(url: &Path, req: &JoinRequest) -> Result<Self> {
        let (mut client, shown) =
            crate::results::store::connect_postgres(&url.to_string_lossy(), "ibench-group")?;
        let admission = admit(client.transaction()?, &shown, req)
            .with_context(|| format!("cannot join group {} in {}", req.name, shown.display()))?;
        client.batch_execute("LISTEN ibench_group")?;
        Ok(Coordinator {
            client,
            shown,
            name: req.name.to_string(),
            hosts: req.hosts,
            index: admission.index,
            attempt: admission.attempt,
            first_step: admission.first_step,
        })
    }

    /// This host's index in the group.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The group's attempt this host belongs to: 0, then one more each time it was resumed.
    pub fn attempt(&self) -> usize {
        self.attempt
    }

    /// The first step this host runs: 0, or where a resumed group goes on.
    pub fn first_step(&self) -> usize {
        self.first_step
    }

    /// The store's clock minus this host's, microseconds, and the round trip it was read in:
    /// of `samples` readings of `clock_timestamp()`, the one with the shortest round trip,
    /// taken to be read half-way through it.
    pub fn clock_offset(&mut self, samples: usize) -> Result<(i64, u64)> {
        let mut best: Option<(i64, u64)> = None;
        for _ in 0..samples.max(1) {
            let before = micros_now();
            let row = self.client.query_one(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint",
                &[],
            )?;
            let after = micros_now();
            let server: i64 = row.get(0);
            let rtt = (after - before).max(0) as u64;
            let offset = server - (before + (rtt / 2) as i64);
            if best.is_none_or(|(_, r)| rtt < r) {
                best = Some((offset, rtt));
            }
        }
        Ok(best.unwrap_or((0, 0)))
    }

    /// The group's failure, when it failed; or that it was resumed without this host.
    pub(super) fn failure(&mut self) -> Result<Option<String>> {
        let row = self.client.query_one(
            "SELECT status, coalesce(error, ''), attempt FROM ibench_group WHERE name = $1",
            &[&self.name],
        )?;
        let (status, error, attempt): (String, String, i64) = (row.get(0), row.get(1), row.get(2));
        Ok(if attempt as usize != self.attempt {
            Some(self.resumed_without(attempt))
        } else {
            (status == "failed").then_some(error)
        })
    }

    fn resumed_without(&self, attempt: i64) -> String {
        format!(
            "it was resumed without this host (attempt {attempt}; this host is of attempt {})",
            self.attempt
        )
    }

    /// Marks the group running (every host joined).
    pub fn started(&mut self) -> Result<()> {
        self.client.execute(
            "UPDATE ibench_group SET status = 'running' \
             WHERE name = $1 AND status = 'joining' AND attempt = $2",
            &[&self.name, &(self.attempt as i64)],
        )?;
        Ok(())
    }

    /// Records `message` as the group's failure in step `step`, unless it failed already (the
    /// first failure is the cause) or completed, and wakes the waiting hosts.
    pub fn fail(&mut self, message: &str, step: usize) -> Result<()> {
        self.client.execute(
            "UPDATE ibench_group SET status = 'failed', error = $2, failed_step = $3 \
             WHERE name = $1 AND status IN ('joining', 'running') AND attempt = $4",
            &[&self.name, &message, &(step as i64), &(self.attempt as i64)],
        )?;
        self.client
            .execute("SELECT pg_notify('ibench_group', $1)", &[&self.name])?;
        Ok(())
    }

    /// Marks the group complete, unless it failed.
    pub fn complete(&mut self) -> Result<()> {
        self.client.execute(
            "UPDATE ibench_group SET status = 'complete' \
             WHERE name = $1 AND status = 'running' AND attempt = $2",
            &[&self.name, &(self.attempt as i64)],
        )?;
        Ok(())
    }

    /// The group's outcome so far; an error when the group was resumed without this host
    /// (the merged run is then the resumed attempt's to write).
    pub fn outcome(&mut self) -> Result<GroupOutcome> {
        let row = self.client.query_one(
            "SELECT status, error, failed_step, attempt FROM ibench_group WHERE name = $1",
            &[&self.name],
        )?;
        let attempt: i64 = row.get(3);
        if attempt as usize != self.attempt {
            bail!("group {}: {}", self.name, self.resumed_without(attempt));
        }
        let status: String = row.get(0);
        Ok(GroupOutcome {
            status: match status.as_str() {
                "complete" => RunStatus::Complete,
                "failed" => RunStatus::Failed,
                _ => RunStatus::Running,
            },
            error: row.get(1),
            failed_step: row.get::<_, Option<i64>>(2).map(|s| s as usize),
        })
    }

    /// Writes this host's part (its results document as it stands), unless the group was
    /// resumed without it: its row is then another host's.
    pub fn save_part(&mut self, part: &RunResult) -> Result<()> {
        let text = serde_json::to_string(part)?;
        let saved = self
            .client
            .execute(
                "UPDATE ibench_group_host SET part = $3 \
                 WHERE group_name = $1 AND idx = $2 AND backend_pid = pg_backend_pid()",
                &[&self.name, &(self.index as i64), &text],
            )
            .with_context(|| {
                format!(
                    "cannot save this host's part of group {} in {}",
                    self.name,
                    self.shown.display()
                )
            })?;
        if saved == 0 {
            bail!(
                "cannot save this host's part of group {}: this host is no longer one of it (it \
                 was resumed without it)",
                self.name
            );
        }
        Ok(())
    }

    /// Every part written so far, of every attempt, by attempt and host index.
    pub fn parts(&mut self) -> Result<Vec<RunResult>> {
        let rows = self.client.query(
            "SELECT attempt, idx, part FROM ibench_group_part WHERE group_name = $1 \
             UNION ALL \
             SELECT $2, idx, part FROM ibench_group_host \
             WHERE group_name = $1 AND part IS NOT NULL ORDER BY 1, 2",
            &[&self.name, &(self.attempt as i64)],
        )?;
        rows.iter()
            .map(|r| {
                let (attempt, idx): (i64, i64) = (r.get(0), r.get(1));
                let text: String = r.get(2);
                serde_json::from_str(&text).with_context(|| {
                    format!(
                        "the part of host {idx} of group {} (attempt {attempt})",
                        self.name
                    )
                })
            })
            .collect()
    }

    /// Takes the group's lock on the merged run (one host at a time writes it), waiting at
    /// most `limit`: a host stopped or hung while it holds the lock keeps it. Past the limit,
    /// fails the group in step `step`, naming the host that holds it.
    pub fn lock_merge(&mut self, limit: Duration, step: usize) -> Result<()> {
        let key = format!("ibench_group_merge:{}", self.name);
        let start = Instant::now();
        loop {
            let row = self
                .client
                .query_one("SELECT pg_try_advisory_lock(hashtext($1))", &[&key])?;
            if row.get::<_, bool>(0) {
                return Ok(());
            }
            if start.elapsed() >= limit {
                let holder = self.merge_lock_holder(&key)?;
                let message = format!(
                    "{holder} held the lock on the merged run for over {}s (--host-timeout): \
                     stopped or hung while writing it",
                    limit.as_secs()
                );
                self.fail(&message, step)?;
                bail!("group {} failed: {message}", self.name);
            }
            std::thread::sleep(LOCK_POLL);
        }
    }

    /// The host holding the advisory lock `key` (on a bigint: its high and low halves are
    /// `classid` and `objid` in `pg_locks`), named.
    fn merge_lock_holder(&mut self, key: &str) -> Result<String> {
        let row = self.client.query_opt(
            "SELECT h.idx, h.hostname, h.pid FROM pg_locks l \
             JOIN ibench_group_host h ON h.backend_pid = l.pid AND h.group_name = $2 \
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 \
             AND l.classid::bigint = (hashtext($1)::bigint >> 32) & 4294967295 \
             AND l.objid::bigint = hashtext($1)::bigint & 4294967295 LIMIT 1",
            &[&key, &self.name],
        )?;
        Ok(row.map_or_else(
            || "another host".to_string(),
            |r| {
                let (idx, hostname, pid): (i64, String, i64) = (r.get(0), r.get(1), r.get(2));
                format!("host {idx} ({hostname}, pid {pid})")
            },
        ))
    }

    /// Releases the lock [`Coordinator::lock_merge`] took.
    pub fn unlock_merge(&mut self) -> Result<()> {
        let key = format!("ibench_group_merge:{}", self.name);
        self.client
            .execute("SELECT pg_advisory_unlock(hashtext($1))", &[&key])?;
        Ok(())
    }
}

//! The group's meeting point in the PostgreSQL results store: no coordinator service of
//! ibench's own, only tables every host reads and writes.
//!
//! * `ibench_group`: one row per group (hosts expected, the workload every host must run, its
//!   status `joining`, `running`, `complete` or `failed`, the first failure's message and the
//!   step the group failed in).
//! * `ibench_group_host`: one row per host that joined (index, host name, pid, the backend pid
//!   of its store connection) holding its part: its own results document, rewritten after
//!   every step.
//! * `ibench_group_barrier`: one row per host and barrier it reached (`barrier.rs`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use super::GroupOutcome;
use crate::error::UsageError;
use crate::results::model::{RunResult, RunStatus};

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS ibench_group (
        name TEXT PRIMARY KEY,
        hosts BIGINT NOT NULL,
        workload TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        failed_step BIGINT,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now());
    CREATE TABLE IF NOT EXISTS ibench_group_host (
        group_name TEXT NOT NULL REFERENCES ibench_group (name) ON DELETE CASCADE,
        idx BIGINT NOT NULL,
        hostname TEXT NOT NULL,
        pid BIGINT NOT NULL,
        backend_pid BIGINT NOT NULL,
        part TEXT,
        joined_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (group_name, idx));
    CREATE TABLE IF NOT EXISTS ibench_group_barrier (
        group_name TEXT NOT NULL REFERENCES ibench_group (name) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        idx BIGINT NOT NULL,
        at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (group_name, seq, idx));";

/// Columns added since the tables were first made: added to a store that lacks them.
const ADDED_COLUMNS: [(&str, &str, &str); 1] = [("ibench_group", "failed_step", "BIGINT")];

/// How often a host tries again to take the lock on the merged run.
const LOCK_POLL: Duration = Duration::from_millis(50);

/// What a host brings to the group it joins.
#[derive(Clone, Debug)]
pub struct JoinRequest<'a> {
    /// Group name.
    pub name: &'a str,
    /// Hosts the group has.
    pub hosts: usize,
    /// The workload every host must run, as canonical text (the spec's workload as JSON).
    pub workload: &'a str,
    /// This host's name.
    pub hostname: &'a str,
}

/// A host's membership of a group, over its own connection to the store.
pub struct Coordinator {
    pub(super) client: postgres::Client,
    shown: PathBuf,
    pub(super) name: String,
    pub(super) hosts: usize,
    pub(super) index: usize,
    /// The first step this host runs.
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
    /// when it is new, refuses one that already ran or whose workload differs, and takes the
    /// lowest free host index. Does not wait for the others ([`Coordinator::wait_joined`]).
    pub fn join(url: &Path, req: &JoinRequest) -> Result<Self> {
        let (mut client, shown) =
            crate::results::store::connect_postgres(&url.to_string_lossy(), "ibench-group")?;
        let index = Self::take_index(&mut client, &shown, req)
            .with_context(|| format!("cannot join group {} in {}", req.name, shown.display()))?;
        client.batch_execute("LISTEN ibench_group")?;
        Ok(Coordinator {
            client,
            shown,
            name: req.name.to_string(),
            hosts: req.hosts,
            index,
            first_step: 0,
        })
    }

    fn take_index(client: &mut postgres::Client, shown: &Path, req: &JoinRequest) -> Result<usize> {
        let mut tx = client.transaction()?;
        // One joining host at a time, in every group (tables created once).
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('ibench_group'))",
            &[],
        )?;
        tx.batch_execute(SCHEMA)?;
        add_columns(&mut tx)?;
        let group = tx.query_opt(
            "SELECT hosts, workload, status, coalesce(error, '') FROM ibench_group WHERE name = $1",
            &[&req.name],
        )?;
        match group {
            None => {
                let merged_run = tx.query_opt("SELECT 1 FROM runs WHERE id = $1", &[&req.name])?;
                if merged_run.is_some() {
                    bail!(UsageError::new(format!(
                        "a run named {} is already in {}: give the group another --group name",
                        req.name,
                        shown.display()
                    )));
                }
                tx.execute(
                    "INSERT INTO ibench_group (name, hosts, workload, status) \
                     VALUES ($1, $2, $3, 'joining')",
                    &[&req.name, &(req.hosts as i64), &req.workload],
                )?;
            }
            Some(row) => {
                let (hosts, workload, status, error): (i64, String, String, String) =
                    (row.get(0), row.get(1), row.get(2), row.get(3));
                if status != "joining" {
                    let why = if error.is_empty() {
                        String::new()
                    } else {
                        format!(": {error}")
                    };
                    bail!(UsageError::new(format!(
                        "group {} already ran in {} (status {status}{why}); its results stay \
                         as they are (`ibench show {}`): give this run another --group name",
                        req.name,
                        shown.display(),
                        req.name
                    )));
                }
                if hosts as usize != req.hosts {
                    bail!(UsageError::new(format!(
                        "group {} has --hosts {hosts}, this host was given --hosts {}",
                        req.name, req.hosts
                    )));
                }
                if workload != req.workload {
                    bail!(UsageError::new(format!(
                        "group {} runs another workload than this host was given: every host \
                         needs the same workload flags (--clients, --steps, rows, seed...)",
                        req.name
                    )));
                }
                // Hosts that joined and went away before the group started free their index.
                tx.execute(
                    "DELETE FROM ibench_group_host WHERE group_name = $1 \
                     AND backend_pid NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)",
                    &[&req.name],
                )?;
            }
        }
        let taken: Vec<i64> = tx
            .query(
                "SELECT idx FROM ibench_group_host WHERE group_name = $1 ORDER BY idx",
                &[&req.name],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let Some(index) = (0..req.hosts as i64).find(|i| !taken.contains(i)) else {
            bail!(UsageError::new(format!(
                "group {} already has its {} hosts",
                req.name, req.hosts
            )));
        };
        tx.execute(
            "INSERT INTO ibench_group_host (group_name, idx, hostname, pid, backend_pid) \
             VALUES ($1, $2, $3, $4, pg_backend_pid())",
            &[
                &req.name,
                &index,
                &req.hostname,
                &i64::from(std::process::id()),
            ],
        )?;
        tx.commit()?;
        Ok(index as usize)
    }

    /// This host's index in the group.
    pub fn index(&self) -> usize {
        self.index
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

    /// The group's failure, when it failed.
    pub(super) fn failure(&mut self) -> Result<Option<String>> {
        let row = self.client.query_one(
            "SELECT status, coalesce(error, '') FROM ibench_group WHERE name = $1",
            &[&self.name],
        )?;
        let (status, error): (String, String) = (row.get(0), row.get(1));
        Ok((status == "failed").then_some(error))
    }

    /// Marks the group running (every host joined).
    pub fn started(&mut self) -> Result<()> {
        self.client.execute(
            "UPDATE ibench_group SET status = 'running' WHERE name = $1 AND status = 'joining'",
            &[&self.name],
        )?;
        Ok(())
    }

    /// Records `message` as the group's failure in step `step`, unless it failed already (the
    /// first failure is the cause), and wakes the waiting hosts.
    pub fn fail(&mut self, message: &str, step: usize) -> Result<()> {
        self.client.execute(
            "UPDATE ibench_group SET status = 'failed', error = $2, failed_step = $3 \
             WHERE name = $1 AND status <> 'failed'",
            &[&self.name, &message, &(step as i64)],
        )?;
        self.client
            .execute("SELECT pg_notify('ibench_group', $1)", &[&self.name])?;
        Ok(())
    }

    /// Marks the group complete, unless it failed.
    pub fn complete(&mut self) -> Result<()> {
        self.client.execute(
            "UPDATE ibench_group SET status = 'complete' WHERE name = $1 AND status = 'running'",
            &[&self.name],
        )?;
        Ok(())
    }

    /// The group's outcome so far.
    pub fn outcome(&mut self) -> Result<GroupOutcome> {
        let row = self.client.query_one(
            "SELECT status, error, failed_step FROM ibench_group WHERE name = $1",
            &[&self.name],
        )?;
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

    /// Writes this host's part (its results document as it stands).
    pub fn save_part(&mut self, part: &RunResult) -> Result<()> {
        let text = serde_json::to_string(part)?;
        self.client
            .execute(
                "UPDATE ibench_group_host SET part = $3 WHERE group_name = $1 AND idx = $2",
                &[&self.name, &(self.index as i64), &text],
            )
            .with_context(|| {
                format!(
                    "cannot save this host's part of group {} in {}",
                    self.name,
                    self.shown.display()
                )
            })?;
        Ok(())
    }

    /// Every part written so far, by host index.
    pub fn parts(&mut self) -> Result<Vec<RunResult>> {
        let rows = self.client.query(
            "SELECT idx, part FROM ibench_group_host \
             WHERE group_name = $1 AND part IS NOT NULL ORDER BY idx",
            &[&self.name],
        )?;
        rows.iter()
            .map(|r| {
                let idx: i64 = r.get(0);
                let text: String = r.get(1);
                serde_json::from_str(&text)
                    .with_context(|| format!("the part of host {idx} of group {}", self.name))
            })
            .collect()
    }

    /// Takes the group's lock on the merged run (one host at a time writes it), waiting at
    /// most `limit`: a host stopped or hung while it holds the lock keeps it.
    pub fn lock_merge(&mut self, limit: Duration) -> Result<()> {
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
                bail!(
                    "cannot write the merged run of group {}: another host held its lock for \
                     over {}s (--host-timeout): stopped or hung while writing it",
                    self.name,
                    limit.as_secs()
                );
            }
            std::thread::sleep(LOCK_POLL);
        }
    }

    /// Releases the lock [`Coordinator::lock_merge`] took.
    pub fn unlock_merge(&mut self) -> Result<()> {
        let key = format!("ibench_group_merge:{}", self.name);
        self.client
            .execute("SELECT pg_advisory_unlock(hashtext($1))", &[&key])?;
        Ok(())
    }
}

/// Adds to the group's tables the columns a store made by an earlier ibench lacks.
fn add_columns(tx: &mut postgres::Transaction) -> Result<()> {
    for (table, column, kind) in ADDED_COLUMNS {
        let there = tx.query_one(
            "SELECT count(*) FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2",
            &[&table, &column],
        )?;
        if there.get::<_, i64>(0) == 0 {
            tx.batch_execute(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
        }
    }
    Ok(())
}

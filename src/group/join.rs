//! Joining a group in the store, in one transaction under an advisory lock: the group's
//! tables made, the group created or checked (same hosts, same workload), a resumed group
//! started again (`--resume`), and the lowest free host index taken.

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, bail};
use postgres::Transaction;
use postgres::error::SqlState;

use super::Point;
use crate::error::UsageError;

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS ibench_group (
        name TEXT PRIMARY KEY,
        hosts BIGINT NOT NULL,
        workload TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        failed_step BIGINT,
        attempt BIGINT NOT NULL DEFAULT 0,
        first_step BIGINT NOT NULL DEFAULT 0,
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
        PRIMARY KEY (group_name, seq, idx));
    CREATE TABLE IF NOT EXISTS ibench_group_part (
        group_name TEXT NOT NULL REFERENCES ibench_group (name) ON DELETE CASCADE,
        attempt BIGINT NOT NULL,
        idx BIGINT NOT NULL,
        part TEXT NOT NULL,
        PRIMARY KEY (group_name, attempt, idx));";

/// Columns added since the tables were first made: added to a store that lacks them.
const ADDED_COLUMNS: [(&str, &str, &str); 3] = [
    ("ibench_group", "failed_step", "BIGINT"),
    ("ibench_group", "attempt", "BIGINT NOT NULL DEFAULT 0"),
    ("ibench_group", "first_step", "BIGINT NOT NULL DEFAULT 0"),
];

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
    /// Resume the group, which failed (`--resume`), instead of starting it.
    pub resume: bool,
    /// How long to wait for the lock joining hosts take one at a time (`--join-timeout`).
    pub join_timeout: Duration,
}

/// Where a joining host stands in its group.
pub(super) struct Admission {
    /// Its index.
    pub index: usize,
    /// The group's attempt: 0, then one more each time it was resumed.
    pub attempt: usize,
    /// The first step this attempt runs.
    pub first_step: usize,
}

/// The group's row, as a joining host reads it.
struct GroupRow {
    hosts: i64,
    workload: String,
    status: String,
    error: String,
    failed_step: Option<i64>,
    attempt: i64,
    first_step: i64,
}

/// Joins group `req.name` over `tx`'s connection to the store `shown`: creates it, checks it,
/// or resumes it, and takes the lowest free host index.
pub(super) fn admit(mut tx: Transaction, shown: &Path, req: &JoinRequest) -> Result<Admission> {
    // One joining host at a time, in every group (tables created once); a host stopped in
    // its join keeps the lock: wait for it as long as for the join itself.
    let limit = req.join_timeout.as_millis().max(1);
    tx.batch_execute(&format!("SET LOCAL lock_timeout = {limit}"))?;
    if let Err(e) = tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('ibench_group'))",
        &[],
    ) {
        if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) {
            bail!(
                "another host held the lock on joining for over {}s (--join-timeout): stopped \
                 or hung while joining a group",
                req.join_timeout.as_secs()
            );
        }
        return Err(e.into());
    }
    tx.batch_execute(SCHEMA)?;
    add_columns(&mut tx)?;
    let (attempt, first_step) = match read_group(&mut tx, req.name)? {
        None => create(&mut tx, shown, req)?,
        Some(group) => {
            group.check_same(req)?;
            if req.resume {
                resume(&mut tx, shown, req, &group)?
            } else {
                group.check_joining(shown, req)?;
                (group.attempt as usize, group.first_step as usize)
            }
        }
    };
    // Hosts that joined and went away before the group started free their index.
    tx.execute(
        "DELETE FROM ibench_group_host WHERE group_name = $1 \
         AND backend_pid NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)",
        &[&req.name],
    )?;
    let index = take_index(&mut tx, req)?;
    tx.commit()?;
    Ok(Admission {
        index,
        attempt,
        first_step,
    })
}

/// Adds to the group's tables the columns a store made by an earlier ibench lacks.
fn add_columns(tx: &mut Transaction) -> Result<()> {
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

fn read_group(tx: &mut Transaction, name: &str) -> Result<Option<GroupRow>> {
    let row = tx.query_opt(
        "SELECT hosts, workload, status, coalesce(error, ''), failed_step, attempt, first_step \
         FROM ibench_group WHERE name = $1",
        &[&name],
    )?;
    Ok(row.map(|r| GroupRow {
        hosts: r.get(0),
        workload: r.get(1),
        status: r.get(2),
        error: r.get(3),
        failed_step: r.get(4),
        attempt: r.get(5),
        first_step: r.get(6),
    }))
}

/// A new group: its attempt 0 from step 0.
fn create(tx: &mut Transaction, shown: &Path, req: &JoinRequest) -> Result<(usize, usize)> {
    if req.resume {
        bail!(UsageError::new(format!(
            "there is no group {} in {} to resume: start it without --resume",
            req.name,
            shown.display()
        )));
    }
    if tx
        .query_opt("SELECT 1 FROM runs WHERE id = $1", &[&req.name])?
        .is_some()
    {
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
    Ok((0, 0))
}

impl GroupRow {
    /// Refuses a host given other `--hosts` or another workload than the group's.
    fn check_same(&self, req: &JoinRequest) -> Result<()> {
        if self.hosts as usize != req.hosts {
            bail!(UsageError::new(format!(
                "group {} has --hosts {}, this host was given --hosts {}",
                req.name, self.hosts, req.hosts
            )));
        }
        if self.workload != req.workload {
            bail!(UsageError::new(format!(
                "group {} runs another workload than this host was given: every host needs the \
                 same workload flags (--clients, --steps, rows, seed...)",
                req.name
            )));
        }
        Ok(())
    }

    /// Refuses to join, without `--resume`, a group that is not gathering its hosts.
    fn check_joining(&self, shown: &Path, req: &JoinRequest) -> Result<()> {
        let name = req.name;
        if self.status != "joining" {
            let why = if self.error.is_empty() {
                String::new()
            } else {
                format!(": {}", self.error)
            };
            let or_resume = if self.status == "failed" {
                ", or resume it (the same command with --resume on every host)"
            } else {
                ""
            };
            bail!(UsageError::new(format!(
                "group {name} already ran in {} (status {}{why}); its results stay as they are \
                 (`ibench show {name}`): give this run another --group name{or_resume}",
                shown.display(),
                self.status
            )));
        }
        if self.attempt > 0 {
            bail!(UsageError::new(format!(
                "group {name} is being resumed: give this host --resume too"
            )));
        }
        Ok(())
    }
}

/// Resumes the group `group` (`--resume`): joins a resumed attempt that is gathering its
/// hosts, or starts one when the group failed (or every host of its running attempt is
/// gone), from the step it failed in. Refuses a group that completed, that never started,
/// or one of whose hosts is still connected.
fn resume(
    tx: &mut Transaction,
    shown: &Path,
    req: &JoinRequest,
    group: &GroupRow,
) -> Result<(usize, usize)> {
    let name = req.name;
    let store = shown.display();
    match group.status.as_str() {
        "complete" => bail!(UsageError::new(format!(
            "group {name} completed in {store}: there is nothing to resume (`ibench show {name}`)"
        ))),
        "joining" if group.attempt > 0 => {
            return Ok((group.attempt as usize, group.first_step as usize));
        }
        "joining" => bail!(UsageError::new(format!(
            "group {name} has not started (its hosts are joining): there is nothing to resume; \
             run without --resume"
        ))),
        _ => {}
    }
    if let Some(host) = connected_host(tx, name)? {
        bail!(UsageError::new(if group.status == "failed" {
            format!(
                "{host} of group {name} is still connected to {store}: end it before resuming \
                 (it is stopped, hung or still stopping, and its clients could write into the \
                 tables the resumed run works on)"
            )
        } else {
            format!("group {name} is running ({host} is connected): there is nothing to resume")
        }));
    }
    let first_step = match group.failed_step {
        Some(step) => step as usize,
        None => completed_steps(tx, name, group)?,
    };
    let attempt = group.attempt + 1;
    // The parts of the attempt that failed are kept apart; its hosts and barriers go.
    tx.execute(
        "INSERT INTO ibench_group_part (group_name, attempt, idx, part) \
         SELECT group_name, $2, idx, part FROM ibench_group_host \
         WHERE group_name = $1 AND part IS NOT NULL",
        &[&name, &group.attempt],
    )?;
    tx.execute(
        "DELETE FROM ibench_group_host WHERE group_name = $1",
        &[&name],
    )?;
    tx.execute(
        "DELETE FROM ibench_group_barrier WHERE group_name = $1",
        &[&name],
    )?;
    tx.execute(
        "UPDATE ibench_group SET status = 'joining', error = NULL, failed_step = NULL, \
         attempt = $2, first_step = $3 WHERE name = $1",
        &[&name, &attempt, &(first_step as i64)],
    )?;
    Ok((attempt as usize, first_step))
}

/// A host of the group whose store connection is still open, named.
fn connected_host(tx: &mut Transaction, name: &str) -> Result<Option<String>> {
    let row = tx.query_opt(
        "SELECT idx, hostname, pid FROM ibench_group_host WHERE group_name = $1 \
         AND backend_pid IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL) \
         ORDER BY idx LIMIT 1",
        &[&name],
    )?;
    Ok(row.map(|r| {
        let (idx, hostname, pid): (i64, String, i64) = (r.get(0), r.get(1), r.get(2));
        format!("host {idx} ({hostname}, pid {pid})")
    }))
}

/// The steps from the attempt's first that every host finished (passed their end together):
/// for a group whose hosts all vanished without recording a failure.
fn completed_steps(tx: &mut Transaction, name: &str, group: &GroupRow) -> Result<usize> {
    let done: Vec<i64> = tx
        .query(
            "SELECT seq FROM ibench_group_barrier WHERE group_name = $1 \
             GROUP BY seq HAVING count(*) >= $2",
            &[&name, &group.hosts],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut step = group.first_step as usize;
    while done.contains(&Point::Done(step).seq()) {
        step += 1;
    }
    Ok(step)
}

/// Takes the lowest index no host of the group holds.
fn take_index(tx: &mut Transaction, req: &JoinRequest) -> Result<usize> {
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
    Ok(index as usize)
}

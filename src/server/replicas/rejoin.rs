//! Starting a node of a managed cluster again after it died during a run
//! (`--on-node-failure continue`): its server, as it was started (same account, allocator,
//! cgroup, configuration and data directory). A Galera node rejoins the cluster through the
//! other nodes (incremental state transfer from a donor's write-set cache, else a full one)
//! and is waited for until `Synced`. A PostgreSQL replica reconnects to its replication slot
//! on the primary (which kept the WAL it missed), a MariaDB replica to the primary's binlog
//! from its own GTID position (`MASTER_USE_GTID = slave_pos`, kept in its data directory);
//! each is waited for until it accepts connections, then until it has replayed up to the
//! primary's position as it was when the replica was started again (at most
//! [`CATCH_UP_WAIT_S`]). The server started so is kept here until its [`ManagedServer`]
//! takes it over to stop it.
//!
//! [`ManagedServer`]: crate::server::ManagedServer

use std::path::PathBuf;
use std::process::Child;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mysql::prelude::Queryable;

use super::galera::status::{port_taken, wait_synced_at};
use crate::error::Interrupted;
use crate::metrics::proc::running;
use crate::request::ServerSpec;
use crate::server::StartContext;
use crate::server::mariadb::node::root_opts;
use crate::server::process::{self, free_port};

/// How long a replica started again is waited for to catch up with the primary, seconds;
/// one that has not by then is recorded as not caught up (it runs, and is read from).
pub const CATCH_UP_WAIT_S: u64 = 120;

/// What PostgreSQL says when a segment of shared memory of a server of the same data
/// directory is still attached (processes of the dead server that have not exited yet).
const SHMEM_IN_USE: &str = "pre-existing shared memory block";

/// What node a [`Rejoin`] starts, and what it waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A Galera node (n2 ..): waited for until `Synced`.
    Galera,
    /// A PostgreSQL streaming replica of the primary on this port.
    PostgresReplica { primary_port: u16 },
    /// A MariaDB binlog replica of the primary on this port.
    MariadbReplica { primary_port: u16 },
}

/// What starting a node again took.
#[derive(Clone, Debug, PartialEq)]
pub struct Restarted {
    /// The new server's pid.
    pub pid: u32,
    /// A Galera node: seconds until it was `Synced`.
    pub synced_s: Option<f64>,
    /// A replica: seconds until it accepted connections.
    pub started_s: Option<f64>,
    /// A replica: seconds from then until it had caught up (`None`: not within
    /// [`CATCH_UP_WAIT_S`]).
    pub caught_up_s: Option<f64>,
}

/// How to start a cluster's node again after it died (see the module's doc).
pub struct Rejoin {
    name: String,
    kind: NodeKind,
    spec: ServerSpec,
    params: crate::dbms::Params,
    dir: PathBuf,
    log: PathBuf,
    port: u16,
    account: Option<nix::unistd::User>,
    binaries: crate::server::binaries::Binaries,
    password: String,
    preload: Option<PathBuf>,
    connections: usize,
    cgroup_procs: Vec<std::os::fd::RawFd>,
    child: Mutex<Option<Child>>,
}

impl Rejoin {
    /// The recipe of the node `name` (a `kind`) started in `ctx`.
    pub fn of(ctx: &StartContext<'_>, name: &str, kind: NodeKind) -> Rejoin {
        Rejoin {
            name: name.to_string(),
            kind,
            spec: ctx.spec.clone(),
            params: ctx.params.clone(),
            dir: ctx.dir.to_path_buf(),
            log: ctx.log.to_path_buf(),
            port: ctx.port,
            account: ctx.account.cloned(),
            binaries: ctx.binaries.clone(),
            password: ctx.password.to_string(),
            preload: ctx.preload.clone(),
            connections: ctx.connections,
            cgroup_procs: ctx.cgroup_procs.clone(),
            child: Mutex::new(None),
        }
    }

    /// Starts the node's server again and waits for it (see the module's doc). A server that
    /// does not start, sync or accept connections within the start timeout is stopped.
    pub fn start(&self) -> Result<Restarted> {
        let begin = Instant::now();
        // A replica is waited for until it has replayed up to the primary's position now.
        let target = match self.kind {
            NodeKind::Galera => None,
            NodeKind::PostgresReplica { primary_port } => Some(self.pg_lsn(primary_port)?),
            NodeKind::MariadbReplica { primary_port } => Some(
                self.mysql_conn(primary_port, 5)?
                    .query_first::<String, _>("SELECT @@GLOBAL.gtid_binlog_pos")?
                    .unwrap_or_default(),
            ),
        };
        let log_at = self.log_len();
        let waited = self
            .spawn()
            .and_then(|pid| self.wait(pid, begin, log_at, target.as_deref()));
        match waited {
            Ok(r) => Ok(r),
            Err(e) => {
                if let Some(mut c) = self.take_child() {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                Err(e)
            }
        }
    }

    /// Spawns the node's server as it was started; its pid.
    fn spawn(&self) -> Result<u32> {
        let ctx = StartContext {
            spec: &self.spec,
            params: &self.params,
            dir: &self.dir,
            log: &self.log,
            port: self.port,
            account: self.account.as_ref(),
            binaries: &self.binaries,
            password: &self.password,
            preload: self.preload.clone(),
            connections: self.connections,
            restored: false,
            cgroup_procs: self.cgroup_procs.clone(),
        };
        let mut cmd = process::server_command(&self.binaries.server, &ctx)?;
        match self.kind {
            NodeKind::PostgresReplica { .. } => {
                self.clear_stale_lock()?;
                cmd.env_remove("PGPASSWORD")
                    .env_remove("PGPASSFILE")
                    .arg("-D")
                    .arg(self.dir.join("data"));
            }
            NodeKind::Galera | NodeKind::MariadbReplica { .. } => {
                cmd.arg(format!(
                    "--defaults-file={}",
                    self.dir.join("my.cnf").display()
                ));
            }
        }
        if self.kind == NodeKind::Galera {
            cmd.args(self.galera_ports()?);
        }
        if matches!(self.kind, NodeKind::MariadbReplica { .. }) {
            // Its init file (root's password) was read at its first start and is gone.
            cmd.arg("--init-file=");
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {} again", self.name))?;
        let pid = child.id();
        *self.child.lock().unwrap_or_else(|e| e.into_inner()) = Some(child);
        Ok(pid)
    }

    /// Waits for the node (`pid`) started at `begin`, its log `log_at` bytes long before,
    /// until it accepts connections, then until it is synced (Galera) or has replayed up to
    /// `target` (a replica). A PostgreSQL replica that exits at once because processes of
    /// its dead server still hold its shared memory (they exit once they notice their
    /// postmaster is gone) is started again until the start timeout; a Galera node that
    /// exits because one of its ports was taken meanwhile, once more on new ports.
    fn wait(
        &self,
        mut pid: u32,
        begin: Instant,
        mut log_at: usize,
        target: Option<&str>,
    ) -> Result<Restarted> {
        let timeout = self.spec.start_timeout_s;
        let deadline = begin + Duration::from_secs(timeout);
        let mut retried = false;
        loop {
            let accepted = match self.kind {
                NodeKind::PostgresReplica { .. } => self
                    .pg_client(self.port)
                    .ok()
                    .map(|c| Node::Pg(Box::new(c))),
                _ => self.mysql_conn(self.port, 5).ok().map(Node::My),
            };
            if let Some(node) = accepted {
                return self.ready(pid, begin, node, target.unwrap_or_default());
            }
            let exited = self
                .child
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                let text = std::fs::read_to_string(&self.log).unwrap_or_default();
                let new = text.get(log_at.min(text.len())..).unwrap_or_default();
                let again = match self.kind {
                    NodeKind::PostgresReplica { .. } => new.contains(SHMEM_IN_USE),
                    NodeKind::Galera if !retried => {
                        let taken = port_taken(new);
                        if let Some(line) = &taken {
                            eprintln!(
                                "note: Galera node {} did not rejoin: one of its ports was \
                                 taken by another process ({line}); starting it once more on \
                                 new ports",
                                self.name
                            );
                            retried = true;
                        }
                        taken.is_some()
                    }
                    _ => false,
                };
                if again && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(500));
                    log_at = self.log_len();
                    pid = self.spawn()?;
                    continue;
                }
                let line = process::log_error_line(&self.log).unwrap_or_default();
                bail!("{} exited ({status}) when started again: {line}", self.name);
            }
            if crate::interrupt::requested() {
                return Err(Interrupted.into());
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} did not accept connections within {timeout} s of its start",
                    self.name
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The node (`pid`, started at `begin`) accepts connections (`node`): waits until it is
    /// synced (Galera) or has replayed up to `target` (a replica).
    fn ready(&self, pid: u32, begin: Instant, node: Node, target: &str) -> Result<Restarted> {
        let mut restarted = Restarted {
            pid,
            synced_s: None,
            started_s: None,
            caught_up_s: None,
        };
        if self.kind == NodeKind::Galera {
            drop(node);
            let left = Duration::from_secs(self.spec.start_timeout_s)
                .saturating_sub(begin.elapsed())
                .as_secs()
                .max(1);
            let pw = Some(self.password.as_str());
            wait_synced_at(self.port, pw, &self.name, None, left)?;
            restarted.synced_s = Some(begin.elapsed().as_secs_f64());
        } else {
            restarted.started_s = Some(begin.elapsed().as_secs_f64());
            restarted.caught_up_s = self.catch_up(node, target)?;
        }
        Ok(restarted)
    }

    /// A Galera node's group communication and state transfer ports, taken now (its old ones
    /// may have been taken since it died): options after its my.cnf's, which they override.
    /// Its SQL port stays: clients, the run's watch and its results know the node by it.
    fn galera_ports(&self) -> Result<Vec<String>> {
        let (gcomm, ist, sst) = (free_port()?, free_port()?, free_port()?);
        let provider = self
            .spec
            .options
            .iter()
            .rev()
            .find(|(k, _)| k == "wsrep_provider_options")
            .map(|(_, v)| v.trim_matches('"').to_string())
            .unwrap_or_default();
        let mut parts = vec![
            format!("gmcast.listen_addr=tcp://127.0.0.1:{gcomm}"),
            format!("ist.recv_addr=127.0.0.1:{ist}"),
        ];
        parts.extend(
            provider
                .split(';')
                .filter(|p| {
                    !p.is_empty()
                        && !p.starts_with("gmcast.listen_addr=")
                        && !p.starts_with("ist.recv_addr=")
                })
                .map(str::to_string),
        );
        Ok(vec![
            format!("--wsrep_node_address=127.0.0.1:{gcomm}"),
            format!("--wsrep_provider_options={}", parts.join(";")),
            format!("--wsrep_sst_receive_address=127.0.0.1:{sst}"),
        ])
    }

    /// The server log's length now.
    fn log_len(&self) -> usize {
        std::fs::metadata(&self.log).map_or(0, |m| m.len() as usize)
    }

    /// A PostgreSQL replica's `postmaster.pid` left by its dead server: removed, as the new
    /// server would take the dead one (a zombie until ibench reaps it at the run's end) for a
    /// server still running.
    fn clear_stale_lock(&self) -> Result<()> {
        let path = self.dir.join("data").join("postmaster.pid");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(());
        };
        let pid = text
            .lines()
            .next()
            .and_then(|l| l.trim().parse::<u32>().ok());
        if pid.is_some_and(|p| !running(p)) {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove {}", path.display()))?;
        }
        Ok(())
    }

    /// Seconds from now until the replica reached through `node` has replayed up to
    /// `target` (`None`: not within [`CATCH_UP_WAIT_S`]).
    fn catch_up(&self, mut node: Node, target: &str) -> Result<Option<f64>> {
        let start = Instant::now();
        let bound = Duration::from_secs(CATCH_UP_WAIT_S);
        while start.elapsed() < bound {
            let done = match &mut node {
                Node::Pg(c) => c
                    .query_one(
                        "SELECT coalesce(pg_last_wal_replay_lsn() >= $1::text::pg_lsn, false)",
                        &[&target],
                    )
                    .map(|r| r.get::<_, bool>(0))
                    .unwrap_or(false),
                // 0 once the replica has applied the position; -1 after a second without.
                Node::My(c) => {
                    c.exec_first::<i64, _, _>("SELECT MASTER_GTID_WAIT(?, 1)", (target,))
                        .ok()
                        .flatten()
                        == Some(0)
                }
            };
            if done {
                return Ok(Some(start.elapsed().as_secs_f64()));
            }
            if crate::interrupt::requested() {
                return Err(Interrupted.into());
            }
            if matches!(node, Node::Pg(_)) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(None)
    }

    /// The PostgreSQL primary's WAL position now, as text.
    fn pg_lsn(&self, primary_port: u16) -> Result<String> {
        let mut c = self
            .pg_client(primary_port)
            .context("cannot reach the primary")?;
        Ok(c.query_one("SELECT pg_current_wal_lsn()::text", &[])?
            .get(0))
    }

    /// A PostgreSQL connection to the node on `port` as the superuser.
    fn pg_client(&self, port: u16) -> Result<::postgres::Client> {
        Ok(::postgres::Config::new()
            .host("127.0.0.1")
            .port(port)
            .user("postgres")
            .password(&self.password)
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(2))
            .connect(::postgres::NoTls)?)
    }

    /// A MariaDB connection to the node on `port` as root (reads time out after `read_s`).
    fn mysql_conn(&self, port: u16, read_s: u64) -> Result<mysql::Conn> {
        let io = Some(Duration::from_secs(read_s));
        let password = Some(self.password.as_str());
        let opts: mysql::Opts = root_opts(port, password, Duration::from_secs(2), io).into();
        Ok(mysql::Conn::new(opts)?)
    }

    /// The server started again, if any (for its [`ManagedServer`] to stop).
    ///
    /// [`ManagedServer`]: crate::server::ManagedServer
    pub(crate) fn take_child(&self) -> Option<Child> {
        self.child.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// A connection to a replica started again.
enum Node {
    Pg(Box<::postgres::Client>),
    My(mysql::Conn),
}

/// What became of a node started again after it died: `; synced again in 3.2 s (pid 123)`
/// (a replica: started again, then caught up with the primary), or
/// why it stays down; empty when it was not started again.
pub fn rejoin_text(d: &crate::results::model::NodeDeath) -> String {
    match &d.rejoin {
        None => String::new(),
        Some(r) => match (r.synced_s.or(r.started_s), r.pid, &r.error) {
            (Some(s), Some(pid), _) if r.synced_s.is_some() => {
                format!("; synced again in {s:.1} s (pid {pid})")
            }
            (Some(s), Some(pid), _) => match r.caught_up_s {
                Some(c) => format!(
                    "; started again in {s:.1} s (pid {pid}), caught up with the primary {c:.1} s \
                     later"
                ),
                None => format!(
                    "; started again in {s:.1} s (pid {pid}), not caught up with the primary \
                     {} s later",
                    CATCH_UP_WAIT_S
                ),
            },
            (_, _, Some(e)) => format!("; could not rejoin, it stays down: {e}"),
            _ => "; could not rejoin, it stays down".to_string(),
        },
    }
}

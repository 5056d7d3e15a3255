//! A managed server for a run: started (its log beside the results) with a pooler in front
//! when asked, the run's target pointed at them, and stopped when the run ends (or left
//! running, with its credentials in a private file) with its directory removed unless the
//! run keeps its data.

use std::fs;
use std::path::PathBuf;

use anyhow::Result;

use super::RunOptions;
use crate::dbms::StatementMode;
use crate::request::{PoolerSpec, RunSpec, ServerSpec};
use crate::results::file::ResultsFile;
use crate::results::model::{ManagedServerInfo, PoolerInfo, ReplicaInfo, Resolved};
use crate::server::ManagedServer;
use crate::server::pooler::{self, RunningPooler};

/// A managed server (and its pooler) started for a run; [`Servers::stop`] ends them, and
/// dropping them without it stops them too (the server's own `Drop`).
pub struct Servers {
    server: ManagedServer,
    pooler: Option<RunningPooler>,
    /// Its directory: removed when the run ends unless kept.
    dir: PathBuf,
    /// What the results record of it.
    pub info: ManagedServerInfo,
    /// What restoring a dataset into its data directory did, if it started from one.
    pub restored: Option<crate::dataset::Restored>,
}

/// Starts the server `server_spec` of run `spec` (and its pooler) and points `resolved` at
/// them: the run's own connection at the server, the clients at the pooler (plain SQL when it
/// keeps no named prepared statements, said in one line).
pub fn start(
    spec: &RunSpec,
    server_spec: &ServerSpec,
    file: &ResultsFile,
    options: &RunOptions,
    resolved: &mut Resolved,
    dataset: Option<&crate::dataset::Dataset>,
    join: Option<&crate::server::cgroup::Join>,
) -> Result<Servers> {
    // The data directory goes under the data root when one is given (a file system under
    // study), else beside the results.
    let in_out = file.path().with_extension("server");
    let dir = match &server_spec.data_root {
        Some(root) => root.join(in_out.file_name().unwrap_or_default()),
        None => in_out,
    };
    let log = file.path().with_extension("server.log");
    let name = server_spec.kind.server_name();
    if !options.quiet {
        eprintln!("starting {name} in {}", dir.display());
    }
    let started = ManagedServer::start_in(
        server_spec,
        &spec.target.params,
        &dir,
        &log,
        spec.workload.connections(),
        dataset,
        join,
    );
    let mut server = match started {
        Ok(s) => s,
        Err(e) => {
            if !spec.keep_data {
                let _ = fs::remove_dir_all(&dir);
            }
            if e.is::<crate::error::Interrupted>() {
                return Err(e);
            }
            // Named only once written: a start refused before the server ran (a dataset of
            // another version, or changed since its save) has none.
            let what = match fs::symlink_metadata(&log) {
                Ok(_) => format!(
                    "{name} server failed to start (log kept at {})",
                    log.display()
                ),
                Err(_) => format!("{name} server failed to start"),
            };
            return Err(e.context(what));
        }
    };
    resolve_cluster(&server, server_spec, resolved, options.quiet);
    let pooler = match server_spec.pooler {
        None => None,
        Some(p) => match start_pooler(&server, &p, file, options, resolved) {
            Ok(running) => Some(running),
            Err(e) => {
                let _ = server.stop();
                if !spec.keep_data {
                    let _ = fs::remove_dir_all(&dir);
                }
                return Err(e.context("the connection pooler failed to start"));
            }
        },
    };
    let info = ManagedServerInfo {
        pid: server.pid(),
        binary: server.binary.display().to_string(),
        preload: server.preload.as_ref().map(|p| p.display().to_string()),
        log: log.display().to_string(),
        kept: server.keep(),
        account: Some(server.account.clone()),
        pooler: pooler.as_ref().map(|(_, info)| info.clone()),
        data_dir: Some(dir.join("data").display().to_string()),
        replicas: replica_infos(&server, server_spec),
        memory_estimate: None,
    };
    Ok(Servers {
        restored: server.restored.clone(),
        server,
        pooler: pooler.map(|(running, _)| running),
        dir,
        info,
    })
}

impl Servers {
    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// How to start each of the cluster's other nodes again after it died, in order.
    pub fn rejoins(&self) -> Vec<Option<std::sync::Arc<crate::server::replicas::rejoin::Rejoin>>> {
        self.server
            .replicas
            .iter()
            .map(|r| r.rejoin.clone())
            .collect()
    }

    /// Its data directory (the files its cost and size are read from).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Ends them: the pooler, then the server (or leaves the server running, saying how to
    /// reach and stop it); removes the directory unless the server is kept or `keep_data`.
    pub fn stop(mut self, keep_data: bool) -> Result<()> {
        // The pooler goes before the server it is in front of.
        drop(self.pooler.take());
        let stopped = if self.server.keep() {
            let (pid, credentials) = self.server.detach();
            eprintln!(
                "server left running: {} (pid {}), data in {}; stop it with kill {}\n{credentials}",
                self.server.url,
                pid.unwrap_or(0),
                self.dir.display(),
                pid.unwrap_or(0)
            );
            Ok(())
        } else {
            self.server.stop()
        };
        if !self.server.keep() && !keep_data {
            let _ = fs::remove_dir_all(&self.dir);
        }
        stopped
    }
}

/// Points `resolved` at `server` and its other nodes or replicas (and says where they listen
/// unless `quiet`).
fn resolve_cluster(
    server: &ManagedServer,
    server_spec: &ServerSpec,
    resolved: &mut Resolved,
    quiet: bool,
) {
    resolved.target.url = Some(server.url.clone());
    let others: Vec<_> = server.replicas.iter().map(|r| r.url.clone()).collect();
    if let Some(g) = server_spec.galera {
        resolved.target.node_urls = others;
        resolved.target.clients_on_all_nodes = g.clients_on_all;
    } else {
        resolved.target.replica_urls = others;
    }
    resolved.target.read_from_replicas = server_spec.replicas.is_some_and(|r| r.read_from_replicas);
    if !quiet && !server.replicas.is_empty() {
        let ports: Vec<String> = server
            .replicas
            .iter()
            .filter_map(|r| r.url.url().port().map(|p| p.to_string()))
            .collect();
        let what = if server_spec.galera.is_some() {
            "other Galera node(s)"
        } else {
            "replica(s)"
        };
        eprintln!(
            "{} {what} on 127.0.0.1, port(s) {}",
            ports.len(),
            ports.join(", ")
        );
    }
}

/// What the results record of `server`'s replicas.
fn replica_infos(server: &ManagedServer, spec: &ServerSpec) -> Vec<ReplicaInfo> {
    let sync = spec.replicas.map_or(0, |r| r.sync);
    server
        .replicas
        .iter()
        .enumerate()
        .map(|(i, r)| ReplicaInfo {
            // Galera's n1 is the server itself.
            name: match spec.galera {
                Some(_) => format!("n{}", i + 2),
                None => format!("r{}", i + 1),
            },
            port: r.url.url().port().unwrap_or_default(),
            pid: r.pid(),
            log: r.log.display().to_string(),
            sync: i < sync,
        })
        .collect()
}

/// Starts the pooler `p` in front of `server` and points the clients of `resolved` at it;
/// plain SQL when it cannot keep named prepared statements (said in one line).
fn start_pooler(
    server: &ManagedServer,
    p: &PoolerSpec,
    file: &ResultsFile,
    options: &RunOptions,
    resolved: &mut Resolved,
) -> Result<(RunningPooler, PoolerInfo)> {
    let log = file.path().with_extension("pooler.log");
    let running = pooler::start(server, p, &log)?;
    resolved.target.client_url = Some(running.url.clone());
    let statements = if running.plain_sql && resolved.statements == StatementMode::Prepared {
        resolved.statements = StatementMode::Plain;
        let why = format!(
            "plain SQL: PgBouncer {} in transaction mode keeps no named prepared statements \
             (1.21 and later do)",
            running.version
        );
        eprintln!("note: {why}");
        why
    } else if resolved.statements == StatementMode::Plain {
        "plain SQL (as asked)".to_string()
    } else {
        "prepared statements".to_string()
    };
    if !options.quiet {
        eprintln!(
            "pgbouncer {} on 127.0.0.1:{} ({} pooling, {} server connections)",
            running.version,
            running.port,
            p.pool_mode.name(),
            p.pool_size
        );
    }
    let info = PoolerInfo {
        kind: "pgbouncer".to_string(),
        version: running.version.clone(),
        pool_mode: p.pool_mode.name().to_string(),
        pool_size: p.pool_size,
        pid: running.pid(),
        statements,
    };
    Ok((running, info))
}

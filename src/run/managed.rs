//! A run on a managed server: start it (its log beside the results), point the target at it,
//! run, stop it (or leave it running, with its credentials in a private file), and remove its
//! directory unless asked to keep the data.

use std::fs;

use anyhow::Result;

use super::{RunOptions, run_with, watch};
use crate::dbms::StatementMode;
use crate::results::file::ResultsFile;
use crate::results::model::{ManagedServerInfo, PoolerInfo, RunResult};
use crate::server::ManagedServer;
use crate::server::pooler::{self, RunningPooler};
use crate::spec::{PoolerSpec, RunSpec, ServerSpec};

/// Starts the pooler `p` in front of `server` and points the clients of `spec` at it; plain
/// SQL when it cannot keep named prepared statements (said in one line).
fn start_pooler(
    spec: &mut RunSpec,
    server: &ManagedServer,
    p: &PoolerSpec,
    file: &ResultsFile,
    options: &RunOptions,
) -> Result<(RunningPooler, PoolerInfo)> {
    let log = file.path().with_extension("pooler.log");
    let running = pooler::start(server, p, &log)?;
    spec.target.client_url = Some(running.url.clone());
    let statements = if running.plain_sql && spec.statements == StatementMode::Prepared {
        spec.statements = StatementMode::Plain;
        let why = format!(
            "plain SQL: PgBouncer {} in transaction mode keeps no named prepared statements \
             (1.21 and later do)",
            running.version
        );
        eprintln!("note: {why}");
        why
    } else if spec.statements == StatementMode::Plain {
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

/// Starts the managed server, runs `spec` against it, stops it.
pub(super) fn run(
    mut spec: RunSpec,
    server_spec: &ServerSpec,
    file: &ResultsFile,
    options: &RunOptions,
) -> (Option<RunResult>, Result<()>) {
    // The data directory goes under the data root when one is given (a file system under
    // study), else beside the results.
    let dir = match &server_spec.data_root {
        Some(root) => root.join(
            file.path()
                .with_extension("server")
                .file_name()
                .unwrap_or_default(),
        ),
        None => file.path().with_extension("server"),
    };
    let log = file.path().with_extension("server.log");
    let name = server_spec.kind.server_name();
    if !options.quiet {
        eprintln!("starting {name} in {}", dir.display());
    }
    let mut server = match ManagedServer::start(
        server_spec,
        &spec.target.params,
        &dir,
        &log,
        spec.workload.connections(),
    ) {
        Ok(s) => s,
        Err(e) => {
            if !spec.keep_data {
                let _ = fs::remove_dir_all(&dir);
            }
            if e.is::<crate::error::Interrupted>() {
                return (None, Err(e));
            }
            let what = format!(
                "{name} server failed to start (log kept at {})",
                log.display()
            );
            return (None, Err(e.context(what)));
        }
    };
    spec.target.url = Some(server.url.clone());
    let pooler = match server_spec.pooler {
        None => None,
        Some(p) => match start_pooler(&mut spec, &server, &p, file, options) {
            Ok(running) => Some(running),
            Err(e) => {
                let _ = server.stop();
                if !spec.keep_data {
                    let _ = fs::remove_dir_all(&dir);
                }
                return (
                    None,
                    Err(e.context("the connection pooler failed to start")),
                );
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
    };
    let watch = watch::managed(server.pid(), name, dir.join("data"));
    let (run, result) = run_with(&spec, file, options, Some(info), watch);
    // The pooler goes before the server it is in front of.
    drop(pooler);
    let stopped = if server.keep() {
        let (pid, credentials) = server.detach();
        eprintln!(
            "server left running: {} (pid {}), data in {}; stop it with kill {}\n{credentials}",
            server.url,
            pid.unwrap_or(0),
            dir.display(),
            pid.unwrap_or(0)
        );
        Ok(())
    } else {
        server.stop()
    };
    if !server.keep() && !spec.keep_data {
        let _ = fs::remove_dir_all(&dir);
    }
    (run, result.and(stopped))
}

//! A run on a managed server: start it (its log beside the results), point the target at it,
//! run, stop it (or leave it running, with its credentials in a private file), and remove its
//! directory unless asked to keep the data.

use std::fs;

use anyhow::Result;

use super::{RunOptions, run_with, watch};
use crate::results::file::ResultsFile;
use crate::results::model::{ManagedServerInfo, RunResult};
use crate::server::ManagedServer;
use crate::spec::{RunSpec, ServerSpec};

/// Starts the managed server, runs `spec` against it, stops it.
pub(super) fn run(
    mut spec: RunSpec,
    server_spec: &ServerSpec,
    file: &ResultsFile,
    options: &RunOptions,
) -> (Option<RunResult>, Result<()>) {
    let dir = file.path().with_extension("server");
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
    let info = ManagedServerInfo {
        pid: server.pid(),
        binary: server.binary.display().to_string(),
        preload: server.preload.as_ref().map(|p| p.display().to_string()),
        log: log.display().to_string(),
        kept: server.keep(),
    };
    let watch = watch::managed(server.pid(), name, dir.join("data"));
    let (run, result) = run_with(&spec, file, options, Some(info), watch);
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

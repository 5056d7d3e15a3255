//! A throwaway PostgreSQL: `initdb` (as the `postgres` user when ibench runs as root, since
//! PostgreSQL refuses to run as root), settings appended to postgresql.conf, `postgres -D`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use nix::unistd::{Uid, User, chown};

use super::{ManagedServer, ServerKind, find_binary, push_user_config, run_setup, server_command};
use crate::error::UsageError;
use crate::spec::ServerSpec;

/// Debian's layout: /usr/lib/postgresql/<major>/bin, newest first.
fn debian_bin_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((major, e.path().join("bin")))
        })
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
    dirs.into_iter().map(|(_, d)| d).collect()
}

/// The user to run as: `postgres` when ibench is root, else ibench's own user.
fn run_as() -> Result<Option<User>, UsageError> {
    if !Uid::effective().is_root() {
        return Ok(None);
    }
    match User::from_name("postgres") {
        Ok(Some(u)) => Ok(Some(u)),
        _ => Err(UsageError::new(
            "PostgreSQL cannot run as root and there is no 'postgres' user; run ibench as another user or create one",
        )),
    }
}

fn as_user(cmd: &mut Command, user: &Option<User>) {
    if let Some(u) = user {
        cmd.uid(u.uid.as_raw()).gid(u.gid.as_raw());
    }
}

/// Starts PostgreSQL in `dir` on `port`.
pub fn start(
    spec: &ServerSpec,
    dir: &Path,
    port: u16,
    preload: Option<PathBuf>,
) -> Result<ManagedServer> {
    let candidates: Vec<PathBuf> = debian_bin_dirs();
    let initdb = find_binary(
        "initdb",
        spec.bin_dir.as_deref(),
        &candidates
            .iter()
            .map(|d| d.join("initdb"))
            .collect::<Vec<_>>(),
    )?;
    let postgres = find_binary(
        "postgres",
        spec.bin_dir.as_deref(),
        &candidates
            .iter()
            .map(|d| d.join("postgres"))
            .collect::<Vec<_>>(),
    )?;
    let user = run_as()?;
    let data = dir.join("data");
    let log = dir.join("server.log");
    if let Some(u) = &user {
        chown(dir, Some(u.uid), Some(u.gid))
            .with_context(|| format!("cannot chown {}", dir.display()))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755))?;
    }
    // The log is opened by ibench, but the postgres user must reach the directory.
    let mut init = Command::new(&initdb);
    init.arg("-D").arg(&data).args([
        "-U",
        "postgres",
        "--auth=trust",
        "--no-sync",
        "-E",
        "UTF8",
        "--locale=C",
    ]);
    as_user(&mut init, &user);
    run_setup(init, "initdb", &log).map_err(|e| {
        anyhow::anyhow!("{e:#}\n(hint: the user running PostgreSQL must be able to enter every parent directory of {})", dir.display())
    })?;

    let mut conf = format!(
        "\n# ibench managed server\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n"
    );
    push_user_config(&mut conf, spec, "");
    let conf_path = data.join("postgresql.conf");
    let mut existing = fs::read_to_string(&conf_path)?;
    existing.push_str(&conf);
    fs::write(&conf_path, existing)?;

    let mut cmd = server_command(&postgres, &log, preload.as_deref(), spec.keep)?;
    cmd.arg("-D").arg(&data);
    as_user(&mut cmd, &user);
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", postgres.display()))?;
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let mut server = ManagedServer {
        child: Some(child),
        url: url.clone(),
        dir: dir.to_path_buf(),
        log,
        binary: postgres,
        preload,
        kind: ServerKind::Postgres,
        keep: spec.keep,
    };
    let timeout = Duration::from_secs(spec.start_timeout_s);
    server.wait_ready(timeout, || {
        ::postgres::Client::connect(
            &format!("host=127.0.0.1 port={port} user=postgres dbname=postgres connect_timeout=2"),
            ::postgres::NoTls,
        )
        .is_ok()
    })?;
    Ok(server)
}

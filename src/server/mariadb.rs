//! A throwaway MariaDB: `mariadb-install-db` into a fresh data directory, a generated my.cnf
//! (`--defaults-file`, so no system config leaks in), `mariadbd` on a free port. MyRocks is
//! loaded at start with `--plugin-load-add=ha_rocksdb.so` (installing it at runtime with
//! INSTALL SONAME crashes MariaDB 10.11).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use mysql::prelude::Queryable;

use super::{ManagedServer, ServerKind, find_binary, push_user_config, run_setup, server_command};
use crate::dbms::mysql::Engine;
use crate::error::UsageError;
use crate::spec::ServerSpec;

/// Where Debian's mariadb-plugin-rocksdb puts the plugin.
const PLUGIN_DIRS: &[&str] = &[
    "/usr/lib/mysql/plugin",
    "/usr/lib/x86_64-linux-gnu/mariadb19/plugin",
];

fn check_rocksdb_plugin() -> Result<(), UsageError> {
    if PLUGIN_DIRS
        .iter()
        .any(|d| Path::new(d).join("ha_rocksdb.so").exists())
    {
        Ok(())
    } else {
        Err(UsageError::new(format!(
            "--engine rocksdb: ha_rocksdb.so not found in {}; install it (apt-get install mariadb-plugin-rocksdb)",
            PLUGIN_DIRS.join(", ")
        )))
    }
}

/// Starts MariaDB in `dir` on `port`, with database `ibench`.
pub fn start(
    spec: &ServerSpec,
    dir: &Path,
    port: u16,
    preload: Option<PathBuf>,
) -> Result<ManagedServer> {
    let mariadbd = find_binary(
        "mariadbd",
        spec.bin_dir.as_deref(),
        &[
            PathBuf::from("/usr/sbin/mariadbd"),
            PathBuf::from("/usr/sbin/mysqld"),
        ],
    )?;
    let install_db = find_binary(
        "mariadb-install-db",
        spec.bin_dir.as_deref(),
        &[
            PathBuf::from("/usr/bin/mariadb-install-db"),
            PathBuf::from("/usr/bin/mysql_install_db"),
        ],
    )?;
    if spec.engine == Engine::Rocksdb {
        check_rocksdb_plugin()?;
    }
    let data = dir.join("data");
    let log = dir.join("server.log");
    // Unix socket paths are limited to ~107 bytes; fall back to /tmp for deep directories.
    let mut socket = dir.join("mysqld.sock");
    if socket.as_os_str().len() > 100 {
        socket = PathBuf::from(format!("/tmp/ibench-mariadb-{port}.sock"));
    }
    let running_as_root = nix::unistd::Uid::effective().is_root();

    let mut cnf = format!(
        "[mysqld]\ndatadir = {}\nport = {port}\nbind-address = 127.0.0.1\nsocket = {}\npid-file = {}\nlog-error = {}\n",
        data.display(),
        socket.display(),
        dir.join("mysqld.pid").display(),
        log.display()
    );
    if running_as_root {
        cnf.push_str("user = root\n");
    }
    if spec.engine == Engine::Rocksdb {
        cnf.push_str("plugin-load-add = ha_rocksdb.so\n");
    }
    // A fragment may carry its own sections; the options after it belong to [mysqld].
    push_user_config(&mut cnf, spec, "[mysqld]\n");
    let cnf_path = dir.join("my.cnf");
    fs::write(&cnf_path, cnf)?;

    let mut init = Command::new(&install_db);
    init.arg(format!("--defaults-file={}", cnf_path.display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    if running_as_root {
        init.arg("--user=root");
    }
    run_setup(init, "mariadb-install-db", &log)?;

    let mut cmd = server_command(&mariadbd, &log, preload.as_deref(), spec.keep)?;
    cmd.arg(format!("--defaults-file={}", cnf_path.display()));
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", mariadbd.display()))?;
    let mut server = ManagedServer {
        child: Some(child),
        url: format!("mysql://root@127.0.0.1:{port}/ibench"),
        dir: dir.to_path_buf(),
        log,
        binary: mariadbd,
        preload,
        kind: ServerKind::Mariadb,
        keep: spec.keep,
    };
    let admin = format!("mysql://root@127.0.0.1:{port}/mysql");
    let timeout = Duration::from_secs(spec.start_timeout_s);
    server.wait_ready(timeout, || {
        mysql::Opts::from_url(&admin)
            .ok()
            .and_then(|o| mysql::Conn::new(o).ok())
            .is_some()
    })?;
    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&admin)?)?;
    conn.query_drop("CREATE DATABASE IF NOT EXISTS ibench")?;
    Ok(server)
}

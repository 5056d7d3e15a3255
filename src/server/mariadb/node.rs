//! One MariaDB server process ibench starts: its my.cnf, its data directory
//! (`mariadb-install-db`, or empty for a Galera joiner), `mariadbd` on its port, and root's
//! login over TCP ([`root_opts`]). The family (`server/mariadb.rs`), its binlog replicas and
//! its Galera nodes (`server/replicas/`) start their servers here; this file imports none of
//! them. The family's registry entry ([`MARIADB`]) is declared here for the servers it
//! makes, and its `ServerFamily` methods are written in `server/mariadb.rs`.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::dbms::mysql::{Engine, MysqlParams};
use crate::dbms::url::ServerUrl;
use crate::server::process::{self, push_user_config, run_setup, server_command, write_private_file};
use crate::server::{ManagedServer, StartContext, private_dir, socket_dir};
use crate::request::ReplicaSpec;

/// The registry's MariaDB server family.
pub static MARIADB: MariadbFamily = MariadbFamily;

/// MariaDB's mariadb-install-db + mariadbd (its `ServerFamily` methods: `server/mariadb.rs`).
pub struct MariadbFamily;

/// MariaDB's default `max_connections`.
const DEFAULT_MAX_CONNECTIONS: usize = 151;

/// Run before the server accepts connections: root gets the run's password, on the two hosts
/// a TCP connection from 127.0.0.1 can match; every other account that could log in goes.
const INIT_SQL: &str = "DELETE FROM mysql.global_priv WHERE User <> 'mariadb.sys' \
     AND NOT (User = 'root' AND Host IN ('localhost', '127.0.0.1'));\n\
     FLUSH PRIVILEGES;\n\
     ALTER USER 'root'@'localhost' IDENTIFIED BY '{pw}';\n\
     ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '{pw}';\n\
     CREATE DATABASE IF NOT EXISTS ibench;\n";

/// Unix socket paths are limited to ~107 bytes.
const MAX_SOCKET_PATH: usize = 100;

/// Names of the socket directories under /tmp for a deep --out (see [`socket_dir`]).
const SOCKET_DIR_PREFIX: &str = "ibench-mariadb-";

/// What a MariaDB server started by [`start_node`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::server) enum Node {
    /// A server of its own (or a Galera cluster's first node, or a binlog replica): installed
    /// afresh (unless restored), root's password set by an init file.
    Own,
    /// A Galera node joining a running cluster: its data directory comes by state transfer
    /// from the cluster (root's password with it), so nothing is installed or initialised.
    Joiner,
}

/// Writes the server's my.cnf, installs the data directory (not for a [`Node::Joiner`]) and
/// starts `mariadbd`; returns once it accepts root's connections.
pub(in crate::server) fn start_node(ctx: &StartContext<'_>, node: Node) -> Result<ManagedServer> {
    let data = ctx.dir.join("data");
    // Temporary tables and files in a private directory of this server's own, not the
    // shared /tmp: with six servers set up at once there, one's bootstrap found its
    // temporary table's file gone ("Could not remove temporary table
    // '/tmp/#sql-temptable-…'", then "Unknown table 'mysql.tmp_user_sys'") and
    // mariadb-install-db failed; none of twelve did with a directory each.
    let (files, tmp) = (private(ctx, "files")?, private(ctx, "tmp")?);
    let mut socket = ctx.dir.join("mysqld.sock");
    let mut socket_dir = None;
    // Those an ibench killed meanwhile left behind go first.
    socket_dir::sweep(SOCKET_DIR_PREFIX, ctx.account);
    if socket.as_os_str().len() > MAX_SOCKET_PATH {
        // A deep --out: a private directory of its own under /tmp.
        let d = socket_dir::create(SOCKET_DIR_PREFIX, ctx.port, ctx.account)?;
        socket = d.join("mysqld.sock");
        socket_dir = Some(d);
    }
    let init = ctx.dir.join("init.sql");
    let mut cnf = format!(
        "[mysqld]\ndatadir = {}\nport = {}\nbind-address = 127.0.0.1\nsocket = {}\n\
         pid-file = {}\nsecure-file-priv = {}\nlocal-infile = 0\ntmpdir = {}\n",
        data.display(),
        ctx.port,
        socket.display(),
        ctx.dir.join("mysqld.pid").display(),
        files.display(),
        tmp.display(),
    );
    if node == Node::Own {
        write_private_file(&init, &INIT_SQL.replace("{pw}", ctx.password), ctx.account)?;
        cnf.push_str(&format!("init-file = {}\n", init.display()));
    }
    if MysqlParams::of(ctx.params).engine == Engine::Rocksdb {
        cnf.push_str("plugin-load-add = ha_rocksdb.so\n");
        // Perf context counts (no timers) for select-min's perf context (docs/metrics.md).
        cnf.push_str("rocksdb_perf_context_level = 2\n");
    }
    if ctx.connections > DEFAULT_MAX_CONNECTIONS {
        // Room for the run's connections (the default is 151; a config may still say).
        cnf.push_str(&format!("max_connections = {}\n", ctx.connections));
    }
    if let Some(r) = &ctx.spec.replicas {
        cnf.push_str(&primary_settings(r));
    }
    // A fragment may carry its own sections; the options after it belong to [mysqld].
    push_user_config(&mut cnf, ctx, "[mysqld]\n");
    if ctx.spec.replicas.is_some() {
        cnf.push_str(PRIMARY_ID);
    }
    let cnf_path = ctx.dir.join("my.cnf");
    write_private_file(&cnf_path, &cnf, ctx.account)?;

    let mut install = process::command(&ctx.binaries.setup, ctx, false)?;
    install
        .arg(format!("--defaults-file={}", cnf_path.display()))
        .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
    match node {
        Node::Own if !ctx.restored => run_setup(install, "mariadb-install-db", ctx.log)?,
        Node::Own => {}
        Node::Joiner => {
            // Empty: the state transfer fills it.
            fs::create_dir_all(&data)?;
            private_dir(&data, ctx.account)?;
        }
    }

    let mut cmd = server_command(&ctx.binaries.server, ctx)?;
    cmd.arg(format!("--defaults-file={}", cnf_path.display()));
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", ctx.binaries.server.display()))?;
    let url = ServerUrl::parse(&format!("mysql://root@127.0.0.1:{}/ibench", ctx.port), "")?
        .with_password(ctx.password);
    let mut server = ManagedServer::spawned(&MARIADB, child, url, ctx);
    server.cleanup.extend(socket_dir);
    let opts = probe_opts(ctx);
    let ready = server.wait_ready(Duration::from_secs(ctx.spec.start_timeout_s), || {
        mysql::Conn::new(opts.clone()).is_ok()
    });
    // The server has read it (or failed); the password lives in memory only from here.
    let _ = fs::remove_file(&init);
    ready?;
    Ok(server)
}

/// How the start-up probe connects to the node of `ctx`: TCP, short timeouts (a Galera joiner
/// accepts connections during its state transfer and may never answer one accepted then: the
/// probe gives up on it and tries again).
fn probe_opts(ctx: &StartContext<'_>) -> mysql::Opts {
    let io = Some(Duration::from_secs(5));
    root_opts(ctx.port, Some(ctx.password), Duration::from_secs(2), io)
        .db_name(Some("ibench"))
        .into()
}

/// A root login to the MariaDB server ibench started on 127.0.0.1:`port`, over TCP (never a
/// socket): connecting gives up after `connect`, each read or write after `io` (`None`: waits).
pub(crate) fn root_opts(
    port: u16,
    password: Option<&str>,
    connect: Duration,
    io: Option<Duration>,
) -> mysql::OptsBuilder {
    mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("root"))
        .pass(password)
        .prefer_socket(false)
        .tcp_connect_timeout(Some(connect))
        .read_timeout(io)
        .write_timeout(io)
}

/// A directory `name` of the server's own, private to its account.
fn private(ctx: &StartContext<'_>, name: &str) -> Result<PathBuf> {
    let dir = ctx.dir.join(name);
    fs::create_dir_all(&dir)?;
    private_dir(&dir, ctx.account)?;
    Ok(dir)
}

/// The primary's own settings when it has replicas, before the user's config (which may
/// tune them); its `server_id` comes after the user's config (see [`PRIMARY_ID`]).
pub fn primary_settings(spec: &ReplicaSpec) -> String {
    let mut text = String::from(
        "\n# ibench: the primary of binlog replicas\nlog_bin = binlog\nbinlog_format = ROW\n",
    );
    if spec.sync > 0 {
        text.push_str("rpl_semi_sync_master_enabled = ON\n");
    }
    text
}

/// The primary's `server_id`, written after the user's config: replication needs each node's
/// to differ.
pub const PRIMARY_ID: &str = "\n# ibench: replication identity\nserver_id = 1\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semi_sync_only_when_asked() {
        let spec = |sync| ReplicaSpec {
            count: 2,
            sync,
            read_from_replicas: false,
        };
        assert!(!primary_settings(&spec(0)).contains("semi_sync"));
        assert!(primary_settings(&spec(1)).contains("rpl_semi_sync_master_enabled = ON"));
    }
}

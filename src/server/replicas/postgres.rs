//! Streaming replicas of a managed PostgreSQL (`--replicas N`): each one a `pg_basebackup` of
//! the running primary with a physical replication slot of its own (`r1` .. `rN`, also its
//! `application_name`), started on a free port of 127.0.0.1 in a private directory under the
//! primary's, as the same account, with the primary's pg_hba (password only: initdb's
//! `host replication all 127.0.0.1/32 scram-sha-256`). The replicas connect as the primary's
//! superuser through a password file only that account can read. They are stopped before the
//! primary (the primary's `ManagedServer::stop`), and go with its directory.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::rejoin::{NodeKind, Rejoin};
use crate::dbms::url::ServerUrl;
use crate::error::Interrupted;
use crate::request::ReplicaSpec;
use crate::server::process::{self, free_port, run_setup, server_command, write_private_file};
use crate::server::{ManagedServer, StartContext, private_dir};

/// `synchronous_standby_names` for the first `sync` replicas (`FIRST 1 (r1)`), if any.
pub fn synchronous_standby_names(spec: &ReplicaSpec) -> Option<String> {
    (spec.sync > 0).then(|| {
        let names = spec.names()[..spec.sync].join(", ");
        format!("FIRST {} ({names})", spec.sync)
    })
}

/// Starts the replicas `spec` asks for of `primary` (started with `ctx`), each streaming once
/// this returns; a replica that fails stops those started before it (their `Drop`).
pub fn start(
    primary: &ManagedServer,
    ctx: &StartContext<'_>,
    spec: &ReplicaSpec,
) -> Result<Vec<ManagedServer>> {
    let mut replicas = Vec::with_capacity(spec.count);
    for name in spec.names() {
        replicas.push(start_one(primary, ctx, &name)?);
    }
    wait_streaming(primary, &spec.names(), ctx.spec.start_timeout_s)?;
    Ok(replicas)
}

/// One replica: base backup, its settings, the server started and accepting connections.
fn start_one(primary: &ManagedServer, ctx: &StartContext<'_>, name: &str) -> Result<ManagedServer> {
    let primary_port = primary.url.url().port().context("primary without a port")?;
    let dir = ctx.dir.join(name);
    crate::safe_fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    private_dir(&dir, ctx.account)?;
    let data = dir.join("data");
    let log = ctx.log.with_extension(format!("{name}.log"));
    let port = free_port()?;
    // Replicas share the primary's cgroup: a memory cap or IO limit holds for the cluster.
    let rctx = ctx.node(ctx.spec, &dir, &log, port);
    // The password reaches pg_basebackup and the replica's WAL receiver in a file only the
    // server's account can read (never on a command line or in the environment).
    let pgpass = dir.join("pgpass");
    write_private_file(
        &pgpass,
        &format!("127.0.0.1:{primary_port}:*:postgres:{}\n", ctx.password),
        ctx.account,
    )?;
    let basebackup = ctx.binaries.server.with_file_name("pg_basebackup");
    let mut cmd = process::command(&basebackup, &rctx, false)?;
    cmd.env_remove("PGPASSWORD")
        .env("PGPASSFILE", &pgpass)
        .args(["-h", "127.0.0.1", "-p", &primary_port.to_string()])
        .args([
            "-U",
            "postgres",
            "-w",
            "-X",
            "stream",
            "-c",
            "fast",
            "--no-sync",
        ])
        .args(["-C", "-S", name])
        .arg("-D")
        .arg(&data);
    run_setup(cmd, &format!("pg_basebackup of replica {name}"), &log)?;
    configure(&data, &rctx, primary_port, name, &pgpass)?;
    let mut server_cmd = server_command(&ctx.binaries.server, &rctx)?;
    server_cmd
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .arg("-D")
        .arg(&data);
    let child = server_cmd
        .spawn()
        .with_context(|| format!("cannot start replica {name}"))?;
    let url = ServerUrl::parse(
        &format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        "",
    )?
    .with_password(ctx.password);
    let mut server = ManagedServer::spawned(primary.family, child, url, &rctx);
    let mut probe = ::postgres::Config::new();
    probe
        .host("127.0.0.1")
        .port(port)
        .user("postgres")
        .password(ctx.password)
        .dbname("postgres")
        .connect_timeout(Duration::from_secs(2));
    server
        .wait_ready(Duration::from_secs(ctx.spec.start_timeout_s), || {
            probe.connect(::postgres::NoTls).is_ok()
        })
        .with_context(|| format!("replica {name} (log {})", log.display()))?;
    let kind = NodeKind::PostgresReplica { primary_port };
    server.rejoin = Some(std::sync::Arc::new(Rejoin::of(&rctx, name, kind)));
    Ok(server)
}

/// The replica's own settings after the primary's (copied by the base backup; the last line
/// of a setting wins): its port, where it streams from (its slot, its name), feedback to the
/// primary so that vacuum there does not cancel the replica's queries; and `standby.signal`.
fn configure(
    data: &Path,
    ctx: &StartContext<'_>,
    primary_port: u16,
    name: &str,
    pgpass: &Path,
) -> Result<()> {
    use std::io::Write;
    let conf_path = data.join("postgresql.conf");
    let conninfo = format!(
        "host=127.0.0.1 port={primary_port} user=postgres application_name={name} passfile={}",
        pgpass.display()
    );
    let text = format!(
        "\n# ibench replica {name}\nport = {}\nprimary_conninfo = '{}'\n\
         primary_slot_name = '{name}'\nhot_standby = on\nhot_standby_feedback = on\n",
        ctx.port,
        conninfo.replace('\'', "''")
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&conf_path)
        .with_context(|| format!("cannot open {}", conf_path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", conf_path.display()))?;
    write_private_file(&data.join("standby.signal"), "", ctx.account)
}

/// Waits until the primary streams to every replica of `names` (pg_stat_replication).
fn wait_streaming(primary: &ManagedServer, names: &[String], timeout_s: u64) -> Result<()> {
    let mut config = primary_config(&primary.url)?;
    config.connect_timeout(Duration::from_secs(2));
    let mut client = config.connect(::postgres::NoTls)?;
    let deadline = Instant::now() + Duration::from_secs(timeout_s);
    loop {
        let rows = client.query(
            "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'",
            &[],
        )?;
        let streaming: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        let missing: Vec<&String> = names.iter().filter(|n| !streaming.contains(n)).collect();
        if missing.is_empty() {
            return Ok(());
        }
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        if Instant::now() >= deadline {
            bail!(
                "replica {} did not stream from the primary within {timeout_s} s",
                missing[0]
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A `postgres` client configuration for the server at `url` (with its password).
fn primary_config(url: &ServerUrl) -> Result<::postgres::Config> {
    let mut config: ::postgres::Config = url.without_password().parse()?;
    if let Some(pw) = url.password() {
        config.password(pw);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synchronous_names_list_the_first_k() {
        let spec = |count, sync| ReplicaSpec {
            count,
            sync,
            read_from_replicas: false,
        };
        assert_eq!(synchronous_standby_names(&spec(3, 0)), None);
        assert_eq!(
            synchronous_standby_names(&spec(3, 2)).as_deref(),
            Some("FIRST 2 (r1, r2)")
        );
    }
}

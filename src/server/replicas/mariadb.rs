//! Binlog replicas of a managed MariaDB (`--replicas N`): the primary writes a row-based
//! binary log with GTIDs (`server_id = 1`, `log_bin`, `binlog_format = ROW`: written by
//! `server/mariadb/node.rs`, `primary_settings` and `PRIMARY_ID`); each replica is
//! a fresh MariaDB set up exactly as the primary was (same install, same init: the `ibench`
//! database, root's password only), then told to replicate from the primary's GTID position
//! at that moment (`gtid_slave_pos`, `CHANGE MASTER TO ... MASTER_USE_GTID = slave_pos`), so
//! every statement of the run that follows reaches it. Replicas are `read_only` (ibench's root
//! still reads there) with `server_id` 2 .. N+1. The replica reaches the primary as root over
//! TCP 127.0.0.1 with its password, which MariaDB keeps in the replica's private data
//! directory (`master.info`); it is never on a command line or in a log.
//!
//! `--sync-replicas 1`: MariaDB's semi-synchronous replication (built in since 10.3): the
//! primary's commits wait until one replica has acknowledged receiving them
//! (`rpl_semi_sync_master_enabled`; `rpl_semi_sync_slave_enabled` on r1); after
//! `rpl_semi_sync_master_timeout` (10 s by default) without an acknowledgement MariaDB falls
//! back to asynchronous replication.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts};

use super::rejoin::{NodeKind, Rejoin};
use crate::error::Interrupted;
use crate::request::{ReplicaSpec, ServerSpec};
use crate::server::mariadb::node::{Node, root_opts, start_node};
use crate::server::process::free_port;
use crate::server::{ManagedServer, StartContext, private_dir};

/// Starts the replicas `spec` asks for of `primary` (started with `ctx`), each replicating
/// once this returns; a replica that fails stops those started before it (their `Drop`).
pub fn start(
    primary: &ManagedServer,
    ctx: &StartContext<'_>,
    spec: &ReplicaSpec,
) -> Result<Vec<ManagedServer>> {
    if ctx.restored {
        bail!(
            "MariaDB replicas start empty beside an empty primary: --replicas with a restored \
             dataset is not supported for mariadb"
        );
    }
    let mut replicas = Vec::with_capacity(spec.count);
    for (i, name) in spec.names().iter().enumerate() {
        replicas.push(start_one(primary, ctx, name, i + 2, i < spec.sync)?);
    }
    let deadline = Instant::now() + Duration::from_secs(ctx.spec.start_timeout_s);
    for (replica, name) in replicas.iter().zip(spec.names()) {
        wait_replicating(replica, &name, deadline, ctx.spec.start_timeout_s)?;
    }
    Ok(replicas)
}

/// One replica: a fresh server of its own (`server_id` `id`), replicating from the primary's
/// GTID position now.
fn start_one(
    primary: &ManagedServer,
    ctx: &StartContext<'_>,
    name: &str,
    id: usize,
    sync: bool,
) -> Result<ManagedServer> {
    let primary_port = primary.url.url().port().context("primary without a port")?;
    let dir = ctx.dir.join(name);
    crate::safe_fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    private_dir(&dir, ctx.account)?;
    let log = ctx.log.with_extension(format!("{name}.log"));
    // The user's settings as on the primary, then the replica's identity (last: it wins).
    let mut options = ctx.spec.options.clone();
    options.push(("server_id".into(), id.to_string()));
    options.push(("read_only".into(), "ON".into()));
    if sync {
        options.push(("rpl_semi_sync_slave_enabled".into(), "ON".into()));
    }
    let spec = ServerSpec {
        options,
        replicas: None,
        galera: None,
        ..ctx.spec.clone()
    };
    // Replicas share the primary's cgroup: a memory cap or IO limit holds for the cluster.
    let rctx = ctx.node(&spec, &dir, &log, free_port()?);
    // A server of its own, as the family starts one without a Galera cluster.
    let mut replica = start_node(&rctx, Node::Own)
        .with_context(|| format!("replica {name} (log {})", log.display()))?;
    let kind = NodeKind::MariadbReplica { primary_port };
    replica.rejoin = Some(std::sync::Arc::new(Rejoin::of(&rctx, name, kind)));
    let position: String = connect(primary)?
        .query_first("SELECT @@GLOBAL.gtid_binlog_pos")?
        .unwrap_or_default();
    let mut conn = connect(&replica)?;
    conn.query_drop(format!(
        "SET GLOBAL gtid_slave_pos = '{}'",
        gtid_literal(&position)?
    ))?;
    // The password is letters and digits only (random_password); CHANGE MASTER takes no
    // placeholders.
    let password = ctx.password;
    if !password.chars().all(|c| c.is_ascii_alphanumeric()) {
        bail!("the server's password is not plain letters and digits");
    }
    conn.query_drop(format!(
        "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {primary_port}, \
         MASTER_USER = 'root', MASTER_PASSWORD = '{password}', MASTER_USE_GTID = slave_pos, \
         MASTER_CONNECT_RETRY = 1"
    ))
    .with_context(|| format!("CHANGE MASTER on replica {name}"))?;
    conn.query_drop("START SLAVE")
        .with_context(|| format!("START SLAVE on replica {name}"))?;
    Ok(replica)
}

/// A GTID position as MariaDB prints it (`0-1-12,1-2-3`): digits, dashes and commas only.
fn gtid_literal(position: &str) -> Result<&str> {
    if position
        .chars()
        .all(|c| c.is_ascii_digit() || c == '-' || c == ',')
    {
        Ok(position)
    } else {
        bail!("unexpected GTID position {position:?}")
    }
}

/// A connection to `server` as root.
fn connect(server: &ManagedServer) -> Result<Conn> {
    let url = &server.url;
    let port = url.url().port().context("server without a port")?;
    let connect = Duration::from_secs(2);
    let opts: Opts = root_opts(port, url.password(), connect, None).into();
    Conn::new(opts).with_context(|| format!("cannot connect to {}", url.redacted()))
}

/// Waits until `replica`'s IO and SQL threads both run (SHOW SLAVE STATUS); its last error
/// when one stopped.
fn wait_replicating(
    replica: &ManagedServer,
    name: &str,
    deadline: Instant,
    timeout_s: u64,
) -> Result<()> {
    let mut conn = connect(replica)?;
    loop {
        let row: Option<mysql::Row> = conn.query_first("SHOW SLAVE STATUS")?;
        let Some(row) = row else {
            bail!("replica {name} has no replication configured");
        };
        let text = |column: &str| -> String {
            row.get_opt::<Option<String>, _>(column)
                .and_then(|v| v.ok())
                .flatten()
                .unwrap_or_default()
        };
        let (io, sql) = (text("Slave_IO_Running"), text("Slave_SQL_Running"));
        if io == "Yes" && sql == "Yes" {
            return Ok(());
        }
        for (thread, error) in [("IO", "Last_IO_Error"), ("SQL", "Last_SQL_Error")] {
            let e = text(error);
            if !e.is_empty() {
                bail!("replica {name}: its {thread} thread stopped: {e}");
            }
        }
        if crate::interrupt::requested() {
            return Err(Interrupted.into());
        }
        if Instant::now() >= deadline {
            bail!("replica {name} did not replicate from the primary within {timeout_s} s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtid_positions_are_checked_before_use() {
        assert_eq!(gtid_literal("0-1-12,1-2-3").unwrap(), "0-1-12,1-2-3");
        assert_eq!(gtid_literal("").unwrap(), "");
        assert!(gtid_literal("0-1-1'; DROP").is_err());
    }
}

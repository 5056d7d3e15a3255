//! A MariaDB Galera cluster on this host (`--server mariadb --galera N`): Debian's galera-4
//! provider, n1 installed and initialised as a lone managed MariaDB is (root's password only,
//! the `ibench` database) and bootstrapping the cluster (`gcomm://`), then n2 .. nN joining it
//! one at a time with an empty data directory that the state transfer fills (`rsync`, from a
//! donor). Every node listens on 127.0.0.1 only: its SQL port, its group communication port
//! (`gmcast.listen_addr`), its incremental state transfer port (`ist.recv_addr`) and its state
//! transfer port (`wsrep_sst_receive_address`), each a free port; the group communication is
//! TLS with a certificate made for this cluster (in n1's private directory), so no process
//! without it can join. Each joiner is a [`ManagedServer`] in n1's `replicas` (stopped before
//! n1, gone with its directory).
//!
//! Settings written before the user's config (which may change them): `binlog_format = ROW`,
//! `innodb_autoinc_lock_mode = 2` (Galera's requirements); `wsrep_auto_increment_control =
//! OFF`, so that auto-increment ids are dense as on a lone server (Galera's default spaces
//! each node's ids by the cluster size, and the Insert Benchmark's point queries and deletes
//! walk a table's ids one by one); `wsrep_sync_wait = 1` when clients connect to every node
//! (a read waits until its node has applied what the cluster committed before it: the Insert
//! Benchmark's queue checks read rows that another node wrote). With a table per client (the
//! default) only one connection inserts into a table, so dense ids never collide; clients
//! sharing a table on different nodes would take the same ids (a certification conflict, or
//! a duplicate key error when the other node's row was applied first), so that is refused
//! (`replicas::galera_workload`).
//! After it, the node's identity (provider, cluster, node name and addresses).

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::rejoin::{NodeKind, Rejoin};
use crate::request::{GaleraSpec, ServerSpec};
use crate::server::mariadb::node::{Node, start_node};
use crate::server::process::{self, free_port, run_setup};
use crate::server::{ManagedServer, StartContext, private_dir};
use status::{port_taken, wait_synced_at};

pub(super) mod status;

/// Debian's galera-4 provider.
pub const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// What installs a Galera cluster's needs on Debian: the provider and rsync (state
/// transfer).
pub const PACKAGES: &str = "galera-4 rsync";

/// The Galera provider, when installed.
pub fn provider() -> Option<&'static Path> {
    Some(Path::new(PROVIDER)).filter(|p| crate::hide::exists(p))
}

/// A node's ports: SQL, group communication, incremental and full state transfer.
struct Ports {
    sql: u16,
    gcomm: u16,
    ist: u16,
    sst: u16,
}

impl Ports {
    /// `sql` and `gcomm` with new state transfer ports.
    fn free(sql: u16, gcomm: u16) -> Result<Ports> {
        Ok(Ports {
            sql,
            gcomm,
            ist: free_port()?,
            sst: free_port()?,
        })
    }
}

/// Starts the cluster `galera` asks for; returns n1 with the other nodes as its `replicas`,
/// once every node is synced. A node that fails stops those started before it.
///
/// Each node's own ports (SQL, incremental and full state transfer) are taken just before
/// it starts, and only its group communication port at the cluster's start (the joiners
/// list every member's): a port is checked free when taken and bound only when the node (or,
/// for the state transfer, the joiner's rsync daemon) listens, and another process may bind
/// it meanwhile. A joiner that fails to start because a port was taken (its log says so) is
/// started once more on new ports ([`join`]).
pub fn start(ctx: &StartContext<'_>, galera: &GaleraSpec) -> Result<ManagedServer> {
    if provider().is_none() {
        bail!("--galera needs the Galera provider {PROVIDER}: apt-get install {PACKAGES}");
    }
    if ctx.restored {
        bail!("--galera with a restored dataset is not supported");
    }
    let mut ports = vec![Ports::free(ctx.port, free_port()?)?];
    for _ in 1..galera.nodes {
        // The SQL and state transfer ports are taken again when the node starts.
        ports.push(Ports::free(0, free_port()?)?);
    }
    let tls = make_certificate(ctx)?;
    let cluster = format!("ibench-{}", ctx.port);
    let specs = NodeSpecs {
        ctx,
        galera,
        tls,
        cluster,
    };
    let spec = specs.of(&ports, 0);
    let mut first = start_node(&ctx.node(&spec, ctx.dir, ctx.log, ctx.port), Node::Own)?;
    wait_synced(&first, "n1", 1, ctx.spec.start_timeout_s)?;
    for i in 1..galera.nodes {
        ports[i] = Ports::free(free_port()?, ports[i].gcomm)?;
        let node = join(&specs, &mut ports, i)?;
        first.replicas.push(node);
    }
    Ok(first)
}

/// What every node's configuration is made of.
struct NodeSpecs<'a> {
    ctx: &'a StartContext<'a>,
    galera: &'a GaleraSpec,
    /// The provider options of the cluster's TLS.
    tls: String,
    cluster: String,
}

impl NodeSpecs<'_> {
    /// The server spec of node `i` (n1 is 0) with the cluster's `ports`.
    fn of(&self, ports: &[Ports], i: usize) -> ServerSpec {
        let p = &ports[i];
        // n1 bootstraps (an empty address list); the others join every member.
        let address = if i == 0 {
            "gcomm://".to_string()
        } else {
            let members: Vec<String> = ports
                .iter()
                .map(|p| format!("127.0.0.1:{}", p.gcomm))
                .collect();
            format!("gcomm://{}", members.join(","))
        };
        let mut options: Vec<(String, String)> = vec![
            ("binlog_format".into(), "ROW".into()),
            ("innodb_autoinc_lock_mode".into(), "2".into()),
            // Dense ids, as on a lone server (see the module's doc).
            ("wsrep_auto_increment_control".into(), "OFF".into()),
        ];
        if self.galera.clients_on_all {
            options.push(("wsrep_sync_wait".into(), "1".into()));
        }
        options.extend(self.ctx.spec.options.iter().cloned());
        let provider_options = format!(
            "\"gmcast.listen_addr=tcp://127.0.0.1:{};ist.recv_addr=127.0.0.1:{};{}\"",
            p.gcomm, p.ist, self.tls
        );
        for (k, v) in [
            ("wsrep_on", "ON".to_string()),
            ("wsrep_provider", PROVIDER.to_string()),
            ("wsrep_cluster_name", self.cluster.clone()),
            ("wsrep_cluster_address", address),
            ("wsrep_node_name", format!("n{}", i + 1)),
            ("wsrep_node_address", format!("127.0.0.1:{}", p.gcomm)),
            ("wsrep_provider_options", provider_options),
            ("wsrep_sst_method", "rsync".to_string()),
            ("wsrep_sst_receive_address", format!("127.0.0.1:{}", p.sst)),
        ] {
            options.push((k.to_string(), v));
        }
        ServerSpec {
            options,
            galera: None,
            replicas: None,
            ..self.ctx.spec.clone()
        }
    }
}

/// What a joiner's log says when the donor reported that the state transfer failed (the
/// joiner's own part was ready: its rsync daemon listened): the donor's log has the cause.
const SST_FAILED: &str = "Will never receive state";

/// What a donor's log says when its part of a state transfer failed.
const DONOR_FAILED: &[&str] = &["WSREP_SST: [ERROR]", "State transfer to "];

/// Starts joiner `i` (n2 is 1) on `ports[i]` and waits until it is synced with the cluster.
/// When it fails because a port was taken ([`PORT_TAKEN`](status::PORT_TAKEN) in its log) or the donor's part
/// of the state transfer failed ([`SST_FAILED`]: the copy of a small, idle node's data
/// directory on this host, nothing a setting changes), says why on stderr (with the donor's
/// error line) and starts it once more on new ports, from an empty data directory,
/// appending to the same log; a second failure fails the start.
fn join(specs: &NodeSpecs<'_>, ports: &mut [Ports], i: usize) -> Result<ManagedServer> {
    let ctx = specs.ctx;
    let name = format!("n{}", i + 1);
    let dir = ctx.dir.join(&name);
    crate::safe_fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    private_dir(&dir, ctx.account)?;
    let log = ctx.log.with_extension(format!("{name}.log"));
    let first = start_joiner(specs, ports, i, &dir, &log);
    let Err(e) = first else { return first };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let cause = match (port_taken(&text), text.contains(SST_FAILED)) {
        (Some(line), _) => format!("one of its ports was taken by another process ({line})"),
        (None, true) => {
            // The donors' logs: n1's, then the joiners' before this one.
            let donors = std::iter::once(ctx.log.to_path_buf())
                .chain((2..=i).map(|n| ctx.log.with_extension(format!("n{n}.log"))));
            let line = donors
                .filter_map(|l| donor_failure(&std::fs::read_to_string(l).ok()?))
                .next_back()
                .unwrap_or_else(|| "no donor error line".to_string());
            format!("the donor's state transfer failed ({line})")
        }
        (None, false) => return Err(e),
    };
    eprintln!("note: Galera node {name} did not join: {cause}; starting it once more on new ports");
    let data = dir.join("data");
    if data.exists() {
        std::fs::remove_dir_all(&data)
            .with_context(|| format!("cannot empty {} to start {name} again", data.display()))?;
    }
    ports[i] = Ports::free(free_port()?, free_port()?)?;
    start_joiner(specs, ports, i, &dir, &log)
        .with_context(|| format!("Galera node {name}, started again on new ports after: {cause}"))
}

/// The last line of a donor's `log` saying its part of a state transfer failed.
fn donor_failure(log: &str) -> Option<String> {
    log.lines()
        .rev()
        .find(|l| {
            l.contains(DONOR_FAILED[0]) || (l.contains(DONOR_FAILED[1]) && l.contains("failed"))
        })
        .map(|l| l.trim().to_string())
}

/// Starts joiner `i` in `dir` with `log` and waits until it is synced (a node that does not
/// is stopped).
fn start_joiner(
    specs: &NodeSpecs<'_>,
    ports: &[Ports],
    i: usize,
    dir: &Path,
    log: &Path,
) -> Result<ManagedServer> {
    let ctx = specs.ctx;
    let name = format!("n{}", i + 1);
    let spec = specs.of(ports, i);
    let nctx = ctx.node(&spec, dir, log, ports[i].sql);
    let mut node = start_node(&nctx, Node::Joiner)
        .with_context(|| format!("Galera node {name} (log {})", log.display()))?;
    node.rejoin = Some(std::sync::Arc::new(Rejoin::of(
        &nctx,
        &name,
        NodeKind::Galera,
    )));
    wait_synced(&node, &name, i + 1, ctx.spec.start_timeout_s)
        .with_context(|| format!("Galera node {name} (log {})", log.display()))?;
    Ok(node)
}

/// A self-signed certificate and key for this cluster's group communication, made by
/// `openssl` as the server's account in n1's private directory; the provider options that
/// use it (each node presents it and accepts only peers that present it).
fn make_certificate(ctx: &StartContext<'_>) -> Result<String> {
    let tls = ctx.dir.join("tls");
    crate::safe_fs::create_dir(&tls).with_context(|| format!("cannot create {}", tls.display()))?;
    private_dir(&tls, ctx.account)?;
    let (key, cert) = (tls.join("key.pem"), tls.join("cert.pem"));
    let mut cmd = process::command(Path::new("/usr/bin/openssl"), ctx, false)?;
    cmd.args([
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "7",
    ])
    .args(["-subj", "/CN=ibench-galera", "-keyout"])
    .arg(&key)
    .arg("-out")
    .arg(&cert);
    run_setup(cmd, "openssl (the Galera cluster's certificate)", ctx.log)?;
    Ok(format!(
        "socket.ssl=YES;socket.ssl_key={};socket.ssl_cert={};socket.ssl_ca={}",
        key.display(),
        cert.display(),
        cert.display()
    ))
}

/// Waits until `node` is synced with a cluster of `size` nodes (`wsrep_local_state_comment`,
/// `wsrep_cluster_size`).
fn wait_synced(node: &ManagedServer, name: &str, size: usize, timeout_s: u64) -> Result<()> {
    let port = node.url.url().port().context("node without a port")?;
    wait_synced_at(port, node.url.password(), name, Some(size), timeout_s)
}

#[cfg(test)]
mod tests {
    use super::status::port_taken;

    /// The lines MariaDB 10.11 and its wsrep_sst_rsync write when a port was taken; an SST
    /// that failed otherwise is not retried.
    #[test]
    fn a_taken_port_is_told_from_other_failures() {
        for line in [
            "2026-11-26 10:23:40 0 [ERROR] Can't start server: Bind on TCP/IP port. Got error: \
             98: Address already in use",
            "WSREP_SST: [ERROR] the rsync or stunnel daemon (PID: 4242) terminated unexpectedly.",
            "WSREP_SST: [ERROR] rsync or stunnel daemon port '23456' has been taken by another \
             program",
        ] {
            let log = format!("[Note] WSREP: starting\n{line}\n[ERROR] WSREP: SST failed: 16\n");
            assert_eq!(port_taken(&log).as_deref(), Some(line));
        }
        let donor = "[Note] WSREP: Donor monitor thread started\nWSREP_SST: [ERROR] rsync \
                     returned code 23: (20261126 10:23:41.5)\n[Note] WSREP: done\n";
        assert_eq!(
            super::donor_failure(donor).as_deref(),
            Some("WSREP_SST: [ERROR] rsync returned code 23: (20261126 10:23:41.5)")
        );
        assert_eq!(super::donor_failure("[Note] WSREP: Synchronized\n"), None);
        let other = "[ERROR] WSREP: Process completed with error: wsrep_sst_rsync: 32 (Broken \
                     pipe)\n[ERROR] WSREP: SST failed: 32 (Broken pipe)\n[ERROR] WSREP: \
                     Will never receive state. Need to abort.\n";
        assert_eq!(port_taken(other), None);
    }
}

//! PgBouncer in front of a managed PostgreSQL: started by ibench with a generated ini on a
//! free port of 127.0.0.1 (no Unix socket), as the server's account, in its own process
//! group; the benchmark's clients connect through it, ibench's own reads of settings and
//! counters go to the server.
//!
//! Why ibench starts it rather than taking an external pooler's URL: the managed server's
//! password lives in ibench's memory only, so nothing else could log in to it. PgBouncer
//! gets the superuser's SCRAM secret (read from pg_authid, never the password) in a file only
//! the server's account can read, and logs in to the server by SCRAM pass-through with the
//! key of the client that authenticated to it.
//!
//! Named prepared statements do not survive transaction pooling before PgBouncer 1.21 (a
//! statement prepared on one server connection is missing on the next): with an older one
//! in transaction mode the clients send plain SQL, and the run says so in one line.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::ManagedServer;
use super::process::{free_port, write_private_file};
use crate::dbms::url::ServerUrl;
use crate::error::UsageError;
use crate::request::{PoolMode, PoolerSpec};

/// Where Debian installs PgBouncer.
const BINARY: &str = "/usr/sbin/pgbouncer";

/// The PgBouncer binary: Debian's, else on PATH; a usage error naming the package.
pub fn binary() -> Result<PathBuf, UsageError> {
    super::find_binary("pgbouncer", None, &[PathBuf::from(BINARY)], "--pooler").map_err(|_| {
        UsageError::new(
            "--pooler pgbouncer: pgbouncer is not installed (apt-get install pgbouncer)",
        )
    })
}

/// `pgbouncer --version`'s version (`1.18.0`).
pub fn version(binary: &Path) -> Option<String> {
    super::binaries::binary_version(binary)
}

/// Whether PgBouncer `version` keeps named prepared statements in transaction mode (1.21
/// and later, with max_prepared_statements set).
pub fn keeps_prepared_statements(version: &str) -> bool {
    let v: Vec<u64> = version.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    (
        v.first().copied().unwrap_or(0),
        v.get(1).copied().unwrap_or(0),
    ) >= (1, 21)
}

/// A PgBouncer ibench started; stopped when dropped.
pub struct RunningPooler {
    child: Option<Child>,
    /// What the clients connect to (with the password; never shown).
    pub url: ServerUrl,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its version (`1.18.0`).
    pub version: String,
    /// The clients must send plain SQL (transaction mode before 1.21).
    pub plain_sql: bool,
    /// Its log.
    pub log: PathBuf,
}

impl RunningPooler {
    /// Its process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops it (SIGTERM, then SIGKILL after 10 s).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for RunningPooler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The superuser's SCRAM secret, as the server stores it.
fn scram_secret(server: &ManagedServer) -> Result<String> {
    let url = &server.url;
    let port = url.url().port().unwrap_or(5432);
    let mut config = ::postgres::Config::new();
    config
        .host("127.0.0.1")
        .port(port)
        .user("postgres")
        .password(url.password().unwrap_or_default())
        .dbname("postgres")
        .connect_timeout(Duration::from_secs(10));
    let mut client = config
        .connect(::postgres::NoTls)
        .context("cannot connect to the managed server to set up PgBouncer")?;
    let secret: Option<String> = client
        .query_one(
            "SELECT rolpassword FROM pg_authid WHERE rolname = current_user",
            &[],
        )?
        .get(0);
    match secret {
        Some(s) if s.starts_with("SCRAM-SHA-256$") => Ok(s),
        _ => bail!("the managed server's superuser has no SCRAM secret for PgBouncer"),
    }
}

/// Starts PgBouncer in front of `server` (pool of `spec`), logging to `log`; returns once it
/// accepts a login.
pub fn start(server: &ManagedServer, spec: &PoolerSpec, log: &Path) -> Result<RunningPooler> {
    let binary = binary()?;
    let version = version(&binary).unwrap_or_default();
    // The server's account (never root), which alone may read the server's secret.
    let account = server.user().cloned();
    let secret = scram_secret(server)?;
    let dir = server.dir.join("pgbouncer");
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if let Some(u) = &account {
        nix::unistd::chown(&dir, Some(u.uid), Some(u.gid))?;
    }
    let auth_file = dir.join("userlist.txt");
    write_private_file(
        &auth_file,
        &format!("\"postgres\" \"{secret}\"\n"),
        account.as_ref(),
    )?;
    let port = free_port()?;
    let server_port = server.url.url().port().unwrap_or(5432);
    let keeps = keeps_prepared_statements(&version);
    let plain_sql = spec.pool_mode == PoolMode::Transaction && !keeps;
    let mut ini = format!(
        "; generated by ibench for one run\n\
         [databases]\n\
         * = host=127.0.0.1 port={server_port}\n\
         [pgbouncer]\n\
         listen_addr = 127.0.0.1\n\
         listen_port = {port}\n\
         unix_socket_dir =\n\
         auth_type = scram-sha-256\n\
         auth_file = {}\n\
         pool_mode = {}\n\
         default_pool_size = {}\n\
         min_pool_size = 0\n\
         reserve_pool_size = 0\n\
         max_client_conn = 10000\n\
         max_db_connections = {}\n\
         ignore_startup_parameters = extra_float_digits,options\n\
         admin_users = postgres\n\
         syslog = 0\n\
         log_connections = 0\n\
         log_disconnections = 0\n",
        auth_file.display(),
        spec.pool_mode.name(),
        spec.pool_size,
        spec.pool_size,
    );
    if keeps {
        ini.push_str("max_prepared_statements = 1000\n");
    }
    let ini_path = dir.join("pgbouncer.ini");
    write_private_file(&ini_path, &ini, account.as_ref())?;
    // Beside the results in `--out`: never through a link (see `safe_fs`).
    let out = crate::safe_fs::open_append(log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    let mut cmd = Command::new(&binary);
    cmd.arg(&ini_path)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0);
    if let Some(u) = &account {
        cmd.uid(u.uid.as_raw()).gid(u.gid.as_raw());
        cmd.env("HOME", &u.dir).env("USER", &u.name);
    }
    // SAFETY: prctl is async-signal-safe; it runs in the child after fork, before exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let url = ServerUrl::parse(
        &format!("postgres://postgres@127.0.0.1:{port}/postgres"),
        "",
    )?
    .with_password(server.url.password().unwrap_or_default());
    let mut pooler = RunningPooler {
        child: Some(child),
        url,
        port,
        version,
        plain_sql,
        log: log.to_path_buf(),
    };
    wait_ready(&mut pooler, server.url.password().unwrap_or_default())?;
    Ok(pooler)
}

/// Waits (30 s at most) until a client can log in through the pooler and run a statement.
fn wait_ready(pooler: &mut RunningPooler, password: &str) -> Result<()> {
    let mut probe = ::postgres::Config::new();
    probe
        .host("127.0.0.1")
        .port(pooler.port)
        .user("postgres")
        .password(password)
        .dbname("postgres")
        .connect_timeout(Duration::from_secs(2));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(child) = pooler.child.as_mut()
            && let Some(status) = child.try_wait()?
        {
            pooler.child = None;
            bail!(
                "pgbouncer exited during start-up ({status}): {}",
                super::log_tail(&pooler.log, 5).replace('\n', " | ")
            );
        }
        if crate::interrupt::requested() {
            pooler.stop();
            return Err(crate::error::Interrupted.into());
        }
        let last = match probe
            .connect(::postgres::NoTls)
            .and_then(|mut c| c.simple_query("SELECT 1"))
        {
            Ok(_) => return Ok(()),
            Err(e) => crate::dbms::postgres::error_text(&e),
        };
        if Instant::now() >= deadline {
            pooler.stop();
            bail!(
                "pgbouncer did not let a client in within 30 s ({last}); its log {} ends: {}",
                pooler.log.display(),
                super::log_tail(&pooler.log, 5).replace('\n', " | ")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_statements_survive_transaction_pooling_from_1_21() {
        assert!(!keeps_prepared_statements("1.18.0"));
        assert!(!keeps_prepared_statements("1.20.1"));
        assert!(keeps_prepared_statements("1.21.0"));
        assert!(keeps_prepared_statements("1.23.1"));
        assert!(keeps_prepared_statements("2.0"));
        assert!(!keeps_prepared_statements(""));
    }
}

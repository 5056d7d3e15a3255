//! Managed throwaway servers: initialise a fresh data directory, write the config, start the
//! server on a free port (optionally under another malloc via LD_PRELOAD), wait until it
//! accepts connections, and stop it at the end, on error and on interrupt.
//!
//! Servers run in their own process group (a Ctrl-C in the terminal reaches only ibench, which
//! then stops them cleanly) and get SIGTERM from the kernel if ibench itself dies
//! (PR_SET_PDEATHSIG), so none is left behind.

pub mod mariadb;
pub mod postgres;

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::error::{Interrupted, UsageError};
use crate::spec::ServerSpec;

/// Which server to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// PostgreSQL (initdb + postgres).
    Postgres,
    /// MariaDB (mariadb-install-db + mariadbd).
    Mariadb,
}

impl ServerKind {
    /// Name on the command line and in messages.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Postgres => "postgres",
            ServerKind::Mariadb => "mariadb",
        }
    }
}

/// A running managed server. Dropping it stops the server (unless `keep`).
pub struct ManagedServer {
    child: Option<Child>,
    /// Connection URL (no password: servers are initialised with trust / empty password).
    pub url: String,
    /// Server root directory (data directory and log inside).
    pub dir: PathBuf,
    /// Server log file.
    pub log: PathBuf,
    /// Binary that was started.
    pub binary: PathBuf,
    /// LD_PRELOAD library, if any.
    pub preload: Option<PathBuf>,
    kind: ServerKind,
    keep: bool,
}

impl ManagedServer {
    /// Initialises and starts a server in `dir` (created; must not exist yet).
    pub fn start(spec: &ServerSpec, dir: &Path) -> Result<Self> {
        let preload = spec.malloc.library()?;
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        // Servers resolve relative paths against their own base directory (mariadbd: /usr),
        // not ours.
        let dir = &std::path::absolute(dir)
            .with_context(|| format!("cannot resolve {}", dir.display()))?;
        let port = free_port()?;
        match spec.kind {
            ServerKind::Postgres => postgres::start(spec, dir, port, preload),
            ServerKind::Mariadb => mariadb::start(spec, dir, port, preload),
        }
    }

    /// Process id of the server (postmaster / mariadbd).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Stops the server: SIGINT (Postgres fast shutdown) or SIGTERM (MariaDB), then SIGKILL
    /// if it has not exited within two minutes.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let signal = match self.kind {
            ServerKind::Postgres => Signal::SIGINT,
            ServerKind::Mariadb => Signal::SIGTERM,
        };
        let pid = Pid::from_raw(child.id() as i32);
        let _ = kill(pid, signal);
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        bail!("server pid {pid} did not stop within 120 s and was killed")
    }

    /// Leaves the server running (for `--keep-server`).
    pub fn detach(&mut self) -> Option<u32> {
        self.child.take().map(|c| c.id())
    }

    /// Whether the server is left running when dropped.
    pub fn keep(&self) -> bool {
        self.keep
    }

    fn fail_with_log(&mut self, what: &str) -> anyhow::Error {
        let _ = self.stop();
        failure(what, &self.log)
    }

    /// Waits until `probe` succeeds, the server exits, or the timeout passes.
    fn wait_ready(&mut self, timeout: Duration, mut probe: impl FnMut() -> bool) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                return Err(
                    self.fail_with_log(&format!("server exited during start-up ({status})"))
                );
            }
            if crate::interrupt::requested() {
                let _ = self.stop();
                return Err(Interrupted.into());
            }
            if probe() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(self.fail_with_log(&format!(
                    "server did not accept connections within {} s",
                    timeout.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        if !self.keep {
            let _ = self.stop();
        }
    }
}

/// A TCP port free on 127.0.0.1 right now.
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(l.local_addr()?.port())
}

/// The first line of the log that reports an error (`[ERROR]`, `FATAL:`, `ERROR:`).
pub fn log_error_line(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| {
            (l.contains("[ERROR]") || l.contains("FATAL:") || l.contains("ERROR:"))
                && !l.contains("Aborting")
        })
        .map(|l| l.trim().to_string())
}

/// An error whose first line says what failed and the log's own error line, followed by the
/// log's tail.
fn failure(what: &str, log: &Path) -> anyhow::Error {
    let cause = log_error_line(log)
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    anyhow::anyhow!(
        "{what}{cause}\nserver log {} ends:\n{}",
        log.display(),
        log_tail(log, 15)
    )
}

/// The last `lines` lines of `path` (at most 64 KiB read).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = fs::File::open(path) else {
        return "(no log)".to_string();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(65_536)));
    let mut text = String::new();
    let _ = f.read_to_string(&mut text);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Finds `name` in `bin_dir`, then in `candidates`, then on PATH.
pub fn find_binary(
    name: &str,
    bin_dir: Option<&Path>,
    candidates: &[PathBuf],
) -> Result<PathBuf, UsageError> {
    if let Some(dir) = bin_dir {
        let p = dir.join(name);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(UsageError::new(format!(
                "--server-bin {}: no {name} there",
                dir.display()
            )))
        };
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    candidates
        .iter()
        .cloned()
        .chain(on_path)
        .find(|p| p.is_file())
        .ok_or_else(|| UsageError::new(format!("{name} not found (looked in standard locations and PATH); install the server package or give --server-bin DIR")))
}

/// A command for a server process: own process group, SIGTERM if ibench dies (unless kept),
/// output to `log`, optional LD_PRELOAD.
fn server_command(
    binary: &Path,
    log: &Path,
    preload: Option<&Path>,
    keep: bool,
) -> Result<Command> {
    let out = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("cannot open server log {}", log.display()))?;
    let mut cmd = Command::new(binary);
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0);
    if let Some(lib) = preload {
        cmd.env("LD_PRELOAD", lib);
    }
    // A kept server must outlive ibench; any other gets SIGTERM if ibench dies.
    if !keep {
        // SAFETY: prctl is async-signal-safe; it runs in the child after fork, before exec.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(Signal::SIGTERM).map_err(std::io::Error::from)
            });
        }
    }
    Ok(cmd)
}

/// Runs a set-up command (initdb, install-db) to completion, with its output in `log`.
fn run_setup(mut cmd: Command, what: &str, log: &Path) -> Result<()> {
    let out = fs::OpenOptions::new().create(true).append(true).open(log)?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    let status = cmd.status().with_context(|| format!("cannot run {what}"))?;
    if !status.success() {
        return Err(failure(&format!("{what} failed ({status})"), log));
    }
    if crate::interrupt::requested() {
        return Err(Interrupted.into());
    }
    Ok(())
}

/// Appends the user's config to a generated config file: the `--server-config` fragment,
/// then `after_fragment` (e.g. a section header to return to), then the `--server-option`s as
/// `key = value` lines, which therefore win.
fn push_user_config(conf: &mut String, spec: &ServerSpec, after_fragment: &str) {
    if let Some(text) = &spec.config_text {
        conf.push_str("\n# --server-config\n");
        conf.push_str(text);
        conf.push('\n');
        conf.push_str(after_fragment);
    }
    if !spec.options.is_empty() {
        conf.push_str("\n# --server-option\n");
        for (k, v) in &spec.options {
            conf.push_str(&format!("{k} = {v}\n"));
        }
    }
}

//! The processes of a managed server: set-up commands and the server itself, run as its
//! account, in their own process group, with their output in the server log; and what the
//! families share around them (free port, passwords, private files, config lines, log lines).

use std::collections::BTreeSet;
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::{Pid, User};
use rand::Rng;

use super::StartContext;
use crate::error::Interrupted;

/// A TCP port free on 127.0.0.1 right now, for a server to listen on a moment later: a random
/// one below the kernel's ephemeral range, so that no outgoing connection (they take their
/// local ports from that range) can take it in between, and never one this process handed
/// out before (a cluster's nodes take a dozen at once). When the range leaves no room below,
/// the kernel's choice.
pub fn free_port() -> Result<u16> {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    let low = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    if low > 12000 {
        let mut rng = rand::rng();
        for _ in 0..200 {
            let port = rng.random_range(10000..low);
            if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                given.insert(port);
                return Ok(port);
            }
        }
    }
    let l = TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    let port = l.local_addr()?.port();
    given.insert(port);
    Ok(port)
}

/// A random password for a server's superuser: 32 letters and digits from the operating
/// system's random source (rand's thread RNG is a CSPRNG seeded by it).
pub fn random_password() -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..32)
        .map(|_| char::from(CHARS[rng.random_range(0..CHARS.len())]))
        .collect()
}

/// Writes `text` to a new file at `path` that only `owner` (or ibench's account) may read.
pub fn write_private_file(path: &Path, text: &str, owner: Option<&User>) -> Result<()> {
    let _ = fs::remove_file(path);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    if let Some(u) = owner {
        nix::unistd::fchown(&f, Some(u.uid), Some(u.gid))
            .with_context(|| format!("cannot give {} to {}", path.display(), u.name))?;
    }
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The first parent directory of `dir` that `user` may not pass through, if any.
pub fn first_closed_parent(dir: &Path, user: &User) -> Option<PathBuf> {
    for parent in dir.ancestors().skip(1) {
        let Ok(m) = fs::metadata(parent) else {
            continue;
        };
        let mode = m.mode();
        let x = if m.uid() == user.uid.as_raw() {
            mode & 0o100
        } else if m.gid() == user.gid.as_raw() {
            mode & 0o010
        } else {
            mode & 0o001
        };
        if x == 0 {
            return Some(parent.to_path_buf());
        }
    }
    None
}

/// Appends the user's config to a generated config file: the `--server-config` fragment,
/// then `after_fragment` (e.g. a section header to return to), then the `--server-option`s as
/// `key = value` lines, which therefore win.
pub fn push_user_config(conf: &mut String, ctx: &StartContext<'_>, after_fragment: &str) {
    let spec = ctx.spec;
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

/// Opens the server log for appending: beside the results in `--out`, so never through a
/// link and only when the file is ibench's own (see `safe_fs`).
fn open_log(log: &Path) -> Result<fs::File> {
    crate::safe_fs::open_append(log)
        .with_context(|| format!("cannot open server log {}", log.display()))
}

/// A command run as the server's account, in its own process group (a Ctrl-C in the
/// terminal does not reach it), output to the log; SIGTERM if ibench dies unless `keep`.
pub fn command(binary: &Path, ctx: &StartContext<'_>, keep: bool) -> Result<Command> {
    let out = open_log(ctx.log)?;
    let mut cmd = Command::new(binary);
    // A relocatable build finds its own libraries.
    super::binaries::with_library_path(&mut cmd, binary);
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0);
    if let Some(u) = ctx.account {
        // std drops the supplementary groups when it changes the user.
        cmd.uid(u.uid.as_raw()).gid(u.gid.as_raw());
        cmd.env("HOME", &u.dir).env("USER", &u.name);
    }
    // A kept server must outlive ibench; any other gets SIGTERM if ibench dies. The setting
    // survives the change of user above, which happens first.
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

/// A command for the server process itself, with the LD_PRELOAD of its allocator.
pub fn server_command(binary: &Path, ctx: &StartContext<'_>) -> Result<Command> {
    let mut cmd = command(binary, ctx, ctx.spec.keep)?;
    if let Some(lib) = &ctx.preload {
        cmd.env("LD_PRELOAD", lib);
    }
    if !ctx.cgroup_procs.is_empty() {
        let fds = ctx.cgroup_procs.clone();
        // SAFETY: join_in_child only writes to descriptors opened before the fork.
        unsafe {
            cmd.pre_exec(move || super::cgroup::join_in_child(&fds));
        }
    }
    Ok(cmd)
}

/// Runs a set-up command (initdb, install-db) to completion. An interrupt stops it (its
/// whole process group) and returns [`Interrupted`].
pub fn run_setup(mut cmd: Command, what: &str, log: &Path) -> Result<()> {
    let mut child = cmd.spawn().with_context(|| format!("cannot run {what}"))?;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if crate::interrupt::requested() {
            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
            let _ = child.wait();
            return Err(Interrupted.into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if crate::interrupt::requested() {
        return Err(Interrupted.into());
    }
    if !status.success() {
        return Err(failure(&format!("{what} failed ({status})"), log));
    }
    Ok(())
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
pub fn failure(what: &str, log: &Path) -> anyhow::Error {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_long_random_and_plain() {
        let a = random_password();
        let b = random_password();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}

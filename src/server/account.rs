//! The account a managed server runs as. Never root, and not the account of the host's own
//! DBMS either: the `postgres` and `mysql` accounts own the machine's real clusters, so a weak
//! setting of those (a PostgreSQL that trusts 127.0.0.1 lets any local user run `COPY TO
//! PROGRAM` as `postgres`) would reach a managed server's files if it ran as them.
//!
//! When ibench runs as root, a managed server, its set-up command and its pooler run as
//! [`DEFAULT_ACCOUNT`] (`ibench-server`), a system account without login or home that ibench
//! creates the first time it needs it (with `useradd --system`, saying so in a `note:` line),
//! or as the account `--server-user` (`server_user` in an experiment's target) names. When
//! ibench runs as another user, the server runs as that user: it cannot switch accounts.

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;

use nix::fcntl::{Flock, FlockArg};
use nix::unistd::{Uid, User};

use crate::error::UsageError;

/// The system account managed servers run as when ibench runs as root and no other is named.
pub const DEFAULT_ACCOUNT: &str = "ibench-server";

/// The accounts of the host's own DBMS services (Debian's PostgreSQL and MariaDB packages).
const HOST_DBMS_ACCOUNTS: &[&str] = &["postgres", "mysql"];

/// Serializes the creation of [`DEFAULT_ACCOUNT`] between ibench processes (root only: /run
/// is root's), so that servers started at once do not run `useradd` together.
const CREATE_LOCK: &str = "/run/ibench-server-account.lock";

/// The `useradd` arguments that create `name`: a system account with a group of its own, no
/// home and no login shell.
fn useradd_args(name: &str) -> [&str; 8] {
    [
        "--system",
        "--user-group",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
        name,
    ]
}

/// The user ibench runs as (its effective uid), by name when it has one.
pub fn own_name() -> String {
    User::from_uid(Uid::effective())
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| Uid::effective().to_string())
}

/// Checks an account named to run managed servers (`--server-user`), before anything starts:
/// it must exist, must not be root (uid 0), and must be ibench's own user unless ibench runs
/// as root. Returns a warning when it is the account of the host's own DBMS. The messages
/// start with the name; the caller puts the setting's name before it.
pub fn check_named(name: &str) -> Result<Option<String>, String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '$');
    if name.is_empty() || !name.chars().all(plain) {
        return Err(format!("{name:?}: not an account name"));
    }
    let user = match User::from_name(name) {
        Ok(Some(u)) => u,
        _ => {
            return Err(format!(
                "{name}: there is no such account; create it (useradd {}) or leave the \
                 setting out",
                useradd_args(name).join(" ")
            ));
        }
    };
    if user.uid.is_root() {
        return Err(format!(
            "{name}: a managed server never runs as root (uid 0); name an unprivileged account"
        ));
    }
    let own = Uid::effective();
    if !own.is_root() && user.uid != own {
        return Err(format!(
            "{name}: ibench runs as '{}' and cannot run a server as another account (only \
             root can); leave the setting out to run it as '{}'",
            own_name(),
            own_name()
        ));
    }
    if HOST_DBMS_ACCOUNTS.contains(&name) {
        return Ok(Some(format!(
            "{name} is the account of the host's own DBMS service: a weak setting of that \
             service (trust on 127.0.0.1) can reach the managed server's files; the default \
             account ({DEFAULT_ACCOUNT}) shares nothing with it"
        )));
    }
    Ok(None)
}

/// The account a managed server runs as: `named` (`--server-user`), else
/// [`DEFAULT_ACCOUNT`] when ibench is root (created when missing), else ibench's own user
/// (`None`). `flag` names the setting in messages.
pub fn resolve(named: Option<&str>, flag: &str) -> Result<Option<User>, UsageError> {
    if let Some(name) = named {
        check_named(name).map_err(|m| UsageError::new(format!("{flag} {m}")))?;
        if !Uid::effective().is_root() {
            return Ok(None);
        }
        return match User::from_name(name) {
            Ok(Some(u)) => Ok(Some(u)),
            _ => Err(UsageError::new(format!(
                "{flag} {name}: there is no such account"
            ))),
        };
    }
    if !Uid::effective().is_root() {
        return Ok(None);
    }
    default_account().map(Some)
}

/// [`DEFAULT_ACCOUNT`], created when missing (one ibench at a time; one that finds it made
/// by another meanwhile uses it).
fn default_account() -> Result<User, UsageError> {
    let name = DEFAULT_ACCOUNT;
    if let Some(u) = existing(name)? {
        return Ok(u);
    }
    let _lock = lock(Path::new(CREATE_LOCK));
    if let Some(u) = existing(name)? {
        return Ok(u);
    }
    let useradd = ["/usr/sbin/useradd", "/sbin/useradd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("useradd");
    let why = match Command::new(useradd).args(useradd_args(name)).output() {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string(),
        ),
        Err(e) => Some(format!("cannot run {useradd}: {e}")),
    };
    match (existing(name)?, why) {
        (Some(u), None) => {
            eprintln!(
                "note: created the system account '{name}' (no login, no home) to run managed \
                 servers as; `userdel {name}` removes it"
            );
            Ok(u)
        }
        // Made by someone else meanwhile.
        (Some(u), Some(_)) => Ok(u),
        (None, why) => Err(UsageError::new(format!(
            "a managed server runs as the system account '{name}', which does not exist and \
             could not be created ({}): create it (useradd {}) or name another with \
             --server-user",
            why.unwrap_or_else(|| "useradd made no such account".to_string()),
            useradd_args(name).join(" ")
        ))),
    }
}

/// The account `name` if it exists; an error if it is root's uid.
fn existing(name: &str) -> Result<Option<User>, UsageError> {
    match User::from_name(name) {
        Ok(Some(u)) if u.uid.is_root() => Err(UsageError::new(format!(
            "the account '{name}' managed servers run as has uid 0: a managed server never \
             runs as root; give it its own uid, or name another with --server-user"
        ))),
        Ok(found) => Ok(found),
        Err(_) => Ok(None),
    }
}

/// An exclusive lock on `path` (created 0600, never through a symlink), held until dropped;
/// `None` when it cannot be had (then creation relies on re-checking after `useradd`).
fn lock(path: &Path) -> Option<Flock<fs::File>> {
    let file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    Flock::lock(file, FlockArg::LockExclusive).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_that_cannot_run_a_server_are_refused_by_name() {
        let e = check_named("root").unwrap_err();
        assert!(e.starts_with("root: ") && e.contains("uid 0"), "{e}");
        let e = check_named("ibench-no-such-account").unwrap_err();
        assert!(
            e.starts_with("ibench-no-such-account: there is no such account"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        let e = check_named("a\nb").unwrap_err();
        assert!(e.starts_with("\"a\\nb\": not an account name"), "{e}");
    }
}

//! Private directories for a managed server's Unix socket under /tmp, for when the server's
//! own directory is too deep for a socket path (~107 bytes at most).
//!
//! Each is named `<prefix><pid>-<port>-<random>` after the ibench process that made it, mode
//! 0700, owned by the server's account, and removed when its server stops. An ibench killed
//! with `kill -9` leaves its directory behind; [`sweep`], at the next start, removes those of
//! dead ibench processes. It removes a directory only when all of these hold, and otherwise
//! leaves it: its name has the prefix and a pid, no process of that pid exists (a reused pid
//! keeps it), it is a directory (not a symlink) owned by root, ibench's user or the server's
//! account, and it holds nothing but sockets no server listens on (a server left running with
//! `--keep-server` still listens on its socket). Nothing is followed through a symlink: entries
//! are looked at with `lstat` and removed one by one, and the directory with `rmdir`.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use nix::unistd::{Uid, User};

use super::process::random_password;

/// Creates a new private socket directory for a server on `port`, run by `account`.
pub fn create(prefix: &str, port: u16, account: Option<&User>) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "{prefix}{}-{port}-{}",
        std::process::id(),
        &random_password()[..8]
    ));
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    super::private_dir(&dir, account)?;
    Ok(dir)
}

/// Removes the socket directories dead ibench processes left under the temporary directory
/// (see the module's documentation), saying so in a `note:` line each. Never fails.
pub fn sweep(prefix: &str, account: Option<&User>) {
    let tmp = std::env::temp_dir();
    let Ok(entries) = fs::read_dir(&tmp) else {
        return;
    };
    let mut owners = vec![0, Uid::effective().as_raw()];
    owners.extend(account.map(|u| u.uid.as_raw()));
    let mut bound: Option<Option<String>> = None;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.file_type().is_dir() || !owners.contains(&meta.uid()) {
            continue;
        }
        let bound = bound.get_or_insert_with(bound_sockets);
        if remove_if_abandoned(&dir, bound.as_deref()) {
            eprintln!(
                "note: removed {}, left by ibench process {pid}, which ended without removing it",
                dir.display()
            );
        }
    }
}

/// Removes `dir` if it holds nothing but sockets that are not bound (see [`bound_sockets`];
/// `None`: unknown, so only an empty `dir` goes); whether it did.
fn remove_if_abandoned(dir: &Path, bound: Option<&str>) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let mut stale = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else {
            return false;
        };
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_socket() && bound.is_some_and(|b| !is_bound(b, &path)) => {
                stale.push(path)
            }
            _ => return false,
        }
    }
    for socket in stale {
        if fs::remove_file(&socket).is_err() {
            return false;
        }
    }
    fs::remove_dir(dir).is_ok()
}

/// The Unix sockets bound on this host, as /proc/net/unix lists them (a line each, its path
/// last); `None` when it cannot be read.
fn bound_sockets() -> Option<String> {
    crate::bounded::read_to_string(Path::new("/proc/net/unix"), 64 << 20).ok()
}

/// Whether `bound` (see [`bound_sockets`]) lists the socket at `path`; a path that is not
/// UTF-8 counts as bound.
fn is_bound(bound: &str, path: &Path) -> bool {
    let Some(path) = path.to_str() else {
        return true;
    };
    bound
        .lines()
        .any(|l| l.strip_suffix(path).is_some_and(|rest| rest.ends_with(' ')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unbound_sockets_are_stale() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let bound = bound_sockets().unwrap();
        assert!(is_bound(&bound, &path));
        assert!(!is_bound(&bound, &dir.path().join("s")));
        // A bound socket is never taken for a stale one, nor any when the list is unknown.
        assert!(!remove_if_abandoned(dir.path(), Some(&bound)));
        drop(listener);
        assert!(!remove_if_abandoned(dir.path(), None));
        assert!(path.exists());
        // Unbound, it is stale, and the directory goes.
        assert!(remove_if_abandoned(dir.path(), bound_sockets().as_deref()));
        assert!(!dir.path().exists());
    }
}

//! What saves and removals left when their ibench process ended before they finished (`kill
//! -9`, a crash, the machine going down): their temporary directories, `.NAME.<random>.tmp`
//! in the datasets directory, never listed nor used, but kept forever.
//!
//! Every save and removal holds the store's lock (`datasets/.lock`, `flock(2)` shared; see
//! [`hold`]) from before it makes its temporary directory until that is renamed or removed.
//! The kernel releases the lock however the process ends, so no process id (reused) or clock
//! is guessed at. [`settle`] takes the lock exclusively without waiting: when it can, no save
//! or removal runs in the store, so every temporary directory there is a dead one's, and it is
//! removed if it is ibench's own (a directory, not a link, of ibench's user, holding only what
//! a save makes). When it cannot, a save runs; the next start settles.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use nix::fcntl::{Flock, FlockArg};

use crate::safe_fs;

/// The store's lock file: not a dataset's name (those never start with '.').
const LOCK: &str = ".lock";

/// The store's lock, held shared by a save or a removal until dropped.
#[derive(Debug)]
pub struct StoreLock {
    _lock: Flock<File>,
}

/// Holds the lock of the datasets directory `store` shared, for a save or a removal (waiting
/// while a [`settle`] holds it).
pub fn hold(store: &Path) -> Result<StoreLock> {
    let path = store.join(LOCK);
    let cannot = || format!("cannot lock {}", path.display());
    let file = open_lock(&path).with_context(cannot)?;
    let lock = Flock::lock(file, FlockArg::LockShared)
        .map_err(|(_, e)| io::Error::from(e))
        .with_context(cannot)?;
    Ok(StoreLock { _lock: lock })
}

/// The lock file at `path`, created if missing; one that is not ibench's own (a link,
/// another user's file) is an error.
fn open_lock(path: &Path) -> io::Result<File> {
    let open = || {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    let file = match open() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => match safe_fs::create_new(path, 0o600) {
            // Made at the same moment by another ibench: its file.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => open()?,
            other => other?,
        },
        other => other?,
    };
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != safe_fs::euid() {
        return Err(io::Error::other("not ibench's own file"));
    }
    Ok(file)
}

/// Removes what saves and removals whose process ended left in the datasets directory
/// `store` (see the module docs), one note line each on stderr. Never fails: what cannot be
/// removed is named.
pub fn settle(store: &Path) {
    for line in find(store) {
        eprintln!("{line}");
    }
}

/// [`settle`]'s work: a line for each temporary directory removed or not removable.
fn find(store: &Path) -> Vec<String> {
    if !safe_fs::is_own_dir(store, None) {
        return Vec::new();
    }
    let mut candidates: Vec<PathBuf> = fs::read_dir(store)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(is_temporary_name))
        .map(|e| e.path())
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    candidates.sort();
    let Ok(file) = open_lock(&store.join(LOCK)) else {
        return Vec::new();
    };
    // Held by a save or a removal that is running: its directory is not a leftover.
    let Ok(_lock) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else {
        return Vec::new();
    };
    let why = "left by a dataset save or removal whose ibench process ended before it finished";
    candidates
        .into_iter()
        .filter(|dir| safe_fs::is_own_dir(dir, None) && holds_only_a_save(dir))
        .map(|dir| match fs::remove_dir_all(&dir) {
            Ok(()) => format!("note: removed {} ({why})", dir.display()),
            Err(e) => format!("note: cannot remove {} ({why}): {e}", dir.display()),
        })
        .collect()
}

/// Whether `name` is one `safe_fs::temp_path` gives a dataset's directory:
/// `.NAME.<12 lowercase letters or digits>.tmp`.
fn is_temporary_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let Some((dataset, tag)) = rest.rsplit_once('.') else {
        return false;
    };
    tag.len() == 12
        && tag
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && super::check_name(dataset).is_ok()
}

/// Whether the directory `dir` holds nothing but what a save makes: `data`, `manifest.json`
/// and the manifest's temporary file.
fn holds_only_a_save(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.into_iter().all(|e| {
        e.ok().is_some_and(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name == "data"
                || name == "manifest.json"
                || (name.starts_with(".manifest.json.") && name.ends_with(".tmp"))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_dead_save_s_own_temporary_is_removed() {
        assert!(is_temporary_name(".w1.abcdefghij12.tmp"));
        assert!(is_temporary_name(".w.1.abcdefghij12.tmp"));
        for name in [
            ".lock",
            "w1",
            ".w1.abc.tmp",
            ".w1.ABCDEFGHIJ12.tmp",
            "..x.abcdefghij12.tmp",
        ] {
            assert!(!is_temporary_name(name), "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("datasets");
        fs::create_dir(&store).unwrap();
        let dead = store.join(".w1.abcdefghij12.tmp");
        fs::create_dir_all(dead.join("data")).unwrap();
        let odd = store.join(".w2.abcdefghij12.tmp");
        fs::create_dir_all(&odd).unwrap();
        fs::write(odd.join("mine"), b"x").unwrap();
        // A save running: nothing removed.
        let live = hold(&store).unwrap();
        assert!(find(&store).is_empty());
        assert!(dead.exists());
        drop(live);
        let lines = find(&store);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(!dead.exists() && odd.exists());
    }
}

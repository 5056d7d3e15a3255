//! The lock a run holds for its whole life: `<stem>.lock` beside its results file
//! `<stem>.json`, locked with `flock(2)`. The kernel releases the lock when the process ends,
//! however it ends (`kill -9`, a crash, the machine going down), so a later run that can take
//! the lock knows the run is over: no process-id guessing (pids are reused) and no clock.
//!
//! The lock file appears already locked (it is locked under a temporary name and renamed into
//! place), so there is no moment in which another process could take it from a live run.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

use nix::fcntl::{Flock, FlockArg};

use crate::safe_fs;

/// A held run lock; dropping it removes the lock file, then releases the lock.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    _lock: Flock<fs::File>,
    /// Leave the file when dropped (the run's results are not final on disk).
    keep: bool,
}

/// The lock file of the run whose results file is `results`.
pub fn lock_path(results: &Path) -> PathBuf {
    results.with_extension("lock")
}

impl RunLock {
    /// Creates and takes the lock of the run whose results file is `results` (which the
    /// caller has just reserved), under a temporary name nobody can predict or plant a link
    /// at (see `safe_fs`).
    pub fn create(results: &Path) -> io::Result<RunLock> {
        let path = lock_path(results);
        let tmp = safe_fs::temp_path(&path);
        let file = safe_fs::create_new(&tmp, 0o644)?;
        let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
            let _ = fs::remove_file(&tmp);
            io::Error::from(e)
        })?;
        if let Err(e) = fs::rename(&tmp, &path) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(RunLock {
            path,
            _lock: lock,
            keep: false,
        })
    }

    /// Takes the lock at `path` if no process holds it, i.e. the run it belongs to is over:
    /// `Ok(None)` while the run lives, and also when the file is gone (the run ended cleanly)
    /// or is not a lock of ibench's own user (a link, another user's file: not a run of
    /// ours, whatever it says).
    pub fn take_if_dead(path: &Path) -> io::Result<Option<RunLock>> {
        let file = match fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            // A symbolic link (ELOOP): not a lock ibench made.
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if !meta.is_file() || meta.uid() != safe_fs::euid() {
            return Ok(None);
        }
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Some(RunLock {
                path: path.to_path_buf(),
                _lock: lock,
                keep: false,
            })),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, e)) => Err(e.into()),
        }
    }
}

impl RunLock {
    /// Leaves the lock file in place when dropped (the lock itself is still released): the
    /// run's results did not all reach the disk, and the next run in the directory, finding
    /// the lock free, settles the run (marks it abandoned, brings the store up to date).
    pub fn keep_file(&mut self) {
        self.keep = true;
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        // Removed while still held: whoever opens it afterwards finds no file, or takes the
        // lock of a run whose document is final.
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_cannot_be_taken_and_a_dropped_one_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("r.json");
        let lock = RunLock::create(&results).unwrap();
        let path = lock_path(&results);
        assert!(path.exists());
        // flock locks belong to open files: a second open in this process conflicts too.
        assert!(RunLock::take_if_dead(&path).unwrap().is_none());
        drop(lock);
        assert!(!path.exists());
        assert!(RunLock::take_if_dead(&path).unwrap().is_none());
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

//! `--os-cache drop-before-step`: the database's files written back and dropped from the OS
//! page cache before a step, so that the step reads them from the device. Per file
//! (`fdatasync`, then `posix_fadvise(POSIX_FADV_DONTNEED)`): only the database's pages go, not
//! the host's whole cache (which would disturb everything else the host runs), and it works
//! without root for files ibench may read.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};

/// Most files walked under the data paths (a DBMS keeps thousands at most).
const MAX_FILES: usize = 200_000;

/// Drops the page cache of every regular file under `paths`; returns the files dropped and
/// those that could not be (unreadable, vanished meanwhile).
pub fn drop_files(paths: &[std::path::PathBuf]) -> (usize, usize) {
    let (mut dropped, mut failed) = (0, 0);
    let mut stack: Vec<std::path::PathBuf> = paths.to_vec();
    let mut seen = 0;
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > MAX_FILES {
            break;
        }
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = fs::read_dir(&p) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else if meta.is_file() && !meta.file_type().is_socket() {
            if drop_file(&p) {
                dropped += 1;
            } else {
                failed += 1;
            }
        }
    }
    (dropped, failed)
}

fn drop_file(path: &Path) -> bool {
    let Ok(f) = fs::File::open(path) else {
        return false;
    };
    // Dirty pages are not dropped: written back first.
    let _ = f.sync_data();
    posix_fadvise(&f, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).is_ok()
}

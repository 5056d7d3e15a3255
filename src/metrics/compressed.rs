//! What a database's files take on a btrfs file system that compresses them. btrfs reports a
//! compressed file's blocks uncompressed to `stat` and `du` (st_blocks counts the extents'
//! logical length), so the allocated size says nothing of compression there; `compsize`
//! (Debian's btrfs-compsize) reads the file extents themselves and sums the bytes they take
//! on disk, each shared (reflinked) extent once. It needs root, as the btrfs ioctl it uses
//! does; without it, or off btrfs, nothing is measured.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether `path` lies on a btrfs file system.
pub fn on_btrfs(path: &Path) -> bool {
    use nix::sys::statfs::{BTRFS_SUPER_MAGIC, statfs};
    statfs(path).is_ok_and(|s| s.filesystem_type() == BTRFS_SUPER_MAGIC)
}

/// Bytes the files under `paths` take on disk, compressed extents counted at their compressed
/// size (`compsize -b -x`); `None` unless every path is on btrfs and compsize measured them.
/// The first time compsize is missing or fails, one warning says why.
pub fn btrfs_disk_bytes(paths: &[PathBuf]) -> Option<u64> {
    let existing: Vec<&PathBuf> = paths.iter().filter(|p| p.exists()).collect();
    if existing.is_empty() || !existing.iter().all(|p| on_btrfs(p)) {
        return None;
    }
    let out = Command::new("compsize")
        .arg("-b")
        .arg("-x")
        .args(&existing)
        .stdin(Stdio::null())
        .output();
    let why = match out {
        Ok(o) if o.status.success() => {
            match total_disk_bytes(&String::from_utf8_lossy(&o.stdout)) {
                Some(bytes) => return Some(bytes),
                None => "compsize printed no TOTAL line".to_string(),
            }
        }
        Ok(o) => format!(
            "compsize failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            "compsize is not installed (apt-get install btrfs-compsize)".to_string()
        }
        Err(e) => format!("compsize: {e}"),
    };
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        eprintln!("warning: the database is on btrfs: its compressed size is not measured: {why}");
    }
    None
}

/// The `Disk Usage` column of compsize's `TOTAL` line (`-b`: bytes).
fn total_disk_bytes(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("TOTAL"))?;
    // TOTAL  <percent>  <disk usage>  <uncompressed>  <referenced>
    line.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_total_disk_usage() {
        let out = "Processed 12 files, 40 regular extents (40 refs), 3 inline.\n\
                   Type       Perc     Disk Usage   Uncompressed Referenced  \n\
                   TOTAL       21%      2818048     13107200     13107200     \n\
                   none       100%       135168       135168       135168       \n\
                   zstd        20%      2682880     12972032     12972032       \n";
        assert_eq!(total_disk_bytes(out), Some(2_818_048));
        assert_eq!(total_disk_bytes("No files.\n"), None);
    }

    #[test]
    fn nothing_off_btrfs() {
        // The build directory is not expected on btrfs here; a missing path gives nothing.
        assert_eq!(btrfs_disk_bytes(&[PathBuf::from("/nonexistent/db")]), None);
    }
}

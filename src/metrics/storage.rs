//! Where a database's files are stored: the file system (type, mount point, mount options)
//! and the block devices under it, read from /proc/self/mountinfo and /sys. A btrfs file
//! system has an anonymous device number with no /sys/dev/block entry: its member devices are
//! read from /sys/fs/btrfs/<uuid>/devices.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::results::model::StorageInfo;

/// One line of /proc/self/mountinfo.
#[derive(Clone, Debug, PartialEq)]
pub struct Mount {
    /// `major:minor` of the file system's device (st_dev of its files).
    pub dev: (u64, u64),
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// Per-mount options (`rw,relatime`).
    pub options: String,
    /// File-system type (`ext4`, `xfs`, `btrfs`).
    pub fs_type: String,
    /// What is mounted (`/dev/loop3`).
    pub source: String,
    /// The file system's own options (`rw,space_cache=v2,subvolid=5`).
    pub super_options: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line; `None` when it is not one.
pub fn parse_mountinfo_line(line: &str) -> Option<Mount> {
    let (before, after) = line.split_once(" - ")?;
    let f: Vec<&str> = before.split(' ').collect();
    let a: Vec<&str> = after.split(' ').collect();
    if f.len() < 6 || a.len() < 3 {
        return None;
    }
    let (major, minor) = f[2].split_once(':')?;
    Some(Mount {
        dev: (major.parse().ok()?, minor.parse().ok()?),
        mount_point: PathBuf::from(unescape(f[4])),
        options: f[5].to_string(),
        fs_type: a[0].to_string(),
        source: unescape(a[1]),
        super_options: a[2].to_string(),
    })
}

/// The mount `path` is on: the mount of its device whose mount point is the longest prefix
/// of the path (else the longest prefix of any mount).
pub fn mount_of(path: &Path) -> Option<Mount> {
    let path = fs::canonicalize(path).ok()?;
    let dev = fs::metadata(&path).ok()?.dev();
    let dev = (
        nix::sys::stat::major(dev) as u64,
        nix::sys::stat::minor(dev) as u64,
    );
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mounts: Vec<Mount> = text.lines().filter_map(parse_mountinfo_line).collect();
    let best = |same_dev: bool| {
        mounts
            .iter()
            .filter(|m| path.starts_with(&m.mount_point) && (!same_dev || m.dev == dev))
            // The last of equally long mount points is the one on top.
            .max_by_key(|m| m.mount_point.as_os_str().len())
            .cloned()
    };
    best(true).or_else(|| best(false))
}

/// The diskstats name of the block device numbered `major:minor`, if it has one.
fn block_device(major: u64, minor: u64) -> Option<String> {
    let uevent = fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent")).ok()?;
    uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(str::to_string)
}

/// The member devices of the btrfs file system mounted from `source` (`/dev/loop3`), by
/// their diskstats names, from /sys/fs/btrfs/<uuid>/devices.
fn btrfs_members(source: &str) -> Vec<String> {
    let name = source.rsplit('/').next().unwrap_or(source);
    let resolved = fs::canonicalize(source)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    for fs_dir in fs::read_dir("/sys/fs/btrfs")
        .into_iter()
        .flatten()
        .flatten()
    {
        let devices = fs_dir.path().join("devices");
        let members: Vec<String> = fs::read_dir(&devices)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if members
            .iter()
            .any(|m| m == name || Some(m) == resolved.as_ref())
        {
            let mut members = members;
            members.sort();
            return members;
        }
    }
    Vec::new()
}

/// The block devices under `path`, by their /proc/diskstats names: the device itself
/// (partition, dm, md, loop), or a btrfs file system's members; empty for file systems
/// without one (tmpfs, overlay).
pub fn devices_of(path: &Path) -> Vec<String> {
    let Ok(meta) = fs::metadata(path) else {
        return Vec::new();
    };
    let dev = meta.dev();
    let (major, minor) = (
        nix::sys::stat::major(dev) as u64,
        nix::sys::stat::minor(dev) as u64,
    );
    if major != 0
        && let Some(d) = block_device(major, minor)
    {
        return vec![d];
    }
    match mount_of(path) {
        Some(m) if m.fs_type == "btrfs" => btrfs_members(&m.source),
        _ => Vec::new(),
    }
}

/// Bytes an unprivileged user may still write on the file system holding `path`
/// (statvfs's available blocks), or `None` when it cannot be told.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(path).ok()?;
    Some(st.blocks_available().saturating_mul(st.fragment_size()))
}

/// Where `path` (a directory or file of the database) is stored.
pub fn storage_of(path: &Path) -> Option<StorageInfo> {
    let m = mount_of(path)?;
    Some(StorageInfo {
        path: fs::canonicalize(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
            .to_string(),
        fs_type: m.fs_type.clone(),
        mount_point: m.mount_point.display().to_string(),
        mount_options: m.options.clone(),
        fs_options: m.super_options.clone(),
        source: m.source.clone(),
        devices: devices_of(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_parse() {
        let m = parse_mountinfo_line(
            "36 35 0:52 / /mnt/with\\040space rw,noatime shared:1 - btrfs /dev/loop3 \
             rw,ssd,space_cache=v2,subvolid=5,subvol=/",
        )
        .unwrap();
        assert_eq!(m.dev, (0, 52));
        assert_eq!(m.mount_point, PathBuf::from("/mnt/with space"));
        assert_eq!(m.options, "rw,noatime");
        assert_eq!(m.fs_type, "btrfs");
        assert_eq!(m.source, "/dev/loop3");
        assert!(m.super_options.starts_with("rw,ssd"));
        assert!(parse_mountinfo_line("garbage").is_none());
    }

    #[test]
    fn the_root_file_system_is_found() {
        let s = storage_of(Path::new("/")).expect("/ is mounted");
        assert_eq!(s.mount_point, "/");
        assert!(!s.fs_type.is_empty());
        let proc = storage_of(Path::new("/proc/self")).expect("/proc is mounted");
        assert_eq!(proc.fs_type, "proc");
        assert!(proc.devices.is_empty());
    }
}

/// The sizes of a tree: the files' logical bytes and the blocks allocated to it (as `du`;
/// smaller than the logical size where the file system compresses or files are sparse).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeSize {
    /// Regular files.
    pub files: u64,
    /// Sum of their lengths.
    pub logical_bytes: u64,
    /// Allocated blocks of files and directories, bytes.
    pub allocated_bytes: u64,
}

/// The sizes of `path` (a file, or a directory walked without following links).
pub fn tree_size(path: &Path) -> TreeSize {
    let mut size = TreeSize::default();
    add_size(path, &mut size);
    size
}

fn add_size(path: &Path, size: &mut TreeSize) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    size.allocated_bytes += meta.blocks() * 512;
    if meta.is_file() {
        size.files += 1;
        size.logical_bytes += meta.len();
    } else if meta.is_dir() {
        for entry in fs::read_dir(path).into_iter().flatten().flatten() {
            add_size(&entry.path(), size);
        }
    }
}

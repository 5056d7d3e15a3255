//! Programs and libraries beside the servers: sysbench, perf (and whether the kernel lets
//! this user profile), the file-system tools of storage studies, the allocators of
//! `--malloc`.

use super::{Depth, HostFeature, apt, find, no, with_version, yes};
use crate::request::Malloc;

/// The tools' features.
pub fn check(depth: Depth) -> Vec<HostFeature> {
    let mut out = vec![sysbench(depth), perf(depth)];
    for (name, dirs, package, what) in FS_TOOLS {
        out.push(match find(name, dirs) {
            Some(p) => yes(name, format!("{} ({what})", p.display())),
            None => no(
                name,
                format!("not found ({}, PATH): {what}", dirs.join(", ")),
                apt(package),
            ),
        });
    }
    out.extend([Malloc::Jemalloc, Malloc::Tcmalloc].map(allocator));
    out
}

/// The file-system tools: name, where Debian puts them, the package, what ibench does with
/// them.
const FS_TOOLS: [(&str, &[&str], &str, &str); 3] = [
    (
        "compsize",
        &["/usr/sbin/compsize", "/usr/bin/compsize"],
        "btrfs-compsize",
        "a compressed btrfs's size on disk",
    ),
    (
        "mkfs.xfs",
        &["/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"],
        "xfsprogs",
        "XFS for storage studies",
    ),
    (
        "mkfs.btrfs",
        &[
            "/usr/sbin/mkfs.btrfs",
            "/sbin/mkfs.btrfs",
            "/usr/bin/mkfs.btrfs",
        ],
        "btrfs-progs",
        "btrfs for storage studies",
    ),
];

/// sysbench: prepares tables `ibench micro` runs on, and what its figures are compared with.
fn sysbench(depth: Depth) -> HostFeature {
    match find("sysbench", &["/usr/bin/sysbench"]) {
        Some(p) => match with_version(depth, &p) {
            Ok(found) => yes("sysbench", found),
            Err(why) => no("sysbench", why, apt("sysbench")),
        },
        None => no(
            "sysbench",
            "not found (/usr/bin/sysbench, PATH)".to_string(),
            apt("sysbench"),
        ),
    }
}

/// perf (`--profile`): the binary a run would start, that it runs, and whether the kernel
/// lets this user record the DBMS's processes (`perf_event_paranoid`).
fn perf(depth: Depth) -> HostFeature {
    let install = apt("linux-perf");
    let bin = crate::metrics::profile::perf_binary();
    let found = if bin.components().count() > 1 {
        crate::hide::is_file(&bin).then_some(bin)
    } else {
        find(&bin.to_string_lossy(), &[])
    };
    let Some(path) = found else {
        return no(
            "perf",
            "not found (/usr/bin/perf, PATH)".to_string(),
            install,
        );
    };
    let found = match with_version(depth, &path) {
        Ok(found) => found,
        Err(why) => return no("perf", why, install),
    };
    if nix::unistd::geteuid().is_root() {
        return yes("perf", format!("{found}; root: may profile any process"));
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok());
    match paranoid {
        Some(level) if level > 2 => no(
            "perf",
            format!("{found}, but perf_event_paranoid is {level}: only root may profile"),
            Some("sysctl -w kernel.perf_event_paranoid=2".to_string()),
        ),
        Some(level) => yes(
            "perf",
            format!("{found}; perf_event_paranoid {level}: this user's processes only"),
        ),
        None => yes(
            "perf",
            format!("{found}; perf_event_paranoid unreadable: this user's processes at most"),
        ),
    }
}

/// An allocator `--malloc` preloads.
fn allocator(m: Malloc) -> HostFeature {
    let (file, package) = m.library().unwrap_or_default();
    match m.find_library() {
        Ok(Some(p)) => yes(m.name(), p.display().to_string()),
        Ok(None) => yes(m.name(), "the C library's own".to_string()),
        Err(_) => no(
            m.name(),
            format!(
                "{file} not found in {}",
                crate::request::server::LIB_DIRS.join(", ")
            ),
            apt(package),
        ),
    }
}

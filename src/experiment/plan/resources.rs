//! A setup's resource conditions (`memory_limit`, `io_limit`, `os_cache`, `server_cpus`,
//! `client_cpus`: the flags of the same names), checked as the flags are; a memory limit may
//! be a multiple of the estimated database size (`0.25x`), as `dbms_cache` may.

use toml::Spanned;

use super::super::file::SetupTable;
use super::problems::Problems;
use super::setups::{CacheSize, cache_bytes, parse_cache};
use crate::request::WorkloadSpec;
use crate::request::resources::{self, CpuList, IoLimit, OsCache, Resources};

/// Least memory limit (as `--memory-limit`).
const MIN_MEMORY: u64 = 16 << 20;

/// The resources setup `s` asks for, each problem at its key.
pub(super) fn resources(
    p: &mut Problems<'_>,
    s: &SetupTable,
    workload: &WorkloadSpec,
) -> Resources {
    let mut r = Resources::default();
    if let Some(v) = &s.memory_limit {
        match parse_cache(v.get_ref()) {
            Some(size) => {
                let bytes = cache_bytes(size, workload);
                if bytes < MIN_MEMORY {
                    let what = match size {
                        CacheSize::Times(x) => {
                            format!("{x}x of the estimated database ({} MiB)", bytes >> 20)
                        }
                        CacheSize::Bytes(_) => format!("{} bytes", bytes),
                    };
                    p.at(
                        v,
                        format!("memory_limit {what} is below 16M, too little for any DBMS"),
                    );
                } else {
                    r.memory_limit = Some(bytes);
                }
            }
            None => p.at(
                v,
                format!(
                    "memory_limit {:?} is not a size such as 512M or a multiple of the estimated \
                     database size such as 0.25x",
                    v.get_ref()
                ),
            ),
        }
    }
    let online = resources::online_cpus();
    r.io_limit = check(p, "io_limit", &s.io_limit, IoLimit::parse);
    r.os_cache = check(p, "os_cache", &s.os_cache, OsCache::parse).unwrap_or_default();
    let cpus = |t: &str| CpuList::parse(t, &online);
    r.server_cpus = check(p, "server_cpus", &s.server_cpus, cpus);
    r.client_cpus = check(p, "client_cpus", &s.client_cpus, cpus);
    r
}

/// `v` parsed by `parse`, or a problem at `key`.
fn check<T>(
    p: &mut Problems<'_>,
    key: &str,
    v: &Option<Spanned<String>>,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Option<T> {
    let v = v.as_ref()?;
    match parse(v.get_ref()) {
        Ok(x) => Some(x),
        Err(m) => {
            p.at(v, format!("{key}: {m}"));
            None
        }
    }
}

//! The conditions a run's DBMS works under on this host (issue #31): a memory cap with the
//! page cache included, IO limits, the CPUs of the server and of ibench's clients, and what
//! happens to the OS page cache before each step. Parsed and checked here, applied by
//! `server::cgroup` (a cgroup of the run's own) and the runner; recorded in the run's
//! `config`.

use serde::{Deserialize, Serialize};

/// The run's resource conditions; the default is none (as every run before them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// `--memory-limit`: bytes the DBMS (a managed server, or ibench itself with an embedded
    /// DBMS) may use, page cache included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
    /// `--io-limit`: the DBMS's device IO throttled to these rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_limit: Option<IoLimit>,
    /// `--os-cache`: what happens to the OS page cache of the database's files before each
    /// step.
    #[serde(default)]
    pub os_cache: OsCache,
    /// `--server-cpus`: the CPUs the managed server's processes may run on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<CpuList>,
    /// `--client-cpus`: the CPUs ibench's client threads may run on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpus: Option<CpuList>,
}

impl Resources {
    /// Whether the DBMS needs a cgroup of its own (a memory cap, IO limits or server CPUs).
    pub fn needs_cgroup(&self) -> bool {
        self.memory_limit.is_some() || self.io_limit.is_some() || self.server_cpus.is_some()
    }

    /// Whether none is set.
    pub fn is_default(&self) -> bool {
        *self == Resources::default()
    }

    /// CPUs both the server and the clients may run on (a warning when not empty).
    pub fn shared_cpus(&self) -> Vec<usize> {
        match (&self.server_cpus, &self.client_cpus) {
            (Some(s), Some(c)) => s
                .cpus
                .iter()
                .filter(|x| c.cpus.contains(x))
                .copied()
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// IO rate limits of the DBMS's device (any of them; at least one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoLimit {
    /// Read operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub riops: Option<u64>,
    /// Write operations per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wiops: Option<u64>,
    /// Bytes read per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbps: Option<u64>,
    /// Bytes written per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wbps: Option<u64>,
}

impl IoLimit {
    /// Parses `riops=N,wiops=N,rbps=SIZE,wbps=SIZE` (any of them, each at most once).
    pub fn parse(text: &str) -> Result<IoLimit, String> {
        let mut l = IoLimit::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(format!(
                    "{part:?} is not KEY=VALUE (keys: riops, wiops, rbps, wbps)"
                ));
            };
            let (slot, v) = match key.trim() {
                "riops" => (&mut l.riops, parse_count(value)),
                "wiops" => (&mut l.wiops, parse_count(value)),
                "rbps" => (&mut l.rbps, parse_size(value)),
                "wbps" => (&mut l.wbps, parse_size(value)),
                other => {
                    return Err(format!(
                        "unknown key {other:?} (keys: riops, wiops, rbps, wbps)"
                    ));
                }
            };
            let Some(v) = v.filter(|&v| v > 0) else {
                return Err(format!(
                    "{key}={value:?} is not a positive {}",
                    if key.ends_with("bps") {
                        "size per second such as 50M"
                    } else {
                        "whole number of operations per second"
                    }
                ));
            };
            if slot.replace(v).is_some() {
                return Err(format!("{key} is given twice"));
            }
        }
        if l == IoLimit::default() {
            return Err("expected riops=N, wiops=N, rbps=SIZE or wbps=SIZE".to_string());
        }
        Ok(l)
    }

    /// As given: `riops=200,wbps=10485760`.
    pub fn describe(&self) -> String {
        [
            ("riops", self.riops),
            ("wiops", self.wiops),
            ("rbps", self.rbps),
            ("wbps", self.wbps),
        ]
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(",")
    }
}

/// What happens to the OS page cache of the database's files before each step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OsCache {
    /// Left as it is (the default).
    #[default]
    Keep,
    /// The database's files written back and dropped from the page cache
    /// (`posix_fadvise(DONTNEED)` per file) before each step.
    DropBeforeStep,
}

impl OsCache {
    /// Parses `keep` or `drop-before-step`.
    pub fn parse(text: &str) -> Result<OsCache, String> {
        match text.trim() {
            "keep" => Ok(OsCache::Keep),
            "drop-before-step" => Ok(OsCache::DropBeforeStep),
            other => Err(format!(
                "{other:?} is not an OS cache mode: expected keep or drop-before-step"
            )),
        }
    }
}

/// A list of CPUs as Linux writes them (`0-3,6`), with the CPUs it names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuList {
    /// As given, normalised (`0-1,3`).
    pub text: String,
    /// The CPUs, ascending, each once.
    pub cpus: Vec<usize>,
}

/// Most CPUs a list may name (Linux's own default NR_CPUS bound is 8192).
const MAX_CPU: usize = 8191;

impl CpuList {
    /// Parses `0-3,6`; every CPU must be online on this host (`online`: the host's CPUs).
    pub fn parse(text: &str, online: &[usize]) -> Result<CpuList, String> {
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) else {
                return Err(format!(
                    "{text:?} is not a CPU list such as 0-3,6 (part {part:?})"
                ));
            };
            if a > b || b > MAX_CPU {
                return Err(format!("{text:?}: {part} is not a range of CPUs"));
            }
            cpus.extend(a..=b);
        }
        cpus.sort_unstable();
        cpus.dedup();
        if let Some(c) = cpus.iter().find(|c| !online.contains(c)) {
            return Err(format!(
                "{text:?}: CPU {c} is not online on this host (online: {})",
                format_cpus(online)
            ));
        }
        Ok(CpuList {
            text: format_cpus(&cpus),
            cpus,
        })
    }
}

/// `cpus` (ascending) as Linux writes a list: `0-2,5`.
pub fn format_cpus(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs online on this host (/sys/devices/system/cpu/online; else 0..cores).
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| CpuList::parse(t.trim(), &(0..=MAX_CPU).collect::<Vec<_>>()).ok())
        .map(|l| l.cpus)
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            (0..n).collect()
        })
}

/// A whole number (underscores allowed).
fn parse_count(s: &str) -> Option<u64> {
    s.trim().replace('_', "").parse().ok()
}

/// Largest size accepted: 1 PiB.
const MAX_SIZE: f64 = (1u64 << 50) as f64;

/// Parses a size: bytes, or a number with K, M, G or T (powers of 1024; a trailing `B` or
/// `iB` allowed).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s
        .strip_suffix("iB")
        .or_else(|| s.strip_suffix('B'))
        .unwrap_or(s);
    let (num, mult) = match s.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return None,
            };
            (&s[..i], m)
        }
        _ => (s, 1),
    };
    let v: f64 = num.trim().parse().ok()?;
    let bytes = v * mult as f64;
    (bytes.is_finite() && (1.0..=MAX_SIZE).contains(&bytes)).then_some(bytes as u64)
}

/// Parses `--memory-limit`: a size of at least 16 MiB (less leaves no server running).
pub fn parse_memory_limit(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Some(v) if v >= 16 << 20 => Ok(v),
        Some(_) => Err(format!("{s:?} is below 16M, too little for any DBMS")),
        None => Err(format!("{s:?} is not a size such as 512M or 2G")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_limits_parse_and_refuse() {
        let l = IoLimit::parse("riops=100, wbps=10M").unwrap();
        assert_eq!(l.riops, Some(100));
        assert_eq!(l.wbps, Some(10 << 20));
        assert_eq!(l.describe(), "riops=100,wbps=10485760");
        for bad in [
            "",
            "riops",
            "riops=0",
            "x=1",
            "wbps=lots",
            "riops=1,riops=2",
        ] {
            assert!(IoLimit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpu_lists_parse_and_refuse() {
        let online = [0, 1, 2, 3];
        let l = CpuList::parse("3,0-1,1", &online).unwrap();
        assert_eq!(l.cpus, [0, 1, 3]);
        assert_eq!(l.text, "0-1,3");
        for bad in ["", "a", "2-1", "7", "0-99999"] {
            assert!(CpuList::parse(bad, &online).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_and_memory_limits() {
        assert_eq!(parse_size("256M"), Some(256 << 20));
        assert_eq!(parse_size("1.5GiB"), Some(3 << 29));
        assert_eq!(parse_memory_limit("1G"), Ok(1 << 30));
        assert!(parse_memory_limit("1M").is_err());
        assert!(parse_memory_limit("-1G").is_err());
        assert!(parse_memory_limit("9e99").is_err());
    }
}

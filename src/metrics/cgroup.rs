//! The figures of the DBMS's own cgroup (made by `server::cgroup` for `--memory-limit`,
//! `--io-limit`, `--server-cpus`): memory charged (page cache included), its peak, major
//! faults, the limit's hits, and IO on the data directory's device, read at a step's start
//! and end into a [`CgroupStep`].

use std::fs;
use std::path::{Path, PathBuf};

use crate::results::cost::CgroupStep;

/// Where a cgroup's figures are read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgroupFiles {
    /// 1 (a hierarchy per controller) or 2 (the unified hierarchy).
    pub version: u8,
    /// The memory controller's directory (v2: the cgroup's directory).
    pub memory: Option<PathBuf>,
    /// The blkio controller's directory (v2: the cgroup's directory).
    pub io: Option<PathBuf>,
    /// `major:minor` of the device whose IO is counted.
    pub device: Option<String>,
    /// The memory limit set, bytes.
    pub memory_limit: Option<u64>,
    /// The directory whose `cpu.pressure`, `io.pressure` and `memory.pressure` are the
    /// cgroup's own pressure stall information: the cgroup itself on v2; on a v1 host that
    /// mounts the unified hierarchy too (hybrid), the run's cgroup there.
    pub pressure: Option<PathBuf>,
}

/// One reading of a cgroup's counters (memory levels and cumulative counts).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CgroupCounters {
    /// Memory charged now, bytes.
    pub usage: Option<u64>,
    /// Peak since the last reset, bytes.
    pub peak: Option<u64>,
    /// Page cache charged now, bytes.
    pub cache: Option<u64>,
    /// Major faults, cumulative.
    pub major_faults: Option<u64>,
    /// Pages in (v1 pgpgin; v2 workingset_refault_file), cumulative.
    pub page_ins: Option<u64>,
    /// Limit hits, cumulative.
    pub limit_hits: Option<u64>,
    /// Processes killed for want of memory, cumulative.
    pub oom_kills: Option<u64>,
    /// Device bytes read, written; operations read, written; cumulative.
    pub io: Option<[u64; 4]>,
    /// The cgroup's own pressure stall totals, when the kernel keeps them.
    pub psi: Option<super::pressure::PressureTotals>,
}

fn read_u64(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The value of `key` in a `key value` file (memory.stat, memory.events).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

impl CgroupFiles {
    /// Reads every counter once; what cannot be read is `None`.
    pub fn read(&self) -> CgroupCounters {
        let mut c = CgroupCounters::default();
        if let Some(m) = &self.memory {
            let stat = fs::read_to_string(m.join("memory.stat")).unwrap_or_default();
            if self.version == 2 {
                c.usage = read_u64(&m.join("memory.current"));
                c.peak = read_u64(&m.join("memory.peak"));
                c.cache = keyed(&stat, "file");
                c.page_ins = keyed(&stat, "workingset_refault_file");
                let events = fs::read_to_string(m.join("memory.events")).unwrap_or_default();
                c.limit_hits = keyed(&events, "max");
                c.oom_kills = keyed(&events, "oom_kill");
            } else {
                c.usage = read_u64(&m.join("memory.usage_in_bytes"));
                c.peak = read_u64(&m.join("memory.max_usage_in_bytes"));
                c.cache = keyed(&stat, "cache");
                c.page_ins = keyed(&stat, "pgpgin");
                c.limit_hits = read_u64(&m.join("memory.failcnt"));
                let oom = fs::read_to_string(m.join("memory.oom_control")).unwrap_or_default();
                c.oom_kills = keyed(&oom, "oom_kill");
            }
            c.major_faults = keyed(&stat, "pgmajfault");
        }
        c.psi = self
            .pressure
            .as_deref()
            .and_then(super::pressure::cgroup_totals);
        if let (Some(dir), Some(dev)) = (&self.io, &self.device) {
            c.io = if self.version == 2 {
                io_v2(dir, dev)
            } else {
                io_v1(dir, dev)
            };
        }
        c
    }

    /// Starts the peak over again (at a step's start): v1 max_usage_in_bytes, v2 memory.peak
    /// (Linux 6.12 and later); where the kernel refuses, the peak is since the cgroup began.
    pub fn reset_peak(&self) {
        if let Some(m) = &self.memory {
            let file = if self.version == 2 {
                "memory.peak"
            } else {
                "memory.max_usage_in_bytes"
            };
            let _ = fs::write(m.join(file), "0");
        }
    }

    /// The step's figures from readings at its start `a` and end `b`.
    pub fn step(&self, a: &CgroupCounters, b: &CgroupCounters) -> CgroupStep {
        let grew = |x: Option<u64>, y: Option<u64>| Some(y?.saturating_sub(x?));
        let io = |i: usize| grew(a.io.map(|v| v[i]), b.io.map(|v| v[i]));
        CgroupStep {
            version: self.version,
            memory_limit_bytes: self.memory_limit,
            memory_usage_bytes: b.usage,
            memory_peak_bytes: b.peak,
            page_cache_bytes: b.cache,
            major_faults: grew(a.major_faults, b.major_faults),
            page_ins: grew(a.page_ins, b.page_ins),
            limit_hits: grew(a.limit_hits, b.limit_hits),
            oom_kills: grew(a.oom_kills, b.oom_kills),
            read_bytes: io(0),
            write_bytes: io(1),
            reads: io(2),
            writes: io(3),
        }
    }
}

/// v1: blkio.throttle.io_service_bytes / io_serviced lines `MAJ:MIN Read N`.
fn io_v1(dir: &Path, dev: &str) -> Option<[u64; 4]> {
    let field = |file: &str, op: &str| -> Option<u64> {
        let text = fs::read_to_string(dir.join(file)).ok()?;
        Some(
            text.lines()
                .filter_map(|l| {
                    let mut w = l.split_whitespace();
                    (w.next()? == dev && w.next()? == op)
                        .then(|| w.next()?.parse::<u64>().ok())
                        .flatten()
                })
                .sum(),
        )
    };
    Some([
        field("blkio.throttle.io_service_bytes", "Read")?,
        field("blkio.throttle.io_service_bytes", "Write")?,
        field("blkio.throttle.io_serviced", "Read")?,
        field("blkio.throttle.io_serviced", "Write")?,
    ])
}

/// v2: io.stat lines `MAJ:MIN rbytes=N wbytes=N rios=N wios=N ...`.
fn io_v2(dir: &Path, dev: &str) -> Option<[u64; 4]> {
    let text = fs::read_to_string(dir.join("io.stat")).ok()?;
    let mut v = [0u64; 4];
    if let Some(line) = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(dev))
    {
        for kv in line.split_whitespace().skip(1) {
            let Some((k, n)) = kv.split_once('=') else {
                continue;
            };
            let i = match k {
                "rbytes" => 0,
                "wbytes" => 1,
                "rios" => 2,
                "wios" => 3,
                _ => continue,
            };
            v[i] = n.parse().unwrap_or(0);
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_files_and_steps() {
        let stat = "cache 4096\nrss 8192\npgmajfault 7\n";
        assert_eq!(keyed(stat, "cache"), Some(4096));
        assert_eq!(keyed(stat, "pgmajfault"), Some(7));
        assert_eq!(keyed(stat, "pgpgin"), None);
        let f = CgroupFiles {
            version: 1,
            memory_limit: Some(1 << 28),
            ..Default::default()
        };
        let a = CgroupCounters {
            major_faults: Some(7),
            io: Some([10, 20, 1, 2]),
            ..Default::default()
        };
        let b = CgroupCounters {
            major_faults: Some(17),
            peak: Some(100),
            io: Some([110, 20, 3, 2]),
            ..Default::default()
        };
        let s = f.step(&a, &b);
        assert_eq!(s.major_faults, Some(10));
        assert_eq!(s.read_bytes, Some(100));
        assert_eq!(s.reads, Some(2));
        assert_eq!(s.memory_peak_bytes, Some(100));
        assert_eq!(s.limit_hits, None);
    }
}

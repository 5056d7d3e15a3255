//! What a step cost, as the results record it: the DBMS's and ibench's processes, the host and
//! the device over the step's window, per op, peaks, the database size and per-second series
//! (docs/metrics.md has every figure's formula; `crate::metrics::efficiency` computes them).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Cost of a step, measured from /proc over the step's window (see docs/metrics.md).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Efficiency {
    /// What per-op figures divide by: `insert` (rows inserted; load steps) or `query`.
    pub per: String,
    /// The divisor: rows inserted or queries.
    pub ops: u64,
    /// Whose figures `dbms` holds: a process tree, ibench itself (embedded DBMS), or why there
    /// are none.
    pub dbms_source: String,
    /// The DBMS process tree over the step; `None` when no process is known.
    pub dbms: Option<ProcDelta>,
    /// ibench itself (all threads).
    pub client: ProcDelta,
    /// Host CPU busy time, seconds (all CPUs).
    pub host_cpu_s: f64,
    /// Host context switches.
    pub host_context_switches: u64,
    /// The block device under the database.
    pub device: Option<DeviceDelta>,
    /// Figures per op (`None` where the source is unknown or the step has no ops).
    pub per_op: Option<PerOp>,
    /// Peaks over the step's samples.
    pub peak: Peaks,
    /// Database size at step end.
    pub db_size: DbSize,
    /// One value per second of the step.
    pub per_second: EfficiencySeries,
    /// The DBMS counters engineers read first, difference over the step per op.
    #[serde(default)]
    pub counters_per_op: BTreeMap<String, f64>,
    /// CPU the /proc samples of this step cost ibench (coordinator thread), milliseconds.
    #[serde(default)]
    pub sampler_cpu_ms: f64,
    /// Samples taken (start, once a second, end).
    #[serde(default)]
    pub samples: usize,
    /// The DBMS's own cgroup over the step (`--memory-limit`, `--io-limit`,
    /// `--server-cpus`): its memory, faults and IO as the kernel charged them to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupStep>,
    /// Each server of a cluster on its own (the primary or n1 first, then each replica or
    /// node): `dbms` is their sum. Empty for a single server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerWork>,
    /// What the rest of the host did meanwhile, and whether it disturbed the step; `None`
    /// where the DBMS's processes are not known (a server given by URL without its pid) and
    /// in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference: Option<super::interference::Interference>,
}

/// One server of a cluster over a step: its process tree's work (the primary's, a replica's,
/// a Galera node's).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ServerWork {
    /// `primary`, `r1`, `n2`...
    pub name: String,
    /// Its processes' CPU, IO and context switches over the step.
    #[serde(flatten)]
    pub work: ProcDelta,
    /// /proc/PID/io was readable at both ends.
    pub io_known: bool,
    /// The largest resident memory of any sample of the step, bytes.
    pub peak_rss_bytes: u64,
}

/// What the kernel charged to the DBMS's cgroup over a step (memory figures at the step's
/// end unless named otherwise; IO on the data directory's device).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgroupStep {
    /// `v1` or `v2`, as 1 or 2.
    pub version: u8,
    /// The memory limit in effect, bytes.
    pub memory_limit_bytes: Option<u64>,
    /// Memory charged at the step's end, page cache included, bytes.
    pub memory_usage_bytes: Option<u64>,
    /// Most memory charged during the step (v1 memory.max_usage_in_bytes, v2 memory.peak;
    /// reset at the step's start where the kernel allows), bytes.
    pub memory_peak_bytes: Option<u64>,
    /// Page cache charged at the step's end (v1 `cache`, v2 `file`), bytes.
    pub page_cache_bytes: Option<u64>,
    /// Major page faults (a page read from the device) during the step.
    pub major_faults: Option<u64>,
    /// Pages charged in during the step (v1 `pgpgin`; v2: file pages refaulted,
    /// `workingset_refault_file`).
    pub page_ins: Option<u64>,
    /// Times the limit was hit (v1 memory.failcnt, v2 memory.events `max`): reclaim forced
    /// by the cap.
    pub limit_hits: Option<u64>,
    /// Processes the kernel killed for want of memory under the limit (v1 memory.oom_control
    /// `oom_kill`, v2 memory.events `oom_kill`) during the step.
    pub oom_kills: Option<u64>,
    /// Bytes read from the device by the cgroup.
    pub read_bytes: Option<u64>,
    /// Bytes written to the device by the cgroup (v1: direct and synchronous writes; the
    /// kernel's own writeback is not charged to a v1 cgroup).
    pub write_bytes: Option<u64>,
    /// Read operations.
    pub reads: Option<u64>,
    /// Write operations.
    pub writes: Option<u64>,
}

/// The work of a set of processes: CPU, storage bytes and calls, context switches. Read as
/// cumulative counters ([`crate::metrics::proc::ProcCounters`]) and stored as their growth
/// over a step ([`ProcDelta`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProcWork {
    /// User CPU, seconds.
    pub user_s: f64,
    /// System CPU, seconds.
    pub sys_s: f64,
    /// Bytes read from storage by the processes (`read_bytes` of /proc/PID/io).
    pub read_bytes: u64,
    /// Bytes written to storage by the processes (`write_bytes`).
    pub write_bytes: u64,
    /// Read syscalls (`syscr`).
    pub read_calls: u64,
    /// Write syscalls (`syscw`).
    pub write_calls: u64,
    /// Voluntary context switches.
    pub voluntary_cs: u64,
    /// Involuntary context switches.
    pub involuntary_cs: u64,
}

impl ProcWork {
    /// User + system CPU, seconds.
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }

    /// The growth of these counters since `earlier` (never negative).
    pub fn since(&self, earlier: &ProcWork) -> ProcWork {
        ProcWork {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            read_calls: self.read_calls.saturating_sub(earlier.read_calls),
            write_calls: self.write_calls.saturating_sub(earlier.write_calls),
            voluntary_cs: self.voluntary_cs.saturating_sub(earlier.voluntary_cs),
            involuntary_cs: self.involuntary_cs.saturating_sub(earlier.involuntary_cs),
        }
    }

    /// Adds `other`'s work.
    pub fn add(&mut self, other: &ProcWork) {
        self.user_s += other.user_s;
        self.sys_s += other.sys_s;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.read_calls += other.read_calls;
        self.write_calls += other.write_calls;
        self.voluntary_cs += other.voluntary_cs;
        self.involuntary_cs += other.involuntary_cs;
    }
}

/// Differences of a process set's counters over a step.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProcDelta {
    /// User + system CPU, seconds.
    pub cpu_s: f64,
    /// What the processes did.
    #[serde(flatten)]
    pub work: ProcWork,
    /// Processes at step end.
    pub processes: u64,
}

impl ProcDelta {
    /// `work` done by `processes` processes.
    pub fn of(work: ProcWork, processes: u64) -> Self {
        ProcDelta {
            cpu_s: work.cpu_s(),
            work,
            processes,
        }
    }

    /// Adds `other`'s work and processes.
    pub fn add(&mut self, other: &ProcDelta) {
        self.cpu_s += other.cpu_s;
        self.work.add(&other.work);
        self.processes += other.processes;
    }
}

/// Differences of a block device's counters over a step.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceDelta {
    /// Device name in /proc/diskstats.
    pub name: String,
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Milliseconds the device was busy.
    pub io_ms: u64,
}

/// Cost per op (per row inserted in load steps, per query in query steps).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PerOp {
    /// DBMS CPU, microseconds.
    pub dbms_cpu_us: Option<f64>,
    /// ibench CPU, microseconds.
    pub client_cpu_us: f64,
    /// Host CPU (everything), microseconds.
    pub host_cpu_us: f64,
    /// Device KB read.
    pub kb_read: Option<f64>,
    /// Device KB written.
    pub kb_written: Option<f64>,
    /// Device reads.
    pub reads: Option<f64>,
    /// Device writes.
    pub writes: Option<f64>,
    /// KB read by the DBMS processes (/proc/PID/io).
    pub dbms_kb_read: Option<f64>,
    /// KB written by the DBMS processes.
    pub dbms_kb_written: Option<f64>,
    /// Context switches of the DBMS processes (voluntary + involuntary).
    pub dbms_cs: Option<f64>,
    /// Context switches of the host.
    pub host_cs: f64,
}

/// Peak memory over a step's samples, bytes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Peaks {
    /// RSS of the DBMS processes, summed (shared memory counted once per process).
    pub dbms_rss_bytes: Option<u64>,
    /// VSZ of the DBMS processes, summed.
    pub dbms_vsz_bytes: Option<u64>,
    /// PSS of the DBMS processes, summed (shared memory split between them).
    pub dbms_pss_bytes: Option<u64>,
    /// RSS of ibench.
    pub client_rss_bytes: u64,
}

/// Database size at step end, bytes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DbSize {
    /// As the DBMS reports it (pg_database_size, information_schema, SQLite pages).
    pub dbms_bytes: Option<u64>,
    /// Allocated on disk by the database's files (`du`): below `files_bytes` where the file
    /// system compresses (ZFS) or files are sparse. btrfs reports a compressed file's blocks
    /// uncompressed here: `btrfs_bytes` has what they take.
    pub disk_bytes: Option<u64>,
    /// The logical size of the database's files (`du --apparent-size`); absent in results of
    /// earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_bytes: Option<u64>,
    /// On btrfs: the bytes the database's file extents take on disk, compressed ones at their
    /// compressed size, shared ones once (`compsize`, which needs root); absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub btrfs_bytes: Option<u64>,
}

impl DbSize {
    /// What the database's files take on disk: on btrfs what their extents take (compressed
    /// ones at their compressed size), elsewhere the blocks allocated to them.
    pub fn on_disk(&self) -> Option<u64> {
        self.btrfs_bytes.or(self.disk_bytes)
    }
}

/// Per-second series of cost figures; index i covers seconds [i, i+1) of the step.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EfficiencySeries {
    /// DBMS CPU seconds in each second (1.0 = one core busy).
    pub dbms_cpu_s: Vec<f64>,
    /// ibench CPU seconds.
    pub client_cpu_s: Vec<f64>,
    /// Host CPU seconds (all CPUs).
    pub host_cpu_s: Vec<f64>,
    /// Device KB read.
    pub device_kb_read: Vec<f64>,
    /// Device KB written.
    pub device_kb_written: Vec<f64>,
    /// DBMS RSS at the end of each second, bytes.
    pub dbms_rss_bytes: Vec<u64>,
    /// CPU other processes used in each second, cores (`efficiency.interference`'s figure
    /// second by second; the kernel's threads are read at the step's ends only, so here they
    /// count as others); empty where the DBMS's processes are unknown and in older documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others_cpu_cores: Vec<f64>,
    /// Steal in each second, cores; empty likewise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steal_cores: Vec<f64>,
    /// The DBMS's gauges at the end of each second, by name (`Dbms::gauges`: RocksDB's L0
    /// files, pending compaction bytes...; docs/metrics.md); `null` where a reading lacked
    /// it. Absent in documents of DBMS without gauges and of older versions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub gauges: BTreeMap<String, Vec<Option<f64>>>,
    /// The DBMS's own cgroup (`--memory-limit`, `--io-limit`, `--server-cpus`) second by
    /// second; absent without one (and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupSeconds>,
}

/// The DBMS's cgroup's figures in each second of a step (what `CgroupStep` has for the step
/// as a whole); 0 where a reading lacked the figure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupSeconds {
    /// Memory charged at the end of each second, page cache included, bytes.
    pub memory_bytes: Vec<u64>,
    /// Page cache charged at the end of each second, bytes.
    pub cache_bytes: Vec<u64>,
    /// Major faults in each second (per second of the real interval).
    pub major_faults: Vec<f64>,
    /// Times the memory limit was hit in each second (reclaim under the cap).
    pub limit_hits: Vec<f64>,
}

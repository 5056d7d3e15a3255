//! What a step cost, read from /proc: the DBMS process tree, ibench itself, the host CPU, and
//! the storage device under the database.
//!
//! A [`Sample`] is one reading of cumulative counters; the difference of two samples is what
//! happened between them. CPU of processes that exited between samples is not lost: a parent's
//! `cutime`/`cstime` and `/proc/PID/io` include the children it has reaped (PostgreSQL's
//! postmaster reaps its backends), so the tree's total counts them. Context switches of exited
//! children are the one figure Linux does not hand on to the parent.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use procfs::process::Process;
use procfs::{CurrentSI, KernelStats};
use serde::{Deserialize, Serialize};

use crate::results::model::ProcWork;

/// Cumulative counters of a set of processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcCounters {
    /// CPU (live processes, plus children they reaped), storage IO and context switches (all
    /// live threads, from /proc/PID/task/*/status).
    #[serde(flatten)]
    pub work: ProcWork,
    /// Resident memory, bytes (sum over processes: shared pages count once per process).
    pub rss_bytes: u64,
    /// Virtual memory, bytes (sum over processes).
    pub vsz_bytes: u64,
    /// Proportional set size, bytes (shared pages split between the processes that map them).
    pub pss_bytes: u64,
    /// Processes in the set.
    pub processes: u64,
    /// /proc/PID/io was readable for every process (it needs ptrace access: another user's
    /// server hides it).
    pub io_known: bool,
    /// /proc/PID/smaps_rollup was read (and readable) for every process.
    pub pss_known: bool,
}

impl ProcCounters {
    /// User + system CPU, seconds.
    pub fn cpu_s(&self) -> f64 {
        self.work.cpu_s()
    }

    fn add(&mut self, o: &ProcCounters) {
        self.work.add(&o.work);
        self.rss_bytes += o.rss_bytes;
        self.vsz_bytes += o.vsz_bytes;
        self.pss_bytes += o.pss_bytes;
        self.processes += o.processes;
        self.io_known &= o.io_known;
        self.pss_known &= o.pss_known;
    }
}

/// Host-wide cumulative counters from /proc/stat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCounters {
    /// CPU time not idle and not waiting for IO, seconds, over all CPUs.
    pub busy_s: f64,
    /// Context switches since boot.
    pub context_switches: u64,
    /// CPU time the hypervisor ran others on this VM's CPUs (steal), seconds, all CPUs.
    pub steal_s: f64,
    /// Interrupt and softirq time, seconds, all CPUs (part of `busy_s`): the kernel serving
    /// whoever did IO, the target most of all.
    pub irq_s: f64,
    /// CPU of the kernel's own threads (children of kthreadd: writeback, the journal),
    /// seconds; read only in the samples that read PSS (a step's start and end).
    pub kernel_threads_s: Option<f64>,
    /// CPUs in /proc/stat.
    pub cpus: u32,
    /// Pressure stall totals (`/proc/pressure`), when the kernel has them.
    pub psi: Option<super::pressure::PressureTotals>,
}

/// Cumulative counters of one block device from /proc/diskstats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceCounters {
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes read (sectors x 512).
    pub read_bytes: u64,
    /// Bytes written (sectors x 512).
    pub write_bytes: u64,
    /// Milliseconds spent doing IO.
    pub io_ms: u64,
}

/// One reading of everything the sampler watches.
#[derive(Clone, Debug)]
pub struct Sample {
    /// When it was taken.
    pub at: std::time::Instant,
    /// The DBMS process tree, when known.
    pub dbms: Option<ProcCounters>,
    /// ibench itself.
    pub client: ProcCounters,
    /// The host.
    pub host: HostCounters,
    /// The device under the database, when it is a block device.
    pub device: Option<DeviceCounters>,
    /// Context switches of each DBMS thread (a server's tree; empty for an embedded DBMS).
    pub dbms_threads: ThreadSwitches,
    /// The DBMS's own cgroup, when it has one.
    pub cgroup: Option<super::cgroup::CgroupCounters>,
    /// Each server's process tree on its own, in the order of [`Watch::server_names`]
    /// (empty for a single server; a server whose process is gone reads as zeros).
    pub servers: Vec<ProcCounters>,
    /// In duet ([`DUET_ROOT_ENV`]): the process tree of the experiment that runs this run
    /// and its partner at once (both runs and their servers), which the interference test
    /// counts as the target's own instead of a neighbour. `None` otherwise.
    pub ours: Option<ProcCounters>,
}

/// The environment variable through which `ibench experiment --duet` gives each of a pair's
/// runs its own pid: the root of the process tree the pair (both runs, their servers) forms.
pub const DUET_ROOT_ENV: &str = "IBENCH_DUET_ROOT";

/// The duet's root pid ([`DUET_ROOT_ENV`]), read once; `None` outside a duet.
pub fn duet_root() -> Option<i32> {
    static ROOT: std::sync::OnceLock<Option<i32>> = std::sync::OnceLock::new();
    *ROOT.get_or_init(|| {
        let pid: i32 = std::env::var(DUET_ROOT_ENV).ok()?.trim().parse().ok()?;
        (pid > 1).then_some(pid)
    })
}

impl Default for Sample {
    fn default() -> Self {
        Sample {
            at: std::time::Instant::now(),
            dbms: None,
            client: ProcCounters::default(),
            host: HostCounters::default(),
            device: None,
            dbms_threads: ThreadSwitches::new(),
            cgroup: None,
            servers: Vec::new(),
            ours: None,
        }
    }
}

/// Context switches per thread id: (voluntary, involuntary).
pub type ThreadSwitches = HashMap<i32, (u64, u64)>;

/// Reads one process's counters; `None` if it has gone. Each thread's context switches are
/// also added to `threads` when given.
fn read_process(
    p: &Process,
    with_pss: bool,
    mut threads: Option<&mut ThreadSwitches>,
) -> Option<ProcCounters> {
    let stat = p.stat().ok()?;
    let tps = procfs::ticks_per_second() as f64;
    let mut c = ProcCounters {
        work: ProcWork {
            user_s: (stat.utime as f64 + stat.cutime.max(0) as f64) / tps,
            sys_s: (stat.stime as f64 + stat.cstime.max(0) as f64) / tps,
            ..Default::default()
        },
        rss_bytes: stat.rss * procfs::page_size(),
        vsz_bytes: stat.vsize,
        processes: 1,
        ..Default::default()
    };
    if let Ok(io) = p.io() {
        c.work.read_bytes = io.read_bytes;
        c.work.write_bytes = io.write_bytes;
        c.work.read_calls = io.syscr;
        c.work.write_calls = io.syscw;
        c.io_known = true;
    }
    // /proc/PID/status counts the main thread only: add up every thread's.
    if let Ok(tasks) = p.tasks() {
        for task in tasks.flatten() {
            let Ok(status) = task.status() else { continue };
            let v = status.voluntary_ctxt_switches.unwrap_or(0);
            let iv = status.nonvoluntary_ctxt_switches.unwrap_or(0);
            c.work.voluntary_cs += v;
            c.work.involuntary_cs += iv;
            if let Some(map) = threads.as_deref_mut() {
                map.insert(task.tid, (v, iv));
            }
        }
    }
    if with_pss {
        match pss_bytes(p.pid) {
            Some(pss) => {
                c.pss_bytes = pss;
                c.pss_known = true;
            }
            // A zombie, or a process gone since its stat was read (a parallel worker that
            // ended with the step), holds no memory: its PSS is known, zero.
            None if !running(p.pid as u32) => c.pss_known = true,
            None => {}
        }
    }
    Some(c)
}

/// PSS of `pid` from /proc/PID/smaps_rollup, bytes.
fn pss_bytes(pid: i32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = text.lines().find(|l| l.starts_with("Pss:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The process `root` and all its descendants.
pub fn process_tree(root: i32) -> Vec<Process> {
    let all: Vec<Process> = match procfs::process::all_processes() {
        Ok(it) => it.flatten().collect(),
        Err(_) => return Vec::new(),
    };
    let parent: HashMap<i32, i32> = all
        .iter()
        .filter_map(|p| Some((p.pid, p.stat().ok()?.ppid)))
        .collect();
    let in_tree = |mut pid: i32| {
        for _ in 0..64 {
            if pid == root {
                return true;
            }
            match parent.get(&pid) {
                Some(&pp) if pp > 0 => pid = pp,
                _ => return false,
            }
        }
        false
    };
    all.into_iter().filter(|p| in_tree(p.pid)).collect()
}

/// Whether process `pid` runs: it exists and is not a zombie (a server ibench started and
/// has not reaped yet stays one after SIGKILL) or dead, as /proc/PID/stat says.
pub fn running(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // "pid (comm) S ...": the state follows the last ')'.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z" | "X" | "x"))
}

/// Counters of the tree under `root` (PSS only when `with_pss`: reading smaps is the costly
/// part of a sample).
pub fn tree_counters(root: i32, with_pss: bool) -> Option<ProcCounters> {
    tree_counters_with_threads(root, with_pss, None)
}

/// [`tree_counters`], also recording every thread's context switches in `threads`.
pub fn tree_counters_with_threads(
    root: i32,
    with_pss: bool,
    mut threads: Option<&mut ThreadSwitches>,
) -> Option<ProcCounters> {
    let tree = process_tree(root);
    if tree.is_empty() {
        return None;
    }
    let mut total = ProcCounters {
        io_known: true,
        pss_known: with_pss,
        ..Default::default()
    };
    for p in &tree {
        if let Some(c) = read_process(p, with_pss, threads.as_deref_mut()) {
            total.add(&c);
        }
    }
    Some(total)
}

/// Host CPU and context switches.
pub fn host_counters() -> HostCounters {
    let Ok(k) = KernelStats::current() else {
        return HostCounters::default();
    };
    let t = &k.total;
    // Steal is time the hypervisor gave to others, not work done here.
    let busy_ticks = t.user + t.nice + t.system + t.irq.unwrap_or(0) + t.softirq.unwrap_or(0);
    let tps = procfs::ticks_per_second() as f64;
    HostCounters {
        busy_s: busy_ticks as f64 / tps,
        context_switches: k.ctxt,
        steal_s: t.steal.unwrap_or(0) as f64 / tps,
        irq_s: (t.irq.unwrap_or(0) + t.softirq.unwrap_or(0)) as f64 / tps,
        kernel_threads_s: None,
        cpus: k.cpu_time.len() as u32,
        psi: super::pressure::pressure_totals(),
    }
}

/// CPU of the kernel's own threads (kthreadd, pid 2, and its children), seconds.
pub fn kernel_threads_s() -> f64 {
    let tps = procfs::ticks_per_second() as f64;
    let Ok(all) = procfs::process::all_processes() else {
        return 0.0;
    };
    all.flatten()
        .filter_map(|p| p.stat().ok())
        .filter(|s| s.pid == 2 || s.ppid == 2)
        .map(|s| (s.utime + s.stime) as f64 / tps)
        .sum()
}

/// The block device holding `path` (the partition, dm or md device itself), by its name in
/// /proc/diskstats; a btrfs file system's member devices joined by `+` (`loop3+loop4`);
/// `None` for file systems without one (tmpfs, overlay).
pub fn device_of(path: &Path) -> Option<String> {
    let devices = super::storage::devices_of(path);
    (!devices.is_empty()).then(|| devices.join("+"))
}

/// Counters of device `name` from /proc/diskstats; for `a+b` (a btrfs file system's
/// members), their sums.
pub fn device_counters(name: &str) -> Option<DeviceCounters> {
    let stats = procfs::diskstats().ok()?;
    let mut total: Option<DeviceCounters> = None;
    for part in name.split('+') {
        let d = stats.iter().find(|d| d.name == part)?;
        let t = total.get_or_insert_with(DeviceCounters::default);
        t.reads += d.reads;
        t.writes += d.writes;
        t.read_bytes += d.sectors_read * 512;
        t.write_bytes += d.sectors_written * 512;
        t.io_ms += d.time_in_progress;
    }
    total
}

/// A server's pid that another part of ibench may change while the run goes on (a cluster's
/// node started again after it died).
pub type SharedPid = std::sync::Arc<std::sync::atomic::AtomicU32>;

/// What the sampler watches for one run.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// Root pid of the DBMS process tree; `None` when unknown (an external server without
    /// `--server-pid`).
    pub dbms_pid: Option<u32>,
    /// The DBMS runs inside ibench (SQLite, RocksDB): DBMS and client are the same process.
    pub embedded: bool,
    /// Block device under the database, resolved once.
    pub device: Option<String>,
    /// Files or directories holding the database, for its size on disk.
    pub data_paths: Vec<PathBuf>,
    /// The DBMS's own cgroup (`--memory-limit` and the like), when it has one.
    pub cgroup: Option<super::cgroup::CgroupFiles>,
    /// Root pids of more processes counted as the DBMS's (a managed primary's replicas, a
    /// Galera cluster's other nodes), each with its name (`r1`, `n2`); shared with the
    /// cluster's node watch, which sets the new pid of a node it started again.
    pub more_pids: Vec<(String, SharedPid)>,
    /// The name of the server at `dbms_pid` when there are `more_pids` (`primary`, `n1`).
    pub primary_name: String,
}

impl Watch {
    /// The names of the servers sampled one by one ([`Sample::servers`]): none for a
    /// single server, else the primary's and then each of `more_pids`.
    pub fn server_names(&self) -> Vec<String> {
        if self.more_pids.is_empty() || self.dbms_pid.is_none() {
            return Vec::new();
        }
        std::iter::once(self.primary_name.clone())
            .chain(self.more_pids.iter().map(|(n, _)| n.clone()))
            .collect()
    }
}

impl Watch {
    /// Reads every counter once. PSS is read only when `with_pss` (step start and end, and
    /// once a second: smaps_rollup walks every mapping).
    pub fn sample(&self, with_pss: bool) -> Sample {
        let me = std::process::id() as i32;
        let client = Process::myself()
            .ok()
            .and_then(|p| read_process(&p, false, None))
            .unwrap_or_default();
        let mut dbms_threads = ThreadSwitches::new();
        let mut servers = Vec::new();
        let dbms = match (self.embedded, self.dbms_pid) {
            (true, _) => Some(client),
            (false, Some(pid)) if pid as i32 != me => {
                let mut total =
                    tree_counters_with_threads(pid as i32, with_pss, Some(&mut dbms_threads));
                if !self.more_pids.is_empty() {
                    servers.push(total.unwrap_or_default());
                }
                for (_, more) in &self.more_pids {
                    let more = more.load(std::sync::atomic::Ordering::Relaxed) as i32;
                    let tree = tree_counters_with_threads(more, with_pss, Some(&mut dbms_threads));
                    servers.push(tree.unwrap_or_default());
                    if let (Some(t), Some(m)) = (total.as_mut(), tree) {
                        t.add(&m);
                    }
                }
                total
            }
            _ => None,
        };
        Sample {
            at: std::time::Instant::now(),
            dbms,
            client,
            host: HostCounters {
                kernel_threads_s: with_pss.then(kernel_threads_s),
                ..host_counters()
            },
            device: self.device.as_deref().and_then(device_counters),
            dbms_threads,
            cgroup: self.cgroup.as_ref().map(super::cgroup::CgroupFiles::read),
            servers,
            ours: duet_root().and_then(|root| tree_counters(root, false)),
        }
    }

    /// Bytes the database's files take on disk (allocated blocks), summed over `data_paths`.
    pub fn data_size_bytes(&self) -> Option<u64> {
        if self.data_paths.is_empty() {
            return None;
        }
        Some(self.data_paths.iter().map(|p| disk_usage(p)).sum())
    }
}

impl Watch {
    /// On btrfs, what the database's files take on disk with compression (see
    /// `metrics::compressed`); `None` elsewhere.
    pub fn data_compressed_bytes(&self) -> Option<u64> {
        super::compressed::btrfs_disk_bytes(&self.data_paths)
    }

    /// The logical size of the database's files (their lengths), summed over `data_paths`.
    pub fn data_files_bytes(&self) -> Option<u64> {
        if self.data_paths.is_empty() {
            return None;
        }
        Some(
            self.data_paths
                .iter()
                .map(|p| super::storage::tree_size(p).logical_bytes)
                .sum(),
        )
    }
}

/// Allocated bytes of `path` (recursively for directories), as `du` counts them.
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    if meta.is_dir() {
        fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| disk_usage(&e.path()))
            .sum::<u64>()
            + meta.blocks() * 512
    } else {
        meta.blocks() * 512
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_read() {
        let w = Watch {
            dbms_pid: None,
            embedded: true,
            device: device_of(Path::new("/")),
            data_paths: vec![],
            cgroup: None,
            more_pids: vec![],
            primary_name: String::new(),
        };
        let s = w.sample(true);
        assert!(s.client.rss_bytes > 0);
        assert_eq!(s.dbms, Some(s.client));
        assert!(s.host.context_switches > 0);
    }

    #[test]
    fn a_zombie_in_the_tree_leaves_its_pss_known() {
        // A child that exited and was not reaped yet (a server's worker at a step's end).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let zombie = || {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        };
        for _ in 0..500 {
            if zombie() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(zombie(), "child {pid} did not become a zombie");
        let c = tree_counters(pid, true).expect("the zombie is listed");
        assert_eq!((c.processes, c.pss_known, c.pss_bytes), (1, true, 0));
        child.wait().unwrap();
    }
}

#[cfg(test)]
mod cost {
    use super::*;
    use std::time::Instant;

    /// Where a sample's time goes (run by hand: IBENCH_PID=<postmaster> cargo test --release
    /// --lib sampler_cost -- --ignored --nocapture).
    #[test]
    #[ignore]
    fn sampler_cost() {
        let pid: i32 = std::env::var("IBENCH_PID").unwrap().parse().unwrap();
        let n = 50;
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(process_tree(pid));
        }
        eprintln!("tree: {:?}", t.elapsed() / n);
        let tree = process_tree(pid);
        let t = Instant::now();
        for _ in 0..n {
            for p in &tree {
                std::hint::black_box(read_process(p, false, None));
            }
        }
        eprintln!("read {} procs no pss: {:?}", tree.len(), t.elapsed() / n);
        let t = Instant::now();
        for _ in 0..n {
            for p in &tree {
                std::hint::black_box(pss_bytes(p.pid));
            }
        }
        eprintln!("pss: {:?}", t.elapsed() / n);
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(host_counters());
            std::hint::black_box(device_counters("vda"));
            std::hint::black_box(
                Process::myself()
                    .ok()
                    .and_then(|p| read_process(&p, false, None)),
            );
        }
        eprintln!("host+device+self: {:?}", t.elapsed() / n);
    }
}

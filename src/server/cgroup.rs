//! A cgroup of the run's own for the DBMS (issue #31): the managed server's processes (or,
//! for an embedded DBMS, ibench itself, whose process the DBMS lives in) under a memory cap
//! with the page cache included (`--memory-limit`), IO limits on the data directory's device
//! (`--io-limit`) and a cpuset (`--server-cpus`).
//!
//! cgroup v2 (memory.max, io.max, cpuset.cpus) where the host has the controllers in its
//! unified hierarchy, v1 (memory.limit_in_bytes, blkio.throttle.*, cpuset.cpus/mems) otherwise;
//! neither usable (not root, a controller missing): refused in one line. A v1 cgroup is made
//! under ibench's own cgroup of each hierarchy, a v2 one at the hierarchy's root (v2 lets no
//! controller into a cgroup whose parent holds processes).
//!
//! Named `ibench-<pid>-<run id>`, so that ibench finds its own: removed when the run ends
//! (every path: [`RunCgroup`]'s `Drop`), and after a kill -9 by the next start ([`sweep`]),
//! once the processes are gone and so is the ibench that made it.

use std::fs;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::error::UsageError;
use crate::metrics::cgroup::CgroupFiles;
use crate::request::Resources;

const PREFIX: &str = "ibench-";

/// A v1 throttle rule no device reaches (1 PiB/s): it makes the kernel count the IO.
const UNREACHED_BPS: u64 = 1 << 50;

/// A controller ibench uses, by its v1 and v2 names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Controller {
    Memory,
    Io,
    Cpuset,
}

impl Controller {
    fn v1(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Io => "blkio",
            Controller::Cpuset => "cpuset",
        }
    }

    fn v2(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Io => "io",
            Controller::Cpuset => "cpuset",
        }
    }
}

/// The cgroup hierarchies of this host: the v2 mount with its controllers, and the v1
/// mounts by controller.
#[derive(Debug, Default)]
struct Hierarchies {
    v2: Option<(PathBuf, Vec<String>)>,
    v1: Vec<(String, PathBuf)>,
}

impl Hierarchies {
    fn read() -> Hierarchies {
        let mut h = Hierarchies::default();
        let text = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in text.lines() {
            // ... mount-point ... - fstype source super-options
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let Some(mount) = left.split_whitespace().nth(4) else {
                continue;
            };
            let mut r = right.split_whitespace();
            let (fstype, _source, opts) = (r.next(), r.next(), r.next().unwrap_or(""));
            match fstype {
                Some("cgroup2") if h.v2.is_none() => {
                    let controllers =
                        fs::read_to_string(Path::new(mount).join("cgroup.controllers"))
                            .unwrap_or_default()
                            .split_whitespace()
                            .map(str::to_string)
                            .collect();
                    h.v2 = Some((PathBuf::from(mount), controllers));
                }
                Some("cgroup") => {
                    for o in opts.split(',') {
                        if ["memory", "blkio", "cpuset"].contains(&o) {
                            h.v1.push((o.to_string(), PathBuf::from(mount)));
                        }
                    }
                }
                _ => {}
            }
        }
        h
    }

    fn v1_mount(&self, c: Controller) -> Option<&Path> {
        self.v1
            .iter()
            .find(|(n, _)| n == c.v1())
            .map(|(_, p)| p.as_path())
    }

    /// Whether v2 has every controller of `needed` (none of them bound to v1).
    fn v2_has(&self, needed: &[Controller]) -> bool {
        match &self.v2 {
            Some((_, cs)) => needed.iter().all(|c| cs.iter().any(|x| x == c.v2())),
            None => false,
        }
    }
}

/// This host's cgroups as a run's cgroup would find them (for `ibench doctor`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostCgroups {
    /// The cgroup v2 mount and the controllers its root offers, when v2 is mounted.
    pub v2: Option<(PathBuf, Vec<String>)>,
    /// Per controller ibench uses (`memory`, `io`, `cpuset`, by their v2 names): the cgroup
    /// version a run's cgroup would use it through (2 before 1), or `None`: unusable.
    pub controllers: Vec<(&'static str, Option<u8>)>,
}

/// Reads this host's cgroup hierarchies (/proc/self/mountinfo) into a [`HostCgroups`].
pub fn host() -> HostCgroups {
    let h = Hierarchies::read();
    let controllers = [Controller::Memory, Controller::Io, Controller::Cpuset]
        .into_iter()
        .map(|c| {
            let version = if h.v2_has(&[c]) {
                Some(2)
            } else {
                h.v1_mount(c).map(|_| 1)
            };
            (c.v2(), version)
        })
        .collect();
    HostCgroups {
        v2: h.v2,
        controllers,
    }
}

/// ibench's own cgroup in the v1 hierarchy of `controller` (from /proc/self/cgroup).
fn own_v1_path(controller: &str) -> PathBuf {
    let text = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, list, path) = (parts.next(), parts.next(), parts.next());
        if let (Some(list), Some(path)) = (list, path)
            && list.split(',').any(|c| c == controller)
        {
            return PathBuf::from(path.trim_start_matches('/'));
        }
    }
    PathBuf::new()
}

/// The run's cgroup, made and limited; removed when dropped (ibench moved back out first
/// when it had moved in).
#[derive(Debug)]
pub struct RunCgroup {
    /// 1 or 2.
    pub version: u8,
    /// Its directory in each hierarchy (one for v2).
    dirs: Vec<PathBuf>,
    /// What its figures are read from.
    pub files: CgroupFiles,
    /// Where ibench returns to (each hierarchy's former cgroup.procs) when it moved in.
    moved_from: Vec<PathBuf>,
    /// Leave it (a kept server still runs in it).
    keep: bool,
    /// The cpuset controller's directory.
    cpuset: Option<PathBuf>,
    /// ibench's own cgroup in the hierarchy of each of `dirs`.
    origins: Vec<PathBuf>,
}

/// Open `cgroup.procs` files of a cgroup, for a child to join it between fork and exec
/// ([`Join::pre_exec`]).
pub struct Join {
    files: Vec<fs::File>,
}

impl Join {
    /// The file descriptors written in the child.
    pub fn fds(&self) -> Vec<RawFd> {
        self.files.iter().map(AsRawFd::as_raw_fd).collect()
    }
}

/// Moves the calling process into the cgroups whose `cgroup.procs` are open as `fds`. Runs in
/// a child after fork: writes only ("0": the writer itself), allocates nothing.
pub fn join_in_child(fds: &[RawFd]) -> std::io::Result<()> {
    for &fd in fds {
        // SAFETY: write(2) on a descriptor the parent opened; async-signal-safe.
        let n = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        if n != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn refuse(flag: &str, why: String) -> anyhow::Error {
    UsageError::new(format!("{flag}: {why}")).into()
}

/// The flag to name for what `r` asks.
fn flag_of(r: &Resources) -> &'static str {
    if r.memory_limit.is_some() {
        "--memory-limit"
    } else if r.io_limit.is_some() {
        "--io-limit"
    } else {
        "--server-cpus"
    }
}

/// `major:minor` of the whole disk holding `dir` (a partition's disk: throttling applies to
/// it), when `dir` is on a block device.
pub fn device_number(dir: &Path) -> Option<String> {
    let names = crate::metrics::storage::devices_of(dir);
    let name = names.first()?;
    let sys = fs::canonicalize(format!("/sys/class/block/{name}")).ok()?;
    let disk = if sys.join("partition").exists() {
        sys.parent()?.to_path_buf()
    } else {
        sys
    };
    Some(
        fs::read_to_string(disk.join("dev"))
            .ok()?
            .trim()
            .to_string(),
    )
}

/// Checks, before anything starts, that the cgroup `r` asks for can be made: ibench runs as
/// root and the host has the controllers (v2 or v1). Nothing to check when `r` needs none.
pub fn check(r: &Resources) -> Result<()> {
    if !r.needs_cgroup() {
        return Ok(());
    }
    let flag = flag_of(r);
    if !nix::unistd::geteuid().is_root() {
        return Err(refuse(
            flag,
            "needs root: ibench makes a cgroup for the DBMS (run as root, or leave it out)"
                .to_string(),
        ));
    }
    let h = Hierarchies::read();
    for (c, asked) in [
        (Controller::Memory, r.memory_limit.is_some()),
        (Controller::Io, r.io_limit.is_some()),
        (Controller::Cpuset, r.server_cpus.is_some()),
    ] {
        if asked && !h.v2_has(&[c]) && h.v1_mount(c).is_none() {
            return Err(refuse(
                flag,
                format!(
                    "this host has no usable {} cgroup controller (neither cgroup v2 nor a v1 \
                     hierarchy mounts it)",
                    c.v2()
                ),
            ));
        }
    }
    Ok(())
}

impl RunCgroup {
    /// Makes the cgroup of run `run_id` for what `r` asks, its data on `data_dir`'s device.
    /// Refuses in one line where it cannot (not root, a controller missing, no block device
    /// for `--io-limit`).
    pub fn create(r: &Resources, run_id: &str, data_dir: &Path) -> Result<RunCgroup> {
        let flag = flag_of(r);
        check(r)?;
        let device = device_number(data_dir);
        if r.io_limit.is_some() && device.is_none() {
            return Err(refuse(
                "--io-limit",
                format!(
                    "{} is on no block device (tmpfs, overlay): put the data on one \
                     (--server-data-root)",
                    data_dir.display()
                ),
            ));
        }
        // Required for what is asked; memory and IO otherwise only for their figures.
        let mut needed = Vec::new();
        for (c, asked) in [
            (Controller::Memory, r.memory_limit.is_some()),
            (Controller::Io, r.io_limit.is_some()),
            (Controller::Cpuset, r.server_cpus.is_some()),
        ] {
            if asked {
                needed.push(c);
            }
        }
        let h = Hierarchies::read();
        let name = format!("{PREFIX}{}-{run_id}", std::process::id());
        let mut cg = if h.v2_has(&needed) {
            let mut with = needed.clone();
            with.extend(
                [Controller::Memory, Controller::Io]
                    .into_iter()
                    .filter(|c| !needed.contains(c) && h.v2_has(&[*c])),
            );
            v2_create(&h, &name, &with)?
        } else {
            let mut with = needed.clone();
            with.extend(
                [Controller::Memory, Controller::Io]
                    .into_iter()
                    .filter(|c| !needed.contains(c) && h.v1_mount(*c).is_some()),
            );
            v1_create(&h, &name, &with, flag)?
        };
        cg.files.device = device;
        cg.files.memory_limit = r.memory_limit;
        cg.limit(r)
            .map_err(|e| refuse(flag, format!("cannot set the cgroup's limits: {e:#}")))?;
        Ok(cg)
    }

    /// The directory of controller `c` (v2: the cgroup's one).
    fn dir(&self, c: Controller) -> Option<&Path> {
        match c {
            Controller::Memory => self.files.memory.as_deref(),
            Controller::Io => self.files.io.as_deref(),
            Controller::Cpuset => self.cpuset.as_deref(),
        }
    }

    fn limit(&self, r: &Resources) -> Result<()> {
        let write = |c: Controller, file: &str, value: &str| -> Result<()> {
            let dir = self.dir(c).context("no such controller")?;
            fs::write(dir.join(file), value)
                .with_context(|| format!("{} = {value}", dir.join(file).display()))
        };
        if let Some(cpus) = &r.server_cpus {
            if self.version == 1 {
                let dir = self.dir(Controller::Cpuset).context("no cpuset")?;
                let mems = fs::read_to_string(dir.parent().unwrap_or(dir).join("cpuset.mems"))?;
                write(Controller::Cpuset, "cpuset.mems", mems.trim())?;
            }
            write(Controller::Cpuset, "cpuset.cpus", &cpus.text)?;
        }
        if let Some(bytes) = r.memory_limit {
            let file = if self.version == 2 {
                "memory.max"
            } else {
                "memory.limit_in_bytes"
            };
            write(Controller::Memory, file, &bytes.to_string())?;
        }
        if let (Some(l), Some(dev)) = (r.io_limit, &self.files.device) {
            if self.version == 2 {
                write(
                    Controller::Io,
                    "io.max",
                    &format!("{dev} {}", l.describe().replace(',', " ")),
                )?;
            } else {
                for (file, v) in [
                    ("blkio.throttle.read_iops_device", l.riops),
                    ("blkio.throttle.write_iops_device", l.wiops),
                    ("blkio.throttle.read_bps_device", l.rbps),
                    ("blkio.throttle.write_bps_device", l.wbps),
                ] {
                    if let Some(v) = v {
                        write(Controller::Io, file, &format!("{dev} {v}"))?;
                    }
                }
            }
        }
        if self.version == 1
            && let Some(dev) = &self.files.device
        {
            // v1 counts a cgroup's IO only in a direction with a rule: one no device reaches
            // (1 PiB/s) where the user set none, so that its IO is counted.
            let limit = r.io_limit.unwrap_or_default();
            for (file, set) in [
                ("blkio.throttle.read_bps_device", limit.rbps.or(limit.riops)),
                (
                    "blkio.throttle.write_bps_device",
                    limit.wbps.or(limit.wiops),
                ),
            ] {
                if set.is_none() {
                    write(Controller::Io, file, &format!("{dev} {UNREACHED_BPS}"))?;
                }
            }
        }
        Ok(())
    }

    /// Its `cgroup.procs` files opened, for a server to join as it starts.
    pub fn join(&self) -> Result<Join> {
        let files = self
            .dirs
            .iter()
            .map(|d| {
                fs::OpenOptions::new()
                    .write(true)
                    .open(d.join("cgroup.procs"))
                    .with_context(|| format!("cannot open {}", d.join("cgroup.procs").display()))
            })
            .collect::<Result<_>>()?;
        Ok(Join { files })
    }

    /// Moves ibench itself in (an embedded DBMS lives in its process); it moves back out
    /// before the cgroup is removed.
    pub fn move_self_in(&mut self) -> Result<()> {
        for (d, origin) in self.dirs.iter().zip(&self.origins) {
            self.moved_from.push(origin.join("cgroup.procs"));
            let mut f = fs::OpenOptions::new()
                .write(true)
                .open(d.join("cgroup.procs"))
                .with_context(|| format!("cannot open {}", d.join("cgroup.procs").display()))?;
            f.write_all(std::process::id().to_string().as_bytes())
                .with_context(|| format!("cannot move ibench into {}", d.display()))?;
        }
        Ok(())
    }

    /// Leaves the cgroup in place when the run ends (a kept server runs in it).
    pub fn keep(&mut self) {
        self.keep = true;
    }

    /// The cgroup's name, for messages.
    pub fn describe(&self) -> String {
        self.dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn v2_create(h: &Hierarchies, name: &str, needed: &[Controller]) -> Result<RunCgroup> {
    let (root, _) = h.v2.as_ref().context("no cgroup v2")?;
    // The root's children get the controllers (the root itself may hold processes).
    for c in needed {
        // One at a time: one already enabled, or refused, does not stop the others.
        let _ = fs::write(root.join("cgroup.subtree_control"), format!("+{}", c.v2()));
    }
    let dir = root.join(name);
    let origin = v2_origin(root);
    fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(RunCgroup {
        version: 2,
        dirs: vec![dir.clone()],
        files: CgroupFiles {
            version: 2,
            memory: Some(dir.clone()),
            io: Some(dir.clone()),
            pressure: Some(dir.clone()),
            ..Default::default()
        },
        moved_from: Vec::new(),
        keep: false,
        cpuset: needed.contains(&Controller::Cpuset).then_some(dir),
        origins: vec![origin],
    })
}

fn v1_create(h: &Hierarchies, name: &str, needed: &[Controller], flag: &str) -> Result<RunCgroup> {
    let mut cg = RunCgroup {
        version: 1,
        dirs: Vec::new(),
        files: CgroupFiles {
            version: 1,
            ..Default::default()
        },
        moved_from: Vec::new(),
        keep: false,
        cpuset: None,
        origins: Vec::new(),
    };
    for &c in needed {
        let Some(mount) = h.v1_mount(c) else {
            return Err(refuse(
                flag,
                format!(
                    "this host has no usable {} cgroup controller (neither cgroup v2 nor a v1 \
                     hierarchy mounts it)",
                    c.v2()
                ),
            ));
        };
        let dir = mount.join(own_v1_path(c.v1())).join(name);
        fs::create_dir(&dir).map_err(|e| {
            refuse(
                flag,
                format!("cannot create the cgroup {}: {e}", dir.display()),
            )
        })?;
        match c {
            Controller::Memory => cg.files.memory = Some(dir.clone()),
            Controller::Io => cg.files.io = Some(dir.clone()),
            Controller::Cpuset => cg.cpuset = Some(dir.clone()),
        }
        cg.origins.push(dir.parent().unwrap_or(&dir).to_path_buf());
        cg.dirs.push(dir);
    }
    // A hybrid host mounts the unified hierarchy beside v1: a cgroup there, with no
    // controller, gives the run its own pressure stall information.
    if let Some((root, _)) = &h.v2 {
        let dir = root.join(name);
        if fs::create_dir(&dir).is_ok() {
            cg.files.pressure = Some(dir.clone());
            cg.origins.push(v2_origin(root));
            cg.dirs.push(dir);
        }
    }
    Ok(cg)
}

/// ibench's own cgroup in the unified hierarchy mounted at `root` (`0::` of /proc/self/cgroup).
fn v2_origin(root: &Path) -> PathBuf {
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let own = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("/")
        .trim_start_matches('/');
    root.join(own)
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        for procs in self.moved_from.drain(..) {
            let _ = fs::write(procs, std::process::id().to_string());
        }
        if self.keep {
            return;
        }
        for d in &self.dirs {
            remove(d, Duration::from_secs(10));
        }
    }
}

/// Removes the cgroup `dir`, waiting up to `limit` for its processes to leave (a server that
/// is still exiting).
fn remove(dir: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        match fs::remove_dir(dir) {
            Ok(()) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
            Err(_) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                eprintln!("warning: cannot remove cgroup {}: {e}", dir.display());
                return false;
            }
        }
    }
}

/// Removes the cgroups an earlier ibench made and left (killed before it could): those named
/// `ibench-<pid>-...` whose ibench is gone and which hold no process any more. Said in one
/// line each; quiet where there is nothing (or no permission) to look at.
pub fn sweep() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let h = Hierarchies::read();
    let mut parents: Vec<PathBuf> =
        h.v1.iter()
            .map(|(c, mount)| mount.join(own_v1_path(c)))
            .collect();
    if let Some((root, _)) = &h.v2 {
        parents.push(root.clone());
    }
    for parent in parents {
        let Ok(entries) = fs::read_dir(&parent) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(PREFIX)
                .and_then(|rest| rest.split('-').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue; // its ibench still runs
            }
            let procs = fs::read_to_string(e.path().join("cgroup.procs")).unwrap_or_default();
            if !procs.trim().is_empty() {
                continue; // a kept server, or one still exiting
            }
            if remove(&e.path(), Duration::ZERO) {
                eprintln!(
                    "removed cgroup {} left by an ibench that ended (pid {pid})",
                    e.path().display()
                );
            }
        }
    }
}

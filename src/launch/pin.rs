//! `--client-cpus`: ibench's threads (its client threads, and with an embedded DBMS the DBMS
//! working in them) pinned to CPUs with sched_setaffinity for the run's steps, and set back
//! after (an experiment runs its next cell unpinned).

use anyhow::Result;
use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use crate::error::UsageError;
use crate::request::Resources;
use crate::request::resources::format_cpus;

/// ibench's threads pinned; their former CPUs restored when dropped.
pub struct Pinned {
    before: CpuSet,
}

/// Every thread of ibench (/proc/self/task), the ones started later inheriting it.
fn set_all(set: &CpuSet) -> nix::Result<()> {
    let tasks = std::fs::read_dir("/proc/self/task").map_err(|_| nix::Error::ENOENT)?;
    for t in tasks.flatten() {
        if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
            // A thread that ended meanwhile: nothing to pin.
            match sched_setaffinity(Pid::from_raw(tid), set) {
                Ok(()) | Err(nix::Error::ESRCH) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Pins ibench to `--client-cpus` when given, warning when the server's CPUs are among
/// them.
pub fn clients(r: &Resources) -> Result<Option<Pinned>> {
    let shared = r.shared_cpus();
    if !shared.is_empty() {
        // Said even in a quiet run: it changes what the run measures.
        eprintln!(
            "warning: --server-cpus and --client-cpus share CPU {}: the server and ibench's \
             clients compete for it",
            format_cpus(&shared)
        );
    }
    let Some(list) = &r.client_cpus else {
        return Ok(None);
    };
    let before = sched_getaffinity(Pid::from_raw(0))?;
    let mut set = CpuSet::new();
    for &c in &list.cpus {
        set.set(c)
            .map_err(|_| UsageError::new(format!("--client-cpus: CPU {c} is out of range")))?;
    }
    set_all(&set).map_err(|e| {
        UsageError::new(format!(
            "--client-cpus {}: cannot pin ibench: {e}",
            list.text
        ))
    })?;
    Ok(Some(Pinned { before }))
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = set_all(&self.before);
    }
}

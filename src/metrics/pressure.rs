//! Pressure stall information: the kernel's cumulative time in which tasks waited for a CPU,
//! IO or memory, the host's (/proc/pressure) and a cgroup's own (its `cpu.pressure`,
//! `io.pressure`, `memory.pressure` in the unified hierarchy), read with every sample
//! (`proc.rs`, `cgroup.rs`) and turned into shares of a step's window by `interference.rs`.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Cumulative pressure stall totals, microseconds (`total=` of each line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureTotals {
    /// cpu some.
    pub cpu_some: u64,
    /// io some.
    pub io_some: u64,
    /// io full.
    pub io_full: u64,
    /// memory some.
    pub memory_some: u64,
    /// memory full.
    pub memory_full: u64,
}

/// The `total=` of the `some` and `full` lines of one pressure file.
fn pressure_file(path: &Path) -> Option<(u64, u64)> {
    let text = fs::read_to_string(path).ok()?;
    let total = |kind: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(kind))?;
        line.split_whitespace()
            .find_map(|w| w.strip_prefix("total="))?
            .parse()
            .ok()
    };
    Some((total("some")?, total("full").unwrap_or(0)))
}

/// The host's pressure stall totals; `None` without /proc/pressure.
pub fn pressure_totals() -> Option<PressureTotals> {
    totals(|resource| Path::new("/proc/pressure").join(resource))
}

/// The pressure stall totals of the cgroup in directory `dir` of the unified hierarchy (its
/// tasks' waits alone); `None` where the kernel keeps none.
pub fn cgroup_totals(dir: &Path) -> Option<PressureTotals> {
    totals(|resource| dir.join(format!("{resource}.pressure")))
}

/// The totals of the files `file` names for `cpu`, `io` and `memory`.
fn totals(file: impl Fn(&str) -> PathBuf) -> Option<PressureTotals> {
    let (cpu_some, _) = pressure_file(&file("cpu"))?;
    let (io_some, io_full) = pressure_file(&file("io"))?;
    let (memory_some, memory_full) = pressure_file(&file("memory"))?;
    Some(PressureTotals {
        cpu_some,
        io_some,
        io_full,
        memory_some,
        memory_full,
    })
}

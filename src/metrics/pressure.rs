//! Pressure stall information (/proc/pressure): the kernel's cumulative time in which tasks
//! waited for a CPU, IO or memory, read with every sample (`proc.rs`) and turned into shares
//! of a step's window by `interference.rs`.

use std::fs;

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

/// The `total=` of the `some` and `full` lines of one /proc/pressure file.
fn pressure_file(name: &str) -> Option<(u64, u64)> {
    let text = fs::read_to_string(format!("/proc/pressure/{name}")).ok()?;
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
    let (cpu_some, _) = pressure_file("cpu")?;
    let (io_some, io_full) = pressure_file("io")?;
    let (memory_some, memory_full) = pressure_file("memory")?;
    Some(PressureTotals {
        cpu_some,
        io_some,
        io_full,
        memory_some,
        memory_full,
    })
}

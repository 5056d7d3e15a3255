//! What the rest of the host did while a step ran: CPU used by other processes, CPU the
//! hypervisor gave to others (steal), the kernel's pressure stall information, IO on the
//! database's device by others, and whether that **disturbed** the step (the thresholds and
//! how each figure is taken: `crate::metrics::interference`, docs/metrics.md).

use serde::{Deserialize, Serialize};

/// The host's activity besides the target over one step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Interference {
    /// The step's window, seconds.
    pub window_s: f64,
    /// CPUs of the host.
    pub cpus: u32,
    /// CPU used by processes other than the DBMS's and ibench's, in cores on average over the
    /// window: the host's busy time less the DBMS process tree's, ibench's and the kernel's
    /// own (interrupts and kernel threads, which work for whoever did IO).
    pub others_cpu_cores: f64,
    /// CPU time the hypervisor ran someone else on this VM's CPUs (steal), in cores on
    /// average.
    pub steal_cores: f64,
    /// Share of the window in which some task waited for CPU, IO or memory, and in which all
    /// non-idle tasks waited for IO or memory (`/proc/pressure`, percent); `None` without PSI.
    /// The target's own contention counts too: context, not a verdict.
    pub psi: Option<PressureShares>,
    /// The same shares for the DBMS's own cgroup (its tasks' waits alone: the target's own
    /// contention, where `psi` mixes in everyone's), when it runs in one (`--memory-limit`,
    /// `--io-limit`, `--server-cpus`) and the kernel keeps pressure per cgroup.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_psi: Option<PressureShares>,
    /// MB per second read from the database's device by anyone but the target (the
    /// device's reads less the DBMS's and ibench's); `None` without a device or without the
    /// target's own IO.
    pub others_read_mb_s: Option<f64>,
    /// MB per second written to the device by anyone but the target, likewise (the file
    /// system's journal and metadata writes made for the target count here).
    pub others_written_mb_s: Option<f64>,
    /// Why the step counts as disturbed, one reason per threshold crossed; empty when not.
    pub disturbed: Vec<String>,
    /// In duet (`ibench experiment --duet`): the CPU of the pair (both runs and their
    /// servers, the experiment's process tree), cores on average, which counted as the
    /// target's and not in `others_cpu_cores`; `None` for a run made alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duet_cpu_cores: Option<f64>,
}

impl Interference {
    /// Whether a neighbour took more than the thresholds allow.
    pub fn is_disturbed(&self) -> bool {
        !self.disturbed.is_empty()
    }
}

/// Pressure stall shares of a window, percent of its time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PressureShares {
    /// Some task waited for a CPU.
    pub cpu_some: f64,
    /// Some task waited for IO.
    pub io_some: f64,
    /// Every non-idle task waited for IO.
    pub io_full: f64,
    /// Some task waited for memory (reclaim, refaults).
    pub memory_some: f64,
    /// Every non-idle task waited for memory.
    pub memory_full: f64,
}

//! Interference: what the rest of the host did while a step ran, from the same samples as the
//! step's cost (start and end of the step's window), and whether it **disturbed** the step.
//!
//! - Others' CPU: the host's busy time (/proc/stat, steal excluded) less the DBMS process
//!   tree's and ibench's CPU, less the kernel's own work (interrupts, softirqs and the kernel
//!   threads: writeback and the journal work for whoever wrote, the target most of all); in
//!   cores on average over the window.
//! - Steal: /proc/stat's steal time, in cores.
//! - Pressure stall information: /proc/pressure/{cpu,io,memory} totals, as shares of the
//!   window; and the DBMS's own cgroup's (when it runs in one), its tasks' waits alone. The target's own contention counts too, so PSI is shown as context and decides
//!   nothing.
//! - Others' IO on the database's device: /proc/diskstats less the DBMS's and ibench's
//!   /proc/PID/io.
//!
//! In duet (`ibench experiment --duet`, [`super::proc::DUET_ROOT_ENV`]) the target is the
//! pair: the experiment's whole process tree (both runs and their servers) stands for the DBMS
//! and ibench above, since the partner run is expected; each run's cost per op stays its own.
//!
//! A step is disturbed when others used [`OTHERS_CPU_CORES`] cores or more on average, steal
//! took [`STEAL_CORES`] or more, or others read or wrote [`OTHERS_IO_MB_S`] MB/s or more on the
//! device and more than the target itself did. Runs disturbed in a step are named by `show`,
//! the report's verdict, `compare` (a change it would call there is not called) and `history`
//! (the gate judges the runs that were not disturbed).

use super::pressure::PressureTotals;
use super::proc::Sample;
use crate::results::model::{Interference, PressureShares};

/// Others' CPU, in cores on average over a step, from which the step is disturbed: a quarter
/// of a core (a build or a second benchmark uses one or more; a quiet host's daemons and
/// kernel threads a few hundredths).
pub const OTHERS_CPU_CORES: f64 = 0.25;
/// Steal, in cores on average, from which a step is disturbed: a quarter of a core, as for
/// others' CPU. A VM steals from a target that keeps its cores busy and its disk writing by
/// itself: on the 2-core test VM, 0.11 to 0.21 cores in SQLite steps that fsync every ten
/// rows with nothing else running (a CPU loop beside `dd oflag=dsync`: 0.05; idle: 0), so a
/// tenth of a core called the target's own fsyncs a neighbour and hid their cost from the
/// gate.
pub const STEAL_CORES: f64 = 0.25;
/// Others' reads or writes on the database's device, MB/s, from which a step is disturbed
/// (when also more than the target's own).
pub const OTHERS_IO_MB_S: f64 = 16.0;

/// What the rest of the host did between samples `a` and `b` (the DBMS's tree known).
/// `None` without a DBMS process tree to tell the target from the rest, or a window of 0.
pub fn between(a: &Sample, b: &Sample) -> Option<Interference> {
    let window_s = b.at.duration_since(a.at).as_secs_f64();
    let (da, db) = (a.dbms.as_ref()?, b.dbms.as_ref()?);
    if window_s <= 0.0 {
        return None;
    }
    let embedded = *da == a.client && *db == b.client;
    let client = b.client.work.since(&a.client.work);
    let dbms = db.work.since(&da.work);
    // In duet the partner run and its server are expected: the whole pair is the target.
    let ours = match (&a.ours, &b.ours) {
        (Some(x), Some(y)) => Some(y.work.since(&x.work)),
        _ => None,
    };
    let target_cpu = match &ours {
        Some(o) => o.cpu_s(),
        None => client.cpu_s() + if embedded { 0.0 } else { dbms.cpu_s() },
    };
    // The kernel's own work (interrupts, its threads) serves whoever did IO, the target most
    // of all: not a neighbour.
    let kernel = (b.host.irq_s - a.host.irq_s).max(0.0)
        + match (a.host.kernel_threads_s, b.host.kernel_threads_s) {
            (Some(x), Some(y)) => (y - x).max(0.0),
            _ => 0.0,
        };
    let host_busy = (b.host.busy_s - a.host.busy_s - kernel).max(0.0);
    let others_cpu_cores = (host_busy - target_cpu).max(0.0) / window_s;
    let steal_cores = (b.host.steal_s - a.host.steal_s).max(0.0) / window_s;
    let psi = match (a.host.psi, b.host.psi) {
        (Some(x), Some(y)) => Some(shares(&x, &y, window_s)),
        _ => None,
    };
    let target_psi = match (a.cgroup.and_then(|c| c.psi), b.cgroup.and_then(|c| c.psi)) {
        (Some(x), Some(y)) => Some(shares(&x, &y, window_s)),
        _ => None,
    };
    let io_known = da.io_known && db.io_known;
    let target_io = |f: fn(&crate::results::model::ProcWork) -> u64| match &ours {
        Some(o) => f(o),
        None => f(&client) + if embedded { 0 } else { f(&dbms) },
    };
    let device = match (&a.device, &b.device) {
        (Some(x), Some(y)) if io_known => Some((
            y.read_bytes.saturating_sub(x.read_bytes),
            y.write_bytes.saturating_sub(x.write_bytes),
        )),
        _ => None,
    };
    let mb_s = |bytes: u64| bytes as f64 / 1e6 / window_s;
    let own_read = target_io(|w| w.read_bytes);
    let own_written = target_io(|w| w.write_bytes);
    let others_read_mb_s = device.map(|(r, _)| mb_s(r.saturating_sub(own_read)));
    let others_written_mb_s = device.map(|(_, w)| mb_s(w.saturating_sub(own_written)));
    let mut i = Interference {
        window_s,
        cpus: b.host.cpus,
        others_cpu_cores,
        steal_cores,
        psi,
        target_psi,
        others_read_mb_s,
        others_written_mb_s,
        disturbed: Vec::new(),
        duet_cpu_cores: ours.map(|o| o.cpu_s() / window_s),
    };
    i.disturbed = reasons(&i, (mb_s(own_read), mb_s(own_written)));
    Some(i)
}

/// Pressure totals' growth as shares of a window, percent.
fn shares(a: &PressureTotals, b: &PressureTotals, window_s: f64) -> PressureShares {
    let pct = |x: u64, y: u64| y.saturating_sub(x) as f64 / 1e6 / window_s * 100.0;
    PressureShares {
        cpu_some: pct(a.cpu_some, b.cpu_some),
        io_some: pct(a.io_some, b.io_some),
        io_full: pct(a.io_full, b.io_full),
        memory_some: pct(a.memory_some, b.memory_some),
        memory_full: pct(a.memory_full, b.memory_full),
    }
}

/// The thresholds `i` crosses, each in words; `own` is the target's own (read, written) MB/s.
pub fn reasons(i: &Interference, own: (f64, f64)) -> Vec<String> {
    let mut out = Vec::new();
    if i.others_cpu_cores >= OTHERS_CPU_CORES {
        out.push(format!(
            "other processes used {:.2} cores (threshold {OTHERS_CPU_CORES})",
            i.others_cpu_cores
        ));
    }
    if i.steal_cores >= STEAL_CORES {
        out.push(format!(
            "the hypervisor took {:.2} cores (steal; threshold {STEAL_CORES})",
            i.steal_cores
        ));
    }
    for (what, others, own) in [
        ("read", i.others_read_mb_s, own.0),
        ("wrote", i.others_written_mb_s, own.1),
    ] {
        if let Some(o) = others.filter(|&o| o >= OTHERS_IO_MB_S && o > own) {
            out.push(format!(
                "others {what} {o:.1} MB/s on the database's device (the target {own:.1}; \
                 threshold {OTHERS_IO_MB_S})"
            ));
        }
    }
    out
}

/// The one-line summary of a step's interference for `show`: the figures, and the reasons
/// when disturbed.
pub fn text(i: &Interference) -> String {
    let mut s = format!(
        "others' CPU {:.2} cores, steal {:.2}",
        i.others_cpu_cores, i.steal_cores
    );
    if let Some(p) = i.psi {
        s.push_str(&format!(
            ", pressure cpu {:.0}% io {:.0}% memory {:.0}%",
            p.cpu_some, p.io_some, p.memory_some
        ));
    }
    if let Some(p) = i.target_psi {
        s.push_str(&format!(
            " (the DBMS's cgroup: cpu {:.0}% io {:.0}% memory {:.0}%)",
            p.cpu_some, p.io_some, p.memory_some
        ));
    }
    if let Some(w) = i.others_written_mb_s {
        s.push_str(&format!(", others' device writes {w:.1} MB/s"));
    }
    if i.is_disturbed() {
        s.push_str(&format!(": DISTURBED: {}", i.disturbed.join("; ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::proc::{HostCounters, ProcCounters};
    use crate::results::model::ProcWork;

    /// Counters of a process set that used `cpu_s` seconds.
    fn used(cpu_s: f64) -> ProcCounters {
        ProcCounters {
            work: ProcWork {
                user_s: cpu_s,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// An embedded run's samples 1 s apart: the host busy 1.9 s, the run 1 s, and in duet
    /// the pair (the run and its partner) 1.85 s.
    fn window(duet: bool) -> (Sample, Sample) {
        let t0 = std::time::Instant::now();
        let at = |t, busy, own, pair| Sample {
            at: t,
            dbms: Some(used(own)),
            client: used(own),
            host: HostCounters {
                busy_s: busy,
                cpus: 2,
                ..Default::default()
            },
            ours: duet.then(|| used(pair)),
            ..Default::default()
        };
        (
            at(t0, 10.0, 1.0, 2.0),
            at(t0 + std::time::Duration::from_secs(1), 11.9, 2.0, 3.85),
        )
    }

    #[test]
    fn a_duet_partner_is_the_targets_and_not_a_neighbour() {
        let (a, b) = window(false);
        let alone = between(&a, &b).unwrap();
        assert!((alone.others_cpu_cores - 0.9).abs() < 1e-9);
        assert!(alone.is_disturbed() && alone.duet_cpu_cores.is_none());
        let (a, b) = window(true);
        let duet = between(&a, &b).unwrap();
        assert!((duet.others_cpu_cores - 0.05).abs() < 1e-9);
        assert!(!duet.is_disturbed(), "{:?}", duet.disturbed);
        assert!((duet.duet_cpu_cores.unwrap() - 1.85).abs() < 1e-9);
    }

    #[test]
    fn steal_a_busy_target_causes_itself_is_not_a_neighbour() {
        let (a, mut b) = window(false);
        b.host.busy_s = 11.0;
        // 0.21 cores: the most the test VM stole from SQLite fsyncing alone.
        b.host.steal_s = 0.21;
        assert!(between(&a, &b).unwrap().disturbed.is_empty());
        b.host.steal_s = 0.3;
        let i = between(&a, &b).unwrap();
        assert_eq!(i.disturbed.len(), 1, "{:?}", i.disturbed);
        assert!(i.disturbed[0].starts_with("the hypervisor took 0.30 cores"));
    }
}

//! The DBMS's own pressure stall information (`target_psi`, issue #37) against an independent
//! count: the kernel's run-queue wait of each of the server's tasks (/proc/PID/task/TID/
//! schedstat, its second field), read by the test while ibench runs. Root only (the server's
//! cgroup); fails in CI when it cannot run.

use std::collections::HashMap;
use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::cgroup::{PINNED, can_pin, cgroups_of, procs};
use crate::common::Bench;
use crate::interference::{Timed, rate};

/// When, and the seconds every task of the server seen so far has waited on a run queue.
#[derive(Clone, Copy)]
struct Waited {
    at: DateTime<Utc>,
    s: f64,
}

impl Timed for Waited {
    fn at(&self) -> DateTime<Utc> {
        self.at
    }
}

/// Every 20 ms until `stop`: the run-queue wait of every task of the processes in the cgroups
/// ibench `pid` made, each task's last value kept after it ends.
fn watch(pid: u32, stop: Arc<AtomicBool>) -> Arc<Mutex<Vec<Waited>>> {
    let readings = Arc::new(Mutex::new(Vec::new()));
    let out = readings.clone();
    thread::spawn(move || {
        let mut last: HashMap<(u32, u32), u64> = HashMap::new();
        while !stop.load(Ordering::Relaxed) {
            for p in cgroups_of(pid).iter().flat_map(|cg| procs(cg)) {
                let Ok(tasks) = fs::read_dir(format!("/proc/{p}/task")) else {
                    continue;
                };
                for t in tasks.flatten() {
                    let tid = t.file_name().to_string_lossy().parse().unwrap_or(0);
                    let stat = fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
                    if let Some(ns) = stat.split_whitespace().nth(1).and_then(|v| v.parse().ok()) {
                        last.insert((p, tid), ns);
                    }
                }
            }
            let s = last.values().sum::<u64>() as f64 / 1e9;
            out.lock().unwrap().push(Waited { at: Utc::now(), s });
            thread::sleep(Duration::from_millis(20));
        }
    });
    readings
}

/// Four query clients against a PostgreSQL pinned to CPU 0 (the clients on CPU 1): in qr100
/// the server's tasks wait on CPU 0's run queue, by the kernel's own count, and the cgroup's
/// CPU pressure stall ("some": a share of the time in which one task or more waited) lies
/// between the waits spread over the server's tasks (each instant counts at most all of them
/// but the one running) and the waits themselves (the union of the waits is at most their
/// sum); 2 points of tolerance each way for the two windows' edges.
#[test]
fn a_pinned_servers_cpu_pressure_lies_within_its_tasks_run_queue_waits() {
    if !can_pin() {
        return;
    }
    let bench = Bench::exclusive();
    let running = bench.spawn(
        &[
            PINNED,
            &[
                "--clients",
                "4",
                "--l0-rows",
                "20000",
                "--query-seconds",
                "4",
                "--steps",
                "l.i0,l.x,qr100",
            ],
        ]
        .concat(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let readings = watch(running.pid(), stop.clone());
    let out = running.finish(Duration::from_secs(180));
    stop.store(true, Ordering::Relaxed);
    let run = out.result();
    thread::sleep(Duration::from_millis(50));
    let readings = readings.lock().unwrap().clone();
    let step = run.steps.iter().find(|s| s.name == "qr100").unwrap();
    let eff = step.efficiency.as_ref().expect("the step's efficiency");
    let i = eff.interference.as_ref().expect("the step's interference");
    let own = i.target_psi.expect("the cgroup's PSI");
    let to = step.started_at + chrono::Duration::milliseconds((i.window_s * 1000.0) as i64);
    let waits = rate(&readings, step.started_at, to, |r| r.s);
    let tasks = eff.dbms.as_ref().map_or(0, |d| d.processes);
    let what = format!(
        "qr100: the cgroup's cpu some {:.1}%; its tasks waited {waits:.2} s a second on a run \
         queue ({tasks} processes, {} readings)",
        own.cpu_some,
        readings.len()
    );
    eprintln!("{what}");
    assert!(
        waits > 0.1 && tasks > 1,
        "the server's tasks waited: {what}"
    );
    assert!(own.cpu_some <= 100.0 * waits + 2.0, "{what}");
    assert!(
        own.cpu_some >= 100.0 * waits / (tasks as f64 - 1.0) - 2.0,
        "{what}"
    );
}

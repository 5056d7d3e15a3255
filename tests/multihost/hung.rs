//! A host that hangs (alive, its store connection open, not progressing: SIGSTOP): the others
//! give up on it at the next barrier within the bound `--host-timeout` sets, name it, and
//! the merged run is failed naming it.

use std::process::Child;
use std::thread;
use std::time::{Duration, Instant};

use ibench::results::model::RunStatus;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::{Netns, can_run, finish, merged, part, start_host, stderr_of, target};
use crate::common::{alive, server_bench};

/// A process the test stopped: killed (and continued) if the test ends before it is reaped.
struct Stopped(Option<u32>);

impl Stopped {
    fn stop(pid: u32) -> Stopped {
        kill(Pid::from_raw(pid as i32), Signal::SIGSTOP).expect("SIGSTOP");
        Stopped(Some(pid))
    }

    fn resume(mut self) {
        let pid = self.0.take().expect("stopped");
        kill(Pid::from_raw(pid as i32), Signal::SIGCONT).expect("SIGCONT");
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGCONT);
        }
    }
}

/// Polls `sql` (one bigint) until it returns at least `n`; panics after `limit`.
fn wait_for(c: &mut postgres::Client, sql: &str, n: i64, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let got: i64 = c.query_one(sql, &[]).map(|r| r.get(0)).unwrap_or(0);
        if got >= n {
            return;
        }
        assert!(Instant::now() < deadline, "{sql}: {got} < {n}");
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_stopped_host_fails_the_group_within_its_bound_naming_it() {
    if !can_run() {
        return;
    }
    let bench = server_bench();
    let t = target(&bench);
    let namespaces: Vec<Netns> = (0..3).map(|_| Netns::new(t.port)).collect();
    let host_timeout = 3;
    let args = [
        "--group",
        "hung",
        "--hosts",
        "3",
        "--clients",
        "3",
        "--table-prefix",
        "mz",
        "--steps",
        "l.i0,qp100",
        "--l0-rows",
        "1000",
        "--query-seconds",
        "4",
        "--no-maintenance",
        "--host-timeout",
        "3",
    ];
    let mut hosts: Vec<Option<Child>> = namespaces
        .iter()
        .enumerate()
        .map(|(i, ns)| Some(start_host(&bench, ns, &t, i, &args)))
        .collect();
    // Every host inside qp100 (all passed its start, barrier 3 * 1 + 1), then host 2 stops.
    let mut c = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    wait_for(
        &mut c,
        "SELECT count(*) FROM ibench_group_barrier WHERE group_name = 'hung' AND seq = 4",
        3,
        Duration::from_secs(120),
    );
    thread::sleep(Duration::from_secs(1));
    let pid: i64 = c
        .query_one(
            "SELECT pid FROM ibench_group_host WHERE group_name = 'hung' AND idx = 2",
            &[],
        )
        .unwrap()
        .get(0);
    let pid = pid as u32;
    let stopped_at = hosts
        .iter()
        .position(|h| h.as_ref().unwrap().id() == pid)
        .expect("host 2 is one of the test's processes (ip netns exec execs ibench)");
    let stopped = Stopped::stop(pid);

    // The others finish qp100 and wait for host 2 at its end (barrier 3 * 1 + 2).
    wait_for(
        &mut c,
        "SELECT count(*) FROM ibench_group_barrier WHERE group_name = 'hung' AND seq = 5",
        1,
        Duration::from_secs(60),
    );
    let first_arrived = Instant::now();
    let mut codes = Vec::new();
    for (i, h) in hosts.iter_mut().enumerate() {
        if i != stopped_at {
            codes.push((i, finish(h.take().unwrap(), Duration::from_secs(120))));
        }
    }
    let waited = first_arrived.elapsed();
    // Each waiting host allows host 2 what qp100 took it, plus --host-timeout.
    let took = codes
        .iter()
        .map(|&(i, _)| part(&bench, i).steps[1].duration_s)
        .fold(0.0, f64::max);
    let bound = Duration::from_secs_f64(host_timeout as f64 + took + 10.0);
    assert!(
        waited >= Duration::from_secs(host_timeout) && waited <= bound,
        "the others stopped {waited:?} after the first reached the end of qp100 (qp100 took \
         {took} s, --host-timeout {host_timeout} s)"
    );
    for (i, code) in codes {
        let err = stderr_of(&bench, i);
        assert_eq!(code, Some(1), "host {i}: {err}");
        assert!(
            err.contains("host 2 (") && err.contains(&format!("pid {pid})")),
            "host {i}: {err}"
        );
        assert!(
            err.contains("did not reach the end of step qp100") && err.contains("stopped or hung"),
            "host {i}: {err}"
        );
    }
    let run = merged(&bench, &t, "hung");
    assert_eq!(run.status, RunStatus::Failed);
    let error = run.error.clone().unwrap_or_default();
    assert!(
        error.contains(&format!("pid {pid})")) && error.contains("the end of step qp100"),
        "{error}"
    );
    assert_eq!(run.steps[0].status, RunStatus::Complete);
    assert_eq!(run.steps[0].rows_inserted, 3 * 1000);
    let qp = &run.steps[1];
    assert_eq!(qp.status, RunStatus::Failed);
    assert!(
        qp.error.as_deref().unwrap_or("").contains("host 2 ("),
        "{:?}",
        qp.error
    );
    assert_eq!(qp.sla.as_ref().map(|s| s.pass), Some(false));

    // Continued, host 2 finishes its qp100, finds the group failed and stops; the merged
    // run stays failed in qp100, though every host's part now has it.
    stopped.resume();
    let late = finish(hosts[stopped_at].take().unwrap(), Duration::from_secs(120));
    let err = stderr_of(&bench, stopped_at);
    assert_eq!(late, Some(1), "{err}");
    assert!(err.contains("group hung failed: host 2 ("), "{err}");
    assert_eq!(part(&bench, stopped_at).steps.len(), 2);
    let run = merged(&bench, &t, "hung");
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.steps[1].status, RunStatus::Failed, "{:?}", run.steps[1]);
    assert!(
        run.steps[1]
            .error
            .as_deref()
            .unwrap_or("")
            .contains(&format!("pid {pid})")),
        "{:?}",
        run.steps[1].error
    );

    // Nothing left running: no host process, no store or target connection of theirs.
    assert!(!alive(pid));
    let others = "SELECT application_name || ' ' || coalesce(client_addr::text, '') || ' ' \
         || state || ' ' || query FROM pg_stat_activity \
         WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()";
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left: Vec<String> = c
            .query(others, &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "connections left: {left:?}");
        thread::sleep(Duration::from_millis(100));
    }
    drop(c);
    drop(namespaces);
    t.kept.stop();
}

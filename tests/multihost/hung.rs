//! A host that hangs (alive, its store connection open, not progressing: SIGSTOP): the others
//! give up on it at the next barrier within the bound `--host-timeout` sets, name it, and
//! the merged run is failed naming it. The lock on the merged run, which a host stopped while
//! writing it would keep, is waited for within that bound too.

use std::process::{Child, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ibench::results::model::{RunResult, RunStatus};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::{Netns, can_run, finish, merged, part, start_host, stderr_of, target};
use crate::common::{Bench, alive, have, server_bench};

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

const HOST_TIMEOUT: u64 = 3;

const ARGS: [&str; 17] = [
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

/// Stops host 2 one second into qp100, once every host started it (passed barrier 3 * 1 +
/// 1): its pid, which of `hosts` it is, and the guard that continues it.
fn stop_host_2_in_qp100(
    c: &mut postgres::Client,
    hosts: &[Option<Child>],
) -> (u32, usize, Stopped) {
    wait_for(
        c,
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
    let at = hosts
        .iter()
        .position(|h| h.as_ref().unwrap().id() == pid)
        .expect("host 2 is one of the test's processes (ip netns exec execs ibench)");
    (pid, at, Stopped::stop(pid))
}

/// Waits for every host but the stopped one (`hosts[stopped]`, `pid`): they give up on it
/// no sooner than --host-timeout and no later than what qp100 took them, plus --host-timeout,
/// plus 10 s, after the first of them reached the end of qp100 (barrier 3 * 1 + 2); exit 1
/// naming it.
fn others_give_up_in_time(
    bench: &Bench,
    c: &mut postgres::Client,
    hosts: &mut [Option<Child>],
    (stopped, pid): (usize, u32),
) {
    wait_for(
        c,
        "SELECT count(*) FROM ibench_group_barrier WHERE group_name = 'hung' AND seq = 5",
        1,
        Duration::from_secs(60),
    );
    let first_arrived = Instant::now();
    let mut codes = Vec::new();
    for (i, h) in hosts.iter_mut().enumerate() {
        if i != stopped {
            codes.push((i, finish(h.take().unwrap(), Duration::from_secs(120))));
        }
    }
    let waited = first_arrived.elapsed();
    let took = codes
        .iter()
        .map(|&(i, _)| part(bench, i).steps[1].duration_s)
        .fold(0.0, f64::max);
    let bound = Duration::from_secs_f64(HOST_TIMEOUT as f64 + took + 10.0);
    assert!(
        waited >= Duration::from_secs(HOST_TIMEOUT) && waited <= bound,
        "the others stopped {waited:?} after the first reached the end of qp100 (qp100 took \
         {took} s, --host-timeout {HOST_TIMEOUT} s)"
    );
    for (i, code) in codes {
        let err = stderr_of(bench, i);
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
}

/// The merged run: failed naming host 2 (`pid`) at the end of qp100, l.i0 kept, qp100 failed.
fn merged_fails_naming(run: &RunResult, pid: u32) {
    assert_eq!(run.status, RunStatus::Failed);
    let error = run.error.clone().unwrap_or_default();
    assert!(
        error.contains("host 2 (") && error.contains(&format!("pid {pid})")),
        "{error}"
    );
    assert!(error.contains("the end of step qp100"), "{error}");
    assert_eq!(run.steps[0].status, RunStatus::Complete);
    assert_eq!(run.steps[0].rows_inserted, 3 * 1000);
    let qp = &run.steps[1];
    assert_eq!(qp.status, RunStatus::Failed);
    let qp_error = qp.error.as_deref().unwrap_or("");
    assert!(qp_error.contains(&format!("pid {pid})")), "{qp_error}");
    assert_eq!(qp.sla.as_ref().map(|s| s.pass), Some(false));
}

/// No process `pid`, and no connection but the test's own to the server (target and store).
fn nothing_left(c: &mut postgres::Client, pid: u32) {
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
            return;
        }
        assert!(Instant::now() < deadline, "connections left: {left:?}");
        thread::sleep(Duration::from_millis(100));
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
    let mut hosts: Vec<Option<Child>> = namespaces
        .iter()
        .enumerate()
        .map(|(i, ns)| Some(start_host(&bench, ns, &t, i, &ARGS)))
        .collect();
    let mut c = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    let (pid, at, stopped) = stop_host_2_in_qp100(&mut c, &hosts);
    others_give_up_in_time(&bench, &mut c, &mut hosts, (at, pid));
    merged_fails_naming(&merged(&bench, &t, "hung"), pid);

    // Continued, host 2 finishes its qp100, finds the group failed and stops; the merged
    // run stays failed in qp100, though every host's part now has it.
    stopped.resume();
    let late = finish(hosts[at].take().unwrap(), Duration::from_secs(120));
    let err = stderr_of(&bench, at);
    assert_eq!(late, Some(1), "{err}");
    assert!(err.contains("group hung failed: host 2 ("), "{err}");
    assert_eq!(part(&bench, at).steps.len(), 2);
    merged_fails_naming(&merged(&bench, &t, "hung"), pid);

    nothing_left(&mut c, pid);
    drop(c);
    drop(namespaces);
    t.kept.stop();
}

/// Host `i` of group `locked`, on this machine's loopback (`extra`: more flags).
fn locked_host(bench: &Bench, port: u16, password: &str, i: usize, extra: &[&str]) -> Child {
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let mut cmd = crate::common::ibench();
    cmd.args(["run", "--url", &url, "--results", &url, "-q", "--out"])
        .arg(bench.path(&format!("h{i}")))
        .args(["--group", "locked", "--hosts", "2", "--clients", "2"])
        .args(["--steps", "l.i0", "--l0-rows", "100", "--host-timeout", "2"])
        .args(extra)
        .env("PGPASSWORD", password)
        .current_dir(bench.path(""))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(bench.path(&format!("h{i}.stdout"))).unwrap())
        .stderr(std::fs::File::create(bench.path(&format!("h{i}.stderr"))).unwrap());
    cmd.spawn().expect("start a host")
}

#[test]
fn a_lock_on_the_merged_run_held_past_the_bound_fails_the_group() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let t = target(&bench);
    // The test holds the lock under which hosts write the merged run, as a host stopped
    // while writing it would.
    let mut holder = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    holder
        .execute(
            "SELECT pg_advisory_lock(hashtext('ibench_group_merge:locked'))",
            &[],
        )
        .unwrap();
    let hosts: Vec<Child> = (0..2)
        .map(|i| locked_host(&bench, t.port, &t.password, i, &[]))
        .collect();
    let mut c = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    // Both finished l.i0 (its end barrier, 3 * 0 + 2), then wait for the lock.
    wait_for(
        &mut c,
        "SELECT count(*) FROM ibench_group_barrier WHERE group_name = 'locked' AND seq = 2",
        2,
        Duration::from_secs(120),
    );
    let passed = Instant::now();
    let codes: Vec<Option<i32>> = hosts
        .into_iter()
        .map(|h| finish(h, Duration::from_secs(60)))
        .collect();
    let waited = passed.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited <= Duration::from_secs(2 + 10),
        "{waited:?}"
    );
    for (i, code) in codes.into_iter().enumerate() {
        let err = stderr_of(&bench, i);
        assert_eq!(code, Some(1), "host {i}: {err}");
        assert!(
            err.contains("held the lock on the merged run for over 2s"),
            "host {i}: {err}"
        );
    }
    // Failed after l.i0, which every host completed: a resume goes on from step 2.
    let r = c
        .query_one(
            "SELECT status, failed_step FROM ibench_group WHERE name = 'locked'",
            &[],
        )
        .unwrap();
    assert_eq!(r.get::<_, String>(0), "failed");
    assert_eq!(r.get::<_, Option<i64>>(1), Some(1));

    // Released, the group resumes with nothing left to run, and completes with l.i0.
    drop(holder);
    let resumed: Vec<Child> = (2..4)
        .map(|i| locked_host(&bench, t.port, &t.password, i, &["--resume"]))
        .collect();
    for (i, h) in (2..4).zip(resumed) {
        let code = finish(h, Duration::from_secs(60));
        assert_eq!(code, Some(0), "host {i}: {}", stderr_of(&bench, i));
    }
    let run = merged(&bench, &t, "locked");
    assert_eq!(run.status, RunStatus::Complete, "{:?}", run.error);
    assert_eq!(run.steps.len(), 1);
    assert_eq!(run.steps[0].status, RunStatus::Complete);
    assert_eq!(run.steps[0].rows_inserted, 2 * 100);
    t.kept.stop();
}

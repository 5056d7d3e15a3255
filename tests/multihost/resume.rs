//! A failed group started again with `--resume`: the steps every host completed are kept as
//! the first attempt measured them, the run goes on from the step it failed in, on the tables
//! as the failed attempt left them.

use std::process::Child;
use std::thread;
use std::time::{Duration, Instant};

use ibench::results::model::{RunResult, RunStatus};

use super::{Netns, Target, can_run, finish, merged, start_host, stderr_of, target};
use crate::common::{Bench, server_bench};

const GROUP: [&str; 16] = [
    "--group",
    "again",
    "--hosts",
    "2",
    "--clients",
    "2",
    "--table-prefix",
    "mr",
    "--steps",
    "l.i0,l.x,l.i1,qr100",
    "--l0-rows",
    "2000",
    "--l1-rows",
    "500",
    "--query-seconds",
    "6",
];

/// Each table's rows, checking that its ids are contiguous (the queue invariant).
fn queues(c: &mut postgres::Client) -> Vec<i64> {
    (1..=2)
        .map(|t| {
            let r = c
                .query_one(
                    &format!(
                        "SELECT count(*), coalesce(max(transactionid) - min(transactionid) + 1, 0) \
                         FROM mr{t}"
                    ),
                    &[],
                )
                .unwrap();
            let (n, span): (i64, i64) = (r.get(0), r.get(1));
            assert_eq!(span, n, "mr{t} has no gaps");
            n
        })
        .collect()
}

/// Host `i` with the group's flags but `changed` ones, and `extra` flags; its exit code and
/// stderr.
fn refused(
    bench: &Bench,
    (ns, t): (&Netns, &Target),
    i: usize,
    changed: &[(&str, &'static str)],
    extra: &[&str],
) -> (i32, String) {
    let mut args = GROUP.to_vec();
    for &(flag, value) in changed {
        let at = args
            .iter()
            .position(|a| *a == flag)
            .expect("a flag of GROUP");
        args[at + 1] = value;
    }
    args.extend_from_slice(extra);
    let code = finish(start_host(bench, ns, t, i, &args), Duration::from_secs(60));
    (code.unwrap_or(-1), stderr_of(bench, i))
}

/// Kills host 1 of the first attempt one second into qr100; host 0 fails the group.
fn first_attempt_killed_in_qr100(bench: &Bench, namespaces: &[Netns], t: &Target) -> RunResult {
    let mut hosts: Vec<Child> = namespaces
        .iter()
        .enumerate()
        .map(|(i, ns)| start_host(bench, ns, t, i, &GROUP))
        .collect();
    let mut c = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    // Both started qr100, the fourth step: its barrier after the pause, 3 * 3 + 1.
    while c
        .query_one(
            "SELECT count(*) FROM ibench_group_barrier WHERE group_name = 'again' AND seq = 10",
            &[],
        )
        .map_or(0, |r| r.get::<_, i64>(0))
        < 2
    {
        let ended = hosts.iter_mut().any(|h| h.try_wait().unwrap().is_some());
        assert!(
            Instant::now() < deadline && !ended,
            "qr100 never started: {} / {}",
            stderr_of(bench, 0),
            stderr_of(bench, 1)
        );
        thread::sleep(Duration::from_millis(100));
    }
    thread::sleep(Duration::from_secs(1));
    let pid: i64 = c
        .query_one(
            "SELECT pid FROM ibench_group_host WHERE group_name = 'again' AND idx = 1",
            &[],
        )
        .unwrap()
        .get(0);
    let at = hosts
        .iter()
        .position(|h| i64::from(h.id()) == pid)
        .expect("host 1 is one of the test's processes");
    let mut killed = hosts.remove(at);
    killed.kill().unwrap();
    let _ = killed.wait();
    let survivor = hosts.pop().unwrap();
    let code = finish(survivor, Duration::from_secs(120));
    assert_eq!(code, Some(1), "{}", stderr_of(bench, 1 - at));
    let run = merged(bench, t, "again");
    assert_eq!(run.status, RunStatus::Failed);
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["l.i0", "l.x", "l.i1", "qr100"]);
    assert_eq!(run.steps[2].status, RunStatus::Complete);
    assert_eq!(run.steps[3].status, RunStatus::Failed);
    run
}

/// What cannot resume group `again` is refused in one line, exit 2, and changes nothing.
fn resuming_wrongly_is_refused(bench: &Bench, ns: &Netns, t: &Target) {
    for (i, changed, extra, says) in [
        (10, vec![], vec![], "or resume it"),
        (
            11,
            vec![("--hosts", "1")],
            vec!["--resume"],
            "has --hosts 2",
        ),
        (
            12,
            vec![("--query-seconds", "7")],
            vec!["--resume"],
            "another workload",
        ),
        (
            13,
            vec![("--group", "never")],
            vec!["--resume"],
            "there is no group never",
        ),
    ] {
        let (code, err) = refused(bench, (ns, t), i, &changed, &extra);
        assert_eq!(code, 2, "{changed:?}: {err}");
        assert!(
            err.contains(says) && err.trim().lines().count() == 1,
            "{changed:?}: {err}"
        );
    }
    assert_eq!(merged(bench, t, "again").steps.len(), 4);
}

/// The resumed run: complete, each step once, the completed steps as the `first` attempt
/// measured them, qr100 from the resumed attempt (its hosts' first step), with the one pause
/// before it that attempt ran.
fn resumed_from_qr100(run: &RunResult, first: &RunResult) {
    assert_eq!(run.status, RunStatus::Complete, "{:?}", run.error);
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["l.i0", "l.x", "l.i1", "qr100"], "each step once");
    assert!(run.steps.iter().all(|s| s.status == RunStatus::Complete));
    for i in 0..3 {
        assert_eq!(
            serde_json::to_value(&run.steps[i]).unwrap(),
            serde_json::to_value(&first.steps[i]).unwrap(),
            "{}",
            run.steps[i].name
        );
    }
    // Members: the first attempt's two hosts with the load steps, the resumed two with qr100.
    let group = run.group.as_ref().unwrap();
    let of = |attempt: usize| -> Vec<(usize, Vec<&str>)> {
        group
            .members
            .iter()
            .filter(|m| m.attempt == attempt)
            .map(|m| {
                (
                    m.first_step,
                    m.steps.iter().map(|s| s.name.as_str()).collect(),
                )
            })
            .collect()
    };
    let loads = vec!["l.i0", "l.x", "l.i1"];
    assert_eq!(of(0), [(0, loads.clone()), (0, loads)]);
    assert_eq!(of(1), [(3, vec!["qr100"]), (3, vec!["qr100"])]);
    let pauses: Vec<&str> = run
        .maintenance
        .iter()
        .map(|m| m.before_step.as_str())
        .collect();
    assert_eq!(pauses, ["qr100"]);
}

#[test]
fn a_failed_group_resumes_from_the_step_it_failed_in() {
    if !can_run() {
        return;
    }
    let bench = server_bench();
    let t = target(&bench);
    let namespaces: Vec<Netns> = (0..2).map(|_| Netns::new(t.port)).collect();
    let first = first_attempt_killed_in_qr100(&bench, &namespaces, &t);
    let mut c = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    let before = queues(&mut c);
    assert_eq!(before.iter().min(), Some(&2000), "{before:?}");
    resuming_wrongly_is_refused(&bench, &namespaces[0], &t);

    // Resumed: every host again, with --resume; both go on from qr100.
    let resumed: Vec<Child> = namespaces
        .iter()
        .enumerate()
        .map(|(i, ns)| {
            let mut args = GROUP.to_vec();
            args.push("--resume");
            start_host(&bench, ns, &t, 2 + i, &args)
        })
        .collect();
    for (i, h) in resumed.into_iter().enumerate() {
        let code = finish(h, Duration::from_secs(180));
        assert_eq!(code, Some(0), "host {i}: {}", stderr_of(&bench, 2 + i));
    }
    let run = merged(&bench, &t, "again");
    resumed_from_qr100(&run, &first);

    // The tables, with the test's own SQL: still queues, their rows those the failed attempt
    // left plus what the resumed qr100 inserted, less what it deleted.
    let after = queues(&mut c);
    let qr = &run.steps[3];
    assert_eq!(
        after.iter().sum::<i64>(),
        before.iter().sum::<i64>() + qr.rows_inserted as i64 - qr.rows_deleted as i64,
        "before {before:?}, after {after:?}"
    );
    assert!(qr.rows_inserted > 0);
    drop(c);

    // A completed group cannot be resumed; show says it was.
    let (code, err) = refused(&bench, (&namespaces[0], &t), 14, &[], &["--resume"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("completed") && err.contains("nothing to resume"),
        "{err}"
    );
    let show = bench.run_raw(&["show", "again", "--results", &t.url], &[]);
    show.assert_success();
    assert!(show.stdout.contains("resumed 1 time"), "{}", show.stdout);
    drop(namespaces);
    t.kept.stop();
}

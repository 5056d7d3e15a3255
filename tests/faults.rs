//! Faults on real servers: lost connections reopened and counted, a server killed with SIGKILL
//! (managed or external) fails the step within seconds and keeps every result measured.

use std::time::{Duration, Instant};

use ibench::results::model::RunResult;

use crate::common::{Bench, Kept, Outcome, have, path_str, processes_with, server_bench};

/// Kills the server `pid` with SIGKILL; ibench must then stop within seconds and exit 1.
fn kill_9_and_finish(child: crate::common::Running, pid: u32) -> Outcome {
    let killed_at = Instant::now();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let out = child.finish(Duration::from_secs(60));
    assert!(
        killed_at.elapsed() < Duration::from_secs(30),
        "stopped within seconds"
    );
    assert_eq!(out.code, Some(1), "{}", out.describe());
    out
}

/// Spawns `ibench run` with a managed PostgreSQL and waits until its results file lists
/// `steps_before` finished steps; returns the running child and the results so far.
fn spawn_until_step(
    bench: &Bench,
    args: &[&str],
    steps_before: usize,
) -> (crate::common::Running, RunResult) {
    let child = bench.spawn(args);
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let loaded = crate::common::json_files(&bench.out())
            .first()
            .and_then(|f| ibench::results::file::load(f).ok());
        if let Some(run) = loaded.filter(|r| r.steps.len() >= steps_before) {
            return (child, run);
        }
        assert!(Instant::now() < deadline, "step never started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn lost_connections_are_reopened_and_counted() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    // Kept, so that its credentials are there for this test's own connection.
    let args = [
        "--server",
        "postgres",
        "--keep-server",
        "--steps",
        "l.i0,l.x,qp100",
        "--l0-rows",
        "5000",
        "--query-seconds",
        "8",
    ];
    let (child, run) = spawn_until_step(&bench, &args, 2);
    let kept = Kept {
        pid: run.managed_server.as_ref().unwrap().pid.unwrap(),
        signal: "INT",
    };
    std::thread::sleep(Duration::from_millis(1_000));
    // Kill every session of ibench's clients (not this one).
    let mut c = postgres::Client::connect(&crate::common::kept_url(&run), postgres::NoTls).unwrap();
    let killed: i64 = c
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = 'ibench' AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(killed >= 2, "sessions terminated: {killed}");
    drop(c);
    let out = child.finish(Duration::from_secs(120));
    kept.stop();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    let qp = &run.steps[2];
    assert_eq!(qp.status, ibench::results::model::RunStatus::Complete);
    assert!(qp.reconnects >= 1, "reconnects counted");
    assert!(qp.retries.values().sum::<u64>() >= 1, "{:?}", qp.retries);
    assert!(qp.queries > 0);
    // The queue invariant is checked after the reconnects and reported.
    let check = qp
        .queue_check
        .as_ref()
        .expect("queue checked after reconnects");
    assert_eq!(check.rows_at_start, 2 * 5000);
    assert_eq!(
        check.rows_expected,
        check.rows_at_start + qp.rows_inserted - qp.rows_deleted
    );
    // A statement the server committed just before it was terminated reports an error;
    // its retry then finds nothing to delete, so the count may differ by such batches, and
    // the summary must say so. Anything beyond that is an accounting bug.
    let retries: u64 = qp.retries.values().sum();
    let off = check.rows_counted.abs_diff(check.rows_expected);
    assert!(off <= retries * 10, "{check:?} retries {:?}", qp.retries);
    assert!(check.tables_with_gaps.is_empty(), "{check:?}");
    if check.ok {
        assert!(out.stdout.contains("queue checked after"), "{}", out.stdout);
    } else {
        assert!(
            out.stdout.contains("queue invariant broken"),
            "{}",
            out.stdout
        );
    }
    assert!(
        run.steps[0].queue_check.is_none(),
        "no check without trouble"
    );
}

#[test]
fn a_killed_server_fails_the_step_quickly_and_keeps_the_results() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let marker = path_str(&bench.out()).to_string();
    let args = [
        "--server",
        "postgres",
        "--steps",
        "l.i0,l.x,qp100",
        "--l0-rows",
        "5000",
        "--query-seconds",
        "60",
        "--max-reconnects",
        "1",
    ];
    let (child, run) = spawn_until_step(&bench, &args, 2);
    std::thread::sleep(Duration::from_millis(1_000));
    let pid = run.managed_server.unwrap().pid.unwrap();
    let out = kill_9_and_finish(child, pid);
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("qp100") && line.contains("client"), "{line}");
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(run.status, ibench::results::model::RunStatus::Failed);
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["l.i0", "l.x", "qp100"]);
    assert_eq!(
        run.steps[2].status,
        ibench::results::model::RunStatus::Failed
    );
    assert!(
        run.steps[2].queries > 0,
        "figures up to the failure are kept"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes_with(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        processes_with(&marker).is_empty(),
        "server processes left behind"
    );
}

#[test]
fn an_external_server_killed_mid_step_fails_the_step_and_keeps_the_results() {
    if !have("mariadb", "") {
        return;
    }
    let bench = server_bench();
    // A server this run did not start (left running by an earlier one), reached by URL.
    let setup = bench
        .run(&[
            "--server",
            "mariadb",
            "--keep-server",
            "--steps",
            "l.i0,l.x",
            "--l0-rows",
            "5000",
        ])
        .result();
    let pid = setup.managed_server.as_ref().unwrap().pid.unwrap();
    let kept = Kept {
        pid,
        signal: "TERM",
    };
    let url = crate::common::kept_url(&setup);
    let child = bench.spawn(&[
        "--url",
        &url,
        "--steps",
        "qp100",
        "--query-seconds",
        "60",
        "--max-reconnects",
        "1",
    ]);
    std::thread::sleep(Duration::from_secs(3));
    let out = kill_9_and_finish(child, pid);
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", out.describe());
    assert!(
        errors[0].contains("qp100") && errors[0].contains("client"),
        "{}",
        errors[0]
    );
    assert!(!out.stderr.contains("panicked"));
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(run.status, ibench::results::model::RunStatus::Failed);
    let step = &run.steps[0];
    assert_eq!(step.name, "qp100");
    assert_eq!(step.status, ibench::results::model::RunStatus::Failed);
    assert!(step.queries > 0, "figures up to the failure are kept");
    assert!(step.error.as_deref().unwrap_or("").contains("client"));
    // The run is in the store too, as failed.
    let store =
        ibench::results::store::Store::open_existing(&bench.out().join("results.db")).unwrap();
    assert_eq!(store.load(&run.run_id).unwrap().status, run.status);
    std::mem::forget(kept);
}

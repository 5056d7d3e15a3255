//! Faults on real servers: lost connections reopened and counted, a server killed with SIGKILL
//! (managed or external) fails the step within seconds and keeps every result measured; ibench
//! itself killed with SIGKILL (the next run marks the run abandoned and cleans up; the next
//! MariaDB start removes the socket directory it left under /tmp); results writes that fail
//! (no temporary file left).

use std::time::{Duration, Instant};

use ibench::results::model::{RunResult, RunStatus};

use crate::common::{Bench, Kept, Outcome, have, open_db, path_str, processes_with, server_bench};

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

/// Spawns `ibench run` with a managed PostgreSQL and waits until step `step` has run queries
/// (its live line on stderr shows a query rate; a fixed sleep is not enough on a loaded
/// machine, where the maintenance pause and the clients' connections may take seconds);
/// returns the running child and the results file as it was then.
fn spawn_until_queries(
    bench: &Bench,
    args: &[&str],
    step: &str,
) -> (crate::common::Running, RunResult) {
    let out = bench.out();
    let mut child = bench.spawn_raw(
        &["run", "--out", path_str(&out), "--report-interval", "1"],
        args,
    );
    child.wait_for_stderr(Duration::from_secs(90), |line| {
        // "[   2.0s]  qp100 q/s 1.2k": a live line of `step` with queries in it.
        let rest = line.split_once("s] ").map_or("", |(_, r)| r);
        rest.split_whitespace().next() == Some(step) && rest.contains("q/s")
    });
    let run = crate::common::json_files(&out)
        .first()
        .and_then(|f| ibench::results::file::load(f).ok())
        .expect("results of the steps before");
    (child, run)
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
    let (child, run) = spawn_until_queries(&bench, &args, "qp100");
    let kept = Kept {
        pid: run.managed_server.as_ref().unwrap().pid.unwrap(),
        signal: "INT",
    };
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
    let (child, run) = spawn_until_queries(&bench, &args, "qp100");
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

/// Waits until `dir` holds a results file with a saved document of a run still `running`.
fn wait_for_running(dir: &std::path::Path) -> (std::path::PathBuf, RunResult) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let saved = crate::common::json_files(dir).into_iter().find_map(|f| {
            let run = ibench::results::file::load(&f).ok()?;
            (run.status == RunStatus::Running).then_some((f, run))
        });
        if let Some(found) = saved {
            return found;
        }
        assert!(Instant::now() < deadline, "the run never saved its results");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill_9(pid: u32) {
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

/// Files in `dir` whose name ends with `suffix`.
fn files_ending(dir: &std::path::Path, suffix: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect()
}

/// After `kill -9` of ibench mid-step, the next run in the same --out marks the dead run
/// `abandoned` in its file and the results database, removes the directory ibench created for
/// it (here a managed PostgreSQL's, whose server got SIGTERM when ibench died; and an SQLite
/// scratch database) and says so; `ibench list` and `show` say abandoned.
#[test]
fn a_run_killed_with_sigkill_is_marked_abandoned_by_the_next_run() {
    let mut kinds = vec![("sqlite", "data")];
    if have("postgres", "") {
        kinds.push(("postgres", "server"));
    }
    for (kind, dir_ext) in kinds {
        let bench = server_bench();
        let mut args = vec![
            "--steps",
            "l.i0,l.x",
            "--l0-rows",
            "5000000",
            "--clients",
            "1",
        ];
        if kind == "postgres" {
            args.extend(["--server", "postgres"]);
        }
        let child = bench.spawn(&args);
        let (json, run) = wait_for_running(&bench.out());
        let data = json.with_extension(dir_ext);
        let lock = json.with_extension("lock");
        assert!(data.is_dir() && lock.exists(), "{kind}: {}", data.display());
        std::thread::sleep(Duration::from_millis(500));
        kill_9(child.pid());
        let killed = child.finish(Duration::from_secs(30));
        assert_eq!(killed.code, None, "{}", killed.describe());
        // What kill -9 leaves: a document saying running, the data, the lock file.
        let left = ibench::results::file::load(&json).unwrap();
        assert_eq!(left.status, RunStatus::Running, "{kind}");
        assert!(data.is_dir() && lock.exists());

        let next = bench.run(&["--steps", "l.i0", "--l0-rows", "500", "--clients", "1"]);
        next.result();
        let note = next
            .stderr
            .lines()
            .find(|l| l.contains(&run.run_id))
            .unwrap_or_else(|| panic!("no line names the dead run:\n{}", next.describe()));
        assert!(
            note.contains("abandoned") && note.contains(&format!("removed {}", data.display())),
            "{note}"
        );
        let marked = ibench::results::file::load(&json).unwrap();
        assert_eq!(marked.status, RunStatus::Abandoned, "{kind}");
        assert!(marked.error.as_deref().unwrap_or("").contains("abandoned"));
        assert_eq!(marked.steps.len(), left.steps.len(), "saved steps are kept");
        assert!(!data.exists(), "{kind}: {} is left", data.display());
        assert!(!lock.exists(), "the dead run's lock file is removed");
        if kind == "postgres" {
            let log = json.with_extension("server.log");
            assert!(log.exists(), "the server log is kept beside the results");
            assert!(processes_with(path_str(&bench.out())).is_empty());
        }
        // The store's row, read with our own SQL, and what list and show print.
        let conn = crate::common::open_db(&bench.out().join("results.db"));
        let status: String = conn
            .query_row(
                "SELECT status FROM runs WHERE id = ?1",
                [&run.run_id],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(status, "abandoned");
        let results = bench.out().join("results.db");
        let list = bench.run_raw(&["list", "--results", path_str(&results)], &[]);
        let row = list
            .stdout
            .lines()
            .find(|l| l.starts_with(&run.run_id))
            .unwrap_or_else(|| panic!("{}", list.describe()));
        assert!(row.trim_end().ends_with("abandoned"), "{row}");
        let show = bench.run_raw(&["show", &run.run_id, "--results", path_str(&results)], &[]);
        assert!(
            show.stdout.to_lowercase().contains("abandoned"),
            "{}",
            show.describe()
        );
        // Nothing else is touched: the new run is complete, and a third run finds nothing.
        let third = bench.run(&["--steps", "l.i0", "--l0-rows", "500", "--clients", "1"]);
        third.result();
        assert!(!third.stderr.contains("abandoned"), "{}", third.describe());
        assert!(files_ending(&bench.out(), ".lock").is_empty());
    }
}

/// A results write that fails (here the rename over the results file, refused because the
/// file was replaced by a directory) fails the run with one line and leaves no temporary file.
#[test]
fn a_failed_results_write_leaves_no_temporary_file() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let child = bench.spawn(&[
        "--steps",
        "qp100",
        "--query-seconds",
        "3",
        "--clients",
        "1",
        "--path",
        path_str(&bench.db()),
    ]);
    let (json, _) = wait_for_running(&bench.out());
    std::fs::remove_file(&json).unwrap();
    std::fs::create_dir(&json).unwrap();
    std::fs::write(json.join("occupied"), "x").unwrap();
    let out = child.finish(Duration::from_secs(60));
    assert_eq!(out.code, Some(1), "{}", out.describe());
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", out.describe());
    assert!(errors[0].contains("cannot write results"), "{}", errors[0]);
    assert_eq!(files_ending(&bench.out(), ".tmp"), Vec::<String>::new());
}

/// A full disk mid-run (a 20 MiB tmpfs as --out, filled after the first save): the run fails
/// with one line, the results file keeps its last complete version, and no temporary file
/// (which used to stay behind, empty) is left. Needs the right to mount (root).
#[test]
fn a_full_disk_mid_run_leaves_the_last_results_and_no_temporary_file() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let mnt = bench.path("full");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=20m", "tmpfs", path_str(&mnt)])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipping: cannot mount a tmpfs (not root?)");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .args(["-l", path_str(&self.0)])
                .status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let results = bench.path("results.db");
    let child = bench.spawn_raw(
        &["run", "--out", path_str(&mnt), "-q"],
        &[
            "--results",
            path_str(&results),
            "--steps",
            "qp100",
            "--query-seconds",
            "3",
            "--clients",
            "1",
            "--path",
            path_str(&bench.db()),
        ],
    );
    let (json, _) = wait_for_running(&mnt);
    // Fill the file system.
    {
        use std::io::Write;
        let mut filler = std::fs::File::create(mnt.join("filler")).unwrap();
        let chunk = vec![0u8; 1 << 16];
        while filler.write_all(&chunk).is_ok() {}
        let _ = filler.sync_all();
    }
    let out = child.finish(Duration::from_secs(60));
    assert_eq!(out.code, Some(1), "{}", out.describe());
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        line.contains("cannot write results") && line.contains("No space left"),
        "{}",
        out.describe()
    );
    // The line says where the results are: the file as last saved, the store as it ended.
    assert!(
        line.contains("holds the run as last saved")
            && line.contains("the results database has it as it is now"),
        "{line}"
    );
    assert_eq!(files_ending(&mnt, ".tmp"), Vec::<String>::new());
    let last = ibench::results::file::load(&json).expect("the last complete version");
    assert_eq!(last.status, RunStatus::Running);
    // The store, on another disk, says the run failed and why.
    let (status, document): (String, String) = open_db(&results)
        .query_row(
            "SELECT status, document FROM runs WHERE id = ?1",
            [&last.run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "failed");
    assert!(document.contains("No space left"), "{document}");
    // Its lock stays for the next run in --out, which marks the file abandoned once there
    // is room again.
    assert_eq!(files_ending(&mnt, ".lock").len(), 1);
    std::fs::remove_file(mnt.join("filler")).unwrap();
    let next = bench.run_raw(
        &["run", "--out", path_str(&mnt), "-q"],
        &[
            "--results",
            path_str(&results),
            "--steps",
            "qp0",
            "--query-seconds",
            "1",
            "--clients",
            "1",
            "--path",
            path_str(&bench.db()),
        ],
    );
    next.assert_success();
    assert!(
        next.stderr.contains(&last.run_id) && next.stderr.contains("abandoned"),
        "{}",
        next.describe()
    );
    let settled = ibench::results::file::load(&json).unwrap();
    assert_eq!(settled.status, RunStatus::Abandoned);
    assert_eq!(files_ending(&mnt, ".lock"), Vec::<String>::new());
}

/// `kill -9` of ibench while its MariaDB starts with an --out too deep for a socket path
/// leaves the private socket directory it made under the temporary directory; the next
/// managed MariaDB start removes it and says so. It leaves what is not such a leftover: the
/// directory of a live ibench, one holding a file, a symlink, another user's directory.
#[test]
fn a_mariadb_socket_directory_left_by_kill_9_is_removed_by_the_next_start() {
    use std::os::unix::fs::PermissionsExt;
    use std::process::Stdio;
    if !have("mariadb", "") {
        return;
    }
    let bench = server_bench();
    // A temporary directory of this test's own, so that no other test's start removes the
    // leftover first.
    let tmp = bench.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
    let deep = bench.path(&"d".repeat(60));
    let ibench = |out: &std::path::Path| {
        let mut cmd = crate::common::ibench();
        cmd.args(["run", "--out", path_str(out), "-q", "--server", "mariadb"])
            .args(["--steps", "l.i0", "--clients", "1"])
            .env("TMPDIR", &tmp)
            .current_dir(bench.path(""))
            .stdin(Stdio::null());
        cmd
    };
    let mut child = ibench(&deep)
        .args(["--l0-rows", "1000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("ibench-mariadb-{}-", child.id());
    let deadline = Instant::now() + Duration::from_secs(90);
    let left = loop {
        let found = std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with(&prefix));
        if let Some(e) = found {
            break e.path();
        }
        assert!(child.try_wait().unwrap().is_none(), "ibench ended first");
        assert!(Instant::now() < deadline, "no socket directory appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    kill_9(child.id());
    child.wait().unwrap();
    // Its server (or set-up command) got SIGTERM from the kernel: once it is gone, the
    // directory is all that is left.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !processes_with(path_str(&deep)).is_empty() {
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(left.is_dir(), "kill -9 leaves {}", left.display());

    // What is not a leftover of a dead ibench.
    let dead = {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    };
    let live = tmp.join(format!("ibench-mariadb-{}-1-live", std::process::id()));
    let busy = tmp.join(format!("ibench-mariadb-{dead}-2-file"));
    let link = tmp.join(format!("ibench-mariadb-{dead}-3-link"));
    let foreign = tmp.join(format!("ibench-mariadb-{dead}-4-nobody"));
    let target = bench.path("target");
    for d in [&live, &busy, &target, &foreign] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(busy.join("keep"), "x").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let root = nix::unistd::Uid::effective().is_root();
    if root {
        let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
        nix::unistd::chown(&foreign, Some(nobody.uid), None).unwrap();
    }

    let out = ibench(&bench.out())
        .args(["--l0-rows", "500"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!left.exists(), "{} is left:\n{stderr}", left.display());
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("note: removed"))
        .collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].contains(path_str(&left)), "{}", notes[0]);
    for kept in [&live, &busy, &busy.join("keep"), &target] {
        assert!(kept.exists(), "{} is gone", kept.display());
    }
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(foreign.exists() || !root);
}

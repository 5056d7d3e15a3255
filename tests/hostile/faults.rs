//! ibench killed (-9) at the worst moment, on the machine's own DBMS services (by URL):
//! `--profile` left `perf record -p <postmaster>` attached for good, and a kill during the
//! InnoDB flush of `--allow-server-changes` left `innodb_max_dirty_pages_pct = 0` on the
//! server. perf now ends with ibench, and a guard process sets the setting back.
//! Faults ibench can see coming or outlive: a memory limit below what a managed server's
//! settings allow (said before the first step), and full disks under both results writes
//! (the run kept in memory, written when there is room, else to the temporary directory).

use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::common::{Bench, LocalService, have_files, path_str, processes_with};

/// Waits up to `limit` for `done`.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        sleep(Duration::from_millis(5));
    }
    done()
}

fn kill9(pid: u32) {
    let pid = nix::unistd::Pid::from_raw(pid as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
}

#[test]
fn perf_attached_to_a_server_ibench_did_not_start_ends_with_a_killed_ibench() {
    if !have_files(&["/usr/bin/perf"], "linux-perf") {
        return;
    }
    let Some(pg) = LocalService::reachable()
        .into_iter()
        .find(|s| s.is_postgres())
    else {
        return;
    };
    let mut c = postgres::Client::connect(pg.url, postgres::NoTls).unwrap();
    let data: String = c.query_one("SHOW data_directory", &[]).unwrap().get(0);
    let pid_file = format!("{data}/postmaster.pid");
    let prefix = format!("zzperf{}_", std::process::id());
    let bench = Bench::new();
    let run = bench.spawn(&[
        "--url",
        pg.url,
        "--server-pid-file",
        &pid_file,
        "--profile",
        "--table-prefix",
        &prefix,
        "--steps",
        "l.i0",
        "--l0-rows",
        "5000000",
    ]);
    // perf writes into the run's profiles directory under --out: that names it.
    let out = bench.out();
    let needle = format!("{}/", path_str(&out));
    let perf = || {
        processes_with(&needle)
            .into_iter()
            .filter(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("record"))
            })
            .collect::<Vec<_>>()
    };
    let started = wait_until(Duration::from_secs(60), || !perf().is_empty());
    kill9(run.pid());
    let _ = run.finish(Duration::from_secs(30));
    let gone = wait_until(Duration::from_secs(15), || perf().is_empty());
    let left = perf();
    // Not left attached by the test either.
    for p in &left {
        kill9(*p);
    }
    let _ = c.batch_execute(&format!("DROP TABLE IF EXISTS {prefix}1"));
    assert!(started, "perf record never started");
    assert!(
        gone,
        "perf record {left:?} still attached 15 s after ibench was killed"
    );
}

#[test]
fn a_setting_changed_for_a_moment_is_set_back_when_ibench_is_killed_meanwhile() {
    let Some(my) = LocalService::reachable()
        .into_iter()
        .find(|s| !s.is_postgres())
    else {
        return;
    };
    use mysql::prelude::Queryable;
    let mut c = mysql::Conn::new(mysql::Opts::from_url(my.url).unwrap()).unwrap();
    let mut setting = || -> String {
        c.query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
            .unwrap()
            .unwrap()
    };
    let before = setting();
    assert_ne!(
        before.parse::<f64>().unwrap(),
        0.0,
        "the service starts with a target"
    );
    let prefix = format!("zzguard{}_", std::process::id());
    let bench = Bench::new();
    // Enough rows that the flush after l.x takes a few of its 200 ms polls; a larger load
    // if the test missed the moment.
    let mut caught = false;
    for rows in ["100000", "400000", "1000000"] {
        let run = bench.spawn(&[
            "--url",
            my.url,
            "--allow-server-changes",
            "--table-prefix",
            &prefix,
            "--clients",
            "1",
            "--steps",
            "l.i0,l.x,qp100",
            "--l0-rows",
            rows,
            "--query-seconds",
            "1",
        ]);
        let pid = run.pid();
        caught = wait_until(Duration::from_secs(300), || {
            setting().parse::<f64>().unwrap() == 0.0 || !crate::common::alive(pid)
        }) && setting().parse::<f64>().unwrap() == 0.0;
        if caught {
            kill9(pid);
        }
        let _ = run.finish(Duration::from_secs(60));
        if caught {
            break;
        }
    }
    let back = wait_until(Duration::from_secs(30), || setting() == before);
    let after = setting();
    if !back {
        // Not left at 0 by the test either.
        let mut c = mysql::Conn::new(mysql::Opts::from_url(my.url).unwrap()).unwrap();
        c.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct = {before}"))
            .unwrap();
    }
    let mut c = mysql::Conn::new(mysql::Opts::from_url(my.url).unwrap()).unwrap();
    c.query_drop(format!("DROP TABLE IF EXISTS {prefix}1"))
        .unwrap();
    assert!(
        caught,
        "the flush was never seen: innodb_max_dirty_pages_pct never 0"
    );
    assert!(
        back,
        "innodb_max_dirty_pages_pct is {after} 30 s after ibench was killed, was {before}"
    );
}

/// A managed PostgreSQL under `--memory-limit 128M` with settings that let it take more
/// (PostgreSQL's own defaults: 128 MB of shared buffers, 64 MB per index build) used to run
/// until the kernel killed a backend in l.x. ibench reads the server's settings when it
/// starts and says so in one line, before the first step, naming the limit, its estimate,
/// the parts and the settings that would fit; the estimate is kept in the results. Small
/// settings: no warning. Root only (cgroups).
#[test]
fn a_memory_limit_below_what_the_server_settings_allow_is_said_before_the_first_step() {
    if !nix::unistd::Uid::effective().is_root() {
        crate::common::skip("--memory-limit needs root");
        return;
    }
    if !crate::common::have("postgres", "") {
        return;
    }
    let bench = crate::common::server_bench();
    let out = bench.out();
    let run = |options: &[String]| {
        let mut args = vec!["--server", "postgres", "--memory-limit", "128M"];
        for o in options {
            args.extend(["--server-option", o.as_str()]);
        }
        args.extend(["--steps", "l.i0", "--l0-rows", "1000", "--clients", "1"]);
        bench.run_raw(&["run", "--out", path_str(&out)], &args)
    };
    let big = run(&[
        "shared_buffers=128MB".into(),
        "maintenance_work_mem=64MB".into(),
    ]);
    let result = big.result();
    let warnings: Vec<&str> = big
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", big.describe());
    let line = warnings[0];
    for part in [
        "128 MiB",
        "shared_buffers",
        "maintenance_work_mem",
        "--server-option shared_buffers=",
    ] {
        assert!(line.contains(part), "{part:?} missing from {line}");
    }
    // Before the first step's line.
    let at = |f: &dyn Fn(&str) -> bool| big.stderr.lines().position(f).unwrap();
    let step = at(&|l: &str| l.trim_start().starts_with("l.i0"));
    assert!(
        at(&|l: &str| l.starts_with("warning:")) < step,
        "{}",
        big.stderr
    );
    let estimate = result
        .managed_server
        .as_ref()
        .and_then(|m| m.memory_estimate.clone())
        .expect("the estimate is recorded");
    assert!(estimate.bytes > 128 << 20, "{estimate:?}");
    assert!(estimate.parts.iter().any(|p| p.setting == "shared_buffers"));
    // The settings it names fit: a run with them says nothing.
    let named: Vec<String> = line
        .split("--server-option ")
        .skip(1)
        .filter_map(|s| s.split_whitespace().next())
        .map(|s| s.trim_end_matches([',', ';', ')', '.']).to_string())
        .collect();
    assert!(!named.is_empty(), "{line}");
    let small = run(&named);
    let result = small.result();
    assert!(
        !small.stderr.lines().any(|l| l.starts_with("warning:")),
        "{}",
        small.describe()
    );
    let estimate = result.managed_server.unwrap().memory_estimate.unwrap();
    assert!(estimate.bytes < 128 << 20, "{estimate:?}");
}

/// A 20 MiB tmpfs mounted at a directory of the test's (unmounted when dropped).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    /// Mounts one at `bench`'s `name`; `None` (the test skipped) without the right to mount.
    fn mount(bench: &Bench, name: &str) -> Option<Tmpfs> {
        let dir = bench.path(name);
        std::fs::create_dir(&dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=20m", "tmpfs", path_str(&dir)])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            crate::common::skip("cannot mount a tmpfs (not root?)");
        }
        mounted.then_some(Tmpfs(dir))
    }

    /// Fills it to the last byte.
    fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.0.join("filler")).unwrap();
        let chunk = vec![0u8; 1 << 16];
        while filler.write_all(&chunk).is_ok() {}
        let mut byte = [0u8; 1];
        while filler.write_all(&byte).is_ok() {
            byte[0] = 1;
        }
        let _ = filler.sync_all();
    }

    fn free(&self) {
        std::fs::remove_file(self.0.join("filler")).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .args(["-l", path_str(&self.0)])
            .status();
    }
}

/// `ibench run -q` of two 3-second query steps on a loaded SQLite database, its JSON on the
/// tmpfs `out` and its results database on the tmpfs `store`, the system's temporary
/// directory `tmp`; its stderr goes to `stderr`.
fn spawn_on(
    bench: &Bench,
    out: &Tmpfs,
    store: &Tmpfs,
    tmp: &std::path::Path,
    stderr: &std::path::Path,
) -> std::process::Child {
    std::fs::create_dir_all(tmp).unwrap();
    crate::common::ibench()
        .args(["run", "--out", path_str(&out.0), "-q"])
        .args(["--results", path_str(&store.0.join("results.db"))])
        .args([
            "--steps",
            "qp100,qp0",
            "--query-seconds",
            "3",
            "--clients",
            "1",
        ])
        .args(["--path", path_str(&bench.db())])
        .env("TMPDIR", tmp)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// Waits until `dir` holds the results file of a run still `running`: its first save.
fn first_save(dir: &std::path::Path) -> std::path::PathBuf {
    let mut found = None;
    let saved = wait_until(Duration::from_secs(90), || {
        found = crate::common::json_files(dir).into_iter().find(|f| {
            ibench::results::file::load(f)
                .is_ok_and(|r| r.status == ibench::results::model::RunStatus::Running)
        });
        found.is_some()
    });
    assert!(saved, "the run never saved its results");
    found.unwrap()
}

/// Waits for `child` (at most 60 s): its exit code and stderr.
fn finish(mut child: std::process::Child, stderr: &std::path::Path) -> (Option<i32>, String) {
    let mut status = None;
    wait_until(Duration::from_secs(60), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("ibench did not finish within 60 s");
    };
    (status.code(), std::fs::read_to_string(stderr).unwrap())
}

fn lines<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// A full disk under both the results file and the results database (two tmpfs, filled
/// after the run's first save) lost the step measured then: the run failed at its save, and
/// neither held it. Now the step stays in memory, the run goes on (one warning line), and
/// the next save, once there is room again, writes every step to both.
#[test]
fn a_step_measured_while_both_results_disks_are_full_is_written_when_space_returns() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let (Some(out), Some(store)) = (
        Tmpfs::mount(&bench, "json-disk"),
        Tmpfs::mount(&bench, "store-disk"),
    ) else {
        return;
    };
    let stderr = bench.path("stderr");
    let child = spawn_on(&bench, &out, &store, &bench.path("tmp"), &stderr);
    let json = first_save(&out.0);
    out.fill();
    store.fill();
    // The save after qp100 fails on both: said in one line, the run goes on.
    let warned = wait_until(Duration::from_secs(60), || {
        !lines(&std::fs::read_to_string(&stderr).unwrap(), "warning:").is_empty()
    });
    let said = std::fs::read_to_string(&stderr).unwrap();
    out.free();
    store.free();
    let (code, stderr) = finish(child, &stderr);
    assert!(warned, "no warning: {said}");
    let warning = lines(&said, "warning:")[0];
    assert!(
        warning.contains(path_str(&json)) && warning.contains("results database"),
        "{warning}"
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(lines(&stderr, "error:"), Vec::<&str>::new(), "{stderr}");
    let run = ibench::results::file::load(&json).unwrap();
    assert_eq!(run.status, ibench::results::model::RunStatus::Complete);
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["qp100", "qp0"]);
    assert!(run.steps.iter().all(|s| s.queries > 0));
    let (status, document): (String, String) = crate::common::open_db(&store.0.join("results.db"))
        .query_row(
            "SELECT status, document FROM runs WHERE id = ?1",
            [&run.run_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(status, "complete");
    let stored: ibench::results::model::RunResult = serde_json::from_str(&document).unwrap();
    assert_eq!(stored.steps.len(), 2);
    // Nothing left for a next run to settle.
    assert!(!json.with_extension("lock").exists());
}

/// Both results disks still full when the run ends: the run is written whole to a new
/// private directory in the system's temporary directory, and the one error line says where
/// (and that nothing reached the file or the database).
#[test]
fn a_run_whose_results_disks_stay_full_is_written_to_the_temporary_directory() {
    let bench = Bench::new();
    bench.load(1, 2_000);
    let (Some(out), Some(store)) = (
        Tmpfs::mount(&bench, "json-disk"),
        Tmpfs::mount(&bench, "store-disk"),
    ) else {
        return;
    };
    let (stderr, tmp) = (bench.path("stderr"), bench.path("tmp"));
    let child = spawn_on(&bench, &out, &store, &tmp, &stderr);
    let json = first_save(&out.0);
    out.fill();
    store.fill();
    let (code, stderr) = finish(child, &stderr);
    assert_eq!(code, Some(1), "{stderr}");
    let errors = lines(&stderr, "error:");
    assert_eq!(errors.len(), 1, "{stderr}");
    let rescued: Vec<std::path::PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .flat_map(|d| crate::common::json_files(&d.path()))
        .collect();
    assert_eq!(rescued.len(), 1, "{stderr}");
    assert!(errors[0].contains(path_str(&rescued[0])), "{}", errors[0]);
    assert!(errors[0].contains("No space left"), "{}", errors[0]);
    let run = ibench::results::file::load(&rescued[0]).unwrap();
    let names: Vec<&str> = run.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["qp100", "qp0"]);
    assert!(run.steps.iter().all(|s| s.queries > 0));
    assert_eq!(run.status, ibench::results::model::RunStatus::Failed);
    // The file as first saved, the lock for the next run in --out to settle it.
    let last = ibench::results::file::load(&json).unwrap();
    assert_eq!(last.run_id, run.run_id);
    assert!(last.steps.is_empty());
    assert!(json.with_extension("lock").exists());
}

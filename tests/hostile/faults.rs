//! ibench killed (-9) at the worst moment, on the machine's own DBMS services (by URL):
//! `--profile` left `perf record -p <postmaster>` attached for good, and a kill during the
//! InnoDB flush of `--allow-server-changes` left `innodb_max_dirty_pages_pct = 0` on the
//! server. perf now ends with ibench, and a guard process sets the setting back.

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

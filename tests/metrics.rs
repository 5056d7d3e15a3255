//! Cost per operation: ibench's /proc figures checked against the test's own reading of /proc
//! (its own parser), against the DBMS's own answer, and the cases where figures are missing.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ibench::metrics::proc;

use crate::common::{Bench, ci, open_db, path_str};

/// The test's own reading: utime+stime+cutime+cstime of `pid` and all its descendants,
/// seconds, from /proc/*/stat.
fn own_tree_cpu_s(root: u32) -> f64 {
    let mut stats = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(text) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let after = &text[text.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = after.split_whitespace().collect();
        let ppid: u32 = f[1].parse().unwrap();
        let ticks: u64 = (11..=14)
            .map(|i| f[i].parse::<i64>().unwrap().max(0) as u64)
            .sum();
        stats.push((pid, ppid, ticks));
    }
    let parent = |p: u32| stats.iter().find(|s| s.0 == p).map(|s| s.1);
    let in_tree = |mut p: u32| {
        for _ in 0..64 {
            if p == root {
                return true;
            }
            match parent(p) {
                Some(pp) if pp > 0 => p = pp,
                _ => return false,
            }
        }
        false
    };
    let clk = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .unwrap()
        .unwrap() as f64;
    stats
        .iter()
        .filter(|s| in_tree(s.0))
        .map(|s| s.2 as f64)
        .sum::<f64>()
        / clk
}

#[test]
fn cpu_of_children_that_exited_is_counted() {
    // A child burns CPU and exits; its parent reaps it and waits in the `read` builtin (no
    // further child) on a pipe this test keeps open.
    let mut outer = Command::new("sh")
        .args([
            "-c",
            "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'; read x",
        ])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = outer.id();
    let before = proc::tree_counters(pid as i32, false).expect("tree");
    // Until the child has come and gone: right after the spawn the outer shell may not have
    // forked it yet (a tree of one then does not mean it exited).
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen_child = false;
    loop {
        let n = proc::process_tree(pid as i32).len();
        seen_child |= n > 1;
        if seen_child && n == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "child never came, or never exited"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let after = proc::tree_counters(pid as i32, false).expect("tree");
    let own = own_tree_cpu_s(pid);
    let _ = outer.kill();
    let _ = outer.wait();
    assert_eq!(after.processes, 1, "only the parent is left");
    assert!(
        after.cpu_s() - before.cpu_s() >= 0.2,
        "the exited child's CPU is lost: {} -> {}",
        before.cpu_s(),
        after.cpu_s()
    );
    assert!(
        (after.cpu_s() - own).abs() <= 0.02,
        "ibench {} s vs /proc {} s",
        after.cpu_s(),
        own
    );
}

/// Sectors written to `device` per the test's own parse of /proc/diskstats, bytes.
fn own_device_written(device: &str) -> u64 {
    let text = fs::read_to_string("/proc/diskstats").unwrap();
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(device))
        .unwrap();
    let sectors: u64 = line.split_whitespace().nth(9).unwrap().parse().unwrap();
    sectors * 512
}

#[test]
fn device_bytes_written_agree_with_diskstats() {
    let bench = Bench::new();
    let Some(device) = proc::device_of(&bench.path("")) else {
        crate::common::skip("the temp directory is not on a block device");
        return;
    };
    let own_before = own_device_written(&device);
    let before = proc::device_counters(&device).unwrap();
    let mut f = fs::File::create(bench.path("blob")).unwrap();
    let chunk = vec![0x5au8; 1 << 20];
    for _ in 0..64 {
        f.write_all(&chunk).unwrap();
    }
    f.sync_all().unwrap();
    let after = proc::device_counters(&device).unwrap();
    let own_after = own_device_written(&device);
    let ours = after.write_bytes - before.write_bytes;
    let own = own_after - own_before;
    assert!(
        ours >= 64 << 20,
        "64 MiB written and synced, device saw {ours}"
    );
    assert!(
        (ours as f64 - own as f64).abs() <= 0.1 * own as f64,
        "ibench {ours} vs /proc/diskstats {own}"
    );
}

#[test]
fn sqlite_step_reports_size_and_embedded_costs() {
    let bench = Bench::new();
    let db = bench.db();
    let run = bench
        .run(&[
            "--steps",
            "l.i0",
            "--l0-rows",
            "20000",
            "--path",
            path_str(&db),
        ])
        .result();
    let e = run.steps[0].efficiency.as_ref().expect("efficiency");
    assert!(e.dbms_source.starts_with("embedded"), "{}", e.dbms_source);
    let p = e.per_op.as_ref().unwrap();
    assert_eq!(e.per, "insert");
    assert_eq!(e.ops, 40_000);
    assert!(p.client_cpu_us > 0.0 && p.host_cpu_us > 0.0);
    assert_eq!(
        p.dbms_cpu_us,
        Some(p.client_cpu_us),
        "embedded: one process"
    );
    let conn = open_db(&db);
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    let size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(e.db_size.dbms_bytes, Some((pages * size) as u64));
    assert!(e.db_size.disk_bytes.unwrap() > 0);
    assert!(e.peak.client_rss_bytes > 0);

    // SQLite's own counters: every insert batch is one commit to the WAL (the clients'
    // connections are the only ones counted), and the WAL was checkpointed as it grew.
    let c = &run.steps[0].dbms_counters;
    let batches = run.steps[0].ops["insert"].count as f64;
    assert_eq!(c["sqlite.wal_commits"], batches, "{c:?}");
    assert!(c["sqlite.checkpoints"] >= 1.0, "{c:?}");
    assert!(c["sqlite.cache_write"] > 0.0, "{c:?}");
    assert!(e.counters_per_op.contains_key("sqlite.cache_write"));
}

#[test]
fn external_server_without_pid_reports_host_figures_only() {
    let url = std::env::var("IBENCH_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    if postgres::Client::connect(&url, postgres::NoTls).is_err() {
        assert!(!ci(), "no PostgreSQL at {url} (start the local service)");
        crate::common::skip(&format!("no PostgreSQL at {url}"));
        return;
    }
    let bench = Bench::new();
    let prefix = format!("ibm{}_", std::process::id());
    let run = bench
        .run(&[
            "--url",
            &url,
            "--table-prefix",
            &prefix,
            "--steps",
            "l.i0",
            "--l0-rows",
            "5000",
        ])
        .result();
    let e = run.steps[0].efficiency.as_ref().unwrap();
    assert!(e.dbms.is_none());
    assert!(e.dbms_source.starts_with("unknown"), "{}", e.dbms_source);
    let p = e.per_op.as_ref().unwrap();
    assert!(p.dbms_cpu_us.is_none() && p.dbms_cs.is_none());
    assert!(p.host_cpu_us > 0.0);
    assert!(
        e.db_size.dbms_bytes.is_some(),
        "pg_database_size still reported"
    );
    assert!(!run.steps[0].dbms_counters.is_empty(), "pg_stat counters");
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute(&format!("DROP TABLE {prefix}1, {prefix}2"))
        .unwrap();
}

#[test]
fn managed_postgres_cpu_agrees_with_proc_and_keeps_exited_backends() {
    if !Path::new("/usr/bin/pg_config").exists() {
        assert!(
            !ci(),
            "postgresql is not installed (apt-get install postgresql)"
        );
        crate::common::skip("postgresql not installed");
        return;
    }
    let bench = Bench::new();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(bench.path(""), fs::Permissions::from_mode(0o755)).unwrap();
    let load = bench
        .run(&[
            "--server",
            "postgres",
            "--keep-server",
            "--steps",
            "l.i0,l.x",
            "--l0-rows",
            "30000",
        ])
        .result();
    let pid = load.managed_server.as_ref().unwrap().pid.unwrap();
    let url = crate::common::kept_url(&load);
    struct Stop(u32);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = Command::new("kill")
                .args(["-INT", &self.0.to_string()])
                .status();
        }
    }
    let _stop = Stop(pid);

    let own_before = own_tree_cpu_s(pid);
    let child = bench.spawn(&[
        "--url",
        &url,
        "--server-pid",
        &pid.to_string(),
        "--steps",
        "l.i1",
        "--l1-rows",
        "60000",
        "--l1-batch",
        "10",
    ]);
    // While the step runs, a separate connection burns CPU in its own backend and exits.
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let max: i64 = c
            .query_one("SELECT coalesce(max(transactionid), 0) FROM pi1", &[])
            .unwrap()
            .get(0);
        if max > 30_000 {
            break;
        }
        assert!(Instant::now() < deadline, "l.i1 never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    c.batch_execute("SELECT count(*) FROM generate_series(1, 10000000)")
        .unwrap();
    // The burn ended inside the step: inserts are still going on.
    let max: i64 = c
        .query_one("SELECT max(transactionid) FROM pi1", &[])
        .unwrap()
        .get(0);
    assert!(max < 30_000 + 60_000, "the step ended before the burn did");
    drop(c);
    let out = child.finish(Duration::from_secs(300));
    let own = own_tree_cpu_s(pid) - own_before;
    let run = ibench::results::file::load(&out.new_results[0]).unwrap();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let e = run.steps[0].efficiency.as_ref().unwrap();
    assert!(
        e.dbms_source.contains(&pid.to_string()),
        "{}",
        e.dbms_source
    );
    let ours = e.dbms.as_ref().unwrap().cpu_s;
    eprintln!("DBMS CPU: ibench {ours:.3} s, /proc {own:.3} s");
    assert!(
        (ours - own).abs() <= 0.1 * own,
        "DBMS CPU: ibench {ours:.3} s vs /proc {own:.3} s over the run"
    );
    assert!(e.per_op.as_ref().unwrap().dbms_cpu_us.unwrap() > 0.0);
}

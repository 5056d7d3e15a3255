//! Runs across several client hosts (`--group NAME --hosts N`): ibench processes in network
//! namespaces of their own (veth pairs with private addresses; each reaches the managed
//! PostgreSQL, which listens on 127.0.0.1 only, through a TCP relay the test runs on the root
//! side of its veth) meet in the PostgreSQL results store and make one run.

mod hung;
mod netns;
mod resume;

use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ibench::results::model::{RunResult, RunStatus};

use crate::common::{Bench, Kept, have, histogram_len, json_files, path_str, server_bench, skip};
use netns::Netns;

/// What the group tests need, or why they cannot run.
fn can_run() -> bool {
    if !have("postgres", "") {
        return false;
    }
    let root = nix::unistd::geteuid().is_root();
    let ip = Command::new("ip").arg("-V").output().is_ok();
    if !(root && ip) {
        skip("network namespaces need root and `ip` (apt-get install iproute2)");
        return false;
    }
    true
}

/// A managed PostgreSQL left running: the target and the results store of the group.
struct Target {
    kept: Kept,
    port: u16,
    password: String,
    /// Its URL with the password, for the test's own client.
    url: String,
}

fn target(bench: &Bench) -> Target {
    let (setup, kept) = bench.keep_server("postgres", &["--steps", "l.i0", "--l0-rows", "100"]);
    let url = crate::common::kept_url(&setup);
    let parsed = url::Url::parse(&url).unwrap();
    Target {
        kept,
        port: parsed.port().unwrap(),
        password: crate::common::kept_password(&setup),
        url,
    }
}

/// Starts host `i` of group `group` in `ns` (stdout, stderr in files beside its --out).
fn start_host(bench: &Bench, ns: &Netns, t: &Target, i: usize, args: &[&str]) -> Child {
    let url = format!("postgres://postgres@{}:{}/postgres", ns.gateway, ns.port);
    let out = bench.path(&format!("h{i}"));
    let mut cmd = ns.ibench(&["run", "--url", &url, "--results", &url, "-q"]);
    cmd.args(["--out", path_str(&out)])
        .args(args)
        .env("PGPASSWORD", &t.password)
        .current_dir(bench.path(""))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(bench.path(&format!("h{i}.stdout"))).unwrap())
        .stderr(std::fs::File::create(bench.path(&format!("h{i}.stderr"))).unwrap());
    cmd.spawn().expect("start a host")
}

fn stderr_of(bench: &Bench, i: usize) -> String {
    std::fs::read_to_string(bench.path(&format!("h{i}.stderr"))).unwrap_or_default()
}

/// Waits for `child` at most `limit`; kills it when it takes longer.
fn finish(mut child: Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("a host did not finish within {limit:?}");
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// The part host `i` wrote to its --out.
fn part(bench: &Bench, i: usize) -> RunResult {
    let files = json_files(&bench.path(&format!("h{i}")));
    assert_eq!(files.len(), 1, "one results file of host {i}");
    serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap()
}

/// The merged run `name` as `ibench export` gives it.
fn merged(bench: &Bench, t: &Target, name: &str) -> RunResult {
    let out = bench.run_raw(&["export", name, "--results", &t.url], &[]);
    out.assert_success();
    serde_json::from_str(&out.stdout).unwrap()
}

/// The merged run's group: three members with shares 2 + 2 + 1 (contiguous, not
/// overlapping), clock offsets within half their round trips (one machine, one clock), five
/// steps each; and each member's part, from its host's results file.
fn members_and_parts(bench: &Bench, run: &RunResult) -> Vec<RunResult> {
    let group = run.group.as_ref().expect("a group run");
    assert_eq!(group.members.len(), 3);
    let shares: Vec<(usize, usize)> = group
        .members
        .iter()
        .map(|m| (m.first_client, m.clients))
        .collect();
    assert_eq!(shares, [(0, 2), (2, 2), (4, 1)]);
    // One machine, one clock: the store's reading fell inside each host's round trip, so the
    // measured offset is at most half of it.
    for m in &group.members {
        assert!(m.clock_rtt_us > 0);
        assert!(
            m.clock_offset_us.unsigned_abs() <= m.clock_rtt_us / 2 + 1,
            "host {}: offset {} us, round trip {} us",
            m.index,
            m.clock_offset_us,
            m.clock_rtt_us
        );
        assert_eq!(m.steps.len(), 5, "each host's figures per step");
    }
    group
        .members
        .iter()
        .map(|m| {
            (0..3)
                .map(|i| part(bench, i))
                .find(|p| {
                    p.run_id == m.run_id && p.group.as_ref().unwrap().members[0].index == m.index
                })
                .expect("each member's part is one host's results file")
        })
        .collect()
}

/// Counts add up, histograms merge exactly (never averaged): the merged histogram's count is
/// the sum of the parts' counts, op by op; rates are summed; the SLA is the group's.
fn sums_of_parts(run: &RunResult, parts: &[RunResult]) {
    for (i, step) in run.steps.iter().enumerate() {
        assert_eq!(step.status, RunStatus::Complete, "{}", step.name);
        let of_parts = |f: &dyn Fn(&ibench::results::model::StepResult) -> u64| {
            parts.iter().map(|p| f(&p.steps[i])).sum::<u64>()
        };
        assert_eq!(step.rows_inserted, of_parts(&|s| s.rows_inserted));
        assert_eq!(step.rows_deleted, of_parts(&|s| s.rows_deleted));
        assert_eq!(step.queries, of_parts(&|s| s.queries));
        assert_eq!(step.clients, 5);
        // Each client's summary is its host's; they add up to the merged series.
        crate::results_size::check_clients(step, true);
        let summaries = of_parts(&|s| s.per_second.client_summaries.len() as u64);
        assert_eq!(step.per_second.client_summaries.len() as u64, summaries);
        for (op, r) in &step.ops {
            let sum: u64 = parts
                .iter()
                .filter_map(|p| p.steps[i].ops.get(op))
                .map(|o| histogram_len(&o.histogram))
                .sum();
            assert_eq!(histogram_len(&r.histogram), sum, "{} {op}", step.name);
            assert_eq!(r.count, sum);
            let clients: u64 = r
                .per_client
                .iter()
                .map(|c| histogram_len(&c.histogram))
                .sum();
            assert_eq!(clients, sum, "{} {op}: per-client histograms", step.name);
        }
        let rate: f64 = parts.iter().map(|p| p.steps[i].inserts_per_s).sum();
        assert!((step.inserts_per_s - rate).abs() < 1e-6 * rate.max(1.0));
    }
    assert_eq!(run.steps[0].rows_inserted, 5 * 3000);
    assert_eq!(run.steps[2].rows_inserted, 5 * 800);
    // The SLA is the group's: five writers at 100 rows/s.
    let sla = run.steps[3].sla.as_ref().expect("qr100 has a writer SLA");
    assert_eq!(sla.target_inserts_per_s, 500.0);
}

/// The tables, counted with the test's own client: the merged insert count is the rows
/// there, and every table stayed a queue of 3000 contiguous ids.
fn five_queues_of_3000(t: &Target, run: &RunResult) {
    let mut c = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    let mut rows = 0i64;
    for table in 1..=5 {
        let r = c
            .query_one(
                &format!(
                    "SELECT count(*), max(transactionid) - min(transactionid) + 1 FROM mh{table}"
                ),
                &[],
            )
            .unwrap();
        let (n, span): (i64, i64) = (r.get(0), r.get(1));
        assert_eq!(n, 3000, "mh{table} keeps its size");
        assert_eq!(span, n, "mh{table} has no gaps");
        rows += n;
    }
    let inserted: u64 = run.steps.iter().map(|s| s.rows_inserted).sum();
    let deleted: u64 = run.steps.iter().map(|s| s.rows_deleted).sum();
    assert_eq!(rows as u64, inserted - deleted);
    // Host 0 ran the maintenance pause, once.
    assert_eq!(run.maintenance.len(), 1);
}

/// One run in list and show; the parts are not runs of their own; report reads it.
fn listed_once(bench: &Bench, t: &Target, parts: &[RunResult]) {
    let list = bench.run_raw(&["list", "--results", &t.url], &[]);
    list.assert_success();
    assert!(
        list.stdout.lines().any(|l| l.starts_with("trio ")),
        "{}",
        list.stdout
    );
    for p in parts {
        assert!(!list.stdout.contains(&p.run_id), "{}", list.stdout);
    }
    let show = bench.run_raw(&["show", "trio", "--results", &t.url], &[]);
    show.assert_success();
    assert!(
        show.stdout.contains("Group trio: 3 of 3 hosts"),
        "{}",
        show.stdout
    );
    let report = bench.run_raw(
        &["report", "trio", "--format", "json", "--results", &t.url],
        &[],
    );
    report.assert_success();
    let r: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(r["groups"][0]["runs"].as_array().unwrap().len(), 1, "{r}");
    hosts_in_the_markdown_report(bench, t);
}

/// The Markdown report has each host's part of each step, as the merged run stored it.
fn hosts_in_the_markdown_report(bench: &Bench, t: &Target) {
    let run = merged(bench, t, "trio");
    let md = bench.run_raw(
        &["report", "trio", "--format", "md", "--results", &t.url],
        &[],
    );
    md.assert_success();
    let at = md
        .stdout
        .find("## Client hosts")
        .expect("client hosts section");
    let section = &md.stdout[at..];
    let group = run.group.as_ref().unwrap();
    let mut rows = 0;
    for s in &run.steps {
        for m in &group.members {
            let h = m.steps.iter().find(|h| h.name == s.name).unwrap();
            let row = format!(
                "| {} | trio | {} | {} | {} | {:.1} | {} | {} | {} | {} |",
                s.name,
                run.run_id,
                m.index,
                m.hostname,
                h.start_offset_ms,
                ibench::output::format::seconds(h.duration_s),
                ibench::output::format::rate(h.inserts_per_s),
                ibench::output::format::rate(h.deletes_per_s),
                ibench::output::format::rate(h.queries_per_s),
            );
            assert!(section.contains(&row), "no {row} in\n{section}");
            rows += 1;
        }
    }
    assert_eq!(rows, 15, "5 steps x 3 hosts");
}

#[test]
fn three_hosts_in_namespaces_make_one_run() {
    if !can_run() {
        return;
    }
    let bench = server_bench();
    let t = target(&bench);
    let namespaces: Vec<Netns> = (0..3).map(|_| Netns::new(t.port)).collect();
    let args = [
        "--group",
        "trio",
        "--hosts",
        "3",
        "--clients",
        "5",
        "--table-prefix",
        "mh",
        "--steps",
        "l.i0,l.x,l.i1,qr100,qp200",
        "--l0-rows",
        "3000",
        "--l1-rows",
        "800",
        "--query-seconds",
        "2",
    ];
    let hosts: Vec<Child> = namespaces
        .iter()
        .enumerate()
        .map(|(i, ns)| start_host(&bench, ns, &t, i, &args))
        .collect();
    for (i, h) in hosts.into_iter().enumerate() {
        let code = finish(h, Duration::from_secs(300));
        assert_eq!(code, Some(0), "host {i}: {}", stderr_of(&bench, i));
    }
    let run = merged(&bench, &t, "trio");
    assert_eq!(run.status, RunStatus::Complete, "{:?}", run.error);
    let parts = members_and_parts(&bench, &run);
    sums_of_parts(&run, &parts);
    five_queues_of_3000(&t, &run);
    listed_once(&bench, &t, &parts);

    // The same group name again is refused, and the run left as it was.
    let again = start_host(&bench, &namespaces[0], &t, 9, &args);
    assert_eq!(finish(again, Duration::from_secs(60)), Some(2));
    assert!(
        stderr_of(&bench, 9).contains("group trio already ran"),
        "{}",
        stderr_of(&bench, 9)
    );
    assert_eq!(merged(&bench, &t, "trio").steps.len(), 5);
    drop(namespaces);
    t.kept.stop();
}

#[test]
fn a_host_killed_mid_step_fails_the_step_for_the_group_naming_it() {
    if !can_run() {
        return;
    }
    let bench = server_bench();
    let t = target(&bench);
    let namespaces: Vec<Netns> = (0..2).map(|_| Netns::new(t.port)).collect();
    let args = [
        "--group",
        "duo",
        "--hosts",
        "2",
        "--clients",
        "2",
        "--table-prefix",
        "mk",
        "--steps",
        "l.i0,qp100",
        "--l0-rows",
        "2000",
        "--query-seconds",
        "8",
        "--no-maintenance",
    ];
    let first = start_host(&bench, &namespaces[0], &t, 0, &args);
    // The second to join is host 1.
    thread::sleep(Duration::from_millis(500));
    let mut second = start_host(&bench, &namespaces[1], &t, 1, &args);
    // Kill host 1 once both started qp100 (its start barrier: 3 * 1 + 1).
    let mut c = postgres::Client::connect(&t.url, postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let started: i64 = c
            .query_one(
                "SELECT count(*) FROM ibench_group_barrier WHERE group_name = 'duo' AND seq = 4",
                &[],
            )
            .map(|r| r.get(0))
            .unwrap_or(0);
        if started == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "qp100 never started: {}",
            stderr_of(&bench, 1)
        );
        thread::sleep(Duration::from_millis(100));
    }
    thread::sleep(Duration::from_secs(1));
    second.kill().unwrap();
    let _ = second.wait();
    let code = finish(first, Duration::from_secs(120));
    let err = stderr_of(&bench, 0);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("host 1 (") && err.contains("is gone"), "{err}");

    let run = merged(&bench, &t, "duo");
    assert_eq!(run.status, RunStatus::Failed);
    assert!(
        run.error.as_deref().unwrap_or("").contains("host 1 ("),
        "{:?}",
        run.error
    );
    // l.i0, which both hosts finished, is kept whole; qp100 is failed, naming host 1.
    assert_eq!(run.steps[0].status, RunStatus::Complete);
    assert_eq!(run.steps[0].rows_inserted, 2 * 2000);
    let qp = &run.steps[1];
    assert_eq!(qp.status, RunStatus::Failed);
    assert!(
        qp.error.as_deref().unwrap_or("").contains("host 1 ("),
        "{:?}",
        qp.error
    );
    assert_eq!(qp.sla.as_ref().map(|s| s.pass), Some(false));
    let status: String = c
        .query_one("SELECT status FROM ibench_group WHERE name = 'duo'", &[])
        .unwrap()
        .get(0);
    assert_eq!(status, "failed");
    drop(c);
    drop(namespaces);
    t.kept.stop();
}

#[test]
fn a_host_that_never_joins_fails_the_group_in_time() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let t = target(&bench);
    let out = bench.path("h0");
    let local = format!("postgres://postgres@127.0.0.1:{}/postgres", t.port);
    let start = Instant::now();
    let alone = crate::common::ibench()
        .args(["run", "--url", &local, "--results", &local, "-q", "--out"])
        .arg(&out)
        .args([
            "--group",
            "lonely",
            "--hosts",
            "2",
            "--clients",
            "2",
            "--join-timeout",
            "2",
        ])
        .args(["--steps", "l.i0", "--l0-rows", "100"])
        .env("PGPASSWORD", &t.password)
        .current_dir(bench.path(""))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&alone.stderr);
    assert_eq!(alone.status.code(), Some(1), "{err}");
    assert!(
        err.contains("host 1 (never joined) did not reach the start") && err.contains("within 2s"),
        "{err}"
    );
    assert!(start.elapsed() < Duration::from_secs(60));
    // Bad combinations are usage errors.
    for (args, says) in [
        (vec!["--group", "g"], "--group needs --hosts"),
        (vec!["--hosts", "2"], "--hosts needs --group"),
        (
            vec!["--group", "a b", "--hosts", "2"],
            "is not a group name",
        ),
        (
            vec!["--group", "g", "--hosts", "2", "--table-mode", "shared"],
            "per-client",
        ),
        (
            vec!["--group", "g", "--hosts", "9", "--clients", "2"],
            "--hosts 9 is out of range",
        ),
        (vec!["--resume"], "--resume needs --group"),
        (
            vec!["--group", "g", "--hosts", "2", "--host-timeout", "0"],
            "--host-timeout 0 is out of range",
        ),
    ] {
        let o = crate::common::ibench()
            .args(["run", "--url", &local, "--results", &local, "-q", "--out"])
            .arg(&out)
            .args(&args)
            .env("PGPASSWORD", &t.password)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
    let no_store = crate::common::ibench()
        .args(["run", "--url", &local, "-q", "--out"])
        .arg(&out)
        .args(["--group", "g", "--hosts", "2"])
        .env("PGPASSWORD", &t.password)
        .output()
        .unwrap();
    assert_eq!(no_store.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_store.stderr).contains("--results postgres://"));
    t.kept.stop();
}

//! Duet (issue #37): `ibench experiment --duet` runs the two cells of each round at the same
//! time, each in a process of its own, started together; each run names its partner and its
//! round; the partner is not taken for a neighbour by the interference test; what duet cannot
//! run (a server given by URL, other than two cells a round) is refused in one line. Real
//! SQLite runs, read back from the results store with our own SQL.

use std::fs;
use std::path::Path;

use ibench::results::model::RunResult;
use rusqlite::Connection;

use crate::common::{Bench, path_str};

/// (cell, status) of each run of `experiment` in the store at `db`, by cell.
fn statuses(db: &Path, experiment: &str) -> Vec<(String, String)> {
    let Ok(conn) = Connection::open(db) else {
        return Vec::new();
    };
    let _ = conn.busy_timeout(std::time::Duration::from_secs(10));
    let Ok(mut stmt) =
        conn.prepare("SELECT cell, status FROM runs WHERE experiment = ?1 ORDER BY cell")
    else {
        return Vec::new();
    };
    stmt.query_map([experiment], |r| Ok((r.get(0)?, r.get(1)?)))
        .map(|rows| rows.flatten().collect())
        .unwrap_or_default()
}

/// An experiment `name` of two SQLite configs (`synchronous` OFF and NORMAL), `repeats`
/// rounds of a small load, its index and a small l.i1.
fn two_configs(name: &str, repeats: u32, extra: &str) -> String {
    sized(name, repeats, extra, 30_000)
}

/// [`two_configs`] with `rows` rows in l.i0 (and a fifth of them in l.i1).
fn sized(name: &str, repeats: u32, extra: &str, rows: u32) -> String {
    format!(
        "name = \"{name}\"\nrepeats = {repeats}\n{extra}\n[workload]\nsteps = \"l.i0,l.x,l.i1\"\n\
         clients = 1\nrows_per_client = {rows}\nl1_rows = {}\n\n[[target]]\nname = \"lite\"\n\
         dbms = \"sqlite\"\n\n[[config]]\nname = \"off\"\noptions = {{ synchronous = \"OFF\" }}\n\n\
         [[config]]\nname = \"normal\"\noptions = {{ synchronous = \"NORMAL\" }}\n",
        rows / 5
    )
}

/// The runs of `experiment` in the store at `db`.
fn stored(db: &Path, experiment: &str) -> Vec<RunResult> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT document FROM runs WHERE experiment = ?1 ORDER BY repeat, cell")
        .unwrap();
    stmt.query_map([experiment], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|d| serde_json::from_str(&d.unwrap()).unwrap())
        .collect()
}

/// Seconds both runs ran at once (their recorded start and end), and the shorter run's.
fn overlap(a: &RunResult, b: &RunResult) -> (f64, f64) {
    let secs = |r: &RunResult| {
        let end = r.finished_at.expect("finished");
        (r.started_at, end, (end - r.started_at).as_seconds_f64())
    };
    let ((a0, a1, da), (b0, b1, db)) = (secs(a), secs(b));
    let both = (a1.min(b1) - a0.max(b0)).as_seconds_f64().max(0.0);
    (both, da.min(db))
}

/// The steps of a pair started together: neither run started a step before the other had
/// finished the step before it (each waits for the other at the start of each step).
fn aligned(a: &RunResult, b: &RunResult) {
    use chrono::TimeDelta;
    assert_eq!(a.steps.len(), b.steps.len());
    let end = |s: &ibench::results::model::StepResult| {
        s.started_at + TimeDelta::microseconds((s.duration_s * 1e6) as i64)
    };
    // The recorded start is the wall clock's, the duration a monotonic clock's: a few ms.
    let slack = TimeDelta::milliseconds(5);
    for i in 0..a.steps.len() {
        let (sa, sb) = (&a.steps[i], &b.steps[i]);
        let gap = (sa.started_at - sb.started_at).abs();
        eprintln!(
            "{}: the two runs started {} ms apart",
            sa.name,
            gap.num_milliseconds()
        );
        if i > 0 {
            let (pa, pb) = (&a.steps[i - 1], &b.steps[i - 1]);
            for (s, other, run) in [(sa, pb, &a.run_id), (sb, pa, &b.run_id)] {
                assert!(
                    s.started_at + slack >= end(other),
                    "{run} started {} at {} before its partner ended {} at {}",
                    s.name,
                    s.started_at,
                    other.name,
                    end(other)
                );
            }
        }
    }
}

/// Runs `ibench experiment FILE --duet --out OUT -q` to completion: the store's path.
fn run_duet(bench: &Bench, text: &str) -> std::path::PathBuf {
    let file = bench.path("duet.toml");
    fs::write(&file, text).unwrap();
    let out = bench.out();
    let o = bench.run_raw(
        &[
            "experiment",
            path_str(&file),
            "--duet",
            "--out",
            path_str(&out),
        ],
        &["-q"],
    );
    o.assert_success();
    assert!(o.stderr.contains("at once (duet"), "{}", o.describe());
    out.join("results.db")
}

/// Two cells, two rounds: four complete runs; the two of each round ran at the same time
/// (their windows overlap by most of the shorter one), step by step (neither starts a step
/// before the other ended the one before), each recording its round and naming its partner
/// (cell and run id), which `show` prints; `compare` says the rounds ran in duet.
#[test]
fn each_round_runs_its_two_cells_at_once_and_each_run_names_its_partner() {
    let bench = Bench::exclusive();
    let db = run_duet(&bench, &two_configs("pairs", 2, ""));
    let runs = stored(&db, "pairs");
    assert_eq!(runs.len(), 4, "four runs");
    for pair in runs.chunks(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let (ta, tb) = (
            a.experiment.as_ref().unwrap(),
            b.experiment.as_ref().unwrap(),
        );
        assert_eq!((ta.repeat, ta.round), (tb.repeat, tb.round));
        assert_eq!(ta.round, Some(ta.repeat));
        for (run, tag, other) in [(a, ta, b), (b, tb, a)] {
            assert_eq!(run.status, ibench::results::model::RunStatus::Complete);
            let duet = tag.duet.as_ref().expect("the run records its duet");
            assert_eq!(Some(&duet.partner), other.config.label.as_ref());
            assert_eq!(duet.partner_run.as_deref(), Some(other.run_id.as_str()));
        }
        let (both, shorter) = overlap(a, b);
        eprintln!(
            "round {}: {} {:.2}s, {} {:.2}s, at once {both:.2}s ({:.0}% of the shorter)",
            ta.repeat,
            ta.cell,
            (a.finished_at.unwrap() - a.started_at).as_seconds_f64(),
            tb.cell,
            (b.finished_at.unwrap() - b.started_at).as_seconds_f64(),
            both / shorter * 100.0
        );
        assert!(
            both >= 0.7 * shorter,
            "round {}: the runs overlap {both:.2}s of {shorter:.2}s",
            ta.repeat
        );
        aligned(a, b);
    }
    let show = bench.run_raw(&["show", "--results", path_str(&db), &runs[0].run_id], &[]);
    show.assert_success();
    let partner = &runs[1].run_id;
    assert!(
        show.stdout.contains(&format!(
            "round 1, duet with lite/off/glibc/default (run {partner})"
        )) || show.stdout.contains(&format!(
            "round 1, duet with lite/normal/glibc/default (run {partner})"
        )),
        "{}",
        show.stdout
    );
    // compare pairs the two cells by round and says both rounds ran in duet.
    let cmp = bench.run_raw(
        &[
            "compare",
            "lite/off/glibc/default",
            "lite/normal/glibc/default",
            "--results",
            path_str(&db),
            "--json",
        ],
        &[],
    );
    cmp.assert_success();
    let json: serde_json::Value = serde_json::from_str(&cmp.stdout).unwrap();
    assert_eq!(
        (json["rounds"].as_u64(), json["duet_rounds"].as_u64()),
        (Some(2), Some(2))
    );
    let text = bench.run_raw(
        &[
            "compare",
            "lite/off/glibc/default",
            "lite/normal/glibc/default",
            "--results",
            path_str(&db),
        ],
        &[],
    );
    assert!(
        text.stdout
            .contains("Duet: in 2 of the rounds the two runs ran at the same time"),
        "{}",
        text.stdout
    );
}

/// The partner is expected: its CPU counts as the pair's (`duet_cpu_cores`), not as a
/// neighbour's (`others_cpu_cores`), so a duet run's steps are not marked disturbed because
/// of it, though it kept a core or part of one busy beside each step it overlapped (on a quiet
/// host about one: alone, well over the threshold's quarter of a core). The host may have
/// neighbours of its own (other tests, other sessions): a step is then disturbed by them
/// alone, which the test tells apart.
#[test]
fn the_partner_does_not_disturb_a_duet_run() {
    /// Five 10 ms clock ticks: what /proc's tick-rounded CPU times of three processes and
    /// two CPUs may differ by between two readings.
    const TICKS_S: f64 = 0.05;
    let bench = Bench::exclusive();
    let db = run_duet(&bench, &two_configs("quiet", 1, ""));
    let runs = stored(&db, "quiet");
    assert_eq!(runs.len(), 2);
    let mut partner_busy = 0;
    for run in &runs {
        for s in &run.steps {
            let e = s.efficiency.as_ref().expect("costs measured");
            let i = e.interference.as_ref().expect("interference measured");
            let pair = i.duet_cpu_cores.expect("the pair's CPU recorded in duet");
            let own = e.client.cpu_s / i.window_s;
            // What the partner (and its share of the experiment) used beside this step.
            let partner = pair - own;
            eprintln!(
                "{} {}: {:.2}s, host busy {:.2} cores, own CPU {own:.2}, the pair's {pair:.2} \
                 (the partner {partner:.2}), others' {:.3}, steal {:.3}, disturbed {:?}",
                run.config.label.as_deref().unwrap_or_default(),
                s.name,
                i.window_s,
                e.host_cpu_s / i.window_s,
                i.others_cpu_cores,
                i.steal_cores,
                i.disturbed
            );
            // Within a few clock ticks over the window: /proc rounds each process's CPU
            // time down to whole ticks (the pair is three processes) and samples the host's
            // per CPU, so on a 0.2 s step one tick is 0.05 cores.
            let ticks = TICKS_S / i.window_s;
            assert!(
                partner > -ticks,
                "{} {}: the pair's CPU {pair:.3} does not hold the run's own {own:.3}",
                run.run_id,
                s.name
            );
            // The partner is in the pair's CPU and not also in the others': the two add up
            // to no more than the host's busy time (less the kernel's own work).
            let host = e.host_cpu_s / i.window_s;
            assert!(
                i.others_cpu_cores + pair <= host + ticks,
                "{} {}: others {:.3} + pair {pair:.3} > host {host:.3}",
                run.run_id,
                s.name,
                i.others_cpu_cores
            );
            if partner >= 0.1 {
                partner_busy += 1;
            }
            // Disturbed only by what was not the pair: the reasons are the thresholds the
            // others' figures (the partner left out) cross.
            let reasons = ibench::metrics::interference::reasons(i, (f64::MAX, f64::MAX));
            let cpu_reason = i.disturbed.iter().any(|r| r.starts_with("other processes"));
            assert_eq!(
                cpu_reason,
                i.others_cpu_cores >= ibench::metrics::interference::OTHERS_CPU_CORES,
                "{} {}: {:?}",
                run.run_id,
                s.name,
                i.disturbed
            );
            assert!(i.disturbed.len() >= reasons.len());
            if i.others_cpu_cores < 0.25
                && i.steal_cores < ibench::metrics::interference::STEAL_CORES
            {
                assert!(
                    i.disturbed
                        .iter()
                        .all(|r| r.starts_with("others read") || r.starts_with("others wrote")),
                    "{} {}: {:?}",
                    run.run_id,
                    s.name,
                    i.disturbed
                );
            }
        }
    }
    // The partner was busy beside the steps, and was counted as the pair's, not as others'.
    assert!(
        partner_busy >= 2,
        "steps with the partner busy beside them: {partner_busy}"
    );
}

/// What duet cannot run is refused before anything runs, in one line, exit 2: a server given
/// by URL (both runs would share it), three cells a round (the flag, and the file's key,
/// named at its line).
#[test]
fn a_url_target_and_three_cells_are_refused() {
    let bench = Bench::new();
    let out = bench.out();
    let url = bench.path("url.toml");
    fs::write(
        &url,
        "name = \"u\"\n[workload]\nsteps = \"l.i0\"\n[[target]]\nname = \"lite\"\n\
         dbms = \"sqlite\"\n[[target]]\nname = \"ext\"\nurl = \"postgres://bench@127.0.0.1:9/ib\"\n",
    )
    .unwrap();
    let o = bench.run_raw(
        &[
            "experiment",
            path_str(&url),
            "--duet",
            "--out",
            path_str(&out),
        ],
        &[],
    );
    let all = o.assert_refused("target ext is a server given by url");
    assert!(all.contains("error: --duet: duet:"), "{all}");

    let three = bench.path("three.toml");
    let text = two_configs("three", 1, "duet = true")
        + "\n[[config]]\nname = \"full\"\noptions = { synchronous = \"FULL\" }\n";
    fs::write(&three, text).unwrap();
    let o = bench.run_raw(
        &["experiment", path_str(&three), "--out", path_str(&out)],
        &[],
    );
    let all = o.assert_refused("3 cell(s) a round");
    assert!(all.contains("three.toml:3: duet:"), "{all}");
    let o = bench.run_raw(
        &["experiment", path_str(&three), "--duet", "--dry-run"],
        &[],
    );
    o.assert_refused("give it exactly two");
    assert!(!out.join("results.db").exists(), "nothing ran");
}

/// Ctrl-C while a pair runs reaches the experiment alone, which passes it on once to both
/// runs: each is saved as interrupted and the experiment exits 130; run again, the round runs
/// whole and completes, and the store holds only the complete pair.
#[test]
fn ctrl_c_stops_both_runs_of_a_pair_saved_and_the_round_runs_again() {
    let bench = Bench::new();
    let file = bench.path("stop.toml");
    fs::write(&file, sized("stop", 1, "", 150_000)).unwrap();
    let out = bench.out();
    let db = out.join("results.db");
    let args = [
        "experiment",
        path_str(&file),
        "--duet",
        "--out",
        path_str(&out),
    ];
    let mut running = bench.spawn_raw(&args, &["-q"]);
    running.wait_for_stderr(std::time::Duration::from_secs(60), |l| {
        l.starts_with("round 1:")
    });
    let started = std::time::Instant::now();
    while statuses(&db, "stop")
        .iter()
        .filter(|(_, s)| s == "running")
        .count()
        < 2
    {
        assert!(started.elapsed().as_secs() < 60, "the pair never ran");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(running.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let o = running.finish(std::time::Duration::from_secs(120));
    assert_eq!(o.code, Some(130), "{}", o.describe());
    let stopped = statuses(&db, "stop");
    assert_eq!(stopped.len(), 2, "{stopped:?}");
    assert!(
        stopped.iter().all(|(_, s)| s == "interrupted"),
        "{stopped:?}"
    );
    assert_eq!(
        o.stderr
            .matches("interrupted; run the same command again")
            .count(),
        2
    );

    bench.run_raw(&args, &["-q"]).assert_success();
    let done = statuses(&db, "stop");
    assert_eq!(done.len(), 2, "the interrupted attempts dropped: {done:?}");
    assert!(done.iter().all(|(_, s)| s == "complete"), "{done:?}");
}

/// The command lines of the processes running a duet child (`--duet-cell`) now.
fn children_command_lines() -> Vec<String> {
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|p| fs::read(p.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("--duet-cell"))
        .collect()
}

/// With a PostgreSQL results store whose URL holds the password, the duet children get the
/// URL without it (and the password in their environment): no child's command line, which
/// `ps` shows every user, ever holds it; both runs are stored.
#[test]
fn a_store_password_never_reaches_a_childs_command_line() {
    if !crate::common::have("postgres", "") {
        return;
    }
    let bench = crate::common::server_bench();
    let (setup, _kept) = bench.keep_server("postgres", &["--steps", "l.i0", "--l0-rows", "1000"]);
    let store = crate::common::kept_url(&setup);
    let password = store
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
        .and_then(|(user, _)| user.split_once(':'))
        .map(|(_, p)| p.to_string())
        .expect("the kept server's URL has a password");
    let file = bench.path("duet.toml");
    fs::write(&file, two_configs("pw", 1, "")).unwrap();
    let mut seen = Vec::new();
    let outcome = std::thread::scope(|s| {
        let run = s.spawn(|| {
            bench.run_raw(
                &["experiment", path_str(&file), "--duet", "--results", &store],
                &["-q"],
            )
        });
        while !run.is_finished() {
            seen.extend(children_command_lines());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        run.join().unwrap()
    });
    outcome.assert_success();
    assert!(!seen.is_empty(), "the children were seen running");
    for line in &seen {
        assert!(
            !line.contains(&password),
            "a password on a command line: {line}"
        );
    }
    let mut c = postgres::Client::connect(&store, postgres::NoTls).unwrap();
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM runs WHERE experiment = 'pw' AND status = 'complete'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 2, "both runs stored");
}

//! A shared `--out` (mode 1777, as /tmp) with ibench run by root: another local user (`nobody`)
//! plants symbolic links and files of their own at the names ibench is about to write, and
//! ibench follows none of them, writes nothing outside `--out`, and trusts no run it did not
//! make. A directory others can write to that is not sticky is refused.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ibench::results::model::{RunResult, RunStatus};

use crate::common::{Bench, path_str, server_bench};
use crate::security::{as_nobody, can_switch_user};

const PRECIOUS: &str = "precious: root's own file\n";

/// A bench with a sticky world-writable `shared` directory (the `--out`) and a root-owned
/// file `victim` beside it that every planted link points at.
fn shared_bench() -> (Bench, PathBuf, PathBuf) {
    let bench = server_bench(); // enterable by nobody
    let shared = bench.path("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = bench.path("victim");
    fs::write(&victim, PRECIOUS).unwrap();
    (bench, shared, victim)
}

/// Every file under `dir` except `skip` and the benchmark's own database (`db.sqlite*`, the
/// run's `--path`), with its size, mode, owner and short content: what "nothing was written
/// outside --out" compares.
fn snapshot(dir: &Path, skip: &Path) -> BTreeMap<PathBuf, (u64, u32, u32, String)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p == skip || e.file_name().to_string_lossy().starts_with("db.sqlite") {
                continue;
            }
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            let content = if m.is_file() && m.len() < 4096 {
                fs::read_to_string(&p).unwrap_or_default()
            } else {
                String::new()
            };
            out.insert(p, (m.len(), m.mode(), m.uid(), content));
        }
    }
    out
}

/// Plants, as nobody, a link to `victim` at `dir/name`.
fn plant_link(victim: &Path, dir: &Path, name: &str) {
    let at = dir.join(name);
    let (ok, text) = as_nobody("ln", &["-s", path_str(victim), path_str(&at)]);
    assert!(ok, "ln -s as nobody: {text}");
}

fn run_into(bench: &Bench, out: &Path, more: &[&str]) -> crate::common::Outcome {
    let db = bench.path("db.sqlite");
    let args = [
        &[
            "--path",
            path_str(&db),
            "--steps",
            "l.i0",
            "--l0-rows",
            "300",
            "--clients",
            "1",
        ][..],
        more,
    ]
    .concat();
    bench.run_raw(&["run", "--out", path_str(out), "-q"], &args)
}

/// The newest complete run in `out` after `outcome` succeeded (links planted there are not
/// results).
fn complete_run(out: &Path, outcome: &crate::common::Outcome) -> (PathBuf, RunResult) {
    outcome.assert_success();
    let mut runs: Vec<(PathBuf, RunResult)> = fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
        })
        .filter_map(|p| Some((p.clone(), ibench::results::file::load(&p).ok()?)))
        .filter(|(_, r)| r.status == RunStatus::Complete)
        .collect();
    runs.sort_by_key(|(_, r)| r.started_at);
    runs.pop().expect("a complete run")
}

#[test]
fn an_out_others_can_write_to_is_refused_unless_sticky() {
    let bench = Bench::new();
    let out = bench.path("open");
    fs::create_dir(&out).unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o777)).unwrap();
    let refused = run_into(&bench, &out, &[]);
    assert_eq!(refused.code, Some(2), "{}", refused.describe());
    let lines: Vec<&str> = refused.stderr.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1, "{}", refused.describe());
    assert!(
        lines[0].contains("--out") && lines[0].contains("other users") && lines[0].contains("+t"),
        "{}",
        lines[0]
    );
    assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "nothing written");
    // Sticky, as /tmp: usable.
    fs::set_permissions(&out, fs::Permissions::from_mode(0o1777)).unwrap();
    complete_run(&out, &run_into(&bench, &out, &[]));
}

#[test]
fn links_planted_at_every_name_ibench_writes_are_never_followed() {
    if !can_switch_user() {
        return;
    }
    let (bench, shared, victim) = shared_bench();
    // The names the next runs will derive from their start time (this second and the next
    // few), and the report's: each a link to the victim.
    let now = chrono::Utc::now();
    let mut planted = Vec::new();
    for s in 0..8 {
        let t = (now + chrono::Duration::seconds(s)).format("%Y%m%dT%H%M%S");
        for suffix in ["", "-2"] {
            for ext in [
                "json",
                "lock",
                "json.tmp",
                "server.log",
                "pooler.log",
                "data",
                "server",
                "profiles",
            ] {
                planted.push(format!("ibench-{t}-sqlite{suffix}.{ext}"));
            }
        }
    }
    planted.extend(
        [
            "ibench-report.html",
            ".ibench-report.html.tmp",
            "ibench-write-test",
        ]
        .map(String::from),
    );
    for name in &planted {
        plant_link(&victim, &shared, name);
    }
    let before = snapshot(&bench.path(""), &shared);

    let (json, run) = complete_run(&shared, &run_into(&bench, &shared, &[]));
    assert!(!planted.iter().any(|p| json.ends_with(p)), "{json:?}");
    let report = bench.run_raw(
        &[
            "report",
            "--results",
            path_str(&shared.join("results.db")),
            &run.run_id,
        ],
        &[],
    );
    report.assert_success();

    assert_eq!(fs::read_to_string(&victim).unwrap(), PRECIOUS);
    assert_eq!(
        snapshot(&bench.path(""), &shared),
        before,
        "written outside --out"
    );
    for name in &planted {
        let m = fs::symlink_metadata(shared.join(name)).unwrap();
        let replaced = name == "ibench-report.html";
        assert_eq!(m.is_symlink(), !replaced, "{name}");
    }
    // The report replaced the link at its name with a file of its own.
    let html = fs::symlink_metadata(shared.join("ibench-report.html")).unwrap();
    assert!(html.is_file() && html.uid() == 0);
    let leftovers: Vec<String> = fs::read_dir(&shared)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && !planted.contains(n))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_dangling_link_at_the_results_database_is_refused() {
    if !can_switch_user() {
        return;
    }
    let (bench, shared, _) = shared_bench();
    let target = bench.path("made-through-the-link");
    plant_link(&target, &shared, "results.db");
    let out = run_into(&bench, &shared, &[]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap();
    assert!(
        line.contains("results.db") && line.contains("not ibench's own"),
        "{line}"
    );
    assert!(!target.exists(), "SQLite created the link's target");
    // Another user's journal beside a store of ibench's own is refused the same way.
    fs::remove_file(shared.join("results.db")).unwrap();
    complete_run(&shared, &run_into(&bench, &shared, &[]));
    // The store's journal is ibench's own from its first open (and kept, truncated, between
    // transactions), so nobody can never plant a hot journal at its name.
    let journal = fs::symlink_metadata(shared.join("results.db-journal")).unwrap();
    assert!(journal.is_file() && journal.uid() == 0);
}

#[test]
fn a_planted_run_cannot_rewrite_a_stored_run_or_reach_a_file_through_its_log() {
    if !can_switch_user() {
        return;
    }
    let (bench, shared, victim) = shared_bench();
    let (_, real) = complete_run(&shared, &run_into(&bench, &shared, &["--label", "real"]));
    // nobody plants a dead run of their own that claims the real run's id: its document
    // (label TAMPERED, still running), an unlocked lock, a server directory whose log is
    // theirs, and the kept-log name linked to the victim.
    let mut forged = serde_json::to_value(&real).unwrap();
    forged["config"]["label"] = "TAMPERED".into();
    forged["status"] = "running".into();
    let source = bench.path("forged.json");
    fs::write(&source, serde_json::to_string(&forged).unwrap()).unwrap();
    fs::set_permissions(&source, fs::Permissions::from_mode(0o644)).unwrap();
    let evil = |ext: &str| shared.join(format!("evil.{ext}"));
    for (cmd, args) in [
        ("cp", vec![path_str(&source), path_str(&evil("json"))]),
        ("touch", vec![path_str(&evil("lock"))]),
        ("mkdir", vec![path_str(&evil("server"))]),
        (
            "sh",
            vec![
                "-c",
                &format!("echo attacker > {}/server.log", path_str(&evil("server"))),
            ],
        ),
        (
            "ln",
            vec!["-s", path_str(&victim), path_str(&evil("server.log"))],
        ),
    ] {
        let args: Vec<&str> = args.iter().map(|s| s.as_ref()).collect();
        let (ok, text) = as_nobody(cmd, &args);
        assert!(ok, "{cmd} as nobody: {text}");
    }

    let second = run_into(&bench, &shared, &[]);
    complete_run(&shared, &second);
    assert!(!second.stderr.contains("evil"), "{}", second.describe());
    assert_eq!(fs::read_to_string(&victim).unwrap(), PRECIOUS);
    assert!(evil("server").is_dir(), "nobody's directory was removed");
    // The stored run is as the real run saved it.
    let stored = rusqlite::Connection::open(shared.join("results.db"))
        .unwrap()
        .query_row(
            "SELECT label, status FROM runs WHERE id = ?1",
            [&real.run_id],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        )
        .unwrap();
    assert_eq!(stored, ("real".to_string(), "complete".to_string()));
}

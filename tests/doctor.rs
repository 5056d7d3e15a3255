//! `ibench doctor`: what this host can do, checked against what the test finds on the host
//! itself (the server binaries and their `--version`, perf, the cgroup hierarchies in
//! /proc/self/mountinfo); a file hidden by `IBENCH_TEST_HIDE` is reported missing with its
//! Debian command; a run records the checks in its results and the store.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use crate::common::{Bench, Outcome, ibench, json_files, open_db, path_str};

/// Runs `ibench <args>` in `bench`'s directory with `hide` added to `IBENCH_TEST_HIDE`.
fn run_hiding(bench: &Bench, hide: &str, args: &[&str]) -> Outcome {
    let hidden = match std::env::var("IBENCH_TEST_HIDE") {
        Ok(h) if !h.is_empty() => format!("{h},{hide}"),
        _ => hide.to_string(),
    };
    let out = ibench()
        .args(args)
        .env("IBENCH_TEST_HIDE", hidden)
        .current_dir(bench.path(""))
        .stdin(Stdio::null())
        .output()
        .expect("start ibench");
    Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        new_results: Vec::new(),
    }
}

/// `ibench doctor --json`'s features, by name, with nothing hidden but what the test run
/// hides (`IBENCH_TEST_HIDE` as given to `cargo test`, if at all).
fn features(bench: &Bench) -> Vec<Value> {
    let out = bench.run_raw(&["doctor", "--json"], &[]);
    out.assert_success();
    let doc: Value = serde_json::from_str(&out.stdout).expect("doctor --json parses");
    doc["features"].as_array().expect("features").clone()
}

fn feature<'a>(features: &'a [Value], name: &str) -> &'a Value {
    features
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no feature {name} in {features:?}"))
}

/// The version word a binary's `--version` prints (`15.20` of `postgres (PostgreSQL) 15.20
/// (Debian ...)`, `10.11.19` of `mariadbd Ver 10.11.19-MariaDB-...`), as the test reads it.
fn version_of(binary: &Path) -> String {
    let out = std::process::Command::new(binary)
        .arg("--version")
        .output()
        .expect("run --version");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split_whitespace()
        .map(|w| {
            w.split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .next()
                .unwrap_or("")
        })
        .find(|w| w.contains('.') && w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no version in {text:?}"))
        .trim_end_matches('.')
        .to_string()
}

/// Whether the test run hides `path` (`IBENCH_TEST_HIDE` given to `cargo test`).
fn hidden(path: &Path) -> bool {
    std::env::var("IBENCH_TEST_HIDE")
        .unwrap_or_default()
        .split(',')
        .any(|h| Path::new(h.trim()) == path)
}

/// A server binary: doctor names it with the version it prints, or says it is missing with
/// the Debian package that installs it.
fn assert_server(features: &[Value], name: &str, binary: Option<PathBuf>, package: &str) {
    let f = feature(features, name);
    match binary.filter(|b| b.is_file() && !hidden(b)) {
        Some(b) => {
            let expected = format!("{} {}", b.display(), version_of(&b));
            assert_eq!(f["available"], true, "{f}");
            assert_eq!(f["detail"], expected.as_str(), "{f}");
        }
        None => {
            assert_eq!(f["available"], false, "{f}");
            assert_eq!(f["install"], format!("apt-get install {package}").as_str());
        }
    }
}

/// The newest of Debian's PostgreSQL servers (`/usr/lib/postgresql/<major>/bin/postgres`).
fn debian_postgres() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse().ok()?;
            Some((major, e.path().join("bin/postgres")))
        })
        .filter(|(_, p)| p.is_file())
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

/// What the test reads of the cgroup hierarchies: per controller ibench uses (memory, io,
/// cpuset) the version it would go through (`memory v1`), and the cgroup2 mount.
fn cgroups_here() -> (Vec<String>, Option<String>) {
    let text = fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut v2: Option<(String, Vec<String>)> = None;
    let mut v1: Vec<String> = Vec::new();
    for line in text.lines() {
        let (left, right) = line.split_once(" - ").unwrap();
        let mount = left.split(' ').nth(4).unwrap().to_string();
        let fields: Vec<&str> = right.split(' ').collect();
        match fields[0] {
            "cgroup2" if v2.is_none() => {
                let cs =
                    fs::read_to_string(format!("{mount}/cgroup.controllers")).unwrap_or_default();
                v2 = Some((mount, cs.split_whitespace().map(String::from).collect()));
            }
            "cgroup" => v1.extend(fields[2].split(',').map(String::from)),
            _ => {}
        }
    }
    let on_v2 = |c: &str| v2.as_ref().is_some_and(|(_, cs)| cs.iter().any(|x| x == c));
    let lines = [("memory", "memory"), ("io", "blkio"), ("cpuset", "cpuset")]
        .iter()
        .map(|(c, c1)| {
            if on_v2(c) {
                format!("{c} v2")
            } else if v1.iter().any(|x| x == c1) {
                format!("{c} v1")
            } else {
                format!("{c} none")
            }
        })
        .collect();
    (lines, v2.map(|(m, _)| format!("cgroup2 at {m}")))
}

#[test]
fn doctor_names_the_servers_perf_and_cgroups_as_they_are() {
    let bench = Bench::new();
    let features = features(&bench);
    assert_server(&features, "postgres", debian_postgres(), "postgresql");
    let mariadbd = PathBuf::from("/usr/sbin/mariadbd");
    assert_server(&features, "mariadb", Some(mariadbd), "mariadb-server");

    let perf = feature(&features, "perf");
    let binary = Path::new("/usr/bin/perf");
    if std::env::var_os("IBENCH_PERF").is_none() && binary.is_file() && !hidden(binary) {
        let root = nix::unistd::geteuid().is_root();
        let paranoid: i32 = fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(2);
        assert_eq!(perf["available"], root || paranoid <= 2, "{perf}");
        let detail = perf["detail"].as_str().unwrap();
        let found = format!("/usr/bin/perf {}", version_of(binary));
        assert!(detail.starts_with(&found), "{found} in {perf}");
        assert_eq!(
            detail.contains("root: may profile any process"),
            root,
            "{perf}"
        );
    } else if std::env::var_os("IBENCH_PERF").is_none() {
        assert_eq!(perf["install"], "apt-get install linux-perf", "{perf}");
    }

    let cgroup = feature(&features, "cgroup");
    let detail = cgroup["detail"].as_str().unwrap();
    let (controllers, v2) = cgroups_here();
    for c in &controllers {
        assert!(detail.contains(c.as_str()), "{c} in {cgroup}");
    }
    match v2 {
        Some(m) => assert!(detail.contains(&m), "{m} in {cgroup}"),
        None => assert!(detail.contains("no cgroup2"), "{cgroup}"),
    }
    let usable = controllers.iter().any(|c| !c.ends_with("none"));
    assert_eq!(
        cgroup["available"],
        usable && nix::unistd::geteuid().is_root(),
        "{cgroup}"
    );

    // The table says the same, one line per feature, and exits 0.
    let table = bench.run_raw(&["doctor"], &[]);
    table.assert_success();
    for f in &features {
        let name = f["name"].as_str().unwrap();
        let ok = if f["available"] == true { "yes" } else { "no" };
        let line = table
            .stdout
            .lines()
            .find(|l| l.split("  ").next() == Some(name))
            .unwrap_or_else(|| panic!("no line for {name}:\n{}", table.stdout));
        assert_eq!(line.split_whitespace().nth(1), Some(ok), "{line}");
    }
    // A usage error is still one.
    assert_eq!(
        bench.run_raw(&["doctor", "--no-such-flag"], &[]).code,
        Some(2)
    );
}

#[test]
fn a_hidden_sysbench_is_missing_and_doctor_says_how_to_install_it() {
    let bench = Bench::new();
    let out = run_hiding(&bench, "/usr/bin/sysbench", &["doctor"]);
    out.assert_success();
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("sysbench "))
        .unwrap_or_else(|| panic!("no sysbench line:\n{}", out.stdout));
    assert_eq!(line.split_whitespace().nth(1), Some("no"), "{line}");
    assert!(line.contains("apt-get install sysbench"), "{line}");

    let out = run_hiding(&bench, "/usr/bin/sysbench", &["doctor", "--json"]);
    out.assert_success();
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let f = feature(doc["features"].as_array().unwrap(), "sysbench");
    assert_eq!(f["available"], false, "{f}");
    assert_eq!(f["install"], "apt-get install sysbench", "{f}");

    // Not hidden, an installed sysbench is found: the hook made the difference.
    let sysbench = Path::new("/usr/bin/sysbench");
    if sysbench.is_file() && !hidden(sysbench) {
        let f = features(&bench);
        let f = feature(&f, "sysbench");
        assert_eq!(f["available"], true, "{f}");
        let expected = format!("/usr/bin/sysbench {}", version_of(sysbench));
        assert_eq!(f["detail"], expected.as_str(), "{f}");
    }
}

#[test]
fn a_run_records_what_the_host_could_do_in_its_results_and_the_store() {
    let bench = Bench::new();
    let out = bench.out();
    let run = run_hiding(
        &bench,
        "/usr/bin/sysbench",
        &[
            "run",
            "--out",
            path_str(&out),
            "-q",
            "--steps",
            "l.i0",
            "--l0-rows",
            "1000",
        ],
    );
    run.assert_success();
    let files = json_files(&out);
    assert_eq!(files.len(), 1, "{files:?}");
    let result = ibench::results::file::load(&files[0]).unwrap();
    let recorded = &result.environment.host_features;
    let doctor = features(&bench);
    // The same features as doctor's, but the store (not checked at every run).
    let names: Vec<&str> = doctor
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .filter(|n| *n != "results-store")
        .collect();
    let recorded_names: Vec<&str> = recorded.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(recorded_names, names);
    for name in ["postgres", "mariadb", "cgroup", "io_uring", "out"] {
        let r = recorded.iter().find(|f| f.name == name).unwrap();
        assert_eq!(
            Value::Bool(r.available),
            feature(&doctor, name)["available"],
            "{name}: {r:?}"
        );
    }
    let sysbench = recorded.iter().find(|f| f.name == "sysbench").unwrap();
    assert!(!sysbench.available, "hidden: {sysbench:?}");
    assert_eq!(
        sysbench.install.as_deref(),
        Some("apt-get install sysbench")
    );

    // The store's copy of the document holds them too, and `ibench show` says so.
    let store = out.join("results.db");
    let document: String = open_db(&store)
        .query_row("SELECT document FROM runs", [], |r| r.get(0))
        .unwrap();
    let stored: Value = serde_json::from_str(&document).unwrap();
    let stored = stored["environment"]["host_features"].as_array().unwrap();
    assert_eq!(stored.len(), recorded.len());
    assert!(
        stored
            .iter()
            .any(|f| f["name"] == "sysbench" && f["available"] == false)
    );
    let show = bench.run_raw(
        &["show", "--results", path_str(&store), &result.run_id],
        &[],
    );
    show.assert_success();
    let line = show
        .stdout
        .lines()
        .find(|l| l.starts_with("host features: "))
        .unwrap_or_else(|| panic!("no host line:\n{}", show.stdout));
    assert!(line.contains("sysbench"), "{line}");
}

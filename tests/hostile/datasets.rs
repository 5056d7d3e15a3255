//! See the module list in tests/hostile/mod.rs.
//!
//! Each case saves a small dataset (an Insert Benchmark load of 2,000 rows a client, kept by
//! `--prepare-only`: a fraction of a second on SQLite) and then damages it, interrupts its save
//! or plants something beside it, as a careless user, a full disk or `kill -9` would.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::thread::sleep;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::common::{Bench, Outcome, have, path_str, server_bench};

/// A load small enough to be cheap, kept for `ibench dataset save`.
const LOAD: [&str; 5] = ["--steps", "l.i0", "--l0-rows", "2000", "--prepare-only"];

/// The same run started from dataset `name`: only the restore.
fn from(name: &str) -> [&str; 7] {
    [
        "--steps",
        "l.i0",
        "--l0-rows",
        "2000",
        "--from-dataset",
        name,
        "--prepare-only",
    ]
}

/// `ibench dataset ARGS --out OUT`.
fn dataset(bench: &Bench, args: &[&str]) -> Outcome {
    let out = bench.out();
    let mut all = vec!["dataset"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", path_str(&out)]);
    bench.run_raw(&all, &[])
}

/// Loads with `extra` flags and saves the database the run kept as dataset `name`; the
/// directory of the run's database.
fn saved(bench: &Bench, name: &str, extra: &[&str]) -> PathBuf {
    let mut args = extra.to_vec();
    args.extend_from_slice(&LOAD);
    let run = bench.run(&args).result();
    dataset(bench, &["save", name]).assert_success();
    match &run.managed_server {
        Some(server) => PathBuf::from(server.data_dir.clone().expect("a data directory")),
        None => (run.resolved.as_ref())
            .and_then(|r| r.target.path.as_ref())
            .and_then(|p| p.parent())
            .expect("a scratch database")
            .to_path_buf(),
    }
}

/// Exit 2 and one `error:` line that contains each of `needles`.
fn refused(outcome: &Outcome, needles: &[&str]) {
    assert_eq!(outcome.code, Some(2), "{}", outcome.describe());
    let lines: Vec<&str> = outcome.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", outcome.describe());
    assert!(lines[0].starts_with("error: "), "{}", outcome.describe());
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "{needle}: {}",
            outcome.describe()
        );
    }
    assert!(outcome.new_results.is_empty(), "{:?}", outcome.new_results);
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut all: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    all.sort();
    all
}

/// The temporary directories (`.NAME.<random>.tmp`) in the datasets directory.
fn temporaries(store: &Path) -> Vec<String> {
    names(store)
        .into_iter()
        .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
        .collect()
}

#[test]
fn a_corrupted_dataset_is_refused_before_a_run_starts_on_it() {
    let bench = Bench::new();
    saved(&bench, "d1", &[]);
    // One bit flipped: same length, same name.
    let file = bench.out().join("datasets/d1/data/ibench.sqlite");
    let mut bytes = fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 1;
    fs::write(&file, &bytes).unwrap();
    let before = names(&bench.out());
    let manifest = bench.out().join("datasets/d1/manifest.json");
    refused(
        &bench.run(&from("d1")),
        &["dataset d1", path_str(&manifest), "sha256"],
    );
    assert_eq!(
        names(&bench.out()),
        before,
        "nothing restored, nothing left"
    );
    assert_eq!(
        fs::read(&file).unwrap(),
        bytes,
        "the dataset is left as it is"
    );
    // A file added to the dataset is as much a change.
    fs::write(file.with_file_name("extra"), b"x").unwrap();
    bytes[middle] ^= 1;
    fs::write(&file, &bytes).unwrap();
    refused(&bench.run(&from("d1")), &["dataset d1", "sha256"]);
    fs::remove_file(file.with_file_name("extra")).unwrap();
    bench.run(&from("d1")).result();
}

#[test]
fn a_restore_that_fails_midway_leaves_no_partial_database() {
    let bench = Bench::new();
    saved(&bench, "d1", &[]);
    // A link after ibench.sqlite in name order: the restore copies the database, then fails.
    let link = bench.out().join("datasets/d1/data/zz");
    symlink("/etc/passwd", &link).unwrap();
    let passwd = fs::read("/etc/passwd").unwrap();
    let before = names(&bench.out());
    refused(&bench.run(&from("d1")), &["dataset d1", path_str(&link)]);
    assert_eq!(names(&bench.out()), before, "no <stem>.data left");
    assert_eq!(fs::read("/etc/passwd").unwrap(), passwd);
}

/// Waits until a temporary directory of a save appears in `store`; its path.
fn wait_for_temporary(store: &Path, pid: u32) -> PathBuf {
    let start = Instant::now();
    loop {
        if let Some(name) = fs::read_dir(store)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with('.') && n.ends_with(".tmp"))
        {
            return store.join(name);
        }
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        assert!(
            alive,
            "the save ended before its temporary directory was seen"
        );
        assert!(start.elapsed() < Duration::from_secs(60), "no save started");
        sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_interrupted_save_is_settled_at_the_next_start_and_a_live_one_is_not() {
    let bench = Bench::new();
    let run = bench.run(&LOAD).result();
    let data = (run.resolved.as_ref())
        .and_then(|r| r.target.path.as_ref())
        .and_then(|p| p.parent())
        .unwrap()
        .to_path_buf();
    // Many files, each synced by the save: it takes seconds.
    for i in 0..2000u32 {
        fs::write(data.join(format!("pad{i:04}")), i.to_le_bytes().repeat(256)).unwrap();
    }
    let store = bench.out().join("datasets");
    let out = bench.out();
    let save =
        |name: &str| bench.spawn_raw(&["dataset", "save", name, "--out", path_str(&out)], &[]);

    // A save that is still running (stopped, even) keeps its directory.
    let live = save("d1");
    let tmp = wait_for_temporary(&store, live.pid());
    let pid = Pid::from_raw(live.pid() as i32);
    kill(pid, Signal::SIGSTOP).unwrap();
    let listed = dataset(&bench, &["list"]);
    listed.assert_success();
    assert!(tmp.is_dir(), "a live save's directory was removed");
    assert!(!listed.stderr.contains(".tmp"), "{}", listed.describe());
    kill(pid, Signal::SIGCONT).unwrap();
    live.finish(Duration::from_secs(120)).assert_success();
    assert_eq!(temporaries(&store), Vec::<String>::new());

    // A save killed midway: its directory stays until the next start, which removes it.
    let killed = save("d2");
    let tmp = wait_for_temporary(&store, killed.pid());
    kill(Pid::from_raw(killed.pid() as i32), Signal::SIGKILL).unwrap();
    let outcome = killed.finish(Duration::from_secs(30));
    assert_eq!(outcome.code, None, "{}", outcome.describe());
    assert!(tmp.is_dir());
    let listed = dataset(&bench, &["list"]);
    listed.assert_success();
    assert!(!tmp.exists(), "{}", listed.describe());
    let name = tmp.file_name().unwrap().to_string_lossy().into_owned();
    assert!(listed.stderr.contains(&name), "{}", listed.describe());
    assert!(listed.stdout.starts_with("d1\t"), "{}", listed.describe());
    assert_eq!(temporaries(&store), Vec::<String>::new());
    // A run starts from the dataset the live save made: whole.
    bench.run(&from("d1")).result();
}

#[test]
fn leftovers_that_are_not_ibench_own_are_never_removed() {
    let bench = Bench::new();
    saved(&bench, "d1", &[]);
    let store = bench.out().join("datasets");
    // A link named as a temporary, to a directory of someone else's.
    let theirs = bench.path("theirs");
    fs::create_dir(&theirs).unwrap();
    fs::write(theirs.join("precious"), b"keep").unwrap();
    symlink(&theirs, store.join(".d2.aaaaaaaaaaaa.tmp")).unwrap();
    // A directory of ibench's user that holds what no save makes.
    let odd = store.join(".d3.bbbbbbbbbbbb.tmp");
    fs::create_dir(&odd).unwrap();
    fs::write(odd.join("notes.txt"), b"mine").unwrap();
    // Another user's directory (only root can make one to test with).
    let other = store.join(".d4.cccccccccccc.tmp");
    if nix::unistd::Uid::effective().is_root() {
        fs::create_dir_all(other.join("data")).unwrap();
        std::os::unix::fs::chown(&other, Some(65534), Some(65534)).unwrap();
    }
    // What a killed save leaves: settled.
    let dead = store.join(".d5.dddddddddddd.tmp");
    fs::create_dir_all(dead.join("data")).unwrap();
    fs::write(dead.join("data/ibench.sqlite"), b"half").unwrap();
    let listed = dataset(&bench, &["list"]);
    listed.assert_success();
    assert!(!dead.exists(), "{}", listed.describe());
    assert_eq!(fs::read(theirs.join("precious")).unwrap(), b"keep");
    assert!(store.join(".d2.aaaaaaaaaaaa.tmp").is_symlink());
    assert_eq!(fs::read(odd.join("notes.txt")).unwrap(), b"mine");
    if nix::unistd::Uid::effective().is_root() {
        assert!(other.join("data").is_dir());
    }
}

#[test]
fn a_refused_restore_into_a_server_names_no_log_that_does_not_exist() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    saved(&bench, "p1", &["--server", "postgres"]);
    let mut args = vec!["--server", "postgres"];
    args.extend_from_slice(&from("p1"));
    // Refused before the server started: no log written, none named (the load's is there).
    let server = |outcome: Outcome| {
        assert!(!outcome.stderr.contains(".log"), "{}", outcome.describe());
        outcome
    };
    let before = names(&bench.out());

    // Its files changed: refused, and nothing left of the attempt.
    let conf = bench.out().join("datasets/p1/data/postgresql.conf");
    let text = fs::read_to_string(&conf).unwrap();
    fs::write(&conf, format!("{text}# changed\n")).unwrap();
    refused(&server(bench.run(&args)), &["dataset p1", "sha256"]);
    assert_eq!(names(&bench.out()), before);
    fs::write(&conf, &text).unwrap();

    // Saved by another version: refused before a server starts.
    let manifest = bench.out().join("datasets/p1/manifest.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
    doc["version"] = "PostgreSQL 9.6.24 on x86_64-pc-linux-gnu".into();
    fs::write(&manifest, doc.to_string()).unwrap();
    refused(
        &server(bench.run(&args)),
        &["dataset p1 was loaded by postgres 9.6.24"],
    );
    assert_eq!(names(&bench.out()), before);
}

#[test]
fn dataset_list_of_an_out_that_is_a_file_or_missing_exits_2() {
    let bench = Bench::new();
    let missing = bench.path("missing");
    for out in ["/etc/hostname", path_str(&missing)] {
        let outcome = bench.run_raw(&["dataset", "list", "--out", out], &[]);
        refused(&outcome, &[out]);
        assert_eq!(outcome.stdout, "", "{}", outcome.describe());
    }
    assert!(!missing.exists(), "list creates nothing");
    // An --out without datasets yet lists none.
    fs::create_dir(bench.out()).unwrap();
    let outcome = dataset(&bench, &["list"]);
    outcome.assert_success();
    assert_eq!(outcome.stdout, "");
}

#[test]
fn dataset_save_of_a_run_file_that_is_missing_or_not_a_run_exits_2() {
    let bench = Bench::new();
    let missing = bench.path("missing.json");
    let outcome = dataset(&bench, &["save", "d1", "--run", path_str(&missing)]);
    refused(&outcome, &[path_str(&missing)]);
    let garbage = bench.path("garbage.json");
    fs::write(&garbage, b"{ not json").unwrap();
    let outcome = dataset(&bench, &["save", "d1", "--run", path_str(&garbage)]);
    refused(&outcome, &[path_str(&garbage)]);
    assert!(!bench.out().join("datasets/d1").exists());
}

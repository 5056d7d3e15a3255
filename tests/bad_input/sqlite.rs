//! Bad input of the SQLite target: a `--sqlite-pragma` that is not a word or not a known
//! pragma, and a `--path` that cannot be opened, is no database, or is no regular file: exit
//! 2, one line naming it, the file left alone.

use super::{Leaves, SMALL, assert_usage_error, run};
use crate::common::{Bench, path_str};

#[test]
fn sqlite_pragma_that_is_not_a_word_is_rejected() {
    let bench = Bench::new();
    let o = run(&bench, &["--steps", "l.i0", "--sqlite-pragma", "x;drop=1"]);
    assert_usage_error(&o, &["x;drop"], Leaves::Nothing);
    let o = run(
        &bench,
        &["--steps", "l.i0", "--sqlite-pragma", "cache_size=1;drop"],
    );
    assert_usage_error(&o, &["1;drop"], Leaves::Nothing);
}

#[test]
fn unknown_sqlite_pragma_is_rejected_and_a_known_one_is_applied() {
    let bench = Bench::new();
    let o = run(
        &bench,
        &["--steps", "l.i0", "--sqlite-pragma", "cache_sise=-4000"],
    );
    assert_usage_error(&o, &["cache_sise"], Leaves::Nothing);
    // The correctly spelled pragma is accepted and shows in the effective settings.
    let o = run(
        &bench,
        &[
            "--steps",
            "l.i0",
            "--clients",
            "1",
            "--sqlite-pragma",
            "cache_size=-4000",
        ],
    );
    let run = o.result();
    let settings = &run.environment.dbms.settings;
    assert_eq!(
        settings.get("cache_size").map(String::as_str),
        Some("-4000")
    );
}

#[test]
fn sqlite_path_that_cannot_be_opened_is_rejected() {
    let bench = Bench::new();
    let missing_dir = bench.path("no-such-dir").join("db.sqlite");
    let a_dir = bench.path("a-directory");
    std::fs::create_dir(&a_dir).unwrap();
    for db in [missing_dir, a_dir] {
        let o = run(&bench, &["--steps", "l.i0", "--path", path_str(&db)]);
        assert_usage_error(&o, &[path_str(&db)], Leaves::FailedRunIfAny);
    }
}

#[test]
fn sqlite_path_that_is_not_a_database_is_rejected_and_left_alone() {
    let bench = Bench::new();
    let file = bench.path("notes.txt");
    let text = "not an SQLite database, just some text that is longer than a header\n".repeat(20);
    std::fs::write(&file, &text).unwrap();
    let o = run(&bench, &["--steps", "l.i0", "--path", path_str(&file)]);
    assert_usage_error(&o, &[path_str(&file)], Leaves::FailedRunIfAny);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        text,
        "file untouched"
    );
}

#[test]
fn a_database_path_that_is_no_file_is_rejected_before_anything_is_created() {
    let bench = Bench::new();
    let journal = std::path::Path::new("/dev/null-journal");
    let had_journal = journal.exists();
    let fifo = bench.path("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let dir = bench.path("dir");
    std::fs::create_dir(&dir).unwrap();
    // /dev/null used to fail mid-step (exit 1) and leave /dev/null-journal behind.
    for (path, is) in [
        ("/dev/null", "a device, FIFO or socket"),
        (path_str(&fifo), "a device, FIFO or socket"),
        (path_str(&dir), "a directory"),
    ] {
        let out = bench.out();
        for (command, size) in [("run", &SMALL[..]), ("micro", &["--seconds", "1"])] {
            let o = bench.run_raw(
                &[command, "--out", path_str(&out), "-q", "--path", path],
                size,
            );
            assert_usage_error(&o, &["--path", path, is, "regular file"], Leaves::Nothing);
            assert!(!out.exists(), "--out is not created for {path}");
        }
    }
    assert!(
        had_journal || !journal.exists(),
        "/dev/null-journal created"
    );
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "{dir:?} is empty"
    );
}

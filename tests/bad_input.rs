//! Bad input: every rejected value exits with code 2 and one `error:` line naming it, nothing
//! panics, and `--out` holds no results file for a run that never started (and never a broken
//! one).

use ibench::results::model::RunStatus;

use crate::common::{Bench, Outcome, id_range, open_db, path_str};

/// The SQLite target's own bad input: pragmas and database paths.
mod sqlite;

/// What a rejected run may leave in `--out`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Leaves {
    /// Rejected before the run: no results file at all.
    Nothing,
    /// Rejected once the target was examined: a results file is allowed, but it must be a valid
    /// results document of a failed run.
    FailedRunIfAny,
}

fn assert_usage_error(o: &Outcome, needles: &[&str], leaves: Leaves) {
    let all = o.describe();
    assert_eq!(o.code, Some(2), "expected exit code 2:\n{all}");
    assert!(!all.contains("panicked"), "ibench panicked:\n{all}");
    let line = o.stderr.lines().find(|l| l.starts_with("error:"));
    let line = line.unwrap_or_else(|| panic!("no `error:` line on stderr:\n{all}"));
    for needle in needles {
        assert!(
            line.contains(needle),
            "error line does not name {needle:?}: {line}"
        );
    }
    match leaves {
        Leaves::Nothing => assert!(
            o.new_results.is_empty(),
            "no results file for a run that never started: {:?}",
            o.new_results
        ),
        Leaves::FailedRunIfAny => {
            for path in &o.new_results {
                let run = ibench::results::file::load(path).unwrap_or_else(|e| {
                    panic!(
                        "{} is left but is not a results document: {e:#}",
                        path.display()
                    )
                });
                assert_eq!(run.status, RunStatus::Failed, "{}", path.display());
                assert!(run.error.is_some());
            }
        }
    }
}

/// Small flags so that a run that is wrongly accepted ends quickly.
const SMALL: [&str; 6] = [
    "--l0-rows",
    "1000",
    "--l1-rows",
    "1000",
    "--query-seconds",
    "1",
];

fn run(bench: &Bench, args: &[&str]) -> Outcome {
    bench.run(&[&SMALL[..], args].concat())
}

#[test]
fn unknown_step_is_rejected() {
    let bench = Bench::new();
    let o = run(&bench, &["--steps", "l.i0,bogus"]);
    assert_usage_error(&o, &["bogus"], Leaves::Nothing);
    assert!(
        !bench.out().exists(),
        "--out is not created for rejected flags"
    );
    for step in ["qr", "qpx", "qr-5", "l.i3"] {
        let o = run(&bench, &["--steps", step]);
        assert_usage_error(&o, &[step], Leaves::Nothing);
    }
}

#[test]
fn zero_l0_rows_is_rejected_and_leaves_the_database_alone() {
    let bench = Bench::new();
    let db = bench.db();
    bench
        .run(&[
            "--steps",
            "l.i0",
            "--path",
            path_str(&db),
            "--clients",
            "1",
            "--l0-rows",
            "1000",
        ])
        .result();
    let o = bench.run(&["--steps", "l.i0", "--path", path_str(&db), "--l0-rows", "0"]);
    assert_usage_error(&o, &["--l0-rows"], Leaves::Nothing);
    let o = bench.run(&["--l1-rows", "18446744073709551615"]);
    assert_usage_error(&o, &["--l1-rows 18446744073709551615"], Leaves::Nothing);
    assert_eq!(
        id_range(&open_db(&db), "pi1"),
        (1000, 1, 1000),
        "pi1 untouched"
    );
}

#[test]
fn batch_larger_than_rows_is_rejected() {
    let bench = Bench::new();
    let o = bench.run(&["--l1-batch", "100", "--l1-rows", "10", "--l0-rows", "1000"]);
    assert_usage_error(&o, &["--l1-batch 100", "--l1-rows 10"], Leaves::Nothing);
    let o = bench.run(&["--steps", "l.i0", "--l0-batch", "500", "--l0-rows", "100"]);
    assert_usage_error(&o, &["--l0-batch 500", "--l0-rows 100"], Leaves::Nothing);
}

#[test]
fn unwritable_out_is_rejected() {
    let bench = Bench::new();
    let file = bench.path("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let under_file = file.join("sub");
    for out in [path_str(&under_file), path_str(&file), "/proc/ibench"] {
        let o = bench.run_raw(
            &["run", "-q", "--out", out],
            &["--steps", "l.i0", "--l0-rows", "1000", "--clients", "1"],
        );
        assert_usage_error(&o, &[out], Leaves::Nothing);
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"not a directory");
}

#[test]
fn data_min_above_data_max_is_rejected() {
    let bench = Bench::new();
    let o = run(&bench, &["--data-min", "30", "--data-max", "10"]);
    assert_usage_error(&o, &["--data-min 30", "--data-max 10"], Leaves::Nothing);
}

#[test]
fn too_many_secondary_indexes_are_rejected() {
    let bench = Bench::new();
    let o = run(&bench, &["--secondary-indexes", "4"]);
    assert_usage_error(&o, &["--secondary-indexes 4"], Leaves::Nothing);
}

#[test]
fn query_step_without_path_is_rejected() {
    let bench = Bench::new();
    let o = run(&bench, &["--steps", "qr100"]);
    assert_usage_error(&o, &["qr100", "--path"], Leaves::Nothing);
}

#[test]
fn query_step_on_a_database_without_the_tables_is_rejected() {
    let bench = Bench::new();
    let db = bench.db();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE unrelated (x INTEGER)")
            .unwrap();
    }
    let o = run(&bench, &["--steps", "qr100", "--path", path_str(&db)]);
    assert_usage_error(&o, &["pi1"], Leaves::FailedRunIfAny);
    let conn = open_db(&db);
    assert_eq!(
        crate::common::tables(&conn),
        ["unrelated"],
        "nothing created"
    );
}

#[test]
fn range_query_step_on_a_database_without_indexes_is_rejected() {
    let bench = Bench::new();
    let db = bench.db();
    bench
        .run(&[
            "--steps",
            "l.i0",
            "--path",
            path_str(&db),
            "--clients",
            "1",
            "--l0-rows",
            "1000",
        ])
        .result();
    let o = run(
        &bench,
        &[
            "--steps",
            "qr100",
            "--path",
            path_str(&db),
            "--clients",
            "1",
        ],
    );
    assert_usage_error(&o, &["pi1_marketsegment"], Leaves::FailedRunIfAny);
    assert_eq!(
        id_range(&open_db(&db), "pi1"),
        (1000, 1, 1000),
        "pi1 untouched"
    );
}

#[test]
fn command_line_parse_errors_exit_2() {
    let bench = Bench::new();
    for (args, needle) in [
        (&["--clients", "two"][..], "two"),
        (&["--no-such-flag"][..], "--no-such-flag"),
        (&["--table-mode", "bogus"][..], "bogus"),
        (&["--sqlite-pragma", "novalue"][..], "novalue"),
        (&["--l0-rows", "-5"][..], "-5"),
    ] {
        let o = run(&bench, args);
        assert_usage_error(&o, &[needle], Leaves::Nothing);
    }
    let o = bench.run_raw(&["bogus-command"], &[]);
    assert_usage_error(&o, &["bogus-command"], Leaves::Nothing);
}

#[test]
fn a_run_too_large_for_the_free_space_is_rejected_before_it_starts() {
    let bench = Bench::new();
    let o = bench.run(&["--steps", "l.i0", "--l0-rows", "100000000000"]);
    assert_eq!(o.code, Some(2), "{}", o.describe());
    let line = o
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(line.contains("not enough free space in --out"), "{line}");
    assert!(
        o.new_results.is_empty(),
        "no results file for a run that never started"
    );
    assert!(!o.stderr.contains("panicked"));
}

#[test]
fn a_server_url_without_a_host_is_rejected_before_anything_starts() {
    let bench = Bench::new();
    // `postgres://` used to get as far as connecting (exit 1, after creating --out and the
    // results database); a URL that names no host cannot work, whatever the server.
    for url in [
        "postgres://",
        "postgres:///bench",
        "postgresql://bob@:5432/bench",
        "mysql://",
        "mariadb:///test",
    ] {
        let o = run(&bench, &["--url", url]);
        assert_usage_error(&o, &["--url", "host"], Leaves::Nothing);
        assert_eq!(
            o.stderr.lines().count(),
            1,
            "one line for {url}:\n{}",
            o.describe()
        );
        assert!(!bench.out().exists(), "--out is not created for {url}");
    }
    // The same for micro, which shares the target flags.
    let o = bench.run_raw(
        &["micro", "--out", path_str(&bench.out())],
        &["--url", "postgres://"],
    );
    assert_usage_error(&o, &["--url", "host"], Leaves::Nothing);
}

#[test]
fn settings_a_target_does_not_have_are_rejected_before_anything_starts() {
    let bench = Bench::new();
    // Each names its flag; none reaches a server (the ports need not be listening).
    for (args, needles) in [
        (
            &[
                "--url",
                "mysql://root@127.0.0.1:1/db",
                "--sqlite-pragma",
                "cache_size=1",
            ][..],
            // The flag's neutral name: --sqlite-pragma, --db-option and --rocksdb-option are
            // one flag.
            &["--db-option cache_size", "mysql"][..],
        ),
        (
            &[
                "--url",
                "postgres://u@127.0.0.1:1/db",
                "--engine",
                "rocksdb",
            ][..],
            &["--engine", "postgres"][..],
        ),
        (
            &[
                "--url",
                "postgres://u@127.0.0.1:1/db",
                "--busy-timeout-ms",
                "5",
            ][..],
            &["--busy-timeout-ms"][..],
        ),
        (&["--engine", "innodb"][..], &["--engine", "sqlite"][..]),
        (
            &["--url", "mysql://root@127.0.0.1:1/db", "--engine", "memory"][..],
            &["--engine", "memory"][..],
        ),
        (
            &[
                "--url",
                "postgres://u@127.0.0.1:1/db",
                "--data-dir",
                "/nonexistent/ibench",
            ][..],
            &["--data-dir", "/nonexistent/ibench"][..],
        ),
        (&["--steps", "l.i0,qr100"][..], &["qr100", "l.x"][..]),
    ] {
        let o = run(&bench, args);
        assert_usage_error(&o, needles, Leaves::Nothing);
    }
}

#[test]
fn a_read_only_out_is_named_as_such() {
    // A read-only file system is what a root test can make: tmpfs mounted read-only.
    if !nix::unistd::Uid::effective().is_root() {
        crate::common::skip("not root: cannot mount a read-only file system");
        return;
    }
    let bench = Bench::new();
    let dir = bench.path("ro");
    std::fs::create_dir(&dir).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", path_str(&dir)])
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        assert!(!crate::common::ci(), "mount -t tmpfs -o ro failed");
        crate::common::skip("cannot mount tmpfs here");
        return;
    }
    let o = bench.run_raw(
        &["run", "--out", path_str(&dir), "-q"],
        &["--steps", "l.i0", "--l0-rows", "100"],
    );
    let _ = std::process::Command::new("umount").arg(&dir).status();
    assert_eq!(o.code, Some(2), "{}", o.describe());
    let line = o.stderr.lines().find(|l| l.starts_with("error:")).unwrap();
    assert!(
        line.contains("cannot write to --out") && line.contains("Read-only"),
        "{line}"
    );
}

/// Every entry of `dir`, by name.
fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_results_url_of_another_scheme_is_refused_naming_only_its_scheme() {
    let bench = Bench::new();
    let experiment = bench.path("e.toml");
    std::fs::write(
        &experiment,
        "name = \"e\"\n[[target]]\nname = \"s\"\ndbms = \"sqlite\"\n",
    )
    .unwrap();
    let before = entries(&bench.path(""));
    // Each used to become a file (and directories) whose path held the password.
    for (url, scheme) in [
        ("mysql://root:hunter2@dbhost/db", "mysql"),
        ("https://u:hunter2@dbhost/x", "https"),
        ("sqlite:///hunter2.db", "sqlite"),
    ] {
        for command in [
            &["run", "--steps", "l.i0", "--l0-rows", "100", "-q"][..],
            &["micro", "--seconds", "1", "-q"],
            &["experiment", path_str(&experiment), "--dry-run"],
            &["list"],
            &["show", "x"],
            &["import", "x.json"],
            &["export", "x"],
            &["report"],
            &["compare", "a", "b"],
            &["host", "list"],
            &["host", "price", "h", "1"],
        ] {
            let o = bench.run_raw(command, &["--results", url]);
            assert_usage_error(&o, &[&format!("--results {scheme}://...")], Leaves::Nothing);
            assert_eq!(o.stderr.lines().count(), 1, "{}", o.describe());
            assert!(!o.describe().contains("hunter2"), "{}", o.describe());
            assert!(!o.describe().contains("dbhost"), "{}", o.describe());
        }
    }
    assert_eq!(entries(&bench.path("")), before, "nothing was created");
}

#[test]
fn numbers_that_are_not_finite_or_out_of_range_are_rejected_naming_their_flag() {
    let bench = Bench::new();
    // `nan` and `inf` used to run with the defaults in their place.
    for (args, needles) in [
        (&["--max-price", "nan"][..], &["--max-price", "NaN"][..]),
        (&["--max-price", "inf"], &["--max-price", "inf"]),
        (&["--max-price", "1e300"], &["--max-price", "1e300"]),
        (&["--max-error-rate", "nan"], &["--max-error-rate", "NaN"]),
        (&["--max-error-rate=-inf"], &["--max-error-rate", "-inf"]),
        (&["--max-error-rate", "101"], &["--max-error-rate", "101"]),
        (&["--scale", "inf"], &["--scale", "inf"]),
        (&["--cost-per-hour", "nan"], &["--cost-per-hour", "nan"]),
        (
            &["--server", "postgres", "--server-start-timeout", "0"],
            &["--server-start-timeout 0", "1..="],
        ),
    ] {
        let o = run(&bench, args);
        assert_usage_error(&o, needles, Leaves::Nothing);
        assert!(!bench.out().exists(), "--out is not created for {args:?}");
    }
    let out = bench.out();
    let micro = ["micro", "--out", path_str(&out), "-q"];
    let o = bench.run_raw(&micro, &["--max-error-rate", "nan"]);
    assert_usage_error(&o, &["--max-error-rate", "NaN"], Leaves::Nothing);
    // A server that is given no time to start was tried anyway, and failed with the log's
    // tail (17 lines, exit 1): now one line.
    let o = run(
        &bench,
        &["--server", "postgres", "--server-start-timeout", "0"],
    );
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.describe());
    // The same values in an experiment file are problems at their lines.
    let file = bench.path("e.toml");
    std::fs::write(
        &file,
        "name = \"e\"\n[workload]\nmax_price = inf\nmax_error_rate = nan\n\
         [[target]]\nname = \"t\"\ndbms = \"sqlite\"\n",
    )
    .unwrap();
    let o = bench.run_raw(&["experiment", path_str(&file), "--dry-run"], &[]);
    assert_eq!(o.code, Some(2), "{}", o.describe());
    assert!(
        o.stderr.contains("e.toml:3: max_price inf is not a number")
            && o.stderr
                .contains("e.toml:4: max_error_rate NaN is not a number"),
        "{}",
        o.describe()
    );
}

#[test]
fn control_characters_in_values_are_shown_escaped_on_one_line() {
    let bench = Bench::new();
    // A newline in --server-option was echoed raw: the error took two lines.
    for (value, shown) in [
        (
            "shared_buffers=1GB\nfsync=off",
            "shared_buffers=1GB\\x0afsync=off",
        ),
        ("key\u{1b}[2J=v", "key\\x1b[2J=v"),
    ] {
        let o = run(&bench, &["--server", "postgres", "--server-option", value]);
        assert_usage_error(&o, &["--server-option", shown], Leaves::Nothing);
        assert_eq!(o.stderr.lines().count(), 1, "{}", o.describe());
        assert!(!o.stderr.contains('\u{1b}'), "{}", o.describe());
    }
    // Values clap itself refuses are escaped in its message as well.
    let o = run(&bench, &["--clients", "tw\no"]);
    assert_usage_error(&o, &["'tw\\x0ao'", "--clients"], Leaves::Nothing);
    let o = run(
        &bench,
        &["--server", "postgres", "--server-option", "no\nvalue"],
    );
    assert_usage_error(&o, &["'no\\x0avalue'"], Leaves::Nothing);
    assert!(!o.stderr.contains("no\nvalue"), "{}", o.describe());
}

#[test]
fn hosts_out_of_range_is_named_whatever_else_is_missing() {
    let bench = Bench::new();
    // `--hosts 0` alone used to say only that --hosts needs --group.
    for args in [
        &["--hosts", "0"][..],
        &["--group", "g", "--hosts", "0"],
        &["--group", "g", "--hosts", "65"],
    ] {
        let o = run(&bench, args);
        assert_usage_error(&o, &["--hosts", "out of range", "1 to 64"], Leaves::Nothing);
    }
    // Messages are plain text, with no run of spaces from a broken string literal.
    let o = run(&bench, &["--group", "g", "--hosts", "2"]);
    assert_usage_error(
        &o,
        &["--group needs --results postgres://"],
        Leaves::Nothing,
    );
    assert!(!o.stderr.contains("   "), "{}", o.describe());
}

#[test]
fn a_foreign_insert_table_with_no_prepare_says_what_to_do() {
    let bench = Bench::new();
    let db = bench.db();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE sbinsert1 (id INTEGER PRIMARY KEY, k INTEGER, c TEXT, pad TEXT);
         INSERT INTO sbinsert1 VALUES (1, 2, 'mine', 'keep');",
    )
    .unwrap();
    let o = bench.run_raw(
        &["micro", "--out", path_str(&bench.out()), "-q"],
        &[
            "--path",
            path_str(&db),
            "--no-prepare",
            "--benchmarks",
            "insert",
            "--tables",
            "1",
            "--clients",
            "1",
            "--seconds",
            "1",
            "--warmup",
            "0",
        ],
    );
    // It used to suggest --no-prepare, which was given.
    assert_usage_error(
        &o,
        &["sbinsert1", "even with --no-prepare", "--drop-existing"],
        Leaves::FailedRunIfAny,
    );
    let kept: String = conn
        .query_row("SELECT c FROM sbinsert1 WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, "mine");
}

#[test]
fn bad_tags_are_rejected_on_every_command_that_takes_them() {
    let bench = Bench::new();
    let cases: &[(&str, &[&str])] = &[
        ("Commit=1", &["tag key", "Commit"]),
        ("=1", &["tag key"]),
        ("nokey", &["not a tag", "KEY=VALUE"]),
        ("k=a\u{7}b", &["control character"]),
    ];
    for (tag, needles) in cases {
        assert_usage_error(&run(&bench, &["--tag", tag]), needles, Leaves::Nothing);
    }
    let long_key = format!("{}=1", "k".repeat(65));
    assert_usage_error(
        &run(&bench, &["--tag", &long_key]),
        &["tag key"],
        Leaves::Nothing,
    );
    let long_value = format!("k={}", "v".repeat(257));
    assert_usage_error(
        &run(&bench, &["--tag", &long_value]),
        &["257"],
        Leaves::Nothing,
    );
    let twice = run(&bench, &["--tag", "a=1", "--tag", "a=2"]);
    assert_usage_error(&twice, &["--tag a", "twice"], Leaves::Nothing);
    for cmd in [
        &["micro", "--tag", "Bad=1"][..],
        &["tpcc", "--tag", "Bad=1"],
        &["experiment", "x.toml", "--tag", "Bad=1"],
        &["list", "--tag", "Bad=1"],
    ] {
        assert_usage_error(&bench.run_raw(cmd, &[]), &["Bad"], Leaves::Nothing);
    }
}

#[test]
fn bad_history_flags_are_rejected() {
    let bench = Bench::new();
    bench
        .run(&["--steps", "l.i0", "--l0-rows", "500", "--label", "h"])
        .result();
    let store = bench.out().join("results.db");
    let store = path_str(&store).to_string();
    let history = |args: &[&str]| {
        let mut all = vec!["history", "h", "--results", store.as_str()];
        all.extend_from_slice(args);
        bench.run_raw(&all, &[])
    };
    let cases: &[(&[&str], &[&str])] = &[
        (&["--order", "size"], &["size", "start, version or tag:KEY"]),
        (&["--order", "tag:Bad"], &["tag:Bad"]),
        (&["--max-pvalue", "0"], &["p-value"]),
        (&["--max-pvalue", "1.5"], &["p-value"]),
        (&["--window", "2"], &["2"]),
        (&["--min-magnitude", "-1"], &["-1"]),
        (&["--permutations", "5"], &["5"]),
        (&["--check-last", "0"], &["0"]),
        (&["--format", "pdf"], &["pdf"]),
        (&["--order", "tag:commit"], &["has no tag commit"]),
    ];
    for (args, needles) in cases {
        assert_usage_error(&history(args), needles, Leaves::Nothing);
    }
    // Names nothing stored: one line, exit 2.
    let unknown = bench.run_raw(&["history", "nothing-here", "--results", &store], &[]);
    assert_usage_error(&unknown, &["nothing-here"], Leaves::Nothing);
    let missing = bench.run_raw(&["history", "h", "--results", "no/such.db"], &[]);
    assert_usage_error(&missing, &["no/such.db"], Leaves::Nothing);
}

//! The results database: `ibench run` stores every run; `list`, `show`, `export` and `import`
//! read and write it; bad names and broken stores are usage errors.

use std::fs;

use crate::common::{Bench, have, path_str, server_bench};

/// `ibench import`: documents copied into another store, and checked field by field.
mod import;

fn store_cmd(bench: &Bench, args: &[&str]) -> crate::common::Outcome {
    bench.run_raw(args, &[])
}

#[test]
fn runs_are_stored_listed_shown_and_exported() {
    let bench = Bench::new();
    let store = bench.out().join("results.db");
    let store = path_str(&store).to_string();
    let a = bench
        .run(&[
            "--steps",
            "l.i0,l.x,qp100",
            "--l0-rows",
            "2000",
            "--query-seconds",
            "1",
            "--label",
            "base",
        ])
        .result();
    let b = bench
        .run(&[
            "--steps",
            "l.i0",
            "--l0-rows",
            "1000",
            "--label",
            "<b>variant</b>",
        ])
        .result();

    let list = store_cmd(&bench, &["list", "--results", &store]);
    list.assert_success();
    let lines: Vec<&str> = list.stdout.lines().skip(2).collect();
    assert_eq!(lines.len(), 2, "{}", list.stdout);
    assert!(lines[0].starts_with(&a.run_id) && lines[0].contains("base"));
    assert!(lines[1].starts_with(&b.run_id) && lines[1].contains("<b>variant</b>"));
    assert!(lines[0].contains("l.i0,l.x,qp100") && lines[0].contains("complete"));

    // By label (the latest run with it) and by a unique id prefix.
    let show = store_cmd(&bench, &["show", "base", "--results", &store]);
    show.assert_success();
    assert!(show.stdout.contains(&a.run_id) && show.stdout.contains("qp100"));
    // The verdict comes first: qp100's writer SLA and the largest response time of the run,
    // which is the largest max of its steps' ops.
    let verdict = show.stdout.find("Verdict:").expect("a verdict");
    assert!(
        verdict < show.stdout.find("step ").unwrap(),
        "{}",
        show.stdout
    );
    assert!(show.stdout.contains("writer SLA"), "{}", show.stdout);
    assert!(show.stdout.contains("qp100 pass") || show.stdout.contains("qp100 FAIL"));
    let max_us = (a.steps.iter())
        .flat_map(|s| s.ops.values().map(|o| o.percentiles_us.max))
        .max()
        .unwrap();
    let line = (show.stdout.lines())
        .find(|l| l.trim_start().starts_with("max response time:"))
        .unwrap();
    // It names a step and op whose largest response time is the run's (to the histogram's
    // precision).
    let named = (a.steps.iter())
        .flat_map(|s| {
            s.ops
                .iter()
                .map(move |(op, o)| (s, op, o.percentiles_us.max))
        })
        .filter(|(_, _, m)| *m as f64 >= max_us as f64 * 0.99)
        .any(|(s, op, _)| line.contains(&format!("({} {op})", s.name)));
    assert!(named, "{line}: not the largest of {max_us} us");
    let prefix = &b.run_id[..b.run_id.len() - 2];
    let by_prefix = store_cmd(&bench, &["show", prefix, "--results", &store]);
    if a.run_id.starts_with(prefix) {
        assert_eq!(
            by_prefix.code,
            Some(2),
            "ambiguous prefix: {}",
            by_prefix.describe()
        );
    } else {
        by_prefix.assert_success();
    }

    // The exported document is the run's results file.
    let json = store_cmd(&bench, &["export", &a.run_id, "--results", &store]);
    json.assert_success();
    let exported: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let file: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(bench.out().join(format!("{}.json", a.run_id))).unwrap(),
    )
    .unwrap();
    assert_eq!(exported, file);

    // CSV: a line per step and op type, a line for a step without ops.
    let csv = store_cmd(
        &bench,
        &["export", &a.run_id, "--format", "csv", "--results", &store],
    );
    csv.assert_success();
    let expected: usize = a.steps.iter().map(|s| s.ops.len().max(1)).sum();
    let rows: Vec<&str> = csv.stdout.lines().collect();
    assert_eq!(rows[0], ibench::cli::export::CSV_HEADER);
    assert_eq!(rows.len() - 1, expected, "{}", csv.stdout);
    let qp_queries = rows
        .iter()
        .find(|l| l.contains(",qp100,") && l.contains(",query,"))
        .expect("qp100 query row");
    let count: u64 = qp_queries.split(',').nth(8).unwrap().parse().unwrap();
    assert_eq!(count, a.steps[2].queries);
}

/// Control characters (C0, DEL, C1) and bidirectional controls in `text`, other than
/// newlines.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

#[test]
fn escape_sequences_in_stored_labels_never_reach_the_terminal() {
    let bench = Bench::new();
    let run = bench
        .run(&[
            "--steps",
            "l.i0,qp100",
            "--l0-rows",
            "500",
            "--query-seconds",
            "1",
        ])
        .result();
    let file = bench.out().join(format!("{}.json", run.run_id));
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    // Clear the screen, set the window title, CSI in its C1 form, a right-to-left override.
    let label = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}txt\u{7f}";
    doc["config"]["label"] = label.into();
    doc["environment"]["dbms"]["version"] = "3\u{1b}[31m".into();
    doc["run_id"] = "evil-run".into();
    let evil = bench.path("evil.json");
    fs::write(&evil, serde_json::to_string(&doc).unwrap()).unwrap();
    let store = bench.path("evil.db");
    let results = ["--results", path_str(&store)];
    store_cmd(
        &bench,
        &[&["import", path_str(&evil)][..], &results].concat(),
    )
    .assert_success();
    for (args, shows) in [
        (
            &["list"][..],
            "evil\\x1b[2J\\x1b]0;pwned\\x07\\u{9b}31m\\u{202e}txt\\x7f",
        ),
        (&["show", "evil-run"][..], "3\\x1b[31m"),
        (&["compare", "evil-run", "evil-run"][..], "qp100"),
        (
            &["report", "evil-run", "--format", "md"][..],
            "evil\\x1b[2J",
        ),
        (
            &["report", "evil-run", "--format", "json"][..],
            "\\u001b[2J",
        ),
        (&["compare", "evil-run", "evil-run", "--json"][..], "qp100"),
        (&["export", "evil-run"][..], "\\u009b31m"),
    ] {
        let out = store_cmd(&bench, &[args, &results].concat());
        out.assert_success();
        let all = format!("{}{}", out.stdout, out.stderr);
        assert_eq!(raw_controls(&all), Vec::<char>::new(), "{args:?}:\n{all}");
        assert!(
            out.stdout.contains(shows),
            "{args:?} shows {shows}:\n{}",
            out.stdout
        );
    }
    // The JSON outputs are still the same documents.
    let out = store_cmd(&bench, &[&["export", "evil-run"][..], &results].concat());
    let back: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(back["config"]["label"], label);
}

/// A store damaged in the middle (its header intact, so it opens) is found at the first
/// query: one line naming the file, exit 2, as a store that cannot be opened at all.
#[test]
fn a_store_corrupt_in_the_middle_is_one_line_naming_the_file() {
    let bench = Bench::new();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let run = bench.run(&["--steps", "l.i0", "--l0-rows", "500"]).result();
        ids.push(run.run_id);
    }
    let store = bench.out().join("results.db");
    let mut bytes = fs::read(&store).unwrap();
    let page = match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        n => n as usize,
    };
    let pages = bytes.len() / page;
    assert!(pages >= 4, "{pages} pages");
    // Every page but the first (header and schema) and the last.
    for b in &mut bytes[page..(pages - 1) * page] {
        *b = 0xA5;
    }
    fs::write(&store, &bytes).unwrap();
    let named = path_str(&store);
    for args in [
        &["list"][..],
        &["show", &ids[0]][..],
        &["report", &ids[0], "--format", "md"][..],
    ] {
        let out = store_cmd(&bench, &[args, &["--results", named][..]].concat());
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.describe());
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", out.describe());
        assert!(
            lines[0].starts_with("error: ")
                && lines[0].contains(named)
                && lines[0].contains("malformed"),
            "{}",
            lines[0]
        );
    }
}

#[test]
fn unknown_runs_missing_and_broken_stores_are_usage_errors() {
    let bench = Bench::new();
    let missing = bench.path("none.db");
    let out = store_cmd(&bench, &["list", "--results", path_str(&missing)]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(
        out.stderr.contains("no results database"),
        "{}",
        out.describe()
    );

    let broken = bench.path("broken.db");
    fs::write(&broken, "not a database ".repeat(200)).unwrap();
    for cmd in [&["list"][..], &["show", "x"][..], &["export", "x"][..]] {
        let mut args = cmd.to_vec();
        args.extend(["--results", path_str(&broken)]);
        let out = store_cmd(&bench, &args);
        assert_eq!(out.code, Some(2), "{}", out.describe());
        assert!(
            out.stderr.contains("not a usable ibench results database"),
            "{}",
            out.describe()
        );
        assert!(!out.stderr.contains("panicked"));
    }
    // `run` with a broken store stops before it starts and leaves no results file.
    let out = bench.run(&["--steps", "l.i0", "--results", path_str(&broken)]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(out.new_results.is_empty());

    let a = bench.run(&["--steps", "l.i0", "--l0-rows", "500"]).result();
    let store = bench.out().join("results.db");
    let out = store_cmd(
        &bench,
        &["show", "no-such-run", "--results", path_str(&store)],
    );
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(out.stderr.contains("no-such-run"), "{}", out.describe());
    assert!(!a.run_id.is_empty());
}

#[test]
fn a_label_that_begins_run_ids_is_still_the_label() {
    let bench = Bench::new();
    let store = bench.out().join("results.db");
    let store = path_str(&store).to_string();
    // Run ids are ibench-<time>-sqlite: the label "ibench" is a prefix of every one of them.
    let runs: Vec<_> = (0..2)
        .map(|_| {
            bench
                .run(&["--steps", "l.i0", "--l0-rows", "500", "--label", "ibench"])
                .result()
        })
        .collect();
    bench
        .run(&["--steps", "l.i0", "--l0-rows", "500", "--label", "other"])
        .result();
    let report = store_cmd(
        &bench,
        &["report", "ibench", "--format", "json", "--results", &store],
    );
    report.assert_success();
    let r: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(
        r["groups"].as_array().unwrap().len(),
        1,
        "{}",
        report.stdout
    );
    let ids: Vec<&str> = r["groups"][0]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [runs[0].run_id.as_str(), runs[1].run_id.as_str()]);
    // show: the latest run with the label.
    let show = store_cmd(&bench, &["show", "ibench", "--results", &store]);
    show.assert_success();
    assert!(show.stdout.contains(&runs[1].run_id), "{}", show.describe());
    // A unique id prefix still names its run.
    let id = &runs[0].run_id;
    let prefix = &id[..id.len() - 1];
    let out = store_cmd(&bench, &["show", prefix, "--results", &store]);
    if runs[1].run_id.starts_with(prefix) {
        assert_eq!(out.code, Some(2), "{}", out.describe());
    } else {
        out.assert_success();
        assert!(out.stdout.contains(id.as_str()), "{}", out.describe());
    }
}

#[test]
fn another_sqlite_database_is_not_taken_for_a_store() {
    let bench = Bench::new();
    // The benchmark's own database: an SQLite file with tables and no store schema.
    bench
        .run(&[
            "--steps",
            "l.i0",
            "--l0-rows",
            "500",
            "--path",
            path_str(&bench.db()),
        ])
        .result();
    let tables = || {
        let conn = crate::common::open_db(&bench.db());
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    };
    let before = tables();
    assert!(!before.is_empty());
    let db = bench.db();
    for cmd in [&["list"][..], &["report"][..], &["show", "x"][..]] {
        let mut args = cmd.to_vec();
        args.extend(["--results", path_str(&db)]);
        let out = store_cmd(&bench, &args);
        assert_eq!(out.code, Some(2), "{}", out.describe());
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.describe());
        assert!(
            out.stderr.contains("not a usable ibench results database")
                && out.stderr.contains("another SQLite database"),
            "{}",
            out.describe()
        );
    }
    assert_eq!(tables(), before, "no store tables added to it");
}

#[test]
fn a_postgres_results_store_is_shared_by_runs_and_reports() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    // A throwaway PostgreSQL to hold the results (left running by a first run).
    let (setup, kept) = bench.keep_server("postgres", &["--steps", "l.i0", "--l0-rows", "1000"]);
    let store = crate::common::kept_url(&setup);
    let mut ids = Vec::new();
    for label in ["base", "base", "variant"] {
        let run = bench
            .run(&[
                "--results",
                &store,
                "--steps",
                "l.i0,qp100",
                "--l0-rows",
                "2000",
                "--query-seconds",
                "1",
                "--label",
                label,
            ])
            .result();
        ids.push(run.run_id);
    }
    // The runs are in PostgreSQL, read back by list, show, report and compare.
    let mut c = postgres::Client::connect(&store, postgres::NoTls).unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM runs", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 3);
    let steps: i64 = c
        .query_one("SELECT count(*) FROM steps", &[])
        .unwrap()
        .get(0);
    assert_eq!(steps, 6);
    let v: i64 = c
        .query_one("SELECT max(version) FROM ibench_schema", &[])
        .unwrap()
        .get(0);
    assert!(v >= 2);
    drop(c);
    let list = bench.run_raw(&["list", "--results", &store], &[]);
    list.assert_success();
    for id in &ids {
        assert!(list.stdout.contains(id.as_str()), "{}", list.stdout);
    }
    let report = bench.run_raw(
        &[
            "report",
            "base",
            "variant",
            "--format",
            "json",
            "--results",
            &store,
        ],
        &[],
    );
    report.assert_success();
    let r: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(r["groups"][0]["runs"].as_array().unwrap().len(), 2);
    // No directory holds a PostgreSQL store: the page goes to the current directory.
    let html = bench.run_raw(&["report", "base", "variant", "--results", &store], &[]);
    html.assert_success();
    assert_eq!(html.stdout, "report: ./ibench-report.html\n");
    assert!(bench.path("ibench-report.html").exists());
    let compare = bench.run_raw(&["compare", "base", "variant", "--results", &store], &[]);
    compare.assert_success();

    // A bad password is one line, without the password.
    let url = url::Url::parse(&store).unwrap();
    let bad = format!(
        "postgres://nobody:s3cret-pw@{}:{}/nosuchdb",
        url.host_str().unwrap(),
        url.port().unwrap()
    );
    let out = bench.run_raw(&["list", "--results", &bad], &[]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(
        out.stderr
            .contains("cannot connect to the results database")
    );
    assert!(!out.stderr.contains("s3cret-pw"), "{}", out.stderr);
    kept.stop();
}

/// Runs `ibench args` with stdout a pipe whose reader has gone (as `| head` leaves it once
/// it has read enough): every write to it fails with EPIPE.
fn with_closed_stdout(bench: &Bench, args: &[&str]) -> crate::common::Outcome {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = crate::common::ibench()
        .args(args)
        .current_dir(bench.path(""))
        .stdin(std::process::Stdio::null())
        .stdout(writer)
        .output()
        .expect("start ibench");
    crate::common::Outcome {
        code: out.status.code(),
        stdout: String::new(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        new_results: Vec::new(),
    }
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let bench = Bench::new();
    let out = bench.out();
    let store = out.join("results.db");
    let store = path_str(&store);
    // `run` whose stdout is gone still saves its results and cleans up after itself.
    for _ in 0..2 {
        let run = with_closed_stdout(
            &bench,
            &[
                "run",
                "--out",
                path_str(&out),
                "-q",
                "--steps",
                "l.i0,l.x,qr100",
                "--l0-rows",
                "2000",
                "--query-seconds",
                "1",
                "--label",
                "a",
            ],
        );
        assert_eq!(run.code, Some(0), "{}", run.describe());
        assert!(run.stderr.is_empty(), "{}", run.describe());
    }
    let runs = ibench::results::store::Store::open(std::path::Path::new(store))
        .unwrap()
        .list()
        .unwrap();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r.status, "complete");
        assert!(out.join(format!("{}.json", r.id)).exists());
        assert!(
            !out.join(format!("{}.data", r.id)).exists(),
            "scratch database left"
        );
    }
    let (a1, a2) = (runs[0].id.as_str(), runs[1].id.as_str());
    for args in [
        &["list"][..],
        &["show", a1],
        &["export", a1],
        &["export", a1, "--format", "csv"],
        &["report", "a", "--format", "md"],
        &["report", "a", "--format", "json"],
        &["report", "a", "--output", "-"],
        &["compare", a1, a2],
        &["compare", a1, a2, "--json"],
    ] {
        let mut all = args.to_vec();
        all.extend(["--results", store]);
        let o = with_closed_stdout(&bench, &all);
        assert_eq!(o.code, Some(0), "{args:?}: {}", o.describe());
        assert!(o.stderr.is_empty(), "{args:?}: {}", o.describe());
    }
}

#[test]
fn list_lines_up_and_show_says_which_run_of_a_label_it_is() {
    let bench = Bench::new();
    let store = bench.out().join("results.db");
    let store = path_str(&store).to_string();
    let run = |label: &str| {
        bench
            .run(&[
                "--steps",
                "l.i0,l.x,qr100",
                "--l0-rows",
                "1000",
                "--query-seconds",
                "1",
                "--label",
                label,
            ])
            .result()
    };
    let old = run("a");
    let other = run("a much longer label");
    let new = run("a");

    // Every column of `list` starts where its header starts.
    let list = store_cmd(&bench, &["list", "--results", &store]);
    list.assert_success();
    let lines: Vec<&str> = list.stdout.lines().collect();
    let header = lines[0];
    let starts: Vec<usize> = header
        .char_indices()
        .filter(|&(i, c)| c != ' ' && (i == 0 || header[..i].ends_with("  ")))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 6, "{header}");
    for row in &lines[2..] {
        for &at in &starts {
            assert!(
                row[at..].starts_with(|c: char| c != ' ') && (at == 0 || row[..at].ends_with(' ')),
                "column at {at} of\n{header}\n{row}"
            );
        }
    }
    assert!(lines[3].contains(&other.run_id) && lines[3].contains("a much longer label"));

    // A label two runs share: the newest is shown, and stderr says so and names the other.
    let show = store_cmd(&bench, &["show", "a", "--results", &store]);
    show.assert_success();
    assert!(
        show.stdout.starts_with(&format!("run {}", new.run_id)),
        "{}",
        show.stdout
    );
    assert!(
        show.stderr.contains("2 runs are labelled \"a\"")
            && show
                .stderr
                .contains(&format!("this is the newest, {}", new.run_id))
            && show.stderr.contains(&old.run_id),
        "{}",
        show.describe()
    );
    // The summary says what the writer SLA column means.
    assert!(
        show.stdout.contains("PASS ")
            && show
                .stdout
                .contains("(N% s): share of the step's full seconds"),
        "{}",
        show.stdout
    );
    // By id, or a label only one run has: no note.
    for name in [old.run_id.as_str(), "a much longer label"] {
        let one = store_cmd(&bench, &["show", name, "--results", &store]);
        one.assert_success();
        assert!(one.stderr.is_empty(), "{}", one.describe());
    }
}

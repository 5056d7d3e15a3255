//! `ibench import`: a run's exported document copied into another store (importing it again
//! is refused, and with `--replace` replaces the run rather than duplicating it), and
//! documents that are not ibench's or have a bad field refused.

use std::fs;

use super::store_cmd;
use crate::common::{Bench, path_str};

#[test]
fn import_copies_documents_into_another_store() {
    let bench = Bench::new();
    let a = bench.run(&["--steps", "l.i0", "--l0-rows", "500"]).result();
    let other = bench.path("other.db");
    let file = bench.out().join(format!("{}.json", a.run_id));
    let out = store_cmd(
        &bench,
        &["import", path_str(&file), "--results", path_str(&other)],
    );
    out.assert_success();
    assert!(out.stdout.contains(&a.run_id));
    let list = store_cmd(&bench, &["list", "--results", path_str(&other)]);
    assert!(list.stdout.contains(&a.run_id), "{}", list.stdout);
    // Importing again is refused (the store has the run), and with --replace replaces the
    // run rather than duplicating it.
    let again = store_cmd(
        &bench,
        &["import", path_str(&file), "--results", path_str(&other)],
    );
    assert_eq!(again.code, Some(2), "{}", again.describe());
    assert!(again.stderr.contains("--replace"), "{}", again.describe());
    store_cmd(
        &bench,
        &[
            "import",
            path_str(&file),
            "--results",
            path_str(&other),
            "--replace",
        ],
    )
    .assert_success();
    let list = store_cmd(&bench, &["list", "--results", path_str(&other)]);
    assert_eq!(list.stdout.lines().count(), 3, "{}", list.stdout);
    // A file that is not a results document imports nothing.
    let junk = bench.path("junk.json");
    fs::write(&junk, "{\"not\": \"ibench\"}").unwrap();
    let out = store_cmd(
        &bench,
        &["import", path_str(&junk), "--results", path_str(&other)],
    );
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(out.stderr.contains("junk.json"), "{}", out.describe());
}

#[test]
fn imported_documents_are_checked_field_by_field() {
    let bench = Bench::new();
    let run = bench
        .run(&[
            "--steps",
            "l.i0,l.x,qr100",
            "--l0-rows",
            "500",
            "--query-seconds",
            "1",
            "--clients",
            "1",
        ])
        .result();
    let file = bench.out().join(format!("{}.json", run.run_id));
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let other = bench.path("other.db");
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit); 11] = [
        ("run_id", |d| d["run_id"] = "".into()),
        ("run_id", |d| d["run_id"] = "../../etc/passwd".into()),
        ("run_id", |d| d["run_id"] = "a\u{1b}[2Jb".into()),
        ("steps[2].name", |d| d["steps"][2]["name"] = "qr999".into()),
        ("steps[0].name", |d| {
            d["steps"][0]["name"] = "drop table".into()
        }),
        ("steps[0].duration_s", |d| {
            d["steps"][0]["duration_s"] = (-5.0).into()
        }),
        ("steps[2].sla.seconds_met_share", |d| {
            d["steps"][2]["sla"]["seconds_met_share"] = 7.0.into()
        }),
        ("steps[0].clients", |d| d["steps"][0]["clients"] = 0.into()),
        ("steps[0].retries", |d| {
            d["steps"][0]["retries"] = serde_json::json!({"drop\u{1b}[2J": 1})
        }),
        ("steps[0].ops.insert.per_client", |d| {
            d["steps"][0]["ops"]["insert"]["per_client"][0]["client"] = 99.into()
        }),
        ("steps[0].per_second.client_summaries", |d| {
            d["steps"][0]["per_second"]["client_summaries"][0]["client"] = 99.into()
        }),
    ];
    for (field, edit) in cases {
        let mut bad = doc.clone();
        edit(&mut bad);
        let path = bench.path("bad.json");
        fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
        let out = store_cmd(
            &bench,
            &["import", path_str(&path), "--results", path_str(&other)],
        );
        assert_eq!(out.code, Some(2), "{field}: {}", out.describe());
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{}", out.describe());
        assert!(
            lines[0].contains("bad.json") && lines[0].contains(field),
            "{field}: {}",
            lines[0]
        );
        assert!(!lines[0].contains('\u{1b}'), "{}", lines[0]);
        assert!(!other.exists(), "a rejected file imports nothing");
    }
    // The document as ibench wrote it imports.
    store_cmd(
        &bench,
        &["import", path_str(&file), "--results", path_str(&other)],
    )
    .assert_success();
}

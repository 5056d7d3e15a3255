//! `ibench import` of documents from anyone: a run id the store already holds is refused
//! unless `--replace` says to replace it, every text field has a bound (named in the error),
//! a histogram that does not decode is refused at import (not found later by `report`), and a
//! document still `running` is stored as `abandoned`. See the module list in
//! tests/hostile/mod.rs.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Bench, Outcome, path_str};

/// A measured run (stored in `--out`'s results.db), its results file and that file's JSON.
fn measured(bench: &Bench) -> (String, PathBuf, Value) {
    let run = bench.run(&["--steps", "l.i0", "--l0-rows", "300"]).result();
    let file = bench.out().join(format!("{}.json", run.run_id));
    let doc = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    (run.run_id, file, doc)
}

/// Writes `doc` to `name` in the bench's directory.
fn write(bench: &Bench, name: &str, doc: &Value) -> PathBuf {
    let path = bench.path(name);
    fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
    path
}

fn import(bench: &Bench, files: &[&Path], store: &Path, extra: &[&str]) -> Outcome {
    let mut args = vec!["import"];
    args.extend(files.iter().map(|f| path_str(f)));
    args.extend(["--results", path_str(store)]);
    args.extend_from_slice(extra);
    bench.run_raw(&args, &[])
}

/// The one `error:` line of a refused command (exit code 2, no panic).
fn refused(o: &Outcome) -> String {
    assert_eq!(o.code, Some(2), "{}", o.describe());
    assert!(!o.describe().contains("panicked"), "{}", o.describe());
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.describe());
    assert!(lines[0].starts_with("error: "), "{}", lines[0]);
    lines[0].to_string()
}

/// Label, status and step count of run `id` in the SQLite store `store`.
fn stored(store: &Path, id: &str) -> Option<(Option<String>, String, i64)> {
    let conn = crate::common::open_db(store);
    let row = conn.query_row(
        "SELECT label, status, (SELECT count(*) FROM steps WHERE run_id = id) FROM runs \
         WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    );
    match row {
        Ok(row) => Some(row),
        Err(rusqlite::Error::QueryReturnedNoRows) => None,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_run_the_store_holds_is_not_replaced_without_replace() {
    let bench = Bench::new();
    let (id, _, doc) = measured(&bench);
    let store = bench.out().join("results.db");
    let before = stored(&store, &id).expect("the run is stored");
    // The same run id with other figures: it used to replace the measured run (exit 0).
    let mut other = doc.clone();
    other["config"]["label"] = "imposter".into();
    other["steps"] = json!([]);
    let imposter = write(&bench, "imposter.json", &other);
    // A new run before it in the same import is not stored either.
    let mut new = doc.clone();
    new["run_id"] = "fresh-run".into();
    let fresh = write(&bench, "fresh.json", &new);
    let line = refused(&import(&bench, &[&fresh, &imposter], &store, &[]));
    assert!(
        line.contains("imposter.json") && line.contains(&id) && line.contains("--replace"),
        "{line}"
    );
    assert_eq!(stored(&store, &id), Some(before), "the measured run stays");
    assert_eq!(
        stored(&store, "fresh-run"),
        None,
        "nothing of the import is stored"
    );
    // Two documents of one run in one import: which one would win is not for ibench to guess.
    let twice = write(&bench, "twice.json", &new);
    let line = refused(&import(&bench, &[&fresh, &twice], &store, &["--replace"]));
    assert!(
        line.contains("twice.json") && line.contains("fresh.json"),
        "{line}"
    );
    assert_eq!(stored(&store, "fresh-run"), None);
    // With --replace, the run is replaced.
    import(&bench, &[&fresh, &imposter], &store, &["--replace"]).assert_success();
    assert_eq!(
        stored(&store, &id),
        Some((Some("imposter".into()), "complete".into(), 0))
    );
    assert!(stored(&store, "fresh-run").is_some());
}

/// One text field too long: the path of the field in the document, and how to make it so.
type Edit = fn(&mut Value);

#[test]
fn every_text_field_is_bounded_at_import() {
    let bench = Bench::new();
    let (_, file, doc) = measured(&bench);
    let store = bench.path("other.db");
    let cases: [(&str, &str, Edit); 10] = [
        // The case: `report` then reached 23.8 GB of memory and was killed.
        ("config.label", "52428800 bytes, more than the 4096", |d| {
            d["config"]["label"] = "x".repeat(50 << 20).into()
        }),
        (
            "environment.hostname",
            "256 bytes, more than the 255",
            |d| d["environment"]["hostname"] = "h".repeat(256).into(),
        ),
        ("environment.os", "more than the 16384", |d| {
            d["environment"]["os"] = "o".repeat(16385).into()
        }),
        ("environment.dbms.version", "more than the 16384", |d| {
            d["environment"]["dbms"]["version"] = "v".repeat(16385).into()
        }),
        (
            "environment.dbms.settings",
            "10001 settings, more than the 10000",
            |d| {
                let many: serde_json::Map<String, Value> =
                    (0..10001).map(|i| (format!("s{i}"), "1".into())).collect();
                d["environment"]["dbms"]["settings"] = many.into();
            },
        ),
        (
            "environment.dbms.settings[\"journal_mode\"]",
            "65537 bytes, more than the 65536",
            |d| d["environment"]["dbms"]["settings"]["journal_mode"] = "w".repeat(65537).into(),
        ),
        (
            "environment.dbms.settings",
            "257 bytes, more than the 256",
            |d| d["environment"]["dbms"]["settings"]["n".repeat(257)] = "1".into(),
        ),
        ("error", "more than the 65536", |d| {
            d["error"] = "e".repeat(65537).into()
        }),
        ("steps[0].notes[0]", "more than the 65536", |d| {
            d["steps"][0]["notes"] = json!(["n".repeat(65537)])
        }),
        ("config.tags", "at most 256", |d| {
            d["config"]["tags"] = json!({"commit": "c".repeat(257)})
        }),
    ];
    for (field, bound, edit) in cases {
        let mut bad = doc.clone();
        edit(&mut bad);
        let path = write(&bench, "long.json", &bad);
        let line = refused(&import(&bench, &[&path], &store, &[]));
        assert!(
            line.contains("long.json") && line.contains(field) && line.contains(bound),
            "{field}: {line}"
        );
        assert!(
            line.len() < 400,
            "the line does not echo the text: {line:.400}"
        );
        assert!(!store.exists(), "a refused import creates no store");
    }
    // At the bounds, a document imports.
    let mut full = doc.clone();
    full["config"]["label"] = "l".repeat(4096).into();
    full["environment"]["hostname"] = "h".repeat(255).into();
    full["environment"]["dbms"]["settings"]["journal_mode"] = "w".repeat(65536).into();
    let path = write(&bench, "full.json", &full);
    import(&bench, &[&path], &store, &[]).assert_success();
    // And the document as ibench wrote it, of course.
    import(&bench, &[&file], &store, &["--replace"]).assert_success();
}

#[test]
fn a_label_or_setting_longer_than_its_bound_is_refused_on_the_command_line() {
    let bench = Bench::new();
    let long = "x".repeat(4097);
    for cmd in ["run", "micro", "tpcc"] {
        let o = bench.run_raw(
            &[cmd, "--out", path_str(&bench.out()), "--label", &long],
            &[],
        );
        let line = refused(&o);
        assert!(
            line.contains("--label is 4097 bytes, more than the 4096 allowed"),
            "{cmd}: {line}"
        );
        assert!(o.new_results.is_empty(), "{cmd}: no results");
    }
    // Settings given on the command line have the bounds of recorded settings.
    let value = format!("cache_size={}", "1".repeat(65537));
    let o = bench.run_raw(
        &[
            "run",
            "--out",
            path_str(&bench.out()),
            "--sqlite-pragma",
            &value,
        ],
        &[],
    );
    let line = refused(&o);
    assert!(
        line.contains("--sqlite-pragma cache_size is 65537 bytes, more than the 65536 allowed"),
        "{line}"
    );
    assert!(o.new_results.is_empty(), "no results");
}

#[test]
fn a_histogram_that_does_not_decode_is_refused_at_import() {
    let bench = Bench::new();
    let (_, _, doc) = measured(&bench);
    let store = bench.path("other.db");
    let cases: [(&str, Edit); 3] = [
        ("steps[0].ops.insert.histogram", |d| {
            d["steps"][0]["ops"]["insert"]["histogram"] = "not base64!".into()
        }),
        // Base64 of "hello": not an HDR histogram.
        ("steps[0].ops.insert.histogram", |d| {
            d["steps"][0]["ops"]["insert"]["histogram"] = "aGVsbG8=".into()
        }),
        ("steps[0].ops.insert.per_client[0].histogram", |d| {
            d["steps"][0]["ops"]["insert"]["per_client"][0]["histogram"] = "aGVsbG8=".into()
        }),
    ];
    for (field, edit) in cases {
        let mut bad = doc.clone();
        edit(&mut bad);
        let path = write(&bench, "hist.json", &bad);
        // It used to import, and `report` then said the run was damaged.
        let line = refused(&import(&bench, &[&path], &store, &[]));
        assert!(
            line.contains("hist.json") && line.contains(field) && line.contains("histogram"),
            "{field}: {line}"
        );
        assert!(!store.exists());
    }
}

#[test]
fn a_document_still_running_is_stored_as_abandoned() {
    let bench = Bench::new();
    let (_, _, doc) = measured(&bench);
    let store = bench.path("other.db");
    let mut running = doc.clone();
    running["run_id"] = "was-running".into();
    running["status"] = "running".into();
    running["finished_at"] = Value::Null;
    let path = write(&bench, "running.json", &running);
    // It used to stay `running` for ever: nothing will ever finish it in this store.
    let o = import(&bench, &[&path], &store, &[]);
    o.assert_success();
    assert!(o.stderr.contains("abandoned"), "{}", o.describe());
    assert_eq!(
        stored(&store, "was-running").map(|r| r.1),
        Some("abandoned".to_string())
    );
    let shown = bench.run_raw(
        &["export", "was-running", "--results", path_str(&store)],
        &[],
    );
    shown.assert_success();
    let back: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(back["status"], "abandoned", "the document says so too");
    assert_eq!(
        back["steps"].as_array().unwrap().len(),
        1,
        "its steps are kept"
    );
}

#[test]
fn a_report_on_runs_at_the_bounds_stays_small() {
    let bench = Bench::new();
    let (_, _, doc) = measured(&bench);
    let store = bench.path("other.db");
    let mut big = doc.clone();
    big["run_id"] = "at-the-bounds".into();
    big["config"]["label"] = "l".repeat(4096).into();
    big["environment"]["hostname"] = "h".repeat(255).into();
    let settings: serde_json::Map<String, Value> = (0..100)
        .map(|i| (format!("setting_{i}"), "v".repeat(65536).into()))
        .collect();
    big["environment"]["dbms"]["settings"] = settings.into();
    let path = write(&bench, "big.json", &big);
    let input = fs::metadata(&path).unwrap().len();
    import(&bench, &[&path], &store, &[]).assert_success();
    for format in ["md", "html"] {
        let out = bench.path(&format!("report.{format}"));
        let mut cmd = crate::common::ibench();
        cmd.args(["report", "--results", path_str(&store), "--format", format])
            .args(["--out", path_str(&out)]);
        let (o, rss) = crate::import::measured(cmd);
        o.assert_success();
        let written = fs::metadata(&out).unwrap().len();
        // The report's work follows its input: a 6.5 MB document, not gigabytes.
        assert!(
            written < 4 * input,
            "{format}: {written} bytes from {input}"
        );
        assert!(rss < 256 << 20, "{format}: peak RSS {} MiB", rss >> 20);
    }
}

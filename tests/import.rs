//! `ibench import` of large documents: one larger than the size limit is refused by its size
//! before it is read, one whose runs would take more memory than ibench spends on a document
//! is refused while it is read, and several documents import together or not at all.

use std::fs;
use std::path::Path;

use crate::common::{Bench, Outcome, path_str};

/// The one `error:` line of a refused import, after checking exit code 2 and that nothing was
/// stored.
fn refused(o: &Outcome, store: &Path) -> String {
    assert_eq!(o.code, Some(2), "{}", o.describe());
    assert!(!o.describe().contains("panicked"), "{}", o.describe());
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.describe());
    assert!(lines[0].starts_with("error: "), "{}", lines[0]);
    assert!(!store.exists(), "a refused import creates no store");
    lines[0].to_string()
}

#[test]
fn a_document_over_the_size_limit_is_refused_by_its_size() {
    let bench = Bench::new();
    // Sparse: a byte over the limit, taking no disk space, never read.
    let huge = bench.path("huge.json");
    fs::File::create(&huge)
        .unwrap()
        .set_len(ibench::results::file::MAX_DOCUMENT_BYTES + 1)
        .unwrap();
    let store = bench.path("other.db");
    let mut cmd = crate::common::ibench();
    cmd.args(["import", path_str(&huge), "--results", path_str(&store)]);
    let (o, max_rss) = measured(cmd);
    let line = refused(&o, &store);
    assert!(
        line.contains("huge.json") && line.contains("larger than 1024 MiB"),
        "{line}"
    );
    // It used to be read whole first: a gigabyte of memory.
    assert!(max_rss < 256 << 20, "peak RSS {} MiB", max_rss >> 20);
}

/// Runs `cmd` to completion: what it did, and its peak resident memory in bytes, as GNU time
/// reports it. Not the test's own wait4 of its child: Linux carries the high-water mark of the
/// memory a process leaves at exec into its peak, so a child spawned by this test process
/// reported the test binary's peak (389 MiB in a full suite run, for an import refused by its
/// size); time forks the command from its own small process.
pub(crate) fn measured(cmd: std::process::Command) -> (Outcome, u64) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("maxrss");
    let mut timed = std::process::Command::new("/usr/bin/time");
    timed
        .args(["-f", "%M", "-o"])
        .arg(&report)
        .arg(cmd.get_program())
        .args(cmd.get_args());
    if let Some(d) = cmd.get_current_dir() {
        timed.current_dir(d);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => timed.env(k, v),
            None => timed.env_remove(k),
        };
    }
    let out = timed
        .stdin(std::process::Stdio::null())
        .output()
        .expect("/usr/bin/time (Debian's time package; .ci/run installs it)");
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    // A command that failed gets a line from time before the figure: the figure is last.
    let kib: u64 = text
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no peak RSS from time: {text:?}"));
    let outcome = Outcome {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        new_results: Vec::new(),
    };
    (outcome, kib * 1024)
}

#[test]
fn a_document_that_would_take_too_much_memory_is_refused_and_several_import_together() {
    let bench = Bench::new();
    let run = bench.run(&["--steps", "l.i0", "--l0-rows", "300"]).result();
    let file = bench.out().join(format!("{}.json", run.run_id));
    // The same run with 4M zeros in a per-second series: 8 MB of compact JSON, 32 MB as the
    // run's numbers (the expansion that made a 998 MB document abort allocating 4 GiB).
    let mut big = run.clone();
    big.run_id = format!("{}-big", run.run_id);
    let series = big.steps[0].per_second.total.ops.get_mut("insert").unwrap();
    series.ops.resize(4_000_000, 0);
    let big_file = bench.path("big.json");
    serde_json::to_writer(fs::File::create(&big_file).unwrap(), &big).unwrap();
    let store = bench.path("other.db");
    let import = |files: &[&Path], budget: Option<&str>| {
        let mut cmd = crate::common::ibench();
        cmd.arg("import")
            .args(files)
            .args(["--results", path_str(&store)]);
        if let Some(b) = budget {
            cmd.env("IBENCH_TEST_MAX_DOCUMENT_MEMORY", b);
        }
        let out = cmd.output().unwrap();
        Outcome {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            new_results: Vec::new(),
        }
    };
    // With 16 MiB to spend on a document, the big one is refused while it is read; the small
    // one before it is not stored either.
    let o = import(&[&file, &big_file], Some(&(16u64 << 20).to_string()));
    let line = refused(&o, &store);
    assert!(
        line.contains("big.json") && line.contains("more than 16 MiB of memory"),
        "{line}"
    );
    // A value above the limit is the limit itself (the variable never raises it): both
    // import, in one go.
    let o = import(&[&file, &big_file], Some("18446744073709551615"));
    o.assert_success();
    assert!(
        o.stdout.contains(&run.run_id) && o.stdout.contains(&big.run_id),
        "{}",
        o.stdout
    );
    let conn = rusqlite::Connection::open(&store).unwrap();
    let stored: String = conn
        .query_row(
            "SELECT document FROM runs WHERE id = ?1",
            [&big.run_id],
            |r| r.get(0),
        )
        .unwrap();
    let back: ibench::results::model::RunResult = serde_json::from_str(&stored).unwrap();
    assert_eq!(
        back.steps[0].per_second.total.ops["insert"].ops.len(),
        4_000_000
    );
    let steps: i64 = conn
        .query_row(
            "SELECT count(*) FROM steps WHERE run_id = ?1",
            [&big.run_id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(steps, 1);
}

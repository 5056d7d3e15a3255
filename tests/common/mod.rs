//! Helpers shared by every area: running the `ibench` binary in a private temporary directory,
//! finding and loading the results JSON it wrote, and reading the SQLite file with our own SQL
//! (rusqlite), so that tests check the database itself rather than ibench's account of it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread::sleep;
use std::time::{Duration, Instant};

use ibench::results::model::{RunResult, RunStatus};
use rusqlite::{Connection, OpenFlags};
use tempfile::TempDir;

mod servers;
pub use servers::*;

/// Tests that measure time (rate accuracy, stalls) take this exclusively so that no other test's
/// busy query threads compete for the two cores while they run; every other test shares it.
static CPU: RwLock<()> = RwLock::new(());

/// One test's private working directory (removed when the test ends) and its CPU guard.
pub struct Bench {
    dir: TempDir,
    _shared: Option<RwLockReadGuard<'static, ()>>,
    _exclusive: Option<RwLockWriteGuard<'static, ()>>,
    /// When the guard was taken: how long the test held it goes to `$IBENCH_TEST_TIMES`.
    held_since: std::time::Instant,
}

impl Drop for Bench {
    /// Appends `test-name seconds shared|exclusive` to the file `$IBENCH_TEST_TIMES` names, if
    /// set: the time a test held the CPU guard, without its wait for it (libtest's
    /// `--report-time` counts the wait too). For finding the tests that make CI long.
    fn drop(&mut self) {
        let Some(path) = std::env::var_os("IBENCH_TEST_TIMES") else {
            return;
        };
        let line = format!(
            "{} {:.1} {}\n",
            std::thread::current().name().unwrap_or("?"),
            self.held_since.elapsed().as_secs_f64(),
            if self._exclusive.is_some() {
                "exclusive"
            } else {
                "shared"
            }
        );
        let _ = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    }
}

/// What one `ibench` invocation did.
pub struct Outcome {
    /// Exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
    /// Results files that appeared in `--out` during the invocation.
    pub new_results: Vec<PathBuf>,
}

impl Outcome {
    /// Asserts bad input refused as the guide says: exit 2, no panic, exactly one `error:`
    /// line, and it names `needle`; returns the whole output for further checks.
    pub fn assert_refused(&self, needle: &str) -> String {
        let all = self.describe();
        assert_eq!(self.code, Some(2), "{all}");
        assert!(!all.contains("panicked"), "{all}");
        let errors: Vec<_> = self
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect();
        assert_eq!(errors.len(), 1, "one error line: {all}");
        assert!(
            errors[0].contains(needle),
            "the error names {needle:?}: {all}"
        );
        all
    }

    /// Stdout and stderr, for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "exit code {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Fails the test unless ibench exited 0.
    pub fn assert_success(&self) {
        assert_eq!(self.code, Some(0), "ibench failed:\n{}", self.describe());
    }

    /// The single results file of a successful run, loaded and checked to be `complete`.
    pub fn result(&self) -> RunResult {
        self.assert_success();
        assert_eq!(
            self.new_results.len(),
            1,
            "expected exactly one new results file, got {:?}",
            self.new_results
        );
        let run = ibench::results::file::load(&self.new_results[0]).expect("results load");
        assert_eq!(
            run.status,
            RunStatus::Complete,
            "run status: {:?}",
            run.error
        );
        run
    }
}

impl Bench {
    /// A fresh directory; may run alongside other tests.
    pub fn new() -> Self {
        let guard = CPU.read().unwrap_or_else(|e| e.into_inner());
        Bench {
            dir: tempfile::tempdir().expect("temp dir"),
            _shared: Some(guard),
            _exclusive: None,
            held_since: std::time::Instant::now(),
        }
    }

    /// A fresh directory; waits until no other test runs ibench, and keeps them out until the
    /// test ends. For tests whose assertions depend on timing.
    pub fn exclusive() -> Self {
        let guard = CPU.write().unwrap_or_else(|e| e.into_inner());
        Bench {
            dir: tempfile::tempdir().expect("temp dir"),
            _shared: None,
            _exclusive: Some(guard),
            held_since: std::time::Instant::now(),
        }
    }

    /// `name` inside this test's directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The `--out` directory [`Bench::run`] uses.
    pub fn out(&self) -> PathBuf {
        self.path("out")
    }

    /// The SQLite file tests pass as `--path`.
    pub fn db(&self) -> PathBuf {
        self.path("db.sqlite")
    }

    /// Runs `ibench run --out <out> -q <args>` to completion.
    pub fn run(&self, args: &[&str]) -> Outcome {
        self.run_raw(&["run", "--out", path_str(&self.out()), "-q"], args)
    }

    /// Runs `ibench run` with `args` on a managed `server` (`postgres`, `mariadb`) left running
    /// by `--keep-server`: the run, and the server, stopped when the [`Kept`] is dropped.
    pub fn keep_server(&self, server: &str, args: &[&str]) -> (RunResult, Kept) {
        let mut all = vec!["--server", server, "--keep-server"];
        all.extend_from_slice(args);
        let run = self.run(&all).result();
        let kept = Kept::of(&run, server);
        (run, kept)
    }

    /// Writes the HTML report over the runs of results store `store` and returns its text.
    pub fn html_report(&self, store: &Path) -> String {
        let html = self.path("report.html");
        self.run_raw(
            &[
                "report",
                "--results",
                path_str(store),
                "--out",
                path_str(&html),
            ],
            &[],
        )
        .assert_success();
        fs::read_to_string(html).unwrap()
    }

    /// Runs `ibench <prefix> <args>` (no flags added) to completion; new results are looked for
    /// in [`Bench::out`].
    pub fn run_raw(&self, prefix: &[&str], args: &[&str]) -> Outcome {
        let before = json_files(&self.out());
        let output = ibench()
            .args(prefix)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("start ibench");
        let new_results = json_files(&self.out())
            .into_iter()
            .filter(|p| !before.contains(p))
            .collect();
        Outcome {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            new_results,
        }
    }

    /// Starts `ibench run --out <out> -q <args>` in the background (stdout and stderr go to
    /// files in this directory).
    pub fn spawn(&self, args: &[&str]) -> Running {
        self.spawn_raw(&["run", "--out", path_str(&self.out()), "-q"], args)
    }

    /// Starts `ibench <prefix> <args>` (no flags added) in the background, as [`Bench::spawn`].
    pub fn spawn_raw(&self, prefix: &[&str], args: &[&str]) -> Running {
        let out = self.out();
        let out_before = json_files(&out);
        let (stdout, stderr) = (self.path("child.stdout"), self.path("child.stderr"));
        let child = ibench()
            .args(prefix)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(fs::File::create(&stdout).expect("stdout file"))
            .stderr(fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("spawn ibench");
        Running {
            child,
            spawned: Instant::now(),
            out,
            out_before,
            stdout,
            stderr,
        }
    }

    /// Loads `rows` rows per client into `--path db` and creates the 3 secondary indexes.
    pub fn load(&self, clients: usize, rows: u64) -> RunResult {
        self.load_steps("l.i0,l.x", clients, rows)
    }

    /// Runs `steps` (a load: `l.i0`, or `l.i0,l.x`) with `rows` rows per client into
    /// `--path db`.
    pub fn load_steps(&self, steps: &str, clients: usize, rows: u64) -> RunResult {
        let (clients, rows) = (clients.to_string(), rows.to_string());
        self.run(&[
            "--steps",
            steps,
            "--path",
            path_str(&self.db()),
            "--clients",
            &clients,
            "--l0-rows",
            &rows,
        ])
        .result()
    }
}

/// An `ibench run` started by [`Bench::spawn`].
pub struct Running {
    child: Child,
    spawned: Instant,
    out: PathBuf,
    out_before: Vec<PathBuf>,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Running {
    /// Process id, for signals.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Time since the process was started.
    pub fn elapsed(&self) -> Duration {
        self.spawned.elapsed()
    }

    /// Waits until `table` in `conn` holds an id above `id`: a writer of the run has committed,
    /// so its step has started. Fails if ibench exits first or nothing happens for 30 s.
    pub fn wait_for_id_above(&mut self, conn: &Connection, table: &str, id: i64) {
        // The largest id alone (an index seek): a rollback-journal database's writer waits for
        // no long shared lock of ours.
        let sql = format!("SELECT coalesce(max(transactionid), 0) FROM {table}");
        loop {
            let max: i64 = conn
                .query_row(&sql, [], |r| r.get(0))
                .unwrap_or_else(|e| panic!("max id of {table}: {e}"));
            if max > id {
                return;
            }
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                let said = fs::read_to_string(&self.stderr).unwrap_or_default();
                panic!("ibench exited ({status}) before its step started: {said}");
            }
            assert!(
                self.elapsed() < Duration::from_secs(30),
                "step did not start"
            );
            sleep(Duration::from_millis(50));
        }
    }

    /// Waits until a line of the process's stderr so far satisfies `found`. Fails if ibench
    /// exits first or no such line appears within `limit` since it started.
    pub fn wait_for_stderr(&mut self, limit: Duration, found: impl Fn(&str) -> bool) {
        loop {
            let text = fs::read_to_string(&self.stderr).unwrap_or_default();
            if text.lines().any(&found) {
                return;
            }
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                panic!("ibench exited ({status}) before the awaited line:\n{text}");
            }
            assert!(self.elapsed() < limit, "awaited line never came:\n{text}");
            sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the process to end (killing it and failing after `limit` since it started).
    pub fn finish(mut self, limit: Duration) -> Outcome {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            if self.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("ibench did not finish within {limit:?}");
            }
            sleep(Duration::from_millis(50));
        };
        Outcome {
            code: status.code(),
            stdout: fs::read_to_string(&self.stdout).unwrap_or_default(),
            stderr: fs::read_to_string(&self.stderr).unwrap_or_default(),
            new_results: json_files(&self.out)
                .into_iter()
                .filter(|p| !self.out_before.contains(p))
                .collect(),
        }
    }
}

impl Drop for Running {
    /// A test that fails midway does not leave its ibench running.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The binary under test.
pub fn ibench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ibench"))
}

/// `p` as UTF-8 (temporary directories always are).
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `*.json` files directly in `dir`, sorted; none when `dir` does not exist.
/// The results of the run writing to `out` as saved so far (ibench saves them after each
/// step), once they name its managed server: what a test that kills a node mid-run reads
/// the cluster's pids and ports from.
pub fn saved_managed_run(out: &Path) -> Option<RunResult> {
    json_files(out)
        .first()
        .and_then(|f| ibench::results::file::load(f).ok())
        .filter(|r| r.managed_server.is_some())
}

pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Waits (up to 60 s) until the run writing into `out` has finished `steps` steps (its
/// results file holds them), and then half a second more: the next step is under way.
pub fn wait_for_steps(out: &Path, steps: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let loaded = json_files(out)
            .first()
            .and_then(|f| ibench::results::file::load(f).ok());
        if loaded.is_some_and(|r| r.steps.len() >= steps) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "step {} never started",
            steps + 1
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
}

/// Opens an existing SQLite file (never creates one, so a wrong path fails loudly).
pub fn open_db(path: &Path) -> Connection {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .expect("busy timeout");
    conn
}

/// Row count, min and max `transactionid` of `table` (min/max 0 when empty).
pub fn id_range(conn: &Connection, table: &str) -> (i64, i64, i64) {
    conn.query_row(
        &format!(
            "SELECT count(*), coalesce(min(transactionid), 0), coalesce(max(transactionid), 0) \
             FROM {table}"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap_or_else(|e| panic!("count {table}: {e}"))
}

/// User tables in the database, sorted.
pub fn tables(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             ORDER BY name",
        )
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

/// Explicit indexes of `table` (sorted by name), each with its columns in key order, read from
/// sqlite_master and PRAGMA index_info.
pub fn indexes(conn: &Connection, table: &str) -> Vec<(String, Vec<String>)> {
    let mut stmt = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?1 \
             AND sql IS NOT NULL ORDER BY name",
        )
        .expect("prepare");
    let names: Vec<String> = stmt
        .query_map([table], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    names
        .into_iter()
        .map(|name| {
            let mut info = conn
                .prepare(&format!("PRAGMA index_info('{name}')"))
                .expect("prepare index_info");
            let mut cols: Vec<(i64, String)> = info
                .query_map([], |r| Ok((r.get(0)?, r.get(2)?)))
                .expect("index_info")
                .collect::<Result<_, _>>()
                .expect("rows");
            cols.sort();
            (name, cols.into_iter().map(|(_, c)| c).collect())
        })
        .collect()
}

/// Total count of a base64 histogram from the results, decoded by us.
pub fn histogram_len(encoded: &str) -> u64 {
    ibench::metrics::histogram::decode(encoded)
        .expect("histogram decodes")
        .len()
}

/// Whether this is CI (`CI=true`), where a missing server fails a test instead of skipping it.
pub fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether the binaries for `server` are installed; in CI their absence fails the test with
/// what to install, locally the test is skipped with a message.
pub fn have(server: &str, engine: &str) -> bool {
    let (files, package): (&[&str], &str) = match (server, engine) {
        ("postgres", _) => (&["/usr/bin/pg_config"], "postgresql"),
        ("mariadb", "rocksdb") => (
            &["/usr/sbin/mariadbd", "/usr/lib/mysql/plugin/ha_rocksdb.so"],
            "mariadb-server mariadb-plugin-rocksdb",
        ),
        _ => (&["/usr/sbin/mariadbd"], "mariadb-server"),
    };
    have_files(files, package)
}

/// Whether `files` exist; in CI their absence fails the test naming the Debian `package`
/// that installs them, locally the test is skipped (see [`skip`]). Files listed in
/// `IBENCH_TEST_HIDE` (comma-separated) count as absent, to see what a machine without them
/// does: `IBENCH_TEST_HIDE=/usr/bin/pg_config cargo test ...`.
pub fn have_files(files: &[&str], package: &str) -> bool {
    let hidden = std::env::var("IBENCH_TEST_HIDE").unwrap_or_default();
    let hidden: Vec<&str> = hidden.split(',').map(str::trim).collect();
    if files
        .iter()
        .all(|f| !hidden.contains(f) && Path::new(f).exists())
    {
        return true;
    }
    let msg = format!(
        "{} not installed: apt-get install {package}",
        files.join(", ")
    );
    if ci() {
        panic!("{msg} (CI=true: server tests must run; .ci/run installs these)");
    }
    skip(&msg);
    false
}

/// Says that the running test is skipped, and why, where a plain `cargo test` shows it: libtest
/// captures `eprintln!` (a skipped test would read as a pass), not writes to the stderr handle.
/// The line names the test (libtest names its thread after it): `SKIPPED store::x: why`.
/// Skips are visible but still pass: CI sets `CI=true`, where a missing server fails instead.
pub fn skip(why: &str) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    // One write, on a line of its own even when libtest is midway through `test x ... ok`.
    let _ = std::io::stderr().write_all(format!("\nSKIPPED {test}: {why}\n").as_bytes());
}

/// A bench whose directory a managed server's account (`ibench-server` when the tests run as
/// root) can enter (tempdirs are 0700).
pub fn server_bench() -> Bench {
    let bench = Bench::new();
    fs::set_permissions(bench.path(""), fs::Permissions::from_mode(0o755)).unwrap();
    bench
}

/// A [`server_bench`] alone on the CPU (see [`Bench::exclusive`]), for timing assertions.
pub fn exclusive_server_bench() -> Bench {
    let bench = Bench::exclusive();
    fs::set_permissions(bench.path(""), fs::Permissions::from_mode(0o755)).unwrap();
    bench
}

/// The row of `step` and figure `key` in `ibench compare --json`'s output.
pub fn compare_row<'a>(cmp: &'a serde_json::Value, step: &str, key: &str) -> &'a serde_json::Value {
    cmp["rows"]
        .as_array()
        .expect("compare's rows")
        .iter()
        .find(|r| r["step"] == step && r["key"] == key)
        .unwrap_or_else(|| panic!("no row {step} {key} in {cmp}"))
}

/// Whether compare's `row` (JSON) calls `verdict`, or would and names the neighbour that kept
/// it from it (a step a neighbour disturbed is not called: docs/metrics.md): the test's
/// statistics hold either way, and a blip of the host's own does not fail it.
pub fn calls(row: &serde_json::Value, verdict: &str) -> bool {
    row["verdict"] == verdict
        || (row["verdict"] == "disturbed"
            && row["note"]
                .as_str()
                .is_some_and(|n| n.starts_with(&format!("would be {verdict}"))))
}

/// Whether a report cell's `judged` (JSON) is marked `mark`, or would be and was kept from it
/// by a disturbed step (marked `flagged`, its note saying what it would be).
pub fn marked(judged: &serde_json::Value, mark: &str) -> bool {
    judged["mark"] == mark
        || (judged["mark"] == "flagged"
            && judged["note"]
                .as_str()
                .is_some_and(|n| n.contains(&format!("disturbed: would be {mark}"))))
}

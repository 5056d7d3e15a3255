//! `ibench experiment` over a server given by URL (the local PostgreSQL service): two setups
//! run, Ctrl-C during the second cell, and the same command finishes it without rerunning the
//! first (its fingerprint has no password, so another PGPASSWORD resumes too); the password
//! is nowhere in what ibench wrote; a config setting a server option on the URL target is
//! refused with one line and exit 2 unless server changes are allowed, and then it is a
//! setting of ibench's own sessions, leaving the server's own value as it was.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::common::{Bench, LocalService, ibench, path_str};

/// The local PostgreSQL service, when it answers (skipped, said, otherwise; required in CI).
fn local_postgres() -> Option<LocalService> {
    LocalService::reachable()
        .into_iter()
        .find(LocalService::is_postgres)
}

/// (id, cell, status) of the experiment's runs in the store, oldest first; an error while
/// ibench is still creating the store.
fn store_runs(db: &Path, experiment: &str) -> rusqlite::Result<Vec<(String, String, String)>> {
    let conn = Connection::open(db)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    let mut stmt = conn
        .prepare("SELECT id, cell, status FROM runs WHERE experiment = ?1 ORDER BY started_at")?;
    stmt.query_map([experiment], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect()
}

/// The local service's data directory, when this test may read its pid file (as root).
fn readable_data_dir(pg: &LocalService) -> Option<String> {
    let mut c = postgres::Client::connect(pg.url, postgres::NoTls).ok()?;
    let dir: String = c.query_one("SHOW data_directory", &[]).ok()?.get(0);
    let readable = fs::read_to_string(Path::new(&dir).join("postmaster.pid")).is_ok();
    if !readable {
        crate::common::skip(&format!(
            "{dir}/postmaster.pid is not readable: no host figures"
        ));
    }
    readable.then_some(dir)
}

/// The experiment: the URL target (with its pid file and data directory, `host`), two client
/// counts, tables named by `prefix`.
fn experiment(url: &str, prefix: &str, host: Option<&str>) -> String {
    let host = host
        .map(|d| format!("server_pid_file = \"{d}/postmaster.pid\"\ndata_dir = \"{d}\"\n"))
        .unwrap_or_default();
    format!(
        r#"
name = "url-pg"

[workload]
steps = "l.i0,l.x,l.i1,qr100"
table_prefix = "{prefix}"
rows_per_client = 3000
l1_rows = 20000
l1_batch = 10
query_seconds = 2

[[target]]
name = "pg"
url = "{url}"
{host}
[[setup]]
name = "c1"
clients = 1

[[setup]]
name = "c2"
clients = 2
"#
    )
}

/// `ibench experiment FILE --out OUT -q` with `PGPASSWORD=password`, started.
fn spawn(file: &str, out: &Path, password: &str, stderr: &Path) -> std::process::Child {
    ibench()
        .args(["experiment", file, "--out", path_str(out), "-q"])
        .env("PGPASSWORD", password)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// Every file under `dir` holding `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).contains(needle))
            .unwrap_or(false)
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn url_experiment_runs_two_setups_and_resumes_after_ctrl_c() {
    let Some(pg) = local_postgres() else {
        return;
    };
    let bench = Bench::new();
    let prefix = format!("ibx{}_", std::process::id());
    let file = bench.path("url.toml");
    let host = readable_data_dir(&pg);
    fs::write(&file, experiment(pg.url, &prefix, host.as_deref())).unwrap();
    let file = path_str(&file).to_string();
    let out = bench.out();
    let db = out.join("results.db");
    let secret = "NotThePassw0rdXyz";
    let first_stderr = bench.path("first.stderr");
    let mut child = spawn(&file, &out, secret, &first_stderr);
    // The second cell's run is in the store once its l.i0 is saved: Ctrl-C then.
    let start = Instant::now();
    let first_id = loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "ibench exited ({status}) before the second cell: {}",
                fs::read_to_string(&first_stderr).unwrap_or_default()
            );
        }
        let runs = if db.exists() {
            store_runs(&db, "url-pg").unwrap_or_default()
        } else {
            Vec::new()
        };
        if runs.len() == 2 && runs[1].2 == "running" {
            assert_eq!(runs[0].2, "complete", "{runs:?}");
            break runs[0].0.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "the second cell did not start: {runs:?}"
        );
        sleep(Duration::from_millis(20));
    };
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    let first = fs::read_to_string(&first_stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{first}");
    assert!(
        first.contains("pg/default/glibc/c2 #1 interrupted"),
        "{first}"
    );
    let killed = store_runs(&db, "url-pg").unwrap();
    assert_eq!(killed.len(), 2, "{killed:?}");
    assert_eq!(killed[1].2, "interrupted", "{killed:?}");

    // Resumed with another password in the environment: the cells' fingerprints have none.
    let o = bench.run_raw(&["experiment", &file, "--out", path_str(&out), "-q"], &[]);
    o.assert_success();
    assert!(
        o.stderr.contains("1 complete from before"),
        "{}",
        o.describe()
    );
    assert!(!o.stderr.contains("cell 1/2:"), "{}", o.describe());
    assert!(o.stderr.contains("cell 2/2:"), "{}", o.describe());
    let runs = store_runs(&db, "url-pg").unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0].0, first_id, "the complete cell was not rerun");
    assert_ne!(runs[1].0, killed[1].0);
    for (id, cell, status) in &runs {
        assert_eq!(status, "complete", "{cell}");
        let run = ibench::results::file::load(&out.join(format!("{id}.json"))).unwrap();
        assert_eq!(run.steps.len(), 4, "{cell}");
        let url = run.config.target.url.as_ref().map(|u| u.redacted());
        assert_eq!(url.as_deref(), Some(pg.url), "{cell}");
        let clients = if cell.ends_with("c1") { 1 } else { 2 };
        // l.i1 inserted and deleted 20000 rows per client.
        assert_eq!(run.steps[2].rows_deleted, clients * 20_000, "{cell}");
        // The server's processes and data directory, from the pid file and data_dir.
        if host.is_some() {
            let e = run.steps[0].efficiency.as_ref().unwrap();
            assert!(e.dbms_source.starts_with("external server, pid"), "{cell}");
            // A short step may fall within one clock tick of the server's CPU; the run's
            // steps together do not (l.i1 alone inserts and deletes 20000 rows a client).
            let cpu: f64 = (run.steps.iter())
                .filter_map(|s| Some(s.efficiency.as_ref()?.dbms.as_ref()?.cpu_s))
                .sum();
            assert!(cpu > 0.0, "{cell}: no server CPU in any step");
            assert!(e.db_size.disk_bytes.unwrap_or(0) > 0, "{cell}");
        }
    }
    assert!(out.join("report.html").exists());
    // The server's own counts: the second cell's tables as l.i0 made them (l.i1 and the
    // query step's writer delete as many as they insert), their ids past what they inserted.
    let second = ibench::results::file::load(&out.join(format!("{}.json", runs[1].0))).unwrap();
    let inserted: u64 = second.steps.iter().map(|s| s.rows_inserted).sum();
    let mut max_ids = 0;
    for i in 1..=2 {
        let table = format!("{prefix}{i}");
        let [n, max] = pg.row(&format!("SELECT count(*), max(transactionid) FROM {table}"))[..]
        else {
            panic!("two columns");
        };
        assert_eq!(n, 3000, "{table}");
        max_ids += max as u64;
    }
    assert_eq!(max_ids, inserted, "ids 1..max in each table");
    pg.exec(&format!("DROP TABLE {prefix}1, {prefix}2"));
    let leaked = files_holding(&out, secret);
    assert!(leaked.is_empty(), "the password is in {leaked:?}");
    assert!(!first.contains(secret) && !o.stderr.contains(secret));
}

/// The URL target with one config setting `option`, `allow` line at the top.
fn with_option(url: &str, prefix: &str, allow: &str, option: &str) -> String {
    format!(
        r#"name = "url-opt"
{allow}
[workload]
steps = "l.i0"
table_prefix = "{prefix}"
rows_per_client = 500
clients = 1

[[target]]
name = "ext"
url = "{url}"

[[config]]
name = "opt"
options = {{ {option} }}
"#
    )
}

/// A session setting both local services let a session change, the value a config gives it,
/// and how that value reads back.
fn session_setting(service: &LocalService) -> (&'static str, &'static str, &'static str) {
    if service.is_postgres() {
        ("work_mem", "\"7MB\"", "7MB")
    } else {
        ("sort_buffer_size", "1048576", "1048576")
    }
}

/// The value of `name` a new session of the test's own client sees.
fn new_session_value(service: &LocalService, name: &str) -> String {
    if service.is_postgres() {
        let mut c = postgres::Client::connect(service.url, postgres::NoTls).unwrap();
        c.query_one(&format!("SHOW {name}"), &[]).unwrap().get(0)
    } else {
        use mysql::prelude::Queryable;
        let mut c = mysql::Conn::new(mysql::Opts::from_url(service.url).unwrap()).unwrap();
        let v: Option<String> = c
            .query_first(format!("SELECT CAST(@@SESSION.{name} AS CHAR)"))
            .unwrap();
        v.unwrap()
    }
}

#[test]
fn a_server_option_on_a_url_target_is_refused_unless_allowed() {
    for service in LocalService::reachable() {
        option_refused_unless_allowed(&service);
    }
}

fn option_refused_unless_allowed(service: &LocalService) {
    let bench = Bench::new();
    let prefix = format!("ibo{}_", std::process::id());
    let (name, value, reads) = session_setting(service);
    let option = format!("{name} = {value}");
    let write = |file: &str, allow: &str| {
        let path = bench.path(file);
        fs::write(&path, with_option(service.url, &prefix, allow, &option)).unwrap();
        path_str(&path).to_string()
    };
    let refused = write("refused.toml", "");
    let o = bench.run_raw(&["experiment", &refused, "--dry-run"], &[]);
    assert_eq!(o.code, Some(2), "{}", o.describe());
    let lines: Vec<&str> = o.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", o.describe());
    assert!(
        lines[0].contains("refused.toml:15:")
            && lines[0].contains(&format!("server option {name} on target ext")),
        "{}",
        o.describe()
    );
    // Allowed by the flag: the check passes, nothing runs.
    let o = bench.run_raw(
        &[
            "experiment",
            &refused,
            "--dry-run",
            "--allow-server-changes",
        ],
        &[],
    );
    o.assert_success();
    assert!(
        o.stdout.contains("ext/opt/glibc/default #1"),
        "{}",
        o.describe()
    );
    // Allowed by the key, and run: ibench's sessions had the setting (read back by its own
    // connection and recorded), a new session of the server has its own value as before.
    let before = new_session_value(service, name);
    assert_ne!(before, reads, "{}", service.server);
    let allowed = write("allowed.toml", "allow_server_changes = true");
    let out = bench.out();
    let o = bench.run_raw(
        &["experiment", &allowed, "--out", path_str(&out), "-q"],
        &[],
    );
    o.assert_success();
    let runs = store_runs(&out.join("results.db"), "url-opt").unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = ibench::results::file::load(&out.join(format!("{}.json", runs[0].0))).unwrap();
    let recorded = run.environment.dbms.settings.get(name).map(String::as_str);
    assert_eq!(recorded, Some(reads), "{}", service.server);
    assert_eq!(
        service.row(&format!("SELECT count(*) FROM {prefix}1")),
        [500]
    );
    service.exec(&format!("DROP TABLE {prefix}1"));
    assert_eq!(
        new_session_value(service, name),
        before,
        "{}",
        service.server
    );
}

/// A table of the benchmark's name that ibench did not create, on the local PostgreSQL: a
/// cell refuses it naming the target key `drop_existing` (and leaves it and its row alone),
/// and with `drop_existing = true` replaces it.
#[test]
fn drop_existing_on_a_url_target_replaces_a_table_ibench_did_not_create() {
    let Some(pg) = local_postgres() else {
        return;
    };
    let bench = Bench::new();
    let prefix = format!("ibd{}_", std::process::id());
    pg.exec(&format!(
        "DROP TABLE IF EXISTS {prefix}1; CREATE TABLE {prefix}1 (note text); \
         INSERT INTO {prefix}1 VALUES ('theirs')"
    ));
    let write = |file: &str, key: &str| {
        let text = with_option(pg.url, &prefix, "", "work_mem = \"4MB\"")
            .replace(
                "[[config]]\nname = \"opt\"\noptions = { work_mem = \"4MB\" }\n",
                "",
            )
            .replace("url = ", &format!("{key}url = "));
        let path = bench.path(file);
        fs::write(&path, text).unwrap();
        path_str(&path).to_string()
    };
    let refused = write("keep.toml", "");
    let out = bench.out();
    let o = bench.run_raw(
        &["experiment", &refused, "--out", path_str(&out), "-q"],
        &[],
    );
    assert_ne!(o.code, Some(0), "{}", o.describe());
    assert!(
        o.stderr.contains(&format!("table {prefix}1 exists"))
            && o.stderr
                .contains("set drop_existing = true on the experiment's target")
            && !o.stderr.contains("--drop-existing"),
        "{}",
        o.describe()
    );
    assert_eq!(pg.row(&format!("SELECT count(*) FROM {prefix}1")), [1]);
    let dropping = write("drop.toml", "drop_existing = true\n");
    let o = bench.run_raw(
        &[
            "experiment",
            &dropping,
            "--out",
            path_str(&bench.path("out2")),
            "-q",
        ],
        &[],
    );
    o.assert_success();
    // l.i0's 500 rows in ibench's own table.
    assert_eq!(
        pg.row(&format!(
            "SELECT count(*), max(transactionid) FROM {prefix}1"
        )),
        [500, 500]
    );
    pg.exec(&format!("DROP TABLE {prefix}1"));
}

//! Helpers for the servers a test leaves running or uses: whether a process runs, kept
//! servers (stopped when dropped) and their credentials and URLs, the processes a run
//! started, and the local PostgreSQL and MariaDB services of the by-URL tests.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ibench::results::model::RunResult;

use super::{ci, skip};

/// Whether process `pid` runs (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// A server left running by --keep-server; stopped when dropped, even if the test failed.
pub struct Kept {
    /// The server's pid.
    pub pid: u32,
    /// INT: PostgreSQL's fast shutdown; TERM for MariaDB.
    pub signal: &'static str,
}

impl Kept {
    /// The managed `server` (`postgres`, `mariadb`) `run` left running.
    pub fn of(run: &RunResult, server: &str) -> Kept {
        Kept {
            pid: run
                .managed_server
                .as_ref()
                .expect("a managed server")
                .pid
                .unwrap(),
            signal: if server == "postgres" { "INT" } else { "TERM" },
        }
    }

    fn signal_and_wait(&self) -> bool {
        let _ = std::process::Command::new("kill")
            .args([&format!("-{}", self.signal), &self.pid.to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while alive(self.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        !alive(self.pid)
    }

    /// Stops the server and checks that it is gone.
    pub fn stop(self) {
        assert!(self.signal_and_wait(), "server {} did not stop", self.pid);
        std::mem::forget(self);
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        let _ = self.signal_and_wait();
    }
}

/// Processes whose command line mentions `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(needle))
                .unwrap_or(false)
        })
        .collect()
}

/// A root connection to the MariaDB on 127.0.0.1:`port` (a kept node of a cluster).
pub fn mariadb_root(port: u16, password: &str) -> mysql::Conn {
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .user(Some("root"))
        .pass(Some(password))
        .prefer_socket(false);
    mysql::Conn::new(opts).expect("connect to a node")
}

/// Runs `check` on the MariaDB cluster `run` kept (`--keep-server`), then stops it whatever
/// `check` did: its other nodes (replicas, Galera's n2 ..) first, then the server.
pub fn with_kept_mariadb_cluster(run: &RunResult, check: impl FnOnce()) {
    let server = run.managed_server.clone().expect("a managed server");
    let mut nodes: Vec<Kept> = server
        .replicas
        .iter()
        .map(|r| {
            let pid = r.pid.expect("a node's pid");
            assert!(alive(pid), "node {} not running", r.name);
            Kept {
                pid,
                signal: "TERM",
            }
        })
        .collect();
    nodes.push(Kept::of(run, "mariadb"));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
    for k in nodes {
        k.stop();
    }
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
}

/// The password of a server left running by `--keep-server`, from the file only its owner can
/// read that ibench wrote in the server's directory (`pgpass`, or `client.cnf` for MariaDB).
pub fn kept_password(run: &RunResult) -> String {
    let log = &run.managed_server.as_ref().expect("a managed server").log;
    let dir = PathBuf::from(log.strip_suffix(".log").expect("log is <stem>.server.log"));
    if let Ok(text) = fs::read_to_string(dir.join("pgpass")) {
        return text.trim().rsplit(':').next().unwrap().to_string();
    }
    let text = fs::read_to_string(dir.join("client.cnf")).expect("credentials of the kept server");
    text.lines()
        .find_map(|l| l.strip_prefix("password = "))
        .expect("a password line")
        .trim()
        .to_string()
}

/// The URL of a server left running by `--keep-server`, with its password.
pub fn kept_url(run: &RunResult) -> String {
    let location = &run.environment.dbms.location;
    let password = kept_password(run);
    let (scheme, rest) = location.split_once("://").expect("a URL");
    let (user, host) = rest.split_once('@').expect("a user");
    // The stored URL shows `***` for the password.
    let user = user.split(':').next().unwrap();
    format!("{scheme}://{user}:{password}@{host}")
}

/// A local DBMS service the by-URL tests use (`.ci/run` starts them): its URL, and SQL run
/// with the test's own client.
pub struct LocalService {
    /// `postgres` or `mariadb`.
    pub server: &'static str,
    /// Its URL (no password: trust / root without one).
    pub url: &'static str,
}

impl LocalService {
    /// The local PostgreSQL and MariaDB services that answer; a missing one fails the test in
    /// CI and is skipped (said) otherwise.
    pub fn reachable() -> Vec<LocalService> {
        let all = [
            LocalService {
                server: "postgres",
                url: "postgres://postgres@127.0.0.1:5432/test",
            },
            LocalService {
                server: "mariadb",
                url: "mysql://root@127.0.0.1:3306/test",
            },
        ];
        let mut out = Vec::new();
        for s in all {
            let answers = if s.is_postgres() {
                postgres::Client::connect(s.url, postgres::NoTls).is_ok()
            } else {
                mysql::Conn::new(mysql::Opts::from_url(s.url).unwrap()).is_ok()
            };
            if answers {
                out.push(s);
            } else {
                assert!(
                    !ci(),
                    "{} service at {}: start it (see .ci/run)",
                    s.server,
                    s.url
                );
                skip(&format!("no {} service at {}", s.server, s.url));
            }
        }
        out
    }

    /// Whether it is PostgreSQL (else MariaDB).
    pub fn is_postgres(&self) -> bool {
        self.server == "postgres"
    }

    /// Runs `sql` (one or more statements).
    pub fn exec(&self, sql: &str) {
        if self.is_postgres() {
            let mut c = postgres::Client::connect(self.url, postgres::NoTls).unwrap();
            c.batch_execute(sql).unwrap();
        } else {
            use mysql::prelude::Queryable;
            let mut c = mysql::Conn::new(mysql::Opts::from_url(self.url).unwrap()).unwrap();
            c.query_drop(sql).unwrap();
        }
    }

    /// The first row of `sql`, whose columns are integers (`bigint`; cast counts on
    /// PostgreSQL are bigint already).
    pub fn row(&self, sql: &str) -> Vec<i64> {
        if self.is_postgres() {
            let mut c = postgres::Client::connect(self.url, postgres::NoTls).unwrap();
            let r = c.query_one(sql, &[]).unwrap();
            (0..r.len()).map(|i| r.get::<_, i64>(i)).collect()
        } else {
            use mysql::prelude::Queryable;
            let mut c = mysql::Conn::new(mysql::Opts::from_url(self.url).unwrap()).unwrap();
            let r: mysql::Row = c.query_first(sql).unwrap().unwrap();
            (0..r.len()).map(|i| r.get::<i64, _>(i).unwrap()).collect()
        }
    }
}

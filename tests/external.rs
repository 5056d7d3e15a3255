//! Servers ibench did not start, reached by URL: row counts read with the test's own client,
//! bad URLs and wrong passwords as one line each, password logins of the client connections.

use std::fs;

use mysql::prelude::Queryable;

use crate::common::{Bench, Kept, ci, have, path_str, server_bench};

/// URL of an already-running server from the environment, or the machine's default service.
fn external(var: &str, default: &str, probe: impl Fn(&str) -> bool) -> Option<String> {
    let url = std::env::var(var).unwrap_or_else(|_| default.to_string());
    if probe(&url) {
        return Some(url);
    }
    let msg = format!(
        "no server at {url} (set {var}, or start one: pg_ctlcluster 15 main start / \
         start-stop-daemon --start --background --exec /usr/sbin/mariadbd)"
    );
    if ci() {
        panic!("{msg}");
    }
    crate::common::skip(&msg);
    None
}

#[test]
fn external_servers_by_url() {
    let pg = external(
        "IBENCH_TEST_PG_URL",
        "postgres://postgres@127.0.0.1:5432/test",
        |u| postgres::Client::connect(u, postgres::NoTls).is_ok(),
    );
    let my = external(
        "IBENCH_TEST_MYSQL_URL",
        "mysql://root@127.0.0.1:3306/test",
        |u| {
            mysql::Opts::from_url(u)
                .ok()
                .and_then(|o| mysql::Conn::new(o).ok())
                .is_some()
        },
    );
    let prefix = format!("ibt{}_", std::process::id());
    let targets = [pg, my].into_iter().flatten();
    // Each server twice: prepared statements (default) and plain SQL text.
    for (url, mode) in targets.flat_map(|u| [(u.clone(), "--plain-sql"), (u, "--seed=42")]) {
        let bench = Bench::new();
        let run = bench
            .run(&[
                mode,
                "--url",
                &url,
                "--table-prefix",
                &prefix,
                "--steps",
                "l.i0,l.x,l.i1,qp200",
                "--l0-rows",
                "3000",
                "--l1-rows",
                "600",
                "--query-seconds",
                "2",
            ])
            .result();
        assert_eq!(
            run.config.statements,
            if mode == "--plain-sql" {
                ibench::dbms::StatementMode::Plain
            } else {
                ibench::dbms::StatementMode::Prepared
            }
        );
        let qp = &run.steps[3];
        assert!(qp.queries > 0);
        assert_eq!(run.steps[2].rows_deleted, 2 * 600, "{mode}: l.i1 deletes");
        assert_eq!(qp.point_query_misses, Some(0));
        assert!(
            !run.environment.dbms.settings.is_empty(),
            "settings recorded"
        );
        // Row counts from the server itself, then clean up.
        let table = |i: u32| format!("{prefix}{i}");
        if url.starts_with("postgres") {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            for i in 1..=2 {
                let n: i64 = c
                    .query_one(&format!("SELECT count(*) FROM {}", table(i)), &[])
                    .unwrap()
                    .get(0);
                assert_eq!(n, 3000);
                c.batch_execute(&format!("DROP TABLE {}", table(i)))
                    .unwrap();
            }
        } else {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
            for i in 1..=2 {
                let n: Option<u64> = c
                    .query_first(format!("SELECT count(*) FROM {}", table(i)))
                    .unwrap();
                assert_eq!(n, Some(3000));
                c.query_drop(format!("DROP TABLE {}", table(i))).unwrap();
            }
        }
    }
}

#[test]
fn bad_urls_and_passwords_fail_with_one_line() {
    let bench = Bench::new();
    let secret = "Sup3rS3cretPW";
    // Nothing listens on port 1.
    let out = bench.run(&[
        "--url",
        &format!("postgres://postgres:{secret}@127.0.0.1:1/x"),
        "--steps",
        "l.i0",
    ]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(
        out.stderr
            .contains("cannot connect to postgres://postgres:***@127.0.0.1:1/x"),
        "{}",
        out.describe()
    );
    assert!(!out.stderr.contains(secret) && !out.stdout.contains(secret));
    // A wrong password (MYSQL_PWD) against the running MariaDB, when there is one.
    if let Some(url) = external(
        "IBENCH_TEST_MYSQL_URL",
        "mysql://root@127.0.0.1:3306/test",
        |u| {
            mysql::Opts::from_url(u)
                .ok()
                .and_then(|o| mysql::Conn::new(o).ok())
                .is_some()
        },
    ) {
        let out = bench.run_raw(
            &["run", "--out", path_str(&bench.out()), "-q"],
            &[
                "--url",
                &url.replace("root@", &format!("ibench_nobody:{secret}@")),
                "--steps",
                "l.i0",
            ],
        );
        assert_ne!(out.code, Some(0));
        assert!(out.stderr.contains("Access denied"), "{}", out.describe());
        assert!(!out.stderr.contains(secret) && !out.stdout.contains(secret));
    }
    // A password in the query string is kept apart too (trust auth ignores it).
    if let Some(url) = external(
        "IBENCH_TEST_PG_URL",
        "postgres://postgres@127.0.0.1:5432/test",
        |u| postgres::Client::connect(u, postgres::NoTls).is_ok(),
    ) {
        let prefix = format!("ibq{}_", std::process::id());
        let sep = if url.contains('?') { '&' } else { '?' };
        let with_secret = format!("{url}{sep}password={secret}");
        let out = bench.run(&[
            "--url",
            &with_secret,
            "--table-prefix",
            &prefix,
            "--steps",
            "l.i0",
            "--l0-rows",
            "100",
            "--clients",
            "1",
        ]);
        out.assert_success();
        assert!(!out.stderr.contains(secret) && !out.stdout.contains(secret));
        // Every artifact of the run: results files, the results database, anything else.
        for entry in fs::read_dir(bench.out()).unwrap().flatten() {
            let bytes = fs::read(entry.path()).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains(secret),
                "password in {}",
                entry.path().display()
            );
        }
        assert!(!out.new_results.is_empty());
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute(&format!("DROP TABLE {prefix}1")).unwrap();
    }
    let out = bench.run(&["--url", "postgres://x@127.0.0.1/db", "--engine", "memory"]);
    assert_eq!(out.code, Some(2));
    let out = bench.run(&["--url", "redis://127.0.0.1/"]);
    assert_eq!(out.code, Some(2));
    assert!(out.stderr.contains("redis"), "{}", out.describe());
    for f in &out.new_results {
        assert!(ibench::results::file::load(f).is_ok());
    }
}

#[test]
fn client_connections_authenticate_with_passwords() {
    // The client threads' own wire clients (pgwire, mywire) must log in the way the servers
    // ask: SCRAM-SHA-256 and MD5 on PostgreSQL, mysql_native_password on MariaDB.
    for server in ["postgres", "mariadb"] {
        if !have(server, "") {
            continue;
        }
        let bench = server_bench();
        let setup = bench.run(&[
            "--server",
            server,
            "--keep-server",
            "--steps",
            "l.i0",
            "--l0-rows",
            "1000",
        ]);
        let run = setup.result();
        let kept = Kept {
            pid: run.managed_server.as_ref().unwrap().pid.unwrap(),
            signal: if server == "postgres" { "INT" } else { "TERM" },
        };
        let admin = crate::common::kept_url(&run);
        let u = url::Url::parse(&admin).unwrap();
        let (host, port, db) = (
            u.host_str().unwrap().to_string(),
            u.port().unwrap(),
            u.path().trim_start_matches('/').to_string(),
        );
        let users: Vec<(&str, &str)> = if server == "postgres" {
            let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
            c.batch_execute(
                "CREATE ROLE scram_user LOGIN PASSWORD 'Scram-pw-7'; \
                 SET password_encryption = 'md5'; \
                 CREATE ROLE md5_user LOGIN PASSWORD 'Md5-pw-7'; \
                 GRANT ALL ON SCHEMA public TO scram_user, md5_user;",
            )
            .unwrap();
            // Password rules first in pg_hba.conf, then the managed server's own.
            let hba = setup.new_results[0]
                .with_extension("server")
                .join("data")
                .join("pg_hba.conf");
            let old = fs::read_to_string(&hba).unwrap();
            fs::write(
                &hba,
                format!(
                    "host all scram_user 127.0.0.1/32 scram-sha-256\n\
                     host all md5_user 127.0.0.1/32 md5\n{old}"
                ),
            )
            .unwrap();
            c.batch_execute("SELECT pg_reload_conf()").unwrap();
            vec![("scram_user", "Scram-pw-7"), ("md5_user", "Md5-pw-7")]
        } else {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(&admin).unwrap()).unwrap();
            c.query_drop(format!(
                "CREATE USER pw_user@'%' IDENTIFIED BY 'Native-pw-7'; \
                 GRANT ALL ON `{db}`.* TO pw_user@'%'"
            ))
            .unwrap();
            vec![("pw_user", "Native-pw-7")]
        };
        for (user, password) in users {
            let url = format!("{}://{user}:{password}@{host}:{port}/{db}", u.scheme());
            let prefix = format!("{user}_");
            let out = bench.run(&[
                "--url",
                &url,
                "--table-prefix",
                &prefix,
                "--steps",
                "l.i0,qp100",
                "--l0-rows",
                "2000",
                "--query-seconds",
                "1",
            ]);
            let r = out.result();
            assert!(r.steps[1].queries > 0, "{server} {user}");
            assert!(!out.stdout.contains(password) && !out.stderr.contains(password));
            // A wrong password is one line, without it.
            let bad = format!("{}://{user}:Wrong-pw-9@{host}:{port}/{db}", u.scheme());
            let out = bench.run(&["--url", &bad, "--steps", "l.i0", "--l0-rows", "100"]);
            assert_ne!(out.code, Some(0), "{server} {user}: {}", out.describe());
            assert!(!out.stderr.contains("Wrong-pw-9"), "{}", out.stderr);
            assert_eq!(
                out.stderr
                    .lines()
                    .filter(|l| l.starts_with("error"))
                    .count(),
                1,
                "{}",
                out.stderr
            );
        }
        kept.stop();
    }
}

/// A role with a password on the local PostgreSQL service, dropped (with its tables) when the
/// test ends, whatever happens.
struct PgRole {
    admin: String,
    name: String,
}

impl Drop for PgRole {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP OWNED BY {0}; DROP ROLE IF EXISTS {0}",
                self.name
            ));
        }
    }
}

/// A password in --url (userinfo or ?password=) is overwritten in ibench's own arguments
/// once they are parsed: /proc/PID/cmdline (what `ps` shows every user) no longer holds it
/// while the run goes on, and the run still uses it.
#[test]
fn a_password_in_the_url_leaves_the_process_arguments() {
    let Some(admin) = external(
        "IBENCH_TEST_PG_URL",
        "postgres://postgres@127.0.0.1:5432/test",
        |u| postgres::Client::connect(u, postgres::NoTls).is_ok(),
    ) else {
        return;
    };
    let role = PgRole {
        admin: admin.clone(),
        name: format!("ibsec{}", std::process::id()),
    };
    let secret = format!("Argv-Secret-{}", std::process::id());
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    c.batch_execute(&format!(
        "CREATE ROLE {0} LOGIN PASSWORD '{secret}'; GRANT CREATE ON SCHEMA public TO {0}",
        role.name
    ))
    .unwrap();
    let u = url::Url::parse(&admin).unwrap();
    let at = format!(
        "{}:{}{}",
        u.host_str().unwrap(),
        u.port().unwrap_or(5432),
        u.path()
    );
    for url in [
        format!("postgres://{}:{secret}@{at}", role.name),
        format!("postgres://{}@{at}?password={secret}", role.name),
    ] {
        let bench = Bench::new();
        let prefix = format!("{}_", role.name);
        let child = bench.spawn(&[
            "--url",
            &url,
            "--table-prefix",
            &prefix,
            "--steps",
            "l.i0,qp100",
            "--l0-rows",
            "500",
            "--clients",
            "1",
            "--query-seconds",
            "4",
        ]);
        // Connected and saving: long past parsing the command line.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while crate::common::json_files(&bench.out())
            .first()
            .and_then(|f| ibench::results::file::load(f).ok())
            .is_none_or(|r| r.steps.is_empty())
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the run never saved a step"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let cmdline = fs::read(format!("/proc/{}/cmdline", child.pid())).unwrap();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let ps = std::process::Command::new("ps")
            .args(["-ww", "-o", "args=", "-p", &child.pid().to_string()])
            .output()
            .unwrap();
        let ps = String::from_utf8_lossy(&ps.stdout).into_owned();
        for shown in [&cmdline, &ps] {
            assert!(!shown.contains(&secret), "the password is visible: {shown}");
            assert!(
                shown.contains(&format!("postgres://{}", role.name)) && shown.contains(&at),
                "the rest of the URL stays: {shown}"
            );
            assert!(shown.contains(&"x".repeat(secret.len())), "{shown}");
        }
        let out = child.finish(std::time::Duration::from_secs(60));
        let run = out.result();
        assert!(run.steps[1].queries > 0);
        assert!(!out.describe().contains(&secret));
        c.batch_execute(&format!("DROP TABLE {prefix}1")).unwrap();
    }
    drop(c);
    drop(role);
}

#[test]
fn the_pause_changes_no_setting_of_a_server_ibench_did_not_start() {
    let Some(url) = external(
        "IBENCH_TEST_MYSQL_URL",
        "mysql://root@127.0.0.1:3306/test",
        |u| {
            mysql::Opts::from_url(u)
                .ok()
                .and_then(|o| mysql::Conn::new(o).ok())
                .is_some()
        },
    ) else {
        return;
    };
    use mysql::prelude::Queryable;
    let setting = || -> String {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
        c.query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
            .unwrap()
            .unwrap()
    };
    let before = setting();
    let prefix = format!("zzpause{}_", std::process::id());
    let bench = Bench::new();
    let run = bench
        .run(&[
            "--url",
            &url,
            "--table-prefix",
            &prefix,
            "--clients",
            "1",
            "--steps",
            "l.i0,l.x,qp100",
            "--l0-rows",
            "2000",
            "--query-seconds",
            "1",
        ])
        .result();
    assert_eq!(setting(), before, "innodb_max_dirty_pages_pct untouched");
    let pause = &run.maintenance[0];
    assert!(
        pause.actions.contains("dirty-page flush skipped")
            && pause.actions.contains("--allow-server-changes"),
        "the pause says what it left out and why: {}",
        pause.actions
    );
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    c.query_drop(format!("DROP TABLE {prefix}1")).unwrap();
}

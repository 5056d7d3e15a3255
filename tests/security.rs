//! What ibench exposes and what it may destroy, tried the way another local user (`nobody`),
//! the host DBMS's own account (`postgres`, `mysql`) or a careless user would: a managed
//! server is reachable by ibench alone (never root nor the host DBMS's account, no login
//! without the run's password, file export limited to a private directory, the password in
//! no artifact), and ibench never drops a table it did not create.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use ibench::results::model::RunResult;

use crate::common::{
    Bench, Kept, LocalService, ci, have, have_files, kept_password, open_db, path_str,
    processes_with, server_bench,
};

/// Whether this test can act as another user (`runuser` as root); in CI it must.
pub fn can_switch_user() -> bool {
    let root = nix::unistd::Uid::effective().is_root();
    let runuser = Path::new("/usr/sbin/runuser").exists() || Path::new("/sbin/runuser").exists();
    if root && runuser {
        return true;
    }
    assert!(
        !ci(),
        "the security tests run as root (to act as user nobody with runuser); run them as root"
    );
    crate::common::skip("not root: cannot act as another user");
    false
}

/// The account managed servers run as when ibench runs as root.
const SERVER_ACCOUNT: &str = "ibench-server";

/// Runs `program args` as user `nobody`; returns (success, stdout + stderr).
pub fn as_nobody(program: &str, args: &[&str]) -> (bool, String) {
    as_user("nobody", program, args)
}

/// Runs `program args` as `user`; returns (success, stdout + stderr).
fn as_user(user: &str, program: &str, args: &[&str]) -> (bool, String) {
    let out = Command::new("runuser")
        .args(["-u", user, "--", program])
        .args(args)
        .env_remove("PGPASSWORD")
        .env_remove("MYSQL_PWD")
        .current_dir("/")
        .output()
        .expect("runuser");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The uid a process runs as.
fn uid_of(pid: u32) -> u32 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("Uid line")
}

/// Every file under `dir` that holds `needle`, except `allowed` names.
fn files_containing(dir: &Path, needle: &str, allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                // The data directory holds the server's own files (its password hash).
                if name != "data" {
                    stack.push(p);
                }
            } else if !allowed.contains(&name.as_str())
                && fs::read(&p)
                    .map(|b| String::from_utf8_lossy(&b).contains(needle))
                    .unwrap_or(false)
            {
                found.push(p.display().to_string());
            }
        }
    }
    found
}

/// The uid of account `name`, which must exist.
fn uid_named(name: &str) -> u32 {
    nix::unistd::User::from_name(name)
        .unwrap()
        .unwrap_or_else(|| panic!("no account {name}"))
        .uid
        .as_raw()
}

/// `pid` and every process descending from it.
fn process_tree(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            // pid (comm) state ppid ...: comm may hold spaces and parentheses.
            let ppid = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((p, ppid))
        })
        .collect();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    tree
}

/// Every file and directory under `dir` (itself included, symlinks not followed) whose
/// owner is not `uid`, except those named in `allowed`.
fn not_owned_by(dir: &Path, uid: u32, allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = fs::symlink_metadata(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if meta.uid() != uid && !allowed.contains(&name.as_str()) {
            found.push(format!("{} (uid {})", p.display(), meta.uid()));
        }
        if meta.is_dir() {
            stack.extend(fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
        }
    }
    found
}

/// The uid of the PgBouncer the running `child` started (its ini is under `out`).
fn pgbouncer_uid(child: &crate::common::Running, out: &Path) -> u32 {
    loop {
        let found = processes_with(path_str(out)).into_iter().find(|p| {
            fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("pgbouncer.ini"))
        });
        if let Some(pid) = found {
            return uid_of(pid);
        }
        assert!(
            child.elapsed() < std::time::Duration::from_secs(90),
            "pgbouncer never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// As `user`: listing a server's `dir`, reading its `config`, appending a `trust` line to it
/// and replacing it all fail with Permission denied.
fn assert_cannot_reach(user: &str, dir: &Path, config: &Path) {
    let (config, dir) = (path_str(config), path_str(dir));
    let append = format!("echo 'host all all 127.0.0.1/32 trust' >> {config}");
    for (what, program, args) in [
        ("list the directory", "ls", vec![dir]),
        ("read the config", "cat", vec![config]),
        ("append to the config", "sh", vec!["-c", &append]),
        ("replace the config", "cp", vec!["/dev/null", config]),
    ] {
        let (ok, text) = as_user(user, program, &args);
        assert!(!ok, "{user} could {what} ({config}): {text}");
        assert!(text.contains("Permission denied"), "{user}: {text}");
    }
}

/// Starts a managed `server`, kept for the checks.
fn kept_server(bench: &Bench, server: &str) -> (RunResult, Kept, crate::common::Outcome) {
    let out = bench.run(&[
        "--server",
        server,
        "--keep-server",
        "--steps",
        "l.i0",
        "--l0-rows",
        "1000",
    ]);
    let run = out.result();
    let kept = Kept::of(&run, server);
    (run, kept, out)
}

#[test]
fn a_managed_server_is_reachable_by_ibench_alone() {
    if !can_switch_user() {
        return;
    }
    for server in ["postgres", "mariadb"] {
        if !have(server, "") {
            continue;
        }
        let bench = server_bench();
        let (run, kept, out) = kept_server(&bench, server);
        let pid = kept.pid;
        let port = url::Url::parse(&run.environment.dbms.location)
            .unwrap()
            .port()
            .unwrap()
            .to_string();
        // Never root, nor the host DBMS's account: the server runs as the dedicated one.
        assert_ne!(uid_of(pid), 0, "{server} runs as root");
        assert_eq!(uid_of(pid), uid_named(SERVER_ACCOUNT), "{server}'s account");
        let info = run.managed_server.as_ref().unwrap();
        assert_eq!(info.account.as_deref(), Some(SERVER_ACCOUNT));
        // Its directory is private to that account.
        let dir = bench.out().join(format!("{}.server", run.run_id));
        let meta = fs::metadata(&dir).unwrap();
        assert_eq!(
            meta.permissions().mode() & 0o777,
            0o700,
            "{}",
            dir.display()
        );
        assert_eq!(
            meta.uid(),
            uid_of(pid),
            "{} owned by the server",
            dir.display()
        );

        // As another local user, without the password: no login, no file written.
        let planted = format!("/tmp/ibench-security-{server}-{}", std::process::id());
        let _ = fs::remove_file(&planted);
        let (ok, text) = if server == "postgres" {
            as_nobody(
                "psql",
                &[
                    "-w",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &port,
                    "-U",
                    "postgres",
                    "-d",
                    "postgres",
                    "-c",
                    &format!("COPY (SELECT 1) TO PROGRAM 'id > {planted}'"),
                ],
            )
        } else {
            as_nobody(
                "mariadb",
                &[
                    "--protocol=tcp",
                    "-h127.0.0.1",
                    &format!("-P{port}"),
                    "-uroot",
                    "-e",
                    &format!("SELECT 1 INTO OUTFILE '{planted}'"),
                ],
            )
        };
        assert!(!ok, "{server}: nobody logged in: {text}");
        assert!(
            text.contains("password") || text.contains("Access denied"),
            "{server}: refused for want of a password: {text}"
        );
        assert!(
            !Path::new(&planted).exists(),
            "{server}: nobody wrote a file"
        );

        // Even with the password, MariaDB writes files only into its private directory.
        let password = kept_password(&run);
        if server == "mariadb" {
            let mut c = mysql::Conn::new(
                mysql::OptsBuilder::new()
                    .ip_or_hostname(Some("127.0.0.1"))
                    .tcp_port(port.parse().unwrap())
                    .user(Some("root"))
                    .pass(Some(password.clone()))
                    .prefer_socket(false),
            )
            .unwrap();
            use mysql::prelude::Queryable;
            let err = c
                .query_drop(format!("SELECT 1 INTO OUTFILE '{planted}'"))
                .unwrap_err();
            assert!(err.to_string().contains("secure-file-priv"), "{err}");
            let local: Option<String> = c.query_first("SELECT @@local_infile").unwrap();
            assert_eq!(local.as_deref(), Some("0"), "LOAD DATA LOCAL is off");
            // Temporary tables go to a private directory of its own, not the shared /tmp.
            let tmpdir: Option<String> = c.query_first("SELECT @@tmpdir").unwrap();
            let tmpdir = PathBuf::from(tmpdir.unwrap());
            assert!(tmpdir.starts_with(&dir), "{}", tmpdir.display());
            let meta = fs::metadata(&tmpdir).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, 0o700);
            assert_eq!(meta.uid(), uid_of(pid));
        }
        assert!(!Path::new(&planted).exists());

        // The password is in no output, results file, store or log: only in the credentials
        // file, which only the user who ran ibench can read.
        assert!(!out.stdout.contains(&password) && !out.stderr.contains(&password));
        let leaks = files_containing(&bench.out(), &password, &["pgpass", "client.cnf"]);
        assert!(leaks.is_empty(), "{server}: password found in {leaks:?}");
        let credentials = ["pgpass", "client.cnf"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.exists())
            .expect("a credentials file");
        let meta = fs::metadata(&credentials).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.uid(), nix::unistd::Uid::effective().as_raw());
        assert!(
            out.stderr.contains(path_str(&credentials)),
            "the user is told where the credentials are:\n{}",
            out.stderr
        );
        kept.stop();
    }
}

/// The host's own DBMS accounts cannot reach a managed server. On a host whose PostgreSQL
/// trusts 127.0.0.1, any local user can run `COPY ... TO PROGRAM` as `postgres`; when managed
/// servers ran as `postgres` too, that user could then edit their pg_hba.conf. Now the server,
/// every process of it, its pooler and every file in its directory belong to the dedicated
/// account, and `postgres` and `mysql` can neither read nor change any of it.
#[test]
fn a_managed_server_is_out_of_reach_of_the_host_dbms_accounts() {
    if !can_switch_user() {
        return;
    }
    for server in ["postgres", "mariadb"] {
        if !have(server, "") {
            continue;
        }
        let pooler = server == "postgres" && have_files(&["/usr/sbin/pgbouncer"], "pgbouncer");
        let bench = server_bench();
        let mut args = vec![
            "--server",
            server,
            "--keep-server",
            "--steps",
            "l.i0",
            "--l0-rows",
            "200000",
            "--clients",
            "1",
        ];
        if pooler {
            args.extend(["--pooler", "pgbouncer"]);
        }
        let child = bench.spawn(&args);
        let pgbouncer_uid = pooler.then(|| pgbouncer_uid(&child, &bench.out()));
        let out = child.finish(std::time::Duration::from_secs(300));
        let run = out.result();
        let kept = Kept::of(&run, server);
        let account = uid_named(SERVER_ACCOUNT);
        let host_accounts: Vec<&str> = ["postgres", "mysql"]
            .into_iter()
            .filter(|a| nix::unistd::User::from_name(a).ok().flatten().is_some())
            .collect();
        for a in &host_accounts {
            assert_ne!(account, uid_named(a), "{SERVER_ACCOUNT} is {a}");
        }
        assert_ne!(account, 0);
        let tree = process_tree(kept.pid);
        let uids: Vec<(u32, u32)> = tree.iter().map(|p| (*p, uid_of(*p))).collect();
        assert!(
            uids.iter().all(|(_, u)| *u == account),
            "{server}: every process runs as {SERVER_ACCOUNT} ({account}): {uids:?}"
        );
        if let Some(uid) = pgbouncer_uid {
            assert_eq!(uid, account, "pgbouncer runs as {SERVER_ACCOUNT}");
        }

        // Every file of the server is the account's, but the credentials file, the user's.
        let dir = bench.out().join(format!("{}.server", run.run_id));
        let others = not_owned_by(&dir, account, &["pgpass", "client.cnf"]);
        assert!(
            others.is_empty(),
            "{server}: not {SERVER_ACCOUNT}'s: {others:?}"
        );
        let config = if server == "postgres" {
            dir.join("data").join("pg_hba.conf")
        } else {
            dir.join("my.cnf")
        };
        let before = fs::read(&config).unwrap();
        for a in &host_accounts {
            assert_cannot_reach(a, &dir, &config);
        }
        assert_eq!(
            fs::read(&config).unwrap(),
            before,
            "{server}: config changed"
        );
        kept.stop();
    }
}

/// `--server-user` names the account a managed server runs as, recorded with the results;
/// root and accounts that do not exist are refused with one line, exit 2, before anything
/// starts; the host DBMS's account gets a warning.
#[test]
fn the_server_account_can_be_named_but_never_root() {
    let bench = Bench::new();
    let missing = format!("ibench-no-such-account-{}", std::process::id());
    for (name, says) in [
        ("root", "root (uid 0)"),
        (missing.as_str(), "no such account"),
    ] {
        let out = bench.run(&["--server", "postgres", "--server-user", name]);
        assert_eq!(out.code, Some(2), "{}", out.describe());
        let lines: Vec<&str> = out.stderr.lines().filter(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 1, "{}", out.describe());
        assert!(lines[0].starts_with(&format!("error: --server-user {name}: ")));
        assert!(lines[0].contains(says), "{}", lines[0]);
        assert!(!bench.out().exists(), "nothing is written");
    }
    if !can_switch_user() || !have("postgres", "") {
        return;
    }
    // In an experiment, where the account was written.
    let file = bench.path("e.toml");
    let toml =
        "name = \"x\"\n[[target]]\nname = \"p\"\ndbms = \"postgres\"\nserver_user = \"root\"\n";
    fs::write(&file, toml).unwrap();
    let out = bench.run_raw(
        &[
            "experiment",
            path_str(&file),
            "--out",
            path_str(&bench.out()),
        ],
        &[],
    );
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.describe());
    let at = format!(
        "error: {}:5: target p: server_user root: a managed server never runs as root",
        path_str(&file)
    );
    assert!(out.stderr.starts_with(&at), "{}", out.describe());
    // The host DBMS's account: a warning (the run stops at the next bad flag here).
    let out = bench.run(&[
        "--server",
        "postgres",
        "--server-user",
        "postgres",
        "--server-data-root",
        "/nonexistent",
    ]);
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(
        out.stderr.lines().any(|l| l
            .starts_with("warning: --server-user postgres is the account of the host's own DBMS")),
        "{}",
        out.describe()
    );
    // An account of the user's: the server runs as it (created here when missing).
    let name = "ibench-test-server";
    if nix::unistd::User::from_name(name).unwrap().is_none() {
        let made = Command::new("useradd")
            .args(["--system", "--user-group", "--no-create-home", "--shell"])
            .args(["/usr/sbin/nologin", name])
            .status()
            .unwrap();
        assert!(
            made.success() || nix::unistd::User::from_name(name).unwrap().is_some(),
            "useradd {name}: {made}"
        );
    }
    let bench = server_bench();
    let (run, kept) = bench.keep_server(
        "postgres",
        &["--server-user", name, "--steps", "l.i0", "--l0-rows", "500"],
    );
    assert_eq!(uid_of(kept.pid), uid_named(name));
    let info = run.managed_server.as_ref().unwrap();
    assert_eq!(info.account.as_deref(), Some(name));
    let spec = run.config.server.as_ref().unwrap();
    assert_eq!(spec.user.as_deref(), Some(name));
    let dir = bench.out().join(format!("{}.server", run.run_id));
    assert!(not_owned_by(&dir, uid_named(name), &["pgpass"]).is_empty());
    kept.stop();
}

#[test]
fn a_table_ibench_did_not_create_is_never_dropped() {
    let bench = Bench::new();
    let db = bench.db();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE pi1 (id INTEGER PRIMARY KEY, note TEXT); \
             INSERT INTO pi1 VALUES (1, 'mine');",
        )
        .unwrap();
    }
    let load = [
        "--path",
        path_str(&db),
        "--steps",
        "l.i0",
        "--l0-rows",
        "500",
    ];
    let out = bench.run(&[&load[..], &["--clients", "1"]].concat());
    assert_eq!(out.code, Some(2), "{}", out.describe());
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap();
    assert!(
        line.contains("pi1") && line.contains("--drop-existing"),
        "{line}"
    );
    let note: String = open_db(&db)
        .query_row("SELECT note FROM pi1 WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(note, "mine", "the table is untouched");
    // Told so, ibench replaces it; a table it created it replaces without being told.
    let args = [&load[..], &["--clients", "1", "--drop-existing"]].concat();
    bench.run(&args).result();
    bench
        .run(&[&load[..], &["--clients", "1"]].concat())
        .result();

    // sysbench's tables (or anyone's) are not prepared over either.
    let micro_db = bench.path("micro.db");
    rusqlite::Connection::open(&micro_db)
        .unwrap()
        .execute_batch("CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER)")
        .unwrap();
    let out = bench.run_raw(
        &["micro", "--out", path_str(&bench.out()), "-q"],
        &[
            "--path",
            path_str(&micro_db),
            "--tables",
            "1",
            "--table-rows",
            "100",
            "--clients",
            "1",
            "--seconds",
            "1",
        ],
    );
    assert_eq!(out.code, Some(2), "{}", out.describe());
    assert!(out.stderr.contains("sbtest1"), "{}", out.describe());
}

#[test]
fn a_table_ibench_did_not_create_on_a_server_is_never_dropped() {
    let prefix = format!("zzsec{}_", std::process::id());
    let table = format!("{prefix}1");
    for service in LocalService::reachable() {
        let (server, url) = (service.server, service.url);
        let exec = |sql: &str| service.exec(sql);
        let count = || service.row(&format!("SELECT count(*) FROM {table}"))[0];
        exec(&format!("DROP TABLE IF EXISTS {table}"));
        exec(&format!(
            "CREATE TABLE {table} (id int PRIMARY KEY, note varchar(10))"
        ));
        exec(&format!("INSERT INTO {table} VALUES (1, 'mine')"));
        let bench = Bench::new();
        let out = bench.run(&[
            "--url",
            url,
            "--table-prefix",
            &prefix,
            "--clients",
            "1",
            "--steps",
            "l.i0",
            "--l0-rows",
            "200",
        ]);
        assert_eq!(out.code, Some(2), "{server}: {}", out.describe());
        assert!(out.stderr.contains(&table), "{}", out.describe());
        assert_eq!(count(), 1, "{server}: the table is untouched");
        exec(&format!("DROP TABLE {table}"));
    }
}

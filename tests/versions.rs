//! Studies across versions: `ibench server install postgres 13` from the npm registry (one
//! small major, in a cache shared by the test runs on this machine), the installed build's
//! soname links and its server run by the test itself, `server list` and `remove`; a tiny
//! experiment of PostgreSQL 13 (installed) against 15 (Debian's) whose report has the versions
//! as columns in version order, relative to the base version as the test computes from the
//! runs, and the perf-over-time chart. And what must not install: a tarball whose sha512 is
//! not the published one (from a registry the test serves), an unknown major, an unreachable
//! registry.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use ibench::results::model::RunResult;

use crate::common::{Bench, have, ibench, json_files, path_str, server_bench};

/// The cache the tests install into: kept between runs, so one download serves them all.
fn cache() -> PathBuf {
    let dir = std::env::temp_dir().join("ibench-test-servers");
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// `ibench <args>` with the test cache, in `bench`'s directory.
fn server_cmd(bench: &Bench, cache: &Path, args: &[&str]) -> std::process::Output {
    ibench()
        .args(args)
        .env("IBENCH_SERVER_CACHE", cache)
        .current_dir(bench.path(""))
        .output()
        .unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Installs PostgreSQL 13 (or finds it installed); returns its directory.
fn install_13(bench: &Bench) -> PathBuf {
    let o = server_cmd(bench, &cache(), &["server", "install", "postgres", "13"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("postgres 13.")
            && (out.contains(" installed (build 13.") || out.contains("already installed")),
        "{out}"
    );
    let bin = out.trim().rsplit(": ").next().unwrap();
    PathBuf::from(bin).parent().unwrap().to_path_buf()
}

#[test]
fn installed_postgres_13_against_15_is_a_versions_study() {
    if !have("postgres", "") {
        return;
    }
    let bench = server_bench();
    let dir = install_13(&bench);
    // The tarball drops symlinks: every versioned library has the link its soname asks for,
    // and the server runs with them.
    let lib = dir.join("lib");
    for name in [
        "libicui18n.so.60",
        "libicuuc.so.60",
        "libicudata.so.60",
        "libpq.so.5",
    ] {
        let link = lib.join(name);
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{name}"
        );
        assert!(link.exists(), "{name} points at a file");
    }
    let v = Command::new(dir.join("bin/postgres"))
        .arg("--version")
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&v.stdout);
    assert!(
        version.starts_with("postgres (PostgreSQL) 13."),
        "{version}"
    );
    let list = server_cmd(&bench, &cache(), &["server", "list"]);
    assert!(list.status.success());
    assert!(
        String::from_utf8_lossy(&list.stdout).contains(path_str(&dir.join("bin"))),
        "{}",
        text(&list)
    );

    // The study: 13 from the cache, 15 from Debian, 13 the base.
    let file = bench.path("versions.toml");
    fs::write(
        &file,
        r#"name = "versions"
base = "pg15/default/glibc/default"
[workload]
steps = "l.i0,qp100"
clients = 1
rows_per_client = 3000
query_seconds = 2
[[target]]
name = "pg15"
dbms = "postgres"
version = "15"
[[target]]
name = "pg13"
dbms = "postgres"
version = "13"
"#,
    )
    .unwrap();
    let out = bench.out();
    let o = ibench()
        .args(["experiment", path_str(&file), "--out", path_str(&out), "-q"])
        .env("IBENCH_SERVER_CACHE", cache())
        .current_dir(bench.path(""))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let runs: Vec<RunResult> = json_files(&out)
        .iter()
        .filter_map(|p| ibench::results::file::load(p).ok())
        .collect();
    let run_of = |major: &str| {
        runs.iter()
            .find(|r| {
                r.environment
                    .dbms
                    .version
                    .starts_with(&format!("PostgreSQL {major}."))
            })
            .unwrap_or_else(|| panic!("a run of PostgreSQL {major}"))
    };
    let (r13, r15) = (run_of("13"), run_of("15"));
    assert!(
        r13.managed_server
            .as_ref()
            .unwrap()
            .binary
            .starts_with(path_str(&dir)),
        "13 ran from the cache"
    );
    let short =
        |r: &RunResult| ibench::report::versions::short_version(&r.environment.dbms.version);
    let (v13, v15) = (short(r13), short(r15));
    let md = fs::read_to_string(out.join("report.md")).unwrap();
    let start = md
        .find("## Throughput across versions")
        .expect("versions section");
    let section = &md[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    // Columns in version order (13 first), though 15 is the base.
    assert!(
        section.contains(&format!("| step | {v13} | {v15} |")),
        "{section}"
    );
    let qps = |r: &RunResult| {
        r.steps
            .iter()
            .find(|s| s.name == "qp100")
            .unwrap()
            .queries_per_s
    };
    let ins = |r: &RunResult| r.steps[0].inserts_per_s;
    let rel = |a: f64, b: f64| {
        let r = a / b;
        let t = format!("{r:.2}");
        if (0.95..=1.05).contains(&r) {
            t
        } else {
            format!("**{t}**")
        }
    };
    for row in [
        format!("| l.i0 ins/s | {} | 1.00 |", rel(ins(r13), ins(r15))),
        format!("| qp100 q/s | {} | 1.00 |", rel(qps(r13), qps(r15))),
    ] {
        assert!(section.contains(&row), "{row}\n{section}");
    }
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    let chart = &html[html.find("id=\"versions\"").unwrap()..];
    assert!(
        chart.contains("throughput relative to the base version") && chart.contains("<polyline"),
        "the perf-over-time chart"
    );

    // The study's history over versions: 13 before 15, whichever ran first.
    let h = ibench()
        .args([
            "history", "versions", "--order", "version", "--format", "json",
        ])
        .args(["--results", path_str(&out.join("results.db"))])
        .output()
        .unwrap();
    assert!(h.status.success(), "{}", text(&h));
    let h: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    let keys: Vec<&str> = h["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert!(
        keys.len() == 2 && keys[0].starts_with("13.") && keys[1].starts_with("15."),
        "{keys:?}"
    );
    assert_eq!(h["runs"][0]["id"], r13.run_id.as_str());

    // Removing: from a cache holding a (hard-linked) copy, leaving the shared one alone.
    let other = bench.path("cache2");
    fs::create_dir_all(&other).unwrap();
    let copy = other.join(dir.file_name().unwrap());
    assert!(
        Command::new("cp")
            .args(["-al", path_str(&dir), path_str(&copy)])
            .status()
            .unwrap()
            .success()
    );
    let o = server_cmd(&bench, &other, &["server", "remove", "postgres", "13"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!copy.exists() && dir.exists());
    let o = server_cmd(&bench, &other, &["server", "remove", "postgres", "13"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// Serves the routes `routes(port)` gives (path -> body) over HTTP on 127.0.0.1 until
/// `requests` were answered; unknown paths get 404.
fn serve(
    routes: impl FnOnce(u16) -> Vec<(String, Vec<u8>)>,
    requests: usize,
) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let routes = routes(port);
    let handle = std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut s = stream.unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = req.split_whitespace().nth(1).unwrap_or("").to_string();
            let (status, body) = match routes.iter().find(|(p, _)| p.eq_ignore_ascii_case(&path)) {
                Some((_, b)) => ("200 OK", b.clone()),
                None => ("404 Not Found", Vec::new()),
            };
            let _ = s.write_all(
                format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            );
            let _ = s.write_all(&body);
        }
    });
    (port, handle)
}

const DOCUMENT: &str = "/@embedded-postgres%2flinux-x64";

#[test]
fn nothing_installs_that_cannot_be_checked_or_reached() {
    use base64::Engine;
    use sha2::Digest;
    let bench = Bench::new();
    let cache = bench.path("cache");
    // A registry whose tarball is not what it publishes.
    let published = sha2::Sha512::digest(b"the published tarball");
    let (port, server) = serve(
        |port| {
            let doc = serde_json::json!({
                "versions": {
                    "13.99.0-beta.1": { "dist": {
                        "tarball": format!("http://127.0.0.1:{port}/t.tgz"),
                        "integrity": format!("sha512-{}",
                            base64::engine::general_purpose::STANDARD.encode(published)),
                    }}
                }
            });
            vec![
                (DOCUMENT.to_string(), doc.to_string().into_bytes()),
                ("/t.tgz".to_string(), b"not the published tarball".to_vec()),
            ]
        },
        2,
    );
    let run = |registry: &str, args: &[&str]| {
        ibench()
            .args(args)
            .env("IBENCH_SERVER_CACHE", &cache)
            .env("IBENCH_NPM_REGISTRY", registry)
            .output()
            .unwrap()
    };
    let o = run(
        &format!("http://127.0.0.1:{port}"),
        &["server", "install", "postgres", "13"],
    );
    server.join().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does not match the registry's sha512"),
        "{}",
        text(&o)
    );
    let left: Vec<_> = fs::read_dir(&cache).unwrap().flatten().collect();
    assert!(left.is_empty(), "nothing left in the cache: {left:?}");

    // No such major: the majors there are listed.
    let (port, server) = serve(
        |_| {
            vec![(
                DOCUMENT.to_string(),
                br#"{"versions":{"16.1.0-beta.1":{"dist":{"tarball":"x"}}}}"#.to_vec(),
            )]
        },
        1,
    );
    let o = run(
        &format!("http://127.0.0.1:{port}"),
        &["server", "install", "postgres", "9"],
    );
    server.join().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("majors there: 16"),
        "{}",
        text(&o)
    );

    // A registry that cannot be reached: one line, exit 1.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = run(
        &format!("http://127.0.0.1:{closed}"),
        &["server", "install", "postgres", "13"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot reach the npm registry"), "{err}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "one line: {err}"
    );
    // Not a server ibench installs.
    let o = run(
        "http://127.0.0.1:1",
        &["server", "install", "mariadb", "10"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

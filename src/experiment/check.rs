//! Asks the DBMS itself whether it knows every setting of a configuration, before any cell
//! runs: `mariadbd --help --verbose` with the generated option file (it names every unknown
//! variable and bad value, and loads MyRocks first when the engine is rocksdb), `postgres -C`
//! on a scratch data directory (one `initdb` per binary directory; it names unknown
//! parameters and invalid values), and SQLite's `pragma_list`. MyRocks column family option
//! strings are parsed by RocksDB only when it starts, so a config that sets them is started
//! once on a throwaway server. Each problem points at the
//! line where the setting was written.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::model::Problem;
use super::plan::{Located, ServerCheck, normalize};
use crate::server::{ServerKind, find_binary};

/// Every problem the servers report with the plan's configurations.
pub fn servers(checks: &[ServerCheck]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut pg_dirs: Vec<(Option<PathBuf>, Result<PgScratch, Problem>)> = Vec::new();
    let mut cf_started: Vec<String> = Vec::new();
    for check in checks {
        let found = match check.server.kind {
            ServerKind::Mariadb => {
                let mut found = mariadb(check);
                if found.is_empty() {
                    found = myrocks_cf_options(check, &mut cf_started);
                }
                found
            }
            ServerKind::Postgres => {
                let bin = check.server.bin_dir.clone();
                if !pg_dirs.iter().any(|(b, _)| *b == bin) {
                    pg_dirs.push((bin.clone(), PgScratch::create(check)));
                }
                match &pg_dirs
                    .iter()
                    .find(|(b, _)| *b == bin)
                    .expect("just added")
                    .1
                {
                    Ok(scratch) => scratch.check(check),
                    Err(p) => vec![p.clone()],
                }
            }
        };
        for p in found {
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
    }
    problems
}

/// The pragma names this build's SQLite knows (`pragma_list`); `None` when it cannot tell.
pub fn sqlite_pragmas() -> Option<Vec<String>> {
    let conn = rusqlite::Connection::open_in_memory().ok()?;
    let mut stmt = conn.prepare("SELECT name FROM pragma_pragma_list").ok()?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .ok()?
        .collect::<rusqlite::Result<Vec<_>>>()
        .ok()?;
    (!names.is_empty()).then_some(names)
}

/// The location of the last definition of `name` in `check`, else the config's.
fn locate(check: &ServerCheck, name: &str) -> String {
    let n = normalize(name);
    check
        .settings
        .iter()
        .rev()
        .find(|l: &&Located| normalize(&l.key) == n)
        .map(|l| l.at.clone())
        .unwrap_or_else(|| check.at.clone())
}

fn is_root() -> bool {
    nix::unistd::Uid::effective().is_root()
}

/// The text between the first pair of `'` after `marker` in `line`.
fn quoted_after<'a>(line: &'a str, marker: &str, quote: char) -> Option<&'a str> {
    let rest = &line[line.find(marker)? + marker.len()..];
    let start = rest.find(quote)? + 1;
    let end = rest[start..].find(quote)? + start;
    Some(&rest[start..end])
}

/// The variable a `mariadbd` error line is about.
fn mariadb_error_name(line: &str) -> Option<String> {
    if let Some(v) = quoted_after(line, "unknown variable", '\'') {
        return Some(v.split('=').next().unwrap_or(v).to_string());
    }
    if let Some(v) = quoted_after(line, "unknown option", '\'') {
        return Some(v.trim_start_matches("--").to_string());
    }
    if let Some(v) = quoted_after(line, "for variable", '\'') {
        return Some(v.to_string());
    }
    if line.contains("Error while setting value") {
        // ... value 'V' to 'NAME'
        let i = line.rfind(" to '")?;
        return quoted_after(&line[i..], " to", '\'').map(str::to_string);
    }
    None
}

fn mariadb(check: &ServerCheck) -> Vec<Problem> {
    let s = &check.server;
    let candidates = [
        PathBuf::from("/usr/sbin/mariadbd"),
        PathBuf::from("/usr/sbin/mysqld"),
    ];
    let Ok(mariadbd) = find_binary("mariadbd", s.bin_dir.as_deref(), &candidates) else {
        return Vec::new(); // reported by the plan
    };
    let mut cnf = String::from("[mysqld]\n");
    if s.engine == crate::dbms::mysql::Engine::Rocksdb {
        cnf.push_str("plugin-load-add = ha_rocksdb.so\n");
    }
    if let Some(text) = &s.config_text {
        cnf.push_str(text);
        cnf.push_str("\n[mysqld]\n");
    }
    for (k, v) in &s.options {
        cnf.push_str(&format!("{k} = {v}\n"));
    }
    let dir = std::env::temp_dir().join(format!("ibench-check-{}", std::process::id()));
    let _ = fs::create_dir_all(&dir);
    let path = dir.join("my.cnf");
    if let Err(e) = fs::write(&path, &cnf) {
        return vec![Problem {
            at: check.at.clone(),
            message: format!("cannot write {}: {e}", path.display()),
        }];
    }
    let mut cmd = Command::new(&mariadbd);
    cmd.arg(format!("--defaults-file={}", path.display()));
    if is_root() {
        cmd.arg("--user=root");
    }
    let out = cmd
        .args(["--help", "--verbose"])
        .stdin(Stdio::null())
        .output();
    let _ = fs::remove_dir_all(&dir);
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            return vec![Problem {
                at: check.at.clone(),
                message: format!("cannot run {}: {e}", mariadbd.display()),
            }];
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    let mut named = Vec::new();
    for line in stderr.lines().filter(|l| l.contains("[ERROR]")) {
        let text = line[line.find("[ERROR]").unwrap_or(0) + 7..].trim();
        let text = text
            .strip_prefix(&format!("{}: ", mariadbd.display()))
            .unwrap_or(text);
        match mariadb_error_name(line) {
            Some(name) => {
                let n = normalize(&name);
                if named.contains(&n) {
                    continue;
                }
                named.push(n.clone());
                problems.push(Problem {
                    at: locate(check, &name),
                    message: format!("mariadb rejects setting {n}: {text}"),
                });
            }
            None if text.starts_with("Parsing options for plugin") || text == "Aborting" => {}
            None => problems.push(Problem {
                at: check.at.clone(),
                message: format!("mariadb: {text}"),
            }),
        }
    }
    if problems.is_empty() && !out.status.success() {
        let last = stderr
            .lines()
            .last()
            .unwrap_or("no output")
            .trim()
            .to_string();
        problems.push(Problem {
            at: check.at.clone(),
            message: format!(
                "{} --help --verbose with this config failed ({}): {last}",
                mariadbd.display(),
                out.status
            ),
        });
    }
    problems
}

/// Column family option strings of MyRocks, which RocksDB parses only when it starts.
const CF_OPTIONS: &[&str] = &["rocksdb_default_cf_options", "rocksdb_override_cf_options"];

/// Starts a throwaway MariaDB with the config's MyRocks column family option strings (once per
/// binary directory and strings) and reports what RocksDB said about them.
fn myrocks_cf_options(check: &ServerCheck, started: &mut Vec<String>) -> Vec<Problem> {
    use crate::dbms::mysql::Engine;
    let s = &check.server;
    let cf: Vec<(String, String)> = s
        .options
        .iter()
        .filter(|(k, _)| CF_OPTIONS.contains(&normalize(k).as_str()))
        .cloned()
        .collect();
    let in_fragment = s.config_text.as_deref().is_some_and(|t| {
        t.lines().any(|l| {
            CF_OPTIONS
                .iter()
                .any(|o| normalize(l.trim()).starts_with(o))
        })
    });
    if s.engine != Engine::Rocksdb || (cf.is_empty() && !in_fragment) {
        return Vec::new();
    }
    let key = format!(
        "{:?}|{:?}|{:?}",
        s.bin_dir,
        cf,
        in_fragment.then_some(&s.config_text)
    );
    if started.contains(&key) {
        return Vec::new();
    }
    started.push(key);
    let spec = crate::spec::ServerSpec {
        config_text: if in_fragment {
            s.config_text.clone()
        } else {
            None
        },
        options: cf,
        keep: false,
        malloc: crate::spec::Malloc::Glibc,
        ..s.clone()
    };
    let dir = std::env::temp_dir().join(format!(
        "ibench-check-cf-{}-{}",
        std::process::id(),
        started.len()
    ));
    let _ = fs::remove_dir_all(&dir);
    let result = crate::server::ManagedServer::start(&spec, &dir);
    let log = fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    drop(result); // stops the server
    let _ = fs::remove_dir_all(&dir);
    let mut problems = Vec::new();
    for line in log.lines() {
        let t = line.trim();
        let which = if t.starts_with("Invalid default column family config") {
            "rocksdb_default_cf_options"
        } else if t.starts_with("Invalid override") || t.contains("override_cf_options") {
            "rocksdb_override_cf_options"
        } else {
            continue;
        };
        let p = Problem {
            at: locate(check, which),
            message: format!("MyRocks rejects {which}: {t}"),
        };
        if !problems.contains(&p) {
            problems.push(p);
        }
    }
    problems
}

/// A data directory from `initdb`, used only to let `postgres -C` read configurations.
struct PgScratch {
    dir: PathBuf,
    postgres: PathBuf,
    original_conf: String,
    user: Option<nix::unistd::User>,
}

impl Drop for PgScratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn pg_candidates(name: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((major, e.path().join("bin").join(name)))
        })
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
    dirs.into_iter().map(|(_, d)| d).collect()
}

impl PgScratch {
    fn create(check: &ServerCheck) -> Result<PgScratch, Problem> {
        let fail = |message: String| Problem {
            at: check.at.clone(),
            message,
        };
        let bin = check.server.bin_dir.as_deref();
        let initdb = find_binary("initdb", bin, &pg_candidates("initdb"))
            .map_err(|e| fail(e.to_string()))?;
        let postgres = find_binary("postgres", bin, &pg_candidates("postgres"))
            .map_err(|e| fail(e.to_string()))?;
        let user = if is_root() {
            match nix::unistd::User::from_name("postgres") {
                Ok(Some(u)) => Some(u),
                _ => {
                    return Err(fail(
                        "PostgreSQL cannot run as root and there is no 'postgres' user".to_string(),
                    ));
                }
            }
        } else {
            None
        };
        let dir = std::env::temp_dir().join(format!(
            "ibench-check-pg-{}-{}",
            std::process::id(),
            crate::server::free_port().unwrap_or(0)
        ));
        fs::create_dir_all(&dir)
            .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        let _ = fs::set_permissions(&dir, fs::Permissions::from_mode(0o755));
        if let Some(u) = &user {
            let _ = nix::unistd::chown(&dir, Some(u.uid), Some(u.gid));
        }
        let mut scratch = PgScratch {
            dir: dir.clone(),
            postgres,
            original_conf: String::new(),
            user,
        };
        let mut cmd = Command::new(&initdb);
        cmd.arg("-D").arg(dir.join("data")).args([
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "--locale=C",
        ]);
        scratch.as_user(&mut cmd);
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .map_err(|e| fail(format!("cannot run {}: {e}", initdb.display())))?;
        if !out.status.success() {
            return Err(fail(format!(
                "initdb (to check the PostgreSQL settings) failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            )));
        }
        scratch.original_conf = fs::read_to_string(scratch.conf())
            .map_err(|e| fail(format!("cannot read postgresql.conf: {e}")))?;
        Ok(scratch)
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("data").join("postgresql.conf")
    }

    fn as_user(&self, cmd: &mut Command) {
        if let Some(u) = &self.user {
            cmd.uid(u.uid.as_raw()).gid(u.gid.as_raw());
        }
    }

    fn check(&self, check: &ServerCheck) -> Vec<Problem> {
        let s = &check.server;
        let mut conf = self.original_conf.clone();
        if let Some(text) = &s.config_text {
            conf.push('\n');
            conf.push_str(text);
            conf.push('\n');
        }
        for (k, v) in &s.options {
            conf.push_str(&format!("{k} = {v}\n"));
        }
        if let Err(e) = fs::write(self.conf(), conf) {
            return vec![Problem {
                at: check.at.clone(),
                message: format!("cannot write {}: {e}", self.conf().display()),
            }];
        }
        let mut cmd = Command::new(&self.postgres);
        cmd.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-C", "server_version"]);
        self.as_user(&mut cmd);
        let out = match cmd.stdin(Stdio::null()).output() {
            Ok(o) => o,
            Err(e) => {
                return vec![Problem {
                    at: check.at.clone(),
                    message: format!("cannot run {}: {e}", self.postgres.display()),
                }];
            }
        };
        if out.status.success() {
            return Vec::new();
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut problems: Vec<Problem> = Vec::new();
        for line in stderr.lines() {
            let Some(i) = line.find("LOG:") else { continue };
            let text = line[i + 4..].trim();
            let Some(name) = quoted_after(text, "parameter", '"') else {
                continue;
            };
            let text = match text.find(" in file \"") {
                Some(j) => &text[..j],
                None => text,
            };
            let p = Problem {
                at: locate(check, name),
                message: format!("postgres rejects setting {name}: {text}"),
            };
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
        if problems.is_empty() {
            let last = stderr
                .lines()
                .last()
                .unwrap_or("no output")
                .trim()
                .to_string();
            problems.push(Problem {
                at: check.at.clone(),
                message: format!(
                    "postgres -C with this config failed ({}): {last}",
                    out.status
                ),
            });
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_error_lines_name_their_variable() {
        let l =
            "2026-11-22  4:30:07 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'rocksdb-foo=1'";
        assert_eq!(mariadb_error_name(l).as_deref(), Some("rocksdb-foo"));
        let l = "0 [ERROR] Unknown suffix 'x' used for variable 'rocksdb-block-cache-size' (value '12x').";
        assert_eq!(
            mariadb_error_name(l).as_deref(),
            Some("rocksdb-block-cache-size")
        );
        let l = "0 [ERROR] /usr/sbin/mariadbd: Error while setting value 'abc' to 'innodb-buffer-pool-size'";
        assert_eq!(
            mariadb_error_name(l).as_deref(),
            Some("innodb-buffer-pool-size")
        );
        assert_eq!(mariadb_error_name("0 [ERROR] Aborting"), None);
    }
}

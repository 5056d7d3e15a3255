//! A throwaway MariaDB: `mariadb-install-db` into a fresh data directory, a generated my.cnf
//! (`--defaults-file`, so no system config leaks in), `mariadbd` on a free port. An init file
//! (read before the server accepts connections, then removed) gives root a random password
//! and removes every other account that could log in; file import and export are limited to
//! a private directory (`secure_file_priv`), `LOAD DATA LOCAL` is off, and the Unix socket is
//! in a directory only the server's account can enter. MyRocks is loaded at start with
//! `--plugin-load-add=ha_rocksdb.so` (installing it at runtime with INSTALL SONAME crashes
//! MariaDB 10.11).
//!
//! Settings are checked with `mariadbd --help --verbose` on the generated option file (it
//! names every unknown variable and bad value); MyRocks column family option strings are
//! parsed by RocksDB only when it starts, so a config that sets them is started once.
//!
//! This file is the family: its `ServerFamily` methods, the settings check and MyRocks'
//! plugin. Starting one server (my.cnf, install, `mariadbd`, root's login) is `node.rs`,
//! which the family, its binlog replicas and its Galera nodes (`server/replicas/`) call.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Result;

use super::check::{normalize, quoted_after};
use super::process::write_private_file;
use super::{
    Binaries, ManagedServer, ServerFamily, SettingProblem, SettingsCheck, StartContext,
};
use crate::dbms::mysql::{Engine, MysqlParams};
use crate::dbms::{DbmsKind, Params};
use crate::request::{Malloc, ServerSpec};

pub(super) mod node;

use node::{Node, start_node};
pub use node::{MARIADB, MariadbFamily};
pub(crate) use node::root_opts;

/// Where Debian's mariadb-plugin-rocksdb puts the plugin.
pub const PLUGIN_DIRS: &[&str] = &[
    "/usr/lib/mysql/plugin",
    "/usr/lib/x86_64-linux-gnu/mariadb19/plugin",
];

/// The Debian package of MyRocks, MariaDB's RocksDB engine.
pub const ROCKSDB_PACKAGE: &str = "mariadb-plugin-rocksdb";

/// MyRocks' plugin (`ha_rocksdb.so`) in MariaDB's plugin directories ([`PLUGIN_DIRS`]).
pub fn rocksdb_plugin() -> Option<PathBuf> {
    PLUGIN_DIRS
        .iter()
        .map(|d| Path::new(d).join("ha_rocksdb.so"))
        .find(|p| crate::hide::exists(p))
}

impl ServerFamily for MariadbFamily {
    fn dbms(&self) -> DbmsKind {
        DbmsKind::of(&crate::dbms::mysql::MYSQL)
    }

    fn binaries(&self) -> [&'static str; 2] {
        ["mariadb-install-db", "mariadbd"]
    }

    fn debian_packages(&self) -> &'static str {
        "mariadb-server"
    }

    fn default_bin_dirs(&self) -> Vec<PathBuf> {
        vec![PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")]
    }

    fn check_params(&self, params: &Params) -> Result<(), String> {
        if MysqlParams::of(params).engine != Engine::Rocksdb {
            return Ok(());
        }
        match rocksdb_plugin() {
            Some(_) => Ok(()),
            None => Err(format!(
                "engine rocksdb needs ha_rocksdb.so (not found in {}); install it (apt-get \
                 install {ROCKSDB_PACKAGE})",
                PLUGIN_DIRS.join(", ")
            )),
        }
    }

    fn replication(&self) -> Option<super::Replication> {
        Some(super::Replication {
            name: "semi-synchronous replication",
            max_sync: 1,
        })
    }

    fn start_replicas(
        &self,
        primary: &ManagedServer,
        ctx: &StartContext<'_>,
        spec: &crate::request::ReplicaSpec,
    ) -> Result<Vec<ManagedServer>> {
        super::replicas::mariadb::start(primary, ctx, spec)
    }

    fn start(&self, ctx: &StartContext<'_>) -> Result<ManagedServer> {
        if let Some(g) = &ctx.spec.galera {
            return super::replicas::galera::start(ctx, g);
        }
        start_node(ctx, Node::Own)
    }

    fn credentials_file(&self, server: &ManagedServer) -> Result<String> {
        let url = server.url.url();
        let port = url.port().unwrap_or(3306);
        let path = server.dir.join("client.cnf");
        let password = server.url.password().unwrap_or_default();
        write_private_file(
            &path,
            &format!(
                "[client]\nuser = root\npassword = {password}\nhost = 127.0.0.1\nport = {port}\n\
                 protocol = tcp\n"
            ),
            None,
        )?;
        Ok(format!(
            "connect with: mariadb --defaults-extra-file={} ibench (readable by you only)",
            path.display()
        ))
    }

    fn check_settings(&self, checks: &[&SettingsCheck]) -> Vec<SettingProblem> {
        let mut problems = Vec::new();
        let mut cf_started = Vec::new();
        for check in checks {
            let mut found = help_verbose(check);
            if found.is_empty() {
                found = myrocks_cf_options(check, &mut cf_started);
            }
            for p in found {
                if !problems.contains(&p) {
                    problems.push(p);
                }
            }
        }
        problems
    }
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

/// `mariadbd --help --verbose` with the configuration: it parses every option (loading
/// MyRocks first when the engine is rocksdb) without starting a server.
fn help_verbose(check: &SettingsCheck) -> Vec<SettingProblem> {
    let s = &check.server;
    let Ok(binaries) = Binaries::locate(&MARIADB, s.bin_dir.as_deref(), None, "bin_dir") else {
        return Vec::new(); // reported by the plan
    };
    let mariadbd = binaries.server;
    let mut cnf = String::from("[mysqld]\n");
    if MysqlParams::of(&check.params).engine == Engine::Rocksdb {
        cnf.push_str("plugin-load-add = ha_rocksdb.so\n");
    }
    if let Some(text) = &s.config_text {
        cnf.push_str(text);
        cnf.push_str("\n[mysqld]\n");
    }
    for (k, v) in &s.options {
        cnf.push_str(&format!("{k} = {v}\n"));
    }
    // A new private directory of an unpredictable name: nothing planted in /tmp is written.
    let written = crate::safe_fs::private_temp_dir("ibench-check-").and_then(|dir| {
        let path = dir.join("my.cnf");
        std::io::Write::write_all(&mut crate::safe_fs::create_new(&path, 0o600)?, cnf.as_bytes())?;
        Ok((dir, path))
    });
    let (dir, path) = match written {
        Ok(w) => w,
        Err(e) => return vec![check.problem(format!("cannot write a my.cnf in /tmp: {e}"))],
    };
    let mut cmd = Command::new(&mariadbd);
    cmd.arg(format!("--defaults-file={}", path.display()));
    if nix::unistd::Uid::effective().is_root() {
        // Only parses options: no server starts, no file is opened as root.
        cmd.arg("--user=root");
    }
    let out = cmd
        .args(["--help", "--verbose"])
        .stdin(Stdio::null())
        .output();
    let _ = fs::remove_dir_all(&dir);
    let out = match out {
        Ok(o) => o,
        Err(e) => return vec![check.problem(format!("cannot run {}: {e}", mariadbd.display()))],
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
                problems.push(SettingProblem {
                    at: check.locate(&name),
                    message: format!("mariadb rejects setting {n}: {text}"),
                });
            }
            None if text.starts_with("Parsing options for plugin") || text == "Aborting" => {}
            None => problems.push(check.problem(format!("mariadb: {text}"))),
        }
    }
    if problems.is_empty() && !out.status.success() {
        let last = stderr.lines().last().unwrap_or("no output").trim();
        problems.push(check.problem(format!(
            "{} --help --verbose with this config failed ({}): {last}",
            mariadbd.display(),
            out.status
        )));
    }
    problems
}

/// Column family option strings of MyRocks, which RocksDB parses only when it starts.
const CF_OPTIONS: &[&str] = &["rocksdb_default_cf_options", "rocksdb_override_cf_options"];

/// Starts a throwaway MariaDB with the config's MyRocks column family option strings (once per
/// binary directory and strings) and reports what RocksDB said about them.
fn myrocks_cf_options(check: &SettingsCheck, started: &mut Vec<String>) -> Vec<SettingProblem> {
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
    if MysqlParams::of(&check.params).engine != Engine::Rocksdb || (cf.is_empty() && !in_fragment)
    {
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
    let spec = ServerSpec {
        config_text: if in_fragment {
            s.config_text.clone()
        } else {
            None
        },
        options: cf,
        keep: false,
        malloc: Malloc::Glibc,
        ..s.clone()
    };
    // The server's directory and log in a new directory of an unpredictable name, which the
    // server's account may pass through (0711) but nobody else can plant anything in.
    let parent = match crate::safe_fs::private_temp_dir("ibench-check-cf-").and_then(|p| {
        fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o711))?;
        Ok(p)
    }) {
        Ok(p) => p,
        Err(e) => return vec![check.problem(format!("cannot create a directory in /tmp: {e}"))],
    };
    let (dir, log) = (parent.join("server"), parent.join("server.log"));
    let result = ManagedServer::start(&spec, &check.params, &dir, &log, 0, None);
    let text = fs::read_to_string(&log).unwrap_or_default();
    drop(result); // stops the server
    let _ = fs::remove_dir_all(&parent);
    let mut problems = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        let which = if t.starts_with("Invalid default column family config") {
            "rocksdb_default_cf_options"
        } else if t.starts_with("Invalid override") || t.contains("override_cf_options") {
            "rocksdb_override_cf_options"
        } else {
            continue;
        };
        let p = SettingProblem {
            at: check.locate(which),
            message: format!("MyRocks rejects {which}: {t}"),
        };
        if !problems.contains(&p) {
            problems.push(p);
        }
    }
    problems
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

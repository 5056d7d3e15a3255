//! A throwaway PostgreSQL: `initdb` with a random superuser password (SCRAM), settings
//! appended to postgresql.conf, `postgres -D` on 127.0.0.1 without Unix sockets; and
//! `postgres -C` on a scratch data directory to check a configuration's settings.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result};
use nix::sys::signal::Signal;
use nix::unistd::User;

use super::check::quoted_after;
use super::process::{self, push_user_config, run_setup, server_command, write_private_file};

/// PostgreSQL's default `max_connections`.
const DEFAULT_MAX_CONNECTIONS: usize = 100;
use super::{
    Binaries, ManagedServer, ServerFamily, SettingProblem, SettingsCheck, StartContext,
};
use crate::dbms::DbmsKind;
use crate::dbms::url::ServerUrl;
use crate::request::Pooler;

/// The registry's PostgreSQL server family.
pub static POSTGRES: PostgresFamily = PostgresFamily;

/// PostgreSQL's initdb + postgres.
pub struct PostgresFamily;

/// Debian's layout: /usr/lib/postgresql/<major>/bin, newest first.
fn debian_bin_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            Some((major, e.path().join("bin")))
        })
        .collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
    dirs.into_iter().map(|(_, d)| d).collect()
}

impl ServerFamily for PostgresFamily {
    fn dbms(&self) -> DbmsKind {
        DbmsKind::of(&crate::dbms::postgres::POSTGRES)
    }

    fn binaries(&self) -> [&'static str; 2] {
        ["initdb", "postgres"]
    }

    fn debian_packages(&self) -> &'static str {
        "postgresql"
    }

    fn default_bin_dirs(&self) -> Vec<PathBuf> {
        debian_bin_dirs()
    }

    /// Debian's packages, one directory per major, newest first.
    fn system_builds(&self) -> Vec<(String, PathBuf)> {
        debian_bin_dirs()
            .into_iter()
            .filter_map(|dir| {
                let version = super::binaries::binary_version(&dir.join(self.binaries()[1]))?;
                Some((version, dir))
            })
            .collect()
    }

    fn poolers(&self) -> &'static [Pooler] {
        &[Pooler::Pgbouncer]
    }

    /// Debian's /usr/lib/postgresql/<major>/bin, else the newest matching build installed
    /// by `ibench server install` (else Debian's path, which the message names).
    fn bin_dir_for_version(&self, version: &str) -> Option<PathBuf> {
        let major = version.split('.').next().unwrap_or_default();
        let debian = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin"));
        if debian.is_dir()
            && (!version.contains('.')
                || super::binaries::binary_version(&debian.join("postgres"))
                    .is_some_and(|v| super::binaries::version_matches(&v, version)))
        {
            return Some(debian);
        }
        super::install::find("postgres", version)
            .map(|b| b.bin_dir())
            .or(Some(debian))
    }

    /// Simple words and numbers as they are, anything else single-quoted.
    fn config_value(&self, v: &str) -> String {
        let simple = !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'));
        if simple || (v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'')) {
            v.to_string()
        } else {
            format!("'{}'", v.replace('\'', "''"))
        }
    }

    fn replication(&self) -> Option<super::Replication> {
        Some(super::Replication {
            name: "streaming replication",
            max_sync: crate::request::MAX_REPLICAS,
        })
    }

    fn start_replicas(
        &self,
        primary: &ManagedServer,
        ctx: &StartContext<'_>,
        spec: &crate::request::ReplicaSpec,
    ) -> Result<Vec<ManagedServer>> {
        super::replicas::postgres::start(primary, ctx, spec)
    }

    fn start(&self, ctx: &StartContext<'_>) -> Result<ManagedServer> {
        let data = ctx.dir.join("data");
        if !ctx.restored {
            initdb(ctx, &data)?;
        }
        let mut conf = format!(
            "{CONF_MARK}port = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n",
            ctx.port
        );
        if ctx.connections > DEFAULT_MAX_CONNECTIONS {
            // Room for the run's connections (the default is 100; a config may still say).
            conf.push_str(&format!("max_connections = {}\n", ctx.connections));
        }
        if let Some(names) = ctx.spec.replicas.as_ref().and_then(super::replicas::postgres::synchronous_standby_names) {
            conf.push_str(&format!("synchronous_standby_names = '{names}'\n"));
        }
        push_user_config(&mut conf, ctx, "");
        let conf_path = data.join("postgresql.conf");
        let mut existing = fs::read_to_string(&conf_path)
            .with_context(|| format!("cannot read {}", conf_path.display()))?;
        // A restored data directory carries the settings of the run that loaded it: this
        // run's replace them.
        if let Some(at) = existing.find(CONF_MARK) {
            existing.truncate(at);
        }
        existing.push_str(&conf);
        fs::write(&conf_path, existing)
            .with_context(|| format!("cannot write {}", conf_path.display()))?;
        if ctx.restored {
            set_password(ctx, &data)?;
        }

        let mut cmd = server_command(&ctx.binaries.server, ctx)?;
        cmd.arg("-D").arg(&data);
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", ctx.binaries.server.display()))?;
        let url = ServerUrl::parse(
            &format!("postgres://postgres@127.0.0.1:{}/postgres", ctx.port),
            "",
        )?
        .with_password(ctx.password);
        let mut server = ManagedServer::spawned(&POSTGRES, child, url, ctx);
        let mut probe = ::postgres::Config::new();
        probe
            .host("127.0.0.1")
            .port(ctx.port)
            .user("postgres")
            .password(ctx.password)
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(2));
        server.wait_ready(Duration::from_secs(ctx.spec.start_timeout_s), || {
            probe.connect(::postgres::NoTls).is_ok()
        })?;
        Ok(server)
    }

    /// Fast shutdown.
    fn stop_signal(&self) -> Signal {
        Signal::SIGINT
    }

    fn escalation_signal(&self) -> Option<Signal> {
        Some(Signal::SIGQUIT)
    }

    fn credentials_file(&self, server: &ManagedServer) -> Result<String> {
        let url = server.url.url();
        let port = url.port().unwrap_or(5432);
        let path = server.dir.join("pgpass");
        let password = server.url.password().unwrap_or_default();
        write_private_file(&path, &format!("127.0.0.1:{port}:*:postgres:{password}\n"), None)?;
        Ok(format!(
            "connect with: PGPASSFILE={} psql -h 127.0.0.1 -p {port} -U postgres postgres \
             (the password file is readable by you only)",
            path.display()
        ))
    }

    fn check_settings(&self, checks: &[&SettingsCheck]) -> Vec<SettingProblem> {
        let mut problems = Vec::new();
        let mut scratches: Vec<(Option<PathBuf>, Result<PgScratch, SettingProblem>)> = Vec::new();
        for check in checks {
            let bin = check.server.bin_dir.clone();
            if !scratches.iter().any(|(b, _)| *b == bin) {
                scratches.push((bin.clone(), PgScratch::create(check)));
            }
            let found = match &scratches
                .iter()
                .find(|(b, _)| *b == bin)
                .expect("just added")
                .1
            {
                Ok(scratch) => scratch.check(check),
                Err(p) => vec![p.clone()],
            };
            for p in found {
                if !problems.contains(&p) {
                    problems.push(p);
                }
            }
        }
        problems
    }
}

/// Where ibench's settings begin in a managed server's postgresql.conf.
const CONF_MARK: &str =
    "\n# ibench managed server: TCP on 127.0.0.1 only, no Unix socket, passwords\n";

/// `initdb` of `data`: the superuser's password reaches it in a file only the server's
/// account can read, removed as soon as initdb has read it.
fn initdb(ctx: &StartContext<'_>, data: &std::path::Path) -> Result<()> {
    let pwfile = ctx.dir.join("pwfile");
    write_private_file(&pwfile, ctx.password, ctx.account)?;
    let mut init = process::command(&ctx.binaries.setup, ctx, false)?;
    init.arg("-D")
        .arg(data)
        .args([
            "-U",
            "postgres",
            "--auth=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        ])
        .arg(format!("--pwfile={}", pwfile.display()));
    let initialised = run_setup(init, "initdb", ctx.log);
    let _ = fs::remove_file(&pwfile);
    initialised
}

/// Gives the superuser of the restored data directory `data` this run's password: `postgres
/// --single` (no connection, no listener), the statement on its standard input.
fn set_password(ctx: &StartContext<'_>, data: &std::path::Path) -> Result<()> {
    use std::io::Write;
    let mut cmd = process::command(&ctx.binaries.server, ctx, false)?;
    cmd.arg("--single")
        .arg("-D")
        .arg(data)
        .arg("postgres")
        .stdin(Stdio::piped());
    let mut child = cmd.spawn().context("cannot run postgres --single")?;
    let sql = format!("ALTER ROLE postgres PASSWORD '{}';\n", ctx.password);
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(sql.as_bytes())
            .context("cannot write to postgres --single")?;
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(process::failure(
            &format!("postgres --single (setting the password) failed ({status})"),
            ctx.log,
        ));
    }
    Ok(())
}

/// A data directory from `initdb`, used only to let `postgres -C` read configurations (no
/// server runs on it).
struct PgScratch {
    dir: PathBuf,
    postgres: PathBuf,
    original_conf: String,
    user: Option<User>,
}

impl Drop for PgScratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

impl PgScratch {
    fn create(check: &SettingsCheck) -> Result<PgScratch, SettingProblem> {
        let fail = |message: String| check.problem(message);
        let binaries = Binaries::locate(&POSTGRES, check.server.bin_dir.as_deref(), None, "bin_dir")
            .map_err(|p| fail(p.message))?;
        let user = super::account::resolve(check.server.user.as_deref(), "server_user")
            .map_err(|e| fail(e.to_string()))?;
        // A new directory of an unpredictable name: it is given to the server's account below,
        // which must never reach a directory planted (or linked) in /tmp.
        let dir = crate::safe_fs::private_temp_dir("ibench-check-pg-")
            .map_err(|e| fail(format!("cannot create a directory in /tmp: {e}")))?;
        super::private_dir(&dir, user.as_ref()).map_err(|e| fail(format!("{e:#}")))?;
        let mut scratch = PgScratch {
            dir: dir.clone(),
            postgres: binaries.server.clone(),
            original_conf: String::new(),
            user,
        };
        let mut cmd = Command::new(&binaries.setup);
        super::binaries::with_library_path(&mut cmd, &binaries.setup);
        // No server ever runs on this directory (`postgres -C` only reads the configuration),
        // so it needs no password.
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
            .map_err(|e| fail(format!("cannot run {}: {e}", binaries.setup.display())))?;
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
        use std::os::unix::process::CommandExt;
        if let Some(u) = &self.user {
            cmd.uid(u.uid.as_raw()).gid(u.gid.as_raw());
        }
    }

    fn check(&self, check: &SettingsCheck) -> Vec<SettingProblem> {
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
            return vec![check.problem(format!("cannot write {}: {e}", self.conf().display()))];
        }
        let mut cmd = Command::new(&self.postgres);
        super::binaries::with_library_path(&mut cmd, &self.postgres);
        cmd.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-C", "server_version"]);
        self.as_user(&mut cmd);
        let out = match cmd.stdin(Stdio::null()).output() {
            Ok(o) => o,
            Err(e) => {
                return vec![check.problem(format!("cannot run {}: {e}", self.postgres.display()))];
            }
        };
        if out.status.success() {
            return Vec::new();
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut problems: Vec<SettingProblem> = Vec::new();
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
            let p = SettingProblem {
                at: check.locate(name),
                message: format!("postgres rejects setting {name}: {text}"),
            };
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
        if problems.is_empty() {
            let last = stderr.lines().last().unwrap_or("no output").trim();
            problems.push(check.problem(format!(
                "postgres -C with this config failed ({}): {last}",
                out.status
            )));
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_when_needed() {
        assert_eq!(POSTGRES.config_value("128MB"), "128MB");
        assert_eq!(POSTGRES.config_value("%m [%p] "), "'%m [%p] '");
        assert_eq!(POSTGRES.config_value("'x'"), "'x'");
        assert_eq!(POSTGRES.config_value("it's"), "'it''s'");
    }
}

//! Flags every benchmark subcommand shares: the target (SQLite file, server URL or managed
//! server) and the output (results directory and database, label, progress). `ibench run` and
//! `ibench micro` flatten these into their own flags.

use std::fs;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::dbms::mysql::Engine;
use crate::dbms::url::ServerUrl;
use crate::dbms::{self, DbmsKind, StatementMode, TargetSpec};
use crate::error::UsageError;
use crate::server::{Malloc, ServerKind, ServerSpec};
use crate::spec::{RunSpec, WorkloadSpec};

/// Which DBMS to benchmark, and how to reach or start it.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Target DBMS [default: sqlite, or what --url names].
    #[arg(long, value_enum)]
    pub dbms: Option<DbmsKind>,
    /// Server to benchmark: postgres://user@host:port/db (unix socket: ?host=/run/postgresql)
    /// or mysql://user@host:port/db (unix socket: ?socket=/run/mysqld/mysqld.sock). Give the
    /// password in PGPASSWORD / MYSQL_PWD: one in the URL is visible to other users in `ps`
    /// until ibench has parsed its arguments (it then overwrites it). Never shown or stored.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Send SQL text with values inlined instead of prepared statements (sysbench
    /// --db-ps-mode=disable): the server parses every statement.
    #[arg(long)]
    pub plain_sql: bool,
    /// Storage engine of MySQL-family tables.
    #[arg(long, value_enum, default_value = "innodb")]
    pub engine: Engine,
    /// Start a throwaway server for the run (fresh data directory under --out, free port),
    /// stopped at the end.
    #[arg(long, value_enum, value_name = "SERVER")]
    pub server: Option<ServerKind>,
    /// Config fragment for the managed server: postgresql.conf lines, or my.cnf lines.
    #[arg(long, value_name = "FILE", requires = "server")]
    pub server_config: Option<PathBuf>,
    /// Setting for the managed server, applied after --server-config; repeatable.
    #[arg(long = "server-option", value_name = "KEY=VALUE", value_parser = parse_key_value, requires = "server")]
    pub server_options: Vec<(String, String)>,
    /// Memory allocator of the managed server (LD_PRELOAD).
    #[arg(long, value_enum, default_value = "glibc", requires = "server")]
    pub malloc: Malloc,
    /// Directory with the server binaries (initdb + postgres, or mariadb-install-db +
    /// mariadbd) [default: Debian's locations, then PATH].
    #[arg(long, value_name = "DIR", requires = "server")]
    pub server_bin: Option<PathBuf>,
    /// Leave the managed server running after the run, for inspection.
    #[arg(long, requires = "server")]
    pub keep_server: bool,
    /// Process id of an external server on this host (its children are counted too), so its
    /// CPU, IO and memory per operation are reported.
    #[arg(long, value_name = "PID", conflicts_with = "server")]
    pub server_pid: Option<u32>,
    /// File holding the external server's pid (e.g. postmaster.pid, mysqld.pid).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["server", "server_pid"])]
    pub server_pid_file: Option<PathBuf>,
    /// Data directory of an external server: its size on disk and its device are reported.
    #[arg(long, value_name = "DIR", conflicts_with = "server")]
    pub data_dir: Option<PathBuf>,
    /// Seconds to wait for the managed server to accept connections.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub server_start_timeout: u64,
    /// SQLite database file. Default: a fresh file under --out, removed after the run unless
    /// --keep-data.
    #[arg(long, value_name = "FILE")]
    pub path: Option<PathBuf>,
    /// SQLite pragma applied on every connection after ibench's defaults (journal_mode=WAL,
    /// synchronous=NORMAL); repeatable.
    #[arg(long = "sqlite-pragma", value_name = "NAME=VALUE", value_parser = parse_key_value)]
    pub sqlite_pragmas: Vec<(String, String)>,
    /// How long an SQLite connection waits for a lock before failing.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub busy_timeout_ms: u64,
}

/// Where results go and how the run is shown.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Directory for results (one JSON file per run).
    #[arg(long, value_name = "DIR", default_value = "ibench-results")]
    pub out: PathBuf,
    /// Results database every run is also stored in: an SQLite file, or a postgres:// URL
    /// shared by a team (password in PGPASSWORD, or the URL) [default: OUT/results.db].
    #[arg(long, value_name = "FILE|URL")]
    pub results: Option<PathBuf>,
    /// Label naming this configuration in results and reports.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Print a progress line every N seconds (0: progress bar only).
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub report_interval: u64,
    /// Keep the scratch database ibench created under --out.
    #[arg(long)]
    pub keep_data: bool,
    /// No progress display; only the summary.
    #[arg(short, long)]
    pub quiet: bool,
}

fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected NAME=VALUE, got {s:?}")),
    }
}

impl TargetArgs {
    /// The run's spec for `workload` on this target: checks the target flags, resolves the
    /// DBMS, URL (password from the URL or the environment) and managed server. `scratch_path`
    /// is the SQLite file to use when --path is not given.
    pub fn run_spec(
        &self,
        output: &OutputArgs,
        scratch_path: PathBuf,
        workload: WorkloadSpec,
        maintenance: bool,
    ) -> Result<RunSpec, UsageError> {
        for (flag, v) in [
            ("--report-interval", output.report_interval),
            ("--server-start-timeout", self.server_start_timeout),
        ] {
            if v > crate::spec::MAX_SECONDS {
                return Err(UsageError::new(format!(
                    "{flag} {v} is out of range: expected at most {}",
                    crate::spec::MAX_SECONDS
                )));
            }
        }
        let kind = self.dbms_kind()?;
        for (name, value) in &self.sqlite_pragmas {
            dbms::sqlite::validate_pragma(name, value)?;
        }
        let target = match kind {
            DbmsKind::Sqlite => TargetSpec::Sqlite {
                path: self.path.clone().unwrap_or(scratch_path),
                pragmas: self.sqlite_pragmas.clone(),
                busy_timeout_ms: self.busy_timeout_ms,
            },
            DbmsKind::Postgres => TargetSpec::Postgres {
                url: self.server_url("PGPASSWORD")?,
            },
            DbmsKind::Mysql => TargetSpec::Mysql {
                url: self.server_url("MYSQL_PWD")?,
                engine: self.engine,
            },
        };
        Ok(RunSpec {
            target,
            scratch_database: kind == DbmsKind::Sqlite && self.path.is_none(),
            keep_data: output.keep_data,
            out_dir: output.out.clone(),
            label: output.label.clone(),
            report_interval_s: output.report_interval,
            maintenance,
            workload,
            server: self.server_spec()?,
            statements: if self.plain_sql {
                StatementMode::Plain
            } else {
                StatementMode::Prepared
            },
        })
    }

    /// The managed server to start, when --server is given.
    fn server_spec(&self) -> Result<Option<ServerSpec>, UsageError> {
        let Some(kind) = self.server else {
            return Ok(None);
        };
        self.malloc.library()?;
        let config_text = match &self.server_config {
            Some(path) => Some(fs::read_to_string(path).map_err(|e| {
                UsageError::new(format!(
                    "cannot read --server-config {}: {e}",
                    path.display()
                ))
            })?),
            None => None,
        };
        for (k, v) in &self.server_options {
            let ok = |s: &str| !s.is_empty() && !s.contains(['\n', '\r', '[', ']']);
            if !ok(k) || !ok(v) || k.contains(['=', ' ']) {
                return Err(UsageError::new(format!(
                    "invalid --server-option {k}={v}: expected KEY=VALUE on one line"
                )));
            }
        }
        Ok(Some(ServerSpec {
            kind,
            engine: self.engine,
            bin_dir: self.server_bin.clone(),
            config_text,
            config_file: self.server_config.clone(),
            options: self.server_options.clone(),
            malloc: self.malloc,
            keep: self.keep_server,
            start_timeout_s: self.server_start_timeout,
        }))
    }

    /// The DBMS family: --dbms, else the --url scheme, else SQLite.
    pub fn dbms_kind(&self) -> Result<DbmsKind, UsageError> {
        let from_url = match &self.url {
            Some(u) => {
                let url = ServerUrl::parse(u, "")?;
                Some(DbmsKind::from_scheme(url.scheme()).ok_or_else(|| {
                    UsageError::new(format!(
                        "--url scheme {:?} is not supported: use postgres:// or mysql://",
                        url.scheme()
                    ))
                })?)
            }
            None => None,
        };
        if let Some(server) = self.server {
            if self.url.is_some() || self.path.is_some() {
                return Err(UsageError::new(
                    "--server starts its own server: do not give --url or --path with it",
                ));
            }
            let kind = match server {
                ServerKind::Postgres => DbmsKind::Postgres,
                ServerKind::Mariadb => DbmsKind::Mysql,
            };
            if let Some(d) = self.dbms
                && d != kind
            {
                return Err(UsageError::new(format!(
                    "--dbms {} does not match --server {}",
                    d.name(),
                    server.name()
                )));
            }
            return Ok(kind);
        }
        match (self.dbms, from_url) {
            (Some(d), Some(u)) if d != u => Err(UsageError::new(format!(
                "--dbms {} does not match --url, which names {}",
                d.name(),
                u.name()
            ))),
            (Some(DbmsKind::Sqlite), None) | (None, None) => Ok(DbmsKind::Sqlite),
            (Some(d), None) => Err(UsageError::new(format!(
                "--dbms {} needs --url (e.g. {}://user@localhost/test)",
                d.name(),
                d.name()
            ))),
            (_, Some(u)) => {
                if self.path.is_some() {
                    return Err(UsageError::new(
                        "--path is for SQLite; a server target takes --url",
                    ));
                }
                Ok(u)
            }
        }
    }

    fn server_url(&self, password_env: &str) -> Result<ServerUrl, UsageError> {
        match (&self.url, self.server) {
            (Some(u), _) => ServerUrl::parse(u, password_env),
            // Replaced by the managed server's URL once it runs.
            (None, Some(_)) => ServerUrl::parse("postgres://placeholder/", ""),
            (None, None) => Err(UsageError::new("a server target needs --url or --server")),
        }
    }

    /// The external server's pid: --server-pid, or the first line of --server-pid-file.
    pub fn external_pid(&self) -> Result<Option<u32>> {
        match (&self.server_pid, &self.server_pid_file) {
            (Some(pid), _) => Ok(Some(*pid)),
            (None, Some(file)) => {
                let text = fs::read_to_string(file).map_err(|e| {
                    UsageError::new(format!(
                        "cannot read --server-pid-file {}: {e}",
                        file.display()
                    ))
                })?;
                let pid = text
                    .lines()
                    .next()
                    .and_then(|l| l.trim().parse().ok())
                    .ok_or_else(|| {
                        UsageError::new(format!(
                            "--server-pid-file {} does not start with a pid",
                            file.display()
                        ))
                    })?;
                Ok(Some(pid))
            }
            (None, None) => Ok(None),
        }
    }
}

//! The target's flags: which DBMS to benchmark and how to reach its database (an embedded
//! database file, a server URL), its own settings, and what ibench may do to tables it did not
//! create. The server it runs on is `server.rs`'s.

use std::path::PathBuf;

use clap::Args;

use super::parse_key_value;
use crate::dbms::url::ServerUrl;
use crate::dbms::{DbmsKind, Setting, SettingError, TargetSettings};
use crate::error::UsageError;

/// Which DBMS to benchmark, and how to reach its database.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Target DBMS [default: sqlite, or what --url names].
    #[arg(long, value_enum)]
    pub dbms: Option<DbmsKind>,
    /// Server to benchmark: postgres://user@host:port/db (unix socket: ?host=/run/postgresql)
    /// or mysql://user@host:port/db (unix socket: ?socket=/run/mysqld/mysqld.sock). Give the
    /// password in PGPASSWORD / MYSQL_PWD (or a password file): a password in the URL is
    /// never shown or stored, and ibench removes it from its command line at once, but other
    /// users can read the command line until then.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Send SQL text with values inlined instead of prepared statements (sysbench
    /// --db-ps-mode=disable): the server parses every statement.
    #[arg(long)]
    pub plain_sql: bool,
    /// Storage engine of MySQL-family tables: innodb (the default) or rocksdb (MyRocks).
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Database file of an embedded DBMS. Default: a fresh file under --out, removed after the
    /// run unless --keep-data. Not a symbolic link; in a directory others can write to, only a
    /// sticky one (as /tmp), and there only ibench's own files at its names.
    #[arg(long, value_name = "FILE")]
    pub path: Option<PathBuf>,
    /// Setting of an embedded DBMS, applied on every connection after ibench's defaults (an
    /// SQLite pragma: synchronous=NORMAL is a default, and journal_mode=WAL on a file ibench
    /// creates; a database of yours keeps its journal mode unless journal_mode is given here,
    /// and the results say whether ibench changed it; a RocksDB option, or block_cache_size,
    /// block_cache_num_shard_bits, sync); repeatable.
    #[arg(
        long = "sqlite-pragma",
        visible_aliases = ["db-option", "rocksdb-option"],
        value_name = "NAME=VALUE",
        value_parser = parse_key_value
    )]
    pub db_options: Vec<(String, String)>,
    /// How long an SQLite connection waits for a lock before failing [default: 30000].
    #[arg(long, value_name = "MS")]
    pub busy_timeout_ms: Option<u64>,
    /// Replace tables of the benchmark's names that ibench did not create (pi1..., sbtest1...).
    /// Without it ibench refuses to start, naming the table: it never drops what it did not
    /// create.
    #[arg(long)]
    pub drop_existing: bool,
    /// Let steps that do not create tables (l.x, l.i1, l.i2, the query steps' writers, the
    /// microbenchmarks' writes on sysbench's tables with --no-prepare) write into tables of the
    /// benchmark's names that ibench did not create. Without it ibench refuses to start,
    /// naming the table: it never changes what it did not create.
    #[arg(long)]
    pub write_existing: bool,
}

/// `--path` of an embedded DBMS: absent (it is created), or what the DBMS keeps a database
/// in, a regular file (SQLite) or a directory (RocksDB). `/dev/null`, a FIFO or a directory
/// given to SQLite are refused before anything is created (SQLite used to write
/// `/dev/null-journal`).
fn check_database_path(kind: DbmsKind, path: &std::path::Path) -> Result<(), UsageError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(UsageError::new(format!(
                "--path {}: {e}",
                crate::output::escape::line(&path.display().to_string())
            )));
        }
    };
    let (ok, expected) = if kind.database_is_directory() {
        (meta.is_dir(), "a directory")
    } else {
        (meta.is_file(), "a regular file")
    };
    if ok {
        return Ok(());
    }
    let is = if meta.is_dir() {
        "a directory"
    } else if meta.is_file() {
        "a regular file"
    } else {
        "a device, FIFO or socket"
    };
    Err(UsageError::new(format!(
        "--path {} is {is}: expected {expected} (the {kind} database) or a path where nothing \
         exists yet",
        crate::output::escape::line(&path.display().to_string())
    )))
}

/// The flag that gave a target setting.
fn setting_flag(setting: &Setting) -> String {
    match setting {
        Setting::Engine => "--engine".to_string(),
        Setting::Option(name) => format!("--db-option {name}"),
        Setting::BusyTimeout => "--busy-timeout-ms".to_string(),
    }
}

/// A target setting's refusal, naming its flag.
fn setting_error(e: SettingError) -> UsageError {
    UsageError::new(format!("{}: {}", setting_flag(&e.setting), e.message))
}

impl TargetArgs {
    /// `--url`, parsed (once).
    pub fn server_url(&self) -> Result<Option<ServerUrl>, UsageError> {
        match &self.url {
            Some(text) => Ok(Some(ServerUrl::parse(text, "")?)),
            None => Ok(None),
        }
    }

    /// Whether `--path` or `--url` names a database that exists already.
    pub fn names_a_database(&self) -> bool {
        self.path.is_some() || self.url.is_some()
    }

    /// `--path`, checked for the DBMS `kind` ([`check_database_path`]).
    pub fn check_path(&self, kind: DbmsKind) -> Result<(), UsageError> {
        match &self.path {
            Some(path) => check_database_path(kind, path),
            None => Ok(()),
        }
    }

    /// The DBMS `kind`'s own parameters from `--engine`, `--sqlite-pragma` and
    /// `--busy-timeout-ms`, refused naming their flag where they do not apply.
    pub fn params(&self, kind: DbmsKind) -> Result<crate::dbms::Params, UsageError> {
        let settings = TargetSettings {
            engine: self.engine.clone(),
            options: self.db_options.clone(),
            busy_timeout_ms: self.busy_timeout_ms,
        };
        kind.params(&settings).map_err(setting_error)
    }

    /// The DBMS: `server` (--server), --dbms, else the --url scheme, else the embedded default.
    pub fn dbms_kind(
        &self,
        server: Option<DbmsKind>,
        url: Option<&ServerUrl>,
    ) -> Result<DbmsKind, UsageError> {
        let from_url = match url {
            Some(url) => Some(DbmsKind::from_scheme(url.scheme()).ok_or_else(|| {
                UsageError::new(format!(
                    "--url scheme {:?} is not supported: use one of {}",
                    url.scheme(),
                    DbmsKind::all()
                        .iter()
                        .flat_map(|k| k.url_schemes())
                        .map(|s| format!("{s}://"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?),
            None => None,
        };
        if let Some(kind) = server {
            if self.url.is_some() || self.path.is_some() {
                return Err(UsageError::new(
                    "--server starts its own server: do not give --url or --path with it",
                ));
            }
            if let Some(d) = self.dbms
                && d != kind
            {
                return Err(UsageError::new(format!(
                    "--dbms {d} does not match --server {}",
                    kind.server_name()
                )));
            }
            return Ok(kind);
        }
        match (self.dbms, from_url) {
            (Some(d), Some(u)) if d != u => Err(UsageError::new(format!(
                "--dbms {d} does not match --url, which names {u}"
            ))),
            (Some(d), None) if !d.embedded() => Err(UsageError::new(format!(
                "--dbms {d} needs --url (e.g. {}://user@localhost/test) or --server",
                d.url_schemes().first().copied().unwrap_or(d.name())
            ))),
            (Some(d), None) => Ok(d),
            (None, None) => Ok(DbmsKind::default_embedded()),
            (_, Some(u)) => {
                if self.path.is_some() {
                    return Err(UsageError::new(format!(
                        "--path is for an embedded DBMS; a {u} server takes --url"
                    )));
                }
                Ok(u)
            }
        }
    }
}

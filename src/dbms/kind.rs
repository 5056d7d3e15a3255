//! What ibench knows about a DBMS before opening it: a [`Descriptor`] per DBMS file, listed
//! once in the registry (`dbms/mod.rs`), and [`DbmsKind`], the handle the rest of the program
//! holds. Code asks the descriptor (`kind.embedded()`, `kind.cache(..)`) instead of matching on
//! a variant, so a new DBMS changes nothing outside its own file and its registry line.
//!
//! Also here, since a descriptor builds and opens them: how to reach a target
//! ([`TargetSpec`], stored with every run: the DBMS, a path or a URL, and the DBMS's own
//! parameters, which only its descriptor reads) and the settings a user gives it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::LazyLock;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::url::ServerUrl;
use super::{DbError, Dbms, ErrorKind, StatementMode};

/// An operation set a workload needs from a DBMS's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    /// The Insert Benchmark's operations ([`super::InsertBenchmarkConnection`]).
    InsertBenchmark,
    /// SQL connections ([`super::SqlConnection`]): the shared statement vocabulary, which the
    /// microbenchmarks and TPC-C run on.
    Sql,
}

impl Capability {
    /// What the capability is called in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Capability::InsertBenchmark => "the Insert Benchmark",
            Capability::Sql => "the OLTP microbenchmarks",
        }
    }
}

/// The setting that sizes a DBMS's cache, and how its value is written and read back.
#[derive(Clone, Copy)]
pub struct CacheSetting {
    /// Setting name (`innodb_buffer_pool_size`, `shared_buffers`, the `cache_size` pragma).
    pub name: &'static str,
    /// Smallest size the DBMS accepts, bytes.
    pub min_bytes: u64,
    /// The value to set for a size in bytes (a whole number of MiB).
    pub format: fn(u64) -> String,
    /// The size in bytes of the setting's effective value as the DBMS reports it (`settings`
    /// holds every effective setting, for units that depend on another one).
    pub parse: fn(&str, &BTreeMap<String, String>) -> Option<u64>,
    /// The size is each connection's (SQLite's page cache), not one cache of the DBMS's.
    pub per_connection: bool,
}

/// Rates assumed for a DBMS on a 2-core machine, for experiment estimates: rows per second
/// over all clients, and fixed costs in seconds.
#[derive(Clone, Copy, Debug)]
pub struct AssumedRates {
    /// l.i0 inserts.
    pub load: f64,
    /// l.x rows indexed (all indexes).
    pub index: f64,
    /// l.i1 inserts (with as many deletes).
    pub more: f64,
    /// l.i2 inserts (small batches).
    pub more_small: f64,
    /// Server initialisation, start and stop.
    pub server_s: f64,
    /// The maintenance pause.
    pub pause_s: f64,
}

/// One DBMS: its names, how it is reached, what it can run, its settings. Each DBMS file
/// defines one (a unit struct) and the registry lists it.
pub trait Descriptor: Sync {
    /// Name on the command line (`--dbms`) and in results (`target.kind`).
    fn name(&self) -> &'static str;

    /// Name of its managed server, also used by experiment files (`--server`, `dbms = ...`).
    fn server_name(&self) -> &'static str {
        self.name()
    }

    /// One line for `--help`.
    fn about(&self) -> &'static str;

    /// URL schemes that name it (`postgres`, `postgresql`); none for an embedded DBMS.
    fn url_schemes(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether it runs inside ibench (a file or directory given by `--path`) rather than as a
    /// server reached by URL.
    fn embedded(&self) -> bool {
        self.url_schemes().is_empty()
    }

    /// Whether an embedded database is a directory (`--path DIR`) rather than a file.
    fn database_is_directory(&self) -> bool {
        false
    }

    /// The files and directories holding an embedded database at `path`, for its size on disk
    /// (a directory is walked). Default: `path` itself (a database directory, or a file with
    /// nothing beside it).
    fn data_paths(&self, path: &std::path::Path) -> Vec<PathBuf> {
        vec![path.to_path_buf()]
    }

    /// Environment variable holding the password when a server URL has none.
    fn password_env(&self) -> &'static str {
        ""
    }

    /// The URL `url` of a server ibench did not start, whose every session (the benchmark's
    /// and ibench's own) starts with `settings` set for that session only: a config's options
    /// on an experiment's URL target, where the user allowed server changes. `Err` says why
    /// it cannot (one line). Default: none taken.
    fn with_session_settings(
        &self,
        url: crate::dbms::url::ServerUrl,
        settings: &[(String, String)],
    ) -> Result<crate::dbms::url::ServerUrl, String> {
        if settings.is_empty() {
            return Ok(url);
        }
        Err(format!(
            "ibench sets no session settings on a {} server it did not start: set them on the \
             server yourself",
            self.name()
        ))
    }

    /// The workloads' operation sets its connections implement.
    fn capabilities(&self) -> &'static [Capability];

    /// Its target parameters (stored with the results under `target`) from what the user
    /// gave; a setting that does not apply to it is refused, naming the setting.
    fn params(&self, settings: &TargetSettings) -> Result<Params, SettingError>;

    /// Opens the target, checking that it is reachable and its parameters are accepted.
    fn open(&self, target: &TargetSpec, mode: StatementMode) -> Result<Box<dyn Dbms>>;

    /// What an error of its client library means for a client; `None` when `err` is not
    /// one of its errors.
    fn classify(&self, _err: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
        None
    }

    /// The setting that sizes its cache for a target with these parameters.
    fn cache(&self, params: &Params) -> CacheSetting;

    /// Whether l.x may create all indexes in one statement on a target with these parameters.
    fn combined_index_ddl(&self, _params: &Params) -> bool {
        false
    }

    /// Its assumed speeds on a 2-core machine, for experiment estimates.
    fn assumed_rates(&self, params: &Params) -> AssumedRates;
}

/// A DBMS of the registry: a copyable handle to its [`Descriptor`]. Serialized as its name;
/// parsed from its name, its server name or an alias.
#[derive(Clone, Copy)]
pub struct DbmsKind(&'static dyn Descriptor);

/// Classifies `err` by the DBMS errors in its chain (each DBMS's descriptor knows its own).
pub fn error_kind(err: &anyhow::Error) -> ErrorKind {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<DbError>() {
            return e.kind;
        }
        if let Some(kind) = DbmsKind::all().iter().find_map(|k| k.classify(cause)) {
            return kind;
        }
    }
    ErrorKind::Fatal
}

impl DbmsKind {
    /// The kind of a registered descriptor (a DBMS file's own static).
    pub fn of(descriptor: &'static dyn Descriptor) -> DbmsKind {
        DbmsKind(descriptor)
    }

    /// Every DBMS of the registry, in registry order.
    pub fn all() -> &'static [DbmsKind] {
        static ALL: LazyLock<Vec<DbmsKind>> =
            LazyLock::new(|| super::REGISTRY.iter().map(|d| DbmsKind(*d)).collect());
        &ALL
    }

    /// The DBMS called `name` (its name or server name, any case).
    pub fn find(name: &str) -> Option<DbmsKind> {
        Self::all().iter().copied().find(|k| {
            k.name().eq_ignore_ascii_case(name) || k.server_name().eq_ignore_ascii_case(name)
        })
    }

    /// The server DBMS a URL scheme names.
    pub fn from_scheme(scheme: &str) -> Option<DbmsKind> {
        Self::all()
            .iter()
            .copied()
            .find(|k| k.url_schemes().contains(&scheme))
    }

    /// The embedded default target (the registry's first DBMS).
    pub fn default_embedded() -> DbmsKind {
        Self::all()
            .iter()
            .copied()
            .find(|k| k.embedded())
            .expect("the registry has an embedded DBMS")
    }

    /// Names accepted for a DBMS, for messages: `sqlite, postgres, mysql`.
    pub fn names(server_names: bool) -> String {
        Self::all()
            .iter()
            .map(|k| {
                if server_names {
                    k.server_name()
                } else {
                    k.name()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether its connections implement `capability`.
    pub fn can(self, capability: Capability) -> bool {
        self.capabilities().contains(&capability)
    }
}

impl std::ops::Deref for DbmsKind {
    type Target = dyn Descriptor;

    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for DbmsKind {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for DbmsKind {}

impl fmt::Debug for DbmsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for DbmsKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for DbmsKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for DbmsKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        DbmsKind::find(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown DBMS `{name}`, expected one of {}",
                DbmsKind::names(true)
            ))
        })
    }
}

impl clap::ValueEnum for DbmsKind {
    fn value_variants<'a>() -> &'a [Self] {
        Self::all()
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let mut value = clap::builder::PossibleValue::new(self.name()).help(self.about());
        if self.server_name() != self.name() {
            value = value.alias(self.server_name());
        }
        Some(value)
    }
}

/// Serde for a managed server's DBMS, written as its server name (`mariadb`).
pub mod server_name {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::DbmsKind;

    /// Writes the server name.
    pub fn serialize<S: Serializer>(kind: &DbmsKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.server_name())
    }

    /// Reads a name or server name.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DbmsKind, D::Error> {
        DbmsKind::deserialize(d)
    }
}

/// A DBMS's own target parameters (`engine`, `pragmas`, `busy_timeout_ms`), as stored in the
/// results beside `kind`. Each DBMS file reads them into its own type with [`from_params`].
pub type Params = serde_json::Map<String, serde_json::Value>;

/// Everything needed to open a target. Serialized flat: `{"kind": "mysql", "url": ...,
/// "engine": "innodb"}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetSpec {
    /// The DBMS.
    pub kind: DbmsKind,
    /// Database file or directory of an embedded DBMS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Server URL (its password is never serialized); `None` for a managed server until it
    /// runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<ServerUrl>,
    /// Where the benchmark's client connections go when not to `url`: a connection pooler in
    /// front of the server (ibench's own reads of settings and counters go to `url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_url: Option<ServerUrl>,
    /// A managed server's streaming replicas (`r1` .. `rN`), for their lag and catch-up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replica_urls: Vec<ServerUrl>,
    /// The Insert Benchmark's query steps and the read-only microbenchmarks read from
    /// `replica_urls` (round-robin per client).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_from_replicas: bool,
    /// A managed Galera cluster's other nodes (`n2` .. `nN`; `url` is n1's), for their
    /// gauges, and the clients' connections with `clients_on_all_nodes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node_urls: Vec<ServerUrl>,
    /// The clients' connections go to every node in turn (`--client-nodes all`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clients_on_all_nodes: bool,
    /// The DBMS's own parameters.
    #[serde(flatten)]
    pub params: Params,
}

impl TargetSpec {
    /// An embedded DBMS's target at `path`, with its default parameters.
    pub fn embedded(kind: DbmsKind, path: PathBuf) -> Result<Self> {
        let params = kind
            .params(&TargetSettings::default())
            .map_err(|e| anyhow::anyhow!("{}: {}", e.setting.key(), e.message))?;
        Ok(TargetSpec {
            kind,
            path: Some(path),
            url: None,
            client_url: None,
            replica_urls: Vec::new(),
            read_from_replicas: false,
            node_urls: Vec::new(),
            clients_on_all_nodes: false,
            params,
        })
    }

    /// The server URL; an error for a target without one.
    pub fn server_url(&self) -> Result<&ServerUrl> {
        self.url
            .as_ref()
            .with_context(|| format!("{} target without a URL", self.kind))
    }

    /// The database path; an error for a target without one.
    pub fn file_path(&self) -> Result<&PathBuf> {
        self.path
            .as_ref()
            .with_context(|| format!("{} target without a path", self.kind))
    }
}

/// Target settings as a user gives them, in DBMS-neutral terms. Each DBMS takes the ones that
/// apply to it and refuses the others ([`super::Descriptor::params`]).
#[derive(Clone, Debug, Default)]
pub struct TargetSettings {
    /// Storage engine of the tables (MySQL family: `innodb`, `rocksdb`).
    pub engine: Option<String>,
    /// Settings of an embedded DBMS, applied on every connection (SQLite pragmas).
    pub options: Vec<(String, String)>,
    /// How long a connection waits for a lock before failing, milliseconds.
    pub busy_timeout_ms: Option<u64>,
}

impl TargetSettings {
    /// Refuses, for DBMS `kind`, the first setting given that is not among `takes` (by key:
    /// `engine`, `options`, `busy_timeout_ms`).
    pub fn refuse_all_but(&self, kind: DbmsKind, takes: &[&str]) -> Result<(), SettingError> {
        let given = [
            self.engine.as_ref().map(|_| Setting::Engine),
            self.options
                .first()
                .map(|(name, _)| Setting::Option(name.clone())),
            self.busy_timeout_ms.map(|_| Setting::BusyTimeout),
        ];
        match given
            .into_iter()
            .flatten()
            .find(|s| !takes.contains(&s.key()))
        {
            Some(setting) => Err(SettingError::not_applicable(kind, setting)),
            None => Ok(()),
        }
    }
}

/// A target setting, to name in a message in the caller's own terms (a flag, a file key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setting {
    /// [`TargetSettings::engine`].
    Engine,
    /// One of [`TargetSettings::options`], by name.
    Option(String),
    /// [`TargetSettings::busy_timeout_ms`].
    BusyTimeout,
}

impl Setting {
    /// The setting's key in [`TargetSettings`] terms (`engine`, `options`, `busy_timeout_ms`).
    pub fn key(&self) -> &'static str {
        match self {
            Setting::Engine => "engine",
            Setting::Option(_) => "options",
            Setting::BusyTimeout => "busy_timeout_ms",
        }
    }
}

/// A target setting a DBMS refused: which, and why (a message that does not name the setting's
/// flag or key; the caller adds its own name for it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    /// The setting refused.
    pub setting: Setting,
    /// Why, e.g. `postgres has no storage engines (engine is for mysql)`.
    pub message: String,
}

impl SettingError {
    /// A refusal of `setting`.
    pub fn new(setting: Setting, message: impl Into<String>) -> Self {
        SettingError {
            setting,
            message: message.into(),
        }
    }

    /// The refusal of a setting that `kind` does not have at all.
    pub fn not_applicable(kind: DbmsKind, setting: Setting) -> Self {
        let what = match setting {
            Setting::Engine => "storage engines",
            Setting::Option(_) => "settings of its own (a server takes --server-option)",
            Setting::BusyTimeout => "busy timeout",
        };
        SettingError::new(setting, format!("{kind} has no {what}"))
    }
}

/// `value` as target parameters.
pub fn to_params<T: Serialize>(value: &T) -> Params {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => Params::new(),
    }
}

/// A target's parameters read into the DBMS's own type (a document written before a parameter
/// existed reads back with its default, when the type gives one).
pub fn from_params<T: DeserializeOwned>(kind: DbmsKind, params: &Params) -> Result<T> {
    serde_json::from_value(serde_json::Value::Object(params.clone()))
        .with_context(|| format!("invalid {kind} target parameters"))
}

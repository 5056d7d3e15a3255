//! Flags every benchmark subcommand shares: the target (an embedded database file, a server
//! URL, or a managed server) and the output (results directory and database, label,
//! progress). `ibench run` and `ibench micro` flatten these into their own flags and turn them
//! into a [`RunSpec`] here, checked once, with messages that name the flags.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use crate::dbms::url::ServerUrl;
use crate::dbms::{DbmsKind, Setting, SettingError, StatementMode, TargetSettings, TargetSpec};
use crate::error::UsageError;
use crate::server::replicas::{ClusterNames, galera_spec, on_node_failure, replica_spec};
use crate::server::{Refusal, ServerProblem, ServerSetting, ServerSettings};
use crate::spec::{
    ClientNodes, GaleraSpec, MAX_SECONDS, Malloc, NodeFailure, PoolMode, Pooler, PoolerSpec,
    ReadFrom, ReplicaSpec, RunSpec, ServerSpec, WorkloadSpec,
};

/// Which DBMS to benchmark, and how to reach or start it.
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
    /// Start a throwaway server for the run (fresh data directory under --out, free port,
    /// reachable by ibench alone), stopped at the end.
    #[arg(long, value_name = "SERVER", value_parser = server_parser())]
    pub server: Option<DbmsKind>,
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
    /// Account the managed server runs as [default: when ibench runs as root, the system
    /// account ibench-server (created when missing), which shares nothing with the host's own
    /// DBMS; else ibench's own user]. Never root.
    #[arg(long, value_name = "NAME", requires = "server")]
    pub server_user: Option<String>,
    /// Leave the managed server running after the run, for inspection (its credentials go to
    /// a file only you can read).
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
    /// Directory the managed server's data directory is created in (a mount of the file
    /// system or device under study) [default: beside the results, in --out].
    #[arg(long, value_name = "DIR", requires = "server")]
    pub server_data_root: Option<PathBuf>,
    /// Start a connection pooler in front of the managed server; the benchmark's clients
    /// connect through it (ibench's own reads of settings and counters go to the server).
    #[arg(long, value_enum, value_name = "POOLER", requires = "server")]
    pub pooler: Option<Pooler>,
    /// Server connections in the pooler's pool.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "pooler")]
    pub pool_size: u32,
    /// When a client connection gets a server connection: for each transaction, or for its
    /// whole session.
    #[arg(long, value_enum, default_value = "transaction", requires = "pooler")]
    pub pool_mode: PoolMode,
    /// Start this many replicas of the managed server on their own ports: PostgreSQL
    /// streaming replicas (pg_basebackup, a replication slot each), MariaDB binlog replicas
    /// (GTID); their lag is recorded per second.
    #[arg(long, value_name = "N", requires = "server")]
    pub replicas: Option<usize>,
    /// The first K replicas are synchronous (PostgreSQL: synchronous_standby_names FIRST K;
    /// MariaDB: semi-synchronous, K <= 1).
    #[arg(long, value_name = "K", requires = "replicas")]
    pub sync_replicas: Option<usize>,
    /// Where the Insert Benchmark's query steps and the microbenchmarks that only read
    /// (`ibench micro`) read: the primary, or the replicas (round-robin per client). Writers
    /// always go to the primary.
    #[arg(long, value_enum, value_name = "NODES", requires = "replicas")]
    pub read_from: Option<ReadFrom>,
    /// Start a MariaDB Galera cluster of N nodes on this host (Debian's galera-4; n1
    /// bootstraps it, the others join by state transfer), InnoDB only.
    #[arg(
        long,
        value_name = "N",
        requires = "server",
        conflicts_with = "replicas"
    )]
    pub galera: Option<usize>,
    /// Which Galera nodes the clients connect to: every node in turn, or the first.
    #[arg(long, value_enum, value_name = "NODES", requires = "galera")]
    pub client_nodes: Option<ClientNodes>,
    /// What a replica or Galera node that dies during a step does: `fail` (the default) fails
    /// the step and the run with a line naming the node; `continue` goes on on the remaining
    /// nodes and records the death on the step (a Galera node is started again at the step's
    /// end, a replica stays down). With `--replicas` or `--galera` only.
    #[arg(long, value_enum, value_name = "WHAT")]
    pub on_node_failure: Option<NodeFailure>,
    /// Record `perf record -g` of the DBMS's processes (ibench's own for an embedded DBMS)
    /// during each step into one SVG flame graph per step, beside the results
    /// (`<run>.profiles/<step>.svg`). Without perf, or where the kernel forbids it, the run
    /// goes on without profiles.
    #[arg(long)]
    pub profile: bool,
    /// Seconds to wait for the managed server to accept connections.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub server_start_timeout: u64,
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
    /// Let the maintenance pause change the global settings of a server ibench did not start,
    /// for a moment (InnoDB: innodb_max_dirty_pages_pct = 0 until the buffer pool is flushed,
    /// then set back, by a guard process if ibench is killed meanwhile). Without it the
    /// pause changes no setting of such a server.
    #[arg(long, conflicts_with = "server")]
    pub allow_server_changes: bool,
    /// Threads that drive a server's client connections, each thread many connections
    /// (one readiness wait for all of them) when a step has more connections than threads
    /// [default: one per core, once a step has more than 4 connections per core]; 0: a
    /// thread per connection. Embedded DBMS always have a thread per connection.
    #[arg(long, value_name = "N")]
    pub client_threads: Option<usize>,
    /// How client threads wait for their many connections: io-uring (a query's send and
    /// receive in one system call) or epoll [default: io-uring where the kernel allows it,
    /// else epoll].
    #[arg(long, value_name = "IO")]
    pub client_io: Option<crate::mux::Backend>,
    /// Memory cap, IO limits, CPUs and OS cache mode of the DBMS.
    #[command(flatten)]
    pub resources: super::resources::ResourceArgs,
    /// Seconds of pause before every step but the first (between client counts and between
    /// steps), for the DBMS's background work to settle; recorded with each step.
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub cooldown: u64,
    /// No once-a-second /proc and DBMS gauge readings and no wait-event sampling during
    /// steps: only each step's start and end readings (cost per op still measured; no
    /// per-second gauges or wait events). To measure what the sampling costs.
    #[arg(long)]
    pub no_sampling: bool,
}

/// Where results go and how the run is shown.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Directory for results (one JSON file per run).
    #[arg(long, value_name = "DIR", default_value = "ibench-results")]
    pub out: PathBuf,
    /// Results database every run is also stored in: an SQLite file, or a postgres:// URL
    /// shared by a team (password from the URL or PGPASSWORD) [default: OUT/results.db].
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
    /// Price of this host per hour (e.g. the instance's on-demand price), recorded with the
    /// run: reports show throughput per unit of it and the cost of a million operations.
    #[arg(long, value_name = "PRICE", value_parser = parse_price)]
    pub cost_per_hour: Option<f64>,
    /// Keep every client's full per-second series in the results, not only a summary of
    /// each (ops, rows, rate percentiles, idle seconds): about 75 bytes per client, op type
    /// and second, 280 MB for an hour of one op type at 1,024 clients. The series of all
    /// clients together are always kept in full.
    #[arg(long)]
    pub per_client_series: bool,
    /// Provenance tag KEY=VALUE stored with the run (repeatable; e.g. commit=3f2a9c1,
    /// branch=main): shown by list, show and reports, `ibench list --tag` filters on it,
    /// `ibench history --order tag:KEY` orders by it. Key: 1-64 of a-z 0-9 _ . -
    #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = crate::spec::tags::parse)]
    pub tags: Vec<(String, String)>,
}

/// A price per hour: a positive number (at most 1e6).
pub fn parse_price(s: &str) -> Result<f64, String> {
    match s.trim().trim_start_matches('$').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a price per hour: expected a positive number such as 0.68"
        )),
    }
}

fn parse_key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected NAME=VALUE, got {s:?}")),
    }
}

/// `--server`: the names of the managed server families.
fn server_parser() -> impl TypedValueParser<Value = DbmsKind> {
    let names: Vec<&'static str> = DbmsKind::all()
        .iter()
        .filter(|k| crate::server::family(**k).is_some())
        .map(|k| k.server_name())
        .collect();
    PossibleValuesParser::new(names)
        .map(|name| crate::server::parse_server(&name).expect("a possible value names a family"))
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

/// The flag that gave a managed server's setting.
fn server_flag(setting: ServerSetting) -> &'static str {
    match setting {
        ServerSetting::User => "--server-user",
        ServerSetting::Malloc => "--malloc",
        ServerSetting::Engine => "--engine",
        ServerSetting::DataRoot => "--server-data-root",
        ServerSetting::Pooler => "--pooler",
    }
}

/// A managed server's refused setting (of a `kind` server), naming its flag.
fn server_problem(kind: DbmsKind, p: &ServerProblem) -> UsageError {
    let flag = server_flag(p.setting);
    UsageError::new(match &p.refusal {
        Refusal::Said(m) => format!("{flag} {m}"),
        Refusal::NotADirectory(root) => format!(
            "{flag} {} is not a directory (create or mount it first)",
            root.display()
        ),
        Refusal::PoolerIsFor { pooler, servers } => format!(
            "{flag} {} is for a {servers} server, not {}",
            pooler.name(),
            kind.server_name()
        ),
    })
}

/// A target setting's refusal, naming its flag.
fn setting_error(e: SettingError) -> UsageError {
    UsageError::new(format!("{}: {}", setting_flag(&e.setting), e.message))
}

impl TargetArgs {
    /// The run's spec for `workload` on this target: checks the target flags, resolves the
    /// DBMS, the URL (parsed once; password from the URL or the environment), the DBMS's own
    /// settings and the managed server.
    pub fn run_spec(
        &self,
        output: &OutputArgs,
        workload: WorkloadSpec,
        maintenance: bool,
    ) -> Result<RunSpec, UsageError> {
        for (flag, v, min) in [
            ("--report-interval", output.report_interval, 0),
            ("--cooldown", self.cooldown, 0),
            // 0 s would give up on a managed server before it could start.
            ("--server-start-timeout", self.server_start_timeout, 1),
        ] {
            if !(min..=MAX_SECONDS).contains(&v) {
                return Err(UsageError::new(format!(
                    "{flag} {v} is out of range: expected {min}..={MAX_SECONDS} seconds"
                )));
            }
        }
        if let Some(label) = &output.label {
            crate::results::bounds::check_label("--label", label).map_err(UsageError::new)?;
        }
        for (flag, pairs) in [
            ("--sqlite-pragma", &self.db_options),
            ("--server-option", &self.server_options),
        ] {
            crate::results::bounds::check_setting_flags(flag, pairs).map_err(UsageError::new)?;
        }
        let url = match &self.url {
            Some(text) => Some(ServerUrl::parse(text, "")?),
            None => None,
        };
        let kind = self.dbms_kind(url.as_ref())?;
        if kind.embedded() {
            self.refuse_server_flags(kind)?;
        }
        if let Some(path) = &self.path {
            check_database_path(kind, path)?;
        }
        let settings = TargetSettings {
            engine: self.engine.clone(),
            options: self.db_options.clone(),
            busy_timeout_ms: self.busy_timeout_ms,
        };
        let params = kind.params(&settings).map_err(setting_error)?;
        // The password may come from the DBMS's environment variable.
        let url = url.map(|u| u.or_password_from(kind.password_env()));
        if let Some(dir) = &self.data_dir
            && !dir.is_dir()
        {
            return Err(UsageError::new(format!(
                "--data-dir {} is not a directory",
                dir.display()
            )));
        }
        let server = self.server_spec(kind, &params)?;
        if let Some(p) = server.as_ref().and_then(|s| s.pooler.as_ref()) {
            crate::server::pooler::binary()?;
            p.check(workload.connections(), "--pool-size", "--pool-mode")
                .map_err(UsageError::new)?;
        }
        let scratch = kind.embedded() && self.path.is_none();
        Ok(RunSpec {
            target: TargetSpec {
                kind,
                path: self.path.clone(),
                url,
                client_url: None,
                replica_urls: Vec::new(),
                read_from_replicas: false,
                node_urls: Vec::new(),
                clients_on_all_nodes: false,
                params,
            },
            scratch_database: scratch,
            keep_data: output.keep_data,
            out_dir: output.out.clone(),
            label: output.label.clone(),
            report_interval_s: output.report_interval,
            maintenance,
            workload,
            server,
            statements: if self.plain_sql {
                StatementMode::Plain
            } else {
                StatementMode::Prepared
            },
            drop_existing: self.drop_existing,
            write_existing: self.write_existing,
            allow_server_changes: self.allow_server_changes,
            client_threads: self.client_threads,
            client_io: self.client_io,
            per_client_series: output.per_client_series,
            prepare_only: false,
            dataset: None,
            tags: crate::spec::tags::collect(&output.tags).map_err(UsageError::new)?,
            resources: self
                .resources
                .spec(kind.embedded(), self.server.is_some())?,
            cooldown_s: self.cooldown,
            no_sampling: self.no_sampling,
        })
    }

    /// Refuses the flags that only a server (or its client connections) has, given for the
    /// embedded `kind`: they used to be ignored without a word.
    fn refuse_server_flags(&self, kind: DbmsKind) -> Result<(), UsageError> {
        let given = [
            (self.server_pid.is_some(), "--server-pid"),
            (self.server_pid_file.is_some(), "--server-pid-file"),
            (self.data_dir.is_some(), "--data-dir"),
            (self.allow_server_changes, "--allow-server-changes"),
            (self.client_threads.is_some(), "--client-threads"),
            (self.client_io.is_some(), "--client-io"),
        ];
        match given.iter().find(|(g, _)| *g) {
            Some((_, flag)) => Err(UsageError::new(format!(
                "{flag} is for a server DBMS; {kind} runs inside ibench (a thread per \
                 connection, its figures are ibench's own): drop {flag}"
            ))),
            None => Ok(()),
        }
    }

    /// The managed server to start, when --server is given.
    fn server_spec(
        &self,
        kind: DbmsKind,
        params: &crate::dbms::Params,
    ) -> Result<Option<ServerSpec>, UsageError> {
        if self.server.is_none() {
            return match self.on_node_failure {
                Some(p) => Err(UsageError::new(
                    on_node_failure(false, p, ClusterNames::FLAGS).unwrap_err(),
                )),
                None => Ok(None),
            };
        }
        let family = crate::server::require_family(kind)?;
        let problems = ServerSettings {
            family: Some(family),
            user: self.server_user.as_deref(),
            malloc: Some(self.malloc),
            params: Some(params),
            data_root: self.server_data_root.as_deref(),
            pooler: self.pooler,
        }
        .check(&mut |setting, w| eprintln!("warning: {} {w}", server_flag(setting)));
        // The first problem, in the flags' order: the config file is read once the account,
        // allocator and engine are known to be good, the data root checked after it.
        let refused = |upto: ServerSetting| match problems.iter().find(|p| p.setting <= upto) {
            Some(p) => Err(server_problem(kind, p)),
            None => Ok(()),
        };
        refused(ServerSetting::Engine)?;
        let config_text = match &self.server_config {
            Some(path) => Some(crate::bounded::read_to_string(path, 1 << 20).map_err(|e| {
                UsageError::new(format!(
                    "cannot read --server-config {}: {e}",
                    path.display()
                ))
            })?),
            None => None,
        };
        refused(ServerSetting::DataRoot)?;
        for (k, v) in &self.server_options {
            let ok = |s: &str| !s.is_empty() && !s.contains(['\n', '\r', '[', ']']);
            if !ok(k) || !ok(v) || k.contains(['=', ' ']) {
                // Shown escaped: a newline in it must not start a second line.
                let given = crate::output::escape::line(&format!("{k}={v}")).into_owned();
                return Err(UsageError::new(format!(
                    "invalid --server-option {given}: expected KEY=VALUE on one line"
                )));
            }
        }
        refused(ServerSetting::Pooler)?;
        let mut spec = ServerSpec {
            kind,
            bin_dir: self.server_bin.clone(),
            config_text,
            config_file: self.server_config.clone(),
            options: self.server_options.clone(),
            malloc: self.malloc,
            keep: self.keep_server,
            start_timeout_s: self.server_start_timeout,
            data_root: self.server_data_root.clone(),
            pooler: self.pooler.map(|kind| PoolerSpec {
                kind,
                pool_size: self.pool_size,
                pool_mode: self.pool_mode,
            }),
            user: self.server_user.clone(),
            replicas: self.replica_spec(kind)?,
            galera: self.galera_spec(kind, params)?,
            on_node_failure: Default::default(),
        };
        if let Some(p) = self.on_node_failure {
            let cluster = spec.replicas.is_some() || spec.galera.is_some();
            spec.on_node_failure =
                on_node_failure(cluster, p, ClusterNames::FLAGS).map_err(UsageError::new)?;
        }
        Ok(Some(spec))
    }

    /// `--replicas`, `--sync-replicas`, `--read-from`, checked (`server::replicas`).
    fn replica_spec(&self, kind: DbmsKind) -> Result<Option<ReplicaSpec>, UsageError> {
        let Some(count) = self.replicas else {
            return Ok(None);
        };
        let read = self.read_from == Some(ReadFrom::Replicas);
        let sync = self.sync_replicas.unwrap_or(0);
        replica_spec(kind, count, sync, read, ClusterNames::FLAGS)
            .map(Some)
            .map_err(UsageError::new)
    }

    /// `--galera`, `--client-nodes`, checked (`server::replicas`).
    fn galera_spec(
        &self,
        kind: DbmsKind,
        params: &crate::dbms::Params,
    ) -> Result<Option<GaleraSpec>, UsageError> {
        let Some(nodes) = self.galera else {
            return Ok(None);
        };
        let all = self.client_nodes != Some(ClientNodes::First);
        galera_spec(kind, params, nodes, all, ClusterNames::FLAGS)
            .map(Some)
            .map_err(UsageError::new)
    }

    /// The DBMS: --server, --dbms, else the --url scheme, else the embedded default.
    pub fn dbms_kind(&self, url: Option<&ServerUrl>) -> Result<DbmsKind, UsageError> {
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
        if let Some(kind) = self.server {
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

    /// The external server's pid: --server-pid, or the first line of --server-pid-file.
    pub fn external_pid(&self) -> Result<Option<u32>, UsageError> {
        match (&self.server_pid, &self.server_pid_file) {
            (Some(pid), _) => Ok(Some(*pid)),
            (None, Some(file)) => crate::launch::pid_from_file(file, "--server-pid-file").map(Some),
            (None, None) => Ok(None),
        }
    }

    /// Runs `spec` (built from these flags) as `ibench run` and `ibench micro` do.
    pub fn launch(&self, spec: RunSpec, output: &OutputArgs) -> anyhow::Result<()> {
        let options = self.run_options(&spec, output)?;
        crate::launch::run_to_out(spec, output.results.as_deref(), options)
    }

    /// How to run `spec` (built from these flags).
    pub fn run_options(
        &self,
        spec: &RunSpec,
        output: &OutputArgs,
    ) -> anyhow::Result<crate::launch::RunOptions> {
        Ok(crate::launch::RunOptions {
            quiet: output.quiet,
            server_pid: if spec.server.is_none() && !spec.target.kind.embedded() {
                self.external_pid()?
            } else {
                None
            },
            data_dir: self.data_dir.clone(),
            cost_per_hour: output.cost_per_hour,
            profile: self.profile,
            ..Default::default()
        })
    }
}

/// How `ibench run` and `ibench micro` name a spec field: its flag (`l0_rows` is
/// `--l0-rows`, `max_error_pct` is `--max-error-rate`).
pub fn flag_name(field: &str) -> String {
    match field {
        "max_error_pct" => "--max-error-rate".to_string(),
        other => format!("--{}", other.replace('_', "-")),
    }
}

//! The experiment file as written: TOML tables deserialized with `deny_unknown_fields`, keeping
//! the byte spans of the values later checks point at, so that every problem is reported as
//! `file:line: message`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::dbms::DbmsKind;
use crate::request::{IndexDdl, Malloc, PoolMode, Pooler, Step, TableMode};

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    /// Experiment name: the default output directory and the tag of every run.
    pub name: Spanned<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Multiplies every row count and the query-step seconds (default 1.0).
    #[serde(default)]
    pub scale: Option<Spanned<f64>>,
    /// Runs per cell (default 1).
    #[serde(default)]
    pub repeats: Option<Spanned<u32>>,
    /// Repeats until decided: after `repeats` rounds, one more at a time while a cell's
    /// throughput against the base is inconclusive, up to this many rounds (as
    /// `--until-decided --max-repeats N`).
    #[serde(default)]
    pub max_repeats: Option<Spanned<u32>>,
    /// Pause between two cells, seconds (default 0).
    #[serde(default)]
    pub cooldown_seconds: Option<Spanned<u64>>,
    /// The cell the report compares against: `target/config/allocator/setup` (default: the
    /// first cell).
    #[serde(default)]
    pub base: Option<Spanned<String>>,
    /// Let cells change settings of the servers given by URL (`url` targets), as
    /// `ibench run --allow-server-changes` does for one run: a config's options on such a target
    /// are accepted (sent as settings of ibench's own sessions), and the maintenance pause may
    /// change the server's global settings for a moment. Default false: such a config is
    /// refused. `ibench experiment --allow-server-changes` sets it.
    #[serde(default)]
    pub allow_server_changes: Option<Spanned<bool>>,
    /// Run the two cells of each round at the same time, each in a process of its own
    /// (docs/experiments.md, "Duet"); `ibench experiment --duet` sets it.
    #[serde(default)]
    pub duet: Option<Spanned<bool>>,
    /// Allocators of the managed servers (default: glibc only).
    #[serde(default)]
    pub allocators: Option<Spanned<Vec<Spanned<Malloc>>>>,
    /// Steps and their sizes, shared by every cell.
    #[serde(default)]
    pub workload: Option<Spanned<WorkloadTable>>,
    /// `[[target]]` tables.
    #[serde(rename = "target", default)]
    pub targets: Vec<TargetTable>,
    /// `[[config]]` tables (default: one config `default` with no settings).
    #[serde(rename = "config", default)]
    pub configs: Vec<ConfigTable>,
    /// `[[setup]]` tables (default: one setup `default` with the workload's sizes).
    #[serde(rename = "setup", default)]
    pub setups: Vec<SetupTable>,
}

/// `[[target]]`: a DBMS, the binaries to use and, for MariaDB, the engine; or a server
/// given by URL, which ibench does not start.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetTable {
    /// Name used in cell names.
    pub name: Spanned<String>,
    /// The DBMS, by its server name (`mariadb`, `postgres`) or name (`sqlite`); optional with
    /// `url` (its scheme names it).
    #[serde(default)]
    pub dbms: Option<Spanned<DbmsKind>>,
    /// A server ibench does not start, as `ibench run --url` takes it (password from the
    /// DBMS's environment variable, never from the file).
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    /// With `url`: the file holding the server's pid (postmaster.pid, mysqld.pid) on this host,
    /// for its CPU, IO and memory per operation (`--server-pid-file`).
    #[serde(default)]
    pub server_pid_file: Option<Spanned<String>>,
    /// With `url`: replace tables of the benchmark's names that ibench did not create on
    /// that server (`--drop-existing`; default false: a cell meeting one refuses to start,
    /// naming it). Refused on a target ibench starts or embeds (those hold only its tables).
    #[serde(default)]
    pub drop_existing: Option<Spanned<bool>>,
    /// Storage engine of the tables: innodb (default) or rocksdb; MariaDB only.
    #[serde(default)]
    pub engine: Option<Spanned<String>>,
    /// Directory holding the server binaries (default: Debian's locations, then PATH).
    #[serde(default)]
    pub bin_dir: Option<Spanned<String>>,
    /// Version the server must report (`mariadbd --version`, `postgres --version`); for
    /// PostgreSQL without `bin_dir` it also picks /usr/lib/postgresql/<version>/bin.
    #[serde(default)]
    pub version: Option<Spanned<String>>,
    /// Seconds to wait for the server to accept connections (default 120).
    #[serde(default)]
    pub start_timeout_seconds: Option<Spanned<u64>>,
    /// Directory the server's data directory is created in (a mount of the file system or
    /// device under study; relative to the experiment file); a setup's wins. With `url`: the
    /// server's own data directory, for its size and device (`--data-dir`).
    #[serde(default)]
    pub data_dir: Option<Spanned<String>>,
    /// Account the server runs as (default: `ibench-server` when ibench runs as root, else
    /// ibench's own user), as `--server-user`.
    #[serde(default)]
    pub server_user: Option<Spanned<String>>,
}

/// `[[config]]`: server settings, as a config-file fragment and/or inline options.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigTable {
    /// Name used in cell names.
    pub name: Spanned<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Another config whose fragment and options this one starts from.
    #[serde(default)]
    pub extends: Option<Spanned<String>>,
    /// Targets this config applies to (default: all).
    #[serde(default)]
    pub targets: Option<Vec<Spanned<String>>>,
    /// A config-file fragment (my.cnf or postgresql.conf lines), relative to the experiment
    /// file.
    #[serde(default)]
    pub file: Option<Spanned<String>>,
    /// A config-file fragment inline.
    #[serde(default)]
    pub text: Option<Spanned<String>>,
    /// Settings (`name = value`); pragmas for SQLite targets.
    #[serde(default)]
    pub options: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// `[[setup]]`: clients, rows and the DBMS cache.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupTable {
    /// Name used in cell names.
    pub name: Spanned<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Targets this setup applies to (default: all), as a config's `targets`: a cluster's
    /// keys that only some targets take (`galera`) go in a setup of their own.
    #[serde(default)]
    pub targets: Option<Vec<Spanned<String>>>,
    /// Clients (default: the workload's, else 2; for microbenchmarks, one client count
    /// instead of the workload's list).
    #[serde(default)]
    pub clients: Option<Spanned<usize>>,
    /// Rows per sysbench table (microbenchmarks), before `scale`.
    #[serde(default)]
    pub table_rows: Option<Spanned<u64>>,
    /// Rows per client loaded by l.i0, before `scale`.
    #[serde(default)]
    pub rows_per_client: Option<Spanned<u64>>,
    /// Rows per client of l.i1, before `scale`.
    #[serde(default)]
    pub l1_rows: Option<Spanned<u64>>,
    /// Rows per client of l.i2, before `scale`.
    #[serde(default)]
    pub l2_rows: Option<Spanned<u64>>,
    /// DBMS cache: a size (`64M`, `1G`, bytes) or a multiple of the estimated database size
    /// after the load (`0.25x`: larger than the cache; `2x`: cached by the DBMS).
    #[serde(default)]
    pub dbms_cache: Option<Spanned<String>>,
    /// Directory the server's data directory is created in (a mount of the file system or
    /// device under study; relative to the experiment file).
    #[serde(default)]
    pub data_dir: Option<Spanned<String>>,
    /// A connection pooler in front of the server (`pgbouncer`), which the clients connect
    /// through.
    #[serde(default)]
    pub pooler: Option<Spanned<Pooler>>,
    /// Server connections in the pooler's pool (default 4).
    #[serde(default)]
    pub pool_size: Option<Spanned<u32>>,
    /// `transaction` (default) or `session` pooling.
    #[serde(default)]
    pub pool_mode: Option<Spanned<PoolMode>>,
    /// A dataset saved by `ibench dataset save` (in the experiment's output directory's
    /// `datasets/`) each cell of this setup starts from instead of loading.
    #[serde(default)]
    pub dataset: Option<Spanned<String>>,
    /// The DBMS's memory cap, page cache included (`--memory-limit`): a size (`512M`) or a
    /// multiple of the estimated database size after the load (`0.25x`).
    #[serde(default)]
    pub memory_limit: Option<Spanned<String>>,
    /// IO limits of the DBMS (`--io-limit`): `riops=N,wiops=N,rbps=SIZE,wbps=SIZE`.
    #[serde(default)]
    pub io_limit: Option<Spanned<String>>,
    /// `keep` (default) or `drop-before-step` (`--os-cache`).
    #[serde(default)]
    pub os_cache: Option<Spanned<String>>,
    /// CPUs of the managed server (`--server-cpus`).
    #[serde(default)]
    pub server_cpus: Option<Spanned<String>>,
    /// CPUs of ibench's client threads (`--client-cpus`).
    #[serde(default)]
    pub client_cpus: Option<Spanned<String>>,
    /// Replicas of the managed server (`--replicas`): PostgreSQL streaming, MariaDB binlog.
    #[serde(default)]
    pub replicas: Option<Spanned<usize>>,
    /// The first K replicas are synchronous (`--sync-replicas`).
    #[serde(default)]
    pub sync_replicas: Option<Spanned<usize>>,
    /// Where the query steps read: `primary` (default) or `replicas` (`--read-from`).
    #[serde(default)]
    pub read_from: Option<Spanned<String>>,
    /// A MariaDB Galera cluster of this many nodes (`--galera`).
    #[serde(default)]
    pub galera: Option<Spanned<usize>>,
    /// Which Galera nodes the clients connect to: `all` (default) or `first`
    /// (`--client-nodes`).
    #[serde(default)]
    pub client_nodes: Option<Spanned<String>>,
    // Run conditions, over the workload's.
    /// Microbenchmarks: seconds of the post-write pause from its start (`--post-write-pause`).
    #[serde(default)]
    pub post_write_pause: Option<Spanned<u64>>,
    /// Microbenchmarks: rows `prepare` loads into each insert-random-pk table
    /// (`--random-pk-rows`), before `scale`.
    #[serde(default)]
    pub random_pk_rows: Option<Spanned<u64>>,
    /// The Insert Benchmark: concurrent scanners of the scan step (`--scan-clients`).
    #[serde(default)]
    pub scan_clients: Option<Spanned<usize>>,
    /// No once-a-second sampling during steps (`--no-sampling`), any workload.
    #[serde(default)]
    pub no_sampling: Option<Spanned<bool>>,
    /// What a replica or Galera node that dies during a step does: `fail` (default) or
    /// `continue` (`--on-node-failure`).
    #[serde(default)]
    pub on_node_failure: Option<Spanned<String>>,
}

/// Which workload an experiment's cells run (`[workload] kind`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// The Insert Benchmark (the default).
    #[default]
    InsertBenchmark,
    /// The OLTP microbenchmarks (`ibench micro`).
    Micro,
    /// The TPC-C-like workload (`ibench tpcc`).
    Tpcc,
}

/// `clients`: one count (the Insert Benchmark; a microbenchmark run at that count) or a list
/// (the microbenchmarks' client counts). Serialized as given, so an Insert Benchmark layer is
/// what it always was.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Clients {
    /// One count.
    One(usize),
    /// Several.
    Many(Vec<usize>),
}

impl Clients {
    /// The counts, in order.
    pub fn counts(&self) -> Vec<usize> {
        match self {
            Clients::One(n) => vec![*n],
            Clients::Many(v) => v.clone(),
        }
    }
}

/// `[workload]`: the parameters shared by every cell (unset: `ibench run`'s or `ibench
/// micro`'s defaults), and how the runs send and show them. For the Insert Benchmark,
/// serialized by the spec's field names, without the unset ones, the run settings and the
/// microbenchmarks' fields, it is the file's layer of
/// [`crate::request::assemble`].
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadTable {
    /// `insert-benchmark` (default), `micro` or `tpcc`.
    #[serde(default, skip_serializing)]
    pub kind: Option<WorkloadKind>,
    /// Microbenchmarks by name (`ibench micro --list`), a name without its range length for
    /// all of them, or `all`: an array, or one comma-separated string.
    #[serde(default, deserialize_with = "names::deserialize", skip_serializing)]
    pub benchmarks: Option<Vec<String>>,
    /// Sysbench tables of the microbenchmarks.
    #[serde(default, skip_serializing)]
    pub tables: Option<usize>,
    /// Rows per sysbench table, before `scale`.
    #[serde(default, skip_serializing)]
    pub table_rows: Option<u64>,
    /// Seconds of each microbenchmark at each client count, before `scale`.
    #[serde(default, skip_serializing)]
    pub seconds: Option<u64>,
    /// Seconds of each step's warm-up, not counted (microbenchmarks and TPC-C at each client
    /// count; the Insert Benchmark's l.i1, l.i2, qrN and qpN).
    #[serde(default, skip_serializing)]
    pub warmup: Option<u64>,
    /// Warehouses per table set (TPC-C; sysbench-tpcc's --scale).
    #[serde(default, skip_serializing)]
    pub warehouses: Option<usize>,
    /// The TPC-C mix: `standard` or `sysbench`.
    #[serde(default, skip_serializing)]
    pub mix: Option<crate::request::Mix>,
    /// Threads of the TPC-C load.
    #[serde(default, skip_serializing)]
    pub load_threads: Option<usize>,
    /// sysbench-tpcc's foreign keys (default true).
    #[serde(default, skip_serializing)]
    pub foreign_keys: Option<bool>,
    /// TPC-C transactions per second over all clients (`ibench tpcc --rate`).
    #[serde(default, skip_serializing)]
    pub rate: Option<u64>,
    /// Steps in order: an array, or one comma-separated string.
    #[serde(
        default,
        deserialize_with = "steps::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    pub steps: Option<Vec<Step>>,
    /// Clients (a setup may override); a list of counts for the microbenchmarks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<Clients>,
    /// Rows per client loaded by l.i0 (a setup may override), before `scale`.
    #[serde(
        default,
        rename(deserialize = "rows_per_client"),
        skip_serializing_if = "Option::is_none"
    )]
    pub l0_rows: Option<u64>,
    /// Rows per client of l.i1, before `scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_rows: Option<u64>,
    /// Rows per client of l.i2, before `scale` (default l1_rows / 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_rows: Option<u64>,
    /// Rows per INSERT in l.i0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l0_batch: Option<usize>,
    /// Rows per INSERT and DELETE in l.i1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_batch: Option<usize>,
    /// Rows per INSERT and DELETE in l.i2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_batch: Option<usize>,
    /// Rows per INSERT and DELETE of the background writer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_batch: Option<usize>,
    /// Seconds per query step, before `scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_seconds: Option<u64>,
    /// Delete as many rows as are inserted (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletes: Option<bool>,
    /// Secondary indexes (0-3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary_indexes: Option<usize>,
    /// per-client or shared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_mode: Option<TableMode>,
    /// Table name prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_prefix: Option<String>,
    /// separate or combined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_ddl: Option<IndexDdl>,
    /// Minimum length of `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_min: Option<usize>,
    /// Maximum length of `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_max: Option<usize>,
    /// Random share of `data`, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_random_pct: Option<u8>,
    /// cashregisterid range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cashregisters: Option<u32>,
    /// customerid range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customers: Option<u32>,
    /// productid range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub products: Option<u32>,
    /// price range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_price: Option<Spanned<f64>>,
    /// Seed of the generated values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Tries per statement on transient errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tries: Option<u32>,
    /// Reconnects per client thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reconnects: Option<u32>,
    /// Percent of retried statements above which a step fails (`max_error_rate`).
    #[serde(
        default,
        rename(deserialize = "max_error_rate"),
        skip_serializing_if = "Option::is_none"
    )]
    pub max_error_pct: Option<Spanned<f64>>,
    /// Run the maintenance pause between load and query steps (default true).
    #[serde(default, skip_serializing)]
    pub maintenance: Option<bool>,
    /// Plain SQL text instead of prepared statements.
    #[serde(default, skip_serializing)]
    pub plain_sql: Option<bool>,
    /// Progress line every N seconds (0: progress bar only).
    #[serde(default, skip_serializing)]
    pub report_interval: Option<u64>,
    /// Seconds of pause before every step but the first, within a cell (`--cooldown`; the
    /// pause between cells is the top level's `cooldown_seconds`).
    #[serde(default, skip_serializing)]
    pub cooldown: Option<u64>,
    // Run conditions a setup may give too (the setup's win).
    /// Microbenchmarks: seconds of the post-write pause from its start (`--post-write-pause`).
    #[serde(default, skip_serializing)]
    pub post_write_pause: Option<Spanned<u64>>,
    /// Microbenchmarks: rows `prepare` loads into each insert-random-pk table
    /// (`--random-pk-rows`), before `scale`.
    #[serde(default, skip_serializing)]
    pub random_pk_rows: Option<Spanned<u64>>,
    /// The Insert Benchmark: concurrent scanners of the scan step (`--scan-clients`).
    #[serde(default, skip_serializing)]
    pub scan_clients: Option<Spanned<usize>>,
    /// No once-a-second sampling during steps (`--no-sampling`), any workload.
    #[serde(default, skip_serializing)]
    pub no_sampling: Option<Spanned<bool>>,
}

/// `benchmarks`: given as `["point-query", "scan"]` or `"point-query,scan"`.
mod names {
    use serde::{Deserialize, Deserializer};

    /// An array of strings, or one comma-separated string.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Names {
        One(String),
        Many(Vec<String>),
    }

    /// Deserializes an optional name list from an array or a comma-separated string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
        Ok(Some(match Names::deserialize(d)? {
            Names::One(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
            Names::Many(v) => v,
        }))
    }
}

/// `steps`: given as `["l.i0", "l.x"]` or `"l.i0,l.x"`.
mod steps {
    use std::fmt;

    use serde::Deserializer;

    use super::Step;

    /// Deserializes an optional step list from an array or a comma-separated string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Step>>, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Vec<Step>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of step names, or a comma-separated string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Vec<Step>, E> {
                s.split(',')
                    .map(|p| p.trim().parse::<Step>().map_err(E::custom))
                    .collect()
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Vec<Step>, A::Error> {
                let mut steps = Vec::new();
                while let Some(s) = seq.next_element::<Step>()? {
                    steps.push(s);
                }
                Ok(steps)
            }
        }
        d.deserialize_any(V).map(Some)
    }
}

/// A text file problems point into: the experiment file or a config fragment.
#[derive(Clone, Debug)]
pub struct Source {
    /// Path as the user gave it (or as resolved relative to the experiment file).
    pub path: PathBuf,
    /// Its content.
    pub text: String,
}

impl Source {
    /// Reads `path` (at most [`super::limits::MAX_FILE_BYTES`]).
    pub fn read(path: &Path) -> std::io::Result<Self> {
        Ok(Source {
            path: path.to_path_buf(),
            text: crate::bounded::read_to_string(path, super::limits::MAX_FILE_BYTES)?,
        })
    }

    /// 1-based line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// `path:line` of byte `offset`.
    pub fn at(&self, offset: usize) -> String {
        format!("{}:{}", self.path.display(), self.line_of(offset))
    }

    /// `path:line` of the start of `span`.
    pub fn at_span(&self, span: std::ops::Range<usize>) -> String {
        self.at(span.start)
    }
}

/// One problem with the experiment: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `file:line`.
    pub at: String,
    /// What is wrong, and what is allowed.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

/// Parses the experiment file; a syntax error, an unknown key or a wrong type is one problem,
/// named by its key when the message does not name it (`no_sampling: invalid type: ...`).
pub fn parse(source: &Source) -> Result<ExperimentFile, Problem> {
    toml::from_str(&source.text).map_err(|e| {
        let message = e.message().trim().replace('\n', " ");
        let key = e.span().and_then(|span| key_at(&source.text, span.start));
        Problem {
            at: match e.span() {
                Some(span) => source.at_span(span),
                None => format!("{}", source.path.display()),
            },
            message: match key {
                Some(k) if !message.contains(k) => format!("{k}: {message}"),
                _ => message,
            },
        }
    })
}

/// The key a `key = value` line holding byte `offset` sets, if the line is one.
fn key_at(text: &str, offset: usize) -> Option<&str> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let (key, _) = text[start..].split_once('=')?;
    let key = key.trim();
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    bare.then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> Source {
        Source {
            path: PathBuf::from("x.toml"),
            text: text.to_string(),
        }
    }

    #[test]
    fn unknown_key_is_reported_at_its_line() {
        let p = parse(&src(
            "name = \"e\"\n\n[[target]]\nname = \"t\"\ndbms = \"sqlite\"\nbogus = 1\n",
        ))
        .unwrap_err();
        assert_eq!(p.at, "x.toml:6");
        assert!(p.message.contains("unknown field `bogus`"), "{}", p.message);
    }

    #[test]
    fn steps_as_string_or_array() {
        let f = parse(&src(
            "name = \"e\"\n[workload]\nsteps = \"l.i0, l.x\"\n[[target]]\nname = \"t\"\ndbms = \"sqlite\"\n",
        ))
        .unwrap();
        let steps = f.workload.unwrap().into_inner().steps.unwrap();
        assert_eq!(steps, vec![Step::LoadInitial, Step::CreateIndexes]);
        let f = parse(&src("name = \"e\"\n[workload]\nsteps = [\"qr100\"]\n")).unwrap();
        assert_eq!(
            f.workload.unwrap().into_inner().steps.unwrap(),
            vec![Step::QueryRange(100)]
        );
        let p = parse(&src("name = \"e\"\n[workload]\nsteps = [\"l.i9\"]\n")).unwrap_err();
        assert_eq!(p.at, "x.toml:3");
        assert!(p.message.contains("unknown step"), "{}", p.message);
    }

    #[test]
    fn a_wrong_type_names_its_key() {
        let p = parse(&src("name = \"e\"\n[workload]\nno_sampling = \"yes\"\n")).unwrap_err();
        assert_eq!(p.at, "x.toml:3");
        assert!(
            p.message.starts_with("no_sampling: invalid type"),
            "{}",
            p.message
        );
    }

    #[test]
    fn bad_allocator_names_its_line() {
        let p = parse(&src(
            "name = \"e\"\nallocators = [\"glibc\",\n \"mimalloc\"]\n",
        ))
        .unwrap_err();
        assert_eq!(p.at, "x.toml:3");
        assert!(p.message.contains("mimalloc"), "{}", p.message);
    }
}

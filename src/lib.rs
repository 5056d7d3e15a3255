//! ibench: a database benchmark harness for performance engineers: the Insert Benchmark and the
//! OLTP microbenchmarks against embedded SQLite and RocksDB, PostgreSQL and MySQL-family servers
//! (given by URL or started by ibench), with per-operation HDR histograms, per-second stall
//! series, the cost of each operation, and results that reports and comparisons read back.
//!
//! How the pieces fit:
//!
//! * [`spec`] — what to run ([`spec::RunSpec`]), validated before anything starts.
//! * [`dbms`] — one module per DBMS behind [`dbms::Dbms`] and its connections (the Insert
//!   Benchmark's and the microbenchmarks'), described in a registry ([`dbms::Descriptor`]); all
//!   SQL lives there.
//! * [`workload`] — which operations, on which keys, in which steps; no SQL, no threads.
//! * [`runner`] — step orchestration, client threads, the client loop, the rate limiter, the
//!   cost sampler.
//! * [`metrics`] — the per-thread recorder, histograms, step summaries.
//! * [`results`] — the versioned JSON model, its file, the results database.
//! * [`launch`] — one run from its request: the target prepared (a scratch database made, a
//!   managed server started), the workload executed, what was made cleaned up.
//! * [`group`] — one run from several client hosts: the meeting point in the results store,
//!   each host's membership around the steps, the hosts' parts merged into one run.
//! * [`report`] — the terminal summary, HTML / Markdown / JSON reports, `compare`.
//! * [`server`] — managed throwaway PostgreSQL and MariaDB servers (and a pooler), and
//!   PostgreSQL builds installed from the npm registry.
//! * [`experiment`] — configuration matrices from a TOML file, run cell by cell, resumable.
//! * [`safe_fs`] — every file ibench writes, created so that a shared `--out` is safe.
//! * [`dataset`] — prepared datasets: a loaded database saved under a name and restored
//!   into the runs that start from it.
//! * [`doctor`] — what this host can do: each feature ibench may use, found or not, why, and
//!   what installs it (`ibench doctor`; a cheap form goes into each run's environment).
//! * [`hide`] — the `IBENCH_TEST_HIDE` test hook: files that count as absent.
//! * [`cli`] — one file per subcommand.

pub mod bounded;
pub mod cli;
pub mod dataset;
pub mod dbms;
pub mod doctor;
pub mod error;
pub mod experiment;
pub mod group;
pub mod hide;
pub mod history;
pub mod interrupt;
pub mod launch;
pub mod metrics;
pub mod mux;
pub mod output;
pub mod report;
pub mod request;
pub mod results;
pub mod runner;
pub mod safe_fs;
pub mod serde_skip;
pub mod server;
pub mod workload;

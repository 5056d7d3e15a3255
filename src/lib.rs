//! ibench: a database benchmark harness for performance engineers: the Insert Benchmark (and,
//! later, OLTP microbenchmarks) against embedded SQLite, RocksDB, PostgreSQL and MySQL-family
//! servers, with per-operation HDR histograms, per-second stall series and results that reports
//! read back.
//!
//! How the pieces fit:
//!
//! * [`spec`] — what to run ([`spec::RunSpec`]), validated before anything starts.
//! * [`dbms`] — one trait pair per target ([`dbms::Dbms`], [`dbms::Connection`]); all SQL lives
//!   there.
//! * [`workload`] — which operations, on which keys, in which steps; no SQL, no threads.
//! * [`runner`] — client threads, the rate limiter, step orchestration.
//! * [`metrics`] — the per-thread recorder, histograms, step summaries.
//! * [`results`] — the versioned JSON model and its file.
//! * [`report`] — the terminal summary (Markdown/HTML reports come with the results store).
//! * [`server`] — managed throwaway PostgreSQL and MariaDB servers.
//! * [`experiment`] — configuration matrices from a TOML file, run cell by cell, resumable.
//! * [`safe_fs`] — every file ibench writes, created so that a shared `--out` is safe.
//! * [`cli`] — one file per subcommand.

pub mod bounded;
pub mod cli;
pub mod dbms;
pub mod error;
pub mod experiment;
pub mod interrupt;
pub mod metrics;
pub mod mux;
pub mod output;
pub mod report;
pub mod results;
pub mod run;
pub mod runner;
pub mod safe_fs;
pub mod server;
pub mod spec;
pub mod workload;

//! Command-line interface: one file per subcommand, each turning its arguments into a spec and
//! calling the library.

pub mod argv;
pub mod compare;
pub mod experiment;
pub mod export;
pub mod host;
pub mod import;
pub mod list;
pub mod micro;
pub mod report;
pub mod run;
pub mod server;
pub mod show;
pub mod target;

use clap::{Parser, Subcommand};

/// ibench: the Insert Benchmark and OLTP microbenchmarks for database performance engineers.
#[derive(Debug, Parser)]
#[command(name = "ibench", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the Insert Benchmark against one target (default: embedded SQLite).
    Run(Box<run::RunArgs>),
    /// Run OLTP microbenchmarks (point queries, ranges, scans, sysbench transactions, updates,
    /// deletes, inserts on sysbench-style tables) at several client counts against one target.
    Micro(Box<micro::MicroArgs>),
    /// List the runs in the results database.
    List(list::ListArgs),
    /// Show one run's summary.
    Show(show::ShowArgs),
    /// Add results documents (JSON, e.g. from another machine) to the results database.
    Import(import::ImportArgs),
    /// Write one run as JSON, or its per-step figures as CSV, to stdout.
    Export(export::ExportArgs),
    /// Report on stored runs: HTML (default), Markdown or JSON, relative to a base.
    Report(report::ReportArgs),
    /// Compare two runs or labels step by step, with significance.
    Compare(compare::CompareArgs),
    /// Run a configuration matrix from a TOML file on managed servers, resumably.
    Experiment(experiment::ExperimentArgs),
    /// Install, list and remove server builds (PostgreSQL releases) for studies across
    /// versions.
    Server(server::ServerArgs),
    /// The hosts of the stored runs (CPU, cores, memory) and their prices per hour.
    Host(host::HostArgs),
}

/// Where the results database is.
#[derive(Debug, clap::Args)]
pub struct StoreArgs {
    /// Results database: an SQLite file, or a postgres:// URL (password in PGPASSWORD, or
    /// the URL, where `ps` shows it until ibench has parsed its arguments).
    #[arg(long, value_name = "FILE|URL", default_value = crate::results::store::DEFAULT_PATH)]
    pub results: std::path::PathBuf,
}

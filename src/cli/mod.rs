//! Command-line interface: one file per subcommand, each turning its arguments into a spec and
//! calling the library.

pub mod export;
pub mod import;
pub mod list;
pub mod run;
pub mod show;

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
    /// List the runs in the results database.
    List(list::ListArgs),
    /// Show one run's summary.
    Show(show::ShowArgs),
    /// Add results documents (JSON, e.g. from another machine) to the results database.
    Import(import::ImportArgs),
    /// Write one run as JSON, or its per-step figures as CSV, to stdout.
    Export(export::ExportArgs),
}

/// Where the results database is.
#[derive(Debug, clap::Args)]
pub struct StoreArgs {
    /// Results database (SQLite file).
    #[arg(long, value_name = "FILE", default_value = crate::results::store::DEFAULT_PATH)]
    pub results: std::path::PathBuf,
}

//! Command-line interface: one file per subcommand, each turning its arguments into a spec and
//! calling the library.

pub mod run;

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
}

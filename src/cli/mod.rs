//! Command-line interface: one file per subcommand, each turning its arguments into a spec and
//! calling the library.

pub mod argv;
pub mod compare;
mod compare_history;
pub mod dataset;
pub mod doctor;
pub mod experiment;
pub mod export;
pub mod flags;
pub mod history;
pub mod host;
pub mod import;
pub mod list;
pub mod micro;
pub mod report;
pub mod run;
pub mod server;
pub mod show;
pub mod tpcc;

use std::path::Path;

use clap::{Parser, Subcommand};

use crate::error::UsageError;

/// ibench: the Insert Benchmark and OLTP microbenchmarks for database performance engineers.
#[derive(Debug, Parser)]
#[command(
    name = "ibench",
    version,
    about,
    long_about = None,
    after_help = "Exit codes: 0 ok; 1 failed (results so far saved); 2 bad input; 3 a gate found a \
                  regression (history --check-last, compare --fail-on-regression); 130 / 143 \
                  interrupted by SIGINT / SIGTERM."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The command line, parsed. As [`Parser::parse`], except that clap's error for a value holding
/// a control character (a newline in `--server-option`) shows it escaped, so that the error
/// is not broken over lines, or a terminal sequence sent, by what the user typed.
pub fn parse_args() -> Cli {
    use clap::error::ContextValue;
    let e = match Cli::try_parse() {
        Ok(cli) => return cli,
        Err(e) => e,
    };
    let mut raw: Vec<String> = e
        .context()
        .flat_map(|(_, v)| match v {
            ContextValue::String(s) => vec![s.clone()],
            ContextValue::Strings(v) => v.clone(),
            _ => Vec::new(),
        })
        .filter(|s| crate::output::escape::line(s) != s.as_str())
        .collect();
    if raw.is_empty() || !e.use_stderr() {
        e.exit()
    }
    // Longest first: a value containing another is escaped whole.
    raw.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut text = e.render().to_string();
    for s in &raw {
        text = text.replace(s.as_str(), &crate::output::escape::line(s));
    }
    eprint!("{text}");
    std::process::exit(e.exit_code())
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the Insert Benchmark against one target (default: embedded SQLite).
    Run(Box<run::RunArgs>),
    /// Run OLTP microbenchmarks (point queries, ranges, scans, sysbench transactions, updates,
    /// deletes, inserts on sysbench-style tables) at several client counts against one target.
    Micro(Box<micro::MicroArgs>),
    /// Run a TPC-C-like workload compatible with sysbench-tpcc (its nine tables and data, the
    /// five transactions, tpmC, consistency checks) at several client counts.
    Tpcc(Box<tpcc::TpccArgs>),
    /// Prepared datasets: save the database a --prepare-only run left under a name, list
    /// them, remove one (runs start from one with --from-dataset).
    Dataset(dataset::DatasetCommandArgs),
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
    /// The runs of one configuration over time: figures per step, change points (E-divisive
    /// means), a CI gate on the newest runs (--check-last N exits 3 on a regression).
    History(history::HistoryArgs),
    /// Run a configuration matrix from a TOML file on managed servers, resumably.
    Experiment(experiment::ExperimentArgs),
    /// Install, list and remove server builds (PostgreSQL releases) for studies across
    /// versions.
    Server(server::ServerArgs),
    /// The hosts of the stored runs (CPU, cores, memory) and their prices per hour.
    Host(host::HostArgs),
    /// What this host can do: per feature ibench may use (server binaries, perf, cgroups,
    /// io_uring, sysbench, ...), available or not, why, and the Debian command that installs
    /// it. Exits 0.
    Doctor(doctor::DoctorArgs),
}

/// Where the results database is.
#[derive(Debug, clap::Args)]
pub struct StoreArgs {
    /// Results database: an SQLite file, or a postgres:// URL (password in PGPASSWORD, or
    /// the URL, where `ps` shows it until ibench has parsed its arguments).
    #[arg(long, value_name = "FILE|URL", default_value = crate::results::store::DEFAULT_PATH)]
    pub results: std::path::PathBuf,
}

impl Command {
    /// The `--results` the command was given, if it takes one.
    pub fn results(&self) -> Option<&Path> {
        match self {
            Command::Run(a) => a.output.results.as_deref(),
            Command::Micro(a) => a.output.results.as_deref(),
            Command::Tpcc(a) => a.output.results.as_deref(),
            Command::Experiment(a) => a.results.as_deref(),
            Command::List(a) => Some(&a.store.results),
            Command::Show(a) => Some(&a.store.results),
            Command::Import(a) => Some(&a.store.results),
            Command::Export(a) => Some(&a.store.results),
            Command::Report(a) => Some(&a.store.results),
            Command::Compare(a) => Some(&a.store.results),
            Command::History(a) => Some(&a.store.results),
            Command::Host(a) => Some(a.action.store()),
            Command::Doctor(a) => a.results.as_deref(),
            Command::Server(_) | Command::Dataset(_) => None,
        }
    }

    /// Checks what the commands share, before one starts and creates anything: `--results`
    /// names a file or a PostgreSQL database (any other `scheme://` is refused, naming the
    /// scheme alone).
    pub fn check(&self) -> Result<(), UsageError> {
        match self.results() {
            Some(path) => crate::results::store::location::check(path),
            None => Ok(()),
        }
    }
}

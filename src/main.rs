//! The `ibench` binary: parse the command line, dispatch, map errors to exit codes.

use std::process::ExitCode;

use clap::Parser;
use ibench::cli::{Cli, Command};
use ibench::error::{EXIT_OK, exit_code};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Passwords in --url / --results leave `ps` now that clap has its own copy.
    ibench::cli::argv::hide_passwords();
    let result = match &cli.command {
        Command::Run(args) => ibench::cli::run::execute(args),
        Command::List(args) => ibench::cli::list::execute(args),
        Command::Micro(args) => ibench::cli::micro::execute(args),
        Command::Show(args) => ibench::cli::show::execute(args),
        Command::Import(args) => ibench::cli::import::execute(args),
        Command::Export(args) => ibench::cli::export::execute(args),
        Command::Report(args) => ibench::cli::report::execute(args),
        Command::Compare(args) => ibench::cli::compare::execute(args),
        Command::Experiment(args) => ibench::cli::experiment::execute(args),
    };
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(err) => {
            // Messages may quote stored text (labels of imported runs): escaped, see
            // output::escape.
            let message = format!("{err:#}");
            eprintln!("error: {}", ibench::output::escape::text(&message));
            ExitCode::from(exit_code(&err))
        }
    }
}

//! The `ibench` binary: parse the command line, dispatch, map errors to exit codes.

use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;

use ibench::cli::Command;
use ibench::error::{EXIT_OK, exit_code};
use ibench::output::stdout;

fn dispatch(command: &Command) -> anyhow::Result<()> {
    command.check()?;
    match command {
        Command::Run(args) => ibench::cli::run::execute(args),
        Command::List(args) => ibench::cli::list::execute(args),
        Command::Dataset(args) => ibench::cli::dataset::execute(args),
        Command::Micro(args) => ibench::cli::micro::execute(args),
        Command::Tpcc(args) => ibench::cli::tpcc::execute(args),
        Command::Show(args) => ibench::cli::show::execute(args),
        Command::Import(args) => ibench::cli::import::execute(args),
        Command::Export(args) => ibench::cli::export::execute(args),
        Command::Report(args) => ibench::cli::report::execute(args),
        Command::Compare(args) => ibench::cli::compare::execute(args),
        Command::History(args) => ibench::cli::history::execute(args),
        Command::Experiment(args) => ibench::cli::experiment::execute(args),
        Command::Server(args) => ibench::cli::server::execute(args),
        Command::Host(args) => ibench::cli::host::execute(args),
        Command::Doctor(args) => ibench::cli::doctor::execute(args),
    }
}

fn main() -> ExitCode {
    // A closed stdout (`ibench export RUN | head`) ends a command quietly with exit 0, whether
    // it writes through output::stdout (an error) or with print! (a panic, silenced by the
    // hook and caught here after the command's clean-up ran as the panic unwound).
    stdout::install_hook();
    // A guard that sets a server's setting back if this ibench's parent is killed (see
    // dbms::mysql::guard): not a command for users, so not in the parser.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == ibench::dbms::mysql::guard::COMMAND)
    {
        return ibench::dbms::mysql::guard::serve();
    }
    let cli = ibench::cli::parse_args();
    // Passwords in --url / --results leave `ps` now that clap has its own copy.
    ibench::cli::argv::hide_passwords();
    let result = match panic::catch_unwind(AssertUnwindSafe(|| dispatch(&cli.command))) {
        Ok(result) => result,
        Err(_) if stdout::print_panicked() => return ExitCode::from(EXIT_OK),
        Err(payload) => panic::resume_unwind(payload),
    };
    match result {
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(err) if stdout::is_closed(&err) => ExitCode::from(EXIT_OK),
        Err(err) => {
            // Messages may quote stored text (labels of imported runs): escaped, see
            // output::escape.
            let message = format!("{err:#}");
            eprintln!("error: {}", ibench::output::escape::text(&message));
            ExitCode::from(exit_code(&err))
        }
    }
}

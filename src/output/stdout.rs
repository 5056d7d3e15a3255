//! Writing to stdout when the reader may go away.
//!
//! `ibench export RUN | head -c 200` closes the pipe before ibench has written everything: for
//! a command-line tool that is a normal end of output, not an error. Subcommands write through
//! [`print`], which turns a closed pipe into [`StdoutClosed`]; `main` ends such a command
//! quietly with exit code 0, as ripgrep does. `print!` would panic instead, so [`install_hook`]
//! keeps a `print!` left anywhere from printing a panic message for it (see `main`).

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Stdout is a pipe whose reader has gone (EPIPE): the output was cut short on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdoutClosed;

impl fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stdout closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// Set once a write to stdout found the pipe closed (by [`print`] or a `print!` panic).
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Set by the hook when a `print!` panicked on a closed pipe.
static PRINT_PANICKED: AtomicBool = AtomicBool::new(false);

/// Whether a write to stdout has found the pipe closed.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Whether a `print!` panicked because stdout was a closed pipe (the panic `main` catches is
/// that one, not a bug).
pub fn print_panicked() -> bool {
    PRINT_PANICKED.load(Ordering::Relaxed)
}

/// Whether `err` is, or was caused by, a closed stdout. Only [`StdoutClosed`] counts: a
/// broken pipe elsewhere (a DBMS connection) is a real error.
pub fn is_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<StdoutClosed>())
}

/// Writes `text` to stdout and flushes it. A closed pipe is [`StdoutClosed`] (and every later
/// call returns it without writing); other failures are errors naming stdout.
pub fn print(text: &str) -> anyhow::Result<()> {
    if closed() {
        return Err(StdoutClosed.into());
    }
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Err(StdoutClosed.into())
        }
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}

/// Writes `text` to stdout when it can: for output that comes after the work is done and saved
/// (`ibench run`'s summary), whose loss must not change the outcome.
pub fn print_or_drop(text: &str) {
    let _ = print(text);
}

/// Installs a panic hook that stays silent for the panic of a `print!` into a closed pipe
/// (recording it for [`print_panicked`]) and reports every other panic as before.
pub fn install_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            CLOSED.store(true, Ordering::Relaxed);
            PRINT_PANICKED.store(true, Ordering::Relaxed);
            return;
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_stdout_counts() {
        assert!(is_closed(&anyhow::Error::new(StdoutClosed).context("x")));
        let socket = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(!is_closed(&socket.context("server connection")));
        assert!(!is_closed(&anyhow::anyhow!("disk full")));
    }
}

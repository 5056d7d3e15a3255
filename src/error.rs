//! Errors the user must fix, and the exit codes ibench returns.
//!
//! Everything else is an `anyhow::Error` with context; `main` prints the chain on one line.

use std::fmt;

/// Exit code of a successful run.
pub const EXIT_OK: u8 = 0;
/// Exit code when a run failed (DBMS error, I/O error) after it started.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for bad input: flags, files, URLs.
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a gate that found a regression (`ibench history --check-last`, `ibench
/// compare --fail-on-regression`): the command itself worked.
pub const EXIT_REGRESSION: u8 = 3;
/// Exit code after SIGINT (results so far are written); SIGTERM gives 143 (128 + 15).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Bad input: a value the user gave is not allowed. Its message is one line that names the
/// value and says what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(String);

impl UsageError {
    /// A usage error with this message.
    pub fn new(msg: impl Into<String>) -> Self {
        UsageError(msg.into())
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The run was stopped by a signal after its results were saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// A gate found regressions: the command worked, and says which on stdout. Its message
/// counts them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegressionFound(pub String);

impl fmt::Display for RegressionFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RegressionFound {}

/// The exit code for `err`: 3 for a regression a gate found, 2 for bad input, 128 + signal for an interrupt (130 SIGINT, 143
/// SIGTERM), 1 otherwise.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.is::<UsageError>()) {
        EXIT_USAGE
    } else if err.chain().any(|e| e.is::<RegressionFound>()) {
        EXIT_REGRESSION
    } else if err.chain().any(|e| e.is::<Interrupted>()) {
        match crate::interrupt::signal() {
            None => EXIT_INTERRUPTED,
            Some(sig) => (128 + sig).clamp(0, 255) as u8,
        }
    } else {
        EXIT_FAILED
    }
}

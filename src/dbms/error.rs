//! Errors from a DBMS and what they mean for the client that got one: try again, reconnect,
//! or fail the step. Each DBMS's descriptor classifies its own client library's errors
//! (`kind.rs`: `error_kind`).

/// What an error from a DBMS means for the client that got it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Try the statement again: deadlock, serialization failure, lock wait timeout, busy,
    /// too many connections.
    Transient,
    /// The connection is gone: reconnect, then try again.
    ConnectionLost,
    /// Anything else: the step fails.
    Fatal,
}

/// An error from a DBMS as ibench's own clients report it: its text (what was done, on which
/// table, the server's message and code) and what it means for the client.
#[derive(Debug)]
pub struct DbError {
    /// What the error means for the client.
    pub kind: ErrorKind,
    /// The error, for the user.
    pub message: String,
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

impl From<std::io::Error> for DbError {
    fn from(e: std::io::Error) -> Self {
        DbError {
            kind: ErrorKind::ConnectionLost,
            message: format!("connection to the server failed: {e}"),
        }
    }
}

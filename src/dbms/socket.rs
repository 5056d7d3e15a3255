//! The blocking socket of ibench's own wire clients (`postgres/wire.rs`, `mysql/wire.rs`): TCP (with
//! Nagle's algorithm off, set by whoever connects) or a Unix socket.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

/// A connected socket.
pub enum Socket {
    /// TCP.
    Tcp(TcpStream),
    /// A Unix-domain socket.
    Unix(UnixStream),
}

impl Socket {
    /// Reads what is there (blocking until something is).
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
        }
    }

    /// Writes all of `buf`.
    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.write_all(buf),
            Socket::Unix(s) => s.write_all(buf),
        }
    }
}

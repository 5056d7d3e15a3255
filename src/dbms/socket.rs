//! The socket of ibench's own wire clients (`postgres/wire.rs`, `mysql/wire.rs`): TCP (with
//! Nagle's algorithm off, set by whoever connects) or a Unix socket.
//!
//! On a thread of its own a client blocks in `send` and `recv`. As a task of a multiplexed
//! client thread (`crate::mux`) what it writes is queued and goes out with the next read, the
//! send and the receive submitted together, and the task waits for the reply while its
//! thread serves other connections.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

/// A connected stream.
pub enum Stream {
    /// TCP.
    Tcp(TcpStream),
    /// A Unix-domain socket.
    Unix(UnixStream),
}

/// A connected socket.
pub struct Socket {
    stream: Stream,
    /// Written as a task, not sent yet: goes out with the next read.
    queued: Vec<u8>,
}

impl Socket {
    /// A TCP socket.
    pub fn tcp(s: TcpStream) -> Self {
        Socket {
            stream: Stream::Tcp(s),
            queued: Vec::new(),
        }
    }

    /// A Unix-domain socket.
    pub fn unix(s: UnixStream) -> Self {
        Socket {
            stream: Stream::Unix(s),
            queued: Vec::new(),
        }
    }

    /// True for a Unix-domain socket.
    pub fn is_unix(&self) -> bool {
        matches!(self.stream, Stream::Unix(_))
    }

    fn fd(&self) -> RawFd {
        match &self.stream {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }

    /// Reads what is there (waiting until something is), having sent what was queued.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if crate::mux::in_task() {
            let fd = self.fd();
            return crate::mux::transfer(fd, &mut self.queued, buf);
        }
        self.send_queued()?;
        match &mut self.stream {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }

    /// Writes all of `buf` (as a task: queues it for the next read).
    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if crate::mux::in_task() {
            self.queued.extend_from_slice(buf);
            return Ok(());
        }
        self.send_queued()?;
        self.send(buf)
    }

    /// Sends what was queued and not sent (a message that needs no reply, before closing).
    pub fn send_queued(&mut self) -> io::Result<()> {
        if self.queued.is_empty() {
            return Ok(());
        }
        let queued = std::mem::take(&mut self.queued);
        self.send(&queued)
    }

    fn send(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.stream {
            Stream::Tcp(s) => s.write_all(buf),
            Stream::Unix(s) => s.write_all(buf),
        }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // A goodbye written as a task (or anything else left queued) still goes out.
        let _ = self.send_queued();
        // Its descriptor's number may come back for another socket of this task.
        crate::mux::closing(self.fd());
    }
}

//! Whether the cluster's nodes answer: a thread per node opens a fresh TCP connection to its
//! SQL port every [`PROBE_EVERY`] and waits for an answer, at most [`PROBE_TIMEOUT`] for
//! each step. PostgreSQL: the one-byte answer to an SSLRequest, which the postmaster's child
//! for the connection sends (no login, nothing logged). MariaDB: a login as root and a ping
//! (COM_PING, no statement), as a connection closed after the server's greeting without a
//! login is logged as an aborted connection (a warning each time). A node with no answer
//! for [`SILENT_AFTER`] (and at least two probes that failed meanwhile) is silent: its
//! process lives but does not serve (stopped, hung). The threads run apart from the step's
//! coordinator, which only reads what they found.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often each node is probed.
pub const PROBE_EVERY: Duration = Duration::from_millis(1500);
/// How long one probe waits to connect, and then for the answer: generous, as a node busy
/// with the run answers slowly but answers.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a node may not answer before it is taken for one that stopped answering.
pub const SILENT_AFTER: Duration = Duration::from_secs(10);

/// What the probes of one node found.
struct Heard {
    /// The last answer (or when probing began, or the node was started again).
    last: Mutex<Instant>,
    /// Probes that failed since then.
    failed: AtomicU32,
}

/// The probes of a cluster's nodes; they stop when this is dropped.
pub struct Probes {
    heard: Vec<Arc<Heard>>,
    stop: Arc<AtomicBool>,
}

impl Probes {
    /// Starts probing the nodes on `ports` (127.0.0.1), speaking PostgreSQL's protocol when
    /// `postgres`, else MariaDB's (logging in as root with `password`).
    pub fn start(ports: &[u16], postgres: bool, password: Option<&str>) -> Probes {
        let stop = Arc::new(AtomicBool::new(false));
        let mut heard = Vec::with_capacity(ports.len());
        for &port in ports {
            let h = Arc::new(Heard {
                last: Mutex::new(Instant::now()),
                failed: AtomicU32::new(0),
            });
            let (h2, stop2) = (Arc::clone(&h), Arc::clone(&stop));
            let password = password.map(str::to_string);
            let spawned = std::thread::Builder::new()
                .name(format!("probe-{port}"))
                .spawn(move || {
                    while !stop2.load(Ordering::Relaxed) {
                        let ok = if postgres {
                            answers(port)
                        } else {
                            pings(port, password.as_deref())
                        };
                        if ok {
                            h2.answered();
                        } else {
                            h2.failed.fetch_add(1, Ordering::Relaxed);
                        }
                        std::thread::sleep(PROBE_EVERY);
                    }
                });
            // Without its thread a node is never found silent (only dead).
            let _ = spawned;
            heard.push(h);
        }
        Probes { heard, stop }
    }

    /// How long node `i` has not answered, when it counts as silent ([`SILENT_AFTER`], and
    /// two probes or more failed meanwhile).
    pub fn silent(&self, i: usize) -> Option<Duration> {
        let h = self.heard.get(i)?;
        let quiet = h.last.lock().unwrap_or_else(|e| e.into_inner()).elapsed();
        (quiet >= SILENT_AFTER && h.failed.load(Ordering::Relaxed) >= 2).then_some(quiet)
    }

    /// Node `i` was started again: silent from now on only.
    pub fn restarted(&self, i: usize) {
        if let Some(h) = self.heard.get(i) {
            h.answered();
        }
    }
}

impl Heard {
    fn answered(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.failed.store(0, Ordering::Relaxed);
    }
}

impl Drop for Probes {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Whether the PostgreSQL server on 127.0.0.1:`port` answers an SSLRequest on a fresh
/// connection within [`PROBE_TIMEOUT`].
fn answers(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(PROBE_TIMEOUT));
    let _ = s.set_write_timeout(Some(PROBE_TIMEOUT));
    // SSLRequest: length 8, code 80877103; answered 'S' or 'N'.
    if s.write_all(&[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]).is_err() {
        return false;
    }
    let mut byte = [0u8; 1];
    matches!(s.read(&mut byte), Ok(1))
}

/// Whether the MariaDB server on 127.0.0.1:`port` takes a fresh login as root and answers a
/// ping, each within [`PROBE_TIMEOUT`]. A login refused (too many connections) is an answer.
fn pings(port: u16, password: Option<&str>) -> bool {
    let opts: mysql::Opts =
        crate::server::mariadb::root_opts(port, password, PROBE_TIMEOUT, Some(PROBE_TIMEOUT))
            .into();
    match mysql::Conn::new(opts) {
        Ok(mut c) => c.ping().is_ok(),
        Err(mysql::Error::MySqlError(_)) => true,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener that accepts but never answers is not answering; one that sends a byte is.
    #[test]
    fn a_node_answers_only_when_it_sends_something() {
        let quiet = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = quiet.local_addr().unwrap().port();
        let talker = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tport = talker.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for mut c in talker.incoming().flatten() {
                let _ = c.write_all(b"N");
            }
        });
        assert!(answers(tport));
        // The kernel completes the connection (backlog); nothing is read within the timeout.
        assert!(!answers(port));
        assert!(!pings(port, None));
        drop(quiet);
    }
}

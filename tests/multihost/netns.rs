//! Network namespaces for the group tests: each ibench host runs in one of its own, reaching
//! the managed PostgreSQL (127.0.0.1 only) through a TCP relay on the root side of its veth.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

/// A network namespace joined to the root namespace by a veth pair (root side 10.A.B.1,
/// namespace side 10.A.B.2), with a relay from the root side's address to a local port.
/// Dropping it stops the relay and deletes the namespace (and with it the veth pair).
pub struct Netns {
    name: String,
    /// Root side address: what the namespace's processes connect to.
    pub gateway: Ipv4Addr,
    /// Relay port on `gateway`.
    pub port: u16,
    stop: Arc<AtomicBool>,
}

static NEXT_NS: AtomicUsize = AtomicUsize::new(0);

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Netns {
    /// A new namespace whose processes reach 127.0.0.1:`target_port` at `gateway:port`.
    pub fn new(target_port: u16) -> Netns {
        let n = NEXT_NS.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        let name = format!("ibench-t{pid}-{n}");
        let tag = format!("{:x}{n:x}", pid % 0xfffff);
        let (host_if, ns_if) = (format!("ibh{tag}"), format!("ibn{tag}"));
        let a = 100 + (pid % 100) as u8;
        let b = (n % 250) as u8;
        let gateway = Ipv4Addr::new(10, a, b, 1);
        ip(&["netns", "add", &name]);
        let ns = Netns {
            name,
            gateway,
            port: 0,
            stop: Arc::new(AtomicBool::new(false)),
        };
        ip(&[
            "link", "add", &host_if, "type", "veth", "peer", "name", &ns_if,
        ]);
        ip(&["link", "set", &ns_if, "netns", &ns.name]);
        ip(&["addr", "add", &format!("{gateway}/30"), "dev", &host_if]);
        ip(&["link", "set", &host_if, "up"]);
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &ns.name, "ip"];
            all.extend_from_slice(args);
            ip(&all);
        };
        inside(&["addr", "add", &format!("10.{a}.{b}.2/30"), "dev", &ns_if]);
        inside(&["link", "set", &ns_if, "up"]);
        inside(&["link", "set", "lo", "up"]);
        ns.with_relay(target_port)
    }

    fn with_relay(mut self, target_port: u16) -> Netns {
        let listener = TcpListener::bind((self.gateway, 0)).expect("relay listens");
        listener.set_nonblocking(true).unwrap();
        self.port = listener.local_addr().unwrap().port();
        let stop = Arc::clone(&self.stop);
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((down, _)) => {
                        down.set_nonblocking(false).unwrap();
                        let target = SocketAddr::from(([127, 0, 0, 1], target_port));
                        if let Ok(up) = TcpStream::connect(target) {
                            relay(down, up);
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        thread::sleep(Duration::from_millis(5))
                    }
                    Err(_) => break,
                }
            }
        });
        self
    }

    /// `ibench args` in this namespace.
    pub fn ibench(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, env!("CARGO_BIN_EXE_ibench")])
            .args(args);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// Copies bytes both ways between `a` and `b` until either side closes.
fn relay(a: TcpStream, b: TcpStream) {
    for (mut from, mut to) in [(a.try_clone().unwrap(), b.try_clone().unwrap()), (b, a)] {
        thread::spawn(move || {
            let _ = std::io::copy(&mut from, &mut to);
            let _ = to.shutdown(std::net::Shutdown::Both);
            let _ = from.shutdown(std::net::Shutdown::Both);
        });
    }
}

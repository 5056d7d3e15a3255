//! A global setting ibench changes for a moment on a server it did not start
//! (`--allow-server-changes`: InnoDB's dirty-page target during the maintenance pause) is set
//! back even when ibench is killed meanwhile (kill -9, a second Ctrl-C): a guard process,
//! ibench itself started as `ibench __restore-setting`, holds the statement that sets it back
//! and runs it when ibench's end of its pipe closes without saying `done`.
//!
//! The guard is in a process group of its own (a terminal's Ctrl-C reaches ibench alone,
//! which sets the value back itself) and ignores SIGINT, SIGTERM and SIGHUP; the server's
//! password reaches it through the pipe, never its arguments or environment.

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use serde::{Deserialize, Serialize};

/// The hidden first argument that makes `ibench` a guard.
pub const COMMAND: &str = "__restore-setting";

/// What the guard needs: where the server is, and what to run there.
#[derive(Serialize, Deserialize)]
struct Order {
    host: String,
    port: u16,
    socket: Option<String>,
    user: Option<String>,
    password: Option<String>,
    statement: String,
}

/// A running guard: [`Guard::disarm`] once the setting is back; dropped armed (an error or a
/// panic on the way), its pipe closes and the guard sets the value back.
pub struct Guard {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Guard {
    /// Starts a guard that runs `statement` on the server of `opts` if ibench ends before
    /// [`Guard::disarm`].
    pub fn start(opts: &Opts, statement: String) -> Result<Guard> {
        let order = Order {
            host: opts.get_ip_or_hostname().to_string(),
            port: opts.get_tcp_port(),
            socket: opts.get_socket().map(str::to_string),
            user: opts.get_user().map(str::to_string),
            password: opts.get_pass().map(str::to_string),
            statement,
        };
        let exe = std::env::current_exe().context("ibench's own binary")?;
        let mut child = Command::new(exe)
            .arg(COMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .context("cannot start the guard that sets the setting back")?;
        let mut stdin = child.stdin.take();
        let sent = stdin.as_mut().map(|s| {
            let mut line = serde_json::to_vec(&order).unwrap_or_default();
            line.push(b'\n');
            s.write_all(&line).and_then(|()| s.flush())
        });
        let guard = Guard { child, stdin };
        match sent {
            Some(Ok(())) => Ok(guard),
            _ => {
                guard.disarm();
                anyhow::bail!("cannot hand the guard its order")
            }
        }
    }

    /// The setting is back: the guard ends without doing anything.
    pub fn disarm(mut self) {
        if let Some(mut s) = self.stdin.take() {
            let _ = s.write_all(b"done\n");
        }
        let _ = self.child.wait();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Armed: closing the pipe makes the guard set the value back; wait for it to.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The guard's side (`ibench __restore-setting`): reads its order, then waits; `done` ends it,
/// the end of its input (ibench is gone) makes it run the statement, trying for up to 60 s.
pub fn serve() -> ExitCode {
    use nix::sys::signal::{SigHandler, Signal, signal};
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: SIG_IGN installs no handler code.
        let _ = unsafe { signal(s, SigHandler::SigIgn) };
    }
    let mut input = std::io::stdin().lock();
    let mut line = String::new();
    let order: Order = match input.read_line(&mut line).ok().and_then(|_| {
        serde_json::from_str(&line).ok()
    }) {
        Some(o) => o,
        None => return ExitCode::from(2),
    };
    line.clear();
    while input.read_line(&mut line).is_ok_and(|n| n > 0) {
        if line.trim() == "done" {
            return ExitCode::SUCCESS;
        }
        line.clear();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if run(&order).is_ok() {
            return ExitCode::SUCCESS;
        }
        if Instant::now() > deadline {
            return ExitCode::FAILURE;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Runs the order's statement on its server.
fn run(order: &Order) -> Result<()> {
    let mut b = OptsBuilder::new()
        .ip_or_hostname(Some(order.host.clone()))
        .tcp_port(order.port)
        .user(order.user.clone())
        .pass(order.password.clone())
        .prefer_socket(false)
        .tcp_connect_timeout(Some(Duration::from_secs(5)));
    if let Some(s) = &order.socket {
        b = b.socket(Some(s.clone())).prefer_socket(true);
    }
    let mut conn = Conn::new(b)?;
    conn.query_drop(&order.statement)?;
    Ok(())
}

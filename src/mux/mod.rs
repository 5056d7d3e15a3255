//! Many client connections per thread: each connection's client runs as a coroutine (its own
//! small stack, `corosensei`) on a scheduler thread, and the thread waits for all its
//! connections' replies at once: through one io_uring (`io-uring`, [`Backend::IoUring`],
//! `uring.rs`) or, where the kernel has none, one epoll instance ([`Backend::Epoll`],
//! `epoll.rs`).
//!
//! The clients' code stays as it is, blocking-style: a wire client's socket (`dbms::socket`)
//! asks [`transfer`] to send what it has queued and receive the reply; inside a task that
//! queues a send linked to a receive on the thread's ring and suspends the task until the
//! receive completes, so the thread runs its other clients meanwhile. When no task can run,
//! the scheduler submits everything queued and waits in one `io_uring_enter`: with one
//! connection per thread that is one system call per query (the send and the receive go in
//! together), with many connections one call serves many replies. With epoll a task sends and
//! receives with non-blocking calls of its own and waits in the thread's one `epoll_pwait2`
//! only when its reply is not there yet. Sleeps ([`sleep_until`]:
//! a rate-limited writer waiting for its due time, a retry's back-off) suspend the task on a
//! timer instead of the thread. Outside a task (a thread per client, or no io_uring on this
//! kernel) every function here falls back to what a blocking thread does.
//!
//! This module depends on nothing else of ibench: the wire clients (`dbms`) and the runner use
//! it.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use serde::{Deserialize, Serialize};

mod epoll;
mod uring;

/// Each task's stack (virtual: only the pages a client touches are resident).
const STACK_BYTES: usize = 256 * 1024;

/// A task of a scheduler thread: one client's whole life.
pub type Task<'a> = Box<dyn FnOnce() + Send + 'a>;

/// How a scheduler thread waits for its connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// One io_uring per thread: a query's send and receive in one system call, many replies
    /// per wait.
    IoUring,
    /// One epoll instance per thread: a send and a receive per query, many replies per wait.
    Epoll,
}

impl Backend {
    /// io_uring where this kernel allows it, else epoll.
    pub fn default_here() -> Self {
        if io_uring_available() {
            Backend::IoUring
        } else {
            Backend::Epoll
        }
    }

    /// Whether this kernel can run it.
    pub fn available(self) -> bool {
        match self {
            Backend::IoUring => io_uring_available(),
            Backend::Epoll => true,
        }
    }

    /// Its name, as `--client-io` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::IoUring => "io-uring",
            Backend::Epoll => "epoll",
        }
    }
}

thread_local! {
    /// The task being run on this thread, if any.
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
    /// Its yielder (to suspend it).
    static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
    /// This thread's ring or epoll instance and what its tasks wait for.
    static REACTOR: RefCell<Option<Reactor>> = const { RefCell::new(None) };
}

enum Io {
    Uring(Box<uring::Uring>),
    Epoll(epoll::Epoll),
}

struct Reactor {
    io: Io,
    /// How many tasks the thread runs.
    n: usize,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    runnable: VecDeque<usize>,
}

impl Reactor {
    /// Moves the tasks whose timers are due to the run queue.
    fn expire(&mut self) {
        let now = Instant::now();
        while let Some(Reverse((t, task))) = self.timers.peek().copied() {
            if t > now {
                break;
            }
            self.timers.pop();
            self.runnable.push_back(task);
        }
    }

    /// Waits until a task can run (a reply, or a timer); first submits what is queued.
    fn wait(&mut self) -> io::Result<()> {
        self.expire();
        let block = self.runnable.is_empty();
        let waiting = match &self.io {
            Io::Uring(u) => u.waiting(),
            Io::Epoll(e) => e.waiting(),
        };
        if block && !waiting && self.timers.is_empty() {
            // Nothing can wake anyone: should not happen; wake every task (each checks
            // what it waits for again) rather than hang.
            self.runnable.extend(0..self.n);
            return Ok(());
        }
        let timeout = if !block {
            Some(Duration::ZERO)
        } else {
            self.timers
                .peek()
                .map(|Reverse((t, _))| t.saturating_duration_since(Instant::now()))
        };
        match &mut self.io {
            Io::Uring(u) => u.wait(timeout, &mut self.runnable)?,
            Io::Epoll(e) => e.wait(timeout, &mut self.runnable)?,
        }
        self.expire();
        Ok(())
    }
}

/// Whether this kernel lets ibench use io_uring (probed once).
fn io_uring_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(uring::Uring::probe)
}

/// True inside a task of a scheduler thread.
pub fn in_task() -> bool {
    CURRENT.get().is_some()
}

/// Suspends the running task until the scheduler resumes it.
fn suspend() {
    let y = YIELDER.get();
    // SAFETY: YIELDER is the running task's own yielder (set when it started and after each
    // resume), which lives on its stack for as long as it runs.
    unsafe { (*y).suspend(()) };
    YIELDER.set(y);
}

/// Runs `f` on this thread's reactor.
fn with_reactor<T>(f: impl FnOnce(&mut Reactor) -> T) -> io::Result<T> {
    REACTOR.with_borrow_mut(|r| match r.as_mut() {
        Some(r) => Ok(f(r)),
        None => Err(io::Error::other("no reactor on this thread")),
    })
}

/// Runs `f` on this thread's epoll instance (the caller knows it has one).
fn with_epoll<T>(f: impl FnOnce(&mut epoll::Epoll) -> T) -> io::Result<T> {
    with_reactor(|r| match &mut r.io {
        Io::Epoll(e) => Ok(f(e)),
        Io::Uring(_) => Err(io::Error::other("not an epoll thread")),
    })?
}

/// Sends `out` (when not empty) and then receives into `buf`, as a task, suspending it while
/// it waits: with io_uring the send and the receive are queued together, linked, and the
/// task is suspended until the receive completes; with epoll the task sends, and receives
/// once its socket has something. Returns the bytes received (0: the peer closed the
/// connection); `out` is empty afterwards. Call only where [`in_task`] is true.
pub fn transfer(fd: RawFd, out: &mut Vec<u8>, buf: &mut [u8]) -> io::Result<usize> {
    let task = CURRENT
        .get()
        .ok_or_else(|| io::Error::other("not in a task"))?;
    let uring = with_reactor(|r| match &mut r.io {
        Io::Uring(u) => Some(u.start(task, fd, out, buf)),
        Io::Epoll(_) => None,
    })?;
    let result = match uring {
        Some(started) => {
            started?;
            loop {
                suspend();
                let done = with_reactor(|r| match &mut r.io {
                    Io::Uring(u) => u.take(task),
                    Io::Epoll(_) => None,
                })?;
                if let Some(done) = done {
                    break done;
                }
            }
        }
        None => transfer_epoll(task, fd, out, buf),
    };
    out.clear();
    result
}

/// [`transfer`] on an epoll thread.
fn transfer_epoll(task: usize, fd: RawFd, out: &[u8], buf: &mut [u8]) -> io::Result<usize> {
    with_epoll(|e| e.register(task, fd))??;
    let mut sent = 0;
    while let Some(so_far) = epoll::send_some(fd, out, sent)? {
        // The socket's buffer is full (a large request): wait until it has room.
        sent = so_far;
        with_epoll(|e| e.want_write(task, fd, true))??;
        wait_for_event(task)?;
        with_epoll(|e| e.want_write(task, fd, false))??;
    }
    loop {
        if !with_epoll(|e| e.ready(task))? {
            wait_for_event(task)?;
        }
        match epoll::recv_some(fd, buf)? {
            Some(n) => {
                if n < buf.len() {
                    // Drained: the next reply raises a new event.
                    with_epoll(|e| e.drained(task))?;
                }
                return Ok(n);
            }
            None => with_epoll(|e| e.drained(task))?,
        }
    }
}

/// Suspends `task` until an event of its socket.
fn wait_for_event(task: usize) -> io::Result<()> {
    with_epoll(|e| e.park(task))?;
    while with_epoll(|e| e.parked(task))? {
        suspend();
    }
    Ok(())
}

/// Tells the thread's epoll instance that `fd`, the running task's socket, is being closed
/// (its number may come back for another socket). Does nothing outside a task or with
/// io_uring.
pub fn closing(fd: RawFd) {
    let Some(task) = CURRENT.get() else { return };
    let _ = with_reactor(|r| {
        if let Io::Epoll(e) = &mut r.io {
            e.forget(task, fd);
        }
    });
}

/// Waits until `t`: as a task, suspended on a timer; else the thread sleeps.
pub fn sleep_until(t: Instant) {
    let Some(task) = CURRENT.get() else {
        let now = Instant::now();
        if t > now {
            std::thread::sleep(t - now);
        }
        return;
    };
    while Instant::now() < t {
        let armed = REACTOR.with_borrow_mut(|r| match r.as_mut() {
            Some(r) => {
                r.timers.push(Reverse((t, task)));
                true
            }
            None => false,
        });
        if !armed {
            std::thread::sleep(t.saturating_duration_since(Instant::now()));
            return;
        }
        suspend();
    }
}

/// Waits to be woken by `Thread::unpark`, for `d` at most; as a task, which cannot be
/// unparked (its thread serves others), waits 1 ms at most instead: callers check again
/// what they wait for in a loop.
pub fn park_timeout(d: Duration) {
    if in_task() {
        sleep(d.min(Duration::from_millis(1)));
    } else {
        std::thread::park_timeout(d);
    }
}

/// Waits for `d` (see [`sleep_until`]).
pub fn sleep(d: Duration) {
    sleep_until(Instant::now() + d);
}

/// Runs `tasks` on the calling thread until every one has returned, each as a coroutine,
/// their I/O through one io_uring or one epoll instance (`backend`). A task must not block the
/// thread other than through this module (its sockets' [`transfer`], [`sleep_until`]). A task
/// should catch its own panics: one that escapes is carried out of this call, and the
/// thread's other tasks are dropped.
pub fn run_tasks(tasks: Vec<Task<'_>>, backend: Backend) -> io::Result<()> {
    let n = tasks.len();
    if n == 0 {
        return Ok(());
    }
    let io = match backend {
        Backend::IoUring => Io::Uring(Box::new(uring::Uring::new(n)?)),
        Backend::Epoll => Io::Epoll(epoll::Epoll::new(n)?),
    };
    let mut coroutines = Vec::with_capacity(n);
    for task in tasks {
        let stack = DefaultStack::new(STACK_BYTES)?;
        // SAFETY: what a task borrows outlives this call, and every coroutine is driven to
        // completion (or dropped, unwinding its stack) before it returns.
        let co = unsafe {
            Coroutine::with_stack_unchecked(stack, move |y: &Yielder<(), ()>, ()| {
                YIELDER.set(y as *const _);
                task();
            })
        };
        coroutines.push(Some(co));
    }
    REACTOR.set(Some(Reactor {
        io,
        n,
        timers: BinaryHeap::new(),
        runnable: (0..n).collect(),
    }));
    let mut live = n;
    let outcome = (|| {
        while live > 0 {
            while let Some(task) = REACTOR.with_borrow_mut(|r| r.as_mut()?.runnable.pop_front()) {
                let Some(co) = coroutines[task].as_mut() else {
                    continue;
                };
                CURRENT.set(Some(task));
                let result = co.resume(());
                CURRENT.set(None);
                YIELDER.set(std::ptr::null());
                if let CoroutineResult::Return(()) = result {
                    coroutines[task] = None;
                    live -= 1;
                }
            }
            if live > 0 {
                REACTOR.with_borrow_mut(|r| match r.as_mut() {
                    Some(r) => r.wait(),
                    None => Ok(()),
                })?;
            }
        }
        Ok(())
    })();
    // A failed wait leaves tasks suspended: dropping them unwinds their stacks (their
    // buffers may still be named by a ring's entries in flight, so the reactor goes first).
    REACTOR.set(None);
    drop(coroutines);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    /// An echo peer on a thread of its own for each of `n` sockets; returns ibench's ends.
    fn echo_peers(n: usize) -> (Vec<UnixStream>, Vec<std::thread::JoinHandle<()>>) {
        let mut peers = Vec::new();
        let mut clients = Vec::new();
        for _ in 0..n {
            let (a, mut b) = UnixStream::pair().unwrap();
            peers.push(std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                loop {
                    let n = b.read(&mut buf).unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    b.write_all(&buf[..n]).unwrap();
                }
            }));
            clients.push(a);
        }
        (clients, peers)
    }

    /// One round trip of `[i, k]` on `s`.
    fn echo_once(s: &UnixStream, i: u8, k: u8) {
        let mut out = vec![i, k];
        let mut buf = [0u8; 64];
        let mut got = 0;
        while got < 2 {
            got += transfer(s.as_raw_fd(), &mut out, &mut buf[got..]).unwrap();
        }
        assert_eq!(&buf[..2], &[i, k]);
    }

    fn tasks_echo_over_sockets_and_sleep(backend: Backend) {
        // Four clients on one thread, each talking to an echo thread of its own.
        let (clients, peers) = echo_peers(4);
        let total = std::sync::atomic::AtomicUsize::new(0);
        let tasks: Vec<Task> = clients
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let total = &total;
                Box::new(move || {
                    for k in 0..100u8 {
                        echo_once(&s, i as u8, k);
                        total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    let t = Instant::now();
                    sleep(Duration::from_millis(5));
                    assert!(t.elapsed() >= Duration::from_millis(5));
                    closing(s.as_raw_fd());
                }) as Task
            })
            .collect();
        run_tasks(tasks, backend).unwrap();
        assert_eq!(total.load(std::sync::atomic::Ordering::Relaxed), 400);
        for p in peers {
            p.join().unwrap();
        }
    }

    #[test]
    fn io_uring_tasks_echo_over_sockets_and_sleep() {
        if Backend::IoUring.available() {
            tasks_echo_over_sockets_and_sleep(Backend::IoUring);
        }
    }

    #[test]
    fn epoll_tasks_echo_over_sockets_and_sleep() {
        tasks_echo_over_sockets_and_sleep(Backend::Epoll);
    }

    #[test]
    fn epoll_tasks_reconnect_on_a_reused_descriptor() {
        // Each task closes its socket and talks over a new one, which the kernel gives the
        // number just freed: it must be registered anew, or the task would wait forever.
        let tasks: Vec<Task<'static>> = (0..3u8)
            .map(|i| {
                Box::new(move || {
                    for round in 0..3u8 {
                        let (mut clients, peers) = echo_peers(1);
                        let s = clients.pop().unwrap();
                        for k in 0..10u8 {
                            echo_once(&s, i, round * 10 + k);
                        }
                        closing(s.as_raw_fd());
                        drop(s);
                        for p in peers {
                            p.join().unwrap();
                        }
                    }
                }) as Task
            })
            .collect();
        // On a thread of its own, so that a task waiting forever fails the test.
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            run_tasks(tasks, Backend::Epoll).unwrap();
            let _ = done_tx.send(());
        });
        assert!(
            done_rx.recv_timeout(Duration::from_secs(20)).is_ok(),
            "a task waits for a descriptor that was never registered"
        );
    }
}

//! Many client connections per thread: each connection's client runs as a coroutine (its own
//! small stack, `corosensei`) on a scheduler thread, and the thread waits for all its
//! connections' replies at once through one io_uring (`io-uring`).
//!
//! The clients' code stays as it is, blocking-style: a wire client's socket (`dbms::socket`)
//! asks [`transfer`] to send what it has queued and receive the reply; inside a task that
//! queues a send linked to a receive on the thread's ring and suspends the task until the
//! receive completes, so the thread runs its other clients meanwhile. When no task can run,
//! the scheduler submits everything queued and waits in one `io_uring_enter`: with one
//! connection per thread that is one system call per query (the send and the receive go in
//! together), with many connections one call serves many replies. Sleeps ([`sleep_until`]:
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
use io_uring::{IoUring, opcode, squeue, types};

/// Each task's stack (virtual: only the pages a client touches are resident).
const STACK_BYTES: usize = 256 * 1024;

/// A task of a scheduler thread: one client's whole life.
pub type Task<'a> = Box<dyn FnOnce() + Send + 'a>;

thread_local! {
    /// The task being run on this thread, if any.
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
    /// Its yielder (to suspend it).
    static YIELDER: Cell<*const Yielder<(), ()>> = const { Cell::new(std::ptr::null()) };
    /// This thread's ring and what its tasks wait for.
    static REACTOR: RefCell<Option<Reactor>> = const { RefCell::new(None) };
}

/// User data of a send (its CQE is posted only when it fails); a receive's is the task.
const SEND_TAG: u64 = 1 << 63;

struct Reactor {
    ring: IoUring,
    /// Per task: the result of its receive, once complete.
    received: Vec<Option<i32>>,
    /// Per task: the error of its send, when it failed.
    send_error: Vec<Option<i32>>,
    /// Receives in flight.
    in_flight: usize,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    runnable: VecDeque<usize>,
}

impl Reactor {
    /// Queues `entry`, submitting what is queued first when the submission queue is full.
    fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: the buffers an entry names belong to a task suspended until the
            // entry's receive completes (see `transfer`).
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

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

    /// Submits what is queued and waits until a task can run (a reply, or a timer).
    fn wait(&mut self) -> io::Result<()> {
        self.expire();
        let block = self.runnable.is_empty();
        if block && self.in_flight == 0 && self.timers.is_empty() {
            // Nothing can wake anyone: should not happen; wake every task (each checks
            // what it waits for again) rather than hang.
            self.runnable.extend(0..self.received.len());
            return Ok(());
        }
        let waited = if !block {
            self.ring.submit()
        } else if let Some(Reverse((t, _))) = self.timers.peek() {
            let d = t.saturating_duration_since(Instant::now());
            let ts = types::Timespec::from(d);
            let args = types::SubmitArgs::new().timespec(&ts);
            self.ring.submitter().submit_with_args(1, &args)
        } else {
            self.ring.submit_and_wait(1)
        };
        match waited {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        let mut completion = self.ring.completion();
        completion.sync();
        for cqe in &mut completion {
            let ud = cqe.user_data();
            if ud & SEND_TAG != 0 {
                self.send_error[(ud & !SEND_TAG) as usize] = Some(cqe.result());
            } else {
                let task = ud as usize;
                self.received[task] = Some(cqe.result());
                self.in_flight -= 1;
                self.runnable.push_back(task);
            }
        }
        drop(completion);
        self.expire();
        Ok(())
    }
}

/// Whether this kernel lets ibench use io_uring (probed once).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| IoUring::new(8).is_ok())
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

/// Sends `out` (when not empty) and then receives into `buf`, as a task: the send and the
/// receive are queued together, linked, and the task is suspended until the receive
/// completes. Returns the bytes received (0: the peer closed the connection); `out` is empty
/// afterwards. Call only where [`in_task`] is true.
pub fn transfer(fd: RawFd, out: &mut Vec<u8>, buf: &mut [u8]) -> io::Result<usize> {
    let task = CURRENT
        .get()
        .ok_or_else(|| io::Error::other("not in a task"))?;
    REACTOR.with_borrow_mut(|r| -> io::Result<()> {
        let r = r.as_mut().ok_or_else(|| io::Error::other("no ring"))?;
        r.received[task] = None;
        r.send_error[task] = None;
        if !out.is_empty() {
            // All of it (MSG_WAITALL), its completion posted only on failure; the receive
            // starts when it is done, and is cancelled if it fails.
            let send = opcode::Send::new(types::Fd(fd), out.as_ptr(), out.len() as u32)
                .flags(libc::MSG_WAITALL | libc::MSG_NOSIGNAL)
                .build()
                .flags(squeue::Flags::IO_LINK | squeue::Flags::SKIP_SUCCESS)
                .user_data(SEND_TAG | task as u64);
            r.push(&send)?;
        }
        let len = buf.len().min(u32::MAX as usize) as u32;
        let recv = opcode::Recv::new(types::Fd(fd), buf.as_mut_ptr(), len)
            .build()
            .user_data(task as u64);
        r.push(&recv)?;
        r.in_flight += 1;
        Ok(())
    })?;
    let (received, send_error) = loop {
        suspend();
        let done = REACTOR.with_borrow_mut(|r| {
            let r = r.as_mut()?;
            let got = r.received[task].take()?;
            Some((got, r.send_error[task].take()))
        });
        if let Some(done) = done {
            break done;
        }
    };
    out.clear();
    if let Some(e) = send_error {
        return Err(io::Error::from_raw_os_error(-e));
    }
    if received < 0 {
        return Err(io::Error::from_raw_os_error(-received));
    }
    Ok(received as usize)
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
/// their I/O through one io_uring. A task must not block the thread other than through this
/// module (its sockets' [`transfer`], [`sleep_until`]). A task should catch its own panics:
/// one that escapes is carried out of this call, and the thread's other tasks are dropped.
pub fn run_tasks(tasks: Vec<Task<'_>>) -> io::Result<()> {
    let n = tasks.len();
    if n == 0 {
        return Ok(());
    }
    // Room for every task's send and receive, and as many completions.
    let entries = (2 * n + 8).next_power_of_two().min(32768) as u32;
    // Completions are processed when this thread asks for them (in `wait`), not by
    // interrupting it while it runs its tasks.
    let ring = IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::new(entries))?;
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
        ring,
        received: vec![None; n],
        send_error: vec![None; n],
        in_flight: 0,
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
    // A failed ring leaves tasks suspended: dropping them unwinds their stacks (their
    // buffers may still be named by entries in flight, so the ring goes first).
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

    #[test]
    fn tasks_echo_over_sockets_and_sleep() {
        if !available() {
            return;
        }
        // Four clients on one thread, each talking to an echo thread of its own.
        let mut peers = Vec::new();
        let mut clients = Vec::new();
        for _ in 0..4 {
            let (a, mut b) = UnixStream::pair().unwrap();
            peers.push(std::thread::spawn(move || {
                let mut buf = [0u8; 64];
                loop {
                    let n = b.read(&mut buf).unwrap();
                    if n == 0 {
                        return;
                    }
                    b.write_all(&buf[..n]).unwrap();
                }
            }));
            clients.push(a);
        }
        let total = std::sync::atomic::AtomicUsize::new(0);
        let tasks: Vec<Task> = clients
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let total = &total;
                Box::new(move || {
                    let mut out = Vec::new();
                    let mut buf = [0u8; 64];
                    for k in 0..100u8 {
                        out.extend_from_slice(&[i as u8, k]);
                        let mut got = 0;
                        while got < 2 {
                            got += transfer(s.as_raw_fd(), &mut out, &mut buf[got..]).unwrap();
                        }
                        assert_eq!(&buf[..2], &[i as u8, k]);
                        total.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    let t = Instant::now();
                    sleep(Duration::from_millis(5));
                    assert!(t.elapsed() >= Duration::from_millis(5));
                }) as Task
            })
            .collect();
        run_tasks(tasks).unwrap();
        assert_eq!(total.load(std::sync::atomic::Ordering::Relaxed), 400);
        for p in peers {
            p.join().unwrap();
        }
    }
}

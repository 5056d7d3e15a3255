//! The epoll backend: each task's socket is registered once (edge-triggered), a task sends
//! and receives with non-blocking calls of its own, and when its reply is not there yet it is
//! suspended until the thread's one `epoll_pwait2` reports its socket readable. Where the
//! kernel has no io_uring (or a sysctl disables it) this is what multiplexes the clients.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Readiness the tasks' sockets are registered for: input (and the peer hanging up),
/// reported once per change.
const READ_EVENTS: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET) as u32;

/// One thread's epoll instance and what its tasks wait for.
pub(super) struct Epoll {
    epfd: OwnedFd,
    /// Per task: the socket registered for it.
    fds: Vec<Option<RawFd>>,
    /// Per task: an event came since it last found its socket empty.
    ready: Vec<bool>,
    /// Per task: suspended until an event of its socket.
    parked: Vec<bool>,
    /// Tasks parked.
    n_parked: usize,
    events: Vec<libc::epoll_event>,
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

impl Epoll {
    /// An epoll instance for `n` tasks.
    pub(super) fn new(n: usize) -> io::Result<Self> {
        // SAFETY: a plain system call; the descriptor it returns is owned from here on.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll {
            // SAFETY: `fd` was just created and nothing else owns it.
            epfd: unsafe { OwnedFd::from_raw_fd(fd) },
            fds: vec![None; n],
            ready: vec![false; n],
            parked: vec![false; n],
            n_parked: 0,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; n.clamp(1, 1024)],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, task: usize) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events,
            u64: task as u64,
        };
        // SAFETY: `ev` lives across the call; the kernel copies it.
        check(unsafe { libc::epoll_ctl(self.epfd.as_raw_fd(), op, fd, &mut ev) }).map(drop)
    }

    /// Registers `task`'s socket `fd` (once; again after it changed).
    pub(super) fn register(&mut self, task: usize, fd: RawFd) -> io::Result<()> {
        if self.fds[task] == Some(fd) {
            return Ok(());
        }
        if let Some(old) = self.fds[task].take() {
            let _ = self.ctl(libc::EPOLL_CTL_DEL, old, 0, task);
        }
        match self.ctl(libc::EPOLL_CTL_ADD, fd, READ_EVENTS, task) {
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                self.ctl(libc::EPOLL_CTL_MOD, fd, READ_EVENTS, task)?
            }
            other => other?,
        }
        self.fds[task] = Some(fd);
        // Whatever arrived before the registration raised no event: look first.
        self.ready[task] = true;
        Ok(())
    }

    /// Forgets `task`'s socket `fd`, which is being closed (its number may come back for
    /// another socket, which must be registered anew).
    pub(super) fn forget(&mut self, task: usize, fd: RawFd) {
        if self.fds[task] == Some(fd) {
            let _ = self.ctl(libc::EPOLL_CTL_DEL, fd, 0, task);
            self.fds[task] = None;
        }
    }

    /// Also reports `task`'s socket writable (`on`), for a send the socket had no room for.
    pub(super) fn want_write(&mut self, task: usize, fd: RawFd, on: bool) -> io::Result<()> {
        let events = if on {
            READ_EVENTS | libc::EPOLLOUT as u32
        } else {
            READ_EVENTS
        };
        self.ctl(libc::EPOLL_CTL_MOD, fd, events, task)
    }

    /// Whether `task` should try its socket (an event came since it found it empty).
    pub(super) fn ready(&self, task: usize) -> bool {
        self.ready[task]
    }

    /// Notes that `task` found its socket empty (or drained it).
    pub(super) fn drained(&mut self, task: usize) {
        self.ready[task] = false;
    }

    /// Suspends `task` (the caller then yields) until an event of its socket.
    pub(super) fn park(&mut self, task: usize) {
        if !self.parked[task] {
            self.parked[task] = true;
            self.n_parked += 1;
        }
    }

    /// Whether `task` still waits for an event.
    pub(super) fn parked(&self, task: usize) -> bool {
        self.parked[task]
    }

    /// True while a task waits for its socket (something can wake a task).
    pub(super) fn waiting(&self) -> bool {
        self.n_parked > 0
    }

    /// Waits for events: not at all (`Some(ZERO)`), up to `timeout`, or until one (`None`).
    /// Parked tasks whose socket had an event go to `runnable`.
    pub(super) fn wait(
        &mut self,
        timeout: Option<Duration>,
        runnable: &mut VecDeque<usize>,
    ) -> io::Result<()> {
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs() as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
        // SAFETY: `events` has room for as many events as its length says; `ts` outlives the
        // call.
        let n = unsafe {
            libc::epoll_pwait2(
                self.epfd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as libc::c_int,
                ts_ptr,
                std::ptr::null(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::EINTR) {
                Ok(())
            } else {
                Err(e)
            };
        }
        for ev in &self.events[..n as usize] {
            let task = ev.u64 as usize;
            self.ready[task] = true;
            if self.parked[task] {
                self.parked[task] = false;
                self.n_parked -= 1;
                runnable.push_back(task);
            }
        }
        Ok(())
    }
}

/// Sends all of `out` without blocking: `Ok(Some(sent))` so far when the socket is full.
pub(super) fn send_some(fd: RawFd, out: &[u8], mut sent: usize) -> io::Result<Option<usize>> {
    while sent < out.len() {
        let rest = &out[sent..];
        // SAFETY: `rest` is valid for its length.
        let n = unsafe {
            libc::send(
                fd,
                rest.as_ptr().cast(),
                rest.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if n >= 0 {
            sent += n as usize;
            continue;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::EAGAIN) => return Ok(Some(sent)),
            _ => return Err(e),
        }
    }
    Ok(None)
}

/// Receives into `buf` without blocking: `Ok(None)` when nothing is there.
pub(super) fn recv_some(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    loop {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::EAGAIN) => return Ok(None),
            _ => return Err(e),
        }
    }
}

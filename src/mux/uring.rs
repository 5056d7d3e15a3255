//! The io_uring backend: a task's send and receive go to the thread's ring together, linked,
//! and one `io_uring_enter` submits everything queued and waits for the next completion.

use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::{IoUring, opcode, squeue, types};

/// User data of a send (its CQE is posted only when it fails); a receive's is the task.
const SEND_TAG: u64 = 1 << 63;

/// One thread's ring and what its tasks wait for.
pub(super) struct Uring {
    ring: IoUring,
    /// Per task: the result of its receive, once complete.
    received: Vec<Option<i32>>,
    /// Per task: the error of its send, when it failed.
    send_error: Vec<Option<i32>>,
    /// Receives in flight.
    in_flight: usize,
}

impl Uring {
    /// A ring for `n` tasks.
    pub(super) fn new(n: usize) -> io::Result<Self> {
        // Room for every task's send and receive, and as many completions.
        let entries = (2 * n + 8).next_power_of_two().min(32768) as u32;
        // Completions are processed when this thread asks for them (in `wait`), not by
        // interrupting it while it runs its tasks.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))?;
        Ok(Uring {
            ring,
            received: vec![None; n],
            send_error: vec![None; n],
            in_flight: 0,
        })
    }

    /// Whether this kernel lets ibench use io_uring (probed once by the caller).
    pub(super) fn probe() -> bool {
        IoUring::new(8).is_ok()
    }

    /// True while a receive is in flight (something can wake a task).
    pub(super) fn waiting(&self) -> bool {
        self.in_flight > 0
    }

    /// Queues `entry`, submitting what is queued first when the submission queue is full.
    fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: the buffers an entry names belong to a task suspended until the
            // entry's receive completes (see `start`).
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    /// Queues `task`'s send of `out` (when not empty) linked to a receive into `buf`. The
    /// task must stay suspended until [`Uring::take`] returns its result: the ring writes
    /// into `buf` meanwhile.
    pub(super) fn start(
        &mut self,
        task: usize,
        fd: RawFd,
        out: &[u8],
        buf: &mut [u8],
    ) -> io::Result<()> {
        self.received[task] = None;
        self.send_error[task] = None;
        if !out.is_empty() {
            // All of it (MSG_WAITALL), its completion posted only on failure; the receive
            // starts when it is done, and is cancelled if it fails.
            let send = opcode::Send::new(types::Fd(fd), out.as_ptr(), out.len() as u32)
                .flags(libc::MSG_WAITALL | libc::MSG_NOSIGNAL)
                .build()
                .flags(squeue::Flags::IO_LINK | squeue::Flags::SKIP_SUCCESS)
                .user_data(SEND_TAG | task as u64);
            self.push(&send)?;
        }
        let len = buf.len().min(u32::MAX as usize) as u32;
        let recv = opcode::Recv::new(types::Fd(fd), buf.as_mut_ptr(), len)
            .build()
            .user_data(task as u64);
        self.push(&recv)?;
        self.in_flight += 1;
        Ok(())
    }

    /// `task`'s transfer result once its receive completed: the bytes received, or the
    /// send's or the receive's error.
    pub(super) fn take(&mut self, task: usize) -> Option<io::Result<usize>> {
        let received = self.received[task].take()?;
        if let Some(e) = self.send_error[task].take() {
            return Some(Err(io::Error::from_raw_os_error(-e)));
        }
        if received < 0 {
            return Some(Err(io::Error::from_raw_os_error(-received)));
        }
        Some(Ok(received as usize))
    }

    /// Submits what is queued and waits for completions: not at all (`Some(ZERO)`), up to
    /// `timeout`, or until one (`None`). Tasks whose receive completed go to `runnable`.
    pub(super) fn wait(
        &mut self,
        timeout: Option<Duration>,
        runnable: &mut VecDeque<usize>,
    ) -> io::Result<()> {
        let waited = match timeout {
            Some(d) if d.is_zero() => self.ring.submit(),
            Some(d) => {
                let ts = types::Timespec::from(d);
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(1, &args)
            }
            None => self.ring.submit_and_wait(1),
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
                runnable.push_back(task);
            }
        }
        Ok(())
    }
}

//! Client threads of one step, started together: one OS thread per connection, or, for a
//! DBMS whose connections are ibench's own wire clients, a few threads (one per core by
//! default, `--client-threads`) each driving many connections as tasks (`crate::mux`).
//!
//! Each client (a thread or a task) runs a body given by the workload. A body does its set-up (connect, prepare,
//! select-min), then calls [`ThreadCtx::start`], which waits until every thread is ready and
//! returns the common step start, so client start-up is not part of the measured time. A step
//! with a warm-up has its threads call [`ThreadCtx::warm_up`] first: they start warming up
//! together, and the step (its clock, its cost samples) starts when the last has finished. The
//! first error stops every thread of the step; the error names the client and its role.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::Utc;

use crate::metrics::outcome::StepOutcome;
use crate::metrics::recorder::{LiveCounters, Recorder};
use crate::metrics::seconds::SecondHistograms;
use crate::mux::Task;

/// Releases all threads of a step at once.
struct Gate {
    state: Mutex<(usize, Option<Instant>)>,
    cond: Condvar,
}

impl Gate {
    fn new() -> Self {
        Gate {
            state: Mutex::new((0, None)),
            cond: Condvar::new(),
        }
    }

    /// Called by a thread when ready; returns the step start once every thread is ready.
    fn arrive(&self) -> Instant {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        self.cond.notify_all();
        if crate::mux::in_task() {
            drop(s);
            return poll(&self.state);
        }
        loop {
            if let Some(start) = s.1 {
                return start;
            }
            s = self.cond.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Called by the step's coordinator: waits for `n` threads, calls `ready` while they all
    /// wait, then opens the gate.
    fn open_when_ready(&self, n: usize, ready: &mut dyn FnMut()) -> Instant {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 < n {
            s = self.cond.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        drop(s);
        ready();
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let start = Instant::now();
        s.1 = Some(start);
        self.cond.notify_all();
        start
    }
}

/// Releases a step's threads into their warm-up together: opens itself when every thread has
/// arrived (a thread that failed before arriving counts as arrived).
struct WarmGate {
    state: Mutex<(usize, Option<Instant>)>,
    cond: Condvar,
    threads: usize,
}

impl WarmGate {
    fn new(threads: usize) -> Self {
        WarmGate {
            state: Mutex::new((0, None)),
            cond: Condvar::new(),
            threads,
        }
    }

    /// Counts one thread in; the last one opens the gate. Returns the state, locked.
    fn count_in(&self) -> std::sync::MutexGuard<'_, (usize, Option<Instant>)> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        if s.0 >= self.threads && s.1.is_none() {
            s.1 = Some(Instant::now());
            self.cond.notify_all();
        }
        s
    }

    /// Waits until every thread has arrived; returns when the gate opened.
    fn arrive(&self) -> Instant {
        let mut s = self.count_in();
        if crate::mux::in_task() {
            drop(s);
            return poll(&self.state);
        }
        loop {
            if let Some(open) = s.1 {
                return open;
            }
            s = self.cond.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Waits, as a task of a multiplexed client thread (which must not block), until the gate
/// `state` is open; returns when it opened. Checked every 2 ms: only while the step starts.
fn poll(state: &Mutex<(usize, Option<Instant>)>) -> Instant {
    loop {
        if let Some(open) = state.lock().unwrap_or_else(|e| e.into_inner()).1 {
            return open;
        }
        crate::mux::sleep(Duration::from_millis(2));
    }
}

/// What a client thread sees of the step.
pub struct ThreadCtx<'a> {
    /// This thread's measurements.
    pub rec: Recorder,
    warm: &'a WarmGate,
    warmed: bool,
    gate: &'a Gate,
    stop: &'a AtomicBool,
    start: Option<Instant>,
    held: Vec<Box<dyn Send>>,
    /// While warming up: when the warm-up ends.
    warm_up_end: Option<Instant>,
}

impl ThreadCtx<'_> {
    /// Keeps `resource` (a connection) open until the step's end has been sampled, so that a
    /// server process serving it (a PostgreSQL backend) is still there to be counted.
    pub fn hold(&mut self, resource: impl Send + 'static) {
        self.held.push(Box::new(resource));
    }

    /// Waits until every thread of the step is ready to warm up and returns when they start;
    /// the warm-up ends with [`ThreadCtx::start`]. For steps with a warm-up only: call it once,
    /// after set-up, in every thread of the step.
    pub fn warm_up(&mut self) -> Instant {
        self.warmed = true;
        self.warm.arrive()
    }

    /// Waits until every thread of the step is ready and returns the step start. Call it once,
    /// after set-up (and the warm-up) and before the first measured operation.
    pub fn start(&mut self) -> Instant {
        if let Some(start) = self.start {
            return start;
        }
        let start = self.gate.arrive();
        self.rec.set_start(start);
        self.start = Some(start);
        start
    }

    /// Sets (or, with `None`, clears) when this thread's warm-up ends.
    pub fn set_warm_up_end(&mut self, end: Option<Instant>) {
        self.warm_up_end = end;
    }

    /// True while warming up once the warm-up's time is over: a driver waiting for work (a
    /// deleter for rows to delete) stops waiting, so the thread can start the step.
    pub fn warm_up_over(&self) -> bool {
        self.warm_up_end.is_some_and(|end| Instant::now() >= end)
    }

    /// True when the step must end early (another thread failed, or the run was interrupted).
    #[inline]
    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || crate::interrupt::requested()
    }
}

/// The body of one client thread.
pub type ThreadBody<'s> = Box<dyn FnOnce(&mut ThreadCtx) -> Result<()> + Send + 's>;

/// One thread to start: which client it belongs to, what it does, and its body.
pub struct ThreadSpec<'s> {
    /// Client number, 0-based.
    pub client: usize,
    /// Role in error messages: `inserter`, `deleter`, `query`, `indexer`...
    pub role: &'static str,
    /// What the thread does.
    pub body: ThreadBody<'s>,
}

/// A finished thread: its index, recorder, finish time, and what it holds open.
type Done = (usize, Recorder, Instant, Vec<Box<dyn Send>>);

/// The text of a panic payload.
fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// The threads that carry a step's client connections.
#[derive(Clone, Copy, Debug)]
pub struct ClientThreads {
    /// Scheduler threads, each many connections (0: a thread per connection).
    pub threads: usize,
    /// Multiplex only a step with more connections than this (at least `threads`); one
    /// with fewer has a blocking thread per connection.
    pub multiplex_above: usize,
    /// How they wait for their connections.
    pub io: crate::mux::Backend,
}

impl Default for ClientThreads {
    /// A thread per connection.
    fn default() -> Self {
        ClientThreads {
            threads: 0,
            multiplex_above: 0,
            io: crate::mux::Backend::Epoll,
        }
    }
}

/// What watches a step's clients from the calling thread while they run.
pub trait Observer {
    /// Every client has connected and waits to start (the step's first sample).
    fn ready(&mut self);
    /// About ten times a second: every client's live counters, and the time since the step
    /// start. Returns the error the step fails with when it must stop (a node of the cluster
    /// died).
    fn monitor(&mut self, live: &[Arc<LiveCounters>], elapsed: Duration) -> Option<String>;
    /// Every client is done; the connections they hold (see [`ThreadCtx::hold`]) are still
    /// open (the step's last sample).
    fn finished(&mut self);
}

/// Runs the clients `threads` to completion: as tasks spread over `pool.threads` threads
/// when there are more of them than `pool.multiplex_above`, else (also when `pool.threads`
/// is 0, or this kernel cannot run `pool.io`) each on an OS thread of its own; `observer`
/// watches them from the calling thread.
pub fn run_clients(
    threads: Vec<ThreadSpec<'_>>,
    pool: ClientThreads,
    observer: &mut dyn Observer,
) -> StepOutcome {
    let n = threads.len();
    let shared = Shared {
        warm: WarmGate::new(n),
        gate: Gate::new(),
        stop: AtomicBool::new(false),
        error: Mutex::new(None),
    };
    let mut recorders: Vec<Option<Recorder>> = (0..n).map(|_| None).collect();
    let mut started_at = Utc::now();
    let mut start = Instant::now();
    let mut end = start;

    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let mut lives = Vec::with_capacity(n);
        let mut clients: Vec<(String, Task<'_>)> = Vec::with_capacity(n);
        // The step's response times per second, all its threads together.
        let seconds = Arc::new(SecondHistograms::default());
        for (i, spec) in threads.into_iter().enumerate() {
            let rec = Recorder::new(spec.client).with_seconds(Arc::clone(&seconds));
            lives.push(rec.live());
            clients.push(client_task(i, spec, rec, &shared, done_tx.clone()));
        }
        drop(done_tx);
        let spawned = spawn(scope, clients, pool, &shared);
        start = shared
            .gate
            .open_when_ready(spawned, &mut || observer.ready());
        started_at = Utc::now();
        let mut remaining = spawned;
        let mut held: Vec<Box<dyn Send>> = Vec::new();
        let tick = Duration::from_millis(100);
        while remaining > 0 {
            match done_rx.recv_timeout(tick) {
                Ok((i, mut rec, finished, resources)) => {
                    held.extend(resources);
                    rec.flush_seconds();
                    // The step ends with the last op, not with the connection's teardown.
                    end = end.max(rec.last_end().unwrap_or(finished));
                    recorders[i] = Some(rec);
                    remaining -= 1;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if let Some(failure) = observer.monitor(&lives, start.elapsed()) {
                shared.fail_first(failure);
            }
        }
        observer.finished();
        drop(held);
    });

    StepOutcome {
        started_at,
        duration: end.saturating_duration_since(start),
        recorders: recorders.into_iter().flatten().collect(),
        error: shared.error.into_inner().unwrap_or_else(|e| e.into_inner()),
        interrupted: crate::interrupt::requested(),
        costs: None,
        per_client_series: false,
    }
}

/// What a step's clients share: the gates they start through, the stop flag, the first
/// error.
struct Shared {
    warm: WarmGate,
    gate: Gate,
    stop: AtomicBool,
    error: Mutex<Option<String>>,
}

impl Shared {
    /// Makes `message` the step's error, before any a client reported (the cause of what
    /// the clients saw), and stops every client.
    fn fail_first(&self, message: String) {
        let mut first = self.error.lock().unwrap_or_else(|e| e.into_inner());
        *first = Some(match first.take() {
            Some(client) => format!("{message} (then {client})"),
            None => message,
        });
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Records `message` unless an error came first, and stops every client.
    fn fail(&self, message: String) {
        let mut first = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(message);
        }
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Client `i`'s task, named for its thread: runs its body (a failure or a panic becomes the
/// step's error, naming the client and its role), makes sure the gates still open for the
/// others, and sends what it recorded to `done`.
fn client_task<'a>(
    i: usize,
    spec: ThreadSpec<'a>,
    rec: Recorder,
    shared: &'a Shared,
    done: mpsc::Sender<Done>,
) -> (String, Task<'a>) {
    let (client, role) = (spec.client, spec.role);
    let body = spec.body;
    let fail = move |msg: String| shared.fail(format!("client {client} ({role}): {msg}"));
    let task: Task<'a> = Box::new(move || {
        let mut ctx = ThreadCtx {
            rec,
            warm: &shared.warm,
            warmed: false,
            gate: &shared.gate,
            stop: &shared.stop,
            start: None,
            held: Vec::new(),
            warm_up_end: None,
        };
        // A panic is a bug, but it must not hang the step: report it as an error.
        match panic::catch_unwind(AssertUnwindSafe(|| body(&mut ctx))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => fail(format!("{e:#}")),
            Err(payload) => fail(format!("panicked: {}", panic_message(&payload))),
        }
        // A body that failed before `warm_up` or `start` still arrives, so the gates open for
        // the others.
        if !ctx.warmed {
            drop(ctx.warm.count_in());
        }
        ctx.start();
        let _ = done.send((i, ctx.rec, Instant::now(), ctx.held));
    });
    (format!("{role}-{client}"), task)
}

/// Starts the `clients`' tasks in `scope`: spread round robin over `pool.threads` threads
/// when there are enough of them to multiplex, else each on a thread of its own. Returns how
/// many started; those that could not are counted in (so the gates open) and fail the step.
fn spawn<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    clients: Vec<(String, Task<'env>)>,
    pool: ClientThreads,
    shared: &'env Shared,
) -> usize {
    let fail_to_start = |what: String, count: usize| {
        for _ in 0..count {
            drop(shared.warm.count_in());
        }
        shared.fail(what);
    };
    let mut spawned = 0;
    // With a few clients per thread there is little to multiplex, and a blocking thread
    // costs less CPU per query than a ring or epoll (measured: docs/PERFORMANCE.md).
    let multiplex = pool.threads > 0
        && clients.len() > pool.threads.max(pool.multiplex_above)
        && pool.io.available();
    if !multiplex {
        for (name, task) in clients {
            match std::thread::Builder::new()
                .name(name.clone())
                .spawn_scoped(scope, task)
            {
                Ok(_) => spawned += 1,
                Err(e) => fail_to_start(format!("{name}: cannot start a thread: {e}"), 1),
            }
        }
        return spawned;
    }
    // Round robin over the scheduler threads, so each has its share of every role.
    let k = pool.threads.min(clients.len());
    let mut groups: Vec<Vec<Task<'_>>> = (0..k).map(|_| Vec::new()).collect();
    for (i, (_, task)) in clients.into_iter().enumerate() {
        groups[i % k].push(task);
    }
    for (g, tasks) in groups.into_iter().enumerate() {
        let count = tasks.len();
        let started = std::thread::Builder::new()
            .name(format!("clients-{g}"))
            .spawn_scoped(scope, move || {
                if let Err(e) = crate::mux::run_tasks(tasks, pool.io) {
                    shared.fail(format!("client thread {g}: {e}"));
                }
            });
        match started {
            Ok(_) => spawned += count,
            Err(e) => fail_to_start(
                format!("client thread {g}: cannot start a thread: {e}"),
                count,
            ),
        }
    }
    spawned
}

//! The one loop every client thread runs. A benchmark feeds it a [`Driver`]: what to send next
//! and how to send it; the loop owns everything else, the same way for every benchmark:
//! waiting for all clients to be ready, pacing (closed loop, or due times on a schedule),
//! timing (from the due time when there is one, so coordinated omission stays out), recording,
//! retries and reconnects (through the [`Session`]), stopping, and holding the connection open
//! until the step's end has been sampled.
//!
//! A driver's `send` issues its statements through the session one at a time; that is the
//! seam a multiplexed client (many connections per thread, replies awaited together) would
//! replace, without the drivers' `next` changing.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::client::{ThreadCtx, ThreadSpec};
use super::rate::{Pacer, wait_until};
use super::session::Session;
use crate::metrics::recorder::{Op, Recorder};

/// How a client paces its operations.
#[derive(Clone, Copy, Debug)]
pub enum Pacing {
    /// As fast as possible: until the driver has nothing more to send, or for `Some(d)`.
    Closed(Option<Duration>),
    /// As fast as possible for `duration`, after `warmup` in which the clients already run but
    /// nothing is recorded: the step (its clock and its cost samples) starts after the
    /// warm-up, when every client has finished it (see [`ThreadCtx::warm_up`]).
    Warmed {
        /// Not counted; zero for none.
        warmup: Duration,
        /// Counted.
        duration: Duration,
    },
    /// On a schedule: `batch` rows at `rate` rows/s for `window` (op k due at start +
    /// k * batch / rate). After the window, with `drain`, what the driver still has to send
    /// is sent at once (due when taken); without, the client stops, and the ops the schedule
    /// wanted but it never sent are counted as missed `op`s.
    Scheduled {
        /// The kind of op the schedule is for.
        op: Op,
        /// Rows per second.
        rate: u64,
        /// Rows per operation.
        batch: u64,
        /// How long the schedule runs.
        window: Duration,
        /// Keep sending what the driver has after the window.
        drain: bool,
        /// When the schedule begins after the step's start (its first op is due then; the
        /// window still ends at start + `window`): clients of one rate staggered so that
        /// their ops do not all fall due at once.
        offset: Duration,
    },
}

impl Pacing {
    /// The warm-up of a [`Pacing::Warmed`] step, zero for the others.
    pub fn warmup(&self) -> Duration {
        match self {
            Pacing::Warmed { warmup, .. } => *warmup,
            _ => Duration::ZERO,
        }
    }
}

/// One client's benchmark logic, fed to [`run`].
pub trait Driver {
    /// The connection operations it sends on (`dyn InsertBenchmarkConnection`, `dyn
    /// SqlConnection`).
    type Conn: ?Sized + Send + 'static;

    /// Prepares the next operation (values generated into reused buffers, rows claimed) and
    /// says which kind it is; `None` ends the client. Called before waiting for its due time.
    fn next(&mut self, ctx: &ThreadCtx) -> Result<Option<Op>>;

    /// Sends the prepared operation, each statement through `session` (which retries it);
    /// returns the rows it read or wrote.
    fn send(&mut self, session: &mut Session<'_, Self::Conn>, rec: &mut Recorder) -> Result<u64>;

    /// Runs once after the last operation, unless the step is stopping (e.g. a load builds
    /// an index); not timed as an operation.
    fn after(&mut self, _session: &mut Session<'_, Self::Conn>, _rec: &mut Recorder) -> Result<()> {
        Ok(())
    }
}

/// Runs `driver` on `session` at `pacing` until it is done, the time is up, or the step must
/// stop; then holds the connection open until the step's end is sampled. A
/// [`Pacing::Warmed`] step warms up first.
pub fn run<D: Driver>(
    ctx: &mut ThreadCtx,
    session: Session<'_, D::Conn>,
    driver: &mut D,
    pacing: Pacing,
) -> Result<()> {
    run_warmed(ctx, session, driver, pacing, pacing.warmup())
}

/// The thread of `client` in `role` every workload starts: it opens a [`Session`] with
/// `connect` (`tries` tries per statement, `reconnects` reconnects) and runs `driver` on it
/// at `pacing` after `warmup` ([`run_warmed`]).
pub fn thread<'s, C, F, D>(
    client: usize,
    role: &'static str,
    connect: F,
    (tries, reconnects): (u32, u32),
    mut driver: D,
    pacing: Pacing,
    warmup: Duration,
) -> ThreadSpec<'s>
where
    C: ?Sized + Send + 'static,
    F: Fn() -> Result<Box<C>> + Sync + Send + 's,
    D: Driver<Conn = C> + Send + 's,
{
    ThreadSpec {
        client,
        role,
        body: Box::new(move |ctx: &mut ThreadCtx| {
            let session = Session::connect(&connect, tries, reconnects)?;
            run_warmed(ctx, session, &mut driver, pacing, warmup)
        }),
    }
}

/// [`run`] after a warm-up of `warmup` (none when zero) in which the driver runs at `pacing`
/// (a schedule's rate from the warm-up's start, else as fast as possible) but nothing is
/// recorded except the warm-up's own counts ([`Recorder::count_warmup`]): the step (its
/// clock, its series and its cost samples) starts when every client of the step has finished
/// warming up. A driver that ends in the warm-up (its rows all sent) measures nothing after.
/// Every thread of a step must warm up, or none (they start warming up together).
pub fn run_warmed<D: Driver>(
    ctx: &mut ThreadCtx,
    mut session: Session<'_, D::Conn>,
    driver: &mut D,
    pacing: Pacing,
    warmup: Duration,
) -> Result<()> {
    let warmed = if warmup.is_zero() {
        None
    } else {
        Some(warm_up(ctx, &mut session, driver, pacing, warmup)?)
    };
    let start = ctx.start();
    if let Some(from) = warmed {
        ctx.rec
            .set_warmup_span(start.saturating_duration_since(from));
    }
    let mut pacer = match pacing {
        Pacing::Scheduled {
            rate,
            batch,
            window,
            offset,
            ..
        } => {
            let offset = offset.min(window);
            Some(Pacer::new(start + offset, rate, batch, window - offset))
        }
        Pacing::Closed(_) | Pacing::Warmed { .. } => None,
    };
    let deadline = match pacing {
        Pacing::Closed(Some(d)) | Pacing::Warmed { duration: d, .. } => Some(start + d),
        _ => None,
    };
    let drain = matches!(pacing, Pacing::Scheduled { drain: true, .. });
    let outcome = (|| {
        while !ctx.should_stop() {
            let due = match &mut pacer {
                Some(p) => match p.next_due() {
                    Some(due) => Some(due),
                    // Past the window: drained ops are due when they are taken.
                    None if drain => Some(Instant::now()),
                    None => break,
                },
                None => None,
            };
            let Some(op) = driver.next(ctx)? else { break };
            if let Some(due) = due {
                wait_until(due);
            }
            let sent = Instant::now();
            let rows = driver.send(&mut session, &mut ctx.rec)?;
            let end = Instant::now();
            ctx.rec.record_op(op, rows, due, sent, end);
            if deadline.is_some_and(|d| end >= d) {
                break;
            }
        }
        if ctx.should_stop() {
            return Ok(());
        }
        driver.after(&mut session, &mut ctx.rec)
    })();
    if let (
        Some(p),
        Pacing::Scheduled {
            op, drain: false, ..
        },
    ) = (&pacer, pacing)
    {
        ctx.rec.add_missed(op, p.missed());
    }
    ctx.hold(session.into_connection());
    outcome
}

/// The warm-up of [`run_warmed`]; returns when it started.
fn warm_up<D: Driver>(
    ctx: &mut ThreadCtx,
    session: &mut Session<'_, D::Conn>,
    driver: &mut D,
    pacing: Pacing,
    warmup: Duration,
) -> Result<Instant> {
    let from = ctx.warm_up();
    let until = from + warmup;
    ctx.set_warm_up_end(Some(until));
    let mut pacer = match pacing {
        Pacing::Scheduled { rate, batch, .. } => Some(Pacer::new(from, rate, batch, warmup)),
        Pacing::Closed(_) | Pacing::Warmed { .. } => None,
    };
    // Retries and reconnects of the warm-up are not the step's either.
    let mut scratch = Recorder::new(ctx.rec.client);
    while !ctx.should_stop() && Instant::now() < until {
        let due = match &mut pacer {
            Some(p) => match p.next_due() {
                Some(due) => Some(due),
                None => break,
            },
            None => None,
        };
        let Some(op) = driver.next(ctx)? else { break };
        if let Some(due) = due {
            wait_until(due);
        }
        let rows = driver.send(session, &mut scratch)?;
        ctx.rec.count_warmup(op, rows);
    }
    ctx.set_warm_up_end(None);
    Ok(from)
}

//! SIGINT and SIGTERM: the first one asks every step, server start-up and cool-down to stop
//! (results so far are saved); a second one exits at once. Everything that waits or loops
//! checks [`requested`].
//!
//! The exit code is 128 + the signal: 130 for SIGINT, 143 for SIGTERM (see `error.rs`).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by the signal handler; every step stops when it is set.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The signal that interrupted the run (0: none), for the exit code.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Whether the run has been asked to stop.
#[inline]
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The signal that asked the run to stop, if any.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// First SIGINT/SIGTERM: stop the steps and save. Second: exit at once (results on disk are
/// always complete documents, since they are written by rename). Installed once per process:
/// a second call (an experiment's next rounds, `--until-decided`) does nothing, since two
/// handlers would each see the first signal and the second of them would exit at once.
pub fn install_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(install);
}

fn install() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                std::process::exit(128 + sig);
            }
            SIGNAL.store(sig, Ordering::SeqCst);
        }
    });
}

//! SIGINT/SIGTERM for every subcommand that computes for long: `sim` (its sweeps,
//! `calibrate`, `validate`, `profile`, the lock test and trace replay), `bench`, `report`,
//! `dist`, `check`, `hash`, `keys`, `attack leak` and `attack channel`. The handlers
//! ([`crate::bench::interrupt`]) only record the signal, and a watcher thread decides how
//! the process ends when the work itself cannot. (`attack flood` and `capture` stop
//! themselves at the flag and need no watcher; `list` does no work worth stopping.)
//!
//! - [`Keeps::Nothing`]: the run writes only when it is done, so an interruption keeps
//!   nothing: the watcher prints `interrupted (SIGINT): nothing written` and exits 130
//!   at once. The work needs no stop flag of its own: whatever it was doing, nothing of
//!   it was going to be written, and a run stuck in a C hasher is ended the same way.
//! - [`Keeps::Finished`]: the run stops itself at the signal (it polls the flag) and
//!   writes what finished. The watcher steps in only when it does not: at a second
//!   signal, or [`GRACE`] after the first, the run is abandoned — the usual cause is a
//!   C hasher that never returns, which no flag can stop — and the process exits 130
//!   saying nothing was written. A second signal counts only if it comes at least
//!   [`signals::REPEAT_AFTER`] after the first ([`signals::repeated`]): GNU `timeout -s
//!   INT` signals the command and then its process group, microseconds apart, and that
//!   one request must stop the run as one Ctrl-C does, keeping what finished.
//!
//! Either way the output is all or nothing: before it writes, the main thread claims the
//! output ([`claim_output`]); the watcher exits only if it claims the run first. One
//! atomic holds who has it (`RUNNING`, then `WRITING` or `ABANDONED`, never back);
//! both sides change it with one `compare_exchange`, so exactly one wins. It guards no
//! other data (the output is the winner's alone), so the ordering does not matter for
//! correctness; `SeqCst` keeps the argument trivial on a path taken once.

use crate::bench::interrupt as signals;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// How long a run that keeps what finished may take to stop after the first signal
/// before it is abandoned: a simulation stops within milliseconds and a bench within
/// its workers' next pass, so only a hasher stuck in a call is still running then. (The
/// records of a stopped sweep are still built before it returns: about 0.5 ms each on a
/// busy 2-vCPU VM, so only a sweep of some ten thousand finished configurations comes
/// near it.)
pub(super) const GRACE: Duration = Duration::from_secs(5);

const RUNNING: u8 = 0;
const WRITING: u8 = 1;
const ABANDONED: u8 = 2;

/// Who has the output (see the module doc).
static STATE: AtomicU8 = AtomicU8::new(RUNNING);
/// Whether a watcher runs (for [`interrupted_after_output`]).
static WATCHED: AtomicBool = AtomicBool::new(false);

/// What an interrupted run keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keeps {
    /// Nothing: it writes only when done.
    Nothing,
    /// What finished: it stops itself at the signal and writes that.
    Finished,
}

/// Installs the handlers and starts the watcher. Call once, before the work starts.
pub(super) fn watch(keeps: Keeps) {
    watch_then(keeps, || {});
}

/// As [`watch`], and when the watcher abandons the run it calls `on_abandon` before it
/// exits: the process ends without unwinding, so whatever the run had set aside for its
/// output and only `Drop` would remove (`report`'s staging directory) is removed there.
/// It runs only once the watcher holds the output, so the main thread can no longer
/// commit or print it (it may still be adding work files there: the cleanup must
/// tolerate that, as [`crate::report::staging::Abandon`] does).
pub(super) fn watch_then(keeps: Keeps, on_abandon: impl FnOnce() + Send + 'static) {
    signals::install();
    WATCHED.store(true, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("signal watcher".into())
        .spawn(move || watcher(keeps, on_abandon));
    // Without a watcher the handlers still set the flag: the run stops itself as before.
    drop(spawned);
}

fn watcher(keeps: Keeps, on_abandon: impl FnOnce()) {
    const POLL: Duration = Duration::from_millis(20);
    while !signals::requested() {
        std::thread::sleep(POLL);
    }
    let first = Instant::now();
    let what = match keeps {
        Keeps::Nothing => "nothing written".to_string(),
        Keeps::Finished => loop {
            if STATE.load(Ordering::SeqCst) != RUNNING {
                // The run stopped and writes what finished; it reports the signal.
                return;
            }
            let why = if signals::repeated() {
                "a second signal came before it stopped".to_string()
            } else if first.elapsed() >= GRACE {
                format!("it did not stop within {} s", GRACE.as_secs())
            } else {
                std::thread::sleep(POLL);
                continue;
            };
            break format!(
                "the run was abandoned inside its work ({why}; a hasher that never \
                 returns?); nothing written"
            );
        },
    };
    if STATE
        .compare_exchange(RUNNING, ABANDONED, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        on_abandon();
        super::progress::clear();
        eprintln!("{}", super::interrupted_with(&what));
        std::process::exit(130);
    }
}

/// Called by the main thread before it writes any output (files or stdout) and before
/// its last line: from here on the output is the main thread's and the watcher no longer
/// exits. If the watcher has abandoned the run already, this never returns (the watcher
/// is exiting the process; nothing more may be written).
pub(super) fn claim_output() {
    match STATE.compare_exchange(RUNNING, WRITING, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) | Err(WRITING) => {}
        Err(_) => loop {
            std::thread::park();
        },
    }
}

/// True when a watched run finished its work and wrote its output, but a signal came
/// meanwhile: it still exits 130, saying the output is whole.
pub(super) fn interrupted_after_output() -> bool {
    WATCHED.load(Ordering::SeqCst) && signals::requested()
}

//! SIGINT / SIGTERM during a benchmark: perf's behaviour (`tools/perf/bench/futex-hash.c`
//! installs a SIGINT handler that sets `done`, so the workers stop and the results of the
//! elapsed time are printed). [`install`] sets handlers that only record the signal (and
//! pass it on to the kernel-backend children this process started); the runner polls
//! [`requested`] while the workers run, stops them early, and the caller reports what was
//! measured (how the process then ends is the CLI's to decide).
//!
//! Children are registered with [`ChildGuard`]; a child also dies with this process
//! through `PR_SET_PDEATHSIG` (set in [`super::child`]), so neither a signal to the parent
//! alone nor its death leaves a child running.
//!
//! The handler also counts the signals ([`count`]) and tells a repeated request ("stop
//! now", [`repeated`]) from the first: a signal is a repeat only if it comes at least
//! [`REPEAT_AFTER`] after the first one. One request often arrives twice: GNU
//! `timeout -s INT` signals the command and then its whole process group, and a terminal's
//! Ctrl-C reaches every process of the foreground group, which includes a kernel-backend
//! child this process also passes the signal on to. Such copies come microseconds apart
//! (a few scheduler slices at worst), a person's second Ctrl-C much later.
//!
//! Memory ordering: the handler stores with `SeqCst` and the runner loads with `SeqCst`;
//! the flags publish no data, so `Relaxed` would do, but the handler is not a hot path and
//! `SeqCst` keeps the argument trivial. The time of the first signal is claimed with one
//! `compare_exchange` from 0, so that of two handlers running at once on two threads
//! exactly one is the first and the other reads the winner's time; `SeqCst` again only
//! for simplicity (the time is the one datum, carried by the atomic itself). The child
//! table is a fixed array of `AtomicI32` (pid or 0): the handler only loads from it (no
//! allocation, no lock, async-signal-safe), registration stores with `SeqCst` before the
//! child can be interrupted by us.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// How long after the first signal another one counts as a repeated request rather than a
/// copy of the first. Copies of one request (see the module doc) are sent back to back:
/// microseconds apart on an idle machine, at most a few scheduler slices (milliseconds)
/// when the sender or this process waits for a CPU on a busy one. A person presses Ctrl-C
/// again only after seeing that the first did not stop the run, which takes at least a
/// visual reaction time (about 200 ms or more); a faster double tap is the same single
/// request, and a run that does not stop is abandoned after the watcher's grace period
/// anyway. 200 ms sits above the copies by two orders of magnitude and at the low end of
/// a deliberate second press.
pub const REPEAT_AFTER: Duration = Duration::from_millis(200);

/// Set by the handler.
static REQUESTED: AtomicBool = AtomicBool::new(false);
/// The first signal that set it (0: none): the one that started the stop is the one the
/// exit line names, whatever came after.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// SIGINTs and SIGTERMs received (a lock-free atomic: async-signal-safe).
static COUNT: AtomicU32 = AtomicU32::new(0);
/// `CLOCK_MONOTONIC` at the first signal, in ns, plus 1 (0: no signal yet).
static FIRST_NS: AtomicU64 = AtomicU64::new(0);
/// Set by a signal that came [`REPEAT_AFTER`] or more after the first.
static REPEATED: AtomicBool = AtomicBool::new(false);

/// `CLOCK_MONOTONIC` in ns. clock_gettime is async-signal-safe (signal-safety(7)), unlike
/// `Instant::now`, which promises nothing about signal handlers.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Records a signal that arrived at `now_ns` (monotonic ns): the first one's time, or
/// whether this one is a repeat. Only atomics: called from the handler.
fn note_arrival(now_ns: u64) {
    let stamp = now_ns.saturating_add(1);
    if let Err(first) = FIRST_NS.compare_exchange(0, stamp, Ordering::SeqCst, Ordering::SeqCst)
        // abs_diff: a handler that read its clock, stalled, and lost the exchange to a
        // later signal holds the earlier time; the two are still that far apart.
        && stamp.abs_diff(first) >= REPEAT_AFTER.as_nanos() as u64
    {
        REPEATED.store(true, Ordering::SeqCst);
    }
}

/// Kernel-backend children alive at the same time (the noisy workload runs two).
const MAX_CHILDREN: usize = 16;
static CHILDREN: [AtomicI32; MAX_CHILDREN] = [const { AtomicI32::new(0) }; MAX_CHILDREN];

extern "C" fn on_signal(sig: libc::c_int) {
    // The handler may interrupt code between a failing call and its read of errno; kill(2)
    // below can set errno (ESRCH for a child that just exited), so it is saved and restored
    // (signal-safety(7): handlers must preserve errno).
    // SAFETY: __errno_location() returns this thread's errno slot, valid for the thread's
    // life; reading and writing an int there is async-signal-safe.
    let saved = unsafe { *libc::__errno_location() };
    note_arrival(monotonic_ns());
    REQUESTED.store(true, Ordering::SeqCst);
    // Only the first signal is kept: a lost exchange means one is already recorded.
    let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
    for c in &CHILDREN {
        let pid = c.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) is async-signal-safe; `pid` is a child we started and have
            // not reaped yet (it is unregistered before `wait`), so it cannot be a reused pid.
            unsafe { libc::kill(pid, sig) };
        }
    }
    // SAFETY: as above, this thread's errno slot.
    unsafe { *libc::__errno_location() = saved };
}

/// Installs the SIGINT and SIGTERM handlers (idempotent).
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; zeroed is a valid empty mask with no flags.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        // SA_RESTART: interrupted reads and waits resume; the runner polls the flag.
        sa.sa_flags = libc::SA_RESTART;
        // SAFETY: `sa` is a valid sigaction whose handler only touches atomics and calls
        // kill(2), both async-signal-safe; the old action is not needed (null).
        unsafe {
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Whether SIGINT or SIGTERM arrived since [`install`].
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// How many SIGINTs and SIGTERMs arrived since [`install`].
pub fn count() -> u32 {
    COUNT.load(Ordering::SeqCst)
}

/// Whether a signal came [`REPEAT_AFTER`] or more after the first: a repeated request to
/// stop, not a second copy of the first (see the module doc).
pub fn repeated() -> bool {
    REPEATED.load(Ordering::SeqCst)
}

/// The first signal received (SIGINT or SIGTERM), if any.
pub fn signal() -> Option<i32> {
    Some(SIGNAL.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// A registered child: signals to this process are passed on to it until dropped.
#[derive(Debug)]
pub struct ChildGuard {
    slot: Option<usize>,
}

impl ChildGuard {
    /// Registers `pid` (a child of this process that has not been reaped). If a signal
    /// already arrived, the child gets it at once.
    pub fn new(pid: u32) -> Self {
        let pid = i32::try_from(pid).unwrap_or(0);
        let slot = CHILDREN.iter().position(|c| {
            c.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        if let Some(sig) = signal() {
            // SAFETY: as in the handler: our own child, not yet reaped.
            unsafe { libc::kill(pid, sig) };
        }
        ChildGuard { slot }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            CHILDREN[i].store(0, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `check` in a forked child, so that the process-wide state the handler sets
    /// (the flag, the first signal, registered children) stays out of this test process,
    /// where other tests poll it; the child exits 0 when `check` holds. Asserts that it did,
    /// `failure` naming what went wrong. `check` must do only async-signal-safe work
    /// (atomics, kill, errno): the child of a threaded process may do nothing else.
    fn in_child(check: impl FnOnce() -> bool, failure: &str) {
        // SAFETY: the child runs only `check` (async-signal-safe, as the caller promises)
        // and _exit, never returning into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ok = check();
            // SAFETY: _exit ends the child at once, running none of the parent's handlers.
            unsafe { libc::_exit(i32::from(!ok)) };
        }
        let mut status = 0;
        // SAFETY: reaping our own child into a valid int.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "child died: {status:#x}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "{failure}");
    }

    #[test]
    fn the_first_signal_is_the_one_named() {
        // SIGTERM started the stop; a SIGINT after it must not rename it.
        in_child(
            || {
                on_signal(libc::SIGTERM);
                on_signal(libc::SIGINT);
                signal() == Some(libc::SIGTERM)
            },
            "a later SIGINT renamed the SIGTERM",
        );
    }

    #[test]
    fn the_handler_leaves_errno_as_it_found_it() {
        // The child registers a pid that cannot exist (above the kernel's PID_MAX_LIMIT of
        // 2^22), so the handler's kill(2) fails with ESRCH, then checks errno.
        in_child(
            || {
                let _guard = ChildGuard::new(i32::MAX as u32);
                // SAFETY: this thread's errno slot.
                unsafe { *libc::__errno_location() = 4242 };
                on_signal(libc::SIGTERM);
                // SAFETY: as above.
                let errno = unsafe { *libc::__errno_location() };
                errno == 4242
            },
            "errno changed by the handler",
        );
    }

    #[test]
    fn a_handler_that_stalled_before_its_exchange_still_sees_the_repeat() {
        // Handler A reads its clock at t0, stalls; handler B (a real second Ctrl-C 300 ms
        // later) stamps first. A then loses the exchange holding the earlier time: the two
        // are 300 ms apart all the same, a repeat.
        in_child(
            || {
                let ms = 1_000_000u64;
                let t0 = 5_000 * ms;
                note_arrival(t0 + 300 * ms);
                note_arrival(t0);
                repeated()
            },
            "the stalled handler's repeat was lost",
        );
    }

    #[test]
    fn a_signal_repeats_the_request_only_from_the_window_on() {
        // In a forked child, as above: the first signal's time is process-wide. Times are
        // made up (ns); the expectation is the documented window, REPEAT_AFTER = 200 ms.
        // SAFETY: the child only touches atomics and calls _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let ms = 1_000_000u64;
            let t0 = 5_000 * ms;
            let mut bad = 0;
            note_arrival(t0);
            // A copy: timeout(1) signals the pid and then the group, microseconds apart.
            note_arrival(t0 + 3_000);
            bad |= i32::from(repeated());
            note_arrival(t0 + 199 * ms);
            bad |= i32::from(repeated()) << 1;
            note_arrival(t0 + 200 * ms);
            bad |= i32::from(!repeated()) << 2;
            // SAFETY: _exit ends the child at once.
            unsafe { libc::_exit(bad) };
        }
        let mut status = 0;
        // SAFETY: reaping our own child into a valid int.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status), "child died: {status:#x}");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "bit 0: a copy 3 us later, bit 1: one 199 ms later counted as a repeat; \
             bit 2: one 200 ms later did not"
        );
    }

    #[test]
    fn the_monotonic_clock_reads_like_instant() {
        // The handler's clock is the one `Instant` uses (CLOCK_MONOTONIC): a read between
        // two `Instant`s lies between them.
        let a = std::time::Instant::now();
        let t = monotonic_ns();
        let u = monotonic_ns();
        let b = a.elapsed();
        assert!(t > 0 && u >= t && Duration::from_nanos(u - t) <= b + Duration::from_micros(1));
    }
}

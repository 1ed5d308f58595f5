//! Signalling a running futexhash as a user at a shell would: start it, wait until it is
//! where the test wants it (its SIGINT handler installed, a file or a line it wrote) —
//! never a fixed time, which a busy machine can miss — send the signal, and collect the
//! exit with a generous limit that only a hung run reaches.
#![allow(dead_code)] // each test crate uses a different subset

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `futexhash ARGS` from the source tree, stdin empty, stdout and stderr piped.
pub fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start futexhash")
}

/// Sends `sig` to `child`.
pub fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on the pid of our own, not yet reaped, child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Waits until `cond` holds or `limit` passes; whether it held.
pub fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// Whether process `pid` has a handler for SIGINT (`SigCgt` of /proc/PID/status): a test
/// signals only once the handler is there, whatever the machine's load.
pub fn catches_sigint(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
}

/// Waits (at most a minute) until `child` catches SIGINT, so that the signal meets the
/// subcommand's handling and not the default action, however slow the start. A child that
/// never does is killed before the test fails, so that it does not run on after it.
pub fn wait_until_catching(child: &Child) {
    if !wait_for(Duration::from_secs(60), || catches_sigint(child.id())) {
        signal(child, libc::SIGKILL);
        panic!("futexhash never installed a SIGINT handler");
    }
}

/// Waits for `child` to exit: (exit status, stdout, stderr).
pub fn finish(child: Child) -> (Option<i32>, String, String) {
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// As [`finish`], waiting at most `limit` (then it kills `child` and fails).
pub fn finish_within(child: Child, limit: Duration) -> (Option<i32>, String, String) {
    let pid = child.id() as i32;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    let watchdog = std::thread::spawn(move || {
        let t0 = Instant::now();
        // SeqCst on a flag that publishes nothing else: simplest to argue, never hot.
        while !d.load(std::sync::atomic::Ordering::SeqCst) {
            if t0.elapsed() > limit {
                // SAFETY: kill(2) on the pid of our own child, which `finish` has not
                // reaped yet (`done` is set only after it returns).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    });
    let r = finish(child);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(!watchdog.join().unwrap(), "still running after {limit:?}");
    r
}

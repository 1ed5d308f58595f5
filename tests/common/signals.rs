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

/// Whether a SIGINT sent to process `pid` is still pending (`ShdPnd` or `SigPnd` of
/// /proc/PID/status): once it is not, a thread of the process has taken it and runs its
/// handler. A process that is gone has nothing pending.
pub fn sigint_pending(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .filter_map(|l| {
            l.strip_prefix("ShdPnd:")
                .or_else(|| l.strip_prefix("SigPnd:"))
        })
        .filter_map(|m| u64::from_str_radix(m.trim(), 16).ok())
        .any(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
}

/// Sends SIGINT and waits (polling without sleeping, at most a minute) until the child
/// has taken it, so that a signal sent next is a delivery of its own: two SIGINTs sent
/// back to back before either is taken merge into one pending signal.
pub fn sigint_and_wait_taken(child: &Child) {
    signal(child, libc::SIGINT);
    let t0 = Instant::now();
    while sigint_pending(child.id()) {
        if t0.elapsed() > Duration::from_secs(60) {
            signal(child, libc::SIGKILL);
            panic!("the SIGINT was never taken");
        }
        std::thread::yield_now();
    }
}

/// Delivers SIGINT to `child` twice in a row, as GNU `timeout -s INT` does (the command,
/// then its process group), each taken separately. Returns the time from the first send
/// until the second was taken: an upper bound (within the handler's own few instructions)
/// on how far apart the child's handler saw them.
pub fn sigint_twice_back_to_back(child: &Child) -> Duration {
    let t0 = Instant::now();
    sigint_and_wait_taken(child);
    sigint_and_wait_taken(child);
    t0.elapsed()
}

/// The thread ids of process `pid` whose name (`comm`) starts with `prefix`.
pub fn threads_named(pid: u32, prefix: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.starts_with(prefix))
        })
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// How many threads process `pid` has (0 once it is gone).
pub fn thread_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |d| d.count())
}

/// CPU time (user + system, in clock ticks) of `/proc/<path>/stat`: a process (all its
/// threads) or one thread (`PID/task/TID`). 0 if it is gone.
fn cpu_ticks(path: &str) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{path}/stat")) else {
        return 0;
    };
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| {
        f.get(i - 3)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    num(14) + num(15)
}

/// CPU time of thread `tid` of process `pid`, in clock ticks.
pub fn thread_cpu_ticks(pid: u32, tid: u32) -> u64 {
    cpu_ticks(&format!("{pid}/task/{tid}"))
}

/// CPU time of the whole process `pid`, in clock ticks.
pub fn process_cpu_ticks(pid: u32) -> u64 {
    cpu_ticks(&pid.to_string())
}

/// Clock ticks a second (`sysconf(_SC_CLK_TCK)`).
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as u64
}

/// Waits (at most a minute) until `child` has at least `n` threads named `prefix…` that
/// have each run on a CPU (user + system time above zero): its workers are past their
/// start and working, however long the machine took to get them there. A child that
/// never gets there is killed before the test fails.
pub fn wait_until_working(child: &Child, prefix: &str, n: usize) {
    let pid = child.id();
    let working = || {
        threads_named(pid, prefix)
            .iter()
            .filter(|&&tid| thread_cpu_ticks(pid, tid) > 0)
            .count()
            >= n
    };
    if !wait_for(Duration::from_secs(60), working) {
        signal(child, libc::SIGKILL);
        panic!("futexhash never had {n} working '{prefix}' threads");
    }
}

/// Waits (at most a minute of wall time) until process `pid` has used `secs` of CPU time:
/// an amount of work done, not of time passed, so a busy machine only makes it take
/// longer. Kills `child` and fails if that never happens.
pub fn wait_until_cpu_time(child: &Child, secs: f64) {
    let want = (secs * ticks_per_second() as f64).ceil() as u64;
    if !wait_for(Duration::from_secs(60), || {
        process_cpu_ticks(child.id()) >= want
    }) {
        signal(child, libc::SIGKILL);
        panic!("futexhash never used {secs} s of CPU time");
    }
}

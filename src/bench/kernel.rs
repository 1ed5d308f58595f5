//! The `kernel` backend: the real `futex(2)` system call of the running kernel, and its
//! per-process private futex hash (`prctl(PR_FUTEX_HASH, ...)`, Linux 6.16+,
//! `kernel/futex/core.c: futex_hash_prctl()` and `futex_hash_allocate()`; perf's
//! `tools/perf/bench/futex.c` drives it the same way).
//!
//! `PR_FUTEX_HASH_SET_SLOTS` takes 0 (use the global hash: irreversible for the process) or
//! a power of two ≥ 2 (a private table of that many buckets); the 4th argument must be 0.
//! In Linux 6.18 the private table hashes only the address words of the key
//! (`__futex_hash_private()`: `jhash2(&key->private.address, 2, key->both.offset)`, the
//! seed's `jhash2-addr`), the global table the whole key (`jhash2`, 4 words + offset). A user-chosen size wins over the kernel's
//! automatic sizing on thread creation. Because each setting sticks to the process,
//! every configuration of a sweep runs in a child process: the parent re-executes this
//! binary (`futexhash bench --internal-child JSON`), the child sets the slots, runs the
//! [`runner`](super::runner), reads the slots back with `PR_FUTEX_HASH_GET_SLOTS` and
//! prints a [`ChildReport`] as JSON on stdout.
//!
//! Shared futexes (no `FUTEX_PRIVATE_FLAG`, `-S`) are keyed by mm + address with the
//! "mm shared" offset bit for anonymous memory, and such keys always use the global hash,
//! whatever the slot setting.

use super::runner::{self, Backend, RunConfig, Worker};
use crate::throughput::RunOutcome;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

/// `PR_FUTEX_HASH` (include/uapi/linux/prctl.h).
pub const PR_FUTEX_HASH: libc::c_int = 78;
/// Set the number of private hash slots (0 = global hash).
pub const PR_FUTEX_HASH_SET_SLOTS: libc::c_ulong = 1;
/// Read the number of private hash slots (0 = global hash).
pub const PR_FUTEX_HASH_GET_SLOTS: libc::c_ulong = 2;

/// The value the hash workload expects (never the word's value, which is 0).
const WAIT_EXPECTED: u32 = 1234;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS)`: the current number of private hash
/// slots (0 = global hash), or the errno (EINVAL: the kernel has no private futex hash).
pub fn get_slots() -> Result<u64, i32> {
    // SAFETY: prctl with integer arguments only; no memory is passed to the kernel.
    let rc = unsafe { libc::prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0, 0, 0) };
    if rc < 0 { Err(errno()) } else { Ok(rc as u64) }
}

/// `prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, slots, 0)`.
pub fn set_slots(slots: u64) -> Result<(), i32> {
    let n = libc::c_ulong::try_from(slots).map_err(|_| libc::EINVAL)?;
    // SAFETY: prctl with integer arguments only; no memory is passed to the kernel.
    let rc = unsafe {
        libc::prctl(
            PR_FUTEX_HASH,
            PR_FUTEX_HASH_SET_SLOTS,
            n,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc < 0 { Err(errno()) } else { Ok(()) }
}

/// Environment variable that makes [`private_hash_supported`] answer "no", so the
/// fallback for kernels without `PR_FUTEX_HASH` (global hash only) can be tested on a
/// kernel that has it.
pub const ASSUME_NO_PRIVATE_HASH_ENV: &str = "FUTEXHASH_ASSUME_NO_PRIVATE_HASH";

/// Whether this kernel has the private futex hash (`PR_FUTEX_HASH`). Reading the slot
/// count changes nothing, so this is safe to call in the parent process.
pub fn private_hash_supported() -> bool {
    if std::env::var_os(ASSUME_NO_PRIVATE_HASH_ENV).is_some_and(|v| v == "1") {
        return false;
    }
    get_slots().is_ok()
}

/// The kernel backend for one process: private or shared futexes.
#[derive(Clone, Copy, Debug)]
pub struct KernelBackend {
    /// Use shared futexes (no `FUTEX_PRIVATE_FLAG`), as perf's `-S`.
    pub shared: bool,
}

/// A thread's futex words and the futex op codes to use on them.
#[derive(Debug)]
pub struct KernelWorker {
    words: Box<[AtomicU32]>,
    wait_op: libc::c_int,
    wake_op: libc::c_int,
}

impl KernelWorker {
    #[inline]
    fn futex(&self, idx: usize, op: libc::c_int, val: u32) -> libc::c_long {
        let addr = self.words[idx].as_ptr();
        // SAFETY: `addr` points to a live, aligned 4-byte word owned by this worker (the
        // kernel only reads it for WAIT and only hashes its address for WAKE); the
        // timeout, uaddr2 and val3 arguments are unused by FUTEX_WAIT/FUTEX_WAKE and null.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                addr,
                op,
                val,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0u32,
            )
        }
    }
}

impl Worker for KernelWorker {
    #[inline]
    fn wait_fail(&mut self, idx: usize) -> bool {
        let rc = self.futex(idx, self.wait_op, WAIT_EXPECTED);
        rc == -1 && errno() == libc::EAGAIN
    }

    #[inline]
    fn wake(&mut self, idx: usize) -> bool {
        self.futex(idx, self.wake_op, 1) == 0
    }

    fn word_addr(&self, idx: usize) -> usize {
        self.words[idx].as_ptr() as usize
    }
}

impl Backend for KernelBackend {
    type Worker<'a> = KernelWorker;

    fn worker(&self, _thread: usize, futexes: usize) -> KernelWorker {
        let flag = if self.shared {
            0
        } else {
            libc::FUTEX_PRIVATE_FLAG
        };
        KernelWorker {
            words: (0..futexes).map(|_| AtomicU32::new(0)).collect(),
            wait_op: libc::FUTEX_WAIT | flag,
            wake_op: libc::FUTEX_WAKE | flag,
        }
    }
}

/// One kernel configuration, as the parent hands it to a child process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildConfig {
    /// The run itself.
    pub run: RunConfig,
    /// Private hash slots to set (0 = global hash); None leaves the kernel's default.
    pub slots: Option<u64>,
    /// Shared futexes (`-S`).
    pub shared: bool,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)` first (`-m`).
    pub mlockall: bool,
    /// Run the `lock` workload ([`super::contend`]) instead of `run`'s loop (`run` then
    /// only gives the run time).
    #[serde(default)]
    pub lock: Option<LockChild>,
}

/// The `lock` workload's shape, for a child process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockChild {
    /// Groups, holders and contenders.
    pub shape: super::contend::LockShape,
}

/// What a child process measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildReport {
    /// The child's process id (perf prints it in "Run summary [PID N]").
    pub pid: u32,
    /// Whether the kernel has `PR_FUTEX_HASH`.
    pub private_hash: bool,
    /// Slots requested (None: kernel default).
    pub slots_requested: Option<u64>,
    /// Slots read back with `PR_FUTEX_HASH_GET_SLOTS` after the run (None: unsupported).
    pub slots_applied: Option<u64>,
    /// The measurement (the `lock` workload: the contenders).
    pub outcome: RunOutcome,
    /// The `lock` workload's holders.
    #[serde(default)]
    pub lock_outcome: Option<RunOutcome>,
}

/// A failure of a kernel run: `usage` errors come from the user's choice (e.g. a slot
/// count the kernel refuses), the others from the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    /// True when the cause is a bad user choice (exit 2), false for a runtime failure.
    pub usage: bool,
    /// One line explaining what went wrong.
    pub message: String,
}

impl std::fmt::Display for KernelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn runtime_err(message: String) -> KernelError {
    KernelError {
        usage: false,
        message,
    }
}

/// Explains why `PR_FUTEX_HASH_SET_SLOTS` failed.
fn set_slots_error(slots: u64, e: i32) -> KernelError {
    let os = std::io::Error::from_raw_os_error(e);
    match e {
        libc::EINVAL => KernelError {
            usage: true,
            message: format!(
                "the kernel refused {slots} private hash slots ({os}): it takes 0 (global \
                 hash) or a power of two >= 2"
            ),
        },
        libc::ENOMEM => KernelError {
            usage: true,
            message: format!("the kernel could not allocate {slots} private hash slots ({os})"),
        },
        libc::EBUSY => runtime_err(format!(
            "the kernel refused to change the private hash to {slots} slots now ({os}): the \
             process already switched to the global hash or a resize is in flight"
        )),
        _ => runtime_err(format!(
            "prctl(PR_FUTEX_HASH, SET_SLOTS, {slots}) failed: {os}"
        )),
    }
}

/// Runs one configuration in *this* process (the child side). Irreversibly changes this
/// process's futex hash when `cfg.slots` is set.
pub fn run_here(cfg: &ChildConfig) -> Result<ChildReport, KernelError> {
    if cfg.mlockall {
        // SAFETY: plain syscall with flag arguments.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            return Err(runtime_err(format!(
                "mlockall: {}",
                std::io::Error::last_os_error()
            )));
        }
    }
    let private_hash = private_hash_supported();
    if let Some(n) = cfg.slots {
        if !private_hash {
            if n != 0 {
                return Err(KernelError {
                    usage: true,
                    message: format!(
                        "this kernel has no private futex hash (prctl PR_FUTEX_HASH, Linux \
                         6.16+): cannot set {n} slots; only the global hash (-b 0) can run"
                    ),
                });
            }
        } else {
            set_slots(n).map_err(|e| set_slots_error(n, e))?;
            let got = get_slots().map_err(|e| {
                runtime_err(format!(
                    "cannot read back the private hash slots: {}",
                    std::io::Error::from_raw_os_error(e)
                ))
            })?;
            if got != n {
                return Err(runtime_err(format!(
                    "requested {n} private hash slots but the kernel uses {got}"
                )));
            }
        }
    }
    let (outcome, lock_outcome) = match cfg.lock {
        Some(l) => {
            let (c, h) = super::contend::lock_run(
                &super::contend::KernelLockFutex,
                l.shape,
                cfg.run.runtime,
            )
            .map_err(runtime_err)?;
            (c, Some(h))
        }
        None => (
            runner::run(&KernelBackend { shared: cfg.shared }, &cfg.run)
                .map_err(|e| runtime_err(e.0))?,
            None,
        ),
    };
    let slots_applied = if private_hash { get_slots().ok() } else { None };
    if let (Some(want), Some(got)) = (cfg.slots, slots_applied) {
        if want != got {
            return Err(runtime_err(format!(
                "requested {want} private hash slots but after the run the kernel uses {got}"
            )));
        }
    }
    Ok(ChildReport {
        pid: std::process::id(),
        private_hash,
        slots_requested: cfg.slots,
        slots_applied,
        outcome,
        lock_outcome,
    })
}

/// Runs one configuration in a fresh child process (`exe bench --internal-child JSON`)
/// and returns its report. The child is killed if it has not finished within the run time
/// plus a generous margin, so a sweep never hangs. `forward_stderr` receives any warnings
/// the child printed.
pub fn run_in_child(
    exe: &std::path::Path,
    cfg: &ChildConfig,
    forward_stderr: &mut dyn FnMut(&str),
) -> Result<ChildReport, KernelError> {
    let json = serde_json::to_string(cfg).map_err(|e| runtime_err(e.to_string()))?;
    let mut child = Command::new(exe)
        .args(["bench", "--internal-child", &json])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| runtime_err(format!("cannot start '{}': {e}", exe.display())))?;
    // Drain both pipes on helper threads so a chatty child cannot block on a full pipe.
    let mut out_pipe = child.stdout.take().expect("stdout is piped");
    let mut err_pipe = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let limit = cfg.run.runtime * 2 + Duration::from_secs(30);
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                // Our own child, killed by its pid.
                let _ = child.kill();
                let _ = child.wait();
                return Err(runtime_err(format!(
                    "the benchmark child process did not finish within {:.0} s and was killed",
                    limit.as_secs_f64()
                )));
            }
            Err(e) => return Err(runtime_err(format!("waiting for the child process: {e}"))),
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        let msg = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message")
            .trim();
        let msg = msg.strip_prefix("futexhash: error: ").unwrap_or(msg);
        return Err(KernelError {
            usage: status.code() == Some(2),
            message: msg.to_string(),
        });
    }
    if !stderr.trim().is_empty() {
        forward_stderr(&stderr);
    }
    serde_json::from_str(&stdout).map_err(|e| {
        runtime_err(format!(
            "cannot read the child's report ({e}): {}",
            stdout.chars().take(200).collect::<String>()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_fails_with_eagain_and_wake_wakes_nobody() {
        for shared in [false, true] {
            let mut w = KernelBackend { shared }.worker(0, 4);
            for i in 0..4 {
                assert!(w.wait_fail(i), "wait on word {i} (shared {shared})");
                assert!(w.wake(i), "wake on word {i} (shared {shared})");
            }
            assert_eq!(w.word_addr(3) - w.word_addr(0), 12);
        }
    }

    #[test]
    fn set_slots_errors_are_explained() {
        let e = set_slots_error(3, libc::EINVAL);
        assert!(e.usage && e.message.contains("power of two"));
        let e = set_slots_error(16, libc::EBUSY);
        assert!(!e.usage && e.message.contains("global hash"));
    }

    #[test]
    fn child_config_round_trips_as_json() {
        let cfg = ChildConfig {
            run: RunConfig {
                sample_period: 1,
                ..RunConfig::new(
                    2,
                    1024,
                    Duration::from_millis(500),
                    crate::throughput::Workload::Wake,
                )
            },
            slots: Some(16),
            shared: false,
            mlockall: true,
            lock: None,
        };
        let s = serde_json::to_string(&cfg).unwrap();
        assert_eq!(serde_json::from_str::<ChildConfig>(&s).unwrap(), cfg);
    }
}

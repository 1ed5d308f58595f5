//! The child-process protocol of the kernel backend — the only place that knows the
//! `futexhash` binary re-executes itself.
//!
//! A private-hash slot setting (`prctl(PR_FUTEX_HASH_SET_SLOTS)`, [`super::kernel`]) sticks
//! to a process, so every kernel configuration runs in a fresh child: the parent runs
//! `EXE bench --internal-child JSON` ([`CHILD_FLAG`]) with a [`ChildConfig`]; the child
//! ([`serve`]) sets the slots, runs the [`runner`](super::runner) (or the `lock` workload),
//! reads the slots back with `PR_FUTEX_HASH_GET_SLOTS` and prints a [`ChildReport`] as JSON
//! on stdout. Exit status 2 from the child is a usage error, anything else non-zero a
//! runtime failure.
//!
//! Lifetime: the child is started with `PR_SET_PDEATHSIG = SIGKILL`, so it dies with the
//! parent's thread that started it; while it runs it is registered with
//! [`super::interrupt`], so a SIGINT/SIGTERM to the parent alone is passed on, and the
//! child stops early and reports the elapsed time like any interrupted run.

use super::interrupt::ChildGuard;
use super::kernel::{self, KernelBackend};
use super::lock::{self, KernelLockFutex};
use super::options::{BenchError, LockShape};
use super::runner::{self, RunConfig};
use crate::throughput::RunOutcome;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The hidden `bench` flag that makes the binary a child.
pub const CHILD_FLAG: &str = "--internal-child";

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
    /// Run the `lock` workload ([`super::lock`]) instead of `run`'s loop (`run` then
    /// only gives the run time).
    #[serde(default)]
    pub lock: Option<LockShape>,
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

/// The `futexhash` binary to re-execute: `exe` if given, else this process's own.
pub fn resolve_exe(exe: Option<&Path>) -> Result<PathBuf, BenchError> {
    match exe {
        Some(p) => Ok(p.to_path_buf()),
        None => std::env::current_exe()
            .map_err(|e| BenchError::runtime(format!("cannot find this program's path: {e}"))),
    }
}

/// Sets the slots `cfg` asks for (and checks the kernel took them).
fn apply_slots(cfg: &ChildConfig, private_hash: bool) -> Result<(), BenchError> {
    let Some(n) = cfg.slots else { return Ok(()) };
    if !private_hash {
        if n != 0 {
            return Err(BenchError::usage(format!(
                "this kernel has no private futex hash (prctl PR_FUTEX_HASH, Linux 6.16+): \
                 cannot set {n} slots; only the global hash (-b 0) can run"
            )));
        }
        return Ok(());
    }
    kernel::set_slots(n).map_err(|e| kernel::set_slots_error(n, e))?;
    let got = kernel::get_slots().map_err(|e| {
        BenchError::runtime(format!(
            "cannot read back the private hash slots: {}",
            std::io::Error::from_raw_os_error(e)
        ))
    })?;
    if got != n {
        return Err(BenchError::runtime(format!(
            "requested {n} private hash slots but the kernel uses {got}"
        )));
    }
    Ok(())
}

/// Runs one configuration in *this* process (the child side). Irreversibly changes this
/// process's futex hash when `cfg.slots` is set.
pub fn run_here(cfg: &ChildConfig) -> Result<ChildReport, BenchError> {
    if cfg.mlockall {
        // SAFETY: plain syscall with flag arguments.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            return Err(BenchError::runtime(format!(
                "mlockall: {}",
                std::io::Error::last_os_error()
            )));
        }
    }
    let private_hash = kernel::private_hash_supported();
    apply_slots(cfg, private_hash)?;
    let (outcome, lock_outcome) = match cfg.lock {
        Some(shape) => {
            let (c, h) = lock::lock_run(&KernelLockFutex, shape, cfg.run.runtime)
                .map_err(BenchError::runtime)?;
            (c, Some(h))
        }
        None => (
            runner::run(&KernelBackend { shared: cfg.shared }, &cfg.run)
                .map_err(|e| BenchError::runtime(e.0))?,
            None,
        ),
    };
    let slots_applied = if private_hash {
        kernel::get_slots().ok()
    } else {
        None
    };
    if let (Some(want), Some(got)) = (cfg.slots, slots_applied) {
        if want != got {
            return Err(BenchError::runtime(format!(
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

/// The child's entry point: `json` is a [`ChildConfig`]; returns the [`ChildReport`] as
/// one line of JSON for stdout.
pub fn serve(json: &str) -> Result<String, BenchError> {
    let cfg: ChildConfig = serde_json::from_str(json)
        .map_err(|e| BenchError::usage(format!("bad {CHILD_FLAG} configuration: {e}")))?;
    let report = run_here(&cfg)?;
    serde_json::to_string(&report).map_err(|e| BenchError::runtime(e.to_string()))
}

/// Starts `exe bench --internal-child JSON` with piped output, dying with its parent.
fn spawn(exe: &Path, json: &str) -> Result<std::process::Child, BenchError> {
    let mut cmd = Command::new(exe);
    cmd.args(["bench", CHILD_FLAG, json])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec and calls only prctl(2),
    // which is async-signal-safe; it touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| BenchError::runtime(format!("cannot start '{}': {e}", exe.display())))
}

/// Whether child `pid` has exited, without reaping it (`waitid(WNOWAIT)`), so the pid
/// stays ours while it is registered for signal forwarding.
fn exited(pid: u32) -> Result<bool, BenchError> {
    // SAFETY: siginfo_t is plain data; zeroed is valid and si_pid stays 0 when nothing
    // changed (WNOHANG).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid, writable siginfo_t; P_PID with our own child's pid.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINTR) {
            return Ok(false);
        }
        return Err(BenchError::runtime(format!(
            "waiting for the child process: {e}"
        )));
    }
    // SAFETY: waitid filled `info` (or left it zeroed); si_pid is valid for SIGCHLD infos.
    Ok(unsafe { info.si_pid() } != 0)
}

/// Runs one configuration in a fresh child process (`exe bench --internal-child JSON`)
/// and returns its report. The child is killed if it has not finished within the run time
/// plus a generous margin, so a sweep never hangs. `forward_stderr` receives any warnings
/// the child printed.
pub fn run_in_child(
    exe: &Path,
    cfg: &ChildConfig,
    forward_stderr: &mut dyn FnMut(&str),
) -> Result<ChildReport, BenchError> {
    let json = serde_json::to_string(cfg).map_err(|e| BenchError::runtime(e.to_string()))?;
    let mut child = spawn(exe, &json)?;
    let guard = ChildGuard::new(child.id());
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
    while !exited(child.id())? {
        if Instant::now() >= deadline {
            // Our own child, killed by its pid.
            drop(guard);
            let _ = child.kill();
            let _ = child.wait();
            return Err(BenchError::runtime(format!(
                "the benchmark child process did not finish within {:.0} s and was killed",
                limit.as_secs_f64()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(guard);
    let status = child
        .wait()
        .map_err(|e| BenchError::runtime(format!("waiting for the child process: {e}")))?;
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    if !status.success() {
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim())
            .map(|l| {
                l.strip_prefix("futexhash: error: ")
                    .unwrap_or(l)
                    .to_string()
            });
        return Err(BenchError {
            usage: status.code() == Some(2),
            message: last.unwrap_or_else(|| silent_failure(status)),
        });
    }
    if !stderr.trim().is_empty() {
        forward_stderr(&stderr);
    }
    serde_json::from_str(&stdout).map_err(|e| {
        BenchError::runtime(format!(
            "cannot read the child's report ({e}): {}",
            stdout.chars().take(200).collect::<String>()
        ))
    })
}

/// What to say of a child that failed without a word on stderr: interrupted with us, killed
/// by a signal (named), or its exit status.
fn silent_failure(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let interrupted = super::interrupt::requested();
    match (status.code(), status.signal()) {
        (_, Some(sig)) if interrupted => format!(
            "interrupted: the benchmark child process stopped on signal {sig} before it reported"
        ),
        (Some(130), _) if interrupted => {
            "interrupted: the benchmark child process stopped before it reported".to_string()
        }
        (_, Some(sig)) => format!("the benchmark child process was killed by signal {sig}"),
        (Some(code), _) => {
            format!("the benchmark child process exited with status {code} and no message")
        }
        (None, None) => "the benchmark child process failed with no message".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            lock: Some(LockShape {
                groups: 2,
                holders: 1,
                contenders: 3,
            }),
        };
        let s = serde_json::to_string(&cfg).unwrap();
        assert_eq!(serde_json::from_str::<ChildConfig>(&s).unwrap(), cfg);
    }

    #[test]
    fn a_silent_failure_is_named_by_its_signal_or_status() {
        use std::os::unix::process::ExitStatusExt;
        // Raw wait statuses (wait(2)): a signal in the low 7 bits, an exit code in bits 8-15.
        assert_eq!(
            silent_failure(std::process::ExitStatus::from_raw(libc::SIGSEGV)),
            "the benchmark child process was killed by signal 11"
        );
        assert_eq!(
            silent_failure(std::process::ExitStatus::from_raw(3 << 8)),
            "the benchmark child process exited with status 3 and no message"
        );
    }

    #[test]
    fn a_bad_configuration_is_a_usage_error() {
        let e = serve("{not json").unwrap_err();
        assert!(e.usage && e.message.contains(CHILD_FLAG), "{e}");
    }
}

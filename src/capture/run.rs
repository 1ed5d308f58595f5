//! Running a capture: checks, the target held at the door until bpftrace is attached,
//! bpftrace as a child process, the stop conditions, and the atomic write of the file.
//!
//! Order of events for `-- CMD`: the command is resolved on `PATH` and the kernel's
//! features are read (no process started yet); a child is forked that blocks reading a
//! pipe; bpftrace is started with that child's pid as the root of the followed tree and
//! prints `# ready` from `BEGIN`, i.e. after all probes are attached; only then is the
//! child released and `execv`s the command. So the command's first futex call, and that of
//! every thread and child it creates, is seen. With `-p PID` the roots are PID and its
//! descendants found in `/proc` at start.
//!
//! Stopping ([`EndReason`]): when the target (the command, or process PID) exits, after
//! `--seconds`, after `--max-events` event lines or `--max-bytes` bytes of them, or when
//! the caller's stop flag is set (the CLI sets it on SIGINT/SIGTERM). Every condition is
//! checked in this process after each line bpftrace prints and at least every [`POLL`]:
//! bpftrace's lines arrive through reader threads and a channel read with a timeout, so a
//! target that keeps the stream busy cannot keep the loop from seeing the deadline or the
//! flag. When the target exits, the lines still in bpftrace's buffers are waited for until
//! the stream has been quiet for [`DRAIN`] (at most [`DRAIN_MAX`]). Then, for every reason
//! at once: bpftrace gets SIGINT (it prints what its perf buffers still hold and exits) and
//! a command we started gets SIGTERM; what bpftrace prints is read until it exits or
//! [`STOP_GRACE`] has passed, when it is killed; the lines its readers had already queued
//! are taken for at most [`AFTER_KILL`]; a command still running [`TARGET_EXIT_TIMEOUT`]
//! after its SIGTERM is killed and reaped. So the file is written at most about 1.5 s
//! after the stop condition, however busy the target. The limits are then applied to the
//! time-ordered lines (a call is never separated from its vector entries) and the file
//! says in its trailer why it stopped.
//!
//! bpftrace runs in its own process group (a terminal's Ctrl-C reaches only us and the
//! target), and both children get `PR_SET_PDEATHSIG` so that neither outlives us.

pub use super::error::CaptureError;
use super::file::{self, cut_to_limits};
use super::format::{EndReason, Syscall};
use super::held::HeldChild;
pub use super::held::TARGET_EXIT_TIMEOUT;
use super::script::{self, KernelFeatures, ProbePath};
use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// How long bpftrace may take to attach its probes.
pub const ATTACH_TIMEOUT: Duration = Duration::from_secs(90);
/// How long bpftrace may take to print what its buffers hold and exit after SIGINT,
/// before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(1);
/// How long the lines already read from a killed bpftrace are still taken.
pub const AFTER_KILL: Duration = Duration::from_millis(300);
/// Quiet time after the target exits before bpftrace is stopped (its buffers drain).
pub const DRAIN: Duration = Duration::from_millis(300);
/// Longest wait for that quiet time (a stream that never pauses is cut here).
pub const DRAIN_MAX: Duration = Duration::from_secs(1);
/// Longest time between two checks of the stop conditions while capturing.
pub const POLL: Duration = Duration::from_millis(20);
/// Per-CPU perf buffer pages bpftrace is asked for (`BPFTRACE_PERF_RB_PAGES`, unless set).
pub const PERF_RB_PAGES: &str = "1024";

/// What to capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// An existing process and its descendants.
    Pid(u32),
    /// A command (program and arguments) started by the capture.
    Command(Vec<OsString>),
}

/// Options of one capture.
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    /// What to trace.
    pub target: Target,
    /// Stop after this long (else when the target exits or the stop flag is set).
    pub seconds: Option<f64>,
    /// Stop after this many event lines; the file holds at most this many.
    pub max_events: Option<u64>,
    /// Stop after this many bytes of event lines (newlines included); the file holds at
    /// most this many bytes of them (plus the header and trailer lines).
    pub max_bytes: Option<u64>,
    /// Where to write the capture (atomically); `None` = stdout, written at the end.
    pub output: Option<PathBuf>,
    /// Try the kernel-key probes when the kernel seems to allow them.
    pub kernel_key: bool,
}

/// What a finished capture did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureSummary {
    /// The probe path used.
    pub probe: ProbePath,
    /// Why the kernel-key path was not used, if it was not.
    pub kernel_key_note: Option<String>,
    /// Event lines written.
    pub events: usize,
    /// Events bpftrace reported lost.
    pub lost: u64,
    /// Why the capture ended (the trailer's `reason=`).
    pub reason: EndReason,
    /// The root pid traced.
    pub root: u32,
    /// Exit status of a started command (`None`: killed by a signal, or not ours).
    pub exit_code: Option<i32>,
}

/// The `-p PID` / `-- CMD` checks alone (no process started), for callers that want to
/// refuse bad input early.
pub fn check_target(t: &Target) -> Result<(), CaptureError> {
    match t {
        Target::Pid(p) => tgid_of(*p).map(|_| ()),
        Target::Command(argv) => resolve_program(argv).map(|_| ()),
    }
}

/// Finds `name` on `PATH` (a name containing `/` is taken as a path).
pub fn find_on_path(name: &OsStr) -> Option<PathBuf> {
    let is_exec = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.as_bytes().contains(&b'/') {
        let p = PathBuf::from(name);
        return is_exec(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_exec(p))
}

fn resolve_program(argv: &[OsString]) -> Result<PathBuf, CaptureError> {
    let prog = argv
        .first()
        .ok_or_else(|| CaptureError::Target("no command given after '--'".into()))?;
    find_on_path(prog).ok_or_else(|| {
        CaptureError::Target(format!(
            "command '{}' not found (not an executable file, nor on PATH)",
            prog.to_string_lossy()
        ))
    })
}

/// The thread group of task `pid` (a thread id is mapped to its process).
fn tgid_of(pid: u32) -> Result<u32, CaptureError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|_| CaptureError::Target(format!("process {pid} not found")))?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    if field("State:").is_some_and(|s| s.starts_with('Z')) {
        return Err(CaptureError::Target(format!(
            "process {pid} has exited (zombie)"
        )));
    }
    field("Tgid:")
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| CaptureError::Target(format!("process {pid}: no Tgid in /proc")))
}

/// `pid` and every live descendant process, from the `ppid` fields of `/proc/*/stat`.
fn process_tree(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
                continue;
            };
            // "pid (comm) state ppid ...": comm may contain spaces and ')'.
            if let Some((_, rest)) = stat.rsplit_once(')')
                && let Some(ppid) = rest.split_whitespace().nth(1)
                && let Ok(ppid) = ppid.parse::<u32>()
            {
                parent_of.push((p, ppid));
            }
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(
            parent_of
                .iter()
                .filter(|(c, pp)| *pp == p && !tree.contains(c))
                .map(|(c, _)| *c)
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    tree
}

/// Installs SIGINT/SIGTERM handlers that set the returned flag (for [`capture`]'s `stop`).
/// Idempotent.
pub fn stop_on_signals() -> &'static AtomicBool {
    static STOP: AtomicBool = AtomicBool::new(false);
    extern "C" fn on_signal(_: libc::c_int) {
        STOP.store(true, Ordering::SeqCst);
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler
        // only stores to an atomic, which is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
    &STOP
}

/// One line from bpftrace.
enum Msg {
    Out(String),
    Err(String),
}

struct Bpftrace {
    child: Child,
    rx: mpsc::Receiver<Msg>,
    readers: Vec<thread::JoinHandle<()>>,
    script: PathBuf,
}

impl Bpftrace {
    fn start(bin: &Path, text: &str) -> Result<Bpftrace, CaptureError> {
        let script =
            std::env::temp_dir().join(format!("futexhash-capture-{}.bt", std::process::id()));
        std::fs::write(&script, text).map_err(|e| {
            CaptureError::Runtime(format!("cannot write '{}': {e}", script.display()))
        })?;
        let mut cmd = Command::new(bin);
        cmd.arg(&script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if std::env::var_os("BPFTRACE_PERF_RB_PAGES").is_none() {
            cmd.env("BPFTRACE_PERF_RB_PAGES", PERF_RB_PAGES);
        }
        // SAFETY: the closure runs in the forked child before exec and only makes the
        // async-signal-safe calls setpgid and prctl.
        unsafe {
            cmd.pre_exec(|| {
                libc::setpgid(0, 0);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|e| {
            let _ = std::fs::remove_file(&script);
            CaptureError::Runtime(format!("cannot start '{}': {e}", bin.display()))
        })?;
        let (tx, rx) = mpsc::channel();
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let tx = tx.clone();
            readers.push(thread::spawn(move || {
                for l in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(Msg::Out(l)).is_err() {
                        break;
                    }
                }
            }));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(thread::spawn(move || {
                for l in BufReader::new(err).lines().map_while(Result::ok) {
                    if tx.send(Msg::Err(l)).is_err() {
                        break;
                    }
                }
            }));
        }
        Ok(Bpftrace {
            child,
            rx,
            readers,
            script,
        })
    }

    fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGINT: bpftrace prints what its buffers hold, runs `END` and exits.
    fn interrupt(&mut self) {
        if !self.exited() {
            // SAFETY: signalling our own child, not yet reaped (try_wait saw it running,
            // and only this thread reaps it), so the pid is not reused.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
        }
    }

    /// Takes lines into `got` until both pipes are closed (`true`) or `until` (`false`).
    fn drain(&mut self, got: &mut Collected, until: Instant) -> bool {
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match self.rx.recv_timeout(left.min(POLL)) {
                Ok(m) => got.take(m),
                Err(mpsc::RecvTimeoutError::Disconnected) => return true,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// SIGKILL if still running, and reap.
    fn kill(&mut self) {
        if !self.exited() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }

    /// SIGINT, wait [`STOP_GRACE`], SIGKILL if needed; then the readers end with the
    /// pipes (a reader still blocked, which a killed bpftrace cannot cause, is left).
    fn stop(&mut self) {
        self.interrupt();
        let t0 = Instant::now();
        while !self.exited() {
            if t0.elapsed() > STOP_GRACE {
                break;
            }
            thread::sleep(POLL);
        }
        self.kill();
        let t0 = Instant::now();
        while self.readers.iter().any(|r| !r.is_finished()) && t0.elapsed() < AFTER_KILL {
            thread::sleep(Duration::from_millis(5));
        }
        for r in self.readers.drain(..) {
            if r.is_finished() {
                let _ = r.join();
            }
        }
    }
}

impl Drop for Bpftrace {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_file(&self.script);
    }
}

/// Collected output.
#[derive(Default)]
struct Collected {
    events: Vec<(u64, String)>,
    /// Bytes of the event lines in `events`, a newline each.
    bytes: u64,
    lost: u64,
    stderr: Vec<String>,
}

impl Collected {
    fn take(&mut self, m: Msg) {
        match m {
            Msg::Err(l) => self.stderr.push(l),
            Msg::Out(l) => {
                if let Some(n) = l
                    .strip_prefix("Lost ")
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(|n| n.parse::<u64>().ok())
                {
                    self.lost += n;
                    return;
                }
                let mut toks = l.split_whitespace();
                let kind = toks.next().unwrap_or("");
                let t = toks.next().and_then(|t| t.parse::<u64>().ok());
                let known = Syscall::from_name(kind).is_some()
                    || matches!(kind, "v" | "key" | "fork" | "exit");
                if let (true, Some(t)) = (known, t) {
                    self.bytes += l.len() as u64 + 1;
                    self.events.push((t, l));
                }
            }
        }
    }

    /// The first bpftrace `ERROR:` line (or the last stderr line), for messages.
    fn error_line(&self) -> String {
        self.stderr
            .iter()
            .find(|l| l.contains("ERROR"))
            .or(self.stderr.last())
            .map_or_else(
                || "bpftrace exited without a message".to_string(),
                |l| l.trim().to_string(),
            )
    }
}

/// Classifies a bpftrace start-up failure.
fn startup_error(c: &Collected) -> CaptureError {
    let all = c.stderr.join("\n");
    let line = c.error_line();
    if all.contains("only supports running as the root user")
        || all.contains("Operation not permitted")
        || all.contains("Permission denied")
    {
        CaptureError::Permission(format!(
            "not allowed to load BPF programs (run as root, or with CAP_BPF and CAP_PERFMON): {line}"
        ))
    } else if all.contains("tracepoint not found") || all.contains("not available for your kernel")
    {
        CaptureError::Kernel(format!(
            "this kernel lacks a probe the capture needs: {line}"
        ))
    } else {
        CaptureError::Bpftrace(format!("bpftrace refused the capture script: {line}"))
    }
}

fn bpftrace_version(bin: &Path) -> String {
    Command::new(bin)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .last()
                .map(String::from)
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Runs bpftrace until `# ready`, or returns why it could not start.
fn attach(
    bin: &Path,
    features: &KernelFeatures,
    roots: &[u32],
    path: ProbePath,
    stop: &AtomicBool,
    got: &mut Collected,
) -> Result<Bpftrace, CaptureError> {
    let text = script::generate(&features.syscalls, roots, path);
    let mut bt = Bpftrace::start(bin, &text)?;
    let t0 = Instant::now();
    loop {
        match bt.rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Msg::Out(l)) if l.trim() == "# ready" => return Ok(bt),
            Ok(m) => got.take(m),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                bt.stop();
                return Err(startup_error(got));
            }
        }
        if stop.load(Ordering::SeqCst) {
            return Err(CaptureError::Interrupted(
                "interrupted before bpftrace was attached; nothing captured, no file written"
                    .into(),
            ));
        }
        if t0.elapsed() > ATTACH_TIMEOUT {
            return Err(CaptureError::Bpftrace(format!(
                "bpftrace did not attach within {} s",
                ATTACH_TIMEOUT.as_secs()
            )));
        }
    }
}

/// Runs a capture (see the module docs). `stop` ends it early, keeping what was captured.
/// `note` receives one-line progress notes (for stderr).
pub fn capture(
    opts: &CaptureOptions,
    stop: &AtomicBool,
    mut note: impl FnMut(&str),
) -> Result<CaptureSummary, CaptureError> {
    let bin = preflight(opts)?;
    let features = script::detect_features().map_err(CaptureError::Kernel)?;
    // Resolve the target before starting anything.
    let (prog, pid_root) = match &opts.target {
        Target::Pid(p) => (None, Some(tgid_of(*p)?)),
        Target::Command(argv) => (Some(resolve_program(argv)?), None),
    };
    let mut held = match (&prog, &opts.target) {
        (Some(p), Target::Command(argv)) => Some(HeldChild::spawn(p, argv)?),
        _ => None,
    };
    let roots = match (pid_root, &held) {
        (Some(p), _) => process_tree(p),
        (None, Some(h)) => vec![h.pid as u32],
        (None, None) => unreachable!("a target is a pid or a command"),
    };
    let root = roots[0];
    let (mut bt, path, kernel_key_note, mut got) =
        attach_best(&bin, &features, &roots, opts.kernel_key, stop)?;
    if let Some(n) = &kernel_key_note {
        note(&format!(
            "probe=tracepoint: no kernel keys ({n}); shared keys are modelled as anonymous"
        ));
    }
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Start (or check) the target now that everything is attached.
    match (&mut held, pid_root) {
        (Some(h), _) => h.release(prog.as_deref().expect("a command has a program"))?,
        (None, Some(p)) => {
            tgid_of(p).map_err(|_| {
                CaptureError::Target(format!("process {p} exited before the capture started"))
            })?;
        }
        (None, None) => unreachable!(),
    }
    note(&format!("capturing pid {root} ({})", path.as_str()));
    let mut reason = collect_until_stop(opts, stop, &mut bt, &mut held, pid_root, &mut got);
    stop_all(&mut bt, &mut held, &mut got);
    if reason == EndReason::BpftraceExited && got.events.is_empty() {
        return Err(CaptureError::Runtime(format!(
            "bpftrace stopped unexpectedly: {}",
            got.error_line()
        )));
    }
    // Events of different CPUs arrive interleaved: order by time (stable, so a call's
    // vector entries, which carry the call's time, stay behind it).
    got.events.sort_by_key(|(t, _)| *t);
    if let Some(limit) = cut_to_limits(&mut got.events, opts.max_events, opts.max_bytes) {
        // Lines read while stopping went past a limit: the file ends at that limit.
        if !matches!(reason, EndReason::MaxEvents | EndReason::MaxBytes) {
            reason = limit;
        }
    }
    let header = file::Header {
        probe: path,
        kernel_key_note: kernel_key_note.as_deref(),
        bpftrace_version: bpftrace_version(&bin),
        syscalls: features.syscalls.iter().map(|s| s.name()).collect(),
        target: target_field(&opts.target),
        root,
        started_unix: started,
    };
    let exit_code = held.as_ref().and_then(HeldChild::exit_code);
    let text = file::capture_text(&header, &got.events, got.lost, reason, exit_code);
    crate::render::write_atomic(opts.output.as_deref(), text.as_bytes()).map_err(|e| {
        CaptureError::Runtime(format!(
            "cannot write capture '{}': {e}",
            opts.output
                .as_deref()
                .map_or("stdout".into(), |p| p.display().to_string())
        ))
    })?;
    Ok(CaptureSummary {
        probe: path,
        kernel_key_note,
        events: got.events.len(),
        lost: got.lost,
        reason,
        root,
        exit_code,
    })
}

/// The header's `target=` value: `pid:PID`, or `cmd:` and the arguments joined by `_`
/// with their whitespace replaced (the header splits on whitespace).
fn target_field(target: &Target) -> String {
    match target {
        Target::Pid(p) => format!("pid:{p}"),
        Target::Command(argv) => format!(
            "cmd:{}",
            argv.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join("\u{1f}")
                .replace(|c: char| c.is_whitespace() || c == '\u{1f}', "_")
        ),
    }
}

/// The checks before anything is looked up or started: `--seconds` is valid, bpftrace is
/// on `PATH` (its path is returned), we are root.
fn preflight(opts: &CaptureOptions) -> Result<PathBuf, CaptureError> {
    if let Some(s) = opts.seconds
        && !(s > 0.0 && s.is_finite())
    {
        return Err(CaptureError::Target(format!(
            "--seconds '{s}' must be a positive number"
        )));
    }
    let bin = find_on_path(OsStr::new("bpftrace")).ok_or(CaptureError::BpftraceMissing)?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(CaptureError::Permission(
            "capturing loads BPF programs and needs root (bpftrace runs only as root); run futexhash capture as root"
                .into(),
        ));
    }
    Ok(bin)
}

/// Attaches bpftrace with the kernel-key probes when they are wanted and the kernel seems
/// to allow them, else (or when they fail to attach) with the tracepoints. Returns the
/// running bpftrace, the path used, why kernel keys are not captured (if not), and what
/// bpftrace printed so far.
fn attach_best(
    bin: &Path,
    features: &KernelFeatures,
    roots: &[u32],
    kernel_key: bool,
    stop: &AtomicBool,
) -> Result<(Bpftrace, ProbePath, Option<String>, Collected), CaptureError> {
    let mut got = Collected::default();
    let mut kernel_key_note = features.no_kernel_key.clone();
    if !kernel_key && kernel_key_note.is_none() {
        kernel_key_note = Some("not requested".into());
    }
    let mut path = if kernel_key_note.is_none() {
        ProbePath::Kprobe
    } else {
        ProbePath::Tracepoint
    };
    let bt = match attach(bin, features, roots, path, stop, &mut got) {
        Ok(bt) => bt,
        Err(CaptureError::Bpftrace(e) | CaptureError::Kernel(e)) if path == ProbePath::Kprobe => {
            // The kernel-key probes did not attach: fall back to the tracepoints.
            kernel_key_note = Some(format!("kprobe on get_futex_key failed: {e}"));
            path = ProbePath::Tracepoint;
            got = Collected::default();
            attach(bin, features, roots, path, stop, &mut got)?
        }
        Err(e) => return Err(e),
    };
    Ok((bt, path, kernel_key_note, got))
}

/// Takes bpftrace's lines into `got` until a stop condition holds (see the module docs),
/// and returns which.
fn collect_until_stop(
    opts: &CaptureOptions,
    stop: &AtomicBool,
    bt: &mut Bpftrace,
    held: &mut Option<HeldChild>,
    pid_root: Option<u32>,
    got: &mut Collected,
) -> EndReason {
    let deadline = opts
        .seconds
        .map(|s| Instant::now() + Duration::from_secs_f64(s.min(1e7)));
    let mut gone_since: Option<Instant> = None;
    let mut last_line = Instant::now();
    let mut last_check: Option<Instant> = None;
    loop {
        match bt.rx.recv_timeout(POLL) {
            Ok(m) => {
                got.take(m);
                last_line = Instant::now();
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break EndReason::BpftraceExited,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        // Checked after every line, so a stream that never pauses cannot hide them.
        if stop.load(Ordering::SeqCst) {
            break EndReason::Interrupted;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break EndReason::Seconds;
        }
        if opts
            .max_events
            .is_some_and(|n| got.events.len() as u64 >= n)
        {
            break EndReason::MaxEvents;
        }
        if opts.max_bytes.is_some_and(|n| got.bytes >= n) {
            break EndReason::MaxBytes;
        }
        // The target's state is read from /proc or waitpid: not after every line.
        if last_check.is_some_and(|c| now.duration_since(c) < POLL) {
            continue;
        }
        last_check = Some(now);
        if let Some(g) = gone_since {
            if now.duration_since(last_line.max(g)) >= DRAIN || now.duration_since(g) >= DRAIN_MAX {
                break EndReason::TargetExited;
            }
            continue;
        }
        let gone = match (&mut *held, pid_root) {
            (Some(h), _) => h.wait(false),
            (None, Some(p)) => tgid_of(p).is_err(),
            (None, None) => unreachable!(),
        };
        if gone {
            gone_since = Some(now);
        }
        if bt.exited() {
            break EndReason::BpftraceExited;
        }
    }
}

/// Stops bpftrace and a command we started at once, taking what bpftrace still prints
/// into `got`; each wait is bounded (see the module docs).
fn stop_all(bt: &mut Bpftrace, held: &mut Option<HeldChild>, got: &mut Collected) {
    let stopping = Instant::now();
    if let Some(h) = held
        && !h.wait(false)
    {
        h.signal(libc::SIGTERM);
    }
    bt.interrupt();
    if !bt.drain(got, stopping + STOP_GRACE) {
        bt.kill();
        bt.drain(got, Instant::now() + AFTER_KILL);
    }
    bt.kill();
    if let Some(h) = held {
        h.terminate_by(stopping + TARGET_EXIT_TIMEOUT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(ls: &[&str]) -> Vec<(u64, String)> {
        ls.iter().map(|l| (0, l.to_string())).collect()
    }

    #[test]
    fn limits_cut_whole_calls() {
        // Lines of 8 bytes (7 characters and a newline).
        let all = [
            "futex a", "futex b", "futex_w", "v 0 xyz", "v 1 xyz", "futex c",
        ];
        let cut = |n: Option<u64>, b: Option<u64>| {
            let mut e = lines(&all);
            let r = cut_to_limits(&mut e, n, b);
            (e.len(), r)
        };
        assert_eq!(cut(None, None), (6, None));
        assert_eq!(cut(Some(6), None), (6, None));
        assert_eq!(cut(Some(2), None), (2, Some(EndReason::MaxEvents)));
        // Cutting before or between the call's two entries drops the call and its entries.
        assert_eq!(cut(Some(3), None), (2, Some(EndReason::MaxEvents)));
        assert_eq!(cut(Some(4), None), (2, Some(EndReason::MaxEvents)));
        assert_eq!(cut(Some(5), None), (5, Some(EndReason::MaxEvents)));
        assert_eq!(cut(None, Some(16)), (2, Some(EndReason::MaxBytes)));
        assert_eq!(cut(None, Some(23)), (2, Some(EndReason::MaxBytes)));
        assert_eq!(cut(None, Some(24)), (2, Some(EndReason::MaxBytes)));
        assert_eq!(cut(None, Some(39)), (2, Some(EndReason::MaxBytes)));
        assert_eq!(cut(None, Some(48)), (6, None));
        assert_eq!(cut(Some(0), None), (0, Some(EndReason::MaxEvents)));
        assert_eq!(cut(Some(1), Some(7)), (0, Some(EndReason::MaxBytes)));
    }

    #[test]
    fn programs_are_found_or_refused() {
        assert!(find_on_path(OsStr::new("sh")).is_some());
        assert!(find_on_path(OsStr::new("/bin/sh")).is_some());
        assert!(find_on_path(OsStr::new("no-such-program-futexhash")).is_none());
        assert!(matches!(
            check_target(&Target::Command(vec![])),
            Err(CaptureError::Target(_))
        ));
        assert!(check_target(&Target::Pid(std::process::id())).is_ok());
        assert!(check_target(&Target::Pid(u32::MAX)).is_err());
    }

    #[test]
    fn the_held_child_never_runs_when_not_released() {
        let dir = std::env::temp_dir().join(format!("futexhash-held-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let argv: Vec<OsString> = vec!["touch".into(), dir.clone().into()];
        let prog = find_on_path(OsStr::new("touch")).unwrap();
        let h = HeldChild::spawn(&prog, &argv).unwrap();
        drop(h); // closes the go pipe: the child exits without exec
        assert!(!dir.exists());
        let mut h = HeldChild::spawn(&prog, &argv).unwrap();
        h.release(&prog).unwrap();
        assert!(h.wait(true));
        assert_eq!(h.exit_code(), Some(0));
        assert!(dir.exists());
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn the_tree_of_this_process_contains_its_children() {
        let mut c = Command::new("sleep").arg("5").spawn().unwrap();
        let tree = process_tree(std::process::id());
        assert_eq!(tree[0], std::process::id());
        assert!(tree.contains(&c.id()));
        c.kill().unwrap();
        c.wait().unwrap();
    }
}

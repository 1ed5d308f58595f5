//! The `futexhash-capture` text format, version 1 (documented for users in
//! `docs/capture.md`): parsing, the key model, and the header/trailer lines the capture
//! runner ([`crate::capture`]'s `run`) writes around bpftrace's event lines. It lives in
//! `workload` because `--workload trace:FILE` reads it; [`crate::capture`] re-exports it as
//! `capture::format`.
//!
//! A file is UTF-8 text, one record per line, fields separated by single spaces, numbers in
//! decimal or `0x` hex. Lines starting with `#` are comments, except the first line, which
//! must be the header `# futexhash-capture v1 KEY=VALUE...`, and `# end KEY=VALUE...`, the
//! trailer. Every event line starts with the same five fields
//!
//! ```text
//! KIND T_NS TGID TID MM ...
//! ```
//!
//! (`T_NS` = `bpf_ktime_get_ns()`, CLOCK_MONOTONIC; `MM` = `current->mm`, the kernel's `w0`
//! of private and anonymous shared keys), followed by the kind's own fields:
//!
//! | KIND | fields after MM | source |
//! |---|---|---|
//! | `futex` | `OP UADDR VAL VAL2 UADDR2 VAL3` | `sys_futex(uaddr, op, val, utime/val2, uaddr2, val3)` |
//! | `futex_wait` | `FLAGS UADDR VAL MASK` | `sys_futex_wait(uaddr, val, mask, flags, ...)` (6.7+) |
//! | `futex_wake` | `FLAGS UADDR MASK NR` | `sys_futex_wake(uaddr, mask, nr, flags)` (6.7+) |
//! | `futex_waitv` | `FLAGS NR` then NR `v` lines | `sys_futex_waitv(waiters, nr, flags, ...)` (5.16+) |
//! | `futex_requeue` | `FLAGS NR_WAKE NR_REQUEUE` then 2 `v` lines | `sys_futex_requeue(waiters, flags, nr_wake, nr_requeue)` (6.7+) |
//! | `v` | `IDX FLAGS UADDR VAL` | one `struct futex_waitv` of the preceding call of the same TID |
//! | `key` | `UADDR W0 W1 OFFSET RET` | the key `get_futex_key()` built (kernel-key probes only) |
//! | `fork` | `CHILD` | `sched_process_fork`: a followed task created task CHILD |
//! | `exit` | (none) | `sched_process_exit` of a followed task |
//!
//! Which key a call uses follows `kernel/futex/core.c` `get_futex_key()` (v6.18) and
//! `kernel/futex/syscalls.c`: a `futex` op with `FUTEX_PRIVATE_FLAG` (128), or a futex2
//! call / vector entry with `FUTEX2_PRIVATE` (also 128), is a private key `(mm, uaddr)`;
//! anything else is shared, keyed on `(mm, uaddr)` with `FUT_OFF_MMSHARED` for anonymous
//! memory or `(i_seq, pgoff)` with `FUT_OFF_INODE` for a file/shmem mapping. Without the
//! kernel's own `key` lines a shared key is taken to be anonymous (as the strace importer
//! does); with them, the kernel's key is used as it is.

use crate::key::{FutexKey, KEY_BYTES, NO_NODE, parse_number};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// The first token of the header line.
pub const MAGIC: &str = "# futexhash-capture";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 1;
/// `FUTEX_PRIVATE_FLAG` / `FUTEX2_PRIVATE`.
pub const PRIVATE_FLAG: u32 = 128;
/// `FUTEX_CLOCK_REALTIME`.
pub const CLOCK_REALTIME_FLAG: u32 = 256;
/// Most `futex_waitv` entries the kernel accepts (`FUTEX_WAITV_MAX`).
pub const WAITV_MAX: u32 = 128;

/// The five system calls recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Syscall {
    /// `futex(2)`.
    Futex,
    /// `futex_wait(2)` (Linux 6.7+).
    FutexWait,
    /// `futex_wake(2)` (Linux 6.7+).
    FutexWake,
    /// `futex_waitv(2)` (Linux 5.16+).
    FutexWaitv,
    /// `futex_requeue(2)` (Linux 6.7+).
    FutexRequeue,
}

impl Syscall {
    /// Every syscall, in the order the header lists them.
    pub const ALL: [Syscall; 5] = [
        Syscall::Futex,
        Syscall::FutexWait,
        Syscall::FutexWake,
        Syscall::FutexWaitv,
        Syscall::FutexRequeue,
    ];

    /// The name, as in the event lines and the tracepoint `sys_enter_NAME`.
    pub fn name(self) -> &'static str {
        match self {
            Syscall::Futex => "futex",
            Syscall::FutexWait => "futex_wait",
            Syscall::FutexWake => "futex_wake",
            Syscall::FutexWaitv => "futex_waitv",
            Syscall::FutexRequeue => "futex_requeue",
        }
    }

    /// The inverse of [`Syscall::name`].
    pub fn from_name(s: &str) -> Option<Syscall> {
        Syscall::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// The `futex(2)` commands (`op & FUTEX_CMD_MASK`), `include/uapi/linux/futex.h`.
pub const FUTEX_CMD_NAMES: [&str; 14] = [
    "FUTEX_WAIT",
    "FUTEX_WAKE",
    "FUTEX_FD",
    "FUTEX_REQUEUE",
    "FUTEX_CMP_REQUEUE",
    "FUTEX_WAKE_OP",
    "FUTEX_LOCK_PI",
    "FUTEX_UNLOCK_PI",
    "FUTEX_TRYLOCK_PI",
    "FUTEX_WAIT_BITSET",
    "FUTEX_WAKE_BITSET",
    "FUTEX_WAIT_REQUEUE_PI",
    "FUTEX_CMP_REQUEUE_PI",
    "FUTEX_LOCK_PI2",
];

/// Whether `futex(2)` command `cmd` names a second futex (`uaddr2`).
pub fn futex_cmd_has_uaddr2(cmd: u32) -> bool {
    matches!(cmd, 3 | 4 | 5 | 11 | 12)
}

/// One futex word a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word {
    /// The user address.
    pub uaddr: u64,
    /// Private (`FUTEX_PRIVATE_FLAG`/`FUTEX2_PRIVATE`) or shared.
    pub private: bool,
    /// The expected value (waits) or, for wakes, the count; as the call passed it.
    pub val: u64,
}

/// One recorded system call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// Time of the call's entry, ns (CLOCK_MONOTONIC).
    pub t_ns: u64,
    /// Thread group (process) id.
    pub tgid: u32,
    /// Thread id.
    pub tid: u32,
    /// `current->mm`.
    pub mm: u64,
    /// Which system call.
    pub syscall: Syscall,
    /// `futex(2)`: the op (command and flags); futex2: the flags argument.
    pub op: u32,
    /// The futex words, in argument order (`uaddr`, `uaddr2`; vector entries in order).
    pub words: Vec<Word>,
}

impl Call {
    /// A short operation name: `FUTEX_WAKE_PRIVATE`, `futex_waitv`, …
    pub fn op_name(&self) -> String {
        match self.syscall {
            Syscall::Futex => {
                let cmd = (self.op & !(PRIVATE_FLAG | CLOCK_REALTIME_FLAG)) as usize;
                let mut s = FUTEX_CMD_NAMES
                    .get(cmd)
                    .map_or_else(|| format!("FUTEX_OP_{cmd}"), |n| n.to_string());
                if self.op & PRIVATE_FLAG != 0 {
                    s.push_str("_PRIVATE");
                }
                s
            }
            s => s.name().to_string(),
        }
    }

    /// Whether the operation is a wake (its waiters-pending check is lockless in the
    /// kernel: `futex_wake()` returns before taking the bucket lock when nobody waits).
    pub fn is_wake(&self) -> bool {
        match self.syscall {
            Syscall::Futex => {
                matches!(self.op & !(PRIVATE_FLAG | CLOCK_REALTIME_FLAG), 1 | 10)
            }
            Syscall::FutexWake => true,
            _ => false,
        }
    }
}

/// The kernel's own key for one `get_futex_key()` call (kernel-key probes only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelKey {
    /// Time, ns.
    pub t_ns: u64,
    /// Thread group id.
    pub tgid: u32,
    /// Thread id.
    pub tid: u32,
    /// The address passed in.
    pub uaddr: u64,
    /// `key->both.ptr`.
    pub w0: u64,
    /// `key->both.word`.
    pub w1: u64,
    /// `key->both.offset` (kind bits included).
    pub offset: u32,
    /// The return value (0 = key built).
    pub ret: i64,
}

/// A malformed capture file (fatal: the header), or a malformed line (counted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError(pub String);

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for FormatError {}

fn ferr(msg: impl Into<String>) -> FormatError {
    FormatError(msg.into())
}

/// A parsed capture.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// `KEY=VALUE` fields of the header line (`probe`, `kernel`, `syscalls`, …).
    pub header: BTreeMap<String, String>,
    /// `KEY=VALUE` fields of the trailer (`events`, `lost`, `reason`, …), if present.
    pub trailer: Option<BTreeMap<String, String>>,
    /// Every call, in file order (the runner writes them sorted by time).
    pub calls: Vec<Call>,
    /// The kernel's keys, in file order.
    pub kernel_keys: Vec<KernelKey>,
    /// Tasks created (`fork` lines): (parent tid, child).
    pub forks: Vec<(u32, u32)>,
    /// Lines that could not be parsed (skipped).
    pub unparsed: usize,
    /// Calls whose vector entries were missing or incomplete.
    pub incomplete: usize,
    /// First unparsed line (1-based) and why.
    pub first_error: Option<(usize, String)>,
}

/// Whether `text` is a capture file (its first line is the capture header), as opposed to
/// strace output.
pub fn is_capture(text: &str) -> bool {
    text.lines()
        .next()
        .is_some_and(|l| l.starts_with(MAGIC) && l[MAGIC.len()..].starts_with(' '))
}

fn kv_fields(s: &str) -> BTreeMap<String, String> {
    s.split_whitespace()
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A number field; `what` names it in the error.
fn num(tok: Option<&str>, what: &str) -> Result<u64, FormatError> {
    let t = tok.ok_or_else(|| ferr(format!("missing field {what}")))?;
    parse_number(t).ok_or_else(|| ferr(format!("field {what} '{t}' is not a number")))
}

fn num32(tok: Option<&str>, what: &str) -> Result<u32, FormatError> {
    let v = num(tok, what)?;
    u32::try_from(v).map_err(|_| ferr(format!("field {what} '{v}' does not fit 32 bits")))
}

/// The header line: `# futexhash-capture vN KEY=VALUE...`. Errors name what is wrong.
pub fn parse_header(line: &str) -> Result<BTreeMap<String, String>, FormatError> {
    let rest = line
        .strip_prefix(MAGIC)
        .ok_or_else(|| ferr("the first line is not a '# futexhash-capture v1' header"))?;
    let mut toks = rest.split_whitespace();
    let v = toks.next().unwrap_or("");
    let version: u32 = v
        .strip_prefix('v')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| ferr(format!("capture header version '{v}' is not vN")))?;
    if version != VERSION {
        return Err(ferr(format!(
            "capture format version {version} is not supported (this futexhash reads v{VERSION})"
        )));
    }
    Ok(kv_fields(rest))
}

/// What one event line says.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Line {
    Call(Call, u32), // the call, vector entries still to come
    Entry { tid: u32, idx: u32, word: Word },
    Key(KernelKey),
    Fork { tid: u32, child: u32 },
    Exit,
}

fn parse_event(line: &str) -> Result<Line, FormatError> {
    let mut t = line.split_whitespace();
    let kind = t.next().unwrap_or("");
    let t_ns = num(t.next(), "T_NS")?;
    let tgid = num32(t.next(), "TGID")?;
    let tid = num32(t.next(), "TID")?;
    let mm = num(t.next(), "MM")?;
    let word = |uaddr: u64, private: bool, val: u64| Word {
        uaddr,
        private,
        val,
    };
    let call = |syscall, op, words| Call {
        t_ns,
        tgid,
        tid,
        mm,
        syscall,
        op,
        words,
    };
    let line = match kind {
        "futex" => {
            let op = num32(t.next(), "OP")?;
            let uaddr = num(t.next(), "UADDR")?;
            let val = num(t.next(), "VAL")?;
            let _val2 = num(t.next(), "VAL2")?;
            let uaddr2 = num(t.next(), "UADDR2")?;
            let _val3 = num(t.next(), "VAL3")?;
            let private = op & PRIVATE_FLAG != 0;
            let mut words = vec![word(uaddr, private, val)];
            let cmd = op & !(PRIVATE_FLAG | CLOCK_REALTIME_FLAG);
            if futex_cmd_has_uaddr2(cmd) {
                words.push(word(uaddr2, private, 0));
            }
            Line::Call(call(Syscall::Futex, op, words), 0)
        }
        "futex_wait" => {
            let flags = num32(t.next(), "FLAGS")?;
            let uaddr = num(t.next(), "UADDR")?;
            let val = num(t.next(), "VAL")?;
            let _mask = num(t.next(), "MASK")?;
            let w = word(uaddr, flags & PRIVATE_FLAG != 0, val);
            Line::Call(call(Syscall::FutexWait, flags, vec![w]), 0)
        }
        "futex_wake" => {
            let flags = num32(t.next(), "FLAGS")?;
            let uaddr = num(t.next(), "UADDR")?;
            let _mask = num(t.next(), "MASK")?;
            let nr = num(t.next(), "NR")?;
            let w = word(uaddr, flags & PRIVATE_FLAG != 0, nr);
            Line::Call(call(Syscall::FutexWake, flags, vec![w]), 0)
        }
        "futex_waitv" => {
            let flags = num32(t.next(), "FLAGS")?;
            let nr = num32(t.next(), "NR")?;
            // The kernel refuses more than FUTEX_WAITV_MAX; the script reads at most that.
            Line::Call(
                call(Syscall::FutexWaitv, flags, Vec::new()),
                nr.min(WAITV_MAX),
            )
        }
        "futex_requeue" => {
            let flags = num32(t.next(), "FLAGS")?;
            let _nr_wake = num(t.next(), "NR_WAKE")?;
            let _nr_requeue = num(t.next(), "NR_REQUEUE")?;
            Line::Call(call(Syscall::FutexRequeue, flags, Vec::new()), 2)
        }
        "v" => {
            let idx = num32(t.next(), "IDX")?;
            let flags = num32(t.next(), "FLAGS")?;
            let uaddr = num(t.next(), "UADDR")?;
            let val = num(t.next(), "VAL")?;
            Line::Entry {
                tid,
                idx,
                word: word(uaddr, flags & PRIVATE_FLAG != 0, val),
            }
        }
        "key" => {
            let uaddr = num(t.next(), "UADDR")?;
            let w0 = num(t.next(), "W0")?;
            let w1 = num(t.next(), "W1")?;
            let offset = num32(t.next(), "OFFSET")?;
            let r = t.next().ok_or_else(|| ferr("missing field RET"))?;
            let ret: i64 = r
                .parse()
                .map_err(|_| ferr(format!("field RET '{r}' is not a number")))?;
            Line::Key(KernelKey {
                t_ns,
                tgid,
                tid,
                uaddr,
                w0,
                w1,
                offset,
                ret,
            })
        }
        "fork" => Line::Fork {
            tid,
            child: num32(t.next(), "CHILD")?,
        },
        "exit" => Line::Exit,
        other => return Err(ferr(format!("unknown record kind '{other}'"))),
    };
    if let Some(extra) = t.next() {
        return Err(ferr(format!("unexpected extra field '{extra}'")));
    }
    Ok(line)
}

/// Parses a capture file. The header must be valid (else `Err`); a malformed event line is
/// counted in [`Capture::unparsed`] and skipped. Never panics.
pub fn parse_capture(text: &str) -> Result<Capture, FormatError> {
    let mut lines = text.lines().enumerate();
    let header = match lines.next() {
        Some((_, l)) => parse_header(l)?,
        None => return Err(ferr("empty capture file")),
    };
    let mut cap = Capture {
        header,
        ..Capture::default()
    };
    // Per tid: index into cap.calls of the call still waiting for vector entries, and how
    // many it expects.
    let mut pending: HashMap<u32, (usize, u32)> = HashMap::new();
    let fail = |cap: &mut Capture, lineno: usize, why: String| {
        cap.unparsed += 1;
        if cap.first_error.is_none() {
            cap.first_error = Some((lineno + 1, why));
        }
    };
    for (lineno, line) in lines {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if let Some(end) = c.trim_start().strip_prefix("end") {
                cap.trailer = Some(kv_fields(end));
            }
            continue;
        }
        match parse_event(line) {
            Err(e) => fail(&mut cap, lineno, e.0),
            Ok(Line::Call(call, entries)) => {
                if let Some((_, left)) = pending.remove(&call.tid)
                    && left > 0
                {
                    cap.incomplete += 1;
                }
                let tid = call.tid;
                cap.calls.push(call);
                if entries > 0 {
                    pending.insert(tid, (cap.calls.len() - 1, entries));
                }
            }
            Ok(Line::Entry { tid, idx, word }) => match pending.get_mut(&tid) {
                Some((i, left)) if *left > 0 => {
                    let call = &mut cap.calls[*i];
                    if idx as usize != call.words.len() {
                        fail(&mut cap, lineno, format!("vector entry {idx} out of order"));
                        continue;
                    }
                    call.words.push(word);
                    *left -= 1;
                    if *left == 0 {
                        pending.remove(&tid);
                    }
                }
                _ => fail(
                    &mut cap,
                    lineno,
                    "vector entry without a futex_waitv/futex_requeue call".into(),
                ),
            },
            Ok(Line::Key(k)) => cap.kernel_keys.push(k),
            Ok(Line::Fork { tid, child }) => cap.forks.push((tid, child)),
            Ok(Line::Exit) => {}
        }
    }
    cap.incomplete += pending.values().filter(|(_, left)| *left > 0).count();
    Ok(cap)
}

/// One keyed operation: which thread touched which key when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyedOp {
    /// Index of the call in [`Capture::calls`].
    pub call: usize,
    /// The key.
    pub key: FutexKey,
}

fn raw_key(w0: u64, w1: u64, offset: u32) -> Option<FutexKey> {
    let mut b = [0u8; KEY_BYTES];
    b[..8].copy_from_slice(&w0.to_le_bytes());
    b[8..16].copy_from_slice(&w1.to_le_bytes());
    b[16..20].copy_from_slice(&offset.to_le_bytes());
    b[20..24].copy_from_slice(&NO_NODE.to_le_bytes());
    FutexKey::from_bytes(&b).ok()
}

impl Capture {
    /// The probe path the capture used (`tracepoint`, `kprobe`, `kfunc`), from the header.
    pub fn probe(&self) -> &str {
        self.header.get("probe").map_or("unknown", String::as_str)
    }

    /// Why the capture stopped, from the trailer (`None`: no trailer, or a reason this
    /// version does not know).
    pub fn end_reason(&self) -> Option<EndReason> {
        self.trailer
            .as_ref()
            .and_then(|t| t.get("reason"))
            .and_then(|r| EndReason::from_name(r))
    }

    /// The key of every word of every call, in call order (the sequence `--weight ops` and
    /// the trace replay use). Private words use `(mm, uaddr)`; shared words use the
    /// kernel's own key for that process and address when the capture has one, else
    /// `anon(mm, uaddr)`. Words that cannot be keys (misaligned, NULL) are left out and
    /// counted in the second value.
    pub fn keyed_ops(&self) -> (Vec<KeyedOp>, usize) {
        let mut kernel: HashMap<(u32, u64), FutexKey> = HashMap::new();
        for k in &self.kernel_keys {
            if k.ret == 0
                && let Some(key) = raw_key(k.w0, k.w1, k.offset)
            {
                kernel.insert((k.tgid, k.uaddr), key);
            }
        }
        let mut out = Vec::with_capacity(self.calls.len());
        let mut bad = 0;
        for (i, c) in self.calls.iter().enumerate() {
            for w in &c.words {
                let key = if w.uaddr == 0 {
                    None
                } else if let Some(k) = kernel.get(&(c.tgid, w.uaddr)).filter(|k| {
                    // The kernel key must be of the same privacy as the call.
                    (k.kind() == crate::key::KeyKind::Private) == w.private
                }) {
                    Some(*k)
                } else if w.private {
                    FutexKey::private(c.mm, w.uaddr).ok()
                } else {
                    FutexKey::anon(c.mm, w.uaddr).ok()
                };
                match key {
                    Some(key) => out.push(KeyedOp { call: i, key }),
                    None => bad += 1,
                }
            }
        }
        (out, bad)
    }

    /// Distinct thread groups with at least one call.
    pub fn processes(&self) -> BTreeSet<u32> {
        self.calls.iter().map(|c| c.tgid).collect()
    }

    /// Distinct `mm` pointers with at least one call.
    pub fn mms(&self) -> BTreeSet<u64> {
        self.calls.iter().map(|c| c.mm).collect()
    }

    /// Distinct threads with at least one call.
    pub fn threads(&self) -> BTreeSet<u32> {
        self.calls.iter().map(|c| c.tid).collect()
    }
}

/// Why a capture stopped: the trailer's `reason=`. The runner writes the names of
/// [`EndReason::name`]; files written before the limits existed say `exited` (now
/// `target-exited`) and `signal` (now `interrupted`), which still read as those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// The command (or process `-p PID`) exited.
    TargetExited,
    /// `--seconds` elapsed.
    Seconds,
    /// SIGINT or SIGTERM reached the capture.
    Interrupted,
    /// `--max-events` event lines were written.
    MaxEvents,
    /// `--max-bytes` bytes of event lines were written.
    MaxBytes,
    /// bpftrace ended on its own.
    BpftraceExited,
}

impl EndReason {
    /// Every reason, in the order the docs list them.
    pub const ALL: [EndReason; 6] = [
        EndReason::TargetExited,
        EndReason::Seconds,
        EndReason::Interrupted,
        EndReason::MaxEvents,
        EndReason::MaxBytes,
        EndReason::BpftraceExited,
    ];

    /// The trailer's `reason=` value.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::TargetExited => "target-exited",
            EndReason::Seconds => "seconds",
            EndReason::Interrupted => "interrupted",
            EndReason::MaxEvents => "max-events",
            EndReason::MaxBytes => "max-bytes",
            EndReason::BpftraceExited => "bpftrace-exited",
        }
    }

    /// The inverse of [`EndReason::name`], also reading the older names.
    pub fn from_name(s: &str) -> Option<EndReason> {
        match s {
            "exited" => Some(EndReason::TargetExited),
            "signal" => Some(EndReason::Interrupted),
            _ => EndReason::ALL.into_iter().find(|r| r.name() == s),
        }
    }

    /// Whether the capture was cut before the target finished (a limit or a signal): the
    /// program's later calls are not in the file.
    pub fn cut_short(self) -> bool {
        !matches!(self, EndReason::TargetExited)
    }
}

/// The trailer line the runner writes (without the newline).
pub fn trailer_line(events: usize, lost: u64, reason: EndReason, exit_code: Option<i32>) -> String {
    format!(
        "# end events={events} lost={lost} reason={}{}",
        reason.name(),
        exit_code.map_or(String::new(), |c| format!(" exit_code={c}"))
    )
}

/// The header line the runner writes (without the newline).
pub fn header_line(fields: &[(&str, String)]) -> String {
    let mut s = format!("{MAGIC} v{VERSION}");
    for (k, v) in fields {
        // Values are single tokens: spaces would split them.
        let v: String = v
            .chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect();
        s.push_str(&format!(" {k}={v}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
# futexhash-capture v1 probe=tracepoint kernel=6.18.0 syscalls=futex,futex_waitv
# columns: see docs/capture.md
futex 100 10 10 0xffff888100000000 129 0x55550000100c 1 0x0 0x0 0
futex 110 10 11 0xffff888100000000 1 0x555500001010 1 0x0 0x0 0
futex 120 10 11 0xffff888100000000 132 0x555500002000 1 0x7fffffff 0x555500002004 0
futex_waitv 130 10 10 0xffff888100000000 0 2
v 130 10 10 0xffff888100000000 0 130 0x555500003000 1
v 130 10 10 0xffff888100000000 1 2 0x555500003004 1
futex_wake 140 10 10 0xffff888100000000 130 0x555500004000 0xffffffff 1
futex_wait 150 10 10 0xffff888100000000 2 0x555500004004 7 0xffffffff
futex_requeue 160 10 11 0xffff888100000000 0 1 1
v 160 10 11 0xffff888100000000 0 130 0x555500005000 0
v 160 10 11 0xffff888100000000 1 130 0x555500005008 0
fork 170 10 10 0xffff888100000000 12
exit 180 10 11 0xffff888100000000
garbage line here
# end events=13 lost=0 reason=exited
";

    #[test]
    fn parses_every_record_kind() {
        assert!(is_capture(SAMPLE));
        assert!(!is_capture("12 futex(0x1000, FUTEX_WAKE, 1) = 0\n"));
        let c = parse_capture(SAMPLE).unwrap();
        assert_eq!(c.probe(), "tracepoint");
        assert_eq!(c.calls.len(), 7);
        assert_eq!(c.unparsed, 1);
        assert_eq!(c.first_error.as_ref().unwrap().0, 16);
        assert_eq!(c.incomplete, 0);
        assert_eq!(c.trailer.as_ref().unwrap()["reason"], "exited");
        // A file written before the limits existed: `exited` is today's `target-exited`.
        assert_eq!(c.end_reason(), Some(EndReason::TargetExited));
        assert_eq!(c.forks, vec![(10, 12)]);
        assert_eq!(c.calls[0].op_name(), "FUTEX_WAKE_PRIVATE");
        assert_eq!(c.calls[2].op_name(), "FUTEX_CMP_REQUEUE_PRIVATE");
        assert_eq!(c.calls[2].words.len(), 2);
        assert_eq!(c.calls[3].words.len(), 2);
        assert!(c.calls[3].words[0].private && !c.calls[3].words[1].private);
        let (ops, bad) = c.keyed_ops();
        assert_eq!(bad, 0);
        // 1 + 1 + 2 + 2 + 1 + 1 + 2 words.
        assert_eq!(ops.len(), 10);
        assert_eq!(
            ops[0].key,
            FutexKey::private(0xffff888100000000, 0x55550000100c).unwrap()
        );
        assert_eq!(
            ops[1].key,
            FutexKey::anon(0xffff888100000000, 0x555500001010).unwrap()
        );
        assert_eq!(c.mms().len(), 1);
        assert_eq!(c.threads().len(), 2);
    }

    #[test]
    fn trailers_name_why_the_capture_stopped() {
        let head = "# futexhash-capture v1 probe=tracepoint\nfutex 1 2 2 0xffff888100000000 129 0x1000 1 0 0 0\n";
        for (reason, want) in [
            ("target-exited", Some(EndReason::TargetExited)),
            ("exited", Some(EndReason::TargetExited)),
            ("seconds", Some(EndReason::Seconds)),
            ("interrupted", Some(EndReason::Interrupted)),
            ("signal", Some(EndReason::Interrupted)),
            ("max-events", Some(EndReason::MaxEvents)),
            ("max-bytes", Some(EndReason::MaxBytes)),
            ("bpftrace-exited", Some(EndReason::BpftraceExited)),
            ("later-reason", None),
        ] {
            let c =
                parse_capture(&format!("{head}# end events=1 lost=0 reason={reason}\n")).unwrap();
            assert_eq!(c.end_reason(), want, "{reason}");
            assert_eq!(c.calls.len(), 1);
        }
        assert_eq!(parse_capture(head).unwrap().end_reason(), None);
        assert_eq!(
            trailer_line(3, 0, EndReason::MaxEvents, Some(0)),
            "# end events=3 lost=0 reason=max-events exit_code=0"
        );
        assert_eq!(
            trailer_line(3, 2, EndReason::Interrupted, None),
            "# end events=3 lost=2 reason=interrupted"
        );
    }

    #[test]
    fn kernel_keys_replace_the_model_for_shared_words() {
        let text = "\
# futexhash-capture v1 probe=kprobe
futex 100 10 10 0xffff888100000000 1 0x7f0000001010 1 0 0 0
key 101 10 10 0xffff888100000000 0x7f0000001010 7 3 17 0
";
        let c = parse_capture(text).unwrap();
        let (ops, _) = c.keyed_ops();
        assert_eq!(ops[0].key, FutexKey::inode(7, 3, 16).unwrap());
    }

    #[test]
    fn bad_headers_and_entries() {
        assert!(parse_capture("").is_err());
        assert!(parse_capture("# futexhash-capture v2 probe=x\n").is_err());
        assert!(parse_capture("futex 1 2 3 4 5 6 7 8 9 10\n").is_err());
        let c = parse_capture(
            "# futexhash-capture v1\nv 1 2 3 4 0 0 0x1000 0\nfutex_waitv 1 2 3 4 0 2\nv 1 2 3 4 0 0 0x1000 0\n",
        )
        .unwrap();
        assert_eq!((c.unparsed, c.incomplete), (1, 1));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in ".{0,200}", cut in 0usize..400) {
            let _ = parse_capture(&s);
            let cut = cut.min(SAMPLE.len());
            let mut t = SAMPLE[..cut].to_string();
            t.push_str(&s);
            if let Ok(c) = parse_capture(&t) {
                let _ = c.keyed_ops();
            }
        }
    }
}

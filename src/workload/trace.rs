//! Futex keys from a real program: the output of `strace -f -e trace=futex` (optionally
//! `-e trace=futex,clone,clone3,fork,vfork` to tell processes apart).
//!
//! strace prints one line per call: `TID futex(0xUADDR, FUTEX_OP[_PRIVATE][|FLAGS], ...) = RET`
//! (with `-f` and `-o FILE`; `[pid TID] ` when written to the terminal; no TID without `-f`).
//! Interrupted calls are split into `... <unfinished ...>` and `TID <... futex resumed>...`;
//! the first half carries the address. An op with `_PRIVATE` (`FUTEX_PRIVATE_FLAG`) is a
//! private key; any other op is a shared key. Without `/proc/PID/maps` we cannot tell a
//! file-backed futex from shared anonymous memory, so shared keys are modelled as
//! `anon:MM:UADDR` (kernel `get_futex_key()`, `kernel/futex/core.c`, v6.16: anonymous shared
//! memory keys on `mm` and the address, like private keys, with `FUT_OFF_MMSHARED`).
//! The requeue and wake-op operations name a second futex (`uaddr2`, the fifth argument); it
//! is a key too. A NULL word (`0x0` or `NULL`: `get_futex_key()` fails with EFAULT) gives no
//! key and is counted, as in a capture file ([`super::capture`]).
//!
//! futex2 (`kernel/futex/syscalls.c`): `futex_waitv([{val=V, uaddr=0xA, flags=FUTEX_32|
//! FUTEX_PRIVATE_FLAG}, ...], N, ...)` names one key per vector entry, each private or
//! shared by its own flags; `futex_requeue([{...}, {...}], ...)` names two the same way;
//! `futex_wake(UADDR, MASK, NR, FLAGS)` and `futex_wait(UADDR, VAL, MASK, FLAGS, ...)` name
//! one, private when FLAGS has `FUTEX2_PRIVATE` (128, printed `FUTEX2_PRIVATE` or
//! `FUTEX_PRIVATE_FLAG`). An strace that predates these calls prints them as
//! `syscall_0x1c6(...)` (454, futex_wake) and `syscall_0x1c7(...)` (455, futex_wait), parsed
//! from the raw arguments; `syscall_0x1c1`/`syscall_0x1c8` (futex_waitv, futex_requeue) pass
//! only a pointer to the vector, so they are counted as unparseable.
//!
//! Processes: strace `-f` prints thread ids, not the thread group, so a file traced with
//! `-e trace=futex` alone is taken to be ONE process. If clone/fork lines are present, a
//! child created without `CLONE_VM` (fork, vfork, `clone(... SIGCHLD)`) starts a new process
//! with its own `mm`; a child with `CLONE_VM` (a thread) shares its parent's. Each process
//! gets a synthetic but fixed `mm`: `TRACE_MM_BASE + index * TRACE_MM_STRIDE` (index = order
//! of first appearance), kernel-pointer-like values of the direct map.

use crate::key::{FutexKey, parse_number};
use std::collections::HashMap;
use std::fmt;

/// Synthetic `mm` of the first process of a trace.
pub const TRACE_MM_BASE: u64 = 0xffff_8881_0a3c_0000;
/// Distance between the synthetic `mm` pointers of successive processes (an `mm_struct`
/// slab object is about 1.2 KiB; 0x800 keeps them object-sized and cache-line aligned).
pub const TRACE_MM_STRIDE: u64 = 0x800;

/// What a parsed line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceAction {
    /// A futex call on `uaddr` (and `uaddr2` for requeue/wake-op), with the op name as
    /// printed (e.g. `FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME`).
    Futex {
        /// The futex word.
        uaddr: u64,
        /// The second futex of `FUTEX_REQUEUE`, `FUTEX_CMP_REQUEUE(_PI)`, `FUTEX_WAKE_OP`,
        /// `FUTEX_WAIT_REQUEUE_PI`.
        uaddr2: Option<u64>,
        /// The op field as printed.
        op: String,
        /// `_PRIVATE` in the op: a private key.
        private: bool,
    },
    /// A futex2 call (`futex_waitv`, `futex_wake`, `futex_wait`, `futex_requeue`): its
    /// words in argument order, each with its own privacy.
    Futex2 {
        /// The call's name (`futex_waitv`, …).
        call: String,
        /// `(uaddr, private)` per word.
        words: Vec<(u64, bool)>,
    },
    /// A clone/fork line. The first half (or a whole line) tells whether the child shares
    /// the address space; the return value (whole or resumed line) names the child.
    Spawn {
        /// `Some(true)` for `CLONE_VM`, `Some(false)` for a new process, `None` when this
        /// line is a `resumed` half that does not say.
        shares_vm: Option<bool>,
        /// The child's id, when the line shows the return value.
        child: Option<u32>,
    },
}

/// One parsed line: who (thread id, if printed) did what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    /// Thread id (`TID` or `[pid TID]` prefix); `None` when strace ran without `-f`.
    pub tid: Option<u32>,
    /// The call.
    pub action: TraceAction,
}

/// A line that is not strace output we understand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseLineError(pub String);

impl fmt::Display for ParseLineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ParseLineError {}

fn err(msg: &str) -> ParseLineError {
    ParseLineError(msg.to_string())
}

/// Parses one line of `strace -f` output.
///
/// `Ok(Some(event))` for a futex or clone/fork call, `Ok(None)` for lines that are valid
/// strace output but carry no key (blank lines, exits, signals, `resumed` halves of futex
/// calls, other system calls), `Err` for anything else. Never panics.
pub fn parse_strace_line(line: &str) -> Result<Option<TraceEvent>, ParseLineError> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    // Optional thread id: "1234 " or "[pid 1234] ".
    let (tid, rest) = if let Some(r) = line.strip_prefix("[pid") {
        let (num, rest) = r
            .split_once(']')
            .ok_or_else(|| err("unterminated '[pid' prefix"))?;
        let tid: u32 = num
            .trim()
            .parse()
            .map_err(|_| err("bad pid in '[pid N]'"))?;
        (Some(tid), rest.trim_start())
    } else {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && line[digits..].starts_with([' ', '\t']) {
            let tid: u32 = line[..digits]
                .parse()
                .map_err(|_| err("thread id out of range"))?;
            (Some(tid), line[digits..].trim_start())
        } else {
            (None, line)
        }
    };
    // strace -t/-tt/-ttt timestamps: skip a leading token of digits, ':' and '.'.
    let rest = match rest.split_once(' ') {
        Some((ts, r))
            if !ts.is_empty()
                && ts
                    .bytes()
                    .all(|c| c.is_ascii_digit() || c == b':' || c == b'.')
                && ts.contains(['.', ':']) =>
        {
            r.trim_start()
        }
        _ => rest,
    };
    if rest.starts_with("+++") || rest.starts_with("---") {
        return Ok(None); // exit or signal notice
    }
    if let Some(r) = rest.strip_prefix("<...") {
        // Second half of an interrupted call.
        let name = r.split_whitespace().next().unwrap_or("");
        if !r.contains("resumed>") {
            return Err(err("malformed '<... resumed>' line"));
        }
        if matches!(name, "clone" | "clone3" | "fork" | "vfork") {
            let child = return_value(rest).and_then(|v| u32::try_from(v).ok());
            return Ok(Some(TraceEvent {
                tid,
                action: TraceAction::Spawn {
                    shares_vm: None,
                    child,
                },
            }));
        }
        return Ok(None);
    }
    let (name, args) = rest
        .split_once('(')
        .ok_or_else(|| err("not a system call line"))?;
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return Err(err("not a system call line"));
    }
    match name {
        "futex" => parse_futex(args).map(|action| Some(TraceEvent { tid, action })),
        "futex_waitv" | "futex_requeue" | "futex_wake" | "futex_wait" | "syscall_0x1c6"
        | "syscall_0x1c7" => {
            parse_futex2(name, args).map(|action| Some(TraceEvent { tid, action }))
        }
        "syscall_0x1c1" | "syscall_0x1c8" => Err(err(
            "futex_waitv/futex_requeue printed as a raw syscall: the vector is not shown (use strace 5.16+/6.7+)",
        )),
        "clone" | "clone3" | "fork" | "vfork" => {
            let shares_vm = match name {
                "fork" | "vfork" => false,
                _ => args.contains("CLONE_VM"),
            };
            let child = return_value(rest).and_then(|v| u32::try_from(v).ok());
            Ok(Some(TraceEvent {
                tid,
                action: TraceAction::Spawn {
                    shares_vm: Some(shares_vm),
                    child,
                },
            }))
        }
        _ => Ok(None), // another system call: no futex key
    }
}

/// The `= RET` value at the end of a completed call, if it is a non-negative number.
fn return_value(line: &str) -> Option<u64> {
    let (_, ret) = line.rsplit_once(") = ")?;
    let tok = ret.split_whitespace().next()?;
    parse_number(tok)
}

/// A futex address as strace prints it: a number, or `NULL` (0: a word without a key, as a
/// capture's NULL word is).
fn parse_addr(s: &str) -> Option<u64> {
    let s = s.trim();
    if s == "NULL" {
        Some(0)
    } else {
        parse_number(s)
    }
}

fn parse_futex(args: &str) -> Result<TraceAction, ParseLineError> {
    let mut fields = args.split(',').map(str::trim);
    let uaddr_s = fields.next().unwrap_or("");
    let uaddr = parse_addr(uaddr_s).ok_or_else(|| err("futex address is not a number"))?;
    let op_field = fields.next().ok_or_else(|| err("futex call without op"))?;
    // The op may be cut by "<unfinished ...>" when the call has one argument shown.
    let op = op_field
        .split_whitespace()
        .next()
        .filter(|o| !o.is_empty())
        .ok_or_else(|| err("futex call without op"))?;
    let op = op.trim_end_matches(')');
    let base = op.split('|').next().unwrap_or("");
    if !(base.starts_with("FUTEX_")
        || base.starts_with("0x")
        || base.bytes().all(|c| c.is_ascii_digit()))
        || base.is_empty()
    {
        return Err(err("futex op is not FUTEX_*"));
    }
    if uaddr & 3 != 0 {
        return Err(err("futex address is not 4-byte aligned"));
    }
    let private = op.contains("_PRIVATE");
    let base_op = base.trim_end_matches("_PRIVATE");
    let has_uaddr2 = matches!(
        base_op,
        "FUTEX_REQUEUE"
            | "FUTEX_CMP_REQUEUE"
            | "FUTEX_WAKE_OP"
            | "FUTEX_CMP_REQUEUE_PI"
            | "FUTEX_WAIT_REQUEUE_PI"
    );
    let uaddr2 = if has_uaddr2 {
        // futex(uaddr, op, val, val2/timeout, uaddr2, val3); a NULL uaddr2 is kept to be
        // counted as a word without a key.
        let v = fields.nth(2).and_then(|s| s.split_whitespace().next());
        v.and_then(parse_addr).filter(|a| a & 3 == 0)
    } else {
        None
    };
    Ok(TraceAction::Futex {
        uaddr,
        uaddr2,
        op: op.to_string(),
        private,
    })
}

/// `FUTEX2_PRIVATE` / `FUTEX_PRIVATE_FLAG`.
const FUTEX2_PRIVATE: u64 = 128;

/// Whether a printed futex2 flags field says private: symbolic `..._PRIVATE...` or a number
/// with bit 128.
fn flags_private(f: &str) -> Result<bool, ParseLineError> {
    let f = f.trim();
    if f.contains("PRIVATE") {
        return Ok(true);
    }
    if f.starts_with("FUTEX") {
        return Ok(false);
    }
    parse_number(f.split('|').next().unwrap_or(""))
        .map(|v| v & FUTEX2_PRIVATE != 0)
        .ok_or_else(|| err("futex2 flags are neither FUTEX2_* nor a number"))
}

fn aligned(uaddr: u64) -> Result<u64, ParseLineError> {
    if uaddr & 3 != 0 {
        Err(err("futex address is not 4-byte aligned"))
    } else {
        Ok(uaddr)
    }
}

/// A `[{val=V, uaddr=0xA, flags=F}, ...]` vector as strace prints `struct futex_waitv`.
fn parse_waitv_vector(args: &str) -> Result<Vec<(u64, bool)>, ParseLineError> {
    let body = args
        .trim_start()
        .strip_prefix('[')
        .ok_or_else(|| err("futex2 vector does not start with '['"))?;
    let body = body
        .split_once(']')
        .ok_or_else(|| err("futex2 vector without ']'"))?
        .0;
    let mut words = Vec::new();
    for entry in body.split('}') {
        let entry = entry.trim_start_matches([',', ' ']).trim();
        if entry.is_empty() || entry == "..." {
            continue;
        }
        let entry = entry
            .strip_prefix('{')
            .ok_or_else(|| err("futex2 vector entry does not start with '{'"))?;
        let mut uaddr = None;
        let mut private = None;
        for field in entry.split(", ") {
            if let Some(v) = field.strip_prefix("uaddr=") {
                uaddr = Some(parse_addr(v).ok_or_else(|| err("uaddr= is not a number"))?);
            } else if let Some(v) = field.strip_prefix("flags=") {
                private = Some(flags_private(v)?);
            }
        }
        let uaddr = uaddr.ok_or_else(|| err("futex2 vector entry without uaddr="))?;
        words.push((aligned(uaddr)?, private.unwrap_or(false)));
    }
    if words.is_empty() {
        return Err(err("futex2 vector without entries"));
    }
    Ok(words)
}

fn parse_futex2(name: &str, args: &str) -> Result<TraceAction, ParseLineError> {
    let call = match name {
        "syscall_0x1c6" => "futex_wake",
        "syscall_0x1c7" => "futex_wait",
        n => n,
    };
    let words = match call {
        "futex_waitv" | "futex_requeue" => parse_waitv_vector(args)?,
        _ => {
            // futex_wake(uaddr, mask, nr, flags) / futex_wait(uaddr, val, mask, flags, ...)
            let fields: Vec<&str> = args.split(',').map(str::trim).collect();
            let uaddr =
                parse_addr(fields[0]).ok_or_else(|| err("futex address is not a number"))?;
            let flags = fields
                .get(3)
                .map(|f| f.split([')', ' ']).next().unwrap_or(""))
                .ok_or_else(|| err("futex2 call without flags"))?;
            vec![(aligned(uaddr)?, flags_private(flags)?)]
        }
    };
    Ok(TraceAction::Futex2 {
        call: call.to_string(),
        words,
    })
}

/// One operation of a trace: which thread named which keys (indices into the distinct
/// keys), in trace order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceOp {
    /// Thread id (0 when the trace has none).
    pub thread: u32,
    /// Entry time, ns, when the trace records it.
    pub t_ns: Option<u64>,
    /// The keys, as indices into the distinct keys, in argument order.
    pub keys: Vec<u32>,
    /// A wake (the kernel checks for waiters without locking the bucket).
    pub wake: bool,
}

/// Keys read from a trace, with the bookkeeping the user is shown.
#[derive(Clone, Debug, Default)]
pub struct TraceKeys {
    /// Distinct keys, in order of first appearance.
    pub keys: Vec<FutexKey>,
    /// Futex calls seen (lines, not keys).
    pub futex_calls: usize,
    /// Lines that could not be parsed (skipped).
    pub unparseable: usize,
    /// First unparseable line number (1-based) and reason, for the message.
    pub first_error: Option<(usize, String)>,
    /// Distinct processes (synthetic `mm`s) the keys belong to.
    pub processes: usize,
    /// Every operation in order (its keys index [`TraceKeys::keys`]).
    pub ops: Vec<TraceOp>,
    /// futex2 calls among [`TraceKeys::futex_calls`].
    pub futex2_calls: usize,
    /// Futex words that give no key (NULL), left out as a capture file's are.
    pub no_key: usize,
}

/// Turns strace output into distinct futex keys (see the module docs for the process model).
/// Unparseable lines are counted, never fatal.
pub fn keys_from_strace(text: &str) -> TraceKeys {
    let mut out = TraceKeys::default();
    // thread id -> process index; pending "unfinished" clone halves: tid -> shares_vm.
    let mut process_of: HashMap<u32, usize> = HashMap::new();
    let mut pending_clone: HashMap<u32, bool> = HashMap::new();
    let mut n_processes = 0usize;
    let mut used_processes = std::collections::BTreeSet::new();
    let mut index: HashMap<FutexKey, u32> = HashMap::new();
    // A thread we have not seen created: with no clone lines it belongs to the one process
    // of the file; otherwise it is a (first) process of its own.
    fn process_for(tid: u32, map: &mut HashMap<u32, usize>, n: &mut usize) -> usize {
        *map.entry(tid).or_insert_with(|| {
            *n += 1;
            *n - 1
        })
    }
    let spawn_lines = text.contains("clone(")
        || text.contains("clone3(")
        || text.contains("fork(")
        || text.contains("clone resumed>");
    for (lineno, line) in text.lines().enumerate() {
        match parse_strace_line(line) {
            Err(e) => {
                out.unparseable += 1;
                if out.first_error.is_none() {
                    out.first_error = Some((lineno + 1, e.0));
                }
            }
            Ok(None) => {}
            Ok(Some(ev)) => match ev.action {
                TraceAction::Spawn { shares_vm, child } => {
                    let Some(parent) = ev.tid else { continue };
                    let vm = match shares_vm {
                        Some(v) => v,
                        None => pending_clone.remove(&parent).unwrap_or(true),
                    };
                    match child {
                        None => {
                            pending_clone.insert(parent, vm);
                        }
                        Some(c) => {
                            let p = process_for(parent, &mut process_of, &mut n_processes);
                            let idx = if vm {
                                p
                            } else {
                                n_processes += 1;
                                n_processes - 1
                            };
                            process_of.insert(c, idx);
                        }
                    }
                }
                action @ (TraceAction::Futex { .. } | TraceAction::Futex2 { .. }) => {
                    out.futex_calls += 1;
                    let p = match ev.tid {
                        Some(t) if spawn_lines => process_for(t, &mut process_of, &mut n_processes),
                        _ => 0,
                    };
                    used_processes.insert(p);
                    let mm = TRACE_MM_BASE + p as u64 * TRACE_MM_STRIDE;
                    let (words, wake): (Vec<(u64, bool)>, bool) = match action {
                        TraceAction::Futex {
                            uaddr,
                            uaddr2,
                            private,
                            op,
                        } => {
                            let base = op.split('|').next().unwrap_or("");
                            let wake = matches!(
                                base.trim_end_matches("_PRIVATE"),
                                "FUTEX_WAKE" | "FUTEX_WAKE_BITSET"
                            );
                            (
                                std::iter::once(uaddr)
                                    .chain(uaddr2)
                                    .map(|a| (a, private))
                                    .collect(),
                                wake,
                            )
                        }
                        TraceAction::Futex2 { call, words } => {
                            out.futex2_calls += 1;
                            (words, call == "futex_wake")
                        }
                        TraceAction::Spawn { .. } => unreachable!("matched above"),
                    };
                    let mut op_keys = Vec::with_capacity(words.len());
                    for (addr, private) in words {
                        // NULL: the kernel's get_futex_key() refuses it (EFAULT), no key.
                        if addr == 0 {
                            out.no_key += 1;
                            continue;
                        }
                        let key = if private {
                            FutexKey::private(mm, addr)
                        } else {
                            FutexKey::anon(mm, addr)
                        };
                        if let Ok(k) = key {
                            let idx = *index.entry(k).or_insert_with(|| {
                                out.keys.push(k);
                                (out.keys.len() - 1) as u32
                            });
                            op_keys.push(idx);
                        } else {
                            out.no_key += 1;
                        }
                    }
                    out.ops.push(TraceOp {
                        thread: ev.tid.unwrap_or(0),
                        t_ns: None,
                        keys: op_keys,
                        wake,
                    });
                }
            },
        }
    }
    out.processes = used_processes.len();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn futex(tid: Option<u32>, uaddr: u64, op: &str, private: bool) -> TraceEvent {
        TraceEvent {
            tid,
            action: TraceAction::Futex {
                uaddr,
                uaddr2: None,
                op: op.into(),
                private,
            },
        }
    }

    #[test]
    fn parses_the_common_forms() {
        assert_eq!(
            parse_strace_line("12326 futex(0x55b621fbf2a8, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, NULL, FUTEX_BITSET_MATCH_ANY <unfinished ...>").unwrap(),
            Some(futex(Some(12326), 0x55b621fbf2a8, "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME", true))
        );
        assert_eq!(
            parse_strace_line("[pid  4242] futex(0x7f00000010, FUTEX_WAKE, 1) = 0").unwrap(),
            Some(futex(Some(4242), 0x7f00000010, "FUTEX_WAKE", false))
        );
        assert_eq!(
            parse_strace_line("futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 1").unwrap(),
            Some(futex(None, 0x1000, "FUTEX_WAKE_PRIVATE", true))
        );
        assert_eq!(
            parse_strace_line("77 14:03:01.123456 futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 1")
                .unwrap(),
            Some(futex(Some(77), 0x1000, "FUTEX_WAKE_PRIVATE", true))
        );
        for none in [
            "",
            "12326 <... futex resumed>)              = -1 EAGAIN (Resource temporarily unavailable)",
            "12326 +++ exited with 0 +++",
            "12 --- SIGCHLD {si_signo=SIGCHLD} ---",
            "12 read(3, \"\", 4096) = 0",
        ] {
            assert_eq!(parse_strace_line(none).unwrap(), None, "{none}");
        }
        for bad in [
            "hello world",
            "12 futex(zzz, FUTEX_WAKE, 1) = 0",
            "12 futex(0x1001, FUTEX_WAKE, 1) = 0",
            "12 futex(0x1000) = 0",
            "[pid x] futex(0x1000, FUTEX_WAKE, 1)",
            "99999999999 futex(0x1000, FUTEX_WAKE, 1) = 0",
        ] {
            assert!(parse_strace_line(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn requeue_names_a_second_futex() {
        let ev = parse_strace_line(
            "5 futex(0x1000, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2147483647, 0x2008, 2) = 1",
        )
        .unwrap()
        .unwrap();
        assert!(matches!(
            ev.action,
            TraceAction::Futex {
                uaddr2: Some(0x2008),
                ..
            }
        ));
    }

    #[test]
    fn clone_without_vm_is_a_new_process() {
        let text = "\
1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 2
1 clone3({flags=CLONE_VM|CLONE_THREAD, stack=0x7f} => {parent_tid=[3]}, 88) = 3
2 clone(child_stack=0x7f, flags=CLONE_VM|CLONE_THREAD <unfinished ...>
2 <... clone resumed>, tls=0x7f) = 4
1 futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 0
2 futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 0
3 futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 0
4 futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 0
garbage
";
        let t = keys_from_strace(text);
        // tid 1 and its thread 3 share an mm; 2 and its thread 4 are a second process.
        assert_eq!(t.keys.len(), 2);
        assert_eq!(t.processes, 2);
        assert_eq!(t.futex_calls, 4);
        assert_eq!(t.unparseable, 1);
        assert_eq!(t.first_error.as_ref().unwrap().0, 9);
    }

    proptest::proptest! {
        /// The parser never panics, on arbitrary text or on mutated strace lines.
        #[test]
        fn never_panics(s in ".{0,120}", cut in 0usize..80) {
            let _ = parse_strace_line(&s);
            let line = "12326 futex(0x55b621fbf2a8, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2147483647, 0x55b621fbf2ac, 2) = 0";
            let cut = cut.min(line.len());
            let _ = parse_strace_line(&line[..cut]);
            let _ = parse_strace_line(&format!("{}{}", &line[..cut], s));
            let _ = keys_from_strace(&s);
        }
    }

    #[test]
    fn futex2_lines_give_their_keys() {
        // As strace 6.1 prints them on Linux 6.18 (futex_wake/futex_wait as raw syscalls),
        // and as a newer strace names them.
        let text = "\
7 futex_waitv([{val=0x1, uaddr=0x5569ea601044, flags=FUTEX_32|FUTEX_PRIVATE_FLAG}, {val=0x1, uaddr=0x5569ea601040, flags=FUTEX_32}], 2, 0, {tv_sec=929, tv_nsec=117226084}, CLOCK_MONOTONIC) = -1 EAGAIN (Resource temporarily unavailable)
7 syscall_0x1c6(0x5569ea60103c, 0xffffffffffffffff, 0x1, 0x82, 0x64, 0x3a1) = 0
7 syscall_0x1c7(0x5569ea601038, 0x1, 0xffffffffffffffff, 0x2, 0, 0) = -1 EAGAIN
7 futex_wake(0x5569ea601034, 0xffffffff, 1, FUTEX2_SIZE_U32|FUTEX2_PRIVATE) = 0
7 futex_requeue([{val=0, uaddr=0x5569ea601030, flags=FUTEX2_SIZE_U32|FUTEX2_PRIVATE}, {val=0, uaddr=0x5569ea60102c, flags=FUTEX2_SIZE_U32|FUTEX2_PRIVATE}], 0, 1, 1) = 0
7 syscall_0x1c8(0x7ffc61072c40, 0, 0x1, 0x1, 0x64, 0) = -1 EINVAL (Invalid argument)
";
        let t = keys_from_strace(text);
        assert_eq!(t.futex_calls, 5);
        assert_eq!(t.futex2_calls, 5);
        assert_eq!(t.unparseable, 1);
        let mm = TRACE_MM_BASE;
        let want = [
            FutexKey::private(mm, 0x5569ea601044).unwrap(),
            FutexKey::anon(mm, 0x5569ea601040).unwrap(),
            FutexKey::private(mm, 0x5569ea60103c).unwrap(),
            FutexKey::anon(mm, 0x5569ea601038).unwrap(),
            FutexKey::private(mm, 0x5569ea601034).unwrap(),
            FutexKey::private(mm, 0x5569ea601030).unwrap(),
            FutexKey::private(mm, 0x5569ea60102c).unwrap(),
        ];
        assert_eq!(t.keys, want);
        assert_eq!(t.ops.len(), 5);
        assert_eq!(t.ops[0].keys, vec![0, 1]);
        assert!(t.ops[1].wake && !t.ops[2].wake && t.ops[3].wake);
        assert!(parse_strace_line("7 futex_waitv([], 0, 0, NULL, 0) = -1 EINVAL").is_err());
        assert!(parse_strace_line("7 futex_wake(0x1001, 0, 1, 0x82) = 0").is_err());
    }

    /// A NULL futex word (strace prints `0x0` or `NULL`; the call fails with EFAULT) gives
    /// no key and is counted, as a capture file's NULL word is: neither a key at address 0
    /// nor an unparseable line.
    #[test]
    fn null_words_give_no_key_and_are_counted() {
        let t = keys_from_strace(
            "1 futex(0x0, FUTEX_WAKE_PRIVATE, 1) = -1 EFAULT (Bad address)\n\
             1 futex(NULL, FUTEX_WAIT_PRIVATE, 0, NULL) = -1 EFAULT (Bad address)\n\
             1 futex_wake(NULL, 0xffffffff, 1, FUTEX2_SIZE_U32|FUTEX2_PRIVATE) = -1 EFAULT\n\
             1 futex(0x1000, FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, NULL, 0) = -1 EFAULT\n\
             1 futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 0\n",
        );
        assert_eq!(t.unparseable, 0, "{:?}", t.first_error);
        assert_eq!(t.futex_calls, 5);
        assert_eq!(t.no_key, 4);
        assert_eq!(t.keys, [FutexKey::private(TRACE_MM_BASE, 0x1000).unwrap()]);
    }

    #[test]
    fn without_clone_lines_one_process() {
        let t = keys_from_strace(
            "1 futex(0x1000, FUTEX_WAKE_PRIVATE, 1) = 0\n2 futex(0x1000, FUTEX_WAKE, 1) = 0\n",
        );
        assert_eq!(t.processes, 1);
        // Same address, but one private and one shared key: two keys.
        assert_eq!(t.keys.len(), 2);
        assert_eq!(t.keys[0].w0(), TRACE_MM_BASE);
    }
}

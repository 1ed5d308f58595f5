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
//! is a key too.
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

fn parse_futex(args: &str) -> Result<TraceAction, ParseLineError> {
    let mut fields = args.split(',').map(str::trim);
    let uaddr_s = fields.next().unwrap_or("");
    let uaddr = parse_number(uaddr_s).ok_or_else(|| err("futex address is not a number"))?;
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
        // futex(uaddr, op, val, val2/timeout, uaddr2, val3)
        let v = fields.nth(2).and_then(|s| s.split_whitespace().next());
        v.and_then(parse_number).filter(|a| a & 3 == 0 && *a != 0)
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
    let mut seen = std::collections::HashSet::new();
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
                TraceAction::Futex {
                    uaddr,
                    uaddr2,
                    private,
                    ..
                } => {
                    out.futex_calls += 1;
                    let p = match ev.tid {
                        Some(t) if spawn_lines => process_for(t, &mut process_of, &mut n_processes),
                        _ => 0,
                    };
                    used_processes.insert(p);
                    let mm = TRACE_MM_BASE + p as u64 * TRACE_MM_STRIDE;
                    for addr in std::iter::once(uaddr).chain(uaddr2) {
                        let key = if private {
                            FutexKey::private(mm, addr)
                        } else {
                            FutexKey::anon(mm, addr)
                        };
                        if let Ok(k) = key
                            && seen.insert(k)
                        {
                            out.keys.push(k);
                        }
                    }
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

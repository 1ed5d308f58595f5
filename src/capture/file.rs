//! The text of a capture file as [`capture`](super::capture) writes it: the time-ordered
//! event lines cut to the `--max-events`/`--max-bytes` limits, then the header, the column
//! comment, the events and the trailer. The line formats themselves are
//! [`super::format`]'s; user documentation in `docs/capture.md`.

use super::format::{self, EndReason};
use super::script::ProbePath;

/// Cuts the time-ordered event lines to the longest prefix within `max_events` lines and
/// `max_bytes` bytes (a newline each), never keeping a call without all of its vector
/// entries (`v` lines follow their call): the cut moves back before such a call. Returns
/// the limit that cut, if one did.
pub(super) fn cut_to_limits(
    events: &mut Vec<(u64, String)>,
    max_events: Option<u64>,
    max_bytes: Option<u64>,
) -> Option<EndReason> {
    let mut bytes = 0u64;
    let mut cut = None;
    let mut keep = events.len();
    for (i, (_, l)) in events.iter().enumerate() {
        let b = l.len() as u64 + 1;
        if max_events.is_some_and(|m| i as u64 >= m) {
            cut = Some(EndReason::MaxEvents);
        } else if max_bytes.is_some_and(|m| bytes + b > m) {
            cut = Some(EndReason::MaxBytes);
        }
        if cut.is_some() {
            keep = i;
            break;
        }
        bytes += b;
    }
    let is_entry = |l: &str| l.starts_with("v ");
    while keep > 0 && keep < events.len() && is_entry(&events[keep].1) {
        keep -= 1;
    }
    events.truncate(keep);
    cut
}

/// The header's facts about one capture.
pub(super) struct Header<'a> {
    pub probe: ProbePath,
    /// Why the kernel keys were not captured (`None`: they were).
    pub kernel_key_note: Option<&'a str>,
    pub bpftrace_version: String,
    pub syscalls: Vec<&'a str>,
    /// The `target=` value.
    pub target: String,
    pub root: u32,
    pub started_unix: u64,
}

/// The whole file: header, column comment, `events` in order, trailer.
pub(super) fn capture_text(
    h: &Header,
    events: &[(u64, String)],
    lost: u64,
    reason: EndReason,
    exit_code: Option<i32>,
) -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".into(), |s| s.trim().to_string());
    let mut text = format::header_line(&[
        ("probe", h.probe.as_str().to_string()),
        (
            "kernel_key",
            match h.kernel_key_note {
                None => "yes".into(),
                Some(n) => format!("no({n})"),
            },
        ),
        ("kernel", kernel),
        ("bpftrace", h.bpftrace_version.clone()),
        ("syscalls", h.syscalls.join(",")),
        ("target", h.target.clone()),
        ("root", h.root.to_string()),
        ("started_unix", h.started_unix.to_string()),
        ("clock", "monotonic_ns".into()),
    ]);
    text.push('\n');
    text.push_str(
        "# KIND T_NS TGID TID MM FIELDS... (futex: OP UADDR VAL VAL2 UADDR2 VAL3; futex_wait: FLAGS UADDR VAL MASK; futex_wake: FLAGS UADDR MASK NR; futex_waitv: FLAGS NR; futex_requeue: FLAGS NR_WAKE NR_REQUEUE; v: IDX FLAGS UADDR VAL; key: UADDR W0 W1 OFFSET RET; fork: CHILD) see docs/capture.md\n",
    );
    for (_, l) in events {
        text.push_str(l);
        text.push('\n');
    }
    text.push_str(&format::trailer_line(events.len(), lost, reason, exit_code));
    text.push('\n');
    text
}

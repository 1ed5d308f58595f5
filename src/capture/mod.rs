//! Real futex keys from real programs: `futexhash capture` records every futex system call
//! of a process tree through bpftrace, with the `mm` pointer the kernel keys private
//! futexes on, and (where kernel function tracing is allowed) the key the kernel itself
//! built.
//!
//! Where the algorithm comes from: the key model is `get_futex_key()` in
//! `kernel/futex/core.c` (Linux 6.18; `union futex_key` in `include/linux/futex.h`); the
//! futex2 calls and their vector layout (`struct futex_waitv`, `FUTEX2_PRIVATE`,
//! `futex_parse_waitv()`) are `kernel/futex/syscalls.c` (futex_waitv since 5.16,
//! futex_wake/futex_wait/futex_requeue since 6.7).
//!
//! - [`format`] (= [`crate::workload::capture`], where `--workload trace:FILE` reads it):
//!   the versioned text format (`# futexhash-capture v1 ...`), its parser and the key model
//!   applied to it; user documentation in `docs/capture.md`.
//! - [`script`]: which probes this kernel has, and the generated bpftrace program.
//! - [`run`]: starting the target and bpftrace, stopping them, writing the file.
//! - `error`: [`CaptureError`].
//! - `held`: the command forked and held until bpftrace is attached.
//! - `file`: the file's text: the events cut to the limits, header and trailer.
//!
//! This module knows nothing about the command line: errors are [`run::CaptureError`]
//! values, which the CLI maps to exit statuses.

mod error;
mod file;
mod held;
pub mod run;
pub mod script;

pub use crate::workload::capture as format;
pub use format::{Call, Capture, EndReason, KeyedOp, Syscall, is_capture, parse_capture};
pub use run::{CaptureError, CaptureOptions, CaptureSummary, Target, capture};
pub use script::ProbePath;

//! Why a capture could not be done: the error of [`super::capture`], which the CLI maps
//! to exit statuses.

use std::fmt;

/// Why a capture could not be done. Everything but [`CaptureError::Runtime`] is found
/// before the target runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaptureError {
    /// bpftrace is not on `PATH`.
    BpftraceMissing,
    /// Not allowed to load BPF programs.
    Permission(String),
    /// The kernel lacks what the capture needs (tracefs, tracepoints).
    Kernel(String),
    /// The target does not exist, cannot be run, or exited before the capture started.
    Target(String),
    /// bpftrace refused the script.
    Bpftrace(String),
    /// Something failed while capturing or writing.
    Runtime(String),
    /// A signal stopped the capture before bpftrace was attached: the target never ran
    /// under the probes, so there is nothing to write.
    Interrupted(String),
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::BpftraceMissing => {
                f.write_str("bpftrace not found on PATH; install it with: apt-get install bpftrace")
            }
            CaptureError::Permission(s)
            | CaptureError::Kernel(s)
            | CaptureError::Target(s)
            | CaptureError::Bpftrace(s)
            | CaptureError::Runtime(s)
            | CaptureError::Interrupted(s) => f.write_str(s),
        }
    }
}
impl std::error::Error for CaptureError {}

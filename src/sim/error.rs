//! What can go wrong in the simulator, by category: the caller asked for something the
//! simulator cannot do ([`SimError::BadRequest`]), an input file is unreadable or malformed
//! ([`SimError::Data`], [`SimError::Read`]), or this machine could not be read or timed
//! ([`SimError::Machine`]). What each category means to the user is the CLI's to decide.

use std::fmt;
use std::path::PathBuf;

use crate::hashers::UnknownHasher;
use crate::workload::WorkloadError;

/// Why a simulation, a calibration or a validation could not be done.
#[derive(Debug)]
pub enum SimError {
    /// The request is impossible as asked: a parameter out of range, a design the profile
    /// has no cost for, a profile that does not check, a row that does not exist.
    BadRequest(String),
    /// A published or measured table, a profile or a trace is malformed or lacks what the
    /// request needs.
    Data(String),
    /// An input file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A workload (key set or trace) could not be made.
    Workload(WorkloadError),
    /// A built-in hasher the simulator relies on is not registered.
    Hasher(UnknownHasher),
    /// This machine could not be read (sysfs) or a hasher could not be timed on it.
    Machine(String),
}

impl SimError {
    /// Whether the caller's input caused it (request or input data), rather than this
    /// machine.
    pub fn is_input(&self) -> bool {
        !matches!(self, SimError::Machine(_))
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::BadRequest(s) | SimError::Data(s) | SimError::Machine(s) => f.write_str(s),
            // The io error is the source; it is named here too because the CLI prints one
            // line (`Display` only) and the reason is what the user needs.
            SimError::Read { path, source } => {
                write!(f, "cannot read '{}': {source}", path.display())
            }
            SimError::Workload(e) => fmt::Display::fmt(e, f),
            SimError::Hasher(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Read { source, .. } => Some(source),
            SimError::Workload(e) => Some(e),
            SimError::Hasher(e) => Some(e),
            SimError::BadRequest(_) | SimError::Data(_) | SimError::Machine(_) => None,
        }
    }
}

impl From<WorkloadError> for SimError {
    fn from(e: WorkloadError) -> Self {
        SimError::Workload(e)
    }
}

impl From<UnknownHasher> for SimError {
    fn from(e: UnknownHasher) -> Self {
        SimError::Hasher(e)
    }
}

//! What can go wrong in the simulator, by category: the caller asked for something the
//! simulator cannot do ([`SimError::BadRequest`]), an input file is unreadable or malformed
//! ([`SimError::Data`], [`SimError::Read`]), or this machine could not be read or timed
//! ([`SimError::Machine`]); a run too long for the clock or the work limit
//! ([`SimError::Clock`], [`SimError::Work`]) is a request the simulator cannot do. What
//! each category means to the user is the CLI's to decide.

use std::fmt;
use std::path::PathBuf;

use super::SimLength;
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
    /// The run's simulated time could pass the simulator's clock ([`super::check_clock`]).
    Clock(ClockOverflow),
    /// The request would simulate more operations than one may ([`super::check_work`]).
    Work(WorkLimit),
}

/// A request refused by [`super::check_work`]: its threads times its length is beyond
/// [`super::MAX_SIMULATED_OPS`]. It carries the figures a front end needs to say which of its
/// own flags to lower and to what.
#[derive(Clone, Debug)]
pub struct WorkLimit {
    /// Threads simulated, every run counted.
    pub threads: u64,
    /// How they were counted, in words.
    pub counted: String,
    /// The length asked for each.
    pub len: SimLength,
    /// The most operations a request may simulate.
    pub limit: u64,
    /// Most operations per thread, warm-up and measured together, within the limit.
    pub most_ops: u64,
}

impl WorkLimit {
    /// Most measured operations per thread that fit after the asked warm-up (0: none).
    pub fn most_measured(&self) -> u64 {
        self.most_ops.saturating_sub(u64::from(self.len.warmup_ops))
    }

    /// The operations the request would simulate.
    pub fn total(&self) -> u128 {
        u128::from(self.threads)
            * (u128::from(self.len.warmup_ops) + u128::from(self.len.measured_ops))
    }
}

impl fmt::Display for WorkLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} simulated operations ({} threads: {}, {} operations each) are more than the {} one request may simulate: ",
            self.total(),
            self.threads,
            self.counted,
            u64::from(self.len.warmup_ops) + u64::from(self.len.measured_ops),
            self.limit
        )?;
        match self.most_measured() {
            0 => write!(
                f,
                "at most {} operations per thread fit, warm-up included ({} of warm-up asked); lower the warm-up or simulate fewer threads",
                self.most_ops, self.len.warmup_ops
            ),
            most => write!(
                f,
                "at most {most} measured operations per thread fit after {} of warm-up ({} asked)",
                self.len.warmup_ops, self.len.measured_ops
            ),
        }
    }
}

/// A run refused by [`super::check_clock`]: its bound on the simulated time is beyond the
/// event clock at its thread count. It carries the figures a front end needs to say which
/// of its own flags to lower and to what.
#[derive(Clone, Copy, Debug)]
pub struct ClockOverflow {
    /// Threads of the run.
    pub threads: usize,
    /// Its length, as asked.
    pub len: SimLength,
    /// Bound on its simulated time, s.
    pub bound_s: f64,
    /// The clock's range at this thread count, s.
    pub limit_s: f64,
    /// The serialised cost of one operation the bound charges, ns.
    pub per_op_ns: f64,
    /// Most operations per thread, warm-up and measured together, whose bound is within the
    /// clock (0: not even one).
    pub most_ops: u64,
}

impl ClockOverflow {
    /// Most measured operations per thread that fit after the asked warm-up (0: none).
    pub fn most_measured(&self) -> u64 {
        self.most_ops.saturating_sub(u64::from(self.len.warmup_ops))
    }
}

impl fmt::Display for ClockOverflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} threads on this profile could simulate up to {:.3e} s, beyond the simulator's clock ({:.0} s at that thread count): ",
            self.threads, self.bound_s, self.limit_s
        )?;
        let costs = format!(
            "the profile's costs (per operation up to {:.3e} ns) or the threads",
            self.per_op_ns
        );
        let (warmup, measured) = (self.len.warmup_ops, self.len.measured_ops);
        match (self.most_measured(), self.most_ops) {
            (0, 0) => write!(f, "lower {costs}"),
            (0, most) => write!(
                f,
                "at most {most} operations per thread fit, warm-up included ({warmup} of warm-up asked); lower the warm-up, {costs}"
            ),
            (most, _) => write!(
                f,
                "at most {most} measured operations per thread fit after {warmup} of warm-up ({measured} asked); lower them, {costs}"
            ),
        }
    }
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
            SimError::Clock(c) => fmt::Display::fmt(c, f),
            SimError::Work(w) => fmt::Display::fmt(w, f),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Read { source, .. } => Some(source),
            SimError::Workload(e) => Some(e),
            SimError::Hasher(e) => Some(e),
            SimError::BadRequest(_)
            | SimError::Data(_)
            | SimError::Machine(_)
            | SimError::Clock(_)
            | SimError::Work(_) => None,
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

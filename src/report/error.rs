//! What can stop a report: a layer below failing (the simulator, a benchmark, a key set,
//! a distribution sweep), a plot that cannot be written, or a figure a section needs that
//! its run did not produce. The report's input is checked by the CLI before it starts, so
//! every one of these is a failure while running; the CLI decides what that means to the
//! user.

use std::fmt;
use std::path::PathBuf;

use crate::bench::options::BenchError;
use crate::sim::SimError;
use crate::stats::StatsError;
use crate::workload::WorkloadError;

/// Why a report could not be made.
#[derive(Debug)]
pub enum ReportError {
    /// A simulation, calibration or validation failed.
    Sim(SimError),
    /// A benchmark (kernel futex, noisy neighbour, layout, `--compare`) failed.
    Bench(BenchError),
    /// A key set could not be made.
    Workload(WorkloadError),
    /// A distribution sweep refused its table sizes.
    Stats(StatsError),
    /// A plot could not be written.
    Plot {
        /// The SVG file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A run returned without a figure the section needs.
    Missing(&'static str),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Sim(e) => fmt::Display::fmt(e, f),
            ReportError::Bench(e) => fmt::Display::fmt(e, f),
            ReportError::Workload(e) => fmt::Display::fmt(e, f),
            ReportError::Stats(e) => fmt::Display::fmt(e, f),
            // The io error is the source; it is named here too because the CLI prints one
            // line (`Display` only) and the reason is what the user needs.
            ReportError::Plot { path, source } => {
                write!(f, "cannot write plot '{}': {source}", path.display())
            }
            ReportError::Missing(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::Sim(e) => Some(e),
            ReportError::Bench(e) => Some(e),
            ReportError::Workload(e) => Some(e),
            ReportError::Stats(e) => Some(e),
            ReportError::Plot { source, .. } => Some(source),
            ReportError::Missing(_) => None,
        }
    }
}

impl From<SimError> for ReportError {
    fn from(e: SimError) -> Self {
        ReportError::Sim(e)
    }
}

impl From<BenchError> for ReportError {
    fn from(e: BenchError) -> Self {
        ReportError::Bench(e)
    }
}

impl From<WorkloadError> for ReportError {
    fn from(e: WorkloadError) -> Self {
        ReportError::Workload(e)
    }
}

impl From<StatsError> for ReportError {
    fn from(e: StatsError) -> Self {
        ReportError::Stats(e)
    }
}

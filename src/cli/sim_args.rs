//! Flags and values shared by `sim` and its subcommands (`sim calibrate`, `sim
//! validate`): the simulated run length, a thread list, a profile argument.

use super::{CliError, args};
use crate::sim::SimLength;
use crate::sim::profile::MachineProfile;

#[derive(Debug, clap::Args)]
pub(super) struct LengthArgs {
    /// Operations per thread measured (after warm-up).
    #[arg(long, value_name = "N", default_value = "1500", value_parser = args::number)]
    ops: u64,
    /// Operations per thread discarded as warm-up.
    #[arg(long, value_name = "N", default_value = "200", value_parser = args::number)]
    warmup: u64,
}

impl LengthArgs {
    pub(super) fn length(&self) -> Result<SimLength, CliError> {
        let to_u32 = |v: u64, what: &str, least: u32| {
            u32::try_from(v)
                .ok()
                .filter(|&v| v >= least)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "{what} {v} must be {least}..={} operations",
                        u32::MAX
                    ))
                })
        };
        Ok(SimLength {
            warmup_ops: to_u32(self.warmup, "--warmup", 0)?,
            measured_ops: to_u32(self.ops, "--ops", 1)?,
        })
    }
}

/// A profile argument: an existing file, else a built-in profile ([`args::machine_profile`]).
pub(super) fn resolve_profile(arg: &str) -> Result<MachineProfile, CliError> {
    args::machine_profile(arg)
}

/// Most simulated threads (as `bench`).
const MAX_SIM_THREADS: u64 = 16384;

pub(super) fn parse_threads(s: &str) -> Result<Vec<usize>, CliError> {
    s.split(',')
        .map(|t| {
            crate::key::parse_number(t)
                .filter(|&n| (1..=MAX_SIM_THREADS).contains(&n))
                .map(|n| n as usize)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "thread count '{t}' must be a number in 1..={MAX_SIM_THREADS}"
                    ))
                })
        })
        .collect()
}

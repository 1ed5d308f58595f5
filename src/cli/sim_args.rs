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
    /// The length asked for, each flag within 32 bits. Their sum is not checked here: the
    /// work limit ([`crate::sim::check_work`]) bounds threads × (warm-up + measured), and
    /// its refusal names the most `--ops` the request's own threads allow.
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

/// A run beyond the simulator's clock in the words of the flags that set its length: the
/// value of `--ops` (or `--warmup`) and the most that fits at that thread count.
pub(super) fn clock_message(c: &crate::sim::ClockOverflow) -> String {
    let (warmup, ops, t) = (c.len.warmup_ops, c.len.measured_ops, c.threads);
    let beyond = format!(
        "{t} threads on this profile could simulate up to {:.3e} s, beyond the simulator's clock ({:.0} s at that thread count)",
        c.bound_s, c.limit_s
    );
    let costs = format!(
        "or fewer threads, or lower profile costs (per operation up to {:.3e} ns)",
        c.per_op_ns
    );
    match (c.most_measured(), c.most_ops) {
        (0, 0) => format!(
            "{beyond} even for one operation a thread: lower the profile's costs (per operation up to {:.3e} ns) or the threads",
            c.per_op_ns
        ),
        (0, most) => format!(
            "--warmup {warmup} is too many: {beyond}; --warmup plus --ops may be at most {most} at {t} threads, {costs}"
        ),
        (most, _) => format!(
            "--ops {ops} is too many: {beyond}; at most --ops {most} at {t} threads with --warmup {warmup}, {costs}"
        ),
    }
}

/// A request beyond the work limit in the words of the flags that set its length: the
/// value of `--ops` (or `--warmup`), what the request would simulate, and the most that
/// fits with its threads.
pub(super) fn work_message(w: &crate::sim::WorkLimit) -> String {
    let (warmup, ops) = (w.len.warmup_ops, w.len.measured_ops);
    let beyond = format!(
        "{} simulated threads ({}) × {} operations each would be {} operations, more than the {} a run may simulate (docs/sim.md, \"How long a run may be\")",
        w.threads,
        w.counted,
        u64::from(warmup) + u64::from(ops),
        w.total(),
        w.limit
    );
    match w.most_measured() {
        0 => format!(
            "--warmup {warmup} is too many: {beyond}; --warmup plus --ops may be at most {} here",
            w.most_ops
        ),
        most => {
            format!(
                "--ops {ops} is too many: {beyond}; at most --ops {most} here with --warmup {warmup}"
            )
        }
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

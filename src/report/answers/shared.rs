//! What the answers share: number and code-block formatting, the relative-figure phrase,
//! writing a plot into the report, the profile labels, the kernel's slot policies, and the
//! simulated slot curves two questions (table size, global vs private) read.

use super::*;
use crate::hashers::{Builtin, HashKey, SharedHasher};
use crate::render::plot::Plot;
use crate::report::ReportError;
use crate::report::context::Context;
use crate::sim::profile::MachineProfile;
use std::path::Path;

/// The simulator's error, as every sentence quotes it (one decimal, as the captions).
pub(crate) use crate::report::context::error_pct;

/// A share or change: one decimal under 10 %, whole percent above. Not for the
/// simulator's error, which is always quoted by [`error_pct`].
pub(crate) fn pct(x: f64) -> String {
    let p = x * 100.0;
    if p.abs() < 10.0 && p.fract() != 0.0 {
        format!("{p:.1} %")
    } else {
        format!("{p:.0} %")
    }
}

pub(crate) fn code(text: &str) -> String {
    format!("```\n{text}```\n")
}

/// The line under an answer table that prints simulated p99s (`points`: the points whose
/// p99 it prints): the step they are rounded to ([`crate::sim::sweep::LATENCY_STEP_NS`])
/// and how many of them have a p50 equal to their p99 ([`SlotPoint::quantised`]). `None`
/// when the table prints no simulated p99.
pub fn p99_note(points: &[SlotPoint]) -> Option<String> {
    if points.is_empty() {
        return None;
    }
    let n = points.len();
    let equal = match points.iter().filter(|p| p.quantised()).count() {
        0 => format!("in none of the {n} points with a p99 here does the p50 equal the p99"),
        1 => format!(
            "in 1 of the {n} points with a p99 here the p50 equals the p99 (the simulated \
             latency takes one value there), so that p99 is no tail"
        ),
        q => format!(
            "in {q} of the {n} points with a p99 here the p50 equals the p99 (the simulated \
             latency takes one value there), so those p99s are no tail"
        ),
    };
    Some(format!(
        "Simulated p99s are quantised: each latency percentile is rounded to a step of {} ns \
         (`sim::sweep::LATENCY_STEP_NS`); {equal}.",
        crate::sim::sweep::LATENCY_STEP_NS
    ))
}

/// "matches the global hash within the ±8 % validated error" or "reaches 37 % of the
/// global hash": `value` against `reference` with tolerance `tol`.
pub fn relative(value: f64, reference: f64, tol: f64, reference_name: &str) -> String {
    if !crate::report::spread::differs(value, reference, tol) {
        format!("matches {reference_name} within ±{}", error_pct(tol))
    } else {
        format!("reaches {} of {reference_name}", pct(value / reference))
    }
}

/// The policies the question compares, as slot counts for `threads` on a machine with
/// `cpus` CPUs: the merged kernel's automatic size and the RFC v2 default.
pub fn policy_slots(threads: usize, cpus: u32) -> (u64, u64) {
    let global = crate::sim::calibrate::global_hash_size(cpus) as usize;
    let merged = crate::table::merged_default_slots(threads, cpus as usize, global) as u64;
    (merged, crate::table::rfc_v2_slots(0))
}

/// "a", "a and b", "a, b and c".
pub(crate) fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// "leaks" for one name, "leak" for several.
pub(crate) fn verb(names: &[&str], one: &str, many: &str) -> String {
    format!(
        "{} {}",
        and_list(names),
        if names.len() == 1 { one } else { many }
    )
}

pub(crate) fn write_plot(
    dir: &Path,
    file: &str,
    plot: &Plot,
    a: &mut Answer,
) -> Result<(), ReportError> {
    crate::report::section::write_plot_into(dir, file, plot, &mut a.evidence, &mut a.files)
}

pub(crate) fn jhash2() -> SharedHasher {
    Builtin::by_name("jhash2", HashKey::DEFAULT)
        .expect("registry")
        .shared()
}

/// Simulated slot curves of `profile` at each of `threads`.
pub fn sim_slot_curves(
    ctx: &Context,
    profile: &MachineProfile,
    threads: &[usize],
) -> Result<Vec<SlotCurve>, ReportError> {
    use crate::sim::sweep::{SimSweep, run_sweep};
    let max_k = if ctx.depth == crate::report::context::Depth::Quick {
        16
    } else {
        17
    };
    let mut slots: Vec<u64> = (1..=max_k).map(|k| 1u64 << k).collect();
    for &t in threads {
        let (m, r) = policy_slots(t, profile.cpus);
        slots.extend([m, r]);
    }
    slots.sort_unstable();
    slots.dedup();
    let mut out = Vec::new();
    for &t in threads {
        let sweep = SimSweep {
            threads: vec![t],
            futexes: 1024,
            buckets: std::iter::once(0).chain(slots.iter().copied()).collect(),
            hashers: vec![jhash2()],
            op: crate::sim::SimOp::WaitFail,
            node: None,
            len: ctx.sim_len,
            seed: 1,
        };
        let recs = run_sweep(profile, &sweep, || {})?;
        let point = |r: &crate::throughput::record::BenchRecord| SlotPoint {
            slots: r.buckets,
            ops: r.ops_per_sec,
            p99_ns: r.latency_ns_p99 as f64,
            p50_ns: r.latency_ns_p50 as f64,
        };
        let global =
            recs.iter()
                .find(|r| r.buckets == 0)
                .map(point)
                .ok_or(ReportError::Missing(
                    "the simulator returned no global-hash record",
                ))?;
        out.push(SlotCurve {
            profile: profile_label(profile),
            threads: t,
            global,
            private: recs.iter().filter(|r| r.buckets > 0).map(point).collect(),
        });
    }
    Ok(out)
}

/// A short name for a profile in sentences: "the seed's 256-CPU box" or the user's.
pub fn profile_label(p: &MachineProfile) -> String {
    format!(
        "{} ({} CPUs, {} node(s))",
        short_name(&p.name),
        p.cpus,
        p.nodes
    )
}

/// The label of a profile in a table's column: [`profile_label`] without the node count,
/// "seed thread 256-CPU 2-node box (256 CPUs)" or "profile mine.toml (256 CPUs)", so the
/// seed box and a `--profile` of as many CPUs are told apart.
pub fn profile_short_label(p: &MachineProfile) -> String {
    format!("{} ({} CPUs)", short_name(&p.name), p.cpus)
}

pub(crate) fn short_name(name: &str) -> &str {
    name.split([',', ':']).next().unwrap_or(name).trim()
}

/// Thread counts for a profile's curves: a few up to its CPU count (the seed's 240 on the
/// 256-CPU box).
pub fn profile_threads(p: &MachineProfile) -> Vec<usize> {
    let cpus = p.cpus as usize;
    let top = if cpus == 256 { 240 } else { cpus };
    let mut t: Vec<usize> = [4, 16, 64].into_iter().filter(|&t| t < top).collect();
    t.push(top);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_follow_the_kernels() {
        // Merged: roundup_pow_of_two(4 × min(threads, cpus)), at least 16; RFC v2: 4.
        assert_eq!(policy_slots(240, 256), (1024, 4));
        assert_eq!(policy_slots(2, 256), (16, 4));
        assert_eq!(policy_slots(300, 256), (1024, 4));
    }
}

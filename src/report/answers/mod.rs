//! The report's "Answers" section: one subsection per question the seed threads asked,
//! each a one-sentence answer with its number, the table and plot behind it, the command
//! that reproduces it, and the caveat (the validated error of that kind of figure; a
//! difference smaller than it is not claimed).
//!
//! The questions, in the seed threads' words, one module each:
//! 1. [`table_size`]: private hash default and upper limit — "what a sane default value
//!    and upper limit might be" (2024 private-hash thread, RFC v2, seed 000);
//! 2. [`global_vs_private`]: "use the global hash map to maximize throughput if latency
//!    isn't important" (same thread), with the noisy neighbour that motivated the private
//!    hash;
//! 3. [`which_hash`]: cost × distribution × attack resistance ([`attack`]) and the
//!    eight-algorithm table's finding that they are equal in throughput;
//! 4. [`alignment`]: aligned vs packed buckets, 256 vs 256 × CPUs (the 2013 thread, seed
//!    003, which led to v3.13's `roundup_pow_of_two(256 × CPUs)` and
//!    `____cacheline_aligned_in_smp` buckets);
//! 5. [`numa`]: per-node tables, separated vs forced into one node (the 2023 `FUTEX2_NUMA`
//!    thread, seed 002).
//!
//! [`decisions`] turns the answers' figures into the decision table at the top of the
//! report; [`trust`] says how far a machine profile's predictions have been tested.
//!
//! Every sentence is built by a pure function of the figures (tested on synthetic data on
//! both sides of each condition); the figures come from the few `sim_*` and `measure_*`
//! functions (in [`shared`] and each question's module), the only ones that call the
//! simulator and the bench. This module holds the types the questions share.

pub mod alignment;
pub mod attack;
pub mod decisions;
pub mod global_vs_private;
pub mod numa;
pub mod shared;
pub mod table_size;
pub mod trust;
pub mod which_hash;

pub use alignment::*;
pub use attack::*;
pub use decisions::*;
pub use global_vs_private::*;
pub use numa::*;
pub use shared::{policy_slots, profile_label, profile_threads, relative, sim_slot_curves};
pub use table_size::*;
pub use trust::{ProfileTrust, Validity, caveats};
pub use which_hash::*;

use serde::Serialize;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The question's own threshold: "within 5 % of the global hash".
pub const NEAR_GLOBAL: f64 = 0.05;

/// Widest table in the report (a mail's line).
pub const MAX_WIDTH: usize = crate::render::MAIL_WIDTH;

/// One answered question.
#[derive(Clone, Debug, Default)]
pub struct Answer {
    /// `### …` heading text.
    pub question: String,
    /// The one-sentence answer (with its number).
    pub answer: String,
    /// Tables and plot references behind it (Markdown).
    pub evidence: String,
    /// Commands that reproduce the figures.
    pub commands: Vec<String>,
    /// How sure the answer is.
    pub caveat: String,
    /// Every figure, for `report.json`.
    pub figures: Value,
    /// Plots written.
    pub files: Vec<PathBuf>,
}

impl Answer {
    /// The subsection's Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "### {}\n\n**Answer.** {}\n\n{}\n",
            self.question, self.answer, self.evidence
        );
        let _ = writeln!(s, "**Reproduce:**\n");
        for c in &self.commands {
            let _ = writeln!(s, "    {c}");
        }
        let _ = writeln!(s, "\n**Caveat.** {}\n", self.caveat);
        s
    }
}

/// One simulated table size at one thread count.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SlotPoint {
    /// Private hash slots (0 = the global hash).
    pub slots: u64,
    /// Mean per-thread ops/sec.
    pub ops: f64,
    /// 99th percentile latency of one operation, ns.
    pub p99_ns: f64,
    /// Median latency of one operation, ns: where it equals the p99 the simulated latency
    /// is quantised and that p99 is no tail ([`SlotPoint::quantised`]).
    pub p50_ns: f64,
}

impl SlotPoint {
    /// Whether its simulated latency is quantised: the p50 equals the p99, so the p99
    /// says nothing of a tail and is not quoted in a sentence.
    pub fn quantised(&self) -> bool {
        self.p50_ns == self.p99_ns
    }
}

/// Throughput against private slots at one thread count, with the global hash.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlotCurve {
    /// Profile name.
    pub profile: String,
    /// Threads.
    pub threads: usize,
    /// The global hash.
    pub global: SlotPoint,
    /// Private sizes, ascending.
    pub private: Vec<SlotPoint>,
}

impl SlotCurve {
    /// The point at `slots` (0 = global).
    pub fn at(&self, slots: u64) -> Option<SlotPoint> {
        if slots == 0 {
            return Some(self.global);
        }
        self.private.iter().copied().find(|p| p.slots == slots)
    }

    /// The smallest private size whose throughput is at least `(1 − frac)` × the global
    /// hash's.
    pub fn smallest_within(&self, frac: f64) -> Option<u64> {
        self.private
            .iter()
            .find(|p| p.ops >= self.global.ops * (1.0 - frac))
            .map(|p| p.slots)
    }

    /// The size beyond which throughput no longer rises by more than `tol`: the smallest
    /// size `s` such that no larger size is more than `(1 + tol)` × faster than `s`.
    pub fn plateau(&self, tol: f64) -> Option<u64> {
        self.private.iter().enumerate().find_map(|(i, p)| {
            self.private[i + 1..]
                .iter()
                .all(|q| q.ops <= p.ops * (1.0 + tol))
                .then_some(p.slots)
        })
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::report::context::{Context, Depth, Given};
    use crate::sim::profile::MachineProfile;

    /// The seed box and a user's profile of as many CPUs, named as the report names them:
    /// the calibrated seed box's name (`sim::validate::calibrate_seed_box`) and the name
    /// `report --profile /tmp/good.toml` gives a profile calibrated on the seed's runs.
    pub(crate) fn two_256_cpu_profiles() -> (MachineProfile, MachineProfile) {
        let mut seed = crate::sim::validate::seed_box_template();
        seed.name = "seed thread 256-CPU 2-node box, calibrated on rows 0 and 2 of \
                     buckets-240threads-256cpu.csv"
            .into();
        let mut user = seed.clone();
        user.name = "profile /tmp/good.toml: 256 CPUs, 2 node(s): calibrated on rows 0,2 \
                     (240 threads, jhash2) of buckets-240threads-256cpu-runs.csv, mean of runs \
                     run1,run2,run3"
            .into();
        (seed, user)
    }

    /// A context with no measurement in it: `seed_box` and the user's `profile`, the
    /// quick run length.
    pub(crate) fn context(seed_box: MachineProfile, profile: Option<MachineProfile>) -> Context {
        Context {
            depth: Depth::Quick,
            repeat: 1,
            hashers: Vec::new(),
            extra: Vec::new(),
            machine: crate::machine::MachineInfo::this_machine(),
            costs: Vec::new(),
            seed_box,
            user_profile: profile,
            validation: Vec::new(),
            sim_len: crate::sim::SimLength {
                warmup_ops: 100,
                measured_ops: 500,
            },
            data_dir: std::path::PathBuf::from("data/published"),
            given: Given {
                algo: None,
                profile: Some("/tmp/good.toml".into()),
            },
        }
    }

    pub(crate) fn curve(global: f64, pts: &[(u64, f64)]) -> SlotCurve {
        SlotCurve {
            profile: "box".into(),
            threads: 240,
            global: SlotPoint {
                slots: 0,
                ops: global,
                p99_ns: 1000.0,
                p50_ns: 500.0,
            },
            private: pts
                .iter()
                .map(|&(slots, ops)| SlotPoint {
                    slots,
                    ops,
                    p99_ns: 2000.0,
                    p50_ns: 1000.0,
                })
                .collect(),
        }
    }
}

//! The box templates: what calibration does not fit on the seeds' machines, each figure
//! with the publication it comes from (core-to-core latency matrices, Intel's
//! Hyper-Threading figure, Memory Latency Checker output) or, where none was found, said
//! to be generic.

use crate::sim::profile::MachineProfile;

/// The 256-CPU template: what calibration does not fit. The hold time is a typical figure
/// (a bucket lock held for a compare and an unlock). Line transfers: the seed box is a
/// 2024 machine with 2 × 64 cores and SMT whose CPU the seed does not name, so they are
/// the means over the published 2-socket core-to-core matrices with 64 cores per socket
/// found ([`EPYC_2S64_MATRICES`]; Rome and Milan, as the box may be), one migration
/// between two cores of the line's home socket and one across sockets, and remote /
/// local = 2.23 for migrations and hand-offs alike. The node-pinned 110-thread table
/// depends on this choice more than any other (docs/sim.md: a median error of 0.018 to
/// 0.078 with one matrix alone). Home snooping ([`MachineProfile::home_snoop`]): the
/// 7702 and 7742 matrices show it (the other socket's pairs cost about what a
/// cross-socket pair does), and the seed box's own 110-thread
/// figures are consistent with it — pinned to one node, the global hash (memory
/// interleaved over both nodes) ran 8.5–10 % slower than a private hash (memory on that
/// node), though every thread and every line owner was on the one node
/// ([`PINNING_110`]). Topology: 128 cores × 2 threads (seed 000's `taskset -pc` printed
/// node 1 as `64-127,192-255`). The SMT slowdown 1.05 is derived from seed 000's own
/// figures — 110 threads pinned to node 1 (92 of them sharing a core) ran 2,437,498
/// ops/sec at 65536 slots against 2,535,749 spread over both nodes (none sharing):
/// `(18 + 92/s)/110 = 2437498/2535749`, which ignores that the spread run's migrations
/// cross nodes (a lower bound). No hash costs: they are timed on the machine running the
/// simulation.
///
/// [`PINNING_110`]: super::PINNING_110
pub fn seed_box_template() -> MachineProfile {
    MachineProfile {
        name: "seed thread 256-CPU 2-node box (template)".into(),
        outside_ns: 400.0,
        hold_ns: 100.0,
        handoff_local_ns: 100.0,
        handoff_remote_ns: 100.0 * EPYC_2S64_REMOTE_NS / EPYC_2S64_LOCAL_NS,
        line_miss_ns: EPYC_2S64_LOCAL_NS,
        line_miss_remote_ns: None,
        home_snoop: true,
        threads_per_core: 2,
        smt_slowdown: Some(smt_from_pinning(2_437_498.0 / 2_535_749.0, 18, 92)),
        ticket_spinner_ns: Some(50.0),
        ..MachineProfile::minimal("", 256, 2)
    }
}

/// Published core-to-core latency matrices (one-way latency of a CAS on a line last
/// written by the other core) of 2-socket AMD EPYC servers with 64 cores per socket:
/// (matrix file, mean over the pairs of the line's home socket, mean over the pairs
/// across sockets), ns. Means over the 64 cores of each socket (CPUs 0–63 and 64–127; the
/// SMT siblings 128–255 of the 7742 and 7763 left out: 2016 pairs per socket, 4096
/// across), computed here from the CSVs. The home socket is the one whose pairs are
/// cheaper, the other costing about what a cross-socket pair does: the 7702's socket 0
/// (the other 221.3 ns), the 7742's socket 1 (the other 251.6 ns). The 7763's sockets are
/// alike (110.2 and 116.0 ns), as a test whose line is homed near the cores would show,
/// so both count as home: 113.1 ns over their 4032 pairs.
pub const EPYC_2S64_MATRICES: [(&str, f64, f64); 3] = [
    (
        "KCORES/core-to-core-latency-plus results/Dual AMD EPYC 7702 64-Core Processor by-herver.csv",
        122.5,
        234.1,
    ),
    (
        "nviennot/core-to-core-latency results/Dual AMD EPYC 7742 64-Core Processor.csv",
        123.0,
        264.0,
    ),
    (
        "KCORES/core-to-core-latency-plus results/Dual AMD EPYC 7763 64-Core Processor by-fwyzard.csv",
        113.1,
        302.7,
    ),
];

/// The line-transfer options of the 256-CPU template, `(name, local ns, remote ns)`: each
/// published matrix of [`EPYC_2S64_MATRICES`] alone, then their means (the shipped
/// template's choice). Cross-validation chooses among them again in every fold.
pub const LINE_CHOICES: [(&str, f64, f64); 4] = [
    (
        "EPYC 7702",
        EPYC_2S64_MATRICES[0].1,
        EPYC_2S64_MATRICES[0].2,
    ),
    (
        "EPYC 7742",
        EPYC_2S64_MATRICES[1].1,
        EPYC_2S64_MATRICES[1].2,
    ),
    (
        "EPYC 7763",
        EPYC_2S64_MATRICES[2].1,
        EPYC_2S64_MATRICES[2].2,
    ),
    ("means", EPYC_2S64_LOCAL_NS, EPYC_2S64_REMOTE_NS),
];

/// The mean home-socket migration of [`EPYC_2S64_MATRICES`], ns (119.5).
pub const EPYC_2S64_LOCAL_NS: f64 =
    (EPYC_2S64_MATRICES[0].1 + EPYC_2S64_MATRICES[1].1 + EPYC_2S64_MATRICES[2].1) / 3.0;

/// The mean cross-socket migration of [`EPYC_2S64_MATRICES`], ns (266.9).
pub const EPYC_2S64_REMOTE_NS: f64 =
    (EPYC_2S64_MATRICES[0].2 + EPYC_2S64_MATRICES[1].2 + EPYC_2S64_MATRICES[2].2) / 3.0;

/// The slowdown `s` for which `(alone + shared/s) / (alone + shared) = ratio`.
pub fn smt_from_pinning(ratio: f64, alone: u32, shared: u32) -> f64 {
    let n = f64::from(alone + shared);
    (f64::from(shared) / (ratio * n - f64::from(alone))).max(1.0)
}

/// Seed 003's box: "80 core, 1Tb NUMA system" (Davidlohr Bueso, HP, 2013). Assumed an
/// 8-socket Westmere-EX (10 cores per socket, the largest x86 core count of 2013, and HP's
/// 8-socket DL980 class that held 1 TB) with Hyper-Threading: 160 CPUs, 8 nodes. The SMT
/// slowdown 1.54 is Intel's published figure for Hyper-Threading (up to 30 % more
/// throughput per core: each of two busy siblings runs at 1.3/2 of a lone thread). Hold,
/// migration (50 ns, a typical L2-to-L2 transfer) and the remote/local ratio (4, a
/// generic cross-socket figure) are generic, and there is no home snooping: no
/// core-to-core figures of Westmere-EX were found; the ticket lock's per-spinner term is one local line transfer (each spinner's
/// re-read after a release is served in turn, Boyd-Wickizer et al. 2012). The scheduler's
/// slice is the simulator's default.
pub fn seed003_box_template() -> MachineProfile {
    MachineProfile {
        name: "seed 003 80-core 8-node box (template)".into(),
        outside_ns: 800.0,
        hold_ns: 100.0,
        handoff_local_ns: 200.0,
        handoff_remote_ns: 800.0,
        line_miss_ns: 50.0,
        line_miss_remote_ns: None,
        threads_per_core: 2,
        smt_slowdown: Some(2.0 / 1.3),
        ticket_spinner_ns: Some(50.0),
        ..MachineProfile::minimal("", 160, 8)
    }
}

/// Cross-socket / same-socket latency of reading a line Modified in another core's cache
/// on a 2-socket Ivy Bridge-EP (2 × Xeon E5-2680 v2): 69.1–70.4 ns / 28.3 ns in Intel
/// Memory Latency Checker 3.1a's `--c2c_latency` output published by KU Leuven's VSC
/// (`hpcleuven/VscDocumentation`, `source/leuven/tier2_hardware/ivybridge_mlc.txt`).
/// David, Guerraoui, Trigonakis (SOSP 2013, §8) give "roughly 2.7" for a 2-socket
/// Westmere-EP, which agrees. A published figure, not fitted on any seed table.
pub const IVB_EP_REMOTE_RATIO: f64 = 2.5;

/// Seed 002's box: a 2-node Ivy Bridge-EP. Assumed two 10-core sockets with
/// Hyper-Threading (40 CPUs), the common IVB-EP server of 2013. The costs are the 256-CPU
/// box's fitted ones (`profile`), since no table of seed 002 can calibrate them, except
/// the remote hand-off: the 256-CPU template's ratio (2.23) is other machines', and
/// the ratio of an IVB-EP is published ([`IVB_EP_REMOTE_RATIO`]).
pub fn seed002_box(profile: &MachineProfile) -> MachineProfile {
    MachineProfile {
        name: format!(
            "seed 002 2-node IVB-EP (costs of: {}; remote/local {IVB_EP_REMOTE_RATIO})",
            profile.name
        ),
        cpus: 40,
        nodes: 2,
        threads_per_core: 2,
        smt_slowdown: Some(profile.smt_slowdown.unwrap_or(2.0 / 1.3)),
        handoff_remote_ns: profile.handoff_local_ns * IVB_EP_REMOTE_RATIO,
        // Migrations across nodes at the IVB-EP's ratio too, not the 256-CPU box's figure.
        line_miss_remote_ns: None,
        // Assumed: 2-socket Xeon E5 v2 snoop from the requester (Early Snoop), so whatever
        // the 256-CPU box's coherence, only the two CPUs' nodes matter here.
        home_snoop: false,
        ..profile.clone()
    }
}

/// Intel's Hyper-Threading figure (each of two busy siblings at 1.3/2 of a lone thread):
/// the SMT slowdown of a box without a measurement of its own.
pub const GENERIC_SMT_SLOWDOWN: f64 = 2.0 / 1.3;

/// `template` with the line transfers of `choice` (every transfer, hand-offs included,
/// at its remote/local ratio) and, if given, another SMT slowdown.
pub fn with_line_choice(
    template: &MachineProfile,
    choice: (&str, f64, f64),
    smt: Option<f64>,
) -> MachineProfile {
    let mut t = template.clone();
    t.line_miss_ns = choice.1;
    t.line_miss_remote_ns = None;
    t.handoff_remote_ns = t.handoff_local_ns * choice.2 / choice.1;
    if smt.is_some() {
        t.smt_slowdown = smt;
    }
    t
}

/// A held-out box's own line transfers, from a published core-to-core latency figure of
/// its microarchitecture (docs/sim.md, "A third amendment"): one migration between two
/// cores of a socket and one across sockets, ns, and whether the box snoops at the
/// line's home (AMD EPYC) or not (Intel, as `skl-2s-112.toml`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxTransfers {
    /// Between two cores of one socket, ns.
    pub local_ns: f64,
    /// Across sockets, ns.
    pub remote_ns: f64,
    /// [`MachineProfile::home_snoop`].
    pub home_snoop: bool,
}

impl BoxTransfers {
    /// `p` with these transfers: the migrations as given and each hand-off three of them
    /// (the count seed 000's box fitted, as "Predicting a patch" sets a box's hand-offs;
    /// calibration then fits the local hand-off and keeps their ratio).
    pub fn apply(&self, p: &MachineProfile) -> MachineProfile {
        let mut q = p.clone();
        q.line_miss_ns = self.local_ns;
        q.line_miss_remote_ns = Some(self.remote_ns);
        q.handoff_local_ns = 3.0 * self.local_ns;
        q.handoff_remote_ns = 3.0 * self.remote_ns;
        q.home_snoop = self.home_snoop;
        q
    }
}

/// a734d9fca84e's dual-socket Skylake: the Cascade Lake means of `skl-2s-112.toml`
/// (`nviennot/core-to-core-latency`, commit 96a943a: 2 × Xeon Platinum 8275CL and 2 ×
/// Xeon Gold 6242, means over distinct-core pairs).
pub const SKL_2S_TRANSFERS: BoxTransfers = BoxTransfers {
    local_ns: 47.482,
    remote_ns: 137.686,
    home_snoop: false,
};

/// a734d9fca84e's dual-socket Zen3: the 2 × EPYC 7763 matrix of [`EPYC_2S64_MATRICES`].
pub const ZEN3_2S_TRANSFERS: BoxTransfers = BoxTransfers {
    local_ns: EPYC_2S64_MATRICES[2].1,
    remote_ns: EPYC_2S64_MATRICES[2].2,
    home_snoop: true,
};

/// The 4-socket Xeon E7-8890 v3 (Haswell-EX): a 4-socket 12-core Haswell-EX (most
/// likely an E7-4830 v3) in `LPD-EPFL/mctop`, `desc/lpdquad.mct`, commit 1093cf0: a
/// compare-and-swap on a line another core modified takes 135 cycles within a socket
/// and 338 across (every cross-socket pair alike), at its 2.1 GHz nominal clock.
pub const HSX_4S_TRANSFERS: BoxTransfers = BoxTransfers {
    local_ns: 135.0 / 2.1,
    remote_ns: 338.0 / 2.1,
    home_snoop: false,
};

/// The 2-socket Xeon E5-2650 (Sandy Bridge-EP): the same 8-core die as the 2 × Xeon
/// E5-2690 of `nviennot/core-to-core-latency`, `results/Dual Intel(R) Xeon(R) CPU
/// E5-2690 0 @ 2.90GHz.csv`, commit 47795f2: means over pairs of distinct cores within a
/// socket (CPUs 0–7 and 16–23, 8–15 and 24–31, as the matrix's own figures group them)
/// and across.
pub const SNB_2S_TRANSFERS: BoxTransfers = BoxTransfers {
    local_ns: 33.2,
    remote_ns: 124.7,
    home_snoop: false,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_shipped_template_is_the_built_in_one_with_stated_hash_costs() {
        // data/machines/seed-256cpu-template.toml exists to make `sim validate`
        // reproducible; it must not drift from the template the command uses by default.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines");
        let file = MachineProfile::load(&root.join("seed-256cpu-template.toml")).unwrap();
        let built_in = seed_box_template();
        assert_eq!(
            MachineProfile {
                name: built_in.name.clone(),
                hash_ns: built_in.hash_ns.clone(),
                ..file.clone()
            },
            built_in
        );
        assert_eq!(file.hash_ns.len(), 8, "{:?}", file.hash_ns);
    }

    #[test]
    fn line_choices_set_every_transfer_at_the_matrix_ratio() {
        let t = seed_box_template();
        let (name, local, remote) = LINE_CHOICES[1];
        assert_eq!(name, "EPYC 7742");
        let v = with_line_choice(&t, LINE_CHOICES[1], Some(GENERIC_SMT_SLOWDOWN));
        assert_eq!(v.line_miss_ns, 123.0);
        assert!((v.line_miss_remote() - 264.0).abs() < 1e-9);
        assert!((v.remote_ratio() - remote / local).abs() < 1e-12);
        assert_eq!(v.smt_slowdown, Some(2.0 / 1.3));
        // The means option is the shipped template's own choice.
        let m = with_line_choice(&t, LINE_CHOICES[3], None);
        assert_eq!(m.line_miss_ns, t.line_miss_ns);
        assert!((m.handoff_remote_ns - t.handoff_remote_ns).abs() < 1e-9);
        assert_eq!(m.smt_slowdown, t.smt_slowdown);
    }

    #[test]
    fn a_box_takes_its_published_transfers_and_three_of_them_per_hand_off() {
        // docs/sim.md, "A third amendment": the Haswell-EX figures are 135 and 338 cycles
        // at 2.1 GHz (64.29 and 160.95 ns), the Sandy Bridge-EP means 33.2 and 124.7 ns.
        assert!((HSX_4S_TRANSFERS.local_ns - 64.2857).abs() < 1e-3);
        assert!((HSX_4S_TRANSFERS.remote_ns - 160.9524).abs() < 1e-3);
        let p = SNB_2S_TRANSFERS.apply(&MachineProfile::minimal("p", 32, 2));
        assert_eq!(p.line_miss_ns, 33.2);
        assert_eq!(p.line_miss_remote_ns, Some(124.7));
        assert!((p.handoff_local_ns - 99.6).abs() < 1e-9);
        assert!((p.handoff_remote_ns - 374.1).abs() < 1e-9);
        assert!(!p.home_snoop);
        // The AMD box keeps home snooping; the Intel ones do not.
        let home = |t: &BoxTransfers| t.apply(&p).home_snoop;
        assert!(home(&ZEN3_2S_TRANSFERS) && !home(&SKL_2S_TRANSFERS) && !home(&HSX_4S_TRANSFERS));
        assert_eq!(
            (ZEN3_2S_TRANSFERS.local_ns, ZEN3_2S_TRANSFERS.remote_ns),
            (113.1, 302.7)
        );
    }
}

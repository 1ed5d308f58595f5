//! Question 5: the NUMA split (the 2023 `FUTEX2_NUMA` thread, seed 002).

use super::shared::*;
use super::*;
use crate::render::{TextTable, fmt_grouped};
use crate::report::ReportError;
use crate::report::context::Context;
use serde::Serialize;
use serde_json::json;
use std::fmt::Write as _;

/// The seed's `futex_numa` loop counts (seed 002, a 2-node Ivy Bridge-EP, 10 contenders
/// per node): both nodes forced to node 0's bucket, then separated.
pub const SEED_NUMA_FORCED: [f64; 2] = [16_154_935.0, 16_202_472.0];
/// See [`SEED_NUMA_FORCED`].
pub const SEED_NUMA_SEPARATED: [f64; 2] = [48_584_991.0, 48_680_560.0];

/// Simulated per-node contention: loops per contender per second.
#[derive(Clone, Debug, Serialize)]
pub struct NumaFigure {
    /// Profile name.
    pub profile: String,
    /// Nodes.
    pub nodes: u32,
    /// Contenders per node.
    pub contenders: usize,
    /// Every node hashes to its own bucket.
    pub separated: f64,
    /// Every node forced to node 0's bucket.
    pub forced: f64,
    /// This figure is seed 002's own box, simulated (`sim::validate::seed002_box`): the
    /// one to hold against the seed's measurement.
    pub seed_machine: bool,
}

/// The sentence for question 5.
pub fn numa_sentence(f: &[NumaFigure], tol: f64) -> String {
    let seed = SEED_NUMA_SEPARATED.iter().sum::<f64>() / SEED_NUMA_FORCED.iter().sum::<f64>();
    let Some(top) = f
        .iter()
        .filter(|f| f.nodes > 1 && !f.seed_machine)
        .max_by_key(|f| f.contenders)
        .or_else(|| f.iter().find(|f| f.seed_machine))
    else {
        return format!(
            "No profile has more than one node, so the split cannot be shown; the seed \
             measured separated nodes at {seed:.1}× the forced loop count."
        );
    };
    let ratio = top.separated / top.forced;
    let mut s = format!(
        "On {} with {} contenders per node, per-node buckets ",
        top.profile, top.contenders
    );
    if crate::report::spread::differs(top.separated, top.forced, tol) {
        let _ = write!(
            s,
            "give {ratio:.1}× the loops of forcing every node into node 0's bucket ({} vs {} per contender per second) — the cost of one bucket shared across nodes, not of one table against per-node tables: a single table large enough keeps the two nodes' locks in separate buckets too, and this run sets no such pair side by side",
            fmt_grouped(top.separated, 0),
            fmt_grouped(top.forced, 0)
        );
    } else {
        let _ = write!(
            s,
            "and one forced bucket do not differ beyond the {} out-of-sample error",
            error_pct(tol)
        );
    }
    let verdict = |r: f64| {
        if (r / seed - 1.0).abs() <= tol {
            "matches within its error"
        } else if r > seed {
            "overstates"
        } else {
            "understates"
        }
    };
    match f.iter().find(|f| f.seed_machine) {
        Some(m) if !std::ptr::eq(m, top) => {
            let r = m.separated / m.forced;
            let _ = write!(
                s,
                "; on {} the simulation gives {r:.1}× against the {seed:.1}× the seed measured there, which it {}.",
                m.profile,
                verdict(r)
            );
        }
        Some(_) => {
            let _ = write!(
                s,
                "; the seed measured {seed:.1}× on that machine, which the simulation {}.",
                verdict(ratio)
            );
        }
        None => {
            let _ = write!(
                s,
                "; the seed's 2-node Ivy Bridge-EP (another machine) measured {seed:.1}×."
            );
        }
    }
    s
}

/// Columns of the NUMA table that label a row: one profile has a row per contender
/// count, so a part of a split table (`render_within`) needs both to tell its rows apart.
pub const NUMA_ROW_LABELS: usize = 2;

/// The NUMA table: one row per profile and contender count, the row labels first.
pub fn numa_table(figures: &[NumaFigure]) -> String {
    let mut t = TextTable::new(["profile", "contenders/node", "separated", "forced", "ratio"]);
    for f in figures {
        t.push(vec![
            f.profile.clone(),
            f.contenders.to_string(),
            fmt_grouped(f.separated, 0),
            fmt_grouped(f.forced, 0),
            format!("{:.2}", f.separated / f.forced),
        ]);
    }
    t.render_within(MAX_WIDTH, NUMA_ROW_LABELS)
}

/// Question 5.
pub fn numa(ctx: &Context, figures: &[NumaFigure], trust: &[ProfileTrust]) -> Answer {
    let tol = ctx.sim_error().value;
    // Only the profiles this answer simulated (the multi-node ones) need their caveat.
    let simulated: Vec<ProfileTrust> = trust
        .iter()
        .filter(|t| figures.iter().any(|f| f.profile == t.label))
        .cloned()
        .collect();
    let seed_sep = SEED_NUMA_SEPARATED.iter().sum::<f64>() / 2.0;
    let seed_forced = SEED_NUMA_FORCED.iter().sum::<f64>() / 2.0;
    Answer {
        question: "NUMA split (2023): per-node tables".into(),
        answer: numa_sentence(figures, tol),
        evidence: format!(
            "Simulated `futex_numa -c N -t2` with `FUTEX_SQUASH` (every node one bucket), loops \
             per contender per second:\n\n{}\nThe seed (2-node Ivy Bridge-EP, 10 contenders per \
             node, loop counts per run, not per second): separated {} vs forced {} ({:.2}×).\n",
            code(&numa_table(figures)),
            fmt_grouped(seed_sep, 0),
            fmt_grouped(seed_forced, 0),
            seed_sep / seed_forced
        ),
        commands: numa_commands(ctx, figures),
        caveat: format!(
            "{} Simulated figures carry {}.{}",
            handoff_caveat(ctx),
            ctx.sim_error().provenance(),
            caveats(&simulated, tol)
        ),
        figures: json!({ "simulated": figures, "seed_separated": SEED_NUMA_SEPARATED, "seed_forced": SEED_NUMA_FORCED, "tolerance": tol }),
        files: Vec::new(),
    }
}

/// The caveat's first sentences: the cross-node hand-off cost of every machine the answer
/// simulated, the `--profile` first when it has nodes to split (the machine the answer is
/// for, [`sim_numa`]), with its own remote ÷ local ratio from its figures; then the seed
/// box's and seed 002's, with where the built-in template takes them from.
fn handoff_caveat(ctx: &Context) -> String {
    let user = ctx
        .user_profile
        .as_ref()
        .filter(|p| p.nodes >= 2)
        .map_or(String::new(), |p| {
            format!(
                "{:.2}× the local one on {}, the machine this answer is for (its \
                 handoff_remote_ns ÷ handoff_local_ns, {:.3} ÷ {:.3} ns, as the profile gives \
                 them); ",
                p.remote_ratio(),
                profile_label(p),
                p.handoff_remote_ns,
                p.handoff_local_ns
            )
        });
    format!(
        "Simulated: the cross-node hand-off cost is not fitted to a NUMA measurement (`sim \
         calibrate` fits the local hand-off and keeps a profile's remote ÷ local ratio): \
         {user}{:.2}× {}on {}, {}× on seed 002's Ivy Bridge-EP, which has the seed box's other \
         costs (the built-in template takes the ratio of the mean cache-to-cache latencies of \
         three published 2-socket 64-core AMD EPYC servers for the seed box, whose CPU the seed \
         does not name, and that of Xeon E5-2680 v2 for seed 002's).",
        ctx.seed_box.remote_ratio(),
        if user.is_empty() {
            "the local one "
        } else {
            ""
        },
        profile_label(&ctx.seed_box),
        crate::sim::validate::IVB_EP_REMOTE_RATIO,
    )
}

/// One `sim --workload lock` per row of the table and per column (separated, then
/// `--same-node` for forced): the profile as the user names it (seed 002's box by its
/// built-in profile), the row's contenders, this run's simulated length. `sim` prints
/// loops per node: the table's per-contender figure times the contenders.
fn numa_commands(ctx: &Context, figures: &[NumaFigure]) -> Vec<String> {
    let args: Vec<(String, String)> = ctx
        .profiles()
        .iter()
        .map(|p| profile_label(p))
        .zip(ctx.profile_args())
        .collect();
    let mut out = Vec::new();
    for f in figures {
        let arg = if f.seed_machine {
            "seed002-ivbep"
        } else {
            match args.iter().find(|(label, _)| *label == f.profile) {
                Some((_, a)) => a.as_str(),
                None => continue,
            }
        };
        for same in ["", " --same-node"] {
            out.push(format!(
                "futexhash sim --profile {arg} --workload lock -t {}{same} {}",
                f.contenders,
                ctx.sim_len_args()
            ));
        }
    }
    if let Some(first) = out.first_mut() {
        first.push_str("   # loops/sec per node = the table's figure × contenders");
    }
    out
}

/// Simulated `futex_numa` contention on every multi-node profile.
pub fn sim_numa(ctx: &Context, contenders: &[usize]) -> Result<Vec<NumaFigure>, ReportError> {
    use crate::sim::sweep::run_lock_test;
    let mut out = Vec::new();
    for p in ctx.profiles() {
        if p.nodes < 2 {
            continue;
        }
        for &c in contenders {
            let sep = run_lock_test(p, c, false, ctx.sim_len)?;
            let forced = run_lock_test(p, c, true, ctx.sim_len)?;
            out.push(NumaFigure {
                profile: profile_label(p),
                nodes: p.nodes,
                contenders: c,
                separated: sep.ops_per_sec,
                forced: forced.ops_per_sec,
                seed_machine: false,
            });
        }
    }
    // The seed's own machine, with the contender count it measured.
    let ivb = crate::sim::validate::seed002_box(&ctx.seed_box);
    let sep = run_lock_test(&ivb, 10, false, ctx.sim_len)?;
    let forced = run_lock_test(&ivb, 10, true, ctx.sim_len)?;
    out.push(NumaFigure {
        profile: format!(
            "seed 002's IVB-EP ({} CPUs, {} node(s))",
            ivb.cpus, ivb.nodes
        ),
        nodes: ivb.nodes,
        contenders: 10,
        separated: sep.ops_per_sec,
        forced: forced.ops_per_sec,
        seed_machine: true,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_of_a_split_numa_table_names_profile_and_contenders() {
        // One profile at 2 and 10 contenders, with the report's longest kind of label: the
        // table is wider than 100 columns and is split.
        let label = "seed thread 256-CPU 2-node box (256 CPUs, 2 node(s))";
        let f = |contenders: usize, separated: f64| NumaFigure {
            profile: label.into(),
            nodes: 2,
            contenders,
            separated,
            forced: 1_000_000.0,
            seed_machine: false,
        };
        let out = numa_table(&[f(2, 8_000_000.0), f(10, 3_500_000.0)]);
        let parts: Vec<&str> = out.split("\n\n").collect();
        assert!(parts.len() >= 2, "not split:\n{out}");
        for part in &parts {
            assert!(part.contains("contenders/node"), "{part}");
        }
        // The ratios 8.00 and 3.50 (hand-computed) sit in rows that say their count.
        let row = |ratio: &str| {
            out.lines()
                .find(|l| l.contains(ratio))
                .unwrap_or_else(|| panic!("no {ratio} in\n{out}"))
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
        };
        assert_eq!(row("8.00")[2], "2", "{out}");
        assert_eq!(row("3.50")[2], "10", "{out}");
    }

    #[test]
    fn the_hand_off_caveat_quotes_the_profile_the_answer_is_for() {
        use crate::report::answers::test_support::context;
        let mut seed = crate::sim::validate::seed_box_template();
        seed.name = "seed thread 256-CPU 2-node box".into();
        // data/machines/skl-2s-112.toml's hand-offs: 413.058 / 142.446 = 2.8998 → 2.90×.
        let mut skl = seed.clone();
        skl.name = "profile skl-2s-112: skl-2s-112: 2 x 28-core Skylake-SP".into();
        skl.cpus = 112;
        skl.nodes = 2;
        skl.handoff_local_ns = 142.446;
        skl.handoff_remote_ns = 413.058;
        let c = numa(&context(seed.clone(), Some(skl.clone())), &[], &[]).caveat;
        assert!(
            c.contains(
                "2.90× the local one on profile skl-2s-112 (112 CPUs, 2 node(s)), the machine \
                 this answer is for (its handoff_remote_ns ÷ handoff_local_ns, 413.058 ÷ \
                 142.446 ns"
            ),
            "{c}"
        );
        // The seed box's ratio is still quoted, after the profile's.
        let seed_at = c.find("on seed thread 256-CPU 2-node box").expect(&c);
        assert!(c.find("2.90×").unwrap() < seed_at, "{c}");
        // A one-node profile has nothing to split: the answer is the seed box's.
        skl.nodes = 1;
        let c = numa(&context(seed.clone(), Some(skl)), &[], &[]).caveat;
        assert!(!c.contains("skl-2s-112") && !c.contains("2.90"), "{c}");
        assert!(
            c.contains(&format!(
                "{:.2}× the local one on seed thread",
                seed.remote_ratio()
            )),
            "{c}"
        );
    }

    #[test]
    fn numa_sentence_compares_with_the_seed() {
        let seed = SEED_NUMA_SEPARATED.iter().sum::<f64>() / SEED_NUMA_FORCED.iter().sum::<f64>();
        let f = |sep: f64, forced: f64| NumaFigure {
            profile: "box".into(),
            nodes: 2,
            contenders: 10,
            separated: sep,
            forced,
            seed_machine: true,
        };
        let s = numa_sentence(&[f(3.0 * seed, 1.0)], 0.1);
        assert!(
            s.contains(&format!("give {:.1}× the loops", 3.0 * seed)),
            "{s}"
        );
        assert!(s.contains("overstates"), "{s}");
        let s = numa_sentence(&[f(seed, 1.0)], 0.1);
        assert!(s.contains("matches within its error"), "{s}");
        let s = numa_sentence(&[f(1.05, 1.0)], 0.1);
        assert!(
            s.contains("do not differ beyond the 10.0 % out-of-sample error"),
            "{s}"
        );
        assert!(s.contains("understates"), "{s}");
        assert!(numa_sentence(&[], 0.1).starts_with("No profile has more than one node"));
        // Another machine's split is stated, and the seed's machine is the comparison.
        let other = NumaFigure {
            profile: "the big box".into(),
            seed_machine: false,
            ..f(5.0, 1.0)
        };
        let ivb = NumaFigure {
            profile: "the IVB-EP".into(),
            ..f(0.98 * seed, 1.0)
        };
        let s = numa_sentence(&[other.clone(), ivb], 0.1);
        assert!(
            s.starts_with("On the big box with 10 contenders per node, per-node buckets give 5.0×"),
            "{s}"
        );
        assert!(
            s.contains(&format!(
                "on the IVB-EP the simulation gives {:.1}× against the {seed:.1}×",
                0.98 * seed
            )),
            "{s}"
        );
        assert!(s.contains("which it matches within its error."), "{s}");
        let s = numa_sentence(&[other], 0.1);
        assert!(s.contains("(another machine) measured"), "{s}");
        assert!(
            !s.contains("overstates") && !s.contains("understates"),
            "{s}"
        );
    }
}

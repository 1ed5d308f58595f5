//! Question 1: the private hash's sane default and upper limit (seed 000, RFC v2), from
//! simulated slot curves on the 256-CPU box and the user's profile.

use super::shared::*;
use super::*;
use crate::render::plot::{Band, Line, Plot};
use crate::render::{TextTable, fmt_grouped};
use crate::report::ReportError;
use crate::report::context::Context;
use crate::sim::profile::MachineProfile;
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// The sentence for one profile's largest thread count. For a profile no futex measurement
/// calibrated (`v`, [`Validity`]) it says the figures are predictions no error figure
/// applies to, uses the calibrated boxes' error only as the plateau's threshold, never
/// says "matches within ±X", and where the profile's box has a published cell for a
/// policy's size, holds the prediction against it.
pub fn default_and_limit_sentence(c: &SlotCurve, cpus: u32, tol: f64, v: Validity) -> String {
    let (merged, rfc) = policy_slots(c.threads, cpus);
    let mut s = format!("On {} at {} threads, ", c.profile, c.threads);
    if !v.validated() {
        s = format!(
            "On {} at {} threads (predicted, and unvalidated: no futex measurement calibrated \
             this profile, so no error figure applies), ",
            c.profile, c.threads
        );
    }
    match c.smallest_within(NEAR_GLOBAL) {
        Some(n) => {
            let _ = write!(
                s,
                "{n} slots is the smallest private hash within {} of the global hash ({} ops/s per thread)",
                pct(NEAR_GLOBAL),
                fmt_grouped(c.global.ops, 0)
            );
        }
        None => {
            let largest = c.private.last().map_or(0, |p| p.slots);
            let _ = write!(
                s,
                "no private hash up to {largest} slots comes within {} of the global hash ({} ops/s per thread)",
                pct(NEAR_GLOBAL),
                fmt_grouped(c.global.ops, 0)
            );
        }
    }
    if let Some(p) = c.plateau(tol) {
        if v.validated() {
            let _ = write!(
                s,
                ", and above {p} slots throughput rises by no more than the {} out-of-sample error",
                error_pct(tol)
            );
        } else {
            let _ = write!(
                s,
                ", and above {p} slots the predicted throughput rises by no more than {} (the \
                 calibrated boxes' error, used here only as a threshold)",
                error_pct(tol)
            );
        }
        // The upper limit is never below the default (the `private_max_slots` decision).
        if let Some(n) = c.smallest_within(NEAR_GLOBAL).filter(|&n| n > p) {
            let _ = write!(
                s,
                "; {p} is below the {n}-slot default, and an upper limit cannot be below the \
                 default, so the upper limit is {n}"
            );
        }
    }
    for (name, slots) in [
        ("the merged auto policy", merged),
        ("the RFC v2 default", rfc),
    ] {
        if let Some(pt) = c.at(slots) {
            let share = pt.ops / c.global.ops;
            if v.validated() {
                let _ = write!(
                    s,
                    "; {name} ({slots} slots) {}",
                    relative(pt.ops, c.global.ops, tol, "the global hash")
                );
            } else {
                let _ = write!(
                    s,
                    "; {name} ({slots} slots) is predicted at {} of the global hash",
                    pct(share)
                );
                if let Some(exam) = v.exam_clause(c.threads, slots, share, tol) {
                    let _ = write!(s, " ({exam})");
                }
            }
        }
    }
    s.push('.');
    s
}

/// The title (and so the alt text) of `answer-slots-K.svg`: the profile by its
/// [`profile_label`], so the seed box's plot and a `--profile` of as many CPUs differ.
pub fn slots_plot_title(profile: &MachineProfile) -> String {
    format!(
        "private hash vs global (simulated): {}",
        profile_label(profile)
    )
}

/// Question 1 from the simulated curves (one list per profile, ascending thread counts).
pub fn default_and_limit(
    ctx: &Context,
    curves: &[(MachineProfile, Vec<SlotCurve>)],
    trust: &[ProfileTrust],
    dir: &Path,
) -> Result<Answer, ReportError> {
    let tol = ctx.sim_error().value;
    let mut a = Answer {
        question: "Private hash: a sane default and upper limit".into(),
        ..Answer::default()
    };
    let mut sentences = Vec::new();
    let mut figures = Vec::new();
    for (k, (profile, list)) in curves.iter().enumerate() {
        let Some(top) = list.last() else { continue };
        let validity = Validity::of(trust, &top.profile);
        sentences.push(default_and_limit_sentence(top, profile.cpus, tol, validity));
        let mut t = TextTable::new([
            "threads",
            "global ops/s",
            "p99 ns",
            "≤5% slots",
            "plateau",
            "auto",
            "auto ops/s",
            "p99 ns",
            "RFC v2",
            "RFC ops/s",
            "p99 ns",
        ]);
        // The points whose p99 the table prints, for the line under it.
        let mut printed = Vec::new();
        for c in list {
            let (merged, rfc) = policy_slots(c.threads, profile.cpus);
            printed.push(c.global);
            printed.extend([merged, rfc].iter().filter_map(|&s| c.at(s)));
            let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
            let ops = |s: u64| c.at(s).map_or("-".into(), |p| fmt_grouped(p.ops, 0));
            let p99 = |s: u64| c.at(s).map_or("-".into(), |p| fmt_grouped(p.p99_ns, 0));
            t.push(vec![
                c.threads.to_string(),
                fmt_grouped(c.global.ops, 0),
                fmt_grouped(c.global.p99_ns, 0),
                opt(c.smallest_within(NEAR_GLOBAL)),
                opt(c.plateau(tol)),
                merged.to_string(),
                ops(merged),
                p99(merged),
                rfc.to_string(),
                ops(rfc),
                p99(rfc),
            ]);
            figures.push(json!({
                "profile": profile.name, "cpus": profile.cpus, "threads": c.threads,
                "global": c.global, "private": c.private,
                "smallest_within_5pct": c.smallest_within(NEAR_GLOBAL),
                "plateau": c.plateau(tol), "merged_auto_slots": merged, "rfc_v2_slots": rfc,
            }));
        }
        let _ = write!(
            a.evidence,
            "Simulated `perf bench futex hash` (jhash2, 1024 futexes per thread), mean ops/s \
             per thread; {} ({} CPUs, {} node(s)).\n\n{}",
            profile.name,
            profile.cpus,
            profile.nodes,
            code(&t.render_within(MAX_WIDTH, 1))
        );
        if let Some(note) = p99_note(&printed) {
            let _ = write!(a.evidence, "\n{note}\n");
        }
        let file = format!("answer-slots-{k}.svg");
        let mut lines: Vec<Line> = list
            .iter()
            .map(|c| {
                Line::new(
                    format!("{} threads", c.threads),
                    c.private
                        .iter()
                        .map(|p| (p.slots as f64, p.ops / c.global.ops))
                        .collect(),
                )
            })
            .collect();
        // The box's published cell, where the text holds the prediction against it.
        if let Validity::Unvalidated(Some(e)) = validity {
            let mut m = Line::new(
                format!("published, {} threads", e.threads),
                vec![(e.slots as f64, e.measured())],
            );
            m.markers_only = true;
            lines.push(m);
        }
        let plot = Plot {
            title: slots_plot_title(profile),
            x_label: "private hash slots".into(),
            y_label: "ops/sec ÷ global hash".into(),
            log2_x: true,
            lines,
            // The error band only where the error applies: a profile no futex
            // measurement calibrated has none.
            band: validity.validated().then(|| Band {
                name: format!("global ± {}", error_pct(tol)),
                points: list
                    .first()
                    .map(|c| {
                        c.private
                            .iter()
                            .map(|p| (p.slots as f64, 1.0 - tol, 1.0 + tol))
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            reference: Some((1.0, "global hash".into())),
            // A ratio of rates: log, so the axis does not change with the span.
            y_scale: crate::render::plot::YScale::Log,
            ..Plot::default()
        };
        write_plot(dir, &file, &plot, &mut a)?;
        // The sizes of sim_slot_curves: the global hash and 2 to the largest power of two
        // simulated (the policies' sizes lie among them).
        let largest = list
            .iter()
            .flat_map(|c| c.private.iter().map(|p| p.slots))
            .max()
            .unwrap_or(2);
        a.commands.push(format!(
            "futexhash sim --profile {} -t {} -b 0,2..{largest} {}",
            ctx.profile_args().get(k).map_or("PROFILE", String::as_str),
            list.iter()
                .map(|c| c.threads.to_string())
                .collect::<Vec<_>>()
                .join(","),
            ctx.sim_len_args()
        ));
    }
    a.answer = sentences.join(" ");
    a.caveat = format!(
        "Simulated figures, with {}: sizes whose throughput differs by less than that are \
         not told apart. Tail latency is the simulator's, which models lock hand-offs but \
         no preemption.{}",
        ctx.sim_error().provenance(),
        caveats(trust, tol)
    );
    a.figures = json!({ "tolerance": tol, "sim_error": ctx.sim_error(), "curves": figures });
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{context, curve, two_256_cpu_profiles};
    use super::*;

    /// Defect: the table printed simulated p99s with no word that they are quantised. A
    /// line under it now gives the step (simulated records keep latencies as whole
    /// nanoseconds, `BenchRecord::latency_ns_p99: u64`: 1 ns) and how many of its points
    /// have p50 = p99. Here 240 threads on 256 CPUs print the global hash, the merged
    /// kernel's 1024 slots and RFC v2's 4 slots: 3 points, the global one with p50 = p99.
    #[test]
    fn the_table_s_simulated_p99s_carry_their_quantisation_step() {
        let (seed, _) = two_256_cpu_profiles();
        let ctx = context(seed.clone(), None);
        let pts: Vec<(u64, f64)> = (1..=12).map(|k| (1u64 << k, 90.0)).collect();
        let mut c = curve(100.0, &pts);
        c.global.p50_ns = c.global.p99_ns;
        let dir = std::env::temp_dir().join(format!("futexhash-p99note-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = default_and_limit(&ctx, &[(seed, vec![c])], &[], &dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let note = "Simulated p99s are quantised: each latency percentile is rounded to a step \
                    of 1 ns (`sim::sweep::LATENCY_STEP_NS`); in 1 of the 3 points with a p99 \
                    here the p50 equals the p99 (the simulated latency takes one value there), \
                    so that p99 is no tail.";
        // Right under the table's code block.
        assert!(
            a.evidence.contains(&format!("```\n\n{note}\n")),
            "{}",
            a.evidence
        );
        assert_eq!(
            a.evidence.matches("Simulated p99s are quantised").count(),
            1
        );
        // Two of the points, and none (the test curve's p50s are half their p99s).
        let plain = curve(100.0, &pts);
        let mut q = plain.clone();
        q.global.p50_ns = q.global.p99_ns;
        q.private[1].p50_ns = q.private[1].p99_ns;
        let two = p99_note(&[q.global, q.private[1], q.private[9]]).unwrap();
        assert!(
            two.ends_with(
                "in 2 of the 3 points with a p99 here the p50 equals the p99 (the simulated \
                 latency takes one value there), so those p99s are no tail."
            ),
            "{two}"
        );
        let none = p99_note(&[plain.global, plain.private[1]]).unwrap();
        assert!(
            none.ends_with("in none of the 2 points with a p99 here does the p50 equal the p99."),
            "{none}"
        );
        assert_eq!(p99_note(&[]), None);
    }

    #[test]
    fn each_profile_s_plot_is_titled_by_its_own_label() {
        // Both plots were "private hash vs global, 256 CPUs (simulated)", title and alt
        // text alike.
        let (seed, user) = two_256_cpu_profiles();
        let ctx = context(seed.clone(), Some(user.clone()));
        let pts: Vec<(u64, f64)> = (1..=12).map(|k| (1u64 << k, 90.0)).collect();
        let curves = vec![
            (seed, vec![curve(100.0, &pts)]),
            (user, vec![curve(100.0, &pts)]),
        ];
        let dir = std::env::temp_dir().join(format!("futexhash-slots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = default_and_limit(&ctx, &curves, &[], &dir).unwrap();
        let titles = [
            "private hash vs global (simulated): seed thread 256-CPU 2-node box (256 CPUs, 2 node(s))",
            "private hash vs global (simulated): profile /tmp/good.toml (256 CPUs, 2 node(s))",
        ];
        for (k, title) in titles.iter().enumerate() {
            // The alt text of the Markdown reference, and the SVG's own title.
            assert!(
                a.evidence
                    .contains(&format!("![{title}](answer-slots-{k}.svg)")),
                "{}",
                a.evidence
            );
            let svg = std::fs::read_to_string(dir.join(format!("answer-slots-{k}.svg"))).unwrap();
            assert!(
                svg.contains(&format!("\n{title}\n")),
                "answer-slots-{k}.svg"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn smallest_size_within_five_percent_and_the_plateau() {
        let c = curve(
            100.0,
            &[
                (2, 10.0),
                (16, 90.0),
                (256, 95.0),
                (1024, 96.0),
                (4096, 99.0),
            ],
        );
        // 95 ≥ 100 × 0.95 first at 256; 94.9 would not be.
        assert_eq!(c.smallest_within(0.05), Some(256));
        let c2 = curve(100.0, &[(2, 10.0), (256, 94.9)]);
        assert_eq!(c2.smallest_within(0.05), None);
        // With ±5 %: 90 → 99 is +10 % (not a plateau), 95 → 99 is +4.2 % (plateau at 256).
        assert_eq!(c.plateau(0.05), Some(256));
        assert_eq!(c.plateau(0.15), Some(16));
        assert_eq!(c.plateau(0.0), Some(4096));
    }

    #[test]
    fn default_sentence_states_only_what_the_curve_shows() {
        let mut pts: Vec<(u64, f64)> = (1..=12).map(|k| (1u64 << k, 100.0)).collect();
        pts[0].1 = 5.0; // 2 slots
        pts[1].1 = 10.0; // 4 slots: the RFC v2 default
        let c = curve(100.0, &pts);
        let s = default_and_limit_sentence(&c, 256, 0.08, Validity::Validated);
        assert!(
            s.contains("8 slots is the smallest private hash within 5 %"),
            "{s}"
        );
        assert!(
            s.contains("the merged auto policy (1024 slots) matches the global hash within ±8.0 %"),
            "{s}"
        );
        assert!(
            s.contains("the RFC v2 default (4 slots) reaches 10 % of the global hash"),
            "{s}"
        );
        assert!(!s.contains("cannot be below"), "{s}");
        // The plateau (1024: 98.5 ≤ 94 × 1.165) before the default (2048: 98 ≥ 95).
        let late = curve(
            100.0,
            &[(512, 80.0), (1024, 94.0), (2048, 98.0), (4096, 98.5)],
        );
        let s = default_and_limit_sentence(&late, 256, 0.165, Validity::Validated);
        assert!(
            s.contains("above 1024 slots throughput rises by no more")
                && s.contains(
                    "; 1024 is below the 2048-slot default, and an upper limit cannot be below \
                     the default, so the upper limit is 2048;"
                ),
            "{s}"
        );
        // Nothing reaches the global hash: say so, name the largest size tried.
        let low = curve(100.0, &[(2, 5.0), (4, 50.0)]);
        let s = default_and_limit_sentence(&low, 256, 0.08, Validity::Validated);
        assert!(
            s.contains("no private hash up to 4 slots comes within 5 %"),
            "{s}"
        );
        assert!(!s.contains("smallest"), "{s}");
    }
}

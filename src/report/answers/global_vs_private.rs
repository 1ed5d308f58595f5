//! Question 2: global or private hash — simulated throughput and latency of both, and the
//! noisy neighbour measured on this machine with the model table (seed 000).

use super::shared::*;
use super::*;
use crate::render::{TextTable, fmt_grouped};
use crate::report::ReportError;
use crate::report::context::Context;
use crate::report::spread::Spread;
use crate::sim::profile::MachineProfile;
use crate::throughput::TableKind;
use serde::Serialize;
use serde_json::json;
use std::fmt::Write as _;

/// Runs each table needs before a p99 difference is claimed: with 3 runs each, every run
/// of one above every run of the other happens by chance 2 times in C(6, 3) = 20.
pub const MIN_P99_RUNS: usize = 3;

/// The noisy-neighbour measurement: the victim's figures with the global and with a
/// private hash (runs repeated).
#[derive(Clone, Debug, Serialize)]
pub struct NoisyFigures {
    /// Victim ops/sec per thread, global hash.
    pub global_ops: Spread,
    /// Victim p99 ns, global hash.
    pub global_p99: Spread,
    /// Victim ops/sec, private hash.
    pub private_ops: Spread,
    /// Victim p99 ns, private hash.
    pub private_p99: Spread,
    /// Victim buckets the noisy process also uses, global hash (model backend).
    pub shared_global: Option<u64>,
    /// The same with a private hash.
    pub shared_private: Option<u64>,
    /// The victim's distinct buckets.
    pub victim_buckets: Option<u64>,
}

/// The sentence: throughput from the simulated curve's global and auto points, isolation
/// from the measured noisy neighbour.
pub fn global_vs_private_sentence(
    c: &SlotCurve,
    cpus: u32,
    tol: f64,
    n: &NoisyFigures,
    machine: &str,
    v: Validity,
) -> String {
    let (merged, _) = policy_slots(c.threads, cpus);
    let mut s = String::new();
    if let Some(auto) = c.at(merged) {
        let share = auto.ops / c.global.ops;
        if !v.validated() {
            // No error figure applies: the prediction, said as one, and the box's
            // published cell where there is one.
            let _ = write!(
                s,
                "On {} at {} threads the model puts the {merged}-slot auto-sized private hash at {} of the global hash ({} vs {} ops/s per thread), a prediction no futex measurement of this profile validates (no error figure applies)",
                c.profile,
                c.threads,
                pct(share),
                fmt_grouped(auto.ops, 0),
                fmt_grouped(c.global.ops, 0)
            );
            // Joined with ", and": a second profile's sentence is kept up to its first
            // "; " (global_vs_private), and the published cell must stay with it.
            if let Some(exam) = v.exam_clause(c.threads, merged, share, tol) {
                let _ = write!(s, ", and {exam}");
            }
        } else if crate::report::spread::differs(c.global.ops, auto.ops, tol)
            && c.global.ops > auto.ops
        {
            let _ = write!(
                s,
                "On {} at {} threads the global hash gives the most throughput ({} vs {} ops/s per thread with the {merged}-slot auto-sized private hash)",
                c.profile,
                c.threads,
                fmt_grouped(c.global.ops, 0),
                fmt_grouped(auto.ops, 0)
            );
        } else if crate::report::spread::differs(auto.ops, c.global.ops, tol) {
            let _ = write!(
                s,
                "On {} at {} threads the {merged}-slot auto-sized private hash gives more throughput than the global hash ({} vs {} ops/s per thread)",
                c.profile,
                c.threads,
                fmt_grouped(auto.ops, 0),
                fmt_grouped(c.global.ops, 0)
            );
        } else {
            let _ = write!(
                s,
                "On {} at {} threads the {merged}-slot auto-sized private hash costs no throughput against the global hash within ±{} ({} vs {} ops/s per thread)",
                c.profile,
                c.threads,
                error_pct(tol),
                fmt_grouped(auto.ops, 0),
                fmt_grouped(c.global.ops, 0)
            );
        }
        if c.global.quantised() || auto.quantised() {
            s.push_str(
                "; the simulated p99 latencies are not compared: the simulated latency is \
                 quantised there (its p50 equals its p99), so a p99 is no tail",
            );
        } else {
            let _ = write!(
                s,
                "; p99 latency {} ns global vs {} ns private",
                fmt_grouped(c.global.p99_ns, 0),
                fmt_grouped(auto.p99_ns, 0)
            );
        }
    }
    s.push_str("; ");
    let noise = n
        .global_p99
        .rel_half_range()
        .max(n.private_p99.rel_half_range());
    match (n.shared_global, n.victim_buckets) {
        (Some(sh), Some(v)) if sh > 0 => {
            let _ = write!(
                s,
                "on {machine} a noisy neighbour shares {sh} of the victim's {v} buckets under the global hash"
            );
        }
        (Some(_), Some(v)) => {
            let _ = write!(
                s,
                "on {machine} the noisy neighbour shares none of the victim's {v} buckets even under the global hash"
            );
        }
        _ => {
            let _ = write!(s, "on {machine}, with a noisy neighbour");
        }
    }
    let (g, p) = (n.global_p99.median, n.private_p99.median);
    let runs = n.global_p99.runs.min(n.private_p99.runs);
    if runs < MIN_P99_RUNS {
        let _ = write!(
            s,
            "; the victim's p99 ({} vs {} ns) is not compared: not enough runs ({runs}, a \
             difference is claimed from {MIN_P99_RUNS} each)",
            fmt_grouped(g, 0),
            fmt_grouped(p, 0)
        );
    } else if n.global_p99.min > n.private_p99.max {
        let _ = write!(
            s,
            ", and a private hash lowers the victim's p99 from {} to {} ns (every one of {runs} runs)",
            fmt_grouped(g, 0),
            fmt_grouped(p, 0)
        );
    } else if n.private_p99.min > n.global_p99.max {
        let _ = write!(
            s,
            ", yet the victim's p99 is higher with a private hash ({} vs {} ns, every one of {runs} runs)",
            fmt_grouped(p, 0),
            fmt_grouped(g, 0)
        );
    } else {
        let _ = write!(
            s,
            ", and the victim's p99 ({} vs {} ns) is not told apart: the runs' ranges overlap \
             (±{} run-to-run)",
            fmt_grouped(g, 0),
            fmt_grouped(p, 0),
            pct(noise)
        );
    }
    s.push('.');
    s
}

/// Question 2.
pub fn global_vs_private(
    ctx: &Context,
    curves: &[(MachineProfile, Vec<SlotCurve>)],
    trust: &[ProfileTrust],
    noisy: &NoisyFigures,
) -> Answer {
    let tol = ctx.sim_error().value;
    let machine = format!("this machine ({} CPUs)", ctx.machine.cpus_allowed);
    let mut a = Answer {
        question: "Global or private hash: throughput and latency".into(),
        ..Answer::default()
    };
    let mut sentences = Vec::new();
    let mut t = TextTable::new(["profile", "threads", "table", "slots", "ops/s", "p99 ns"]);
    // The points whose simulated p99 the table prints, for the line under it.
    let mut printed = Vec::new();
    let args = ctx.profile_args();
    for (k, (profile, list)) in curves.iter().enumerate() {
        let Some(top) = list.last() else { continue };
        // The two points the sentence compares: the global hash and the automatic size.
        a.commands.push(format!(
            "futexhash sim --profile {} -t {} -b 0,{} {}",
            args.get(k).map_or("PROFILE", String::as_str),
            top.threads,
            policy_slots(top.threads, profile.cpus).0,
            ctx.sim_len_args()
        ));
        sentences.push(global_vs_private_sentence(
            top,
            profile.cpus,
            tol,
            noisy,
            &machine,
            Validity::of(trust, &top.profile),
        ));
        let (merged, _) = policy_slots(top.threads, profile.cpus);
        for (name, slots) in [("global", 0), ("auto private", merged)] {
            if let Some(p) = top.at(slots) {
                printed.push(p);
                t.push(vec![
                    profile_short_label(profile),
                    top.threads.to_string(),
                    name.into(),
                    if slots == 0 {
                        crate::sim::calibrate::global_hash_size(profile.cpus).to_string()
                    } else {
                        slots.to_string()
                    },
                    fmt_grouped(p.ops, 0),
                    fmt_grouped(p.p99_ns, 0),
                ]);
            }
        }
    }
    // Both curves' sentences share the noisy clause; keep it once.
    a.answer = sentences.first().cloned().unwrap_or_default();
    for s in sentences.iter().skip(1) {
        if let Some((head, _)) = s.split_once("; ") {
            let _ = write!(a.answer, " {head}.");
        }
    }
    let mut nt = TextTable::new(["victim", "ops/s", "p99 ns", "shared buckets"]);
    let opt = |v: Option<u64>| v.map_or("-".into(), |v| v.to_string());
    nt.push(vec![
        "global hash".into(),
        noisy.global_ops.fmt_grouped(),
        noisy.global_p99.fmt_grouped(),
        opt(noisy.shared_global),
    ]);
    nt.push(vec![
        "private hash".into(),
        noisy.private_ops.fmt_grouped(),
        noisy.private_p99.fmt_grouped(),
        opt(noisy.shared_private),
    ]);
    let _ = write!(
        a.evidence,
        "Simulated, mean per-thread ops/s and p99 of one operation:\n\n{}\n{}Measured on \
         {machine} with the model table (jhash2): one victim thread next to one noisy thread \
         on many futexes; median ± half-range of {} runs.\n\n{}",
        code(&t.render_within(MAX_WIDTH, 1)),
        p99_note(&printed).map_or(String::new(), |n| format!("{n}\n\n")),
        noisy.global_ops.runs,
        code(&nt.render_within(MAX_WIDTH, 1))
    );
    // The measurement's own settings (measure_noisy), so the command reproduces it.
    a.commands.push(format!(
        "futexhash bench --workload noisy --backend model -t 1 -f 1024 \
         --victim-threads 1 --victim-futexes 1024 -r {}",
        noisy_runtime(ctx).as_secs_f64()
    ));
    a.caveat = format!(
        "The throughput figures are simulated ({}); the noisy neighbour is measured on \
         {machine}, where it and the victim each have a CPU of their own only if there are \
         at least two, and a p99 difference is claimed only when every run of one table is \
         above every run of the other, with at least {MIN_P99_RUNS} runs each (by chance, \
         with 3 runs each, 1 time in 10).{}",
        ctx.sim_error().provenance(),
        caveats(trust, tol)
    );
    a.figures = json!({ "tolerance": tol, "sim_error": ctx.sim_error(), "noisy": noisy });
    a
}

/// How long each noisy-neighbour run lasts (shorter with `--quick`).
fn noisy_runtime(ctx: &Context) -> std::time::Duration {
    std::time::Duration::from_millis(if ctx.depth == crate::report::context::Depth::Quick {
        150
    } else {
        500
    })
}

/// The noisy neighbour on the model table, `runs` times.
pub fn measure_noisy(ctx: &Context, runs: usize) -> Result<NoisyFigures, ReportError> {
    use crate::bench::contend::run_noisy;
    use crate::bench::options::ContendSpec;
    use crate::bench::sweep::{BackendChoice, ModelOptions};
    let runtime = noisy_runtime(ctx);
    let spec = ContendSpec {
        backends: vec![BackendChoice::Model],
        model: ModelOptions::default(),
        threads: 1,
        buckets: None,
        futexes: 1024,
        runtime,
        holders: 1,
        groups: 1,
        victim_threads: 1,
        victim_futexes: 1024,
        exe: None,
    };
    let mut by_table: [Vec<crate::throughput::record::BenchRecord>; 2] = [Vec::new(), Vec::new()];
    for _ in 0..runs {
        let res = run_noisy(&spec)?;
        for r in res.records {
            let i = usize::from(r.table != TableKind::Global);
            by_table[i].push(r);
        }
    }
    let ops = |v: &[crate::throughput::record::BenchRecord]| {
        Spread::of(&v.iter().map(|r| r.ops_per_sec).collect::<Vec<_>>())
            .unwrap_or(Spread::single(f64::NAN))
    };
    let p99 = |v: &[crate::throughput::record::BenchRecord]| {
        Spread::of(
            &v.iter()
                .map(|r| r.victim_latency_ns_p99.unwrap_or(r.latency_ns_p99) as f64)
                .collect::<Vec<_>>(),
        )
        .unwrap_or(Spread::single(f64::NAN))
    };
    let first = |i: usize| by_table[i].first();
    Ok(NoisyFigures {
        global_ops: ops(&by_table[0]),
        global_p99: p99(&by_table[0]),
        private_ops: ops(&by_table[1]),
        private_p99: p99(&by_table[1]),
        shared_global: first(0).and_then(|r| r.shared_buckets),
        shared_private: first(1).and_then(|r| r.shared_buckets),
        victim_buckets: first(0).and_then(|r| r.victim_buckets),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{context, curve, two_256_cpu_profiles};
    use super::*;

    #[test]
    fn the_simulated_table_tells_the_two_profiles_apart() {
        // Its profile column read "256 CPUs" on all four rows.
        let (seed, user) = two_256_cpu_profiles();
        let ctx = context(seed.clone(), Some(user.clone()));
        let mut pts: Vec<(u64, f64)> = (1..=12).map(|k| (1u64 << k, 90.0)).collect();
        pts[9].1 = 95.0; // 1024 slots: the auto size at 240 threads on 256 CPUs
        let curves = vec![
            (seed, vec![curve(100.0, &pts)]),
            (user, vec![curve(100.0, &pts)]),
        ];
        let n = noisy([900.0, 1000.0, 1100.0], [400.0, 500.0, 600.0], 600);
        let a = global_vs_private(&ctx, &curves, &[], &n);
        let rows: Vec<&str> = a
            .evidence
            .lines()
            .filter(|l| l.contains(" |     240 | "))
            .collect();
        let profile = |l: &str| l.split('|').nth(1).unwrap().trim().to_string();
        let got: Vec<String> = rows.iter().map(|l| profile(l)).collect();
        assert_eq!(
            got,
            [
                "seed thread 256-CPU 2-node box (256 CPUs)",
                "seed thread 256-CPU 2-node box (256 CPUs)",
                "profile /tmp/good.toml (256 CPUs)",
                "profile /tmp/good.toml (256 CPUs)",
            ],
            "{}",
            a.evidence
        );
    }

    /// The simulated table's p99s carry the line giving their quantisation step (1 ns:
    /// simulated records keep latencies as whole nanoseconds, `BenchRecord::latency_ns_p99:
    /// u64`) and how many of its points have p50 = p99; the noisy neighbour's table is
    /// measured, so no such line follows it. Its four rows: two profiles' global hash and
    /// automatic size, one of them with p50 = p99.
    #[test]
    fn only_the_simulated_p99s_carry_the_quantisation_step() {
        let (seed, user) = two_256_cpu_profiles();
        let ctx = context(seed.clone(), Some(user.clone()));
        let pts: Vec<(u64, f64)> = (1..=12).map(|k| (1u64 << k, 90.0)).collect();
        let mut q = curve(100.0, &pts);
        q.global.p50_ns = q.global.p99_ns;
        let curves = vec![(seed, vec![q]), (user, vec![curve(100.0, &pts)])];
        let n = noisy([900.0, 1000.0, 1100.0], [400.0, 500.0, 600.0], 600);
        let a = global_vs_private(&ctx, &curves, &[], &n);
        let note = "Simulated p99s are quantised: each latency percentile is rounded to a step \
                    of 1 ns (`sim::sweep::LATENCY_STEP_NS`); in 1 of the 4 points with a p99 \
                    here the p50 equals the p99 (the simulated latency takes one value there), \
                    so that p99 is no tail.";
        let at = a
            .evidence
            .find(note)
            .unwrap_or_else(|| panic!("{}", a.evidence));
        assert_eq!(
            a.evidence.matches("Simulated p99s are quantised").count(),
            1
        );
        // Under the simulated table, before the measured one.
        assert!(a.evidence[..at].ends_with("```\n\n"), "{}", a.evidence);
        assert!(at < a.evidence.find("| victim").unwrap(), "{}", a.evidence);
    }

    fn noisy(g99: [f64; 3], p99: [f64; 3], shared: u64) -> NoisyFigures {
        let s = |v: [f64; 3]| Spread::of(&v).unwrap();
        NoisyFigures {
            global_ops: s([1e6; 3]),
            global_p99: s(g99),
            private_ops: s([1e6; 3]),
            private_p99: s(p99),
            shared_global: Some(shared),
            shared_private: Some(0),
            victim_buckets: Some(1024),
        }
    }

    #[test]
    fn global_vs_private_sentence_follows_the_data() {
        let mut pts: Vec<(u64, f64)> = (1..=12).map(|k| (1u64 << k, 100.0)).collect();
        pts[9].1 = 80.0; // 1024 slots, the auto size at 240 threads on 256 CPUs
        let c = curve(100.0, &pts);
        let n = noisy([900.0, 1000.0, 1100.0], [400.0, 500.0, 600.0], 600);
        let s = global_vs_private_sentence(&c, 256, 0.08, &n, "this machine", Validity::Validated);
        assert!(
            s.contains("the global hash gives the most throughput (100 vs 80"),
            "{s}"
        );
        assert!(s.contains("shares 600 of the victim's 1024 buckets"), "{s}");
        assert!(
            s.contains("p99 latency 1,000 ns global vs 2,000 ns private"),
            "{s}"
        );
        // A quantised simulated latency (p50 = p99): its p99 is not quoted.
        let mut q = c.clone();
        q.global.p50_ns = q.global.p99_ns;
        let s = global_vs_private_sentence(&q, 256, 0.08, &n, "m", Validity::Validated);
        assert!(
            s.contains(
                "the simulated p99 latencies are not compared: the simulated latency is quantised"
            ) && !s.contains("p99 latency 1,000"),
            "{s}"
        );
        assert!(
            s.contains("lowers the victim's p99 from 1,000 to 500 ns"),
            "{s}"
        );
        // Auto equal within error, p99 difference inside the run-to-run range.
        pts[9].1 = 97.0;
        let c = curve(100.0, &pts);
        let n = noisy([900.0, 1000.0, 1100.0], [850.0, 950.0, 1050.0], 0);
        let s = global_vs_private_sentence(&c, 256, 0.08, &n, "this machine", Validity::Validated);
        assert!(
            s.contains("costs no throughput against the global hash within ±8.0 %"),
            "{s}"
        );
        assert!(
            s.contains("shares none of the victim's 1024 buckets"),
            "{s}"
        );
        assert!(
            s.contains("is not told apart: the runs' ranges overlap"),
            "{s}"
        );
        assert!(!s.contains("lowers"), "{s}");
        // Medians far apart, but one private run is as slow as the global ones: no claim.
        let n = noisy([990.0, 1000.0, 1010.0], [400.0, 500.0, 995.0], 0);
        let s = global_vs_private_sentence(&c, 256, 0.08, &n, "m", Validity::Validated);
        assert!(s.contains("not told apart") && !s.contains("lowers"), "{s}");
        // Two runs: too few to compare at all.
        let two = NoisyFigures {
            global_p99: Spread::of(&[1000.0, 1010.0]).unwrap(),
            private_p99: Spread::of(&[100.0, 110.0]).unwrap(),
            ..n.clone()
        };
        let s = global_vs_private_sentence(&c, 256, 0.08, &two, "m", Validity::Validated);
        assert!(
            s.contains("not enough runs (2, a difference is claimed from 3 each)"),
            "{s}"
        );
        // Private faster beyond the error.
        pts[9].1 = 120.0;
        let s = global_vs_private_sentence(
            &curve(100.0, &pts),
            256,
            0.08,
            &n,
            "m",
            Validity::Validated,
        );
        assert!(
            s.contains("private hash gives more throughput than the global hash (120 vs 100"),
            "{s}"
        );
    }
}

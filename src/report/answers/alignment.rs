//! Question 4: alignment and table size (the 2013 thread, seed 003).

use super::shared::*;
use super::*;
use crate::render::plot::{Line, Plot};
use crate::render::{TextTable, fmt_grouped};
use crate::report::context::Context;
use crate::report::spread::Spread;
use serde::Serialize;
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// The 2013 thread's table at 80 threads (seed 003, an 80-core 1 TB NUMA machine), ops/s:
/// baseline, aligned only, large table only, large table and aligned.
pub const SEED_2013_AT_80_THREADS: [f64; 4] = [193_559.0, 323_425.0, 1_028_147.0, 1_130_304.0];

/// One measured configuration of the alignment question.
#[derive(Clone, Debug, Serialize)]
pub struct LayoutFigure {
    /// Threads.
    pub threads: usize,
    /// `aligned` or `packed`.
    pub layout: String,
    /// Global table buckets.
    pub buckets: u64,
    /// Per-thread ops/sec.
    pub ops: Spread,
}

/// The sentence: packed vs aligned at 256 buckets and 256 × CPUs vs 256, at the largest
/// thread count measured, plus the simulated large box.
pub fn alignment_sentence(
    m: &[LayoutFigure],
    cpus: usize,
    sim: Option<(usize, f64, f64)>,
    sim_tol: f64,
) -> String {
    let threads = m.iter().map(|f| f.threads).max().unwrap_or(1);
    let get = |layout: &str, b: u64| {
        m.iter()
            .find(|f| f.threads == threads && f.layout == layout && f.buckets == b)
    };
    let big = (256 * cpus as u64).next_power_of_two();
    let mut s = format!("On this machine at {threads} threads ({cpus} CPUs), ");
    match (get("aligned", 256), get("packed", 256)) {
        (Some(a), Some(p)) => {
            let tol = a.ops.rel_half_range() + p.ops.rel_half_range();
            let _ = write!(
                s,
                "a packed 256-bucket table {}",
                relative(p.ops.median, a.ops.median, tol, "aligned ones")
            );
        }
        _ => s.push_str("the layouts were not both measured"),
    }
    if big != 256 {
        if let (Some(small), Some(large)) = (get("aligned", 256), get("aligned", big)) {
            let tol = small.ops.rel_half_range() + large.ops.rel_half_range();
            let _ = write!(
                s,
                ", and 256 × CPUs = {big} aligned buckets {}",
                relative(large.ops.median, small.ops.median, tol, "256")
            );
        }
    }
    if let Some((t, small, large)) = sim {
        let _ = write!(
            s,
            "; on the simulated 256-CPU box at {t} threads a 256-bucket table {}",
            relative(small, large, sim_tol, "the 65,536-bucket (256 × CPUs) one")
        );
    }
    s.push('.');
    s
}

/// Question 4.
pub fn alignment(
    ctx: &Context,
    measured: &[LayoutFigure],
    sim: &[(usize, f64, f64)],
    dir: &Path,
) -> Result<Answer, String> {
    let tol = ctx.sim_error().value;
    let cpus = ctx.machine.cpus_allowed;
    let mut a = Answer {
        question: "Alignment and table size (2013)".into(),
        answer: alignment_sentence(measured, cpus, sim.last().copied(), tol),
        ..Answer::default()
    };
    let mut t = TextTable::new(["threads", "layout", "buckets", "ops/s per thread"]);
    for f in measured {
        t.push(vec![
            f.threads.to_string(),
            f.layout.clone(),
            f.buckets.to_string(),
            f.ops.fmt_grouped(),
        ]);
    }
    let mut st = TextTable::new(["threads", "256 buckets", "65,536 buckets", "ratio"]);
    for &(th, small, large) in sim {
        st.push(vec![
            th.to_string(),
            fmt_grouped(small, 0),
            fmt_grouped(large, 0),
            format!("{:.2}", small / large),
        ]);
    }
    let _ = write!(
        a.evidence,
        "Measured on this machine, model global table (jhash2, 1024 futexes per thread), \
         median ± half-range of {} runs:\n\n{}\nSimulated 256-CPU box (aligned buckets; the \
         simulator has no packed layout), ops/s per thread:\n\n{}",
        ctx.answer_runs(),
        code(&t.render_within(MAX_WIDTH, 2)),
        code(&st.render_within(MAX_WIDTH, 1))
    );
    let mut lines = Vec::new();
    let mut combos: Vec<(String, u64)> = Vec::new();
    for f in measured {
        if !combos.contains(&(f.layout.clone(), f.buckets)) {
            combos.push((f.layout.clone(), f.buckets));
        }
    }
    for (layout, b) in combos {
        let pts: Vec<&LayoutFigure> = measured
            .iter()
            .filter(|f| f.layout == layout && f.buckets == b)
            .collect();
        lines.push(Line {
            name: format!("{layout}, {b} buckets"),
            points: pts
                .iter()
                .map(|f| (f.threads as f64, f.ops.median))
                .collect(),
            spread: pts.iter().map(|f| (f.ops.min, f.ops.max)).collect(),
            markers_only: false,
        });
    }
    let plot = Plot {
        title: "aligned vs packed buckets on this machine (model table)".into(),
        x_label: "threads".into(),
        y_label: "ops/sec per thread".into(),
        lines,
        ..Plot::default()
    };
    write_plot(dir, "answer-layout.svg", &plot, &mut a)?;
    let [base, aligned, large, both] = SEED_2013_AT_80_THREADS;
    let _ = writeln!(
        a.evidence,
        "For comparison, the 2013 thread's 80-core NUMA machine at 80 threads: aligned buckets \
         {:.2}×, the larger table {:.2}×, both {:.2}× the baseline's {} ops/s.\n",
        aligned / base,
        large / base,
        both / base,
        fmt_grouped(base, 0)
    );
    a.commands = vec![
        "futexhash bench --backend model --table global --layout packed -b 256 -t 1,2".into(),
        "futexhash sim --profile seed-256cpu -t 240 -b 256,0".into(),
    ];
    a.caveat = format!(
        "Measured differences inside the sum of the two configurations' run-to-run ranges are \
         not claimed; this machine runs at most {cpus} thread(s) at once, where the 2013 \
         thread's 80-core machine ran 32 to 512, so bucket cache lines are contended far less. Simulated \
         figures carry {}.",
        ctx.sim_error().provenance()
    );
    a.figures = json!({ "measured": measured, "simulated": sim.iter().map(|s| json!({"threads": s.0, "buckets_256": s.1, "buckets_65536": s.2})).collect::<Vec<_>>(), "tolerance": tol });
    Ok(a)
}

/// Simulated 256 vs 65,536 buckets (the global size of 256 CPUs) at each thread count.
pub fn sim_table_sizes(ctx: &Context, threads: &[usize]) -> Result<Vec<(usize, f64, f64)>, String> {
    use crate::sim::sweep::{SimSweep, run_sweep};
    let sweep = SimSweep {
        threads: threads.to_vec(),
        futexes: 1024,
        buckets: vec![256, 0],
        hashers: vec![jhash2()],
        op: crate::sim::SimOp::WaitFail,
        node: None,
        len: ctx.sim_len,
        seed: 1,
    };
    let recs = run_sweep(&ctx.seed_box, &sweep, || {})?;
    Ok(threads
        .iter()
        .filter_map(|&t| {
            let get = |b: u64| {
                recs.iter()
                    .find(|r| r.threads == t && r.buckets == b)
                    .map(|r| r.ops_per_sec)
            };
            Some((t, get(256)?, get(0)?))
        })
        .collect())
}

/// The model global table, aligned and packed, 256 and 256 × CPUs buckets, 1 thread and
/// one per CPU, `runs` times each (interleaved).
pub fn measure_layouts(ctx: &Context, runs: usize) -> Result<Vec<LayoutFigure>, String> {
    use crate::bench::sweep::{BackendChoice, SweepSpec, sweep};
    use crate::table::{Layout, TableKind};
    let cpus = ctx.machine.cpus_allowed.max(1);
    let runtime =
        std::time::Duration::from_millis(if ctx.depth == crate::report::context::Depth::Quick {
            150
        } else {
            500
        });
    let big = (256 * cpus as u64).next_power_of_two();
    let mut sizes = vec![256u64];
    if big != 256 {
        sizes.push(big);
    }
    let threads: Vec<usize> = if cpus > 1 { vec![1, cpus] } else { vec![1] };
    let mut acc: Vec<(usize, Layout, u64, Vec<f64>)> = Vec::new();
    for _ in 0..runs {
        for layout in [Layout::Aligned, Layout::Packed] {
            let mut spec = SweepSpec::new(vec![BackendChoice::Model], Some(sizes.clone()), runtime);
            spec.model.table = TableKind::Global;
            spec.model.layout = layout;
            spec.threads = threads.clone();
            let res = sweep(&spec, &mut |_| {}).map_err(|e| e.to_string())?;
            for r in res.records() {
                match acc
                    .iter_mut()
                    .find(|a| a.0 == r.threads && a.1 == layout && a.2 == r.buckets)
                {
                    Some(a) => a.3.push(r.ops_per_sec),
                    None => acc.push((r.threads, layout, r.buckets, vec![r.ops_per_sec])),
                }
            }
        }
    }
    Ok(acc
        .into_iter()
        .map(|(threads, layout, buckets, v)| LayoutFigure {
            threads,
            layout: layout.as_str().to_string(),
            buckets,
            ops: Spread::of(&v).unwrap_or(Spread::single(f64::NAN)),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_sentence_claims_only_differences_beyond_the_ranges() {
        let f = |layout: &str, b: u64, v: [f64; 3]| LayoutFigure {
            threads: 2,
            layout: layout.into(),
            buckets: b,
            ops: Spread::of(&v).unwrap(),
        };
        let m = vec![
            f("aligned", 256, [99.0, 100.0, 101.0]),
            f("packed", 256, [79.0, 80.0, 81.0]),
            f("aligned", 512, [99.0, 100.5, 101.0]),
        ];
        let s = alignment_sentence(&m, 2, Some((240, 50.0, 100.0)), 0.08);
        assert!(
            s.contains("a packed 256-bucket table reaches 80 % of aligned ones"),
            "{s}"
        );
        assert!(s.contains("512 aligned buckets matches 256 within"), "{s}");
        assert!(
            s.contains("a 256-bucket table reaches 50 % of the 65,536-bucket"),
            "{s}"
        );
        let m = vec![
            f("aligned", 256, [99.0, 100.0, 101.0]),
            f("packed", 256, [98.0, 99.5, 101.0]),
        ];
        let s = alignment_sentence(&m, 1, None, 0.08);
        assert!(
            s.contains("a packed 256-bucket table matches aligned ones"),
            "{s}"
        );
        assert!(!s.contains("256 × CPUs"), "one CPU: 256 × CPUs is 256: {s}");
    }
}

//! `futexhash report`: the whole evaluation in one go, written as `DIR/report.md` with the
//! SVG plots it refers to and `DIR/report.json` with every figure. The answers to the seed
//! threads' questions come first ([`super::answers`]); the sections after them are the
//! evidence in full: the machine, hash cost, distribution quality (seed 000's eight
//! algorithms plus the user's `--algo`), the model table and the real kernel on this
//! machine, and the simulator's prediction for the seed's 256-CPU box with its validation
//! error against the published tables.
//!
//! Every number in the prose is computed by the run, and every sentence that states a
//! condition is printed only when the figures show it.

use super::answers::{self, DistRun, MAX_WIDTH};
use super::context::{Context, Depth};
pub use super::section::Section;
use super::section::{code_block, write_plot};
use super::simulation::simulation_section;
use super::spread::Spread;
use crate::hashers::KeyHasher;
use crate::key::FutexKey;
use crate::render::plot::{Band, Line, Plot};
use crate::render::{TextTable, fmt_grouped};
use crate::report::ReportError;
use crate::stats::{DistRecord, ExpectationCache, Reduce, Verdict, assign_verdicts, sweep};
use crate::throughput::record::{Backend, BenchRecord, TableKind};
use crate::workload::KeyWorkload;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::Path;

/// The machine the report ran on.
pub fn machine_section(ctx: &Context) -> Section {
    let m = &ctx.machine;
    let mut s = Section {
        key: "machine".into(),
        figures: serde_json::to_value(m).unwrap_or(Value::Null),
        ..Section::default()
    };
    let _ = write!(
        s.markdown,
        "## Machine\n\n| | |\n|---|---|\n| CPU | {} |\n| cores / threads | {} / {} |\n| CPUs \
         this run may use | {} |\n| kernel | {} |\n| private futex hash | {} |\n| futexhash | {} \
         |\n| date (UTC) | {} |\n",
        m.cpu_model,
        m.cores,
        m.threads,
        m.cpus_allowed,
        m.kernel,
        if m.private_hash {
            "yes (`prctl(PR_FUTEX_HASH)` answers)"
        } else {
            "no: kernel runs use the global hash only"
        },
        m.futexhash,
        m.date
    );
    s
}

/// Cost of one hash per hasher, measured in this run (the context's figures).
pub fn hash_cost_section(ctx: &Context, kernel_op: Option<Spread>) -> Section {
    let mut sorted: Vec<&super::context::HashCost> = ctx.costs.iter().collect();
    sorted.sort_by(|a, b| a.ns.median.total_cmp(&b.ns.median));
    let fastest = sorted.first().map_or(f64::NAN, |c| c.ns.median);
    let mut headers = vec!["hasher", "ns/hash", "vs fastest"];
    if kernel_op.is_some() {
        headers.push("of futex op");
    }
    let mut t = TextTable::new(headers);
    for c in &sorted {
        let mut row = vec![
            c.name.clone(),
            c.ns.fmt_interval(2),
            format!("{:.2}x", c.ns.median / fastest),
        ];
        if let Some(k) = kernel_op {
            row.push(format!("{:.1}%", c.ns.median / k.median * 100.0));
        }
        t.push(row);
    }
    let mut s = Section {
        key: "hash_cost".into(),
        ..Section::default()
    };
    let runs = sorted.first().map_or(0, |c| c.ns.runs);
    let _ = write!(
        s.markdown,
        "## Hash cost\n\nns per hash of {} `perf` keys on one core: the median of {runs} \
         timing rounds and, in brackets, their 10th to 90th percentile. Each round times every \
         hasher once, in an order that rotates from round to round, and the rounds are {} ms \
         apart, so they sample the machine over about {} s: two costs whose brackets overlap \
         are not told apart.",
        fmt_grouped(super::context::COST_KEYS as f64, 0),
        super::context::COST_PAUSE.as_millis(),
        super::context::cost_seconds(ctx.depth)
    );
    if let (Some(k), Some(lo), Some(hi)) = (kernel_op, sorted.first(), sorted.last()) {
        let _ = write!(
            s.markdown,
            " This machine's measured futex operation (one thread, global hash) takes {} ns, so \
             the hashers cost between {:.1} % ({}) and {:.1} % ({}) of it.",
            fmt_grouped(k.median, 0),
            lo.ns.median / k.median * 100.0,
            lo.name,
            hi.ns.median / k.median * 100.0,
            hi.name
        );
    }
    let _ = write!(
        s.markdown,
        "\n\n{}",
        code_block(&t.render_within(MAX_WIDTH, 1))
    );
    let _ = writeln!(s.markdown, "{}", cost_ties_sentence(&sorted));
    s.figures = json!({
        "kernel_op_ns": kernel_op,
        "hashers": ctx.costs.iter().map(|c| json!({"name": c.name, "ns": c.ns})).collect::<Vec<_>>(),
    });
    s
}

/// Which neighbours in cost order (`sorted`, cheapest first) are not told apart: their
/// intervals overlap ([`Spread::told_apart`]).
pub fn cost_ties_sentence(sorted: &[&super::context::HashCost]) -> String {
    let ties: Vec<String> = sorted
        .windows(2)
        .filter(|w| !w[0].ns.told_apart(&w[1].ns))
        .map(|w| format!("{} and {}", w[0].name, w[1].name))
        .collect();
    if ties.is_empty() {
        "Every hasher's cost is told apart from the next in this order.".into()
    } else {
        format!(
            "Not told apart from the next in this order (their brackets overlap): {}.",
            ties.join("; ")
        )
    }
}

/// Bucket counts shown in the distribution tables.
const DIST_ROWS: [u64; 9] = [16, 64, 256, 1024, 4096, 16384, 32768, 65536, 131072];

/// The distribution sweeps (every hasher of the context on `perf`, `aslr` and `pages`
/// keys, mask reduction, 2..131072 buckets), verdicts assigned per workload.
pub fn distribution_runs(ctx: &Context) -> Result<Vec<DistRun>, ReportError> {
    let buckets: Vec<u64> = (1..=17).map(|k| 1u64 << k).collect();
    let mut out = Vec::new();
    for (workload, n) in super::context::dist_workloads(ctx.depth) {
        let w: KeyWorkload = workload.parse()?;
        let keys: Vec<FutexKey> = w.generate(n, 1)?.keys;
        let mut cache = ExpectationCache::default();
        let mut records: Vec<DistRecord> = Vec::new();
        for h in &ctx.hashers {
            records.extend(sweep(
                h,
                workload,
                &keys,
                &buckets,
                &[Reduce::Mask],
                &mut cache,
            )?);
        }
        assign_verdicts(&mut records);
        out.push(DistRun {
            workload: workload.into(),
            keys: keys.len(),
            records,
        });
    }
    Ok(out)
}

/// Standard deviation of the collision count when `n` keys go uniformly at random into `m`
/// buckets: collisions = n − m + empty, so it is the empty count's, whose variance is
/// `m(m−1)(1−2/m)^n + m(1−1/m)^n − m²(1−1/m)^{2n}` (occupancy moments, e.g. Johnson & Kotz,
/// "Urn Models", 1977).
pub fn random_collisions_sd(n: u64, m: u64) -> f64 {
    if m < 2 {
        return 0.0;
    }
    let (n, m) = (n as f64, m as f64);
    let a = (n * (1.0 - 1.0 / m).ln()).exp();
    let b = (n * (1.0 - 2.0 / m).ln()).exp();
    (m * (m - 1.0) * b + m * a - m * m * a * a).max(0.0).sqrt()
}

/// Short flag naming the statistic that failed (`F:max-load`) or warned (`w:…`).
fn flag(r: &DistRecord) -> String {
    match r.verdict {
        Verdict::Pass => String::new(),
        Verdict::Warn => format!(" w:{}", answers::failed_statistic(r)),
        Verdict::Fail => format!(" F:{}", answers::failed_statistic(r)),
    }
}

/// Distribution quality tables and plots from [`distribution_runs`].
pub fn distribution_section(
    ctx: &Context,
    runs: &[DistRun],
    dir: &Path,
) -> Result<Section, ReportError> {
    let mut s = Section {
        key: "distribution".into(),
        ..Section::default()
    };
    s.markdown.push_str(
        "## Distribution quality\n\nCollisions (`keys − occupied buckets`) divided by what a \
         uniformly random function would give, with the kernel's `mask` reduction: 1.00 is \
         random, above 1 is worse, below 1 more even than random (not a defect). Verdicts \
         are SMHasher3-style with a Bonferroni correction over each workload's records \
         (`docs/dist.md`); a flag names the statistic with the smallest p-value: `F` = fail, \
         `w` = warn; `max-load` = largest bucket, `collisions`, `chi2` = Pearson's χ².\n",
    );
    let mut figures = Vec::new();
    for run in runs {
        let mut headers = vec!["buckets".to_string()];
        headers.extend(ctx.hashers.iter().map(|h| h.name().to_string()));
        let mut t = TextTable::new(headers);
        for b in DIST_ROWS {
            let mut row = vec![b.to_string()];
            for h in &ctx.hashers {
                row.push(
                    run.records
                        .iter()
                        .find(|r| r.buckets == b && r.algo == h.name())
                        .map_or("-".into(), |r| {
                            format!("{:.2}{}", r.collisions_ratio(), flag(r))
                        }),
                );
            }
            t.push(row);
        }
        let flagged: Vec<String> = run
            .records
            .iter()
            .filter(|r| r.verdict != Verdict::Pass)
            .map(|r| {
                format!(
                    "{}@{} ({} {})",
                    r.algo,
                    r.buckets,
                    r.verdict.as_str(),
                    answers::failed_statistic(r)
                )
            })
            .collect();
        let _ = write!(
            s.markdown,
            "\n### `{}` workload, {} keys\n\n{}\n{}\n",
            run.workload,
            fmt_grouped(run.keys as f64, 0),
            code_block(&t.render_within(MAX_WIDTH, 1)),
            if flagged.is_empty() {
                "No hasher is flagged at any size.".to_string()
            } else {
                format!("Flagged: {}.", flagged.join(", "))
            }
        );
        let lines: Vec<Line> = ctx
            .hashers
            .iter()
            .map(|h| {
                let failed: Vec<String> = run
                    .records
                    .iter()
                    .filter(|r| r.algo == h.name() && r.verdict == Verdict::Fail)
                    .map(|r| format!("2^{}", r.buckets.trailing_zeros()))
                    .collect();
                Line::new(
                    if failed.is_empty() {
                        h.name().to_string()
                    } else {
                        format!("{} (fails at {})", h.name(), failed.join(","))
                    },
                    run.records
                        .iter()
                        .filter(|r| r.algo == h.name())
                        .map(|r| (r.buckets as f64, r.collisions_ratio()))
                        .collect(),
                )
            })
            .collect();
        // The random-expectation band: ±3 standard deviations of a random function's
        // collision count, as a ratio.
        let band_points: Vec<(f64, f64, f64)> = run
            .records
            .iter()
            .filter(|r| ctx.hashers.first().is_some_and(|h| r.algo == h.name()))
            .filter(|r| r.collisions_expected > 0.0)
            .map(|r| {
                let sd = random_collisions_sd(r.keys, r.buckets) / r.collisions_expected;
                (r.buckets as f64, 1.0 - 3.0 * sd, 1.0 + 3.0 * sd)
            })
            .collect();
        let plot = Plot {
            title: format!("collisions ÷ random expectation, {} keys", run.workload),
            x_label: "buckets".into(),
            y_label: "collisions ratio".into(),
            log2_x: true,
            lines,
            band: Some(Band {
                name: "random function ±3σ".into(),
                points: band_points,
            }),
            reference: Some((1.0, "random = 1".into())),
            ..Plot::default()
        };
        write_plot(dir, &format!("dist-{}.svg", run.workload), &plot, &mut s)?;
        for r in &run.records {
            figures.push(json!({
                "workload": run.workload, "algo": r.algo, "buckets": r.buckets, "keys": r.keys,
                "collisions_ratio": r.collisions_ratio(), "max_load": r.max_load,
                "max_load_expected": r.max_load_expected, "verdict": r.verdict.as_str(),
                "statistic": answers::failed_statistic(r),
            }));
        }
    }
    s.figures = Value::Array(figures);
    Ok(s)
}

/// Records of `runs` repeated sweeps, grouped by configuration: the first run's record
/// (as the representative) with the ops/sec of every run.
fn group_runs(runs: &[Vec<BenchRecord>]) -> Vec<(BenchRecord, Spread)> {
    let mut out: Vec<(BenchRecord, Vec<f64>)> = Vec::new();
    for r in runs.iter().flatten() {
        let key = |x: &BenchRecord| (x.column_label(), x.threads, x.buckets);
        match out.iter_mut().find(|(k, _)| key(k) == key(r)) {
            Some((_, v)) => v.push(r.ops_per_sec),
            None => out.push((r.clone(), vec![r.ops_per_sec])),
        }
    }
    out.into_iter()
        .map(|(r, v)| (r, Spread::of(&v).unwrap_or(Spread::single(f64::NAN))))
        .collect()
}

/// A seed-style table of grouped sweep records: rows (threads, buckets), one column per
/// backend/hasher, integer ops/sec with ± when runs repeat.
pub fn spread_table(groups: &[(BenchRecord, Spread)]) -> TextTable {
    let mut columns: Vec<String> = Vec::new();
    let mut rows: Vec<(usize, u64)> = Vec::new();
    for (r, _) in groups {
        if !columns.contains(&r.column_label()) {
            columns.push(r.column_label());
        }
        if !rows.contains(&(r.threads, r.buckets)) {
            rows.push((r.threads, r.buckets));
        }
    }
    let mut headers = vec!["threads".to_string(), "buckets".to_string()];
    headers.extend(columns.iter().map(|c| format!("{c} ops/s")));
    let mut t = TextTable::new(headers);
    for &(threads, buckets) in &rows {
        let mut row = vec![
            threads.to_string(),
            if buckets == 0 {
                "global".into()
            } else {
                buckets.to_string()
            },
        ];
        for c in &columns {
            row.push(
                groups
                    .iter()
                    .find(|(r, _)| {
                        r.threads == threads && r.buckets == buckets && &r.column_label() == c
                    })
                    .map_or("-".into(), |(_, s)| s.fmt_grouped()),
            );
        }
        t.push(row);
    }
    t
}

/// The kernel column's variation across bucket counts at one thread count, against its
/// run-to-run range: `(min, max, noise)`.
fn kernel_variation(groups: &[(BenchRecord, Spread)], threads: usize) -> Option<(f64, f64, f64)> {
    let k: Vec<&Spread> = groups
        .iter()
        .filter(|(r, _)| r.backend == Backend::Kernel && r.threads == threads)
        .map(|(_, s)| s)
        .collect();
    if k.len() < 2 {
        return None;
    }
    let lo = k.iter().map(|s| s.median).fold(f64::INFINITY, f64::min);
    let hi = k.iter().map(|s| s.median).fold(0.0, f64::max);
    let noise = k.iter().map(|s| s.rel_half_range()).fold(0.0, f64::max);
    Some((lo, hi, noise))
}

/// The sentence about the kernel curve: flat only when the data is flat.
pub fn kernel_curve_sentence(threads: usize, lo: f64, hi: f64, noise: f64, runs: usize) -> String {
    let change = hi / lo - 1.0;
    if runs > 1 && change <= 2.0 * noise {
        format!(
            "At {threads} thread(s) the kernel's throughput varies by {:.0} % across bucket \
             counts, inside twice its ±{:.0} % run-to-run range: no dependence on the bucket \
             count shows beyond noise.",
            change * 100.0,
            noise * 100.0
        )
    } else if runs > 1 && threads == 1 {
        // One thread takes every bucket lock uncontended: nothing in the table can make
        // one size slower than another by more than its runs disagree, so a difference
        // beyond that is the machine (other work on its CPUs during some runs).
        format!(
            "At 1 thread the kernel's throughput differs by {:.0} % across bucket counts, \
             beyond twice its ±{:.0} % run-to-run range; one thread cannot contend with \
             itself, so this is the machine being busy during some runs, not the bucket \
             count.",
            change * 100.0,
            noise * 100.0
        )
    } else if runs > 1 {
        format!(
            "At {threads} thread(s) the kernel's throughput varies by {:.0} % across bucket \
             counts ({} to {} ops/s), beyond twice its ±{:.0} % run-to-run range.",
            change * 100.0,
            fmt_grouped(lo, 0),
            fmt_grouped(hi, 0),
            noise * 100.0
        )
    } else {
        format!(
            "At {threads} thread(s) the kernel's throughput varies by {:.0} % across bucket \
             counts ({} to {} ops/s); one run, so how much of that is noise is not known \
             (`--repeat 3` measures it).",
            change * 100.0,
            fmt_grouped(lo, 0),
            fmt_grouped(hi, 0)
        )
    }
}

/// `perf bench futex hash` on this machine: the model table (jhash2 and jhash2-addr, the
/// kernel's global and private hashers) next to the real kernel, 1 thread and one per CPU,
/// `--repeat` runs, plus the side-by-side figures of `futexhash bench --compare`.
pub fn throughput_section(
    ctx: &Context,
    figures: &crate::bench::compare::Figures,
    dir: &Path,
) -> Result<Section, ReportError> {
    use crate::bench::sweep::{BackendChoice, SweepSpec, sweep};
    use crate::hashers::{Builtin, HashKey};
    use std::time::Duration;
    let quick = ctx.depth == Depth::Quick;
    let runtime = Duration::from_millis(if quick { 250 } else { 1000 });
    let buckets: Vec<u64> = if quick {
        vec![2, 16, 128, 1024, 0]
    } else {
        vec![2, 8, 32, 128, 512, 2048, 8192, 32768, 0]
    };
    let cpus = ctx.machine.cpus_allowed.max(1);
    let mut spec = SweepSpec::new(
        vec![BackendChoice::Model, BackendChoice::Kernel],
        Some(buckets),
        runtime,
    );
    spec.model.algos = ["jhash2", "jhash2-addr"]
        .iter()
        .map(|n| {
            Builtin::by_name(n, HashKey::DEFAULT)
                .expect("registry")
                .shared()
        })
        .collect();
    spec.threads = if cpus > 1 { vec![1, cpus] } else { vec![1] };
    let mut runs = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    for _ in 0..ctx.repeat {
        let result = sweep(&spec, &mut |_| {})?;
        for w in result.warnings.iter() {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        runs.push(result.records());
    }
    let groups = group_runs(&runs);
    let mut s = Section {
        key: "throughput".into(),
        ..Section::default()
    };
    let _ = write!(
        s.markdown,
        "## Throughput on this machine: model table and real kernel\n\n`perf bench futex \
         hash`'s loop ({} s per configuration, {} run(s){}), mean ops/s per thread. `jhash2` and \
         `jhash2-addr` are the model table with that hasher (private table, aligned buckets; \
         global = the global table); `kernel` is this machine's `futex(2)` with \
         `PR_FUTEX_HASH` slots.",
        runtime.as_secs_f64(),
        ctx.repeat,
        if ctx.repeat > 1 {
            ": median ± half-range"
        } else {
            ""
        }
    );
    let global = |col: &str, t: usize| {
        groups
            .iter()
            .find(|(r, _)| r.column_label() == col && r.threads == t && r.buckets == 0)
            .map(|(_, s)| s.median)
    };
    if let (Some(m), Some(k)) = (global("jhash2", 1), global("kernel", 1)) {
        let _ = write!(
            s.markdown,
            " The model skips the syscall: at one thread on the global table it runs {:.1}× \
             the kernel's rate, so compare shapes across bucket counts, not levels.",
            m / k
        );
    }
    for &t in &spec.threads {
        if let Some((lo, hi, noise)) = kernel_variation(&groups, t) {
            let _ = write!(
                s.markdown,
                " {}",
                kernel_curve_sentence(t, lo, hi, noise, ctx.repeat)
            );
        }
    }
    let _ = write!(
        s.markdown,
        "\n\n{}",
        code_block(&spread_table(&groups).render_within(MAX_WIDTH, 2))
    );
    for w in &warnings {
        let _ = writeln!(s.markdown, "\n> {w}");
    }
    throughput_plot(ctx, &groups, dir, &mut s)?;
    compare_sentence(figures, &mut s);
    s.figures = json!({
        "runs": groups.iter().map(|(r, sp)| json!({
            "backend": r.backend, "algo": r.algo, "table": r.table, "buckets": r.buckets,
            "threads": r.threads, "ops_per_sec": sp,
        })).collect::<Vec<_>>(),
        "compare": figures.figures,
        "warnings": warnings,
    });
    Ok(s)
}

/// throughput.svg: every configuration's rate across the private sizes, the global table
/// flat beside them, one panel per thread count.
fn throughput_plot(
    ctx: &Context,
    groups: &[(BenchRecord, Spread)],
    dir: &Path,
    s: &mut Section,
) -> Result<(), ReportError> {
    // One panel per thread count, so each private curve is read against the global table
    // at the same threads.
    let mut lines: Vec<Line> = Vec::new();
    let mut line_threads: Vec<usize> = Vec::new();
    // The global table has no slot count: drawn flat across the private sizes measured,
    // so each private curve can be read against it.
    let (xmin, xmax) = groups
        .iter()
        .filter(|(r, _)| r.buckets > 0 && r.table != TableKind::Global)
        .map(|(r, _)| r.buckets as f64)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), b| {
            (lo.min(b), hi.max(b))
        });
    for (r, sp) in groups.iter().filter(|(r, _)| r.table == TableKind::Global) {
        if !xmin.is_finite() {
            break;
        }
        let name = format!("{} global, {} thread(s)", r.column_label(), r.threads);
        if lines.iter().any(|l| l.name == name) {
            continue;
        }
        line_threads.push(r.threads);
        lines.push(Line {
            x_spread: Vec::new(),
            markers_only: false,
            name,
            points: vec![(xmin, sp.median), (xmax, sp.median)],
            spread: if ctx.repeat > 1 {
                vec![(sp.min, sp.max); 2]
            } else {
                Vec::new()
            },
        });
    }
    for (r, _) in groups {
        if r.table == TableKind::Global {
            continue;
        }
        let name = format!("{} private, {} thread(s)", r.column_label(), r.threads);
        if lines.iter().any(|l| l.name == name) {
            continue;
        }
        line_threads.push(r.threads);
        let pts: Vec<&(BenchRecord, Spread)> = groups
            .iter()
            .filter(|(x, _)| {
                x.column_label() == r.column_label() && x.threads == r.threads && x.buckets > 0
            })
            .collect();
        lines.push(Line {
            x_spread: Vec::new(),
            markers_only: false,
            name,
            points: pts
                .iter()
                .map(|(x, s)| (x.buckets as f64, s.median))
                .collect(),
            spread: if ctx.repeat > 1 {
                pts.iter().map(|(_, s)| (s.min, s.max)).collect()
            } else {
                Vec::new()
            },
        });
    }
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| line_threads[i]);
    let mut facets: Vec<(String, usize)> = Vec::new();
    for &i in &order {
        let t = line_threads[i];
        let title = format!("{t} thread{}", if t == 1 { "" } else { "s" });
        match facets.last_mut() {
            Some((last, n)) if *last == title => *n += 1,
            _ => facets.push((title, 1)),
        }
    }
    let mut slots: Vec<Option<Line>> = lines.into_iter().map(Some).collect();
    let lines: Vec<Line> = order.iter().filter_map(|&i| slots[i].take()).collect();
    let plot = Plot {
        title: "perf bench futex hash on this machine".into(),
        facets,
        x_label: "private hash slots (global table: flat)".into(),
        y_label: "mean ops/sec per thread".into(),
        log2_x: true,
        // Rates are compared by ratio: a log axis draws equal ratios as equal distances
        // whatever the span, and never flips scale between runs whose span crosses 10×.
        y_scale: crate::render::plot::YScale::Log,
        lines,
        ..Plot::default()
    };
    write_plot(dir, "throughput.svg", &plot, s)
}

/// The `bench --compare` figures as a table with their sentence.
fn compare_sentence(figures: &crate::bench::compare::Figures, s: &mut Section) {
    let mut ft = TextTable::new([
        "figure",
        "A",
        "median A",
        "B",
        "median B",
        "unit",
        "A/B",
        "paired A/B",
        "met",
    ]);
    for f in &figures.figures {
        ft.push(vec![
            f.figure.to_string(),
            f.a.clone(),
            compare_value(f.a_median),
            f.b.clone(),
            compare_value(f.b_median),
            f.unit.to_string(),
            format!("{:.3}", f.ratio),
            format!("{:.3} ±{:.1}%", f.paired_ratio_median, f.ratio_spread_pct),
            match f.meets {
                Some(true) => format!("yes ({})", f.expected),
                Some(false) => format!("no ({})", f.expected),
                None => "-".into(),
            },
        ]);
    }
    let _ = write!(
        s.markdown,
        "\nSide by side in one run (`futexhash bench --compare`, medians of {} alternating \
         runs): the cost of a model operation against the kernel's syscall, how two threads \
         scale on a large aligned table, and what packing buckets into shared cache lines \
         costs.\n\n{}",
        figures.figures.first().map_or(0, |f| f.reps),
        code_block(&ft.render_records(MAX_WIDTH))
    );
}

/// A compare median as a cell: integers with separators for rates and times, three
/// decimals for the ratios (a ratio of 1.214 printed as "1" would hide the figure).
pub fn compare_value(v: f64) -> String {
    if v.abs() >= 100.0 {
        fmt_grouped(v, 0)
    } else {
        format!("{v:.3}")
    }
}

/// The note under `report.md`'s title: the command, its time and machine, and what in the
/// report is not this run's: the published tables the answers compare with, and the
/// simulator's out-of-sample error figures, stored from a `sim validate --cv` run
/// ([`crate::sim::uncertainty::QUOTED`]: the cross-validation takes minutes and the report
/// does not rerun it), with the command that recomputes them.
pub fn title_note(command: &str, secs: f64, machine: &str, date: &str) -> String {
    let q = crate::sim::uncertainty::quoted_error();
    // QUOTED's provenance is "COMMAND: how"; the command alone is what the reader runs.
    let cv = q
        .provenance
        .split_once(':')
        .map_or(q.provenance, |(c, _)| c);
    format!(
        "Generated by `{command}` in {secs:.0} s on {machine} ({date}). Every number was \
         produced by this run except two kinds of stored figures: the published seed tables \
         and loop counts the answers compare with, named where they appear, and the \
         simulator's out-of-sample error figures (the error every simulated figure carries, \
         and its medians, percentiles and coverage), stored from a run of `futexhash {cv}` \
         that this report does not repeat; that command recomputes them, and the test suite \
         fails when they drift. `report.json` holds every figure."
    )
}

/// A whole report: its sections in order (the answers first).
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The decision table (first in `report.md`, `decisions` in `report.json`).
    pub decisions: Vec<answers::Decision>,
    /// Sections, in order.
    pub sections: Vec<Section>,
}

impl Report {
    /// `report.md`'s text under the title note.
    pub fn markdown(&self, title_note: &str) -> String {
        let mut md = format!("# futexhash report\n\n{title_note}\n\n");
        if !self.decisions.is_empty() {
            md.push_str(&answers::decisions_markdown(&self.decisions));
        }
        for s in &self.sections {
            md.push_str(&s.markdown);
            md.push('\n');
        }
        md
    }

    /// `report.json`: the machine, the configuration and every section's figures.
    pub fn json(&self, ctx: &Context, config: Value) -> Value {
        let mut sections = serde_json::Map::new();
        for s in &self.sections {
            sections.insert(s.key.clone(), s.figures.clone());
        }
        json!({
            "machine": ctx.machine,
            "config": config,
            "decisions": self.decisions,
            "sections": sections,
        })
    }
}

/// Runs every section in order; `step` is told each step's name before it runs.
pub fn run(ctx: &Context, dir: &Path, step: &mut dyn FnMut(&str)) -> Result<Report, ReportError> {
    let runs = ctx.answer_runs();
    // The kernel futex operation is timed at KERNEL_OP_POINTS points spread over the run
    // (at least one run each, `runs` in all at least).
    let per_point = runs.div_ceil(answers::KERNEL_OP_POINTS).max(1);
    let mut kernel_ns = Vec::new();
    step("kernel futex cost");
    kernel_ns.extend(answers::kernel_op_sample(ctx, per_point));
    step("distribution");
    let dist = distribution_runs(ctx)?;
    kernel_ns.extend(answers::kernel_op_sample(ctx, per_point));
    step("answers: private hash size");
    let mut curves = Vec::new();
    for p in ctx.profiles() {
        let threads = answers::profile_threads(p);
        curves.push((p.clone(), answers::sim_slot_curves(ctx, p, &threads)?));
    }
    kernel_ns.extend(answers::kernel_op_sample(ctx, per_point));
    step("answers: noisy neighbour");
    let noisy = answers::measure_noisy(ctx, runs)?;
    kernel_ns.extend(answers::kernel_op_sample(ctx, per_point));
    step("answers: alignment");
    let layouts = answers::measure_layouts(ctx, runs)?;
    let seed003 = answers::sim_seed003(ctx)?;
    step("bench --compare");
    let compared = crate::bench::compare::compare(
        super::context::compare_runtime(ctx),
        super::context::COMPARE_FUTEXES,
    )?;
    kernel_ns.extend(answers::kernel_op_sample(ctx, per_point));
    let kernel_op = Spread::of(&kernel_ns);
    let paired = compared
        .figures
        .iter()
        .find(|f| f.figure == "aligned_vs_packed");
    step("answers: NUMA");
    let numa = answers::sim_numa(ctx, &[2, 10])?;
    let (which, verdicts) = answers::which_hash(ctx, &dist, kernel_op, dir)?;
    let tol = ctx.sim_error().value;
    // How far each profile's predictions have been tested, in `curves` order (the seed box,
    // then the user's).
    let trust: Vec<answers::ProfileTrust> = curves
        .iter()
        .map(|(p, l)| answers::ProfileTrust::of(p, l, &ctx.data_dir))
        .collect();
    let mut decisions = vec![
        answers::hash_decision(&verdicts, answers::TableScope::Global),
        answers::hash_decision(&verdicts, answers::TableScope::Private),
    ];
    // The simulated decisions answer for one machine: the user's --profile when given (the
    // last curve), else the seed's 256-CPU box (docs/report.md, "Decisions").
    match curves
        .last()
        .zip(trust.last())
        .and_then(|((p, l), t)| Some((p, l.last()?, t)))
    {
        Some((p, top, t)) => {
            decisions.extend(answers::slot_decisions(top, p.cpus, tol, t));
        }
        None => {
            return Err(ReportError::Missing(
                "no simulated slot curve for the decisions' machine",
            ));
        }
    }
    decisions.push(answers::alignment_decision(
        &seed003,
        paired.and_then(answers::PairedLayouts::of),
        &answers::SEED003_CV,
    ));
    if let (Some(target), Some(seed_box)) = (trust.last(), trust.first()) {
        decisions.push(answers::numa_decision(&numa, tol, target, seed_box));
    }
    let list = vec![
        answers::default_and_limit(ctx, &curves, &trust, dir)?,
        answers::global_vs_private(ctx, &curves, &trust, &noisy),
        which,
        answers::alignment(ctx, &layouts, &seed003, paired, dir)?,
        answers::numa(ctx, &numa, &trust),
    ];
    let mut answers_section = Section {
        key: "answers".into(),
        markdown: "## Answers\n\nThe seed threads' questions, each answered from this run's \
                   figures, with the evidence, the command that reproduces it and how sure \
                   the answer is.\n\n"
            .into(),
        ..Section::default()
    };
    let mut figures = serde_json::Map::new();
    let keys = [
        "default_and_limit",
        "global_vs_private",
        "which_hash",
        "alignment",
        "numa",
    ];
    for (k, a) in keys.iter().zip(&list) {
        answers_section.markdown.push_str(&a.markdown());
        answers_section.files.extend(a.files.iter().cloned());
        figures.insert(
            k.to_string(),
            json!({ "question": a.question, "answer": a.answer, "figures": a.figures }),
        );
    }
    answers_section.figures = Value::Object(figures);
    let mut sections = vec![answers_section, machine_section(ctx)];
    step("hash cost");
    sections.push(hash_cost_section(ctx, kernel_op));
    sections.push(distribution_section(ctx, &dist, dir)?);
    step("throughput: model and kernel");
    sections.push(throughput_section(ctx, &compared, dir)?);
    step("simulation");
    sections.push(simulation_section(ctx, &verdicts, dir)?);
    Ok(Report {
        decisions,
        sections,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_collision_spread_matches_a_brute_force_count() {
        // Exact variance of the empty-bucket count by enumerating all m^n assignments of
        // n = 4 keys to m = 3 buckets.
        let (n, m) = (4u32, 3u64);
        let mut sum = 0.0;
        let mut sum2 = 0.0;
        let total = m.pow(n);
        for code in 0..total {
            let mut used = [false; 3];
            let mut c = code;
            for _ in 0..n {
                used[(c % m) as usize] = true;
                c /= m;
            }
            let empty = used.iter().filter(|u| !**u).count() as f64;
            sum += empty;
            sum2 += empty * empty;
        }
        let mean = sum / total as f64;
        let var = sum2 / total as f64 - mean * mean;
        assert!((random_collisions_sd(4, 3) - var.sqrt()).abs() < 1e-12);
        assert_eq!(random_collisions_sd(10, 1), 0.0);
    }

    #[test]
    fn the_title_note_names_the_stored_figures_and_their_command() {
        let n = title_note("futexhash report --quick", 26.4, "a box", "2026-12-03");
        assert!(n.starts_with("Generated by `futexhash report --quick` in 26 s on a box"));
        assert!(n.contains("published seed tables"), "{n}");
        // The command docs/sim.md gives for the stored figures.
        assert!(
            n.contains(
                "`futexhash sim validate --cv --template data/machines/seed-256cpu-template.toml`"
            ),
            "{n}"
        );
        assert!(n.contains("out-of-sample error figures"), "{n}");
    }

    #[test]
    fn cost_ties_are_the_overlapping_neighbours() {
        use crate::report::context::HashCost;
        let c = |name: &str, v: [f64; 3]| HashCost {
            name: name.into(),
            ns: Spread::of(&v).unwrap(),
        };
        let (a, b, d) = (
            c("a", [1.0, 1.1, 1.2]),
            c("b", [1.15, 1.3, 1.4]),
            c("d", [2.0, 2.1, 2.2]),
        );
        assert_eq!(
            cost_ties_sentence(&[&a, &b, &d]),
            "Not told apart from the next in this order (their brackets overlap): a and b."
        );
        assert_eq!(
            cost_ties_sentence(&[&a, &d]),
            "Every hasher's cost is told apart from the next in this order."
        );
    }

    #[test]
    fn compare_ratios_keep_their_decimals() {
        assert_eq!(compare_value(1.2142), "1.214");
        assert_eq!(compare_value(2.0), "2.000");
        assert_eq!(compare_value(47_626_379.4), "47,626,379");
    }

    #[test]
    fn one_thread_differences_are_the_machine() {
        let s = kernel_curve_sentence(1, 100.0, 171.0, 0.33, 3);
        assert!(s.contains("one thread cannot contend"), "{s}");
        assert!(!s.contains("ops/s)"), "{s}");
        let s = kernel_curve_sentence(2, 100.0, 171.0, 0.33, 3);
        assert!(s.contains("beyond twice"), "{s}");
    }

    #[test]
    fn kernel_curve_is_called_flat_only_when_it_is() {
        let flat = kernel_curve_sentence(1, 2.60e6, 2.67e6, 0.02, 3);
        assert!(flat.contains("no dependence"), "{flat}");
        // The case: 2.67 M → 1.94 M is a 38 % spread, beyond ±2 %.
        let fell = kernel_curve_sentence(1, 1.94e6, 2.67e6, 0.02, 3);
        assert!(
            fell.contains("beyond") && !fell.contains("no dependence"),
            "{fell}"
        );
        let once = kernel_curve_sentence(1, 2.60e6, 2.67e6, 0.0, 1);
        assert!(
            once.contains("not known") && !once.contains("no dependence"),
            "{once}"
        );
    }

    #[test]
    fn spread_table_has_integers_and_plus_minus() {
        use crate::throughput::record::RecordMeta;
        use crate::throughput::{RunOutcome, ThreadOutcome, Workload};
        let outcome = RunOutcome {
            runtime_s: 1.0,
            threads: vec![ThreadOutcome {
                cpu: Some(0),
                ops: 1,
                secs: 1.0,
                cpu_secs: 1.0,
                unexpected: 0,
                first_addr: 0,
                last_addr: 0,
            }],
            latency_ns_p50: 1,
            latency_ns_p99: 1,
            latency_ns_p999: 1,
            latency_samples: 1,
        };
        let r = BenchRecord::new(
            RecordMeta {
                backend: Backend::Kernel,
                algo: "kernel".into(),
                table: TableKind::Private,
                layout: crate::throughput::Layout::Kernel,
                buckets: 16,
                futexes: 1024,
                workload: Workload::Hash,
                shared: false,
                slots_applied: None,
                pid: 0,
            },
            &outcome,
        );
        let groups = vec![(
            r,
            Spread::of(&[1_000_000.4, 1_100_000.0, 900_000.0]).unwrap(),
        )];
        let out = spread_table(&groups).render();
        assert!(out.contains("1,000,000 ±10%"), "{out}");
        assert!(out.contains("kernel ops/s"), "{out}");
    }
}

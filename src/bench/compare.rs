//! The performance figures of issue 5, measured side by side in one run and given as
//! ratios (`futexhash bench --compare`):
//!
//! * **model vs kernel** — one failing `FUTEX_WAIT` (hash, lock the bucket, compare,
//!   unlock) on the model table against the real system call, one thread, perf's loop over
//!   F words; ns per operation from the thread's CPU time (so a busy machine does not
//!   distort it). The model table is configured like the kernel's default for this process
//!   (private table of the automatic size, `jhash2-addr`); the kernel run happens in this
//!   process with its automatic private hash (nothing irreversible is set).
//! * **2 threads vs 1** — total operations/sec of two threads pinned to two CPUs against
//!   one thread, on a large aligned model table (65536 global buckets, so the threads
//!   practically never meet in a bucket or a cache line). Close to 2 is expected when two
//!   CPUs are free.
//!   The same runs are also given per CPU-second (`two_threads_vs_one_cpu`: the sum over
//!   threads of operations per second of CPU time each got), which a busy machine does not
//!   distort.
//! * **the machine's own scaling** — the same 2-vs-1 measurement on a trivially parallel
//!   loop (register arithmetic only), alternating with the table's runs, so the table's
//!   scaling is judged against what the machine gave two threads at that time
//!   (`table_scaling_vs_machine` = table ratio ÷ machine ratio; 1 = as good as possible).
//! * **aligned vs packed** — two threads, each hammering one futex whose keys land in
//!   *adjacent* buckets of the same 64-byte cache line of a packed table (32-byte buckets);
//!   the aligned table uses the same bucket indices, one per line. Packed buckets make the
//!   two threads' lock and waiter-count writes bounce one cache line (false sharing), the
//!   cost the 2013 thread (seed 003) measured and why `____cacheline_aligned_in_smp`
//!   buckets are used. Ratio = aligned ÷ packed operations per CPU-second (> 1 = the
//!   false-sharing cost; it only shows while both threads run at the same time).
//!
//! Each pair is measured `reps` times, alternating A and B so drifting background load hits
//! both alike; medians are reported.

use super::backend::{Keys, SYNTHETIC_MM, TableBackend, make_key};
use super::kernel::KernelBackend;
use super::options::BenchError;
use super::runner::{self, Backend, RunConfig, Worker};
use crate::hashers::{Builtin, HashKey};
use crate::key::FutexKey;
use crate::render::{MAIL_WIDTH, TextTable, fmt_grouped};
use crate::table::{
    Aligned, Geometry, GlobalTable, Layout, ModelSpec, ModelTable, Packed, Reduce, TableKind,
};
use crate::throughput::stats::ThroughputStats;
use crate::throughput::{RunOutcome, Workload};
use serde::Serialize;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// One figure: medians of A and B and their ratio.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// Short name: `model_vs_kernel`, `two_threads_vs_one`, `aligned_vs_packed`.
    pub figure: &'static str,
    /// What A is.
    pub a: String,
    /// Median of A.
    pub a_median: f64,
    /// What B is.
    pub b: String,
    /// Median of B.
    pub b_median: f64,
    /// Unit of the medians.
    pub unit: &'static str,
    /// `a_median / b_median`.
    pub ratio: f64,
    /// Largest deviation of one run of A from its median, in per cent.
    pub a_spread_pct: f64,
    /// Largest deviation of one run of B from its median, in per cent.
    pub b_spread_pct: f64,
    /// Median over the repetitions of each one's A/B (its A over the B measured next to
    /// it). Differs from `ratio` (the ratio of the medians) when A and B drift together.
    pub paired_ratio_median: f64,
    /// Largest deviation of one repetition's A/B from `paired_ratio_median`, in per cent.
    pub ratio_spread_pct: f64,
    /// Whether the figure meets its expectation, for the figures whose expectation is a
    /// number (`table_scaling_vs_machine`: paired A/B ≥ 0.95; `table_vs_machine_one_thread`:
    /// paired A/B within ±5 %); null for the others.
    pub meets: Option<bool>,
    /// The machine measured ([`crate::machine::MachineInfo::record_field`]).
    pub machine: String,
    /// What the issue expects of the ratio.
    pub expected: &'static str,
    /// Repetitions behind each median.
    pub reps: usize,
    /// Lowest CPU share any worker thread got (1 = never preempted).
    pub min_cpu_share: f64,
}

impl Figure {
    /// The figure of paired runs: `a[i]` and `b[i]` were measured one after the other.
    #[allow(clippy::too_many_arguments)]
    fn from_runs(
        figure: &'static str,
        a: String,
        a_runs: Vec<f64>,
        b: String,
        b_runs: Vec<f64>,
        unit: &'static str,
        expected: &'static str,
        min_cpu_share: f64,
    ) -> Figure {
        let pair_ratios: Vec<f64> = a_runs.iter().zip(&b_runs).map(|(x, y)| x / y).collect();
        let (a_median, b_median) = (median(&mut a_runs.clone()), median(&mut b_runs.clone()));
        Figure {
            figure,
            a,
            a_median,
            b,
            b_median,
            unit,
            ratio: a_median / b_median,
            a_spread_pct: spread_pct(&a_runs),
            b_spread_pct: spread_pct(&b_runs),
            paired_ratio_median: median(&mut pair_ratios.clone()),
            ratio_spread_pct: spread_pct(&pair_ratios),
            meets: None,
            machine: crate::machine::this_machine_line().to_string(),
            expected,
            reps: a_runs.len(),
            min_cpu_share,
        }
    }

    /// The figure with its verdict.
    fn judged(mut self, meets: impl Fn(&Figure) -> bool) -> Figure {
        self.meets = Some(meets(&self));
        self
    }
}

/// Largest |x / median − 1| over `v`, in per cent (0 for fewer than two values).
fn spread_pct(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = median(&mut v.to_vec());
    v.iter()
        .map(|x| (x / m - 1.0).abs() * 100.0)
        .fold(0.0, f64::max)
}

/// All figures of one `compare` run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figures {
    /// In the order above.
    pub figures: Vec<Figure>,
}

impl Figures {
    /// The rows (for CSV/JSON).
    pub fn rows(&self) -> Vec<Figure> {
        self.figures.clone()
    }

    /// A table plus one line per figure.
    pub fn render(&self) -> String {
        let mut t = TextTable::new(
            [
                "figure",
                "A",
                "median A",
                "B",
                "median B",
                "unit",
                "A/B",
                "paired A/B",
                "expected",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<String>>(),
        );
        for f in &self.figures {
            t.push(vec![
                f.figure.to_string(),
                f.a.clone(),
                with_spread(f.a_median, f.a_spread_pct, f.reps),
                f.b.clone(),
                with_spread(f.b_median, f.b_spread_pct, f.reps),
                f.unit.to_string(),
                format!("{:.3}", f.ratio),
                if f.reps > 1 {
                    format!(
                        "median {:.3}, runs within ±{:.1}%",
                        f.paired_ratio_median, f.ratio_spread_pct
                    )
                } else {
                    "one run".to_string()
                },
                match f.meets {
                    Some(true) => format!("{} — met", f.expected),
                    Some(false) => format!("{} — NOT MET", f.expected),
                    None => f.expected.to_string(),
                },
            ]);
        }
        // Figure names and their descriptions are long: within 100 columns (a mail) the
        // table is printed as one block of fields per figure.
        let mut s = t.render_records(MAIL_WIDTH);
        let share = self
            .figures
            .iter()
            .map(|f| f.min_cpu_share)
            .fold(1.0, f64::min);
        s.push_str(&format!(
            "medians of {} alternating runs each; lowest CPU share of a worker thread: {:.0}%{}\n",
            self.figures.first().map_or(0, |f| f.reps),
            share * 100.0,
            if share < 0.9 {
                "\nbusy machine: wall-clock ratios understate scaling"
            } else {
                ""
            }
        ));
        s
    }
}

/// A median in the unit's natural precision (no decimals from 1000 up — rates —, one from
/// 10 — nanoseconds —, three below — ratios), with the runs' spread when there are several.
fn with_spread(median: f64, spread_pct: f64, reps: usize) -> String {
    let digits = if median.abs() >= 1000.0 {
        0
    } else if median.abs() >= 10.0 {
        1
    } else {
        3
    };
    let m = fmt_grouped(median, digits);
    if reps > 1 {
        format!("{m} ±{spread_pct:.1}%")
    } else {
        m
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn rt(e: runner::RunError) -> BenchError {
    BenchError::runtime(e.0)
}

fn cpu_share(o: &RunOutcome) -> f64 {
    o.threads
        .iter()
        .map(|t| {
            if t.secs > 0.0 {
                t.cpu_secs / t.secs
            } else {
                0.0
            }
        })
        .fold(1.0, f64::min)
}

/// ns per operation from CPU time (mean over threads).
fn ns_per_op_cpu(o: &RunOutcome) -> f64 {
    let r = ThroughputStats::from_rates(
        &o.threads
            .iter()
            .map(|t| t.rate_per_cpu_sec())
            .collect::<Vec<_>>(),
    )
    .mean;
    if r > 0.0 { 1e9 / r } else { f64::NAN }
}

fn total_rate(o: &RunOutcome) -> f64 {
    o.threads.iter().map(|t| t.rate()).sum()
}

/// Mean per-thread operations per second of CPU time the thread got.
fn mean_cpu_rate(o: &RunOutcome) -> f64 {
    ThroughputStats::from_rates(
        &o.threads
            .iter()
            .map(|t| t.rate_per_cpu_sec())
            .collect::<Vec<_>>(),
    )
    .mean
}

/// Sum over threads of operations per CPU-second: what the threads would do with a CPU
/// each, whatever else runs on the machine.
fn total_cpu_rate(o: &RunOutcome) -> f64 {
    o.threads.iter().map(|t| t.rate_per_cpu_sec()).sum()
}

/// Runs A and B `reps` times alternately.
fn runs(
    reps: usize,
    mut a: impl FnMut() -> Result<RunOutcome, BenchError>,
    mut b: impl FnMut() -> Result<RunOutcome, BenchError>,
) -> Result<(Vec<RunOutcome>, Vec<RunOutcome>), BenchError> {
    let (mut va, mut vb) = (Vec::new(), Vec::new());
    for _ in 0..reps.max(1) {
        va.push(a()?);
        vb.push(b()?);
    }
    Ok((va, vb))
}

/// Measures A and B `reps` times alternately; returns each run's metric and the lowest CPU
/// share of any worker.
fn pair(
    reps: usize,
    a: impl FnMut() -> Result<RunOutcome, BenchError>,
    b: impl FnMut() -> Result<RunOutcome, BenchError>,
    metric: impl Fn(&RunOutcome) -> f64,
) -> Result<(Vec<f64>, Vec<f64>, f64), BenchError> {
    let (ra, rb) = runs(reps, a, b)?;
    let share = ra.iter().chain(&rb).map(cpu_share).fold(1.0, f64::min);
    Ok((
        ra.iter().map(&metric).collect(),
        rb.iter().map(&metric).collect(),
        share,
    ))
}

/// The machine's own scaling: a trivially parallel loop (xorshift rounds on a value in the
/// worker's registers; nothing in memory, nothing shared), run by the same runner, so two
/// threads against one shows what this machine gives two CPUs at that moment.
struct ParallelLoop;

/// One thread's private state of [`ParallelLoop`].
struct LoopWorker {
    x: u64,
}

impl LoopWorker {
    /// About as long as a model operation (tens of ns): 16 xorshift64 rounds.
    #[inline]
    fn step(&mut self) -> bool {
        for _ in 0..16 {
            self.x ^= self.x << 13;
            self.x ^= self.x >> 7;
            self.x ^= self.x << 17;
        }
        std::hint::black_box(self.x) != 0
    }
}

impl Worker for LoopWorker {
    #[inline]
    fn wait_fail(&mut self, _idx: usize) -> bool {
        self.step()
    }
    #[inline]
    fn wake(&mut self, _idx: usize) -> bool {
        self.step()
    }
}

impl Backend for ParallelLoop {
    type Worker<'a> = LoopWorker;
    fn worker(&self, thread: usize, _words: &[AtomicU32]) -> LoopWorker {
        LoopWorker {
            x: 0x9e37_79b9_7f4a_7c15 ^ thread as u64,
        }
    }
}

/// Bucket count of the false-sharing tables.
const FS_BUCKETS: usize = 1024;

/// Two private keys of [`SYNTHETIC_MM`] that hash (jhash2, mask) to buckets `i` and `i + 1`
/// where, in a packed table, both buckets lie in one 64-byte cache line.
fn adjacent_keys(packed: &GlobalTable<Builtin, Packed>) -> [FutexKey; 2] {
    let b = packed.buckets();
    let line = |i: usize| (&b[i] as *const Packed as usize) / 64;
    let first = (0..FS_BUCKETS - 1)
        .find(|&i| line(i) == line(i + 1))
        .expect("32-byte buckets: some neighbours share a line");
    let mut found: [Option<FutexKey>; 2] = [None, None];
    let mut addr: usize = 0x7f3a_5c20_0000;
    while found.iter().any(Option::is_none) {
        let k = make_key(SYNTHETIC_MM, addr, false);
        let i = packed.index_of(&k);
        if i == first && found[0].is_none() {
            found[0] = Some(k);
        } else if i == first + 1 && found[1].is_none() {
            found[1] = Some(k);
        }
        addr += 4;
    }
    [found[0].unwrap(), found[1].unwrap()]
}

/// Measures the figures: each measurement runs `runtime`, `reps` times alternately.
/// `futexes` is perf's F for the first two figures. Takes about `8 × reps × runtime`.
pub fn compare_with(runtime: Duration, futexes: usize, reps: usize) -> Result<Figures, BenchError> {
    let jhash = Builtin::by_name("jhash2", HashKey::DEFAULT).expect("jhash2");
    let mut figures = vec![model_vs_kernel(jhash, runtime, futexes, reps)?];
    figures.extend(scaling_figures(&ScalingRuns::measure(
        jhash, runtime, futexes, reps,
    )?));
    figures.push(aligned_vs_packed(jhash, runtime, reps)?);
    Ok(Figures { figures })
}

/// (a) model op vs syscall, 1 thread.
fn model_vs_kernel(
    jhash: Builtin,
    runtime: Duration,
    futexes: usize,
    reps: usize,
) -> Result<Figure, BenchError> {
    let jaddr = Builtin::by_name("jhash2-addr", HashKey::DEFAULT).expect("jhash2-addr");
    let mut spec = ModelSpec::new(jhash.shared(), TableKind::Private);
    spec.private_hasher = Some(jaddr.shared());
    let model = TableBackend::by_address(
        ModelTable::build(spec).map_err(|e| BenchError::runtime(e.to_string()))?,
        false,
    );
    let one = RunConfig::new(1, futexes, runtime, Workload::Hash);
    let (a, b, share) = pair(
        reps,
        || runner::run(&model, &one).map_err(rt),
        || runner::run(&KernelBackend { shared: false }, &one).map_err(rt),
        ns_per_op_cpu,
    )?;
    Ok(Figure::from_runs(
        "model_vs_kernel",
        format!("model op ({})", model.table.describe()),
        a,
        "kernel FUTEX_WAIT syscall".into(),
        b,
        "ns/op (CPU time)",
        "a small fraction (< 1)",
        share,
    ))
}

/// (b)'s runs: 2 threads and 1 on a large aligned table, and on [`ParallelLoop`].
struct ScalingRuns {
    table_two: Vec<RunOutcome>,
    table_one: Vec<RunOutcome>,
    loop_two: Vec<RunOutcome>,
    loop_one: Vec<RunOutcome>,
}

impl ScalingRuns {
    fn measure(
        jhash: Builtin,
        runtime: Duration,
        futexes: usize,
        reps: usize,
    ) -> Result<Self, BenchError> {
        let mut spec = ModelSpec::new(jhash.shared(), TableKind::Global);
        spec.buckets = Some(65536);
        let big = TableBackend::by_address(
            ModelTable::build(spec).map_err(|e| BenchError::runtime(e.to_string()))?,
            false,
        );
        let one = RunConfig::new(1, futexes, runtime, Workload::Hash);
        let two = RunConfig::new(2, futexes, runtime, Workload::Hash);
        // The table's and the trivially parallel loop's runs alternate within each
        // repetition (table 2, table 1, loop 2, loop 1), so the loop measures what the
        // machine gave at the same moments the table ran.
        let mut r = ScalingRuns {
            table_two: Vec::new(),
            table_one: Vec::new(),
            loop_two: Vec::new(),
            loop_one: Vec::new(),
        };
        for _ in 0..reps.max(1) {
            r.table_two.push(runner::run(&big, &two).map_err(rt)?);
            r.table_one.push(runner::run(&big, &one).map_err(rt)?);
            r.loop_two
                .push(runner::run(&ParallelLoop, &two).map_err(rt)?);
            r.loop_one
                .push(runner::run(&ParallelLoop, &one).map_err(rt)?);
        }
        Ok(r)
    }
}

/// (b) 2 threads vs 1 on a large aligned table, against the machine's own scaling.
fn scaling_figures(r: &ScalingRuns) -> Vec<Figure> {
    let (ra, rb, ma, mb) = (&r.table_two, &r.table_one, &r.loop_two, &r.loop_one);
    let share = ra.iter().chain(rb).map(cpu_share).fold(1.0, f64::min);
    let mshare = ma.iter().chain(mb).map(cpu_share).fold(1.0, f64::min);
    let ratios = |x: &[RunOutcome], y: &[RunOutcome], m: fn(&RunOutcome) -> f64| -> Vec<f64> {
        x.iter().zip(y).map(|(p, q)| m(p) / m(q)).collect()
    };
    let of =
        |v: &[RunOutcome], m: fn(&RunOutcome) -> f64| -> Vec<f64> { v.iter().map(m).collect() };
    vec![
        Figure::from_runs(
            "two_threads_vs_one",
            "2 threads, 65536 aligned buckets".into(),
            of(ra, total_rate),
            "1 thread".into(),
            of(rb, total_rate),
            "total ops/sec",
            "close to 2 (2 free CPUs)",
            share,
        ),
        Figure::from_runs(
            "two_threads_vs_one_cpu",
            "2 threads, 65536 aligned buckets (per CPU-second)".into(),
            of(ra, total_cpu_rate),
            "1 thread (per CPU-second)".into(),
            of(rb, total_cpu_rate),
            "total ops per CPU-second",
            "close to 2 (no shared lines)",
            share,
        ),
        Figure::from_runs(
            "machine_two_threads_vs_one_cpu",
            "2 threads, trivially parallel loop (per CPU-second)".into(),
            of(ma, total_cpu_rate),
            "1 thread (per CPU-second)".into(),
            of(mb, total_cpu_rate),
            "total loops per CPU-second",
            "the machine's own scaling (2 = perfect)",
            mshare,
        ),
        Figure::from_runs(
            "table_scaling_vs_machine",
            "table: 2 threads vs 1 per CPU-second".into(),
            ratios(ra, rb, total_cpu_rate),
            "machine: 2 threads vs 1 per CPU-second".into(),
            ratios(ma, mb, total_cpu_rate),
            "ratio",
            "paired A/B >= 0.95 (the table scales like the machine)",
            share.min(mshare),
        )
        .judged(|f| f.paired_ratio_median >= 0.95),
        // The table's one-thread rate in units of the machine's loop at the same moments:
        // the figure that stays put when the machine itself speeds up or slows down (on a
        // KVM guest the host's load moves both by tens of per cent within minutes).
        Figure::from_runs(
            "table_vs_machine_one_thread",
            "table: 1 thread, ops per CPU-second".into(),
            of(rb, total_cpu_rate),
            "machine: 1 thread, loops per CPU-second".into(),
            of(mb, total_cpu_rate),
            "table ops, loop iterations (each per CPU-second)",
            "paired A/B runs within ±5% (stability)",
            share.min(mshare),
        )
        .judged(|f| f.ratio_spread_pct <= 5.0),
    ]
}

/// (c) aligned vs packed, two threads on adjacent buckets.
fn aligned_vs_packed(jhash: Builtin, runtime: Duration, reps: usize) -> Result<Figure, BenchError> {
    let geo = Geometry {
        nodes: 1,
        per_node: FS_BUCKETS,
        reduce: Reduce::Mask,
        squash: false,
    };
    let packed_t = GlobalTable::<Builtin, Packed>::new(jhash, geo)
        .map_err(|e| BenchError::runtime(e.to_string()))?;
    let keys = adjacent_keys(&packed_t);
    let packed = TableBackend {
        table: packed_t,
        keys: Keys::PerThread(keys.to_vec()),
    };
    let aligned = TableBackend {
        table: GlobalTable::<Builtin, Aligned>::new(jhash, geo)
            .map_err(|e| BenchError::runtime(e.to_string()))?,
        keys: Keys::PerThread(keys.to_vec()),
    };
    let fs = RunConfig::new(2, 1, runtime, Workload::Hash);
    let (a, b, share) = pair(
        reps,
        || runner::run(&aligned, &fs).map_err(rt),
        || runner::run(&packed, &fs).map_err(rt),
        mean_cpu_rate,
    )?;
    Ok(Figure::from_runs(
        "aligned_vs_packed",
        format!(
            "{}: 2 threads on adjacent buckets",
            Layout::Aligned.as_str()
        ),
        a,
        "packed (same two buckets share a cache line)".into(),
        b,
        "ops per CPU-second per thread",
        "> 1 (false sharing in packed)",
        share,
    ))
}

/// [`compare_with`] with 3 repetitions.
pub fn compare(runtime: Duration, futexes: usize) -> Result<Figures, BenchError> {
    compare_with(runtime, futexes, 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_keys_share_a_line_only_when_packed() {
        let jhash = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let geo = Geometry {
            nodes: 1,
            per_node: FS_BUCKETS,
            reduce: Reduce::Mask,
            squash: false,
        };
        let p = GlobalTable::<Builtin, Packed>::new(jhash, geo).unwrap();
        let a = GlobalTable::<Builtin, Aligned>::new(jhash, geo).unwrap();
        let [k0, k1] = adjacent_keys(&p);
        let (i0, i1) = (p.index_of(&k0), p.index_of(&k1));
        assert_eq!(i1, i0 + 1);
        let pl = |i: usize| (&p.buckets()[i] as *const Packed as usize) / 64;
        let al = |i: usize| (&a.buckets()[i] as *const Aligned as usize) / 64;
        assert_eq!(pl(i0), pl(i1));
        assert_ne!(al(i0), al(i1));
    }

    #[test]
    fn figures_are_complete_and_positive() {
        let f = compare_with(Duration::from_millis(10), 64, 1).unwrap();
        assert_eq!(f.figures.len(), 7);
        let names: Vec<&str> = f.figures.iter().map(|x| x.figure).collect();
        assert!(
            names.contains(&"machine_two_threads_vs_one_cpu"),
            "{names:?}"
        );
        for x in &f.figures {
            assert!(x.a_median > 0.0 && x.b_median > 0.0, "{x:?}");
            assert!((x.ratio - x.a_median / x.b_median).abs() < 1e-9 * x.ratio.abs().max(1.0));
        }
        let s = f.render();
        assert!(s.contains("model_vs_kernel") && s.contains("aligned_vs_packed"));
        let widest = s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        assert!(widest <= 100, "{widest} columns:\n{s}");
    }

    #[test]
    fn spreads_are_the_largest_deviation_from_the_median_and_ratios_are_paired() {
        // Median 100; 90 is 10 % below it, 105 is 5 % above.
        assert!((spread_pct(&[100.0, 90.0, 105.0]) - 10.0).abs() < 1e-9);
        assert_eq!(spread_pct(&[7.0]), 0.0);
        // A drifts with B: every pair's ratio is exactly 2, so the paired spread is 0
        // although A and B each spread by 25 %.
        let f = Figure::from_runs(
            "x",
            "a".into(),
            vec![200.0, 250.0, 150.0],
            "b".into(),
            vec![100.0, 125.0, 75.0],
            "u",
            "e",
            1.0,
        );
        assert_eq!(f.ratio, 2.0);
        assert!((f.a_spread_pct - 25.0).abs() < 1e-9);
        assert!(f.ratio_spread_pct.abs() < 1e-12);
        assert_eq!(f.paired_ratio_median, 2.0);
        assert_eq!(f.meets, None);
        assert_eq!(f.clone().judged(|f| f.ratio > 1.5).meets, Some(true));
        // Paired ratios 2, 1, 4: their median (2) is not the ratio of the medians (2/2 = 1).
        let g = Figure::from_runs(
            "y",
            "a".into(),
            vec![2.0, 1.0, 4.0],
            "b".into(),
            vec![1.0, 1.0, 1.0],
            "u",
            "e",
            1.0,
        );
        assert_eq!((g.ratio, g.paired_ratio_median), (2.0, 2.0));
        assert!((g.ratio_spread_pct - 100.0).abs() < 1e-9);
        assert_eq!(f.reps, 3);
        assert!(with_spread(12_345_678.9, 2.04, 3) == "12,345,679 ±2.0%");
        assert!(with_spread(0.5, 0.0, 1) == "0.500");
    }

    #[test]
    fn medians() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}

//! `futexhash report`: the whole evaluation in one go, written as `DIR/report.md` with the
//! SVG plots it refers to. Each section runs the library (no shelling out), renders a
//! seed-style table, draws a plot and says in one sentence what it shows.
//!
//! Sections: the machine; hash cost measured in this run; distribution quality of the
//! eight seed algorithms on three workloads; the model table and the real kernel side by
//! side on this machine; the simulator's prediction for the seed thread's 256-CPU box
//! with its validation error against the published tables.

use crate::hashers::{Builtin, HashKey, KeyHasher, SEED_EIGHT, SharedHasher};
use crate::key::FutexKey;
use crate::render::plot::line_plot_svg;
use crate::render::{TextTable, fmt_grouped};
use crate::stats::{DistRecord, ExpectationCache, Reduce, Verdict, assign_verdicts, sweep};
use crate::workload::KeyWorkload;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How much work the report does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// About two minutes on a 2-CPU machine.
    Quick,
    /// The full evaluation (longer runs, more keys, more configurations).
    Full,
}

/// One section of the report: Markdown text and the plots it refers to (already written).
#[derive(Clone, Debug, Default)]
pub struct Section {
    /// Markdown, starting with a `##` heading.
    pub markdown: String,
    /// Files written for it.
    pub files: Vec<PathBuf>,
}

/// The eight seed hashers.
pub fn seed_hashers() -> Vec<SharedHasher> {
    SEED_EIGHT
        .iter()
        .map(|n| {
            Builtin::by_name(n, HashKey::DEFAULT)
                .expect("seed hasher")
                .shared()
        })
        .collect()
}

/// One plot series per hasher: `(buckets, value)` of the records `point` maps to that
/// hasher's name.
fn series_by_algo<R>(
    hashers: &[SharedHasher],
    records: &[R],
    point: impl Fn(&R) -> (&str, u64, f64),
) -> Vec<(String, Vec<(f64, f64)>)> {
    hashers
        .iter()
        .map(|h| {
            let pts = records
                .iter()
                .map(&point)
                .filter(|(algo, _, _)| *algo == h.name())
                .map(|(_, b, v)| (b as f64, v))
                .collect();
            (h.name().to_string(), pts)
        })
        .collect()
}

fn code_block(text: &str) -> String {
    format!("```\n{}```\n", text)
}

fn plot(
    dir: &Path,
    file: &str,
    title: &str,
    x: &str,
    y: &str,
    series: &[(String, Vec<(f64, f64)>)],
    section: &mut Section,
) -> Result<(), String> {
    let path = dir.join(file);
    line_plot_svg(&path, title, x, y, series, true)
        .map_err(|e| format!("cannot write plot '{}': {e}", path.display()))?;
    let _ = writeln!(section.markdown, "\n![{title}]({file})\n");
    section.files.push(path);
    Ok(())
}

/// The machine the report ran on.
pub fn machine_section() -> Section {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let private = if crate::bench::kernel::private_hash_supported() {
        "yes (`prctl(PR_FUTEX_HASH)` answers)"
    } else {
        "no: kernel runs use the global hash only"
    };
    let mut s = Section::default();
    let _ = write!(
        s.markdown,
        "## Machine\n\n| | |\n|---|---|\n| CPUs | {cpus} |\n| kernel | {kernel} |\n| private futex hash | {private} |\n| futexhash | {} |\n",
        env!("CARGO_PKG_VERSION")
    );
    if cpus <= 2 {
        s.markdown.push_str(
            "\nWith this few CPUs there is almost no bucket-lock contention to see: \
             measured curves are flat, and runs with more threads than CPUs measure the \
             scheduler, not the hash. The simulator section predicts large machines.\n",
        );
    }
    s
}

/// Cost of one hash per seed hasher, timed in this run (median of repeated batches; see
/// `cargo bench --bench hashers` for criterion's careful figures).
pub fn hash_cost_section(depth: Depth) -> Result<Section, String> {
    let keys = KeyWorkload::Perf
        .generate(Some(1 << 16), 7)
        .map_err(|e| e.to_string())?
        .keys;
    let reps = if depth == Depth::Quick { 7 } else { 21 };
    let mut rows: Vec<(String, f64)> = Vec::new();
    let mut out = vec![0u32; keys.len()];
    for h in seed_hashers() {
        let mut times: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                h.hash_many(std::hint::black_box(&keys), &mut out);
                std::hint::black_box(&out);
                t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64
            })
            .collect();
        times.sort_by(f64::total_cmp);
        rows.push((h.name().to_string(), times[times.len() / 2]));
    }
    let fastest = rows.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let mut t = TextTable::new(["hasher", "ns/hash", "vs fastest"]);
    let mut sorted = rows.clone();
    sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
    for (name, ns) in &sorted {
        t.push(vec![
            name.clone(),
            format!("{ns:.2}"),
            format!("{:.2}x", ns / fastest),
        ]);
    }
    let mut s = Section::default();
    let _ = write!(
        s.markdown,
        "## Hash cost\n\nMedian of {reps} batches of 65,536 `perf` keys, one core, this run. \
         Every hasher costs a small fraction of the ~200–300 ns futex syscall, which is why the \
         seed thread's throughput columns differ by only a few percent.\n\n{}",
        code_block(&t.render())
    );
    Ok(s)
}

/// Bucket counts shown in the distribution tables.
const DIST_ROWS: [u64; 9] = [16, 64, 256, 1024, 4096, 16384, 32768, 65536, 131072];

/// Distribution quality of the seed hashers on `perf`, `aslr` and `pages` keys.
pub fn distribution_section(dir: &Path, depth: Depth) -> Result<Section, String> {
    let mut s = Section::default();
    s.markdown.push_str(
        "## Distribution quality\n\nCollisions (`keys − occupied buckets`) divided by what a \
         uniformly random function would give, with the kernel's `mask` reduction: 1.00 is \
         random, above 1 is worse, below 1 more even than random (not a defect). Verdicts \
         are SMHasher3-style with a Bonferroni correction over the run (`docs/dist.md`).\n",
    );
    let buckets: Vec<u64> = (1..=17).map(|k| 1u64 << k).collect();
    let hashers = seed_hashers();
    for (workload, n) in [
        ("perf", None),
        (
            "aslr",
            Some(if depth == Depth::Quick {
                1 << 16
            } else {
                1 << 18
            }),
        ),
        ("pages", Some(1 << 16)),
    ] {
        let w: KeyWorkload = workload
            .parse()
            .map_err(|e: crate::workload::WorkloadError| e.to_string())?;
        let keys: Vec<FutexKey> = w.generate(n, 1).map_err(|e| e.to_string())?.keys;
        let mut cache = ExpectationCache::default();
        let mut records: Vec<DistRecord> = Vec::new();
        for h in &hashers {
            records.extend(
                sweep(h, workload, &keys, &buckets, &[Reduce::Mask], &mut cache)
                    .map_err(|e| e.to_string())?,
            );
        }
        assign_verdicts(&mut records);
        let mut headers = vec!["buckets".to_string()];
        headers.extend(hashers.iter().map(|h| h.name().to_string()));
        let mut t = TextTable::new(headers);
        for b in DIST_ROWS {
            let mut row = vec![b.to_string()];
            for h in &hashers {
                let r = records
                    .iter()
                    .find(|r| r.buckets == b && r.algo == h.name())
                    .expect("record per size");
                let mark = match r.verdict {
                    Verdict::Pass => "",
                    Verdict::Warn => " w",
                    Verdict::Fail => " F",
                };
                row.push(format!("{:.2}{mark}", r.collisions_ratio()));
            }
            t.push(row);
        }
        let flagged: Vec<String> = records
            .iter()
            .filter(|r| r.verdict != Verdict::Pass)
            .map(|r| format!("{}@{} ({})", r.algo, r.buckets, r.verdict.as_str()))
            .collect();
        let _ = write!(
            s.markdown,
            "\n### `{workload}` workload, {} keys\n\n{}\n{}\n",
            fmt_grouped(keys.len() as f64, 0),
            code_block(&t.render()),
            if flagged.is_empty() {
                "No hasher is flagged at any size.".to_string()
            } else {
                format!("Flagged (w = warn, F = fail): {}.", flagged.join(", "))
            }
        );
        let series = series_by_algo(&hashers, &records, |r| {
            (r.algo.as_str(), r.buckets, r.collisions_ratio())
        });
        plot(
            dir,
            &format!("dist-{workload}.svg"),
            &format!("collisions / random expectation, {workload} keys"),
            "buckets",
            "collisions ratio",
            &series,
            &mut s,
        )?;
    }
    Ok(s)
}

/// `perf bench futex hash` on this machine: the model table (jhash2 and jhash2-addr, the
/// kernel's global and private hashers) next to the real kernel, 1 thread and one per CPU,
/// plus the side-by-side cost figures of `futexhash bench --compare`.
pub fn throughput_section(dir: &Path, depth: Depth) -> Result<Section, String> {
    use crate::bench::compare::compare;
    use crate::bench::runner::allowed_cpus;
    use crate::bench::sweep::{BackendChoice, SweepSpec, sweep};
    use crate::throughput::record::{sweep_table, write_plot};
    use std::time::Duration;
    let quick = depth == Depth::Quick;
    let runtime = Duration::from_millis(if quick { 250 } else { 1000 });
    let buckets: Vec<u64> = if quick {
        vec![2, 16, 128, 1024, 0]
    } else {
        vec![2, 8, 32, 128, 512, 2048, 8192, 32768, 0]
    };
    let cpus = allowed_cpus().len().max(1);
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
    let result = sweep(&spec, &mut |_| {}).map_err(|e| e.to_string())?;
    let records = result.records();
    let figures = compare(runtime, 1024).map_err(|e| e.to_string())?;
    let mut s = Section::default();
    let _ = write!(
        s.markdown,
        "## Throughput on this machine: model table and real kernel\n\n`perf bench futex \
         hash`'s loop ({} s per configuration), mean per-thread ops/sec. `jhash2` and \
         `jhash2-addr` are the model table with that hasher (private table, aligned buckets; \
         0 = the global table); `kernel` is this machine's `futex(2)` with `PR_FUTEX_HASH` \
         slots. The model skips the syscall, so it runs several times faster; what to compare \
         is the shape across bucket counts, which on {cpus} CPU(s) is flat for the kernel: \
         there is no contention to relieve.\n\n{}",
        runtime.as_secs_f64(),
        code_block(&sweep_table(&records))
    );
    for w in &result.warnings {
        let _ = writeln!(s.markdown, "\n> {w}");
    }
    let path = dir.join("throughput.svg");
    write_plot(&path, "perf bench futex hash on this machine", &records)
        .map_err(|e| format!("cannot write plot '{}': {e}", path.display()))?;
    s.markdown
        .push_str("\n![perf bench futex hash on this machine](throughput.svg)\n");
    s.files.push(path);
    let _ = write!(
        s.markdown,
        "\nSide by side in one run (`futexhash bench --compare`): the cost of a model \
         operation against the kernel's syscall, how two threads scale on a large aligned \
         table, and what packing buckets into shared cache lines costs.\n\n{}",
        code_block(&figures.render())
    );
    Ok(s)
}

/// The simulator's prediction of the seed thread's 240-thread table on its 256-CPU box,
/// and the validation error against the published tables.
pub fn simulation_section(dir: &Path, depth: Depth, data_dir: &Path) -> Result<Section, String> {
    use crate::sim::sweep::{SimSweep, run_sweep};
    use crate::sim::validate::{
        calibrate_seed_box, predict_published, rms_log_error, seed_box_template,
    };
    use crate::sim::{SimLength, SimOp};
    use crate::throughput::record::sweep_table;
    let len = if depth == Depth::Quick {
        SimLength {
            warmup_ops: 100,
            measured_ops: 500,
        }
    } else {
        SimLength::default()
    };
    let profile = calibrate_seed_box(data_dir, &seed_box_template(), [0, 2], len)?;
    let buckets: Vec<u64> = if depth == Depth::Quick {
        (1..=17).step_by(2).map(|k| 1u64 << k).collect()
    } else {
        (1..=17).map(|k| 1u64 << k).collect()
    };
    let sweep = SimSweep {
        threads: vec![240],
        futexes: 1024,
        buckets,
        hashers: seed_hashers(),
        op: SimOp::WaitFail,
        node: None,
        len,
        seed: 1,
    };
    let records = run_sweep(&profile, &sweep, || {})?;
    let validation = predict_published(data_dir, &profile, [0, 2], len)?;
    let rms = |table: &str| rms_log_error(validation.iter().filter(|r| r.table == table));
    let mut s = Section::default();
    let _ = write!(
        s.markdown,
        "## Prediction: the seed thread's 256-CPU box\n\nA discrete-event simulation of 240 \
         threads running perf's loop on a 2-node, 256-CPU machine, calibrated on two rows \
         (global hash and 4 slots) of the published 240-thread table; cells are predicted \
         mean per-thread ops/sec. Against the published tables it was not fitted to, the RMS \
         log error is {:.3} (240-thread slots), {:.3} (eight algorithms) and {:.3} (110 \
         threads pinned to one node): `futexhash sim validate` prints every row.\n\n{}",
        rms("buckets-240threads-256cpu.csv"),
        rms("algos-240threads-256cpu.csv"),
        rms("buckets-110threads-node1-256cpu.csv"),
        code_block(&sweep_table(&records))
    );
    let series = series_by_algo(&sweep.hashers, &records, |r| {
        (r.algo.as_str(), r.buckets, r.ops_per_sec)
    });
    plot(
        dir,
        "sim-256cpu.svg",
        "simulated 256-CPU box, 240 threads",
        "private hash slots",
        "ops/sec per thread",
        &series,
        &mut s,
    )?;
    let published = validation
        .iter()
        .filter(|r| r.table == "buckets-240threads-256cpu.csv" && r.buckets > 0);
    let pts = |f: fn(&crate::sim::validate::ValidationRow) -> f64| {
        published
            .clone()
            .map(|r| (r.buckets as f64, f(r)))
            .collect::<Vec<_>>()
    };
    plot(
        dir,
        "sim-validation.svg",
        "published vs simulated, 240 threads, jhash2",
        "private hash slots",
        "ops/sec per thread",
        &[
            ("published".to_string(), pts(|r| r.published)),
            ("simulated".to_string(), pts(|r| r.predicted)),
        ],
        &mut s,
    )?;
    Ok(s)
}

/// Writes `report.md` from the sections, atomically.
pub fn write_report(dir: &Path, title_note: &str, sections: &[Section]) -> Result<PathBuf, String> {
    let mut md = format!("# futexhash report\n\n{title_note}\n\n");
    for s in sections {
        md.push_str(&s.markdown);
        md.push('\n');
    }
    let path = dir.join("report.md");
    crate::render::write_atomic(Some(&path), md.as_bytes())
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_section_flags_what_the_statistics_flag() {
        let dir = std::env::temp_dir().join(format!("fh-eval-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let s = distribution_section(&dir, Depth::Quick).unwrap();
        assert_eq!(s.files.len(), 3);
        for f in &s.files {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"));
        }
        assert!(s.markdown.contains("### `perf` workload, 245,760 keys"));
        // hash_long with the kernel's mask on perf keys fills at most ~16.8K buckets
        // (docs/dist.md): the report must show it failing at 131072.
        assert!(
            s.markdown.contains("hash_long@131072 (fail)"),
            "{}",
            s.markdown
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

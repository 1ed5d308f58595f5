//! Cost of one futex-table operation on the user-space model table (`futexhash::table`):
//! FUTEX_WAIT that fails at once (the word changed: the EAGAIN path that `perf bench futex
//! hash` measures) and FUTEX_WAKE with no waiters (the lockless empty check of the 2013
//! series, seed 003), for `aligned` vs `packed` buckets, a small (16) vs a large (65536)
//! table, and the global vs the private (`PR_FUTEX_HASH`) kind, on keys of the `perf` and
//! `aslr` workloads (pre-generated, seeded, `black_box`ed).
//!
//! Ids: `{op}/{workload}/{hasher}/{kind}-{layout}-{buckets}`, e.g.
//! `wait_eagain/perf/jhash2/global-aligned-65536`. The global kind hashes with `jhash2`; the
//! private kind with `jhash2-addr`, the kernel's private-hash function. Each iteration runs
//! the operation once on each of 1024 keys (each with its own futex word, as `perf bench
//! futex hash` has), so criterion's per-element throughput is operations per second. After
//! the run a summary prints the median ns/op and the packed/aligned and large/small ratios.
//! `cargo bench --bench table_ops -- --quick` is a fast pass.

use criterion::{BenchmarkId, Criterion, Throughput};
use futexhash::hashers::{Builtin, HashKey};
use futexhash::key::FutexKey;
use futexhash::table::{Layout, ModelSpec, ModelTable, TableKind, WaitError};
use futexhash::workload::KeyWorkload;
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

const BATCH: usize = 1024;
const WORKLOADS: [&str; 2] = ["perf", "aslr"];
const OPS: [&str; 2] = ["wait_eagain", "wake_none"];
const KINDS: [(TableKind, &str); 2] = [
    (TableKind::Global, "jhash2"),
    (TableKind::Private, "jhash2-addr"),
];
const LAYOUTS: [Layout; 2] = [Layout::Aligned, Layout::Packed];
const SIZES: [usize; 2] = [16, 65536];

fn keys(workload: &str) -> Vec<FutexKey> {
    let w: KeyWorkload = workload.parse().expect("workload name");
    w.generate(Some(BATCH), 42).expect("generate keys").keys
}

fn table(kind: TableKind, hasher: &str, layout: Layout, buckets: usize) -> ModelTable {
    let h = Builtin::by_name(hasher, HashKey::DEFAULT).expect("hasher name");
    let mut spec = ModelSpec::new(h.shared(), kind);
    spec.layout = layout;
    spec.buckets = Some(buckets);
    spec.cpus = Some(2);
    ModelTable::build(spec).expect("valid table")
}

fn variant(kind: TableKind, layout: Layout, buckets: usize) -> String {
    format!("{}-{}-{buckets}", kind.as_str(), layout.as_str())
}

/// Every key once: a wait whose word differs from `expected` (must be EAGAIN).
fn wait_eagain(t: &ModelTable, keys: &[FutexKey], words: &[AtomicU32]) -> usize {
    let mut n = 0;
    for (k, w) in keys.iter().zip(words) {
        let r = t.wait(black_box(k), w, 0, None);
        n += (r == Err(WaitError::WouldBlock)) as usize;
    }
    n
}

/// Every key once: a wake of one waiter where there is none.
fn wake_none(t: &ModelTable, keys: &[FutexKey]) -> usize {
    keys.iter().map(|k| t.wake(black_box(k), 1)).sum()
}

fn bench_table_ops(c: &mut Criterion) {
    // Every word is 1 and every wait expects 0: no wait ever blocks.
    let words: Vec<AtomicU32> = (0..BATCH).map(|_| AtomicU32::new(1)).collect();
    for op in OPS {
        for workload in WORKLOADS {
            let keys = keys(workload);
            let mut group = c.benchmark_group(format!("{op}/{workload}"));
            group.throughput(Throughput::Elements(keys.len() as u64));
            group.warm_up_time(Duration::from_millis(500));
            group.measurement_time(Duration::from_secs(2));
            for (kind, hasher) in KINDS {
                for layout in LAYOUTS {
                    for buckets in SIZES {
                        let t = table(kind, hasher, layout, buckets);
                        let id = BenchmarkId::new(hasher, variant(kind, layout, buckets));
                        group.bench_with_input(id, &keys, |b, keys| match op {
                            "wait_eagain" => {
                                assert_eq!(wait_eagain(&t, keys, &words), keys.len());
                                b.iter(|| black_box(wait_eagain(&t, keys, &words)))
                            }
                            _ => {
                                assert_eq!(wake_none(&t, keys), 0);
                                b.iter(|| black_box(wake_none(&t, keys)))
                            }
                        });
                    }
                }
            }
            group.finish();
        }
    }
}

/// Median ns per operation of one benchmark, from criterion's saved estimates.
fn median_ns_per_op(op: &str, workload: &str, hasher: &str, variant: &str) -> Option<f64> {
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let path = Path::new(&target)
        .join("criterion")
        .join(format!("{op}_{workload}"))
        .join(hasher)
        .join(variant)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(v["median"]["point_estimate"].as_f64()? / BATCH as f64)
}

/// Median ns/op of each variant and the ratios packed/aligned and 65536/16 buckets.
fn print_summary() {
    let [small, large] = SIZES;
    println!("\ntable ops: median ns/op (packed/aligned and {large}/{small} ratios):");
    println!(
        "| op | workload | kind | aligned-{small} | aligned-{large} | packed-{small} | packed-{large} \
         | packed/aligned {small} | packed/aligned {large} | {large}/{small} aligned | {large}/{small} packed |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for op in OPS {
        for workload in WORKLOADS {
            for (kind, hasher) in KINDS {
                let get = |layout, buckets| {
                    median_ns_per_op(op, workload, hasher, &variant(kind, layout, buckets))
                };
                let (Some(a_s), Some(a_l), Some(p_s), Some(p_l)) = (
                    get(Layout::Aligned, small),
                    get(Layout::Aligned, large),
                    get(Layout::Packed, small),
                    get(Layout::Packed, large),
                ) else {
                    continue; // filtered run
                };
                println!(
                    "| {op} | {workload} | {} | {a_s:.2} | {a_l:.2} | {p_s:.2} | {p_l:.2} \
                     | {:.2} | {:.2} | {:.2} | {:.2} |",
                    kind.as_str(),
                    p_s / a_s,
                    p_l / a_l,
                    a_l / a_s,
                    p_l / p_s
                );
            }
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_table_ops(&mut c);
    c.final_summary();
    print_summary();
}

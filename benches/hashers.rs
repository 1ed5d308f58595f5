//! Cost of one hash, per hasher and scope, on keys of the `perf` and `aslr` workloads
//! (pre-generated, seeded, `black_box`ed), ranked the way SMHasher ranks small-key speed.
//!
//! Ids: `hash/{workload}/{hasher}`; each iteration hashes a batch of 1024 keys, so
//! criterion's per-element throughput is hashes per second. After the run a ranking of the
//! eight seed algorithms (median ns/hash from criterion's estimates, and the geometric
//! mean over both workloads) is printed; `cargo bench --bench hashers -- --quick` is a fast
//! pass.

use criterion::{BenchmarkId, Criterion, Throughput};
use futexhash::hashers::{Builtin, HashKey, KeyHasher, SEED_EIGHT, all_builtins};
use futexhash::key::FutexKey;
use futexhash::with_builtin;
use futexhash::workload::KeyWorkload;
use std::hint::black_box;
use std::path::Path;

const BATCH: usize = 1024;
const WORKLOADS: [&str; 2] = ["perf", "aslr"];

fn keys(workload: &str) -> Vec<FutexKey> {
    let w: KeyWorkload = workload.parse().expect("workload name");
    w.generate(Some(BATCH), 42).expect("generate keys").keys
}

/// Hashes every key with the concrete hasher type (monomorphised, no dispatch per key).
fn hash_batch<H: KeyHasher>(h: &H, keys: &[FutexKey]) -> u32 {
    let mut acc = 0u32;
    for k in keys {
        acc ^= h.hash(black_box(k));
    }
    acc
}

fn bench_hashers(c: &mut Criterion) {
    for workload in WORKLOADS {
        let keys = keys(workload);
        let mut group = c.benchmark_group(format!("hash/{workload}"));
        group.throughput(Throughput::Elements(keys.len() as u64));
        for h in all_builtins(HashKey::DEFAULT) {
            group.bench_with_input(
                BenchmarkId::from_parameter(h.name()),
                &keys,
                |b, keys| with_builtin!(&h, inner => b.iter(|| black_box(hash_batch(inner, keys)))),
            );
        }
        group.finish();
    }
}

/// Median ns per hash of one benchmark, from criterion's saved estimates.
fn median_ns_per_hash(workload: &str, hasher: &str) -> Option<f64> {
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let path = Path::new(&target)
        .join("criterion")
        .join(format!("hash_{workload}"))
        .join(hasher)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(v["median"]["point_estimate"].as_f64()? / BATCH as f64)
}

fn print_ranking() {
    let mut rows: Vec<(String, Vec<f64>, f64)> = Vec::new();
    for name in SEED_EIGHT {
        let h = Builtin::by_name(name, HashKey::DEFAULT).expect("seed hasher");
        let costs: Option<Vec<f64>> = WORKLOADS
            .iter()
            .map(|w| median_ns_per_hash(w, h.name()))
            .collect();
        let Some(costs) = costs else {
            return; // filtered run: nothing to rank
        };
        let geo = (costs.iter().map(|c| c.ln()).sum::<f64>() / costs.len() as f64).exp();
        rows.push((name.to_string(), costs, geo));
    }
    rows.sort_by(|a, b| a.2.total_cmp(&b.2));
    println!("\nseed algorithms ranked by median ns/hash (geometric mean over workloads):");
    println!("| rank | hasher | perf ns | aslr ns | geo-mean ns | vs fastest |");
    println!("|---:|---|---:|---:|---:|---:|");
    let best = rows.first().map_or(1.0, |r| r.2);
    for (i, (name, costs, geo)) in rows.iter().enumerate() {
        println!(
            "| {} | {name} | {:.2} | {:.2} | {geo:.2} | {:.2}x |",
            i + 1,
            costs[0],
            costs[1],
            geo / best
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_hashers(&mut c);
    c.final_summary();
    print_ranking();
}

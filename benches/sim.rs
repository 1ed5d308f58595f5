//! Simulator speed: per configuration of the seed table (perf's loop, 240 threads, 1024
//! futexes per thread, 1700 operations per thread) on the 256-CPU profile — a contended
//! (16 slots) and an uncontended (65536) size, the 6.16 shared reference, and seed 003's
//! oversubscribed ticket-lock case (512 threads on 160 CPUs, packed 256 buckets) — and the
//! whole 17-size × 8-algorithm table on every core, as `futexhash sim --profile
//! seed-256cpu -t 240 --algo seed` runs it (also as configurations per second).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futexhash::hashers::{Builtin, HashKey};
use futexhash::sim::calibrate::{Scenario, global_hash_size};
use futexhash::sim::kernel::Kernel;
use futexhash::sim::sweep::{SimSweep, run_sweep};
use futexhash::sim::validate::{perf_keys_per_thread, seed_box_template, seed003_box_template};
use futexhash::sim::{Design, Refcount, SimLength, SimOp, simulate};
use std::hint::black_box;

fn bench_sim(c: &mut Criterion) {
    let mut profile = seed_box_template();
    // Fixed hash costs so the benchmark does not time the hashers.
    profile.hash_ns.insert("jhash2".into(), 5.0);
    let scenario = |threads: usize, cpus: u32, design: Design| Scenario {
        keys_per_thread: perf_keys_per_thread(threads, 1024, 1).expect("perf keys"),
        cpus: (0..cpus).collect(),
        global_buckets: global_hash_size(cpus),
        op: SimOp::WaitFail,
        design,
        global_nodes: 1,
        mechanisms: Default::default(),
    };
    let h = Builtin::by_name("jhash2", HashKey::DEFAULT).expect("jhash2");
    let mut group = c.benchmark_group("sim/perf/jhash2");
    group.sample_size(10);
    let s240 = scenario(240, profile.cpus, Design::default());
    for buckets in [16u64, 65536] {
        let w = s240.workload(&h, buckets);
        group.bench_function(format!("240threads-{buckets}"), |b| {
            b.iter(|| black_box(simulate(&profile, &w, 5.0, SimLength::default())))
        });
    }
    let shared = scenario(
        240,
        profile.cpus,
        Design {
            refcount: Refcount::Shared,
            ..Design::default()
        },
    );
    let w = shared.workload(&h, 1024);
    group.bench_function("240threads-1024-refcount-shared", |b| {
        b.iter(|| black_box(simulate(&profile, &w, 5.0, SimLength::default())))
    });
    let old = seed003_box_template();
    let mut s512 = scenario(512, old.cpus, Kernel::V3_12.design());
    s512.global_buckets = 256;
    let w = s512.workload(&h, 0);
    group.bench_function("512threads-160cpus-3.12", |b| {
        b.iter(|| black_box(simulate(&old, &w, 5.0, SimLength::default())))
    });
    group.finish();

    let mut table = c.benchmark_group("sim/table");
    table.sample_size(10);
    let hashers: Vec<_> = [
        "jhash2",
        "jhash2-addr",
        "xxhash",
        "hash_long",
        "crc32c",
        "crc32",
        "siphash",
        "hsiphash",
    ]
    .iter()
    .map(|n| {
        Builtin::by_name(n, HashKey::DEFAULT)
            .expect("seed hasher")
            .shared()
    })
    .collect();
    for hh in &hashers {
        profile.hash_ns.insert(hh.name().to_string(), 5.0);
    }
    let sweep = SimSweep {
        threads: vec![240],
        futexes: 1024,
        buckets: (1..=17).map(|k| 1u64 << k).collect(),
        hashers,
        op: SimOp::WaitFail,
        node: None,
        len: SimLength::default(),
        seed: 1,
    };
    // Reported also as configurations per second: the table's time per configuration,
    // on every core.
    table.throughput(Throughput::Elements(sweep.configurations() as u64));
    table.bench_function("240threads-17sizes-8algos", |b| {
        b.iter(|| black_box(run_sweep(&profile, &sweep, || {}).expect("sweep")))
    });
    table.finish();
}

criterion_group!(benches, bench_sim);
criterion_main!(benches);

//! Simulator speed: one 240-thread configuration of the seed table (perf's loop, 1024
//! futexes per thread, 1700 operations per thread) on the 256-CPU profile, at a contended
//! (16 slots) and an uncontended (65536) size. A whole 17-size × 8-algorithm table is 136
//! such runs: multiply the median by 136 (`futexhash sim --profile seed-256cpu -t 240
//! --algo seed` does exactly that table).

use criterion::{Criterion, criterion_group, criterion_main};
use futexhash::hashers::{Builtin, HashKey};
use futexhash::sim::calibrate::{Scenario, global_hash_size};
use futexhash::sim::validate::{perf_keys_per_thread, seed_box_template};
use futexhash::sim::{SimLength, SimOp, simulate};
use std::hint::black_box;

fn bench_sim(c: &mut Criterion) {
    let profile = seed_box_template();
    let scenario = Scenario {
        keys_per_thread: perf_keys_per_thread(240, 1024, 1).expect("perf keys"),
        cpus: (0..profile.cpus).collect(),
        global_buckets: global_hash_size(profile.cpus),
        op: SimOp::WaitFail,
    };
    let h = Builtin::by_name("jhash2", HashKey::DEFAULT).expect("jhash2");
    let mut group = c.benchmark_group("sim/perf/jhash2");
    group.sample_size(10);
    for buckets in [16u64, 65536] {
        let w = scenario.workload(&h, buckets);
        group.bench_function(format!("240threads-{buckets}"), |b| {
            b.iter(|| black_box(simulate(&profile, &w, 0.0, SimLength::default())))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_sim);
criterion_main!(benches);

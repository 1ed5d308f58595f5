//! The issue-3 speed target: the eight seed algorithms × every table size 2..131072 (mask)
//! over one million keys, i.e. one `futexhash dist` sweep minus output: hash every key once
//! per algorithm, build the 131072-bucket histogram, fold it down to 2 buckets, and compute
//! every statistic (expectations are cached per (keys, buckets) as in the CLI, so they are
//! computed once per sweep, included in the timing).
//!
//! Run: `cargo bench --bench dist_sweep` (reports the median of the samples).

use criterion::{Criterion, criterion_group, criterion_main};
use futexhash::hashers::{Builtin, HashKey, SEED_EIGHT};
use futexhash::stats::{ExpectationCache, Reduce, assign_verdicts, sweep};
use futexhash::workload::KeyWorkload;
use std::hint::black_box;

fn dist_sweep(c: &mut Criterion) {
    let keys = KeyWorkload::Random.generate(Some(1 << 20), 1).unwrap().keys;
    let hashers: Vec<Builtin> = SEED_EIGHT
        .iter()
        .map(|n| Builtin::by_name(n, HashKey::DEFAULT).unwrap())
        .collect();
    let buckets: Vec<u64> = (1..=17).map(|b| 1u64 << b).collect();
    let mut g = c.benchmark_group("dist_sweep");
    g.sample_size(10);
    g.bench_function("seed8_x_2..131072_x_1M_keys_mask", |b| {
        b.iter(|| {
            let mut cache = ExpectationCache::default();
            let mut recs = Vec::new();
            for h in &hashers {
                recs.extend(
                    sweep(h, "random", &keys, &buckets, &[Reduce::Mask], &mut cache)
                        .expect("power-of-two sizes"),
                );
            }
            assign_verdicts(&mut recs);
            black_box(recs)
        })
    });
    g.finish();
}

criterion_group!(benches, dist_sweep);
criterion_main!(benches);

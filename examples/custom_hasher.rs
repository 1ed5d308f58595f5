//! A hasher of your own through every instrument, with the library's public API only:
//! the distribution statistics (`futexhash dist`), the model bucket table under
//! `perf bench futex hash`'s loop (`futexhash bench --backend model`) and the contention
//! simulator (`futexhash sim`).
//!
//! ```sh
//! cargo run --release --example custom_hasher
//! ```
//!
//! The hasher here is FNV-1a over the key's 16 bytes, seeded with the offset word; the
//! example prints how it compares with the kernel's jhash2 in each instrument.

use futexhash::bench::{BackendChoice, SweepSpec, sweep};
use futexhash::hashers::{Builtin, HashKey, SharedHasher};
use futexhash::sim::profile::MachineProfile;
use futexhash::sim::sweep::{SimSweep, run_sweep};
use futexhash::sim::{SimLength, SimOp};
use futexhash::stats::{ExpectationCache, Reduce, assign_verdicts};
use futexhash::workload::KeyWorkload;
use futexhash::{FutexKey, KeyHasher, Scope};
use std::sync::Arc;
use std::time::Duration;

/// FNV-1a (Fowler, Noll, Vo; 32-bit offset basis 2166136261, prime 16777619) over
/// `w0 ‖ w1`, starting from the offset word.
struct Fnv1a;

impl KeyHasher for Fnv1a {
    fn name(&self) -> &str {
        "fnv1a"
    }
    fn scope(&self) -> Scope {
        Scope::Full
    }
    fn hash(&self, key: &FutexKey) -> u32 {
        let mut h = 2_166_136_261u32 ^ key.offset();
        for b in key.full_bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(16_777_619);
        }
        h
    }
}

fn main() {
    let mine: SharedHasher = Arc::new(Fnv1a);
    let jhash2 = Builtin::by_name("jhash2", HashKey::DEFAULT)
        .expect("built-in")
        .shared();
    let hashers = [mine.clone(), jhash2.clone()];

    // 1. Distribution: perf's keys, 16..65536 buckets, the kernel's mask reduction.
    let keys = KeyWorkload::Perf.generate(None, 1).expect("perf keys").keys;
    let buckets: Vec<u64> = (4..=16).map(|b| 1u64 << b).collect();
    let mut cache = ExpectationCache::default();
    let mut records = Vec::new();
    for h in &hashers {
        records.extend(
            futexhash::stats::sweep(&**h, "perf", &keys, &buckets, &[Reduce::Mask], &mut cache)
                .expect("power-of-two sizes"),
        );
    }
    assign_verdicts(&mut records);
    println!("distribution on {} perf keys (mask):", keys.len());
    for r in records
        .iter()
        .filter(|r| r.buckets == 65536 || r.buckets == 256)
    {
        println!(
            "  {:8} {:6} buckets: collisions {:7} (random: {:9.1})  {}",
            r.algo,
            r.buckets,
            r.collisions,
            r.collisions_expected,
            r.verdict.as_str()
        );
    }

    // 2. The model table under perf's loop, one thread, 0.2 s per configuration.
    let mut spec = SweepSpec::new(
        vec![BackendChoice::Model],
        Some(vec![16]),
        Duration::from_millis(200),
    );
    spec.model.algos = hashers.to_vec();
    spec.threads = vec![1];
    let result = sweep(&spec, &mut |_| {}).expect("model sweep");
    println!("model table, 1 thread, 16 private slots:");
    for r in &result.records() {
        println!("  {:8} {:>12.0} ops/s", r.algo, r.ops_per_sec);
    }

    // 3. The simulator: the published 256-CPU machine, 240 threads, 16 private slots.
    let profile_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines/seed-256cpu.toml");
    let profile = MachineProfile::load(&profile_path).expect("shipped profile");
    let sim = SimSweep {
        threads: vec![240],
        futexes: 1024,
        buckets: vec![16],
        hashers: hashers.to_vec(),
        op: SimOp::WaitFail,
        node: None,
        len: SimLength::default(),
        seed: 1,
    };
    let predicted = run_sweep(&profile, &sim, || {}).expect("simulation");
    println!(
        "simulated on {} ({} CPUs), 240 threads:",
        profile.name, profile.cpus
    );
    for r in &predicted {
        println!("  {:8} {:>12.0} ops/s per thread", r.algo, r.ops_per_sec);
    }
}

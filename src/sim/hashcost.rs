//! What one hash costs, for the simulator: the profile's figure for that hasher when it
//! has one (measured on the profiled machine), else timed here on this machine — never a
//! guess by name and never silently zero.
//!
//! The timing is the batch loop of `futexhash report`'s hash-cost section: `hash_many`
//! over a batch of `perf`-workload keys (perf's own heap layout), repeated; the lower
//! quartile of the batch times is taken, not the median: interference from other work
//! only ever adds time, and on a loaded machine (load average 16 on 2 CPUs here) more
//! than half the batches of one run were once slowed 20-fold.

use super::profile::MachineProfile;
use crate::hashers::KeyHasher;
use crate::sim::SimError;
use crate::workload::KeyWorkload;
use std::time::Instant;

/// Keys per timed batch.
pub const BATCH_KEYS: usize = 1 << 14;
/// Timed batches; the lower quartile is taken.
pub const BATCHES: usize = 15;
/// Smallest cost a measurement reports, ns: a batch faster than the clock's resolution
/// still costs something.
pub const MIN_HASH_NS: f64 = 0.01;

/// Where a hash cost came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashCostSource {
    /// The profile's `[hash_ns]` table.
    Profile,
    /// Timed on the machine running the simulator.
    Measured,
}

impl HashCostSource {
    /// `profile` or `measured`, as records print it.
    pub fn as_str(self) -> &'static str {
        match self {
            HashCostSource::Profile => "profile",
            HashCostSource::Measured => "measured",
        }
    }
}

/// One hasher's cost and its source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HashCost {
    /// ns per hash.
    pub ns: f64,
    /// Where it came from.
    pub source: HashCostSource,
}

/// Times `hasher` here: lower-quartile ns per key over [`BATCHES`] batches of
/// [`BATCH_KEYS`] `perf` keys, at least [`MIN_HASH_NS`].
pub fn measure_hash_ns<H: KeyHasher + ?Sized>(hasher: &H) -> Result<f64, SimError> {
    let keys = KeyWorkload::Perf
        .generate(Some(BATCH_KEYS), 7)
        .map_err(|e| SimError::Machine(e.to_string()))?
        .keys;
    let mut out = vec![0u32; keys.len()];
    // One untimed batch: page in the keys and the code.
    hasher.hash_many(&keys, &mut out);
    let mut times: Vec<f64> = (0..BATCHES)
        .map(|_| {
            let t = Instant::now();
            hasher.hash_many(std::hint::black_box(&keys), &mut out);
            std::hint::black_box(&out);
            t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 4].max(MIN_HASH_NS))
}

/// The cost the simulator uses for `hasher` on `profile`.
pub fn hash_cost<H: KeyHasher + ?Sized>(
    profile: &MachineProfile,
    hasher: &H,
) -> Result<HashCost, SimError> {
    match profile.hash_cost(hasher.name()) {
        Some(ns) => Ok(HashCost {
            ns,
            source: HashCostSource::Profile,
        }),
        None => Ok(HashCost {
            ns: measure_hash_ns(hasher)?,
            source: HashCostSource::Measured,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Builtin, HashKey};
    use crate::key::FutexKey;

    /// A hasher that does a known, large amount of work per key, so its measured cost
    /// must be well above zero and above a trivial one.
    struct Slow;
    impl KeyHasher for Slow {
        fn name(&self) -> &str {
            "slow"
        }
        fn scope(&self) -> crate::hashers::Scope {
            crate::hashers::Scope::Full
        }
        fn hash(&self, k: &FutexKey) -> u32 {
            let mut h = k.address() as u32;
            for i in 0..200u32 {
                h = std::hint::black_box(h.rotate_left(5) ^ i).wrapping_mul(0x9e37_79b9);
            }
            h
        }
    }

    #[test]
    fn the_profile_figure_wins_else_it_is_measured_and_never_zero() {
        let mut p = MachineProfile::minimal("p", 2, 1);
        p.hash_ns.insert("jhash2".into(), 5.0);
        let j = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let c = hash_cost(&p, &j).unwrap();
        assert_eq!(
            c,
            HashCost {
                ns: 5.0,
                source: HashCostSource::Profile
            }
        );
        let x = Builtin::by_name("xxh32", HashKey::DEFAULT).unwrap();
        let m = hash_cost(&p, &x).unwrap();
        assert_eq!(m.source, HashCostSource::Measured);
        assert!(m.ns >= MIN_HASH_NS);
        // 200 dependent multiply-rotates cannot take less than 200 cycles (≥ 20 ns at
        // any clock under 10 GHz).
        let slow = hash_cost(&p, &Slow).unwrap();
        assert!(slow.ns > 20.0, "{slow:?}");
    }
}

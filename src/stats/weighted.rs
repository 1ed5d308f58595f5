//! `dist --weight ops`: distribution statistics where every operation counts, not every
//! distinct key (see `docs/dist.md`, "Weights").
//!
//! Key `k` carries weight `w_k` = the number of operations of the trace that name it (a
//! call's `uaddr`, its `uaddr2`, each `futex_waitv`/`futex_requeue` vector entry: one each).
//! With `n_w = Σ w_k` operations, `d` distinct keys and `m` buckets, the load of bucket `b`
//! is `L_b = Σ_{k in b} w_k`, and a record reports:
//!
//! - `keys = n_w`; `empty` = buckets no key hashes to, against `m(1 − 1/m)^d` (weights do
//!   not change which buckets are occupied); `collisions = n_w − occupied`, against
//!   `n_w − m + m(1 − 1/m)^d`; its p-value is that of the distinct keys' occupancy;
//! - `max_load = max L_b`, against the mean over [`NULL_TRIALS`] random functions (a
//!   seeded SplitMix64 assignment of the same weighted keys); its p-value is the add-one
//!   empirical tail `(1 + #{trials ≥ observed}) / (1 + trials)`;
//! - `chi2 = Σ (L_b − n_w/m)² / (n_w/m)`, whose expectation under a random function is
//!   `(m − 1) · S2 / n_w` with `S2 = Σ w_k²` (not `m − 1`: a heavy key moves its whole
//!   weight at once). The p-value is that of the first-order Rao–Scott corrected
//!   `chi2 · n_w / S2` against `χ²(m − 1)` (Rao & Scott, JASA 76, 1981), entering the
//!   verdict when the effective sample size `n_w² / S2` is at least
//!   [`super::CHI2_MIN_MEAN_LOAD`] per bucket.

use super::{CHI2_MIN_MEAN_LOAD, DistRecord, ExpectationCache, Histogram, Reduce, record_for};
use crate::hashers::KeyHasher;
use crate::key::FutexKey;
use crate::rng::SplitMix64;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use std::collections::HashMap;

/// Random functions drawn for the max-load null distribution.
pub const NULL_TRIALS: usize = 199;

/// Per table size: the sorted maximum loads of [`NULL_TRIALS`] random assignments of the
/// weighted keys. Shared by every hasher of a run.
#[derive(Clone, Debug, Default)]
pub struct WeightedNull(HashMap<u64, Vec<u64>>);

impl WeightedNull {
    fn max_loads(&mut self, weights: &[u64], m: u64) -> &[u64] {
        self.0.entry(m).or_insert_with(|| {
            let mut r = SplitMix64::new(0x5eed_0000 ^ m);
            let mut loads = vec![0u64; m as usize];
            let mut out: Vec<u64> = (0..NULL_TRIALS)
                .map(|_| {
                    loads.iter_mut().for_each(|l| *l = 0);
                    for &w in weights {
                        loads[r.below(m) as usize] += w;
                    }
                    loads.iter().copied().max().unwrap_or(0)
                })
                .collect();
            out.sort_unstable();
            out
        })
    }
}

fn weighted_hist(hashes: &[u32], weights: &[u64], log2: u32, reduce: Reduce) -> Vec<u64> {
    let mut counts = vec![0u64; 1usize << log2];
    for (&h, &w) in hashes.iter().zip(weights) {
        counts[reduce.index(h, log2)] += w;
    }
    counts
}

/// The records of one hasher with operation weights; `weights[i]` belongs to `keys[i]`
/// (every weight at least 1). Verdicts are left to [`super::assign_verdicts`].
#[allow(clippy::too_many_arguments)]
pub fn sweep_weighted<H: KeyHasher + ?Sized>(
    hasher: &H,
    workload: &str,
    keys: &[FutexKey],
    weights: &[u64],
    buckets: &[u64],
    reduces: &[Reduce],
    cache: &mut ExpectationCache,
    null: &mut WeightedNull,
) -> Vec<DistRecord> {
    assert_eq!(keys.len(), weights.len());
    let hashes: Vec<u32> = keys.iter().map(|k| hasher.hash(k)).collect();
    let d = keys.len() as u64;
    let n_w: u64 = weights.iter().sum();
    let s2: f64 = weights.iter().map(|&w| (w as f64) * (w as f64)).sum();
    let mut out = Vec::new();
    for &reduce in reduces {
        for &m in buckets {
            let log2 = m.trailing_zeros();
            let hist = Histogram::from_hashes(&hashes, log2, reduce);
            let mut r = record_for(hasher.name(), workload, &hist, cache.get(d, m));
            let loads = weighted_hist(&hashes, weights, log2, reduce);
            let mean = n_w as f64 / m as f64;
            let chi2: f64 = loads
                .iter()
                .map(|&l| {
                    let x = l as f64 - mean;
                    x * x
                })
                .sum::<f64>()
                / mean.max(f64::MIN_POSITIVE);
            let effective = (n_w as f64) * (n_w as f64) / s2.max(1.0);
            let (p, p_even) = if m > 1 && n_w > 0 {
                let adj = chi2 * n_w as f64 / s2.max(1.0);
                let dist = ChiSquared::new((m - 1) as f64).expect("positive degrees of freedom");
                (dist.sf(adj), dist.cdf(adj))
            } else {
                (1.0, 1.0)
            };
            let max_load = loads.iter().copied().max().unwrap_or(0);
            let trials = null.max_loads(weights, m);
            let ge = trials.len() - trials.partition_point(|&t| t < max_load);
            r.keys = n_w;
            r.collisions = n_w - (m - r.empty);
            r.collisions_expected += (n_w - d) as f64;
            r.chi2 = chi2;
            r.p_value = if effective / m as f64 >= CHI2_MIN_MEAN_LOAD {
                p
            } else {
                // Too few effective samples per bucket for the chi-squared approximation;
                // `min_p` would otherwise use it, judged by n_w.
                1.0
            };
            r.p_value_even = p_even;
            r.max_load = max_load;
            r.max_load_expected = trials.iter().sum::<u64>() as f64 / trials.len() as f64;
            r.p_max_load = (1 + ge) as f64 / (1 + trials.len()) as f64;
            r.weight = "ops";
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Builtin, HashKey};

    fn keys(n: u64) -> Vec<FutexKey> {
        (0..n)
            .map(|i| FutexKey::private(0xffff_8881_0000_0000, 0x5555_0000_0000 + 64 * i).unwrap())
            .collect()
    }

    #[test]
    fn unit_weights_agree_with_the_key_records() {
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let k = keys(3000);
        let w = vec![1u64; k.len()];
        let mut cache = ExpectationCache::default();
        let plain =
            super::super::sweep(&h, "t", &k, &[64, 1024], &[Reduce::Mask], &mut cache).unwrap();
        let weighted = sweep_weighted(
            &h,
            "t",
            &k,
            &w,
            &[64, 1024],
            &[Reduce::Mask],
            &mut cache,
            &mut WeightedNull::default(),
        );
        for (a, b) in plain.iter().zip(&weighted) {
            assert_eq!(
                (a.keys, a.empty, a.collisions, a.max_load),
                (b.keys, b.empty, b.collisions, b.max_load)
            );
            assert!((a.chi2 - b.chi2).abs() < 1e-6 * a.chi2.max(1.0));
            assert!((a.p_value - b.p_value).abs() < 1e-9 || b.p_value == 1.0);
            assert!((a.collisions_expected - b.collisions_expected).abs() < 1e-6);
        }
    }

    #[test]
    fn weights_count_operations() {
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let k = keys(4);
        let w = [10u64, 1, 1, 1];
        let r = sweep_weighted(
            &h,
            "t",
            &k,
            &w,
            &[1024],
            &[Reduce::Mask],
            &mut ExpectationCache::default(),
            &mut WeightedNull::default(),
        );
        assert_eq!(r[0].keys, 13);
        assert!(r[0].max_load >= 10);
        assert_eq!(r[0].weight, "ops");
        // 4 distinct keys in 1024 buckets: expected occupancy ~4, so ~9 collisions.
        assert!((r[0].collisions_expected - 9.0).abs() < 0.01, "{:?}", r[0]);
        // Every random function puts the heavy key's 10 somewhere: expected max >= 10.
        assert!(r[0].max_load_expected >= 10.0);
    }
}

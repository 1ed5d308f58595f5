//! The `warning` of a simulated or model-benchmarked configuration: does the hasher fail a
//! distribution test on the very keys being run, at that table size? A throughput figure
//! for a hash that piles the run's futexes into a few buckets measures the benchmark's
//! key layout, not the hash (perf's loop gives each thread its own page, so a hash that
//! keeps a page in one bucket never shares a line between threads and looks fast).
//!
//! The test is `futexhash dist`'s on one table size ([`super::record_for`],
//! [`super::assign_verdicts`]: chi-squared, collisions and maximum load against a random
//! function, Bonferroni over those three); a `fail` verdict gives a warning naming the
//! test with the smallest p-value, the keys and the size. Below sim and bench, so both
//! call it.

use super::{CHI2_MIN_MEAN_LOAD, DistRecord, ExpectationCache, Reduce, Verdict};

/// `""` when the hashes pass (or warn) at `buckets` under `reduce`, else one phrase such
/// as `fails max load on perf keys at 256 buckets (1024 vs 1101.6 expected)`. `keys`
/// names the key set (`perf`). A size that is not a power of two above 1, or no hashes,
/// gives `""`: there is nothing to judge.
pub fn distribution_warning(hashes: &[u32], buckets: u64, reduce: Reduce, keys: &str) -> String {
    if hashes.is_empty() || buckets < 2 || !buckets.is_power_of_two() || buckets > 1 << 32 {
        return String::new();
    }
    let mut cache = ExpectationCache::default();
    let Ok(mut recs) = super::sweep_hashes("", keys, hashes, &[buckets], &[reduce], &mut cache)
    else {
        return String::new();
    };
    super::assign_verdicts(&mut recs);
    match recs.first() {
        Some(r) if r.verdict == Verdict::Fail => format!(
            "fails {} on {keys} keys at {buckets} buckets{}",
            worst_test(r),
            if reduce == Reduce::Mask {
                ""
            } else {
                " (high)"
            }
        ),
        _ => String::new(),
    }
}

/// [`distribution_warning`] for distinct `keys` in the kernel's tables (`__futex_hash()`,
/// v6.16+): with `private_slots = 0` every key in the global hash of `global` buckets;
/// otherwise each process's private keys (one `mm`) in a private table of its own of
/// `private_slots` buckets and the shared keys in the global hash. Mask reduction, as the
/// kernel. The first table that fails gives the warning (`keys` names the key set; a
/// private table's is `one process's KEYS`), else `""`.
pub fn tables_warning<H: crate::hashers::KeyHasher + ?Sized>(
    hasher: &H,
    keys: &[crate::key::FutexKey],
    private_slots: u64,
    global: u64,
    name: &str,
) -> String {
    use crate::key::KeyKind;
    let mut global_hashes = Vec::new();
    let mut per_mm: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
    for k in keys {
        let h = hasher.hash(k);
        if private_slots == 0 || k.kind() != KeyKind::Private {
            global_hashes.push(h);
        } else {
            per_mm.entry(k.w0()).or_default().push(h);
        }
    }
    let w = distribution_warning(&global_hashes, global, Reduce::Mask, name);
    if !w.is_empty() {
        return w;
    }
    let private = format!("one process's {name}");
    per_mm
        .values()
        .map(|hs| distribution_warning(hs, private_slots, Reduce::Mask, &private))
        .find(|w| !w.is_empty())
        .unwrap_or_default()
}

/// The verdict's test with the smallest p-value, with what it observed.
fn worst_test(r: &DistRecord) -> String {
    let chi2_counts = r.keys as f64 / r.buckets as f64 >= CHI2_MIN_MEAN_LOAD;
    let chi2_p = if chi2_counts && !r.p_value.is_nan() {
        r.p_value
    } else {
        1.0
    };
    if chi2_p < r.p_collisions && chi2_p < r.p_max_load {
        format!("chi2 ({:.0} vs {} expected)", r.chi2, r.buckets - 1)
    } else if r.p_max_load <= r.p_collisions {
        format!(
            "max load ({} vs {:.1} expected)",
            r.max_load, r.max_load_expected
        )
    } else {
        format!(
            "collisions ({} vs {:.0} expected)",
            r.collisions, r.collisions_expected
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_that_keeps_pages_together_is_warned_a_random_one_is_not() {
        // 64 pages x 1024 words, every word of a page given the page's hash: 64 distinct
        // values for 65536 keys, so at 256 buckets at least 192 buckets are empty and a
        // bucket holds a multiple of 1024 keys, where a random function's most loaded of
        // 256 buckets holds about 256 + 3.5 sqrt(256) = 312.
        let page_hash = |p: u32| p.wrapping_mul(0x9e37_79b9);
        let clumped: Vec<u32> = (0..64u32)
            .flat_map(|p| std::iter::repeat_n(page_hash(p), 1024))
            .collect();
        let w = distribution_warning(&clumped, 256, Reduce::Mask, "perf");
        assert!(w.starts_with("fails "), "{w}");
        assert!(w.contains("on perf keys at 256 buckets"), "{w}");
        // A good mix of distinct inputs (SplitMix64's output) passes: no warning.
        let mut r = crate::rng::SplitMix64::new(7);
        let good: Vec<u32> = (0..65536).map(|_| r.next_u64() as u32).collect();
        assert_eq!(distribution_warning(&good, 256, Reduce::Mask, "perf"), "");
        assert_eq!(distribution_warning(&good, 0, Reduce::Mask, "perf"), "");
        assert_eq!(distribution_warning(&[], 256, Reduce::Mask, "perf"), "");
    }

    /// Every key in one bucket.
    struct Constant;
    impl crate::hashers::KeyHasher for Constant {
        fn name(&self) -> &str {
            "constant"
        }
        fn scope(&self) -> crate::hashers::Scope {
            crate::hashers::Scope::Full
        }
        fn hash(&self, _: &crate::key::FutexKey) -> u32 {
            7
        }
    }

    #[test]
    fn tables_route_keys_as_the_kernel_and_name_the_failing_table() {
        use crate::key::FutexKey;
        // Two processes with 64 private keys each, and 64 shared inode keys.
        let mut keys: Vec<FutexKey> = Vec::new();
        for mm in [0x1000u64, 0x2000] {
            keys.extend((0..64).map(|i| FutexKey::private(mm, 0x7000 + 64 * i).unwrap()));
        }
        keys.extend((0..64).map(|i| FutexKey::inode(1, i, 0).unwrap()));
        // Global hash only: all 192 keys in one of 65536 buckets; a random function's
        // fullest bucket holds 1 or 2.
        let w = tables_warning(&Constant, &keys, 0, 65536, "trace");
        assert!(w.contains("on trace keys at 65536 buckets"), "{w}");
        // With 16 private slots the global hash holds only the 64 inode keys: still one
        // bucket, still named first.
        let w = tables_warning(&Constant, &keys, 16, 65536, "trace");
        assert!(w.contains("on trace keys at 65536 buckets"), "{w}");
        // Without shared keys the private tables are judged: 64 keys in one of 16.
        let w = tables_warning(&Constant, &keys[..128], 16, 65536, "trace");
        assert!(
            w.contains("on one process's trace keys at 16 buckets"),
            "{w}"
        );
        let j =
            crate::hashers::Builtin::by_name("jhash2", crate::hashers::HashKey::DEFAULT).unwrap();
        assert_eq!(tables_warning(&j, &keys, 16, 65536, "trace"), "");
    }
}

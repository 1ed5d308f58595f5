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
}

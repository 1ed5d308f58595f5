//! Tests of the statistics: expectations against hand-derived and brute-force values,
//! folding against direct histograms, and the verdict properties of issue 3.

use super::*;
use crate::hashers::{Builtin, HashKey};
use crate::workload::KeyWorkload;
use std::collections::HashMap;

/// E[collisions] by the cancellation-free sum Σ_{j<n} (1 − (1−1/m)^j): the expected number of
/// earlier keys' buckets hit by key j, as an independent check of the closed form.
fn collisions_by_sum(n: u64, m: u64) -> f64 {
    let l = (-1.0 / m as f64).ln_1p();
    (0..n).map(|j| -(j as f64 * l).exp_m1()).sum()
}

#[test]
fn expectations_hand_derived() {
    // n = 2, m = 2: both in one bucket with probability 1/2.
    assert_eq!(expected_empty(2, 2), 0.5);
    assert_eq!(expected_collisions(2, 2), 0.5);
    // n = 3, m = 2: E[empty] = 2/8; collisions = 3 − occupied: E = 3 − (2 − 1/4) = 1.25.
    assert!((expected_empty(3, 2) - 0.25).abs() < 1e-15);
    assert!((expected_collisions(3, 2) - 1.25).abs() < 1e-15);
    // n = 2, m = 4: collide with probability 1/4.
    assert!((expected_collisions(2, 4) - 0.25).abs() < 1e-15);
    assert_eq!(expected_collisions(1, 1 << 20), 0.0);
    assert_eq!(expected_collisions(0, 8), 0.0);
    assert_eq!(expected_empty(0, 8), 8.0);
    assert_eq!(expected_empty(5, 1), 0.0);
    assert_eq!(expected_collisions(5, 1), 4.0);
}

#[test]
fn collisions_match_the_exact_sum_everywhere() {
    for &m in &[2u64, 3, 16, 1024, 131_072, 1 << 24] {
        for &n in &[2u64, 3, 10, 100, 1000, 5000, 40_000] {
            let a = expected_collisions(n, m);
            let b = collisions_by_sum(n, m);
            let rel = (a - b).abs() / b.max(1e-300);
            assert!(rel < 1e-11, "n={n} m={m}: {a} vs {b} (rel {rel:e})");
            // and empty = collisions − n + m
            let e = expected_empty(n, m);
            let e2 = b - n as f64 + m as f64;
            assert!((e - e2).abs() <= 1e-9 * n as f64, "empty n={n} m={m}");
        }
    }
    // Tiny expectations stay accurate: n = 2, m = 2^24 → exactly 1/m.
    let c = expected_collisions(2, 1 << 24);
    assert!((c * (1u64 << 24) as f64 - 1.0).abs() < 1e-12, "{c}");
}

#[test]
fn max_load_exact_small_cases() {
    // n=2, m=2: max is 2 with probability 1/2, else 1.
    assert!((MaxLoadDist::new(2, 2).expected() - 1.5).abs() < 1e-12);
    // n=3, m=2: max 3 w.p. 1/4, else 2.
    assert!((MaxLoadDist::new(3, 2).expected() - 2.25).abs() < 1e-12);
    // n=3, m=3: all distinct 6/27 → 1, all equal 3/27 → 3, else 2.
    assert!((MaxLoadDist::new(3, 3).expected() - 51.0 / 27.0).abs() < 1e-12);
    // n=2, m=4: 1 + 1/4.
    assert!((MaxLoadDist::new(2, 4).expected() - 1.25).abs() < 1e-12);
    assert_eq!(MaxLoadDist::new(7, 1).expected(), 7.0);
    let d = MaxLoadDist::new(3, 2);
    assert!((d.p_greater(2) - 0.25).abs() < 1e-12);
    assert_eq!(d.p_greater(1), 1.0);
}

/// Exact E[max] by brute force over all m^n assignments.
fn brute_max(n: u32, m: u32) -> f64 {
    let total = (m as u64).pow(n);
    let mut sum = 0u64;
    for code in 0..total {
        let mut c = vec![0u32; m as usize];
        let mut x = code;
        for _ in 0..n {
            c[(x % m as u64) as usize] += 1;
            x /= m as u64;
        }
        sum += *c.iter().max().unwrap() as u64;
    }
    sum as f64 / total as f64
}

#[test]
fn max_load_exact_matches_brute_force() {
    for (n, m) in [(5, 3), (6, 4), (8, 2), (4, 8), (7, 5)] {
        let a = MaxLoadDist::new(n as u64, m as u64).expected();
        let b = brute_max(n, m);
        assert!((a - b).abs() < 1e-10, "n={n} m={m}: {a} vs {b}");
    }
}

#[test]
fn max_load_poisson_close_to_exact() {
    // At the switch-over, the Poisson product is within 0.3% of the exact value.
    for m in [2u64, 8, 64, 1024, 8192] {
        let n = EXACT_MAX_LOAD_N;
        let exact = MaxLoadDist::new(n, m).expected();
        let lambda = n as f64 / m as f64;
        let approx = MaxLoadDist::poisson(n, m, lambda).expected();
        assert!(
            (exact - approx).abs() / exact < 0.003,
            "m={m}: exact {exact} poisson {approx}"
        );
    }
    // Large n, m = 2: E[max] = n/2 + sqrt(n/(2π))·… ≈ n/2 + E|B − n/2| = n/2 + sqrt(n/(2π)).
    let n = 1_000_000u64;
    let e = MaxLoadDist::new(n, 2).expected();
    let want = n as f64 / 2.0 + (n as f64 / (2.0 * std::f64::consts::PI)).sqrt();
    assert!((e - want).abs() < 1.0, "{e} vs {want}");
}

#[test]
fn folding_equals_direct_histograms() {
    let keys = KeyWorkload::Random.generate(Some(20_000), 9).unwrap().keys;
    let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
    let mut hashes = vec![0; keys.len()];
    h.hash_many(&keys, &mut hashes);
    for reduce in [Reduce::Mask, Reduce::High] {
        let mut hist = Histogram::from_hashes(&hashes, 16, reduce);
        for log2 in (0..16).rev() {
            hist = hist.fold();
            assert_eq!(
                hist,
                Histogram::from_hashes(&hashes, log2, reduce),
                "{reduce:?} 2^{log2}"
            );
        }
    }
    // The two reductions differ (they read different bits).
    assert_ne!(
        Histogram::from_hashes(&hashes, 8, Reduce::Mask).counts,
        Histogram::from_hashes(&hashes, 8, Reduce::High).counts
    );
}

/// `erfc(x)` by the Maclaurin series of `erf` (converges fast for `x ≤ 2`), independent of
/// statrs.
fn erfc_by_series(x: f64) -> f64 {
    let (mut sum, mut term, mut n) = (0.0f64, x, 0u32);
    // term_n = (−1)^n x^(2n+1) / n!; erf(x) = 2/√π Σ term_n / (2n+1).
    while term.abs() > 1e-18 {
        sum += term / (2 * n + 1) as f64;
        n += 1;
        term *= -x * x / n as f64;
    }
    1.0 - 2.0 / std::f64::consts::PI.sqrt() * sum
}

#[test]
fn chi2_and_counts_of_a_known_histogram() {
    // Hashes 0,4,1,3 in 4 buckets (mask): loads 2,1,0,1.
    let hist = Histogram::from_hashes(&[0, 4, 1, 3], 2, Reduce::Mask);
    assert_eq!(hist.counts, [2, 1, 0, 1]);
    let e = Expectations::new(4, 4);
    let r = record_for("x", "w", &hist, &e);
    assert_eq!((r.empty, r.collisions, r.max_load), (1, 1, 2));
    // 4 keys in 4 buckets: E[empty] = 4·(3/4)^4 = 81/64, E[collisions] = n − m + E[empty].
    assert!(
        (r.empty_expected - 81.0 / 64.0).abs() < 1e-12,
        "{}",
        r.empty_expected
    );
    assert!((r.collisions_expected - 81.0 / 64.0).abs() < 1e-12);
    // Mean load 1: chi2 = Σ(c − 1)² / 1 = 1 + 0 + 1 + 0.
    assert!((r.chi2 - 2.0).abs() < 1e-12);
    // Chi-squared with 3 degrees of freedom has the closed-form upper tail
    // sf(x) = erfc(√(x/2)) + √(2x/π)·e^(−x/2); at x = 2: erfc(1) + √(4/π)/e.
    let sf = erfc_by_series(1.0) + (4.0 / std::f64::consts::PI).sqrt() * (-1.0f64).exp();
    assert!((sf - 0.572_406_7).abs() < 1e-7, "closed form {sf}");
    assert!((r.p_value - sf).abs() < 1e-12, "{} vs {sf}", r.p_value);
    assert!((r.p_value_even - (1.0 - sf)).abs() < 1e-12);
}

#[test]
fn verdict_thresholds_with_bonferroni_correction() {
    // Two records: T = 2 × TESTS_PER_RECORD = 6 tests. A raw p-value p gives the corrected
    // min(1, 6p); −log2 of it is compared with WARN_LOG2 = 8 and FAIL_LOG2 = 20.
    let hist = Histogram::from_hashes(&(0..64).collect::<Vec<u32>>(), 4, Reduce::Mask);
    let base = record_for("x", "w", &hist, &Expectations::new(64, 16));
    let with_p = |p: f64| DistRecord {
        p_value: 1.0,
        p_collisions: p,
        p_max_load: 1.0,
        ..base.clone()
    };
    let cases = [
        // (raw p, expected −log2(min(1, 6p)), verdict)
        (1.0, 0.0, Verdict::Pass),
        (2f64.powi(-7) / 6.0, 7.0, Verdict::Pass),
        (2f64.powi(-9) / 6.0, 9.0, Verdict::Warn),
        (2f64.powi(-21) / 6.0, 21.0, Verdict::Fail),
        (0.0, LOG2_P_CAP, Verdict::Fail),
    ];
    for (p, log2_p, verdict) in cases {
        let mut rs = [with_p(p), with_p(1.0)];
        assign_verdicts(&mut rs);
        assert!(
            (rs[0].log2_p - log2_p).abs() < 1e-9,
            "p={p}: {}",
            rs[0].log2_p
        );
        assert_eq!(rs[0].verdict, verdict, "p={p}");
        assert_eq!(rs[1].verdict, Verdict::Pass);
    }
    // The chi-squared p-value counts only at mean load ≥ CHI2_MIN_MEAN_LOAD (here 64/16 = 4).
    let mut rs = [DistRecord {
        p_value: 0.0,
        ..with_p(1.0)
    }];
    assign_verdicts(&mut rs);
    assert_eq!(
        rs[0].verdict,
        Verdict::Pass,
        "chi2 used below its validity condition"
    );
}

fn verdicts(algos: &[&str], workload: &str, n: usize, seed: u64) -> Vec<DistRecord> {
    let w: KeyWorkload = workload.parse().unwrap();
    let keys = w.generate(Some(n), seed).unwrap().keys;
    let buckets: Vec<u64> = (1..=17).map(|b| 1u64 << b).collect();
    let mut cache = ExpectationCache::default();
    let mut all = Vec::new();
    for a in algos {
        let h = Builtin::by_name(a, HashKey::DEFAULT).unwrap();
        let recs = sweep(
            &h,
            workload,
            &keys,
            &buckets,
            &[Reduce::Mask, Reduce::High],
            &mut cache,
        )
        .unwrap();
        let hashes: Vec<u32> = keys.iter().map(|k| h.hash(k)).collect();
        assert_counts_by_brute_force(&recs, &hashes, &buckets);
        all.extend(recs);
    }
    assert_verdicts(&mut all);
    all
}

/// Every record's counts against a direct count of the hashes: one bucket per key by the
/// reduction's definition (bits read off the hash, no folding), then empty buckets,
/// collisions (`keys − occupied`), maximum load and Pearson's chi-squared.
fn assert_counts_by_brute_force(recs: &[DistRecord], hashes: &[u32], buckets: &[u64]) {
    assert_eq!(
        recs.len(),
        buckets.len() * 2,
        "one record per size and reduction"
    );
    for r in recs {
        let bits = r.buckets.trailing_zeros();
        let mut loads: HashMap<u64, u64> = HashMap::new();
        for &h in hashes {
            let b = match r.reduce {
                Reduce::Mask => h as u64 % r.buckets,
                Reduce::High => (h as u64) / (1u64 << (32 - bits)),
            };
            *loads.entry(b).or_default() += 1;
        }
        let n = hashes.len() as u64;
        let occupied = loads.len() as u64;
        let mean = n as f64 / r.buckets as f64;
        let chi2 = (loads
            .values()
            .map(|&c| (c as f64 - mean).powi(2))
            .sum::<f64>()
            + (r.buckets - occupied) as f64 * mean * mean)
            / mean;
        let what = format!("{} {} 2^{bits}", r.algo, r.reduce);
        assert_eq!(r.keys, n, "{what}");
        assert_eq!(r.empty, r.buckets - occupied, "{what}");
        assert_eq!(r.collisions, n - occupied, "{what}");
        assert_eq!(r.max_load, *loads.values().max().unwrap(), "{what}");
        assert!(
            (r.chi2 - chi2).abs() <= 1e-9 * chi2.max(1.0),
            "{what}: {} vs {chi2}",
            r.chi2
        );
    }
}

/// Assigns the verdicts and checks each against the rule as documented: with
/// `T = TESTS_PER_RECORD × records`, `log2_p = −log2 min(1, T · p)` for the smallest p-value
/// of the record's collision and max-load tests (and chi-squared when the mean load is at
/// least `CHI2_MIN_MEAN_LOAD`), fail at ≥ `FAIL_LOG2`, warn at ≥ `WARN_LOG2`.
fn assert_verdicts(r: &mut [DistRecord]) {
    assign_verdicts(r);
    let tests = (TESTS_PER_RECORD * r.len()) as f64;
    for rec in r.iter() {
        let mut p = rec.p_collisions.min(rec.p_max_load);
        if rec.keys as f64 >= CHI2_MIN_MEAN_LOAD * rec.buckets as f64 {
            p = p.min(rec.p_value);
        }
        let want = if p == 0.0 {
            LOG2_P_CAP
        } else {
            (-(tests * p).min(1.0).log2()).clamp(0.0, LOG2_P_CAP)
        };
        let what = format!("{} {} {}", rec.algo, rec.reduce, rec.buckets);
        assert!(
            (rec.log2_p - want).abs() < 1e-9,
            "{what}: {} vs {want}",
            rec.log2_p
        );
        let verdict = match want {
            l if l >= FAIL_LOG2 => Verdict::Fail,
            l if l >= WARN_LOG2 => Verdict::Warn,
            _ => Verdict::Pass,
        };
        assert_eq!(rec.verdict, verdict, "{what}");
    }
}

const MIXERS: [&str; 14] = [
    "jhash2",
    "jhash2-addr",
    "xxhash",
    "xxhash-addr",
    "xxh32",
    "xxh32-addr",
    "xxh3",
    "xxh3-addr",
    "siphash",
    "siphash-addr",
    "hsiphash",
    "hsiphash-addr",
    "hsiphash32",
    "hsiphash32-addr",
];

#[test]
fn random_keys_do_not_flag_keyed_and_mixing_hashers() {
    for seed in [1, 2] {
        let recs = verdicts(&MIXERS, "random", 50_000, seed);
        let bad: Vec<_> = recs
            .iter()
            .filter(|r| r.verdict != Verdict::Pass)
            .map(|r| {
                format!(
                    "{} {} {:?} log2p={:.1}",
                    r.algo, r.buckets, r.reduce, r.log2_p
                )
            })
            .collect();
        assert!(bad.is_empty(), "seed {seed}: {bad:?}");
    }
}

/// The 2016 regression: `hash_64(v, bits)` (the `high` reduction, how the kernel uses
/// `hash_long`) of page-aligned values with the old multiplier.
#[test]
fn pages_flag_hash_long_old_not_hash_long() {
    let recs: Vec<_> = verdicts(&["hash_long", "hash_long_old"], "pages", 50_000, 1)
        .into_iter()
        .filter(|r| r.reduce == Reduce::High)
        .collect();
    let of = |a: &str, v: Verdict| {
        recs.iter()
            .filter(|r| r.algo == a && r.verdict == v)
            .count()
    };
    assert!(
        of("hash_long_old", Verdict::Fail) > 0,
        "hash_long_old not flagged"
    );
    let not_pass: Vec<_> = recs
        .iter()
        .filter(|r| r.algo == "hash_long" && r.verdict != Verdict::Pass)
        .map(|r| (r.buckets, r.reduce, r.log2_p))
        .collect();
    assert!(not_pass.is_empty(), "hash_long flagged: {not_pass:?}");
}

#[test]
fn a_constant_hash_fails_and_more_even_than_random_passes() {
    // Every key in one bucket: fail everywhere but m = 1.
    let hashes = vec![7u32; 1000];
    let mut cache = ExpectationCache::default();
    let mut r = sweep_hashes(
        "const",
        "w",
        &hashes,
        &[2, 64, 4096],
        &[Reduce::Mask],
        &mut cache,
    )
    .unwrap();
    assign_verdicts(&mut r);
    assert!(r.iter().all(|r| r.verdict == Verdict::Fail));
    // A perfectly even spread (hash = index): chi2 = 0, reported in p_value_even, passes.
    let hashes: Vec<u32> = (0..4096).collect();
    let mut r = sweep_hashes(
        "even",
        "w",
        &hashes,
        &[2, 64, 4096],
        &[Reduce::Mask],
        &mut cache,
    )
    .unwrap();
    assign_verdicts(&mut r);
    assert!(
        r.iter()
            .all(|r| r.verdict == Verdict::Pass && r.chi2 == 0.0)
    );
    assert!(r.iter().all(|r| r.p_value_even < 1e-10));
}

#[test]
fn differential_flags_crcs_not_siphash() {
    for (name, flagged) in [
        ("crc32", true),
        ("crc32c", true),
        ("crc32-addr", true),
        ("siphash", false),
        ("siphash-addr", false),
        ("jhash2", false),
        ("xxhash", false),
    ] {
        let h = Builtin::by_name(name, HashKey::DEFAULT).unwrap();
        let d = diagnostics(&h, 1024, 5);
        assert_eq!(d.diff_flagged, flagged, "{name}: {d:?}");
        if flagged {
            assert_eq!(
                d.diff_constant_bits, d.bits,
                "{name}: CRCs are affine in every bit"
            );
        } else {
            assert!(!d.avalanche_flagged, "{name}: {d:?}");
        }
    }
}

#[test]
fn sweeps_reject_sizes_that_are_not_powers_of_two_or_too_large() {
    let mut cache = ExpectationCache::default();
    let mut run = |b: &[u64]| sweep_hashes("x", "w", &[1, 2, 3], b, &[Reduce::Mask], &mut cache);
    assert_eq!(
        run(&[16, 24]).err(),
        Some(StatsError::BucketsNotPowerOfTwo(24))
    );
    assert_eq!(run(&[0]).err(), Some(StatsError::BucketsNotPowerOfTwo(0)));
    assert_eq!(
        run(&[1 << 33]).err(),
        Some(StatsError::TooManyBuckets(1 << 33))
    );
    assert_eq!(run(&[]).unwrap().len(), 0);
    assert_eq!(
        run(&[4, 1])
            .unwrap()
            .iter()
            .map(|r| r.buckets)
            .collect::<Vec<_>>(),
        [4, 1]
    );
}

//! The timing channel behind the leak: how well does the time of one `wake` tell an
//! occupied bucket from an empty one? Measured with real threads parked in the model table.
//!
//! Mechanism (kernel/futex/waitwake.c `futex_wake()` and `futex_hb_waiters_pending()`,
//! v6.16+; the "avoid taking hb lock if nothing to wakeup" series of 2013): a wake whose
//! bucket has no waiters returns after one load; one whose bucket holds waiters — even of
//! other keys — takes the bucket lock and walks the chain. KernelSnitch (Maar et al.,
//! NDSS 2025) times exactly this difference. The model table ([`crate::table`]) has the same
//! two paths (`bucket::wake`).
//!
//! The measurement: `k` threads are parked on futexes that share one bucket. The attacker
//! times `wake` on a *hit* probe (an address of its own whose bucket index is that bucket's)
//! and on a *miss* probe (an empty bucket), alternately, with the monotonic clock around each
//! call. Two scenarios:
//! - `cross`: the parked waiters are the victim's; the attacker's probe is hashed by its own
//!   process. In the global table both meet in one bucket; in the private design they live
//!   in different tables, and the "hit" probe is only the same index in the attacker's own
//!   table — nothing to detect.
//! - `self`: the parked waiters are the attacker's own (what the leak needs). Every design
//!   has this channel; what it reveals depends on what the hash covers (see [`super::leak`]).
//!
//! Figures: the ROC AUC of hit vs miss times (Mann–Whitney: the probability that a hit
//! sample is slower than a miss sample, ties half), and the probes one decision needs at 99 %
//! accuracy: the single-sample accuracy `p` of the best threshold rule "slower than `t` means
//! occupied" (chosen on the first half of the samples, scored on the second half), then the
//! smallest odd `n` whose majority vote of `n` independent decisions is right with
//! probability ≥ 0.99 (binomial tail). Each class cycles over [`PROBES_PER_CLASS`] addresses
//! so that per-address effects average out.
//!
//! The verdict is paired and blocked: the samples are taken in [`MAX_BLOCKS`] blocks (fewer
//! for small `--samples`), each timing the same probes once with the waiters parked and once
//! with nobody parked (the *control*: what is particular to the addresses, the clock and the
//! moment), the two halves' order alternating from block to block. A block's *excess* is its
//! parked AUC minus its control AUC. The channel is separable only if the pooled AUC exceeds
//! 0.5 by more than [`SEPARATION_SD`] null standard deviations (`sqrt((n1+n2+1) / (12 n1
//! n2))`, one-sided: the mechanism only makes occupied buckets slower) *and* the mean excess
//! exceeds [`SEPARATION_SD`] standard errors, the larger of the blocks' own spread and the
//! independent-sample figure. Why blocks: on a loaded 2-CPU machine successive wake times
//! are not independent — across runs the control AUC alone spread 0.47–0.54 where
//! independent samples of 5000 would spread ±0.006 — and one unblocked control timed before
//! the parked run once let an empty private bucket read as occupied (AUC 0.60, control
//! 0.50, in a CI run). The blocks' spread measures that dependence instead of assuming it
//! away.
//!
//! Not measured: the real kernel's global table (it needs an `mm` the tool cannot know),
//! other processes' waiters, and noise from other load beyond what this machine has.

use super::flood::{SEPARATION_SD, Side, World, key, with_parked};
use super::oracle::AttackTable;
use crate::hashers::KeyHasher;
use crate::table::TableError;
use statrs::distribution::{Binomial, DiscreteCDF};
use std::time::Instant;

/// First address of the parked waiters' futex words.
pub const WAITER_BASE: u64 = 0x55d0_4000_0000;
/// First address of the attacker's probe words.
pub const PROBE_BASE: u64 = 0x7f3a_6000_0000;
/// Distinct probe addresses per class.
pub const PROBES_PER_CLASS: usize = 16;
/// Largest `n` reported for probes per decision.
pub const MAX_PROBES_PER_DECISION: u64 = 1 << 20;
/// Most blocks the samples are split into (module docs).
pub const MAX_BLOCKS: usize = 10;
/// Fewest samples per class in one block.
pub const MIN_BLOCK_SAMPLES: usize = 50;

/// Whose waiters are parked (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// The victim's waiters, the attacker's probes.
    Cross,
    /// The attacker's own waiters and probes.
    Own,
}

impl Scenario {
    /// `cross` or `self`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::Cross => "cross",
            Scenario::Own => "self",
        }
    }
    /// Parses `cross` or `self`.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "cross" => Some(Scenario::Cross),
            "self" => Some(Scenario::Own),
            _ => None,
        }
    }
}

/// One channel measurement.
#[derive(Clone, Copy, Debug)]
pub struct ChannelConfig {
    /// Which design.
    pub table: AttackTable,
    /// Global table buckets.
    pub buckets: usize,
    /// Private table slots.
    pub slots: usize,
    /// Threads parked in the probed bucket.
    pub waiters: usize,
    /// Timed wakes per class (hit, miss).
    pub samples: usize,
    /// Whose waiters.
    pub scenario: Scenario,
    /// The victim's `mm`.
    pub victim_mm: u64,
    /// The attacker's `mm`.
    pub attacker_mm: u64,
}

/// Separability of two samples of times.
#[derive(Clone, Debug, PartialEq)]
pub struct Separability {
    /// ROC AUC: P(hit > miss) + P(hit = miss) / 2.
    pub auc: f64,
    /// Whether the AUC is more than [`SEPARATION_SD`] null standard deviations above 0.5.
    pub separable: bool,
    /// Single-sample accuracy of the best threshold (held out).
    pub accuracy: f64,
    /// Smallest odd `n` whose majority vote is right with probability ≥ 0.99; `None` when
    /// not separable (or above [`MAX_PROBES_PER_DECISION`]).
    pub probes_per_decision_99: Option<u64>,
}

/// The measured result.
#[derive(Clone, Debug)]
pub struct ChannelResult {
    /// Median wake time on the hit probe, ns.
    pub hit_ns_median: f64,
    /// Median wake time on the miss probe, ns.
    pub miss_ns_median: f64,
    /// Whether the hit probes really share the waiters' bucket (by the table's routing).
    pub same_bucket: bool,
    /// AUC of the same probes with nobody parked (all blocks pooled): the measurement's
    /// own artefacts.
    pub auc_control: f64,
    /// Blocks the samples were taken in (module docs).
    pub blocks: usize,
    /// Mean over the blocks of (parked AUC − control AUC).
    pub auc_excess: f64,
    /// Standard error of [`Self::auc_excess`]: the larger of the blocks' spread and the
    /// independent-sample figure.
    pub auc_excess_se: f64,
    /// The figures; `sep.separable` includes the blocked test (module docs).
    pub sep: Separability,
}

/// The blocked, paired verdict (module docs): the mean of `excess` (one per block, each
/// from blocks of `n_per_block` samples per class) and its standard error.
pub fn excess_and_se(excess: &[f64], n_per_block: usize) -> (f64, f64) {
    let b = excess.len();
    if b == 0 {
        return (0.0, f64::INFINITY);
    }
    let mean = excess.iter().sum::<f64>() / b as f64;
    // Two independent AUCs of n × n samples: the difference's variance is twice one's.
    let independent = (2.0f64).sqrt() * null_sd(n_per_block, n_per_block) / (b as f64).sqrt();
    let spread = if b > 1 {
        let var = excess.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (b - 1) as f64;
        (var / b as f64).sqrt()
    } else {
        0.0
    };
    (mean, independent.max(spread))
}

/// How many blocks `samples` per class are split into.
pub fn blocks_for(samples: usize) -> usize {
    (samples / MIN_BLOCK_SAMPLES).clamp(1, MAX_BLOCKS)
}

/// ROC AUC of `pos` against `neg` by the rank sum (Mann–Whitney U), ties counted half.
pub fn auc(pos: &[f64], neg: &[f64]) -> f64 {
    let (n1, n2) = (pos.len(), neg.len());
    if n1 == 0 || n2 == 0 {
        return 0.5;
    }
    let mut all: Vec<(f64, bool)> = pos
        .iter()
        .map(|&x| (x, true))
        .chain(neg.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j share their mean.
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        rank_sum += mean_rank * all[i..j].iter().filter(|e| e.1).count() as f64;
        i = j;
    }
    let u = rank_sum - (n1 * (n1 + 1)) as f64 / 2.0;
    u / (n1 as f64 * n2 as f64)
}

/// Probability that the majority of `n` (odd) independent decisions, each right with
/// probability `p`, is right.
pub fn majority_accuracy(p: f64, n: u64) -> f64 {
    let b = Binomial::new(p.clamp(0.0, 1.0), n).expect("valid binomial");
    1.0 - b.cdf(n / 2)
}

/// Smallest odd `n` with [`majority_accuracy`]`(p, n) ≥ target`, or `None` if `p ≤ 0.5` or
/// it exceeds [`MAX_PROBES_PER_DECISION`].
pub fn probes_for(p: f64, target: f64) -> Option<u64> {
    if p <= 0.5 {
        return None;
    }
    if p >= target {
        return Some(1);
    }
    // Majority accuracy grows with odd n for p > 1/2: double, then bisect. Work with
    // m, n = 2m + 1: m = 0 (n = 1) is known to miss the target.
    let ok = |m: u64| majority_accuracy(p, 2 * m + 1) >= target;
    let (mut lo, mut hi) = (0u64, 1u64);
    while !ok(hi) {
        lo = hi;
        hi *= 2;
        if 2 * hi + 1 > MAX_PROBES_PER_DECISION {
            return None;
        }
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(2 * hi + 1)
}

/// Balanced accuracy on (`pos`, `neg`) of the rule "positive if above `t`" (or below, when
/// `above` is false).
fn accuracy_at(pos: &[f64], neg: &[f64], t: f64, above: bool) -> f64 {
    let tp = pos.iter().filter(|&&x| (x > t) == above).count() as f64 / pos.len() as f64;
    let tn = neg.iter().filter(|&&x| (x > t) != above).count() as f64 / neg.len() as f64;
    (tp + tn) / 2.0
}

/// The separability figures of hit times `pos` against miss times `neg` (module docs).
pub fn separability(pos: &[f64], neg: &[f64]) -> Separability {
    let a = auc(pos, neg);
    let (n1, n2) = (pos.len() as f64, neg.len() as f64);
    let sd = null_sd(pos.len(), neg.len());
    // One-sided: the channel is "occupied is slower"; a hit class that is faster is an
    // artefact of the probes, not the mechanism.
    let separable = n1 > 0.0 && n2 > 0.0 && a - 0.5 > SEPARATION_SD * sd;
    let above = true;
    // Threshold from the first half, accuracy on the second half.
    let (ptrain, ptest) = pos.split_at(pos.len() / 2);
    let (ntrain, ntest) = neg.split_at(neg.len() / 2);
    let mut cands: Vec<f64> = ptrain.iter().chain(ntrain).copied().collect();
    cands.sort_by(f64::total_cmp);
    cands.dedup();
    // At most ~1000 candidate thresholds (quantiles of the training values).
    let step = (cands.len() / 1000).max(1);
    let best_t = cands
        .iter()
        .step_by(step)
        .map(|&t| (t, accuracy_at(ptrain, ntrain, t, above)))
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .map_or(0.0, |x| x.0);
    let accuracy = if ptest.is_empty() || ntest.is_empty() {
        0.5
    } else {
        accuracy_at(ptest, ntest, best_t, above)
    };
    let probes_per_decision_99 = if separable {
        probes_for(accuracy, 0.99)
    } else {
        None
    };
    Separability {
        auc: a,
        separable,
        accuracy,
        probes_per_decision_99,
    }
}

/// Standard deviation of the AUC of two samples of sizes `n1`, `n2` from one distribution.
pub fn null_sd(n1: usize, n2: usize) -> f64 {
    let (n1, n2) = (n1 as f64, n2 as f64);
    ((n1 + n2 + 1.0) / (12.0 * n1 * n2)).sqrt()
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

/// The first `n` addresses from `base` (4-byte steps) of process `mm` on `side` whose bucket
/// satisfies `want`.
fn find_addrs<H: KeyHasher>(
    side: &Side<'_, H>,
    mm: u64,
    base: u64,
    n: usize,
    mut want: impl FnMut((usize, usize)) -> bool,
) -> Vec<u64> {
    (0..1u64 << 26)
        .map(|i| base + 4 * i)
        .filter(|&a| want(side.bucket_id(&key(mm, a))))
        .take(n)
        .collect()
}

/// Runs the measurement on a table hashed with `kernel`.
pub fn run<H: KeyHasher + Clone>(
    kernel: &H,
    cfg: &ChannelConfig,
) -> Result<ChannelResult, TableError> {
    let world = World::new(
        kernel,
        cfg.table,
        cfg.buckets,
        cfg.slots,
        cfg.victim_mm,
        cfg.attacker_mm,
    )?;
    let (victim, attacker) = world.sides();
    let (owner, owner_mm) = match cfg.scenario {
        Scenario::Cross => (&victim, cfg.victim_mm),
        Scenario::Own => (&attacker, cfg.attacker_mm),
    };
    // k waiters in one bucket: the first address's bucket, then more that share it.
    let target = owner.bucket_id(&key(owner_mm, WAITER_BASE));
    let waiters = find_addrs(owner, owner_mm, WAITER_BASE, cfg.waiters, |b| b == target);
    // Probes of the attacker: a hit has the waiters' bucket index (in the same table when
    // they share one), a miss any other index (every other bucket is empty). Several of each,
    // cycled, so that what is particular to one address (its cache lines) averages out.
    let hit_keys: Vec<_> = find_addrs(
        &attacker,
        cfg.attacker_mm,
        PROBE_BASE,
        PROBES_PER_CLASS,
        |b| b.1 == target.1,
    )
    .into_iter()
    .map(|a| key(cfg.attacker_mm, a))
    .collect();
    let miss_keys: Vec<_> = find_addrs(
        &attacker,
        cfg.attacker_mm,
        PROBE_BASE,
        PROBES_PER_CLASS,
        |b| b.1 != target.1,
    )
    .into_iter()
    .map(|a| key(cfg.attacker_mm, a))
    .collect();
    let same_bucket = hit_keys.iter().all(|k| attacker.bucket_id(k) == target);
    let measure = |n: usize, offset: usize| {
        let mut hits = Vec::with_capacity(n);
        let mut misses = Vec::with_capacity(n);
        let time = |k| {
            let t = Instant::now();
            std::hint::black_box(attacker.wake(k));
            t.elapsed().as_nanos() as f64
        };
        for j in offset..offset + n {
            let (hk, mk) = (
                &hit_keys[j % hit_keys.len()],
                &miss_keys[j % miss_keys.len()],
            );
            // Alternate the order so that neither class always runs first.
            if j % 2 == 0 {
                hits.push(time(hk));
                misses.push(time(mk));
            } else {
                misses.push(time(mk));
                hits.push(time(hk));
            }
        }
        (hits, misses)
    };
    // Warm the clock, the code and the lines; not recorded.
    measure(cfg.samples.min(2000), 0);
    let blocks = blocks_for(cfg.samples);
    let (mut hits, mut misses) = (Vec::new(), Vec::new());
    let (mut c_hits, mut c_misses) = (Vec::new(), Vec::new());
    let mut excess = Vec::with_capacity(blocks);
    let mut offset = 0;
    for b in 0..blocks {
        // Samples per class in this block: `samples` split as evenly as it goes.
        let n = cfg.samples / blocks + usize::from(b < cfg.samples % blocks);
        let parked = || with_parked(owner, owner_mm, &waiters, || measure(n, offset));
        let control = || measure(n, offset);
        // The control: the same probes with nobody parked. Its order against the parked
        // half alternates so that a drift within a block cancels over the blocks.
        let ((ph, pm), (ch, cm)) = if b % 2 == 0 {
            let c = control();
            (parked(), c)
        } else {
            let p = parked();
            (p, control())
        };
        excess.push(auc(&ph, &pm) - auc(&ch, &cm));
        hits.extend(ph);
        misses.extend(pm);
        c_hits.extend(ch);
        c_misses.extend(cm);
        offset += n;
    }
    let (auc_excess, auc_excess_se) = excess_and_se(&excess, cfg.samples / blocks);
    let mut sep = separability(&hits, &misses);
    if auc_excess <= SEPARATION_SD * auc_excess_se {
        sep.separable = false;
        sep.probes_per_decision_99 = None;
    }
    Ok(ChannelResult {
        hit_ns_median: median(&hits),
        miss_ns_median: median(&misses),
        same_bucket,
        auc_control: auc(&c_hits, &c_misses),
        blocks,
        auc_excess,
        auc_excess_se,
        sep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Jhash2, Scope};

    #[test]
    fn auc_closed_forms() {
        assert_eq!(auc(&[3.0, 4.0], &[1.0, 2.0]), 1.0);
        assert_eq!(auc(&[1.0, 2.0], &[3.0, 4.0]), 0.0);
        assert_eq!(auc(&[1.0, 1.0], &[1.0, 1.0]), 0.5);
        // Pairs (pos, neg): (2,1) > ; (2,3) < ; (4,1) > ; (4,3) >  → 3/4.
        assert_eq!(auc(&[2.0, 4.0], &[1.0, 3.0]), 0.75);
        // A tie counts half: (2,2) = ; (2,1) > → 1.5 / 2.
        assert_eq!(auc(&[2.0], &[2.0, 1.0]), 0.75);
    }

    #[test]
    fn majority_vote_closed_forms() {
        // n = 3: p^3 + 3 p^2 (1-p).
        let p: f64 = 0.8;
        let want = p.powi(3) + 3.0 * p * p * (1.0 - p);
        assert!((majority_accuracy(p, 3) - want).abs() < 1e-12);
        // p = 0.9: n = 3 gives 0.972, n = 5 gives 0.99144 (binomial sums by hand).
        assert_eq!(probes_for(0.9, 0.99), Some(5));
        assert_eq!(probes_for(0.995, 0.99), Some(1));
        assert_eq!(probes_for(0.5, 0.99), None);
        // p = 0.6: the normal approximation n ≈ (2.326 / (2 * 0.1))^2 ≈ 135; the exact
        // value is near it and the answer is minimal.
        let n = probes_for(0.6, 0.99).unwrap();
        assert!((100..180).contains(&n), "{n}");
        assert!(majority_accuracy(0.6, n) >= 0.99);
        assert!(majority_accuracy(0.6, n - 2) < 0.99);
    }

    #[test]
    fn separability_of_synthetic_samples() {
        // Disjoint: perfectly separable with one probe.
        let pos: Vec<f64> = (0..1000).map(|i| 100.0 + (i % 10) as f64).collect();
        let neg: Vec<f64> = (0..1000).map(|i| 10.0 + (i % 10) as f64).collect();
        let s = separability(&pos, &neg);
        assert_eq!(s.auc, 1.0);
        assert_eq!(s.probes_per_decision_99, Some(1));
        // Identical distributions: not separable.
        let s = separability(&neg, &neg);
        assert!(!s.separable);
        assert_eq!(s.probes_per_decision_99, None);
    }

    #[test]
    fn blocked_excess_closed_forms() {
        // Identical excesses: no spread, so the independent-sample figure is the error:
        // sqrt(2) * sqrt((2n + 1) / (12 n^2)) / sqrt(b) with n = 100, b = 4.
        let (m, se) = excess_and_se(&[0.1; 4], 100);
        assert!((m - 0.1).abs() < 1e-12);
        let want = (2.0f64 * 201.0 / (12.0 * 100.0 * 100.0)).sqrt() / 2.0;
        assert!((se - want).abs() < 1e-12, "{se} {want}");
        // Spread above that: sample sd of (0, 0.2, 0, 0.2) is sqrt(0.04 / 3), over sqrt(4).
        let (m, se) = excess_and_se(&[0.0, 0.2, 0.0, 0.2], 100);
        assert!((m - 0.1).abs() < 1e-12);
        let want = (0.04f64 / 3.0).sqrt() / 2.0;
        assert!((se - want).abs() < 1e-12, "{se} {want}");
        assert!(excess_and_se(&[], 100).1.is_infinite());
        // 100 samples make two blocks of 50; ten blocks at most.
        assert_eq!(blocks_for(100), 2);
        assert_eq!(blocks_for(149), 2);
        assert_eq!(blocks_for(5000), 10);
        assert_eq!(blocks_for(20_000_000), 10);
    }

    #[test]
    fn probes_land_where_the_scenario_says() {
        let h = Jhash2 { scope: Scope::Full };
        let base = ChannelConfig {
            table: AttackTable::Global,
            buckets: 64,
            slots: 16,
            waiters: 2,
            samples: 200,
            scenario: Scenario::Cross,
            victim_mm: 0xffff_8881_0000_0000,
            attacker_mm: 0xffff_8882_0000_0040,
        };
        assert!(run(&h, &base).unwrap().same_bucket);
        let own = ChannelConfig {
            scenario: Scenario::Own,
            ..base
        };
        assert!(run(&h, &own).unwrap().same_bucket);
        let private = ChannelConfig {
            table: AttackTable::Private,
            ..base
        };
        assert!(!run(&h, &private).unwrap().same_bucket);
        let private_own = ChannelConfig {
            table: AttackTable::Private,
            ..own
        };
        assert!(run(&h, &private_own).unwrap().same_bucket);
    }
}

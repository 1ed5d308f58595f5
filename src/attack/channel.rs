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
//! probability ≥ 0.99 (binomial tail). Unless the AUC exceeds 0.5 by more than 4 null
//! standard deviations (`sqrt((n1+n2+1) / (12 n1 n2))`; one-sided, since the mechanism only
//! makes occupied buckets slower) plus the control's distance from 0.5 (the same probes
//! timed with nobody parked: what is particular to the addresses), the channel is reported
//! as not separable. Each class
//! cycles over [`PROBES_PER_CLASS`] addresses so that per-address effects average out.
//!
//! Not measured: the real kernel's global table (it needs an `mm` the tool cannot know),
//! other processes' waiters, and noise from other load beyond what this machine has.

use super::flood::{Side, World, key, with_parked};
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
    /// Whether the AUC is more than 4 null standard deviations from 0.5.
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
    /// AUC of the same probes with nobody parked: the measurement's own artefacts. The
    /// channel counts as separable only if its AUC exceeds 0.5 by more than this AUC's
    /// distance from 0.5 plus 4 null standard deviations.
    pub auc_control: f64,
    /// The figures.
    pub sep: Separability,
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
    let separable = n1 > 0.0 && n2 > 0.0 && a - 0.5 > 4.0 * sd;
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
    let measure = || {
        let mut hits = Vec::with_capacity(cfg.samples);
        let mut misses = Vec::with_capacity(cfg.samples);
        let time = |k| {
            let t = Instant::now();
            std::hint::black_box(attacker.wake(k));
            t.elapsed().as_nanos() as f64
        };
        for i in 0..cfg.samples.min(2000) {
            time(&hit_keys[i % hit_keys.len()]);
            time(&miss_keys[i % miss_keys.len()]);
        }
        for i in 0..cfg.samples {
            let (hk, mk) = (
                &hit_keys[i % hit_keys.len()],
                &miss_keys[i % miss_keys.len()],
            );
            // Alternate the order so that neither class always runs first.
            if i % 2 == 0 {
                hits.push(time(hk));
                misses.push(time(mk));
            } else {
                misses.push(time(mk));
                hits.push(time(hk));
            }
        }
        (hits, misses)
    };
    // Control: the same probes with nobody parked. What separates them now is particular
    // to the addresses, not occupancy.
    let (c_hits, c_misses) = measure();
    let control = auc(&c_hits, &c_misses);
    let (hits, misses) = with_parked(owner, owner_mm, &waiters, measure);
    let mut sep = separability(&hits, &misses);
    if sep.auc - 0.5 <= (control - 0.5).abs() + 4.0 * null_sd(hits.len(), misses.len()) {
        sep.separable = false;
        sep.probes_per_decision_99 = None;
    }
    Ok(ChannelResult {
        hit_ns_median: median(&hits),
        miss_ns_median: median(&misses),
        same_bucket,
        auc_control: control,
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

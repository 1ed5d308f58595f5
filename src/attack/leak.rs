//! Leaking the attacker's own `mm` pointer from bucket collisions, and scoring the leak.
//!
//! The attack is KernelSnitch's (Maar et al., NDSS 2025): the attacker parks one waiter on
//! an *anchor* futex word, then probes its other futex words one by one with the timing
//! channel; a probe that finds the anchor's bucket occupied shares its bucket. Every
//! observation is a constraint on `mm`: for a collision, `bucket(mm, probe) ==
//! bucket(mm, anchor)`; for a miss, `!=`. With an unkeyed hash the attacker can evaluate
//! these for any candidate `mm` ("offline brute force" in the paper). A collision in a
//! table of `B` buckets keeps about `1/B` of the candidates (`log2 B` bits), a miss keeps
//! `1 - 1/B`.
//!
//! Elimination, designed so that the candidate space is scanned once:
//! 1. Probe until `ceil((space_bits + margin) / log2 B)` collisions are in hand: enough
//!    that a random hash leaves, in expectation, `2^-margin` wrong candidates.
//! 2. Scan the whole space once, in parallel over the CPUs (`std::thread::scope`), testing
//!    the collisions first: almost every candidate fails the first one, so a candidate costs
//!    about two hash evaluations. Survivors (at most [`LeakConfig::keep`]) are kept.
//! 3. If more than one survives, probe on and filter the survivors with each new collision
//!    (and the misses since), until one is left, none is (the attacker's model of the hash
//!    is wrong: a keyed hash with a key it does not know), or collisions stop eliminating
//!    anything (the hash cannot tell the rest apart).
//!
//! The attacker sees the table only through a [`CollisionOracle`] and evaluates candidates
//! with *its own* [`BucketMap`] — the hash it believes the kernel uses (for keyed hashers,
//! with the key it guesses). [`run`] is the harness: it draws the secret inside a
//! [`SecretOracle`], runs the attacker, and only then reveals the secret to score the result.

use super::oracle::{BucketMap, CandidateSpace, CollisionOracle, SecretOracle};
use crate::hashers::KeyHasher;
use crate::rng::SplitMix64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The attacker's futex words: `ATTACKER_BASE + 4 i` (an anonymous mapping of its own; the
/// anchor is word 0).
pub const ATTACKER_BASE: u64 = 0x7f3a_5c00_0000;

/// Knobs of the attack.
#[derive(Clone, Copy, Debug)]
pub struct LeakConfig {
    /// Give up after this many probes (timing decisions).
    pub max_probes: u64,
    /// Extra bits of collisions to collect before the first scan (expected wrong survivors
    /// of a random hash: `2^-margin`).
    pub margin_bits: u32,
    /// Threads for the scan.
    pub threads: usize,
    /// Most survivors kept in memory; beyond that only their number is known and further
    /// filtering needs another scan.
    pub keep: usize,
    /// Most scans of the whole space.
    pub max_scans: u32,
    /// Whether the attacker can evaluate its model for a candidate. False models a keyed
    /// hash whose key it does not have: it still probes (the channel works) until it holds
    /// the collisions a scan would need, then stops with [`Stop::CannotTest`], every
    /// candidate left.
    pub can_test: bool,
}

impl Default for LeakConfig {
    fn default() -> Self {
        LeakConfig {
            max_probes: 1 << 22,
            margin_bits: 8,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            keep: 1 << 22,
            max_scans: 3,
            can_test: true,
        }
    }
}

/// What the attacker observed: its anchor, the probes that collided with it and those that
/// did not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observations {
    /// The parked word.
    pub anchor: u64,
    /// Probes whose bucket was occupied (same bucket as the anchor).
    pub collided: Vec<u64>,
    /// Probes whose bucket was empty.
    pub missed: Vec<u64>,
}

impl Observations {
    /// Whether `mm` would have produced exactly these observations in `map`.
    #[inline]
    pub fn consistent<H: KeyHasher + ?Sized>(&self, map: &BucketMap<'_, H>, mm: u64) -> bool {
        self.consistent_from(map, mm, 0, 0)
    }

    /// Whether `mm` would have produced the collisions (the misses not tested).
    #[inline]
    fn fits_collisions<H: KeyHasher + ?Sized>(&self, map: &BucketMap<'_, H>, mm: u64) -> bool {
        self.consistent_from(map, mm, 0, self.missed.len())
    }

    /// Like [`Observations::consistent`], checking only the collisions from index `eq` and
    /// the misses from index `ne` on.
    #[inline]
    fn consistent_from<H: KeyHasher + ?Sized>(
        &self,
        map: &BucketMap<'_, H>,
        mm: u64,
        eq: usize,
        ne: usize,
    ) -> bool {
        let b0 = map.bucket(mm, self.anchor);
        self.collided[eq..].iter().all(|&p| map.bucket(mm, p) == b0)
            && self.missed[ne..].iter().all(|&p| map.bucket(mm, p) != b0)
    }
}

/// Why the attacker stopped; records and `report.json` carry it as [`Stop::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// One candidate left.
    Recovered,
    /// No candidate fits the observations: the attacker's hash model is wrong.
    Refuted,
    /// Collisions stopped eliminating candidates.
    NoProgress,
    /// [`LeakConfig::max_probes`] or [`LeakConfig::max_scans`] reached.
    Budget,
    /// The attacker has no way to test candidates ([`LeakConfig::can_test`] false).
    CannotTest,
}

impl Stop {
    /// `recovered`, `refuted`, `no-progress`, `budget` or `cannot-test`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Recovered => "recovered",
            Stop::Refuted => "refuted",
            Stop::NoProgress => "no-progress",
            Stop::Budget => "budget",
            Stop::CannotTest => "cannot-test",
        }
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the attacker ends up with.
#[derive(Clone, Debug)]
pub struct AttackOutcome {
    /// Everything it observed.
    pub observations: Observations,
    /// Probes used (timing decisions).
    pub probes: u64,
    /// Candidates consistent with the observations under the attacker's model.
    pub candidates_left: u64,
    /// The candidate, when exactly one is left.
    pub guess: Option<u64>,
    /// Scans of the whole space.
    pub scans: u32,
    /// Why it stopped.
    pub stop: Stop,
}

/// The state of the candidate set.
enum Survivors {
    /// Not scanned yet: every candidate.
    Unscanned,
    /// Scanned; too many to keep, only the count.
    Many(u64),
    /// Scanned; these are left.
    List(Vec<u64>),
}

impl Survivors {
    fn count(&self, space: &CandidateSpace) -> u64 {
        match self {
            Survivors::Unscanned => space.len(),
            Survivors::Many(n) => *n,
            Survivors::List(v) => v.len() as u64,
        }
    }
}

/// Most hash evaluations a scan spends testing misses on the survivors of the collisions
/// (about 0.3 s at 5 ns per hash).
pub const MISS_TESTS: u64 = 1 << 26;

/// Every candidate of `space` consistent with `obs` under `map`: the count, and the
/// candidates themselves if there are at most `keep`.
///
/// The scan tests each candidate against the collisions (a few) and leaves the misses
/// (thousands, each removing only `1/B` of the candidates) to the kept list. So when more
/// than `keep` candidates fit the collisions, or testing every miss on them would cost
/// more than [`MISS_TESTS`] hashes, or there is no collision yet, the count returned is of
/// those — an upper bound of the survivors, hence a lower bound of the bits leaked — and
/// the scan costs
/// a few hashes per candidate even for a hash whose collisions do not depend on `mm`
/// (a linear one such as CRC-32), where testing every miss on every candidate would cost
/// `candidates × misses` hashes.
pub fn scan<H: KeyHasher + ?Sized>(
    map: &BucketMap<'_, H>,
    space: &CandidateSpace,
    obs: &Observations,
    keep: usize,
    threads: usize,
) -> (u64, Option<Vec<u64>>) {
    if !map.hashes_mm() {
        // The bucket function does not read `mm` (see `BucketMap::bucket`), so every
        // candidate predicts the same observations: one test decides for all of them.
        let n = if obs.consistent(map, space.candidate(0)) {
            space.len()
        } else {
            0
        };
        return (n, None);
    }
    if obs.collided.is_empty()
        && space.len().saturating_mul(obs.missed.len().max(1) as u64) > MISS_TESTS
    {
        // Misses alone remove 1/B of the candidates each: not worth testing on a space
        // this large (counted as all candidates, an upper bound).
        return (space.len(), None);
    }
    const CHUNK: u64 = 1 << 16;
    const BATCH: usize = 1024;
    let chunks = space.len().div_ceil(CHUNK);
    // Work distribution only: each worker claims the next chunk number. Relaxed suffices —
    // the counter publishes no data; results reach the caller through `join`, which
    // synchronises with the worker's end.
    let next = AtomicU64::new(0);
    let threads = threads.clamp(1, chunks as usize);
    let results: Vec<(u64, Vec<u64>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let next = &next;
                s.spawn(move || {
                    let (mut count, mut kept) = (0u64, Vec::new());
                    let (mut mms, mut keys) =
                        (Vec::with_capacity(BATCH), Vec::with_capacity(BATCH));
                    let (mut b0, mut b1) = (vec![0u32; BATCH], vec![0u32; BATCH]);
                    loop {
                        let c = next.fetch_add(1, Ordering::Relaxed);
                        if c >= chunks {
                            break;
                        }
                        let end = ((c + 1) * CHUNK).min(space.len());
                        let mut keep_one = |mm: u64| {
                            if obs.fits_collisions(map, mm) {
                                count += 1;
                                if kept.len() < keep {
                                    kept.push(mm);
                                }
                            }
                        };
                        let Some(&first) = obs.collided.first() else {
                            (c * CHUNK..end).for_each(|i| keep_one(space.candidate(i)));
                            continue;
                        };
                        // Batches: the anchor's and the first collision's buckets for
                        // BATCH candidates with one `hash_many` each; the few that agree
                        // get the full test.
                        let mut i = c * CHUNK;
                        while i < end {
                            let n = (end - i).min(BATCH as u64) as usize;
                            mms.clear();
                            mms.extend((0..n as u64).map(|j| space.candidate(i + j)));
                            map.buckets_many(&mms, obs.anchor, &mut keys, &mut b0[..n]);
                            map.buckets_many(&mms, first, &mut keys, &mut b1[..n]);
                            for j in 0..n {
                                if b0[j] == b1[j] {
                                    keep_one(mms[j]);
                                }
                            }
                            i += n as u64;
                        }
                    }
                    (count, kept)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("scan worker"))
            .collect()
    });
    let total: u64 = results.iter().map(|r| r.0).sum();
    if total as usize > keep {
        return (total, None);
    }
    if total.saturating_mul(obs.missed.len() as u64) > MISS_TESTS {
        // Testing every miss on every survivor would cost more than the budget (a hash
        // whose collisions do not depend on mm keeps the whole space): the count stays the
        // collisions' upper bound.
        return (total, None);
    }
    let mut all: Vec<u64> = results.into_iter().flat_map(|r| r.1).collect();
    // Few enough to test every miss on each: the count becomes exact.
    all.retain(|&mm| obs.consistent(map, mm));
    all.sort_unstable();
    (all.len() as u64, Some(all))
}

/// Collisions needed before the first scan: `ceil((space_bits + margin) / log2 buckets)`.
pub fn collisions_before_scan(space_bits: u32, margin_bits: u32, buckets: usize) -> usize {
    let per = buckets.trailing_zeros();
    if per == 0 {
        return 1;
    }
    (space_bits + margin_bits).div_ceil(per) as usize
}

/// The attack: the attacker knows `space`, its own addresses and `model` (the table as it
/// believes it to be), and talks to the table only through `oracle`.
pub fn attack<H: KeyHasher + ?Sized>(
    model: &BucketMap<'_, H>,
    space: &CandidateSpace,
    oracle: &mut dyn CollisionOracle,
    cfg: &LeakConfig,
) -> AttackOutcome {
    let mut obs = Observations {
        anchor: ATTACKER_BASE,
        ..Default::default()
    };
    oracle.park(obs.anchor);
    let need = collisions_before_scan(space.bits, cfg.margin_bits, model.buckets());
    let mut survivors = Survivors::Unscanned;
    let mut scans = 0u32;
    let mut next_scan_at = need;
    // Observations already applied to a kept survivor list.
    let (mut eq_done, mut ne_done) = (0usize, 0usize);
    let mut stale = 0u32;
    let mut next_word = 1u64;
    let mut stop = Stop::Budget;

    // One step of elimination with what has been observed so far; `None` = go on.
    let mut eliminate = |obs: &Observations,
                         survivors: &mut Survivors,
                         scans: &mut u32,
                         force: bool|
     -> Option<Stop> {
        if !cfg.can_test {
            return (force || obs.collided.len() >= next_scan_at).then_some(Stop::CannotTest);
        }
        let before = survivors.count(space);
        // A scan that leaves as many as before counts double: scans are expensive.
        let mut weight = 1;
        match survivors {
            Survivors::List(v) => {
                v.retain(|&mm| obs.consistent_from(model, mm, eq_done, ne_done));
            }
            Survivors::Unscanned | Survivors::Many(_) => {
                if !force && obs.collided.len() < next_scan_at {
                    return None;
                }
                if *scans >= cfg.max_scans {
                    return Some(Stop::Budget);
                }
                *scans += 1;
                weight = 2;
                next_scan_at = obs.collided.len() * 2;
                let (n, list) = scan(model, space, obs, cfg.keep, cfg.threads);
                *survivors = match list {
                    Some(v) => Survivors::List(v),
                    None => Survivors::Many(n),
                };
            }
        }
        eq_done = obs.collided.len();
        ne_done = obs.missed.len();
        let after = survivors.count(space);
        if after == 0 {
            return Some(Stop::Refuted);
        }
        if after == 1 {
            return Some(Stop::Recovered);
        }
        if after == before {
            stale += weight;
            if stale >= 4 {
                return Some(Stop::NoProgress);
            }
        } else {
            stale = 0;
        }
        None
    };

    loop {
        if oracle.probes() >= cfg.max_probes {
            // Out of probes: use what was observed.
            if let Some(s) = eliminate(&obs, &mut survivors, &mut scans, true) {
                stop = s;
            }
            break;
        }
        let p = ATTACKER_BASE + 4 * next_word;
        next_word += 1;
        if oracle.probe(p) {
            obs.collided.push(p);
            if let Some(s) = eliminate(&obs, &mut survivors, &mut scans, false) {
                stop = s;
                break;
            }
        } else {
            obs.missed.push(p);
        }
    }
    oracle.unpark_all();
    let candidates_left = survivors.count(space);
    let guess = match &survivors {
        Survivors::List(v) if v.len() == 1 => Some(v[0]),
        _ => None,
    };
    AttackOutcome {
        observations: obs,
        probes: oracle.probes(),
        candidates_left,
        guess,
        scans,
        stop,
    }
}

/// One scored leak experiment.
#[derive(Clone, Debug)]
pub struct LeakResult {
    /// The secret `mm` (revealed after the attack).
    pub secret: u64,
    /// What the attacker got.
    pub outcome: AttackOutcome,
    /// Whether the secret is among the attacker's remaining candidates (its knowledge is
    /// true, not merely consistent with a wrong model).
    pub secret_consistent: bool,
    /// `log2(candidates / candidates_left)` if the secret is among those left, else 0: what
    /// the attacker really learned about `mm`.
    pub bits_leaked: f64,
    /// The attacker's single remaining candidate is the secret.
    pub mm_recovered: bool,
    /// Wall time of the attack (probing and scanning).
    pub seconds: f64,
}

/// Bits learned when `left` of `total` candidates remain (0 if none remain: a refuted model
/// teaches nothing about `mm`).
pub fn bits_leaked(total: u64, left: u64) -> f64 {
    if left == 0 || left >= total {
        0.0
    } else {
        (total as f64 / left as f64).log2()
    }
}

/// The harness: draws the secret `mm` from `space` with `seed` inside an oracle over `table`
/// (the table the kernel really has), runs the attacker with its `model`, then scores.
pub fn run<HK: KeyHasher + ?Sized, HA: KeyHasher + ?Sized>(
    table: BucketMap<'_, HK>,
    model: &BucketMap<'_, HA>,
    space: &CandidateSpace,
    seed: u64,
    cfg: &LeakConfig,
) -> LeakResult {
    let mut rng = SplitMix64::new(seed);
    let mut oracle = SecretOracle::draw(table, space, &mut rng);
    let t0 = Instant::now();
    let outcome = attack(model, space, &mut oracle, cfg);
    let seconds = t0.elapsed().as_secs_f64();
    let secret = oracle.reveal();
    let secret_consistent = outcome.observations.consistent(model, secret);
    let bits = if secret_consistent {
        bits_leaked(space.len(), outcome.candidates_left)
    } else {
        0.0
    };
    LeakResult {
        secret,
        mm_recovered: outcome.guess == Some(secret),
        secret_consistent,
        bits_leaked: bits,
        outcome,
        seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attack::oracle::AttackTable;
    use crate::hashers::{HashKey, Hsiphash, Jhash2, Scope, SipHash24, jhash2};

    /// The kernel's global futex bucket, written out from the spec (jhash2 over the four
    /// key words, seed = in-page offset), independent of `BucketMap`.
    fn kernel_bucket(mm: u64, a: u64, buckets: u32) -> u32 {
        let page = a & !0xfff;
        jhash2(
            &[
                mm as u32,
                (mm >> 32) as u32,
                page as u32,
                (page >> 32) as u32,
            ],
            (a & 0xfff) as u32,
        ) & (buckets - 1)
    }

    /// A test oracle for a known `mm`, built without `SecretOracle`.
    struct Plain {
        mm: u64,
        buckets: u32,
        parked: Vec<u64>,
        probes: u64,
    }
    impl CollisionOracle for Plain {
        fn park(&mut self, a: u64) {
            self.parked.push(a);
        }
        fn unpark_all(&mut self) {
            self.parked.clear();
        }
        fn probe(&mut self, a: u64) -> bool {
            self.probes += 1;
            let b = kernel_bucket(self.mm, a, self.buckets);
            self.parked
                .iter()
                .any(|&p| kernel_bucket(self.mm, p, self.buckets) == b)
        }
        fn probes(&self) -> u64 {
            self.probes
        }
    }

    fn cfg() -> LeakConfig {
        LeakConfig {
            threads: 2,
            ..Default::default()
        }
    }

    #[test]
    fn collisions_needed_closed_form() {
        // 2^30 candidates, margin 8, 512 buckets: ceil(38 / 9) = 5.
        assert_eq!(collisions_before_scan(30, 8, 512), 5);
        assert_eq!(collisions_before_scan(16, 8, 64), 4);
        assert_eq!(collisions_before_scan(30, 8, 1), 1);
        assert_eq!(bits_leaked(1 << 30, 1), 30.0);
        assert_eq!(bits_leaked(1 << 30, 1 << 20), 10.0);
        assert_eq!(bits_leaked(1 << 30, 0), 0.0);
    }

    #[test]
    fn recovers_a_known_mm_through_any_oracle() {
        let h = Jhash2 { scope: Scope::Full };
        let model = BucketMap::new(&h, AttackTable::Global, 64).unwrap();
        let space = CandidateSpace::direct_map(16).unwrap();
        for mm in [
            space.candidate(0),
            space.candidate(12345),
            space.candidate(65535),
        ] {
            let mut o = Plain {
                mm,
                buckets: 64,
                parked: vec![],
                probes: 0,
            };
            let out = attack(&model, &space, &mut o, &cfg());
            assert_eq!(out.stop, Stop::Recovered, "mm {mm:#x}");
            assert_eq!(out.guess, Some(mm));
            assert_eq!(out.probes, o.probes);
            assert!(out.observations.collided.len() >= 4);
        }
    }

    #[test]
    fn candidates_left_match_a_brute_force_count() {
        // Stop early (few probes) so that many candidates are left, then count by brute
        // force over the 2^16 space with the spec's jhash2.
        let h = Jhash2 { scope: Scope::Full };
        let model = BucketMap::new(&h, AttackTable::Global, 16).unwrap();
        let space = CandidateSpace::direct_map(16).unwrap();
        for probes in [5, 40, 200] {
            let mm = space.candidate(777);
            let mut o = Plain {
                mm,
                buckets: 16,
                parked: vec![],
                probes: 0,
            };
            let c = LeakConfig {
                max_probes: probes,
                ..cfg()
            };
            let out = attack(&model, &space, &mut o, &c);
            let obs = &out.observations;
            let brute = (0..space.len())
                .map(|i| space.candidate(i))
                .filter(|&m| {
                    let b0 = kernel_bucket(m, obs.anchor, 16);
                    obs.collided.iter().all(|&p| kernel_bucket(m, p, 16) == b0)
                        && obs.missed.iter().all(|&p| kernel_bucket(m, p, 16) != b0)
                })
                .count() as u64;
            assert_eq!(out.candidates_left, brute, "{probes} probes");
            assert!(brute >= 1, "the true mm always fits");
        }
    }

    #[test]
    fn jhash2_global_leaks_every_bit() {
        let h = Jhash2 { scope: Scope::Full };
        let map = BucketMap::new(&h, AttackTable::Global, 128).unwrap();
        let space = CandidateSpace::direct_map(18).unwrap();
        for seed in 1..4 {
            let r = run(map, &map, &space, seed, &cfg());
            assert!(r.mm_recovered, "seed {seed}");
            assert_eq!(r.bits_leaked, 18.0);
            assert!(space.contains(r.secret));
        }
    }

    #[test]
    fn unknown_key_leaks_nothing_known_key_leaks_all() {
        let secret_key = HashKey {
            k0: 0x1234_5678_9abc_def0,
            k1: 0x0fed_cba9_8765_4321,
        };
        let space = CandidateSpace::direct_map(16).unwrap();
        let kernel_s = SipHash24 {
            scope: Scope::Full,
            key: secret_key,
        };
        let kernel_h = Hsiphash {
            scope: Scope::Full,
            key: secret_key,
        };
        let guess_s = SipHash24 {
            scope: Scope::Full,
            key: HashKey::DEFAULT,
        };
        let guess_h = Hsiphash {
            scope: Scope::Full,
            key: HashKey::DEFAULT,
        };
        // Through `dyn KeyHasher`, as run-time hasher sets are.
        let pairs: [(&dyn KeyHasher, &dyn KeyHasher); 2] =
            [(&kernel_s, &guess_s), (&kernel_h, &guess_h)];
        for (kernel, guess) in pairs {
            let table = BucketMap::new(kernel, AttackTable::Global, 64).unwrap();
            let model = BucketMap::new(guess, AttackTable::Global, 64).unwrap();
            let r = run(table, &model, &space, 9, &cfg());
            assert_eq!(r.bits_leaked, 0.0);
            assert!(!r.mm_recovered);
            assert!(
                r.outcome.observations.collided.len() >= 4,
                "the channel works"
            );
        }
        let table_s = BucketMap::new(&kernel_s, AttackTable::Global, 64).unwrap();
        let table_h = BucketMap::new(&kernel_h, AttackTable::Global, 64).unwrap();
        // The same attack with the right key: the key, not the function, protects.
        let r = run(table_s, &table_s, &space, 9, &cfg());
        assert!(r.mm_recovered);
        let r = run(table_h, &table_h, &space, 9, &cfg());
        assert!(r.mm_recovered);
    }

    #[test]
    fn private_table_leaks_nothing() {
        let h = Jhash2 { scope: Scope::Addr };
        let map = BucketMap::new(&h, AttackTable::Private, 16).unwrap();
        let space = CandidateSpace::direct_map(16).unwrap();
        let r = run(map, &map, &space, 3, &cfg());
        assert_eq!(r.bits_leaked, 0.0);
        assert!(!r.mm_recovered);
        assert_eq!(r.outcome.candidates_left, space.len());
        assert!(r.outcome.observations.collided.len() >= 4);
        // Brute force: every candidate explains the observations.
        let obs = &r.outcome.observations;
        let b = |a: u64| {
            let page = a & !0xfff;
            jhash2(&[page as u32, (page >> 32) as u32], (a & 0xfff) as u32) & 15
        };
        assert!(obs.collided.iter().all(|&p| b(p) == b(obs.anchor)));
        assert!(obs.missed.iter().all(|&p| b(p) != b(obs.anchor)));
        // A full-scope hasher in the private table: mm still not hashed.
        let hf = Jhash2 { scope: Scope::Full };
        let map = BucketMap::new(&hf, AttackTable::Private, 16).unwrap();
        assert_eq!(run(map, &map, &space, 3, &cfg()).bits_leaked, 0.0);
    }

    #[test]
    fn scan_counts_match_brute_force_and_keep_bound() {
        let h = Jhash2 { scope: Scope::Full };
        let map = BucketMap::new(&h, AttackTable::Global, 8).unwrap();
        let space = CandidateSpace::direct_map(12).unwrap();
        let obs = Observations {
            anchor: ATTACKER_BASE,
            collided: vec![ATTACKER_BASE + 4],
            missed: vec![],
        };
        let brute = (0..space.len())
            .filter(|&i| {
                let m = space.candidate(i);
                kernel_bucket(m, ATTACKER_BASE, 8) == kernel_bucket(m, ATTACKER_BASE + 4, 8)
            })
            .count() as u64;
        let (n, list) = scan(&map, &space, &obs, 1 << 20, 2);
        assert_eq!(n, brute);
        assert_eq!(list.unwrap().len() as u64, brute);
        let (n, list) = scan(&map, &space, &obs, 10, 2);
        assert_eq!(n, brute);
        assert!(list.is_none(), "{brute} > 10 are not kept");
    }
}

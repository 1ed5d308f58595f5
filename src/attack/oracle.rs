//! The leak experiment's world: where the secret `mm` can be, how the table maps a futex of
//! the attacker to a bucket, and the oracle that answers "does this probe share a bucket with
//! one of my parked waiters?" without ever handing out the secret.
//!
//! Model (KernelSnitch, NDSS 2025, its futex `mm_struct` leak; kernel/futex/core.c v6.16+):
//! the attacker's private futex at user address `a` has the key
//! `(mm, a & !0xfff, a & 0xfff)` (key layout: docs/hashers.md, [`FutexKey::private`]). The
//! global table puts it in bucket `hash(key) & (buckets - 1)` with `hash` over `mm ‖ page`
//! and the offset as seed (`__futex_hash()`); a private table (`__futex_hash_private()`)
//! hashes the address only, so `mm` does not enter at all. The attacker knows its own
//! addresses and (for unkeyed hashers) the hash function, but not `mm`.
//!
//! The observation the timing channel gives ([`super::channel`]) is bucket *occupancy*:
//! a `FUTEX_WAKE` on an address whose bucket holds a waiter takes the bucket lock and walks
//! the chain; on an empty bucket it returns after one load. [`CollisionOracle`] is exactly
//! that observation, one decision per probe, without noise (the channel measurement says how
//! many timing samples one decision costs). [`SecretOracle`] implements it and is the only
//! place that holds the secret; code given a `&mut dyn CollisionOracle` can park and probe,
//! nothing else.

use crate::hashers::KeyHasher;
use crate::key::FutexKey;
use crate::rng::SplitMix64;
use std::fmt;

/// The kernel direct map on x86-64 with 4-level paging, where `mm_struct`s (slab objects)
/// live: `page_offset_base` without KASLR (Documentation/arch/x86/x86_64/mm.rst).
pub const DIRECT_MAP_BASE: u64 = 0xffff_8880_0000_0000;
/// `mm_struct` comes from its own slab cache with `SLAB_HWCACHE_ALIGN`: 64-byte aligned.
pub const MM_ALIGN_BITS: u32 = 6;
/// Default space: the first 64 GiB of the direct map, 64-byte aligned = 2^30 candidates.
pub const DEFAULT_SPACE_BITS: u32 = 30;
/// Largest space this tool scans (2^32 candidates: about a minute per pass on two cores).
pub const MAX_SPACE_BITS: u32 = 32;

/// The set of values the attacker considers possible for its `mm` (its prior, uniform):
/// `base + (i << align_bits)` for `i` in `0..2^bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CandidateSpace {
    /// Lowest candidate.
    pub base: u64,
    /// log2 of the alignment.
    pub align_bits: u32,
    /// log2 of the number of candidates.
    pub bits: u32,
}

/// A candidate space that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceError(pub String);

impl fmt::Display for SpaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SpaceError {}

impl CandidateSpace {
    /// The first `2^bits` 64-byte aligned addresses of the direct map (default `bits` 30:
    /// 64 GiB of RAM).
    pub fn direct_map(bits: u32) -> Result<Self, SpaceError> {
        Self::new(DIRECT_MAP_BASE, MM_ALIGN_BITS, bits)
    }

    /// A space; `bits` in `1..=MAX_SPACE_BITS`, and the last candidate must fit in 64 bits.
    pub fn new(base: u64, align_bits: u32, bits: u32) -> Result<Self, SpaceError> {
        if !(1..=MAX_SPACE_BITS).contains(&bits) {
            return Err(SpaceError(format!(
                "candidate space bits {bits} must be in 1..={MAX_SPACE_BITS}"
            )));
        }
        if align_bits + bits >= 64
            || base
                .checked_add(((1u64 << bits) - 1) << align_bits)
                .is_none()
        {
            return Err(SpaceError(format!(
                "candidate space {base:#x} + 2^{bits} x 2^{align_bits} does not fit in 64 bits"
            )));
        }
        Ok(CandidateSpace {
            base,
            align_bits,
            bits,
        })
    }

    /// Number of candidates.
    pub fn len(&self) -> u64 {
        1u64 << self.bits
    }

    /// Never empty (at least 2 candidates); here for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Candidate number `i` (`i < len()`).
    #[inline(always)]
    pub fn candidate(&self, i: u64) -> u64 {
        self.base + (i << self.align_bits)
    }

    /// Whether `mm` is one of the candidates.
    pub fn contains(&self, mm: u64) -> bool {
        mm >= self.base
            && (mm - self.base) & ((1u64 << self.align_bits) - 1) == 0
            && (mm - self.base) >> self.align_bits < self.len()
    }

    /// A uniformly drawn candidate.
    pub fn draw(&self, rng: &mut SplitMix64) -> u64 {
        self.candidate(rng.below(self.len()))
    }
}

/// Which table the attacker's futexes are hashed into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttackTable {
    /// The global table: the hash covers `mm ‖ page` (`__futex_hash()`).
    Global,
    /// The process's private table: the hash covers the address only
    /// (`__futex_hash_private()`); the key is hashed with `mm` set to 0.
    Private,
}

impl AttackTable {
    /// `global` or `private`.
    pub fn as_str(self) -> &'static str {
        match self {
            AttackTable::Global => "global",
            AttackTable::Private => "private",
        }
    }
}

/// A table as a function from `(mm, user address)` of a private futex to a bucket index.
#[derive(Debug)]
pub struct BucketMap<'h, H: ?Sized> {
    hasher: &'h H,
    table: AttackTable,
    mask: u32,
}

impl<H: ?Sized> Clone for BucketMap<'_, H> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<H: ?Sized> Copy for BucketMap<'_, H> {}

impl<'h, H: KeyHasher + ?Sized> BucketMap<'h, H> {
    /// `buckets` must be a power of two in `1..=2^31` (checked: `None` otherwise).
    pub fn new(hasher: &'h H, table: AttackTable, buckets: usize) -> Option<Self> {
        if !buckets.is_power_of_two() || buckets > 1 << 31 {
            return None;
        }
        Some(BucketMap {
            hasher,
            table,
            mask: (buckets - 1) as u32,
        })
    }

    /// Number of buckets.
    pub fn buckets(&self) -> usize {
        self.mask as usize + 1
    }

    /// Which table.
    pub fn table(&self) -> AttackTable {
        self.table
    }

    /// The hasher.
    pub fn hasher(&self) -> &'h H {
        self.hasher
    }

    /// Whether the bucket depends on `mm` at all: false for the private table (by
    /// construction [`BucketMap::bucket`] ignores `mm` there) and for an address-scope
    /// hasher (it hashes the address words only, `Scope::Addr`).
    pub fn hashes_mm(&self) -> bool {
        self.table == AttackTable::Global && self.hasher.scope() == crate::hashers::Scope::Full
    }

    /// The bucket of the private futex at `uaddr` (4-byte aligned; the two low bits are
    /// cleared) of the process whose `mm` is `mm`.
    #[inline(always)]
    pub fn bucket(&self, mm: u64, uaddr: u64) -> u32 {
        let mm = match self.table {
            AttackTable::Global => mm,
            AttackTable::Private => 0,
        };
        let key = FutexKey::private(mm, uaddr & !3).expect("a 4-byte aligned address is a key");
        self.hasher.hash(&key) & self.mask
    }
}

impl<H: KeyHasher + ?Sized> BucketMap<'_, H> {
    /// [`BucketMap::bucket`] of `uaddr` for every `mm` of `mms`, into `out` (same length);
    /// `keys` is scratch space. One `hash_many` call: no per-key dispatch.
    pub fn buckets_many(&self, mms: &[u64], uaddr: u64, keys: &mut Vec<FutexKey>, out: &mut [u32]) {
        keys.clear();
        keys.extend(mms.iter().map(|&mm| {
            let mm = match self.table {
                AttackTable::Global => mm,
                AttackTable::Private => 0,
            };
            FutexKey::private(mm, uaddr & !3).expect("a 4-byte aligned address is a key")
        }));
        self.hasher.hash_many(keys, out);
        for o in out.iter_mut() {
            *o &= self.mask;
        }
    }
}

/// What the attacker can do: park its threads on its own futex words, and time a wake on
/// one of its addresses, which tells whether that address's bucket holds a parked waiter.
pub trait CollisionOracle {
    /// Parks a waiter on the attacker's futex word at `uaddr`.
    fn park(&mut self, uaddr: u64);
    /// Wakes every parked waiter.
    fn unpark_all(&mut self);
    /// One decision of the timing channel: whether a `FUTEX_WAKE` on `uaddr` (not itself
    /// parked on) finds its bucket occupied by a parked waiter.
    fn probe(&mut self, uaddr: u64) -> bool;
    /// Probes answered so far.
    fn probes(&self) -> u64;
}

/// The table the attacker runs on, holding the secret `mm`. Only the harness that created
/// it can [`reveal`](SecretOracle::reveal) the secret, and only by giving the oracle up.
#[derive(Debug)]
pub struct SecretOracle<'h, H: ?Sized> {
    map: BucketMap<'h, H>,
    mm: u64,
    /// Parked waiters per bucket (sparse: the attacker parks few).
    parked: Vec<(u32, u64)>,
    probes: u64,
}

impl<'h, H: KeyHasher + ?Sized> SecretOracle<'h, H> {
    /// An oracle over `map` whose `mm` is drawn uniformly from `space` with `rng`. The
    /// caller does not learn the secret until [`SecretOracle::reveal`].
    pub fn draw(map: BucketMap<'h, H>, space: &CandidateSpace, rng: &mut SplitMix64) -> Self {
        SecretOracle {
            map,
            mm: space.draw(rng),
            parked: Vec::new(),
            probes: 0,
        }
    }

    /// Ends the experiment and returns the secret `mm`.
    pub fn reveal(self) -> u64 {
        self.mm
    }
}

impl<H: KeyHasher + ?Sized> CollisionOracle for SecretOracle<'_, H> {
    fn park(&mut self, uaddr: u64) {
        let b = self.map.bucket(self.mm, uaddr);
        self.parked.push((b, uaddr & !3));
    }

    fn unpark_all(&mut self) {
        self.parked.clear();
    }

    fn probe(&mut self, uaddr: u64) -> bool {
        self.probes += 1;
        let b = self.map.bucket(self.mm, uaddr);
        self.parked.iter().any(|&(pb, _)| pb == b)
    }

    fn probes(&self) -> u64 {
        self.probes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Jhash2, Scope, jhash2};

    #[test]
    fn default_space_is_the_first_64_gib_of_the_direct_map() {
        let s = CandidateSpace::direct_map(DEFAULT_SPACE_BITS).unwrap();
        assert_eq!(s.len(), 1 << 30);
        // 2^30 candidates x 64 bytes = 64 GiB.
        assert_eq!(s.candidate(s.len() - 1) + 64 - s.base, 64 << 30);
        assert!(s.contains(0xffff_8880_0000_0040));
        assert!(!s.contains(0xffff_8880_0000_0020));
        assert!(!s.contains(0xffff_8890_0000_0000));
        assert!(CandidateSpace::direct_map(0).is_err());
        assert!(CandidateSpace::direct_map(33).is_err());
        assert!(CandidateSpace::new(u64::MAX - 10, 6, 8).is_err());
    }

    #[test]
    fn bucket_map_is_the_kernel_futex_hash() {
        // __futex_hash(): jhash2 over [lo(mm), hi(mm), lo(page), hi(page)], seed = offset,
        // computed here with the word function directly.
        let h = Jhash2 { scope: Scope::Full };
        let m = BucketMap::new(&h, AttackTable::Global, 512).unwrap();
        let (mm, ua) = (0xffff_8880_1234_5600u64, 0x7f00_0000_1010u64);
        let want = jhash2(&[mm as u32, (mm >> 32) as u32, 0x0000_1000, 0x7f00], 0x10) & 511;
        assert_eq!(m.bucket(mm, ua), want);
        // Spec vector: private:0xffff888012345600:0x7f0000001010 -> 0x9aa839a9.
        assert_eq!(m.bucket(mm, ua), 0x9aa8_39a9 & 511);
        // __futex_hash_private(): jhash2 over the address word only; mm plays no part.
        let ha = Jhash2 { scope: Scope::Addr };
        let p = BucketMap::new(&ha, AttackTable::Private, 16).unwrap();
        assert_eq!(p.bucket(mm, ua), 0x1ba1_298d & 15);
        assert_eq!(p.bucket(mm, ua), p.bucket(mm + 64, ua));
        assert!(BucketMap::new(&h, AttackTable::Global, 3).is_none());
    }

    #[test]
    fn oracle_answers_bucket_equality_with_the_secret() {
        let h = Jhash2 { scope: Scope::Full };
        let m = BucketMap::new(&h, AttackTable::Global, 64).unwrap();
        let space = CandidateSpace::direct_map(16).unwrap();
        let mut rng = SplitMix64::new(5);
        let mut o = SecretOracle::draw(m, &space, &mut rng);
        let base = 0x7f00_0000_0000u64;
        o.park(base);
        let answers: Vec<bool> = (1..200).map(|i| o.probe(base + 4 * i)).collect();
        assert_eq!(o.probes(), 199);
        let mm = o.reveal();
        // Independent: the same seed draws the same candidate; equality by direct jhash2.
        assert_eq!(mm, space.draw(&mut SplitMix64::new(5)));
        let bucket = |a: u64| {
            let page = a & !0xfff;
            jhash2(
                &[
                    mm as u32,
                    (mm >> 32) as u32,
                    page as u32,
                    (page >> 32) as u32,
                ],
                (a & 0xfff) as u32,
            ) & 63
        };
        for (i, &ans) in (1..200u64).zip(&answers) {
            assert_eq!(ans, bucket(base + 4 * i) == bucket(base), "probe {i}");
        }
        assert!(
            answers.iter().any(|&a| a),
            "64 buckets, 199 probes: some collide"
        );
    }
}

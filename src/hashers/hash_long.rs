//! `hash_long`: the multiplicative `hash_64(v, 32)` of `include/linux/hash.h` (Linux v4.7+,
//! `GOLDEN_RATIO_64 = 0x61C8864680B583EB`) and its pre-v4.7 multiplier
//! `0x9e37fffffffc0001`, which was "a disaster" on page-aligned pointers
//! (commit ef703f49a6c5, 2016). The key words are folded by XOR: `v = w0 ^ w1 ^ offset`.
//!
//! Written by hand: it is one multiply, and no crate has the kernel's constants.

use super::{KeyHasher, Scope};
use crate::key::FutexKey;

/// `GOLDEN_RATIO_64` of `include/linux/hash.h` since v4.7.
pub const GOLDEN_RATIO_64: u64 = 0x61C8864680B583EB;
/// `GOLDEN_RATIO_PRIME_64` of `include/linux/hash.h` before v4.7.
pub const GOLDEN_RATIO_64_OLD: u64 = 0x9e37fffffffc0001;

/// `hash_64_generic(val, bits)`: the top `bits` bits of `val * GOLDEN_RATIO_64`.
/// `bits` must be in `1..=64`.
#[inline(always)]
pub fn hash_64(val: u64, bits: u32) -> u64 {
    val.wrapping_mul(GOLDEN_RATIO_64) >> (64 - bits)
}

/// `hash_64(w0 ^ w1 ^ offset, 32)` with a selectable multiplier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashLong {
    /// Which words are folded (`addr`: `w1 ^ offset`).
    pub scope: Scope,
    /// The multiplier: [`GOLDEN_RATIO_64`] or [`GOLDEN_RATIO_64_OLD`].
    pub multiplier: u64,
}

impl HashLong {
    /// The current kernel's `hash_long`.
    pub fn new(scope: Scope) -> Self {
        HashLong {
            scope,
            multiplier: GOLDEN_RATIO_64,
        }
    }
    /// The pre-v4.7 `hash_long`.
    pub fn old(scope: Scope) -> Self {
        HashLong {
            scope,
            multiplier: GOLDEN_RATIO_64_OLD,
        }
    }
    fn is_old(&self) -> bool {
        self.multiplier == GOLDEN_RATIO_64_OLD
    }
}

impl KeyHasher for HashLong {
    fn name(&self) -> &'static str {
        match (self.is_old(), self.scope) {
            (false, Scope::Full) => "hash_long",
            (false, Scope::Addr) => "hash_long-addr",
            (true, Scope::Full) => "hash_long_old",
            (true, Scope::Addr) => "hash_long_old-addr",
        }
    }
    fn algorithm(&self) -> &'static str {
        if self.is_old() {
            "hash_long_old"
        } else {
            "hash_long"
        }
    }
    fn scope(&self) -> Scope {
        self.scope
    }
    fn description(&self) -> &'static str {
        if self.is_old() {
            "pre-v4.7 hash_64 (multiplier 0x9e37fffffffc0001), weak on page-aligned keys"
        } else {
            "multiplicative hash_64(w0^w1^offset, 32), golden-ratio multiplier"
        }
    }
    fn source(&self) -> &'static str {
        if self.is_old() {
            "include/linux/hash.h before v4.7"
        } else {
            "include/linux/hash.h since v4.7"
        }
    }
    fn keyed(&self) -> bool {
        false
    }
    #[inline(always)]
    fn hash(&self, key: &FutexKey) -> u32 {
        let v = match self.scope {
            Scope::Full => key.w0() ^ key.w1(),
            Scope::Addr => key.w1(),
        } ^ u64::from(key.offset());
        (v.wrapping_mul(self.multiplier) >> 32) as u32
    }
}

//! How a 32-bit hash becomes a bucket index: the one reduction type every layer uses.
//!
//! The kernel reduces with a mask, `hash & futex_hashmask` (`__futex_hash()` in
//! kernel/futex/core.c, every version); multiplicative hashing (`hash_long`,
//! include/linux/hash.h) is meant to be reduced by its *top* bits instead. Both are offered so
//! that a hash's low and high bits can be judged separately: by the distribution statistics
//! (`stats`), the tables (`table`) and the simulator's tables (`sim`).

use serde::Serialize;
use std::fmt;

/// How a 32-bit hash is reduced to an index in a table of `2^bits` buckets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    /// `hash & (2^bits − 1)`: the low bits, the kernel's.
    #[default]
    Mask,
    /// `hash >> (32 − bits)`: the high bits, multiplicative hashing's.
    High,
}

impl Reduce {
    /// Both reductions, kernel's first.
    pub const ALL: [Reduce; 2] = [Reduce::Mask, Reduce::High];

    /// The index of `hash` in a table of `2^bits` buckets, `bits ≤ 32` (`bits = 0`: one
    /// bucket, index 0). Computed in 64 bits so that neither shift overflows at the ends.
    #[inline(always)]
    pub fn index(self, hash: u32, bits: u32) -> usize {
        debug_assert!(bits <= 32, "a 32-bit hash has no more than 32 index bits");
        match self {
            Reduce::Mask => (hash as u64 & ((1u64 << bits) - 1)) as usize,
            Reduce::High => ((hash as u64) >> (32 - bits)) as usize,
        }
    }

    /// Parses `mask` or `high`.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "mask" => Some(Reduce::Mask),
            "high" => Some(Reduce::High),
            _ => None,
        }
    }

    /// `mask` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reduce::Mask => "mask",
            Reduce::High => "high",
        }
    }
}

impl fmt::Display for Reduce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Reduce;

    /// Brute force: the index is the number formed by the chosen bits, read off bit by bit.
    fn by_bits(reduce: Reduce, hash: u32, bits: u32) -> usize {
        let positions: Vec<u32> = match reduce {
            Reduce::Mask => (0..bits).collect(),
            Reduce::High => (32 - bits..32).collect(),
        };
        positions
            .iter()
            .enumerate()
            .map(|(i, &p)| (((hash >> p) & 1) as usize) << i)
            .sum()
    }

    #[test]
    fn index_takes_the_low_or_high_bits_for_every_width() {
        let hashes = [0, 1, 0x8000_0000, 0xdead_beef, 0x1234_5678, u32::MAX];
        for reduce in Reduce::ALL {
            for bits in 0..=32 {
                for &h in &hashes {
                    assert_eq!(
                        reduce.index(h, bits),
                        by_bits(reduce, h, bits),
                        "{reduce} {h:#x} {bits}"
                    );
                }
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for reduce in Reduce::ALL {
            assert_eq!(Reduce::by_name(reduce.as_str()), Some(reduce));
        }
        assert_eq!(Reduce::by_name("Mask"), None);
    }
}

//! The property suite every hasher goes through, built-in or not: the same runner the
//! built-ins' unit tests call, `futexhash check` prints, and a library user can call from
//! their own tests (the memchr model: one shared runner, every implementation pushed
//! through it).
//!
//! What `futex_hash()` needs of a hash (kernel/futex/core.c): it is a pure function of the
//! key (determinism), the NUMA node is not part of the key (`node` ignored), and every bit
//! the scope hashes matters — a bit that never changes the hash folds keys together, as the
//! 2020 "futex: Unbreak futex hashing" bug did with the whole of `w0` (every inode key of a
//! page index collided). The private hash (addr scope) must not depend on `w0` at all.
//!
//! Keys are inode keys, the one kind whose every bit of `w0` and `w1` is free, so each
//! single-bit change is again a valid key.

use super::{KeyHasher, Scope};
use crate::key::FutexKey;
use crate::rng::SplitMix64;

/// One property and whether the hasher has it.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyCheck {
    /// Short name (`determinism`, `node-ignored`, `w0-ignored`, `w0-bits`, `w1-bits`,
    /// `seed-bits`).
    pub name: &'static str,
    /// Whether it holds.
    pub passed: bool,
    /// What was measured, for a person.
    pub detail: String,
}

/// How strict the bit-sensitivity checks are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitRule {
    /// Every single-bit change of a hashed input changes the hash, on every key: what a
    /// mixing or keyed hash guarantees (a random function misses with probability 2^-32
    /// per flip). The built-ins' unit tests use it.
    EveryFlip,
    /// Every input bit changes the hash on at least half of the keys: no dead bit. Holds
    /// for multiplicative hashes too; what `futexhash check` demands.
    NoDeadBit,
}

/// `n` inode keys from `seed`: `w0` and `w1` uniformly random, offsets 4-byte aligned.
pub fn sample_keys(n: usize, seed: u64) -> Vec<FutexKey> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let (w0, w1) = (rng.next_u64(), rng.next_u64());
            FutexKey::inode(w0, w1, (rng.next_u64() % 1024) * 4).expect("valid inode key")
        })
        .collect()
}

fn flip(k: &FutexKey, byte: usize, bit: u32) -> Option<FutexKey> {
    let mut b = k.to_bytes();
    b[byte] ^= 1 << bit;
    FutexKey::from_bytes(&b).ok()
}

/// Counts, per bit position of one field, on how many keys a flip changed the hash.
struct BitSweep {
    changed: Vec<usize>,
    tried: Vec<usize>,
}

impl BitSweep {
    fn run<H: KeyHasher + ?Sized>(h: &H, keys: &[FutexKey], first_byte: usize, bits: u32) -> Self {
        let mut s = BitSweep {
            changed: vec![0; bits as usize],
            tried: vec![0; bits as usize],
        };
        for k in keys {
            let base = h.hash(k);
            for bit in 0..bits {
                if let Some(f) = flip(k, first_byte + (bit / 8) as usize, bit % 8) {
                    s.tried[bit as usize] += 1;
                    if h.hash(&f) != base {
                        s.changed[bit as usize] += 1;
                    }
                }
            }
        }
        s
    }

    fn check(&self, name: &'static str, field: &str, rule: BitRule) -> PropertyCheck {
        let positions: Vec<usize> = (0..self.tried.len())
            .filter(|&b| self.tried[b] > 0)
            .collect();
        let unchanged: usize = positions
            .iter()
            .map(|&b| self.tried[b] - self.changed[b])
            .sum();
        let tried: usize = positions.iter().map(|&b| self.tried[b]).sum();
        let dead: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&b| 2 * self.changed[b] < self.tried[b])
            .collect();
        let passed = match rule {
            BitRule::EveryFlip => unchanged == 0,
            BitRule::NoDeadBit => dead.is_empty(),
        };
        let detail = if dead.is_empty() {
            format!("{unchanged} of {tried} single-bit changes of {field} left the hash unchanged")
        } else {
            let list: Vec<String> = dead.iter().take(8).map(|b| b.to_string()).collect();
            format!(
                "{} of {} bits of {field} change the hash on fewer than half of the keys (bits {}{})",
                dead.len(),
                positions.len(),
                list.join(","),
                if dead.len() > 8 { ",…" } else { "" }
            )
        };
        PropertyCheck {
            name,
            passed,
            detail,
        }
    }
}

/// Runs the property suite on `h` over `keys` (use [`sample_keys`]). `fresh` is a second,
/// independently built instance of the same hasher, if one can be had: determinism is
/// then also checked across instances (hidden per-instance state such as a random key).
pub fn check_properties<H: KeyHasher + ?Sized>(
    h: &H,
    fresh: Option<&dyn KeyHasher>,
    keys: &[FutexKey],
    rule: BitRule,
) -> Vec<PropertyCheck> {
    let mut out = Vec::new();

    let mut bad = 0usize;
    let mut batch = vec![0u32; keys.len()];
    h.hash_many(keys, &mut batch);
    for (k, &b) in keys.iter().zip(&batch) {
        let decoded = FutexKey::from_bytes(&k.to_bytes()).expect("valid image");
        let a = h.hash(k);
        let again = h.hash(&decoded);
        let other = fresh.map_or(a, |f| f.hash(&decoded));
        if a != again || a != other || a != b {
            bad += 1;
        }
    }
    out.push(PropertyCheck {
        name: "determinism",
        passed: bad == 0,
        detail: format!(
            "{bad} of {} keys hashed differently on a second call, a decoded copy{}, or in a batch",
            keys.len(),
            if fresh.is_some() {
                ", a fresh instance"
            } else {
                ""
            }
        ),
    });

    let moved = keys
        .iter()
        .filter(|k| h.hash(k) != h.hash(&k.with_node(7)))
        .count();
    out.push(PropertyCheck {
        name: "node-ignored",
        passed: moved == 0,
        detail: format!(
            "{moved} of {} keys changed hash with the NUMA node",
            keys.len()
        ),
    });

    let w0 = BitSweep::run(h, keys, 0, 64);
    match h.scope() {
        Scope::Addr => {
            let changed: usize = w0.changed.iter().sum();
            out.push(PropertyCheck {
                name: "w0-ignored",
                passed: changed == 0,
                detail: format!(
                    "addr scope: {changed} single-bit changes of w0 (the mm) changed the hash"
                ),
            });
        }
        Scope::Full => out.push(w0.check("w0-bits", "w0", rule)),
    }
    out.push(BitSweep::run(h, keys, 8, 64).check("w1-bits", "w1", rule));
    // The offset's 12 in-page bits; flips of the two kind bits that give no valid key are
    // skipped.
    out.push(BitSweep::run(h, keys, 16, 12).check("seed-bits", "the offset (seed)", rule));
    out
}

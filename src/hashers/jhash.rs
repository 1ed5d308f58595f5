//! `jhash2`: Bob Jenkins' lookup3 `hashword()` as the kernel has it in
//! `include/linux/jhash.h` (Linux 6.18; unchanged since v2.6.37), used by
//! `kernel/futex/core.c` for the global hash (`__futex_hash()`, the whole key) and the
//! private one (`__futex_hash_private()`, Linux 6.17+: the address word only).
//!
//! Written by hand because no crate offers lookup3's word form with the kernel's
//! `JHASH_INITVAL` and seed handling bit-exactly.

use super::{KeyHasher, Scope, scoped_names};
use crate::key::FutexKey;

/// `JHASH_INITVAL`, an arbitrary value.
pub const JHASH_INITVAL: u32 = 0xdeadbeef;

#[inline(always)]
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

#[inline(always)]
fn final_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// `jhash2(k, length, initval)` over 32-bit words.
#[inline(always)]
pub fn jhash2(words: &[u32], initval: u32) -> u32 {
    let init = JHASH_INITVAL
        .wrapping_add((words.len() as u32) << 2)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = words;
    while k.len() > 3 {
        a = a.wrapping_add(k[0]);
        b = b.wrapping_add(k[1]);
        c = c.wrapping_add(k[2]);
        mix(&mut a, &mut b, &mut c);
        k = &k[3..];
    }
    // The kernel's switch falls through from 3 to 1 and skips the final mix for 0.
    if k.is_empty() {
        return c;
    }
    if k.len() == 3 {
        c = c.wrapping_add(k[2]);
    }
    if k.len() >= 2 {
        b = b.wrapping_add(k[1]);
    }
    a = a.wrapping_add(k[0]);
    final_mix(&mut a, &mut b, &mut c);
    c
}

/// The kernel's futex hash: `jhash2` over the key words, seeded with `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jhash2 {
    /// Which words are hashed.
    pub scope: Scope,
}

impl KeyHasher for Jhash2 {
    scoped_names!("jhash2");
    fn description(&self) -> &'static str {
        "Jenkins lookup3 hashword, the kernel's futex hash"
    }
    fn source(&self) -> &'static str {
        // The global hash covers the whole key; the private hash (Linux 6.17+) only the
        // address word, in its own function.
        match self.scope {
            Scope::Full => "include/linux/jhash.h; kernel/futex/core.c __futex_hash()",
            Scope::Addr => "include/linux/jhash.h; kernel/futex/core.c __futex_hash_private()",
        }
    }
    fn keyed(&self) -> bool {
        false
    }
    #[inline(always)]
    fn hash(&self, key: &FutexKey) -> u32 {
        match self.scope {
            Scope::Full => jhash2(&key.full_words(), key.offset()),
            Scope::Addr => jhash2(&key.addr_words(), key.offset()),
        }
    }
}

/// `jhash(key, length, initval)`: the byte form of lookup3 (`hashlittle()` on
/// little-endian). Equal to [`jhash2`] on the little-endian image of the words; kept as the
/// check of that equivalence against lookup3's published byte vectors.
pub fn jhash_bytes(data: &[u8], initval: u32) -> u32 {
    let init = JHASH_INITVAL
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = data;
    let word = |s: &[u8]| u32::from_le_bytes(s.try_into().expect("4 bytes"));
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    // The kernel's fall-through switch adds the tail bytes, zero-padded, as three words.
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    final_mix(&mut a, &mut b, &mut c);
    c
}

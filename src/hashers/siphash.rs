//! The SipHash family of `lib/siphash.c` (Linux 6.18): `siphash()` is SipHash-2-4;
//! `hsiphash()` is SipHash-1-3 on 64-bit kernels and HalfSipHash-1-3 on 32-bit ones.
//! Input: the scope's bytes followed by `LE32(offset)`; 64-bit outputs are truncated to
//! their low 32 bits.
//!
//! SipHash-2-4 and SipHash-1-3 come from the `siphasher` crate. HalfSipHash-1-3 is written
//! by hand because no maintained crate implements it; it follows `lib/siphash.c`
//! (`HSIPROUND`, `HPREAMBLE`, `HPOSTAMBLE`, the `BITS_PER_LONG == 32` branch) word for word.

use super::{HashKey, KeyHasher, Scope, scoped_names};
use crate::key::FutexKey;
use siphasher::sip::{SipHasher13, SipHasher24};
use std::hash::Hasher;

/// The scope's bytes followed by `LE32(offset)`, in a fixed buffer (no allocation).
#[inline(always)]
fn with_seed<R>(key: &FutexKey, scope: Scope, f: impl FnOnce(&[u8]) -> R) -> R {
    let mut buf = [0u8; 20];
    let len = match scope {
        Scope::Full => {
            buf[..16].copy_from_slice(&key.full_bytes());
            16
        }
        Scope::Addr => {
            buf[..8].copy_from_slice(&key.addr_bytes());
            8
        }
    };
    buf[len..len + 4].copy_from_slice(&key.offset().to_le_bytes());
    f(&buf[..len + 4])
}

/// SipHash-2-4 of `data` with `key` (the kernel's `siphash()`).
#[inline(always)]
pub fn siphash_2_4(key: HashKey, data: &[u8]) -> u64 {
    let mut h = SipHasher24::new_with_keys(key.k0, key.k1);
    h.write(data);
    h.finish()
}

/// SipHash-1-3 of `data` with `key` (the 64-bit kernel's `hsiphash()` before truncation).
#[inline(always)]
pub fn siphash_1_3(key: HashKey, data: &[u8]) -> u64 {
    let mut h = SipHasher13::new_with_keys(key.k0, key.k1);
    h.write(data);
    h.finish()
}

#[inline(always)]
fn hsipround(v: &mut [u32; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(5);
    v[1] ^= v[0];
    v[0] = v[0].rotate_left(16);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(8);
    v[3] ^= v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(7);
    v[3] ^= v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13);
    v[1] ^= v[2];
    v[2] = v[2].rotate_left(16);
}

/// HalfSipHash-1-3 with the 64-bit key `(key0, key1)`, returning `v1 ^ v3` as the
/// 32-bit kernel's `hsiphash()` does.
pub fn half_siphash_1_3(key: [u32; 2], data: &[u8]) -> u32 {
    let mut v = [key[0], key[1], 0x6c796765 ^ key[0], 0x74656462 ^ key[1]];
    let mut b = (data.len() as u32) << 24;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let m = u32::from_le_bytes(c.try_into().expect("4-byte chunk"));
        v[3] ^= m;
        hsipround(&mut v);
        v[0] ^= m;
    }
    for (i, &byte) in chunks.remainder().iter().enumerate() {
        b |= u32::from(byte) << (8 * i);
    }
    v[3] ^= b;
    hsipround(&mut v);
    v[0] ^= b;
    v[2] ^= 0xff;
    hsipround(&mut v);
    hsipround(&mut v);
    hsipround(&mut v);
    v[1] ^ v[3]
}

/// `siphash()`: SipHash-2-4, low 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SipHash24 {
    /// Which bytes are hashed.
    pub scope: Scope,
    /// The 128-bit secret.
    pub key: HashKey,
}

/// `hsiphash()` of 64-bit kernels: SipHash-1-3, low 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hsiphash {
    /// Which bytes are hashed.
    pub scope: Scope,
    /// The 128-bit secret.
    pub key: HashKey,
}

/// `hsiphash()` of 32-bit kernels: HalfSipHash-1-3 with the low 8 bytes of the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HalfSipHash13 {
    /// Which bytes are hashed.
    pub scope: Scope,
    /// The secret; only `k0` (bytes 0..8) is used.
    pub key: HashKey,
}

impl KeyHasher for SipHash24 {
    scoped_names!("siphash");
    fn description(&self) -> &'static str {
        "SipHash-2-4 over bytes ‖ LE32(offset), low 32 bits"
    }
    fn source(&self) -> &'static str {
        "lib/siphash.c siphash()"
    }
    fn keyed(&self) -> bool {
        true
    }
    #[inline(always)]
    fn hash(&self, key: &FutexKey) -> u32 {
        with_seed(key, self.scope, |d| siphash_2_4(self.key, d) as u32)
    }
}

impl KeyHasher for Hsiphash {
    scoped_names!("hsiphash");
    fn description(&self) -> &'static str {
        "SipHash-1-3 over bytes ‖ LE32(offset), low 32 bits (64-bit hsiphash)"
    }
    fn source(&self) -> &'static str {
        "lib/siphash.c hsiphash(), BITS_PER_LONG == 64"
    }
    fn keyed(&self) -> bool {
        true
    }
    #[inline(always)]
    fn hash(&self, key: &FutexKey) -> u32 {
        with_seed(key, self.scope, |d| siphash_1_3(self.key, d) as u32)
    }
}

impl KeyHasher for HalfSipHash13 {
    scoped_names!("hsiphash32");
    fn description(&self) -> &'static str {
        "HalfSipHash-1-3 over bytes ‖ LE32(offset) (32-bit hsiphash)"
    }
    fn source(&self) -> &'static str {
        "lib/siphash.c hsiphash(), BITS_PER_LONG == 32"
    }
    fn keyed(&self) -> bool {
        true
    }
    #[inline(always)]
    fn hash(&self, key: &FutexKey) -> u32 {
        let k = [self.key.k0 as u32, (self.key.k0 >> 32) as u32];
        with_seed(key, self.scope, |d| half_siphash_1_3(k, d))
    }
}

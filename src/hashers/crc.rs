//! The kernel's raw CRCs as hashes: `crc32_le(seed, p, len)` (`lib/crc32.c`, reflected
//! polynomial 0xedb88320) and `crc32c(seed, p, len)` (`lib/crc32c.c`, 0x82f63b78), both
//! without the pre- and post-inversion of the standard checksums. Computed with the
//! `crc32fast` and `crc32c` crates, whose "continue from a finished CRC" entry points invert
//! on the way in and out: raw(seed, data) = !crate(!seed, data).
//!
//! CRCs are linear over GF(2): `h(k) ^ h(k ^ e)` does not depend on `k`. The `dist`
//! differential diagnostic exists to show exactly that.

use super::byte_hasher;

/// Kernel `crc32_le(seed, data)`: no inversion in or out.
#[inline(always)]
pub fn crc32_le(seed: u32, data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(!seed);
    h.update(data);
    !h.finalize()
}

/// Kernel `crc32c(seed, data)`: no inversion in or out.
#[inline(always)]
pub fn crc32c_raw(seed: u32, data: &[u8]) -> u32 {
    !crc32c::crc32c_append(!seed, data)
}

byte_hasher!(
    Crc32,
    "crc32",
    "raw CRC-32 (poly 0xedb88320) seeded with offset, no inversion",
    "lib/crc32.c crc32_le()",
    |b, seed| crc32_le(seed, b)
);
byte_hasher!(
    Crc32c,
    "crc32c",
    "raw CRC-32C (poly 0x82f63b78) seeded with offset, no inversion",
    "lib/crc32c.c crc32c()",
    |b, seed| crc32c_raw(seed, b)
);

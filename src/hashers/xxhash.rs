//! The xxHash family via the `xxhash-rust` crate: `xxhash` is the kernel's `xxhash()`
//! (`include/linux/xxhash.h`, which is `xxh64` on 64-bit) truncated to 32 bits, as the
//! seed thread patched it in; `xxh32` and `xxh3` (64-bit, seeded) are offered for comparison.

use super::byte_hasher;

byte_hasher!(
    Xxhash,
    "xxhash",
    "xxh64 seeded with offset, low 32 bits (the kernel's xxhash() on 64-bit)",
    "include/linux/xxhash.h, lib/xxhash.c",
    |b, seed| xxhash_rust::xxh64::xxh64(b, u64::from(seed)) as u32
);
byte_hasher!(
    Xxh32,
    "xxh32",
    "xxh32 seeded with offset",
    "xxHash XXH32 (lib/xxhash.c xxh32)",
    |b, seed| xxhash_rust::xxh32::xxh32(b, seed)
);
byte_hasher!(
    Xxh3,
    "xxh3",
    "XXH3-64 seeded with offset, low 32 bits",
    "xxHash XXH3_64bits_withSeed (not in the kernel)",
    |b, seed| xxhash_rust::xxh3::xxh3_64_with_seed(b, u64::from(seed)) as u32
);

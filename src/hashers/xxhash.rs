//! The xxHash family via the `xxhash-rust` crate: `xxhash` is the kernel's `xxhash()`
//! (`include/linux/xxhash.h`, which is `xxh64` on 64-bit) truncated to 32 bits, as the
//! seed thread patched it in; `xxh32` and `xxh3` (64-bit, seeded) are offered for comparison.

use super::{KeyHasher, Scope, scoped_names};
use crate::key::FutexKey;

macro_rules! xx_hasher {
    ($ty:ident, $name:literal, $desc:literal, $src:literal, |$b:ident, $seed:ident| $body:expr) => {
        #[doc = $desc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $ty {
            /// Which bytes are hashed.
            pub scope: Scope,
        }

        impl KeyHasher for $ty {
            scoped_names!($name);
            fn description(&self) -> &'static str {
                $desc
            }
            fn source(&self) -> &'static str {
                $src
            }
            fn keyed(&self) -> bool {
                false
            }
            #[inline(always)]
            fn hash(&self, key: &FutexKey) -> u32 {
                let $seed = key.offset();
                match self.scope {
                    Scope::Full => {
                        let $b = &key.full_bytes()[..];
                        $body
                    }
                    Scope::Addr => {
                        let $b = &key.addr_bytes()[..];
                        $body
                    }
                }
            }
        }
    };
}

xx_hasher!(
    Xxhash,
    "xxhash",
    "xxh64 seeded with offset, low 32 bits (the kernel's xxhash() on 64-bit)",
    "include/linux/xxhash.h, lib/xxhash.c",
    |b, seed| xxhash_rust::xxh64::xxh64(b, u64::from(seed)) as u32
);
xx_hasher!(
    Xxh32,
    "xxh32",
    "xxh32 seeded with offset",
    "xxHash XXH32 (lib/xxhash.c xxh32)",
    |b, seed| xxhash_rust::xxh32::xxh32(b, seed)
);
xx_hasher!(
    Xxh3,
    "xxh3",
    "XXH3-64 seeded with offset, low 32 bits",
    "xxHash XXH3_64bits_withSeed (not in the kernel)",
    |b, seed| xxhash_rust::xxh3::xxh3_64_with_seed(b, u64::from(seed)) as u32
);

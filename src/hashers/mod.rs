//! Hash functions for futex keys, bit-exact with the kernel (or with the candidate the seed
//! threads patched in), behind one [`KeyHasher`] trait.
//!
//! Definitions: docs/hashers.md (key layout, scopes, every algorithm, reference vectors).
//! Each algorithm has its own file naming the kernel source it reproduces. Every algorithm exists in two scopes:
//! [`Scope::Full`] hashes `w0 ‖ w1` (the global hash, `kernel/futex/core.c: __futex_hash()`),
//! [`Scope::Addr`] hashes `w1` only (the v6.16 per-process private hash). The seed is always
//! the key's `offset`.
//!
//! Every layer takes any [`KeyHasher`]: hot loops are generic over `H: KeyHasher + ?Sized`,
//! run-time sets are [`SharedHasher`]s (`Arc<dyn KeyHasher>`). [`Builtin`] is the registry
//! of the built-in algorithms (an enum: static dispatch); [`with_hasher!`] monomorphises a
//! loop body for a built-in behind a trait object and falls back to the trait object for
//! any other hasher. [`spec`] parses hasher names (`jhash2`, `so:PATH`, `c:FILE.c`),
//! [`external`] loads C hashers, and [`properties`] is the property suite every hasher,
//! built-in or not, is pushed through (`futexhash check`, the unit tests).
//!
//! Adding a built-in: one file with the struct and its `KeyHasher` impl, one variant and
//! one name in `registry.rs`.

mod crc;
pub mod external;
mod hash_long;
mod jhash;
pub mod properties;
mod registry;
mod siphash;
pub mod spec;
mod xxhash;

pub use crc::{Crc32, Crc32c, crc32_le, crc32c_raw};
pub use hash_long::{GOLDEN_RATIO_64, GOLDEN_RATIO_64_OLD, HashLong, hash_64};
pub use jhash::{JHASH_INITVAL, Jhash2, jhash_bytes, jhash2};
pub use registry::{ALGORITHMS, Builtin, SEED_EIGHT, UnknownHasher, all_builtins, all_names};
pub use siphash::{HalfSipHash13, Hsiphash, SipHash24, half_siphash_1_3};
pub use spec::{HasherError, HasherSpec, parse_list, same_file};
pub use xxhash::{Xxh3, Xxh32, Xxhash};

use crate::key::FutexKey;
use std::sync::Arc;

/// Which part of the key is hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `w0 ‖ w1` (16 bytes), the kernel's global hash.
    Full,
    /// `w1` only (8 bytes), the kernel's per-process private hash; `mm` is left out.
    Addr,
}

impl Scope {
    /// `full` or `addr`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Full => "full",
            Scope::Addr => "addr",
        }
    }
}

/// The 128-bit key of the keyed hashers (siphash family).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashKey {
    /// Bytes 0..8, little-endian.
    pub k0: u64,
    /// Bytes 8..16, little-endian.
    pub k1: u64,
}

impl HashKey {
    /// The default key: bytes `00 01 … 0f`, the key of the kernel's siphash self-test.
    pub const DEFAULT: HashKey = HashKey {
        k0: 0x0706050403020100,
        k1: 0x0f0e0d0c0b0a0908,
    };

    /// The key from its 16 bytes in order.
    pub fn from_bytes(b: [u8; 16]) -> Self {
        HashKey {
            k0: u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            k1: u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
        }
    }

    /// Parses exactly 32 hex digits (optionally `0x`-prefixed): the 16 key bytes in order.
    pub fn parse_hex(s: &str) -> Option<Self> {
        let s = s.strip_prefix("0x").unwrap_or(s);
        if s.len() != 32 || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let mut b = [0u8; 16];
        for (i, byte) in b.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Self::from_bytes(b))
    }
}

impl Default for HashKey {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A hash function from futex keys to 32 bits: the one interface every layer above takes
/// (distribution statistics, the model table, the simulator, the report).
///
/// A user-defined hasher is a few lines:
///
/// ```
/// use futexhash::{FutexKey, KeyHasher, Scope};
///
/// /// The pre-2020 "Unbreak futex hashing" bug: the hash skipped the key's `w0`.
/// struct SkipsW0;
///
/// impl KeyHasher for SkipsW0 {
///     fn name(&self) -> &str { "skips-w0" }
///     fn scope(&self) -> Scope { Scope::Full }
///     fn hash(&self, key: &FutexKey) -> u32 {
///         futexhash::hashers::jhash2(&key.addr_words(), key.offset())
///     }
/// }
///
/// let a: FutexKey = "inode:1:0:0x10".parse().unwrap();
/// let b: FutexKey = "inode:2:0:0x10".parse().unwrap();
/// assert_eq!(SkipsW0.hash(&a), SkipsW0.hash(&b)); // every inode collides: `check` fails it
/// ```
///
/// Implementations must be pure (the same key always gives the same hash) and callable
/// from many threads at once (`Send + Sync`).
pub trait KeyHasher: Send + Sync {
    /// The name in every table, record and plot: `ALG` for the full scope, `ALG-addr` for
    /// the addr scope for the built-ins, the label for others.
    fn name(&self) -> &str;
    /// The algorithm, without scope (`jhash2`, `crc32c`, …); by default the name.
    fn algorithm(&self) -> &str {
        self.name()
    }
    /// One line saying what it is.
    fn description(&self) -> &str {
        "user-defined hasher"
    }
    /// Where the definition comes from.
    fn source(&self) -> &str {
        "user"
    }
    /// Which part of the key is hashed; decides which properties `check` expects.
    fn scope(&self) -> Scope;
    /// Whether the hasher takes a secret key.
    fn keyed(&self) -> bool {
        false
    }
    /// The hash of one key.
    fn hash(&self, key: &FutexKey) -> u32;
    /// Hashes every key of `keys` into `out` (same length). Overridden where one call per
    /// batch pays (the built-in registry moves its `match` out of the loop here, so a
    /// trait object costs one indirect call per batch, not per key).
    ///
    /// # Panics
    /// If the lengths differ.
    fn hash_many(&self, keys: &[FutexKey], out: &mut [u32]) {
        assert_eq!(keys.len(), out.len(), "hash_many: length mismatch");
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.hash(k);
        }
    }
    /// The built-in behind this hasher, if it is one: lets hot loops monomorphise for
    /// the built-ins ([`with_hasher!`]) while taking any hasher.
    fn as_builtin(&self) -> Option<Builtin> {
        None
    }
}

/// A hasher shared by every thread and layer of a run: built-ins, C hashers and user
/// hashers alike. Cloning is a reference-count increment.
pub type SharedHasher = Arc<dyn KeyHasher>;

impl std::fmt::Debug for dyn KeyHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyHasher({})", self.name())
    }
}

/// Forwards every `KeyHasher` method through a pointer type, so a shared or borrowed
/// hasher is itself a hasher (one impl body for both pointer kinds).
macro_rules! forward_key_hasher {
    ($($ptr:ty),*) => {$(
        impl<H: KeyHasher + ?Sized> KeyHasher for $ptr {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn algorithm(&self) -> &str {
                (**self).algorithm()
            }
            fn description(&self) -> &str {
                (**self).description()
            }
            fn source(&self) -> &str {
                (**self).source()
            }
            fn scope(&self) -> Scope {
                (**self).scope()
            }
            fn keyed(&self) -> bool {
                (**self).keyed()
            }
            #[inline]
            fn hash(&self, key: &FutexKey) -> u32 {
                (**self).hash(key)
            }
            fn hash_many(&self, keys: &[FutexKey], out: &mut [u32]) {
                (**self).hash_many(keys, out)
            }
            fn as_builtin(&self) -> Option<Builtin> {
                (**self).as_builtin()
            }
        }
    )*};
}
forward_key_hasher!(Arc<H>, &H);

/// Builds the `ALG`/`ALG-addr` name pair for a hasher struct holding a `scope` field.
macro_rules! scoped_names {
    ($full:literal) => {
        fn name(&self) -> &'static str {
            match self.scope {
                $crate::hashers::Scope::Full => $full,
                $crate::hashers::Scope::Addr => concat!($full, "-addr"),
            }
        }
        fn algorithm(&self) -> &'static str {
            $full
        }
        fn scope(&self) -> $crate::hashers::Scope {
            self.scope
        }
    };
}
pub(crate) use scoped_names;

/// Defines an unkeyed hasher struct over the scope's bytes: `|bytes, seed| expr`.
macro_rules! byte_hasher {
    ($ty:ident, $name:literal, $desc:literal, $src:literal, |$b:ident, $seed:ident| $body:expr) => {
        #[doc = $desc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $ty {
            /// Which bytes are hashed.
            pub scope: $crate::hashers::Scope,
        }

        impl $crate::hashers::KeyHasher for $ty {
            $crate::hashers::scoped_names!($name);
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
            fn hash(&self, key: &$crate::key::FutexKey) -> u32 {
                let $seed = key.offset();
                match self.scope {
                    $crate::hashers::Scope::Full => {
                        let $b = &key.full_bytes()[..];
                        $body
                    }
                    $crate::hashers::Scope::Addr => {
                        let $b = &key.addr_bytes()[..];
                        $body
                    }
                }
            }
        }
    };
}
pub(crate) use byte_hasher;

/// A degenerate hasher that sends every key to the same value: for tests of the table's
/// worst case (every futex in one bucket), never for measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstantHasher(pub u32);

impl KeyHasher for ConstantHasher {
    fn name(&self) -> &'static str {
        "constant"
    }
    fn algorithm(&self) -> &'static str {
        "constant"
    }
    fn description(&self) -> &'static str {
        "every key hashes to one value (test only)"
    }
    fn source(&self) -> &'static str {
        "futexhash test fixture"
    }
    fn scope(&self) -> Scope {
        Scope::Full
    }
    fn keyed(&self) -> bool {
        false
    }
    fn hash(&self, _key: &FutexKey) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests;

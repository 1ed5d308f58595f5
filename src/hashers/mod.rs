//! Hash functions for futex keys, bit-exact with the kernel (or with the candidate the seed
//! threads patched in), behind one [`KeyHasher`] trait.
//!
//! Definitions: `shared/spec/hashers.md` §2–3. Each algorithm has its own file naming the
//! kernel source it reproduces. Every algorithm exists in two scopes:
//! [`Scope::Full`] hashes `w0 ‖ w1` (the global hash, `kernel/futex/core.c: __futex_hash()`),
//! [`Scope::Addr`] hashes `w1` only (the v6.16 per-process private hash). The seed is always
//! the key's `offset`.
//!
//! Hot loops should be generic over `H: KeyHasher` so that they monomorphise; [`AnyHasher`]
//! is the closed set of all hashers as an enum (static dispatch, one `match` per call), and
//! [`AnyHasher::hash_many`] hoists that `match` out of a loop over many keys.

mod crc;
mod hash_long;
mod jhash;
mod siphash;
mod xxhash;

pub use crc::{Crc32, Crc32c, crc32_le, crc32c_raw};
pub use hash_long::{GOLDEN_RATIO_64, GOLDEN_RATIO_64_OLD, HashLong, hash_64};
pub use jhash::{JHASH_INITVAL, Jhash2, jhash_bytes, jhash2};
pub use siphash::{HalfSipHash13, Hsiphash, SipHash24, half_siphash_1_3};
pub use xxhash::{Xxh3, Xxh32, Xxhash};

use crate::key::FutexKey;
use std::fmt;

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

/// A hash function from futex keys to 32 bits.
pub trait KeyHasher: Send + Sync {
    /// Registry name: `ALG` for the full scope, `ALG-addr` for the addr scope.
    fn name(&self) -> &'static str;
    /// The algorithm, without scope (`jhash2`, `crc32c`, …).
    fn algorithm(&self) -> &'static str;
    /// One line saying what it is.
    fn description(&self) -> &'static str;
    /// Where the definition comes from.
    fn source(&self) -> &'static str;
    /// Which part of the key is hashed.
    fn scope(&self) -> Scope;
    /// Whether the hasher takes a secret key.
    fn keyed(&self) -> bool;
    /// The hash of one key.
    fn hash(&self, key: &FutexKey) -> u32;
}

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

/// Every algorithm, in registry order.
pub const ALGORITHMS: [&str; 11] = [
    "jhash2",
    "xxhash",
    "xxh32",
    "xxh3",
    "hash_long",
    "hash_long_old",
    "crc32",
    "crc32c",
    "siphash",
    "hsiphash",
    "hsiphash32",
];

/// The eight columns of the seed thread's table, in its order.
pub const SEED_EIGHT: [&str; 8] = [
    "jhash2",
    "jhash2-addr",
    "xxhash",
    "hash_long",
    "crc32c",
    "crc32",
    "siphash",
    "hsiphash",
];

/// Any hasher of the registry; static dispatch by `match`.
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)]
pub enum AnyHasher {
    Jhash2(Jhash2),
    Xxhash(Xxhash),
    Xxh32(Xxh32),
    Xxh3(Xxh3),
    HashLong(HashLong),
    Crc32(Crc32),
    Crc32c(Crc32c),
    SipHash24(SipHash24),
    Hsiphash(Hsiphash),
    HalfSipHash13(HalfSipHash13),
}

/// Calls `$body` with `$h` bound to the concrete hasher inside an [`AnyHasher`].
#[macro_export]
macro_rules! with_hasher {
    ($any:expr, $h:ident => $body:expr) => {
        match $any {
            $crate::hashers::AnyHasher::Jhash2($h) => $body,
            $crate::hashers::AnyHasher::Xxhash($h) => $body,
            $crate::hashers::AnyHasher::Xxh32($h) => $body,
            $crate::hashers::AnyHasher::Xxh3($h) => $body,
            $crate::hashers::AnyHasher::HashLong($h) => $body,
            $crate::hashers::AnyHasher::Crc32($h) => $body,
            $crate::hashers::AnyHasher::Crc32c($h) => $body,
            $crate::hashers::AnyHasher::SipHash24($h) => $body,
            $crate::hashers::AnyHasher::Hsiphash($h) => $body,
            $crate::hashers::AnyHasher::HalfSipHash13($h) => $body,
        }
    };
}

/// The name given to [`AnyHasher::by_name`] is not a registered hasher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownHasher(pub String);

impl fmt::Display for UnknownHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown algorithm '{}'; valid: {}",
            self.0,
            all_names().join(", ")
        )
    }
}
impl std::error::Error for UnknownHasher {}

/// Every registered hasher name: each algorithm, then its `-addr` variant.
pub fn all_names() -> Vec<&'static str> {
    all_hashers(HashKey::DEFAULT)
        .iter()
        .map(|h| h.name())
        .collect()
}

/// Every hasher of the registry (each algorithm in both scopes), keyed ones with `key`.
pub fn all_hashers(key: HashKey) -> Vec<AnyHasher> {
    let mut v = Vec::with_capacity(2 * ALGORITHMS.len());
    for alg in ALGORITHMS {
        for scope in [Scope::Full, Scope::Addr] {
            v.push(AnyHasher::build(alg, scope, key).expect("registry algorithm"));
        }
    }
    v
}

impl AnyHasher {
    fn build(alg: &str, scope: Scope, key: HashKey) -> Option<Self> {
        Some(match alg {
            "jhash2" => AnyHasher::Jhash2(Jhash2 { scope }),
            "xxhash" => AnyHasher::Xxhash(Xxhash { scope }),
            "xxh32" => AnyHasher::Xxh32(Xxh32 { scope }),
            "xxh3" => AnyHasher::Xxh3(Xxh3 { scope }),
            "hash_long" => AnyHasher::HashLong(HashLong::new(scope)),
            "hash_long_old" => AnyHasher::HashLong(HashLong::old(scope)),
            "crc32" => AnyHasher::Crc32(Crc32 { scope }),
            "crc32c" => AnyHasher::Crc32c(Crc32c { scope }),
            "siphash" => AnyHasher::SipHash24(SipHash24 { scope, key }),
            "hsiphash" => AnyHasher::Hsiphash(Hsiphash { scope, key }),
            "hsiphash32" => AnyHasher::HalfSipHash13(HalfSipHash13 { scope, key }),
            _ => return None,
        })
    }

    /// Looks a hasher up by registry name (`jhash2`, `jhash2-addr`, …).
    pub fn by_name(name: &str, key: HashKey) -> Result<Self, UnknownHasher> {
        let (alg, scope) = match name.strip_suffix("-addr") {
            Some(alg) => (alg, Scope::Addr),
            None => (name, Scope::Full),
        };
        Self::build(alg, scope, key).ok_or_else(|| UnknownHasher(name.to_string()))
    }

    /// Hashes every key of `keys` into `out` (same length), with the `match` on the
    /// algorithm outside the loop.
    pub fn hash_many(&self, keys: &[FutexKey], out: &mut [u32]) {
        assert_eq!(keys.len(), out.len(), "hash_many: length mismatch");
        with_hasher!(self, h => {
            for (o, k) in out.iter_mut().zip(keys) {
                *o = h.hash(k);
            }
        })
    }
}

impl KeyHasher for AnyHasher {
    fn name(&self) -> &'static str {
        with_hasher!(self, h => h.name())
    }
    fn algorithm(&self) -> &'static str {
        with_hasher!(self, h => h.algorithm())
    }
    fn description(&self) -> &'static str {
        with_hasher!(self, h => h.description())
    }
    fn source(&self) -> &'static str {
        with_hasher!(self, h => h.source())
    }
    fn scope(&self) -> Scope {
        with_hasher!(self, h => h.scope())
    }
    fn keyed(&self) -> bool {
        with_hasher!(self, h => h.keyed())
    }
    #[inline]
    fn hash(&self, key: &FutexKey) -> u32 {
        with_hasher!(self, h => h.hash(key))
    }
}

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

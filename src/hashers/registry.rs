//! The built-in algorithms as one closed enum, [`Builtin`]: each algorithm of docs/hashers.md
//! §3 in both scopes, looked up by name. A `Builtin` is static dispatch (one `match` per
//! call, hoisted out of loops by [`KeyHasher::hash_many`] and [`with_hasher!`]).
//!
//! Adding a built-in: a variant below, a line in [`Builtin::build`], its name in
//! [`ALGORITHMS`], and the arm in [`with_hasher!`].

use super::{
    Crc32, Crc32c, HalfSipHash13, HashKey, HashLong, Hsiphash, Jhash2, KeyHasher, Scope,
    SharedHasher, SipHash24, Xxh3, Xxh32, Xxhash,
};
use crate::key::FutexKey;
use std::fmt;
use std::sync::Arc;

/// Every built-in algorithm, in registry order.
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

/// `[full, addr]` names of each of [`ALGORITHMS`], in the same order.
const NAMES: [[&str; 2]; 11] = [
    ["jhash2", "jhash2-addr"],
    ["xxhash", "xxhash-addr"],
    ["xxh32", "xxh32-addr"],
    ["xxh3", "xxh3-addr"],
    ["hash_long", "hash_long-addr"],
    ["hash_long_old", "hash_long_old-addr"],
    ["crc32", "crc32-addr"],
    ["crc32c", "crc32c-addr"],
    ["siphash", "siphash-addr"],
    ["hsiphash", "hsiphash-addr"],
    ["hsiphash32", "hsiphash32-addr"],
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

/// A built-in hasher; static dispatch by `match`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Builtin {
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

/// Runs `$body` with `$h` bound to the hasher behind `$any` (anything implementing
/// `KeyHasher`): the concrete built-in type when it is one (so the body monomorphises and
/// inlines the hash), else the `&dyn KeyHasher` itself. The body must therefore compile
/// for any `&H` with `H: KeyHasher + ?Sized`, typically a call of a generic function.
#[macro_export]
macro_rules! with_hasher {
    ($any:expr, $h:ident => $body:expr) => {{
        let any = &$any;
        match $crate::hashers::KeyHasher::as_builtin(any) {
            Some(b) => $crate::with_builtin!(&b, $h => $body),
            None => {
                let $h: &dyn $crate::hashers::KeyHasher = any;
                $body
            }
        }
    }};
}

/// Runs `$body` with `$h` bound to the concrete hasher inside a `&Builtin`.
#[macro_export]
macro_rules! with_builtin {
    ($b:expr, $h:ident => $body:expr) => {
        match $b {
            $crate::hashers::Builtin::Jhash2($h) => $body,
            $crate::hashers::Builtin::Xxhash($h) => $body,
            $crate::hashers::Builtin::Xxh32($h) => $body,
            $crate::hashers::Builtin::Xxh3($h) => $body,
            $crate::hashers::Builtin::HashLong($h) => $body,
            $crate::hashers::Builtin::Crc32($h) => $body,
            $crate::hashers::Builtin::Crc32c($h) => $body,
            $crate::hashers::Builtin::SipHash24($h) => $body,
            $crate::hashers::Builtin::Hsiphash($h) => $body,
            $crate::hashers::Builtin::HalfSipHash13($h) => $body,
        }
    };
}

/// The name given to [`Builtin::by_name`] is not a built-in hasher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownHasher(pub String);

impl fmt::Display for UnknownHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown algorithm '{}'; valid: {}, all, seed, so:PATH[:SYMBOL], c:FILE.c[:SYMBOL]",
            self.0,
            all_names().join(", ")
        )
    }
}
impl std::error::Error for UnknownHasher {}

/// Every built-in hasher name: each algorithm, then its `-addr` variant.
pub fn all_names() -> Vec<&'static str> {
    let mut v = Vec::with_capacity(2 * ALGORITHMS.len());
    for alg in ALGORITHMS {
        for scope in [Scope::Full, Scope::Addr] {
            v.push(
                Builtin::build(alg, scope, HashKey::DEFAULT)
                    .expect("registry algorithm")
                    .static_name(),
            );
        }
    }
    v
}

/// Every built-in hasher (each algorithm in both scopes), keyed ones with `key`.
pub fn all_builtins(key: HashKey) -> Vec<Builtin> {
    let mut v = Vec::with_capacity(2 * ALGORITHMS.len());
    for alg in ALGORITHMS {
        for scope in [Scope::Full, Scope::Addr] {
            v.push(Builtin::build(alg, scope, key).expect("registry algorithm"));
        }
    }
    v
}

impl Builtin {
    fn build(alg: &str, scope: Scope, key: HashKey) -> Option<Self> {
        Some(match alg {
            "jhash2" => Builtin::Jhash2(Jhash2 { scope }),
            "xxhash" => Builtin::Xxhash(Xxhash { scope }),
            "xxh32" => Builtin::Xxh32(Xxh32 { scope }),
            "xxh3" => Builtin::Xxh3(Xxh3 { scope }),
            "hash_long" => Builtin::HashLong(HashLong::new(scope)),
            "hash_long_old" => Builtin::HashLong(HashLong::old(scope)),
            "crc32" => Builtin::Crc32(Crc32 { scope }),
            "crc32c" => Builtin::Crc32c(Crc32c { scope }),
            "siphash" => Builtin::SipHash24(SipHash24 { scope, key }),
            "hsiphash" => Builtin::Hsiphash(Hsiphash { scope, key }),
            "hsiphash32" => Builtin::HalfSipHash13(HalfSipHash13 { scope, key }),
            _ => return None,
        })
    }

    /// Looks a built-in up by registry name (`jhash2`, `jhash2-addr`, …).
    pub fn by_name(name: &str, key: HashKey) -> Result<Self, UnknownHasher> {
        let (alg, scope) = match name.strip_suffix("-addr") {
            Some(alg) => (alg, Scope::Addr),
            None => (name, Scope::Full),
        };
        Self::build(alg, scope, key).ok_or_else(|| UnknownHasher(name.to_string()))
    }

    /// This built-in as a [`SharedHasher`].
    pub fn shared(self) -> SharedHasher {
        Arc::new(self)
    }

    /// The registry name with a `'static` lifetime (the built-ins' names are constants).
    pub fn static_name(&self) -> &'static str {
        let alg = match self {
            Builtin::Jhash2(_) => 0,
            Builtin::Xxhash(_) => 1,
            Builtin::Xxh32(_) => 2,
            Builtin::Xxh3(_) => 3,
            Builtin::HashLong(h) if h.multiplier == super::GOLDEN_RATIO_64 => 4,
            Builtin::HashLong(_) => 5,
            Builtin::Crc32(_) => 6,
            Builtin::Crc32c(_) => 7,
            Builtin::SipHash24(_) => 8,
            Builtin::Hsiphash(_) => 9,
            Builtin::HalfSipHash13(_) => 10,
        };
        NAMES[alg][usize::from(self.scope() == Scope::Addr)]
    }

    /// Whether any single-bit change of the hashed input changes the output, which the
    /// property tests demand of mixing and keyed hashers. `hash_long` is a multiply that
    /// keeps 32 of 64 bits, not a mixer.
    pub fn is_mixing(&self) -> bool {
        !matches!(self, Builtin::HashLong(_))
    }
}

impl KeyHasher for Builtin {
    fn name(&self) -> &str {
        self.static_name()
    }
    fn algorithm(&self) -> &str {
        with_builtin!(self, h => h.algorithm())
    }
    fn description(&self) -> &str {
        with_builtin!(self, h => h.description())
    }
    fn source(&self) -> &str {
        with_builtin!(self, h => h.source())
    }
    fn scope(&self) -> Scope {
        with_builtin!(self, h => h.scope())
    }
    fn keyed(&self) -> bool {
        with_builtin!(self, h => h.keyed())
    }
    #[inline]
    fn hash(&self, key: &FutexKey) -> u32 {
        with_builtin!(self, h => h.hash(key))
    }
    fn hash_many(&self, keys: &[FutexKey], out: &mut [u32]) {
        assert_eq!(keys.len(), out.len(), "hash_many: length mismatch");
        with_builtin!(self, h => {
            for (o, k) in out.iter_mut().zip(keys) {
                *o = h.hash(k);
            }
        })
    }
    fn as_builtin(&self) -> Option<Builtin> {
        Some(*self)
    }
}

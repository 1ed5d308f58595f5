//! The built-in algorithms as one closed enum, [`Builtin`]: each algorithm of docs/hashers.md
//! §3 in both scopes, looked up by name. A `Builtin` is static dispatch (one `match` per
//! call, hoisted out of loops by [`KeyHasher::hash_many`] and [`with_hasher!`]).
//!
//! Adding a built-in: one file with the struct and its `KeyHasher` impl, one line in the
//! `registry!` invocation below and its arm in `with_builtin!` beside it.

use super::{
    Crc32, Crc32c, HalfSipHash13, HashKey, HashLong, Hsiphash, Jhash2, KeyHasher, Scope,
    SharedHasher, SipHash24, Xxh3, Xxh32, Xxhash,
};
use crate::key::FutexKey;
use std::fmt;
use std::sync::Arc;

/// Declares the built-ins: for each, its name, an enum variant, the struct and how to build
/// it for a scope and key. Generates [`Builtin`], [`ALGORITHMS`], the name table and
/// `Builtin::build`.
macro_rules! registry {
    ($( $name:literal => $variant:ident($ty:ty) = |$scope:ident, $key:ident| $make:expr; )*) => {
        /// A built-in hasher; static dispatch by `match`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[allow(missing_docs)]
        pub enum Builtin {
            $( $variant($ty), )*
        }

        /// Every built-in algorithm, in registry order.
        pub const ALGORITHMS: &[&str] = &[$( $name ),*];

        /// `[full, addr]` names of each of [`ALGORITHMS`], in the same order.
        const NAMES: &[[&str; 2]] = &[$( [$name, concat!($name, "-addr")] ),*];

        impl Builtin {
            fn build(alg: &str, scope: Scope, key: HashKey) -> Option<Self> {
                match alg {
                    $( $name => {
                        let ($scope, $key) = (scope, key);
                        let _ = $key;
                        Some(Builtin::$variant($make))
                    } )*
                    _ => None,
                }
            }

            /// Index of the algorithm in [`ALGORITHMS`].
            fn index(&self) -> usize {
                let mut i = 0;
                $(
                    if matches!(self, Builtin::$variant(_)) {
                        return i;
                    }
                    i += 1;
                )*
                unreachable!("{i} variants")
            }
        }

    };
}

// Adding a built-in: its file in this directory, one line here, and its arm in
// `with_builtin!` below (the match is exhaustive: the compiler points at it).
registry! {
    "jhash2" => Jhash2(Jhash2) = |scope, key| Jhash2 { scope };
    "xxhash" => Xxhash(Xxhash) = |scope, key| Xxhash { scope };
    "xxh32" => Xxh32(Xxh32) = |scope, key| Xxh32 { scope };
    "xxh3" => Xxh3(Xxh3) = |scope, key| Xxh3 { scope };
    "hash_long" => HashLong(HashLong) = |scope, key| HashLong::new(scope);
    "hash_long_old" => HashLongOld(HashLong) = |scope, key| HashLong::old(scope);
    "crc32" => Crc32(Crc32) = |scope, key| Crc32 { scope };
    "crc32c" => Crc32c(Crc32c) = |scope, key| Crc32c { scope };
    "siphash" => SipHash24(SipHash24) = |scope, key| SipHash24 { scope, key };
    "hsiphash" => Hsiphash(Hsiphash) = |scope, key| Hsiphash { scope, key };
    "hsiphash32" => HalfSipHash13(HalfSipHash13) = |scope, key| HalfSipHash13 { scope, key };
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
            $crate::hashers::Builtin::HashLongOld($h) => $body,
            $crate::hashers::Builtin::Crc32($h) => $body,
            $crate::hashers::Builtin::Crc32c($h) => $body,
            $crate::hashers::Builtin::SipHash24($h) => $body,
            $crate::hashers::Builtin::Hsiphash($h) => $body,
            $crate::hashers::Builtin::HalfSipHash13($h) => $body,
        }
    };
}

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
        NAMES[self.index()][usize::from(self.scope() == Scope::Addr)]
    }

    /// Whether any single-bit change of the hashed input changes the output, which the
    /// property tests demand of mixing and keyed hashers. `hash_long` is a multiply that
    /// keeps 32 of 64 bits, not a mixer.
    pub fn is_mixing(&self) -> bool {
        !matches!(self, Builtin::HashLong(_) | Builtin::HashLongOld(_))
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

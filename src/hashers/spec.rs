//! Hasher names as users write them (`--algo` everywhere): a built-in (`jhash2`,
//! `jhash2-addr`), a C function in a shared object (`so:PATH[:SYMBOL]`), a C source file
//! (`c:PATH.c[:SYMBOL]`), either with an optional `LABEL=` prefix; lists of them
//! (`a,b,c`, `all`, `seed`).
//!
//! Parsing is pure and safe; loading a C hasher runs foreign code and is therefore
//! [`HasherSpec::load`], an `unsafe fn` (see [`super::external`]).

use super::external::{self, ExternalError};
use super::registry::{Builtin, SEED_EIGHT, UnknownHasher, all_names};
use super::{HashKey, Scope, SharedHasher};
use std::fmt;
use std::path::PathBuf;

/// The symbol a C hasher is looked up by when the name gives none.
pub const DEFAULT_SYMBOL: &str = "futex_hash";

/// One parsed hasher name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HasherSpec {
    /// A built-in of the registry.
    Builtin(Builtin),
    /// A C function in a shared object, or in a C source file compiled into one.
    External {
        /// The name in tables and records: the `LABEL=` prefix, else the symbol.
        label: String,
        /// The `.so` (for `so:`) or `.c` file (for `c:`).
        path: PathBuf,
        /// The function's symbol.
        symbol: String,
        /// Whether `path` is C source to compile first.
        compile: bool,
        /// The scope the hash claims: `addr` when the label ends in `-addr` (it must
        /// then ignore `w0`), else `full`. Only `check` and the report use it.
        scope: Scope,
    },
}

/// Why a hasher name could not be used.
#[derive(Debug)]
pub enum HasherError {
    /// Not a built-in and not `so:`/`c:`.
    Unknown(UnknownHasher),
    /// A malformed `so:`/`c:` name (empty path, bad symbol or label).
    BadName(String),
    /// The shared object or C file could not be compiled, opened or resolved.
    External(ExternalError),
}

impl fmt::Display for HasherError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HasherError::Unknown(e) => e.fmt(f),
            HasherError::BadName(s) => f.write_str(s),
            HasherError::External(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for HasherError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HasherError::Unknown(e) => Some(e),
            HasherError::BadName(_) => None,
            HasherError::External(e) => Some(e),
        }
    }
}

fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
}

impl HasherSpec {
    /// Parses one name. `key` is the key of the keyed built-ins.
    pub fn parse(name: &str, key: HashKey) -> Result<Self, HasherError> {
        let name = name.trim();
        // `LABEL=` only before `so:`/`c:`: a built-in name never contains '='.
        let (label, rest) = match name.split_once('=') {
            Some((l, r)) if r.starts_with("so:") || r.starts_with("c:") => (Some(l), r),
            _ => (None, name),
        };
        let (compile, body) = if let Some(b) = rest.strip_prefix("so:") {
            (false, b)
        } else if let Some(b) = rest.strip_prefix("c:") {
            (true, b)
        } else {
            return Builtin::by_name(name, key)
                .map(HasherSpec::Builtin)
                .map_err(HasherError::Unknown);
        };
        // PATH[:SYMBOL]: the part after the last ':' is the symbol when it is a C
        // identifier (paths of shared objects and C files have a '.' or '/').
        let (path, symbol) = match body.rsplit_once(':') {
            Some((p, s)) if is_c_identifier(s) => (p, s),
            Some((_, s)) if !s.contains('/') && !s.contains('.') => {
                return Err(HasherError::BadName(format!(
                    "'{name}': symbol '{s}' is not a C identifier"
                )));
            }
            _ => (body, DEFAULT_SYMBOL),
        };
        if path.is_empty() {
            return Err(HasherError::BadName(format!(
                "'{name}': no path; use so:PATH[:SYMBOL] or c:FILE.c[:SYMBOL]"
            )));
        }
        if compile && !path.ends_with(".c") {
            return Err(HasherError::BadName(format!(
                "'{name}': c: takes a C source file ending in .c (use so: for a shared object)"
            )));
        }
        let label = match label {
            Some(l) if is_label(l) => l.to_string(),
            Some(l) => {
                return Err(HasherError::BadName(format!(
                    "'{name}': label '{l}' must be letters, digits, '_', '-', '.', '+'"
                )));
            }
            None => symbol.to_string(),
        };
        let scope = if label.ends_with("-addr") {
            Scope::Addr
        } else {
            Scope::Full
        };
        Ok(HasherSpec::External {
            label,
            path: PathBuf::from(path),
            symbol: symbol.to_string(),
            compile,
            scope,
        })
    }

    /// The name the hasher will have.
    pub fn label(&self) -> &str {
        match self {
            HasherSpec::Builtin(b) => b.static_name(),
            HasherSpec::External { label, .. } => label,
        }
    }

    /// The built-in, if this is one: loads without running foreign code.
    pub fn builtin(&self) -> Option<Builtin> {
        match self {
            HasherSpec::Builtin(b) => Some(*b),
            HasherSpec::External { .. } => None,
        }
    }

    /// Builds the hasher: a built-in directly; a C hasher by compiling (for `c:`, into
    /// [`external::cache_dir`]) and loading its shared object.
    ///
    /// # Safety
    /// For `so:`/`c:` this loads a shared object (running its initialisers) and will call
    /// its symbol as `uint32_t f(const uint32_t key[4], uint32_t offset)` from many threads.
    /// The caller guarantees the object is meant to be loaded, that the symbol has exactly
    /// that signature, and that it is pure and thread-safe (see [`external`]).
    pub unsafe fn load(&self) -> Result<SharedHasher, HasherError> {
        match self {
            HasherSpec::Builtin(b) => Ok(b.shared()),
            HasherSpec::External {
                label,
                path,
                symbol,
                compile,
                scope,
            } => {
                let so = if *compile {
                    external::compile_c(path).map_err(HasherError::External)?
                } else {
                    path.clone()
                };
                // SAFETY: forwarded from this function's contract.
                let h = unsafe { external::CHasher::load(label, &so, symbol, *scope) }
                    .map_err(HasherError::External)?;
                Ok(std::sync::Arc::new(h))
            }
        }
    }
}

/// Parses a comma-separated list of hasher names; `all` is every built-in, `seed` the
/// eight of the seed thread, and either may appear inside a list (`seed,xxh3`). Names
/// repeat at most once (the first stays).
pub fn parse_list(list: &str, key: HashKey) -> Result<Vec<HasherSpec>, HasherError> {
    let mut out: Vec<HasherSpec> = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        let names: Vec<String> = match item {
            "all" => all_names().into_iter().map(String::from).collect(),
            "seed" => SEED_EIGHT.iter().map(|s| s.to_string()).collect(),
            "" => {
                return Err(HasherError::BadName(format!(
                    "empty name in hasher list '{list}'"
                )));
            }
            _ => vec![item.to_string()],
        };
        for n in names {
            let spec = HasherSpec::parse(&n, key)?;
            if !out.iter().any(|s| s.label() == spec.label()) {
                out.push(spec);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<HasherSpec, HasherError> {
        HasherSpec::parse(s, HashKey::DEFAULT)
    }

    #[test]
    fn names_of_every_form() {
        assert_eq!(parse("jhash2-addr").unwrap().label(), "jhash2-addr");
        match parse("so:./h.so").unwrap() {
            HasherSpec::External {
                label,
                path,
                symbol,
                compile,
                scope,
            } => {
                assert_eq!(
                    (label.as_str(), symbol.as_str()),
                    ("futex_hash", "futex_hash")
                );
                assert_eq!(path, PathBuf::from("./h.so"));
                assert!(!compile);
                assert_eq!(scope, Scope::Full);
            }
            other => panic!("{other:?}"),
        }
        match parse("mine-addr=c:/tmp/x.c:my_hash").unwrap() {
            HasherSpec::External {
                label,
                path,
                symbol,
                compile,
                scope,
            } => {
                assert_eq!(label, "mine-addr");
                assert_eq!(path, PathBuf::from("/tmp/x.c"));
                assert_eq!(symbol, "my_hash");
                assert!(compile);
                assert_eq!(scope, Scope::Addr);
            }
            other => panic!("{other:?}"),
        }
        assert!(parse("so:").unwrap_err().to_string().contains("no path"));
        assert!(parse("c:x.so").unwrap_err().to_string().contains(".c"));
        assert!(
            parse("so:x.so:9bad")
                .unwrap_err()
                .to_string()
                .contains("'9bad'")
        );
        assert!(
            parse("a b=so:x.so")
                .unwrap_err()
                .to_string()
                .contains("'a b'")
        );
        assert!(parse("nope").unwrap_err().to_string().contains("'nope'"));
    }

    #[test]
    fn lists_expand_and_deduplicate() {
        let all = parse_list("all", HashKey::DEFAULT).unwrap();
        assert_eq!(all.len(), 2 * super::super::ALGORITHMS.len());
        let l = parse_list("seed,hash_long_old,jhash2", HashKey::DEFAULT).unwrap();
        assert_eq!(l.len(), SEED_EIGHT.len() + 1);
        assert_eq!(l.last().unwrap().label(), "hash_long_old");
        assert!(parse_list("jhash2,,xxh3", HashKey::DEFAULT).is_err());
    }
}

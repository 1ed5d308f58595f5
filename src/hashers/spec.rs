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
use std::path::{Path, PathBuf};

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

    /// Builds the hasher: a built-in directly; a C hasher by compiling (for `c:`, into the
    /// per-user compile cache) and loading its shared object, once a child process has
    /// loaded, called and unloaded it without trouble ([`external::CHasher::load`]).
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
                let h = unsafe { external::CHasher::load(label, &so, path, symbol, *scope) }
                    .map_err(|e| match e {
                        // Name the file the user wrote, not the cached object.
                        external::ExternalError::MissingSymbol {
                            path: so, symbol, ..
                        } if *compile => external::ExternalError::MissingSymbol {
                            path: so,
                            symbol,
                            source: Some(path.clone()),
                        },
                        e => e,
                    })
                    .map_err(HasherError::External)?;
                Ok(std::sync::Arc::new(h))
            }
        }
    }
}

/// Parses a comma-separated list of hasher names; `all` is every built-in, `seed` the
/// eight of the seed thread, and either may appear inside a list (`seed,xxh3`). A hasher
/// listed twice is kept once, the first time (the library merges; the command line
/// refuses such a list before it gets here).
///
/// Every hasher of the list ends up with its own name, since tables, CSV/JSON `algo`
/// fields and plots key on it. C hashers without a `LABEL=` are named by their symbol,
/// so two files with the default `futex_hash` would share one name and one would vanish
/// from every table: unlabelled C hashers whose names collide are named by their file's
/// stem instead (`c:a.c,c:b.c` → `a`, `b`), and if the stems collide too (or the stem
/// is not a valid label, or names another hasher of the list) by `SYMBOL#2`, `SYMBOL#3`,
/// … in list order. The same file and symbol twice is one hasher, however the file is
/// reached ([`same_file`]: another path, a symbolic or hard link). An explicit label
/// given to two different hashers is an error: the user asked for one name twice.
pub fn parse_list(list: &str, key: HashKey) -> Result<Vec<HasherSpec>, HasherError> {
    let mut out: Vec<HasherSpec> = Vec::new();
    // Per entry of `out`: whether its name came from a `LABEL=` (or is a built-in's).
    let mut named: Vec<bool> = Vec::new();
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
            let explicit = spec.builtin().is_some() || has_label(&n);
            if out.iter().any(|s| same_hasher(s, &spec)) {
                continue;
            }
            if explicit
                && let Some(i) = out.iter().position(|s| s.label() == spec.label())
                && named[i]
            {
                return Err(HasherError::BadName(format!(
                    "'{}' names two different hashers in '{list}'; give each its own LABEL=",
                    spec.label()
                )));
            }
            out.push(spec);
            named.push(explicit);
        }
    }
    distinct_names(&mut out, &named);
    Ok(out)
}

/// Whether `name` (one item of a list) starts with a `LABEL=` before `so:`/`c:`.
fn has_label(name: &str) -> bool {
    matches!(name.trim().split_once('='), Some((_, r)) if r.starts_with("so:") || r.starts_with("c:"))
}

/// The same built-in, or the same file and symbol (whatever the label).
fn same_hasher(a: &HasherSpec, b: &HasherSpec) -> bool {
    match (a, b) {
        (HasherSpec::Builtin(x), HasherSpec::Builtin(y)) => x.static_name() == y.static_name(),
        (
            HasherSpec::External {
                path: pa,
                symbol: sa,
                compile: ca,
                ..
            },
            HasherSpec::External {
                path: pb,
                symbol: sb,
                compile: cb,
                ..
            },
        ) => sa == sb && ca == cb && same_file(pa, pb),
        _ => false,
    }
}

/// Whether two paths name one file: the same path, or one existing file reached twice
/// (another spelling, a symbolic or a hard link: the same device and inode).
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if a == b {
        return true;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Renames the unlabelled C hashers of `specs` whose names collide (see [`parse_list`]).
fn distinct_names(specs: &mut [HasherSpec], named: &[bool]) {
    let labels: Vec<String> = specs.iter().map(|s| s.label().to_string()).collect();
    let count = |l: &str, among: &[String]| among.iter().filter(|x| x.as_str() == l).count();
    let renamed: Vec<usize> = (0..specs.len())
        .filter(|&i| !named[i] && count(&labels[i], &labels) > 1)
        .collect();
    let stem = |i: usize| match &specs[i] {
        HasherSpec::External { path, .. } => path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|s| is_label(s))
            .map(str::to_string),
        HasherSpec::Builtin(_) => None,
    };
    // The names that stay: every hasher not being renamed.
    let kept: Vec<String> = (0..specs.len())
        .filter(|i| !renamed.contains(i))
        .map(|i| labels[i].clone())
        .collect();
    let stems: Vec<Option<String>> = renamed.iter().map(|&i| stem(i)).collect();
    for (r, &i) in renamed.iter().enumerate() {
        let new = match &stems[r] {
            // The stem, if no kept name and no other renamed hasher's stem is the same.
            Some(st)
                if !kept.contains(st)
                    && stems.iter().filter(|o| o.as_deref() == Some(st)).count() == 1 =>
            {
                st.clone()
            }
            // `#` is not allowed in labels, so this cannot meet a user's or built-in name.
            _ => format!("{}#{}", labels[i], i + 1),
        };
        if let HasherSpec::External { label, .. } = &mut specs[i] {
            *label = new;
        }
    }
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

    fn labels(list: &str) -> Vec<String> {
        parse_list(list, HashKey::DEFAULT)
            .unwrap()
            .iter()
            .map(|s| s.label().to_string())
            .collect()
    }

    #[test]
    fn unlabelled_c_hashers_get_distinct_names() {
        // Alone, a C hasher keeps the documented default name, its symbol.
        assert_eq!(labels("c:/x/a.c"), ["futex_hash"]);
        // Two with the default symbol: named by file stem.
        assert_eq!(labels("c:/x/a.c,so:/y/b.so"), ["a", "b"]);
        // Stems collide too: the symbol and the hasher's 1-based place in the list.
        assert_eq!(
            labels("c:/x/a.c,c:/y/a.c"),
            ["futex_hash#1", "futex_hash#2"]
        );
        // A label the user gave is kept; an unlabelled one whose stem is taken moves.
        assert_eq!(
            labels("futex_hash=c:/x/a.c,c:/y/q.c,c:/z/q.c,c:/w/r.c"),
            ["futex_hash", "futex_hash#2", "futex_hash#3", "r"]
        );
        // The same file and symbol twice is one hasher; a stem that names a built-in
        // of the list is not used.
        assert_eq!(labels("c:/x/a.c,c:/x/a.c"), ["futex_hash"]);
        assert_eq!(
            labels("jhash2,c:/x/jhash2.c,c:/y/b.c"),
            ["jhash2", "futex_hash#2", "b"]
        );
        // Distinct symbols need no renaming.
        assert_eq!(labels("c:/x/a.c:f,c:/x/a.c:g"), ["f", "g"]);
        // One explicit label for two different hashers is refused, naming it.
        let e = parse_list("m=c:/x/a.c,m=c:/y/b.c", HashKey::DEFAULT).unwrap_err();
        assert!(e.to_string().contains("'m'"), "{e}");
        let e = parse_list("jhash2=c:/x/a.c,jhash2", HashKey::DEFAULT).unwrap_err();
        assert!(e.to_string().contains("'jhash2'"), "{e}");
    }
}

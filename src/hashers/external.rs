//! Hashers written in C: a function in a shared object, or a C source file compiled into
//! one, loaded with `libloading` (dlopen/dlsym).
//!
//! The ABI is the kernel's own view of the key, so kernel code pastes in unchanged:
//!
//! ```c
//! #include <stdint.h>
//! uint32_t futex_hash(const uint32_t *key, uint32_t offset);
//! ```
//!
//! `key` points to the four words `[lo(w0), hi(w0), lo(w1), hi(w1)]` of the futex key
//! (docs/hashers.md §2) and `offset` is its offset word with the kind bits, the seed of
//! `kernel/futex/core.c`'s `jhash2(key, 4, key->both.offset)`. So `return jhash2(key, 4,
//! offset);` is the global hash and `jhash2(key + 2, 2, offset)` the private one.
//!
//! The function must be pure (same words, same hash) and thread-safe: the model table and
//! the benches call it from every thread at once. It runs in the harness's own process, so
//! a crashing hash crashes the run.
//!
//! `c:` sources are compiled with `$CC` (else `cc`) as `-O2 -shared -fPIC` into a cache
//! directory ([`cache_dir`]) under a name derived from the source's content, the compiler
//! and the flags, so an edited file is compiled again and an unchanged one is not.

use super::{KeyHasher, Scope};
use crate::key::FutexKey;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C signature: `uint32_t f(const uint32_t *key, uint32_t offset)`.
type CHashFn = unsafe extern "C" fn(*const u32, u32) -> u32;

/// The flags every `c:` source is compiled with.
pub const CFLAGS: [&str; 3] = ["-O2", "-shared", "-fPIC"];

/// Why a C hasher could not be built.
#[derive(Debug)]
pub enum ExternalError {
    /// The file does not exist or cannot be read.
    Missing {
        /// The path as given.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The C compiler could not be started.
    NoCompiler {
        /// `$CC` or `cc`.
        compiler: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The compiler ran and refused the source.
    CompileFailed {
        /// The source file.
        path: PathBuf,
        /// `$CC` or `cc`.
        compiler: String,
        /// The compiler's first diagnostic line.
        first_error: String,
    },
    /// dlopen failed: not a shared object, the wrong architecture, a missing dependency.
    NotLoadable {
        /// The shared object.
        path: PathBuf,
        /// dlerror's reason.
        reason: String,
    },
    /// The symbol is not in the shared object.
    MissingSymbol {
        /// The shared object.
        path: PathBuf,
        /// The symbol looked up.
        symbol: String,
    },
    /// The cache directory could not be created or written.
    Cache {
        /// The directory.
        dir: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
}

impl fmt::Display for ExternalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExternalError::Missing { path, reason } => {
                write!(f, "cannot read hasher file '{}': {reason}", path.display())
            }
            ExternalError::NoCompiler { compiler, reason } => write!(
                f,
                "cannot run the C compiler '{compiler}' ({reason}); install one (apt-get install gcc) or set CC"
            ),
            ExternalError::CompileFailed {
                path,
                compiler,
                first_error,
            } => write!(
                f,
                "'{compiler}' could not compile '{}': {first_error}",
                path.display()
            ),
            ExternalError::NotLoadable { path, reason } => write!(
                f,
                "'{}' is not a loadable shared object for this machine: {reason}",
                path.display()
            ),
            ExternalError::MissingSymbol { path, symbol } => write!(
                f,
                "symbol '{symbol}' not found in '{}' (name it as so:PATH:SYMBOL; it must be exported)",
                path.display()
            ),
            ExternalError::Cache { dir, reason } => write!(
                f,
                "cannot use the compile cache '{}': {reason} (set FUTEXHASH_CACHE_DIR)",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for ExternalError {}

/// Where compiled `c:` hashers are kept: `$FUTEXHASH_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/futexhash/c-hashers`, else `$HOME/.cache/futexhash/c-hashers`, else
/// the temporary directory.
pub fn cache_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("FUTEXHASH_CACHE_DIR") {
        return d;
    }
    let base = env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("futexhash").join("c-hashers")
}

/// The compiler `c:` uses: `$CC`, else `cc`.
pub fn compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".to_string())
}

/// Compiles the C source `src` into the cache (unless a build of the same content, compiler
/// and flags is there) and returns the shared object's path.
pub fn compile_c(src: &Path) -> Result<PathBuf, ExternalError> {
    let source = std::fs::read(src).map_err(|e| ExternalError::Missing {
        path: src.to_path_buf(),
        reason: e.to_string(),
    })?;
    let cc = compiler();
    let mut id_input = source.clone();
    id_input.extend_from_slice(cc.as_bytes());
    for f in CFLAGS {
        id_input.extend_from_slice(f.as_bytes());
    }
    // A content address, not a security boundary: xxh3-128 is collision-free enough for a
    // cache of a user's own files.
    let id = xxhash_rust::xxh3::xxh3_128(&id_input);
    let dir = cache_dir();
    let so = dir.join(format!("{id:032x}.so"));
    if so.is_file() {
        return Ok(so);
    }
    let cache_err = |e: std::io::Error| ExternalError::Cache {
        dir: dir.clone(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(cache_err)?;
    // Compile to a unique temporary name, then rename: concurrent runs never load a
    // half-written object.
    let tmp = dir.join(format!(".{id:032x}.{}.so.tmp", std::process::id()));
    let mut parts = cc.split_whitespace();
    let program = parts.next().unwrap_or("cc").to_string();
    let output = Command::new(&program)
        .args(parts)
        .args(CFLAGS)
        .arg("-o")
        .arg(&tmp)
        .arg(src)
        .output()
        .map_err(|e| ExternalError::NoCompiler {
            compiler: cc.clone(),
            reason: e.to_string(),
        })?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first_error = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| stderr.lines().next())
            .unwrap_or("no diagnostic")
            .trim()
            .to_string();
        return Err(ExternalError::CompileFailed {
            path: src.to_path_buf(),
            compiler: cc,
            first_error,
        });
    }
    std::fs::rename(&tmp, &so).map_err(cache_err)?;
    Ok(so)
}

/// A hasher that calls a C function of a loaded shared object.
pub struct CHasher {
    label: String,
    description: String,
    source: String,
    scope: Scope,
    func: CHashFn,
    // Keeps the object mapped for as long as `func` may be called; dropped last.
    _library: libloading::Library,
}

impl fmt::Debug for CHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CHasher")
            .field("label", &self.label)
            .field("source", &self.source)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl CHasher {
    /// Opens the shared object `path` and looks up `symbol`.
    ///
    /// # Safety
    /// Loading runs the object's initialisers, and [`KeyHasher::hash`] will call `symbol`
    /// from any thread as `uint32_t symbol(const uint32_t *key, uint32_t offset)` with
    /// `key` pointing to four readable words. The caller guarantees the object is meant to
    /// be loaded into this process and the symbol is a pure, thread-safe function of
    /// exactly that signature that reads at most the four words.
    pub unsafe fn load(
        label: &str,
        path: &Path,
        symbol: &str,
        scope: Scope,
    ) -> Result<Self, ExternalError> {
        // dlopen searches the library path for a name without '/'; the user means a file.
        let resolved = std::fs::canonicalize(path).map_err(|e| ExternalError::Missing {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        if !resolved.is_file() {
            return Err(ExternalError::Missing {
                path: path.to_path_buf(),
                reason: "not a regular file".to_string(),
            });
        }
        // SAFETY: the caller guarantees the object may be loaded (its initialisers run).
        let library = unsafe { libloading::Library::new(&resolved) }.map_err(|e| {
            ExternalError::NotLoadable {
                path: path.to_path_buf(),
                reason: dl_reason(&e),
            }
        })?;
        // SAFETY: the caller guarantees the symbol has the `CHashFn` signature; the
        // function pointer is copied out and kept valid by storing `library` beside it.
        let func: CHashFn = unsafe {
            *library.get::<CHashFn>(symbol.as_bytes()).map_err(|_| {
                ExternalError::MissingSymbol {
                    path: path.to_path_buf(),
                    symbol: symbol.to_string(),
                }
            })?
        };
        Ok(CHasher {
            label: label.to_string(),
            description: format!("C function {symbol}() of {}", path.display()),
            source: path.display().to_string(),
            scope,
            func,
            _library: library,
        })
    }
}

/// dlerror's message without the repeated path prefix.
fn dl_reason(e: &libloading::Error) -> String {
    let s = e.to_string();
    match s.rsplit_once(": ") {
        Some((_, tail)) if !tail.is_empty() => tail.to_string(),
        _ => s,
    }
}

impl KeyHasher for CHasher {
    fn name(&self) -> &str {
        &self.label
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn source(&self) -> &str {
        &self.source
    }
    fn scope(&self) -> Scope {
        self.scope
    }
    #[inline]
    fn hash(&self, key: &FutexKey) -> u32 {
        let words = key.full_words();
        // SAFETY: `load`'s contract: `func` has the `CHashFn` signature, reads at most the
        // four words `words` provides, is thread-safe, and `_library` keeps it mapped.
        unsafe { (self.func)(words.as_ptr(), key.offset()) }
    }
}

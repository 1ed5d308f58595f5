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
//! before any work the object is loaded with every symbol resolved (`RTLD_NOW`) and the
//! function is called on a few keys of each kind in a forked child ([`probe`]): one that
//! crashes, calls `exit()` or does not return within [`PROBE_LIMIT`] is refused instead of
//! ending the run with a signal or a silent exit 0. An object built for another machine is
//! named as such (its ELF `e_machine`).
//!
//! `c:` sources are compiled with `$CC` (else `cc`) as `-O2 -shared -fPIC` into a cache
//! directory (`c-hashers/` of [`crate::assets::private_cache_dir`]) under a name derived
//! from the source's content, the compiler and the flags, so an edited file is compiled
//! again and an unchanged one is not. The cache is per user and private (0700); a
//! directory or object in it that another user owns or could write is refused, never
//! loaded.

use super::{KeyHasher, Scope};
use crate::assets::CacheError;
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
        /// The hasher's label.
        label: String,
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
        /// The C file the object was compiled from (`c:`), which the message names
        /// instead of the cached object.
        source: Option<PathBuf>,
    },
    /// The shared object is an ELF file for another machine.
    WrongArch {
        /// The hasher's label.
        label: String,
        /// The shared object.
        path: PathBuf,
        /// The machine it was built for (`aarch64`, or `e_machine N`).
        built_for: String,
    },
    /// The function crashed, exited or hung when called on the probe keys in a child
    /// process ([`probe`]).
    ProbeFailed {
        /// The hasher's label.
        label: String,
        /// The shared object.
        path: PathBuf,
        /// What happened, in words ("crashed with SIGSEGV on key private:…").
        what: String,
    },
    /// A cached object that others could have written: not loaded.
    UnsafeCache {
        /// The object.
        path: PathBuf,
        /// Why it is not trusted ("owned by uid 65534", "writable by others").
        reason: String,
    },
    /// No cache directory for the compiled object could be used, or the one found is not
    /// trusted ([`crate::assets::private_cache_dir`]).
    CacheDir(CacheError),
    /// The cache directory could not be written.
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
            ExternalError::NotLoadable {
                label,
                path,
                reason,
            } => write!(
                f,
                "C hasher '{label}': '{}' is not a loadable shared object for this machine: {reason}",
                path.display()
            ),
            ExternalError::MissingSymbol {
                path,
                symbol,
                source: Some(src),
            } => write!(
                f,
                "symbol '{symbol}' not found in '{}' (compiled to '{}'); name the function as c:{}:SYMBOL, and it must not be static",
                src.display(),
                path.display(),
                src.display()
            ),
            ExternalError::MissingSymbol {
                path,
                symbol,
                source: None,
            } => write!(
                f,
                "symbol '{symbol}' not found in '{}' (name it as so:PATH:SYMBOL; it must be exported)",
                path.display()
            ),
            ExternalError::WrongArch {
                label,
                path,
                built_for,
            } => write!(
                f,
                "C hasher '{label}': '{}' is built for {built_for}, this is {}: rebuild it for this machine",
                path.display(),
                std::env::consts::ARCH
            ),
            ExternalError::ProbeFailed { label, path, what } => write!(
                f,
                "C hasher '{label}' ({}) {what} when probed in a child process before any work; it must return a hash for every key",
                path.display()
            ),
            ExternalError::UnsafeCache { path, reason } => write!(
                f,
                "refusing the compile cache '{}': {reason}, so another user could have put code there; remove it or set FUTEXHASH_CACHE_DIR to a directory of your own",
                path.display()
            ),
            ExternalError::CacheDir(e) => write!(f, "{e}"),
            ExternalError::Cache { dir, reason } => write!(
                f,
                "cannot use the compile cache '{}': {reason} (set FUTEXHASH_CACHE_DIR)",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for ExternalError {}

/// Refuses `path` unless it is this user's and not writable by others
/// ([`crate::assets::check_private`]): what a cached object must be before it is loaded.
fn check_private(path: &Path) -> Result<(), ExternalError> {
    crate::assets::check_private(path, true).map_err(|e| match e {
        crate::assets::Unusable::Refuse(CacheError::Untrusted { path, reason }) => {
            ExternalError::UnsafeCache { path, reason }
        }
        crate::assets::Unusable::Refuse(e) => ExternalError::CacheDir(e),
        crate::assets::Unusable::Skip(reason) => ExternalError::Cache {
            dir: path.to_path_buf(),
            reason,
        },
    })
}

/// The directory of compiled `c:` hashers: `c-hashers/` of the first usable per-user
/// cache directory ([`crate::assets::private_cache_dir`]). One that is not private is
/// refused, not silently replaced by a fresh directory elsewhere: a cache someone else
/// could write means someone may have tampered with it, and the user should hear of that.
fn private_cache_dir() -> Result<PathBuf, ExternalError> {
    crate::assets::private_cache_dir("c-hashers", "compiled C hashers")
        .map_err(ExternalError::CacheDir)
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
    let dir = private_cache_dir()?;
    let so = dir.join(format!("{id:032x}.so"));
    if std::fs::symlink_metadata(&so).is_ok() {
        // In a private directory only this user could have put it there; checked anyway,
        // as the directory may have been private only since a chmod.
        if !std::fs::symlink_metadata(&so).is_ok_and(|m| m.is_file()) {
            return Err(ExternalError::UnsafeCache {
                path: so,
                reason: "it is not a regular file".to_string(),
            });
        }
        check_private(&so)?;
        return Ok(so);
    }
    let cache_err = |e: std::io::Error| ExternalError::Cache {
        dir: dir.clone(),
        reason: e.to_string(),
    };
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
        if let Some(built_for) = foreign_elf_machine(&resolved) {
            return Err(ExternalError::WrongArch {
                label: label.to_string(),
                path: path.to_path_buf(),
                built_for,
            });
        }
        // RTLD_NOW: every symbol the object needs is resolved here, so an undefined one is
        // refused at load instead of killing the run (exit 127) at the first call;
        // RTLD_LOCAL: its symbols do not leak into later loads.
        // SAFETY: the caller guarantees the object may be loaded (its initialisers run).
        let library: libloading::Library = unsafe {
            libloading::os::unix::Library::open(
                Some(&resolved),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
            )
        }
        .map_err(|e| ExternalError::NotLoadable {
            label: label.to_string(),
            path: path.to_path_buf(),
            reason: dl_reason(&e, &resolved),
        })?
        .into();
        // SAFETY: the caller guarantees the symbol has the `CHashFn` signature; the
        // function pointer is copied out and kept valid by storing `library` beside it.
        let func: CHashFn = unsafe {
            *library.get::<CHashFn>(symbol.as_bytes()).map_err(|_| {
                ExternalError::MissingSymbol {
                    path: path.to_path_buf(),
                    symbol: symbol.to_string(),
                    source: None,
                }
            })?
        };
        // SAFETY: `func` has the `CHashFn` signature (the caller's guarantee) and `library`
        // keeps it mapped for the call.
        unsafe { probe(func) }.map_err(|what| ExternalError::ProbeFailed {
            label: label.to_string(),
            path: path.to_path_buf(),
            what,
        })?;
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

/// The machine an ELF shared object was built for, when it is not this one (`None` for
/// this machine's objects and for files that are not ELF, which dlopen then names).
/// `e_machine` is the 16-bit field at offset 18 of the ELF header, in the byte order of
/// `EI_DATA` (offset 5: 1 little-endian, 2 big-endian); values from `<elf.h>`.
fn foreign_elf_machine(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut h = [0u8; 20];
    std::fs::File::open(path).ok()?.read_exact(&mut h).ok()?;
    if h[..4] != *b"\x7fELF" {
        return None;
    }
    let machine = match h[5] {
        2 => u16::from_be_bytes([h[18], h[19]]),
        _ => u16::from_le_bytes([h[18], h[19]]),
    };
    let name = |m: u16| match m {
        3 => Some("x86"),
        8 => Some("mips"),
        20 => Some("powerpc"),
        21 => Some("powerpc64"),
        22 => Some("s390x"),
        40 => Some("arm"),
        62 => Some("x86_64"),
        183 => Some("aarch64"),
        243 => Some("riscv64"),
        258 => Some("loongarch64"),
        _ => None,
    };
    let here = std::env::consts::ARCH;
    match name(machine) {
        Some(n) if n == here => None,
        Some(n) => Some(n.to_string()),
        // An e_machine this table does not know cannot be told to be this one's.
        None if [3u16, 8, 20, 21, 22, 40, 62, 183, 243, 258]
            .iter()
            .any(|&m| name(m) == Some(here)) =>
        {
            Some(format!("ELF machine {machine}"))
        }
        None => None,
    }
}

/// How long the probe child may take for all its keys before it counts as hung: a pure
/// hash of a dozen keys takes microseconds, so this is only ever reached by a loop.
pub const PROBE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The keys the probe calls the function on: a few of each kind (private, anon, inode),
/// including the spec's vectors (docs/hashers.md §5) and the extremes of each field.
fn probe_keys() -> Vec<FutexKey> {
    [
        "private:0xffff888012345600:0x7f0000001010",
        "private:0xffff888100000000:0x7ffc00000000",
        "private:0:0",
        "anon:0xffff888012345600:0x7f0000001010",
        "anon:0xffffffffffffffff:0xfffffffffffffffc",
        "inode:1:0:0",
        "inode:0xffffffffffffffff:0xfffffffffffff:4092",
        "inode:12345:678:0x800",
    ]
    .iter()
    .map(|k| k.parse().expect("a valid probe key"))
    .collect()
}

/// Calls `func` on [`probe_keys`] in a forked child, which writes each hash to a pipe as it
/// gets it and then `_exit`s; the parent reads for at most [`PROBE_LIMIT`]. The reason in
/// words if the child crashed (the signal), exited from inside the hash (the pipe ends
/// short with an exit status), or hung (killed and reaped).
///
/// # Safety
/// `func` must have the `CHashFn` signature and stay mapped for the call.
unsafe fn probe(func: CHashFn) -> Result<(), String> {
    let keys = probe_keys();
    // Everything the child needs is computed before the fork: after it the child may only
    // do async-signal-safe work (another thread may hold the allocator's lock).
    let inputs: Vec<([u32; 4], u32)> = keys.iter().map(|k| (k.full_words(), k.offset())).collect();
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a writable array of two ints, as pipe2(2) requires.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        // Cannot probe (out of descriptors): let the run go on as it did before probing.
        return Ok(());
    }
    let (rd, wr) = (fds[0], fds[1]);
    // SAFETY: fork(2) in a possibly multi-threaded process: the child runs only
    // async-signal-safe code: it calls the user's function (pure by contract: it must not
    // allocate or lock, and if it does, it is in the child, which the parent kills after
    // PROBE_LIMIT), write(2) on a pipe and _exit(2). It touches no Rust runtime state,
    // allocates nothing and never returns into the parent's code.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        for (words, offset) in &inputs {
            // SAFETY: `func` has the `CHashFn` signature (this function's contract) and
            // `words` is four readable u32s.
            let h = unsafe { func(words.as_ptr(), *offset) };
            let bytes = h.to_ne_bytes();
            // SAFETY: `bytes` is 4 readable bytes; `wr` is the pipe's write end.
            unsafe { libc::write(wr, bytes.as_ptr().cast(), bytes.len()) };
        }
        // SAFETY: _exit(2) ends the child without running the parent's atexit handlers or
        // flushing its stdio buffers (which would print the parent's output twice).
        unsafe { libc::_exit(0) };
    }
    // SAFETY: closing our copy of the write end, so the read sees EOF when the child ends.
    unsafe { libc::close(wr) };
    if pid < 0 {
        // SAFETY: closing the read end we own.
        unsafe { libc::close(rd) };
        return Ok(());
    }
    let want = inputs.len() * 4;
    let mut got: Vec<u8> = Vec::with_capacity(want);
    let deadline = std::time::Instant::now() + PROBE_LIMIT;
    let mut hung = false;
    while got.len() < want {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut pfd = libc::pollfd {
            fd: rd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: `pfd` is one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if n == 0 {
            hung = true;
            break;
        }
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        let mut buf = [0u8; 64];
        // SAFETY: `buf` is 64 writable bytes; `rd` is the pipe's read end.
        let r = unsafe { libc::read(rd, buf.as_mut_ptr().cast(), buf.len()) };
        if r <= 0 {
            break;
        }
        got.extend_from_slice(&buf[..r as usize]);
    }
    // SAFETY: closing the read end we own.
    unsafe { libc::close(rd) };
    if hung {
        // SAFETY: `pid` is our child, not yet reaped, so the pid cannot have been reused.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let mut status = 0;
    // SAFETY: reaping our own child; `status` is a valid int.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
    {}
    let done = got.len() / 4;
    let at = || {
        keys.get(done)
            .map_or(String::new(), |k| format!(" on key {k}"))
    };
    if hung {
        return Err(format!(
            "did not return within {} s{} (killed)",
            PROBE_LIMIT.as_secs(),
            at()
        ));
    }
    if libc::WIFSIGNALED(status) {
        return Err(format!(
            "crashed with {}{}",
            signal_name(libc::WTERMSIG(status)),
            at()
        ));
    }
    if done < inputs.len() {
        let how = if libc::WIFEXITED(status) {
            format!("called exit({})", libc::WEXITSTATUS(status))
        } else {
            "stopped".to_string()
        };
        return Err(format!("{how} instead of returning{}", at()));
    }
    Ok(())
}

/// `SIGSEGV` for 11: the names a crashing hash dies of, else the number.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGSYS => "SIGSYS",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGPIPE => "SIGPIPE",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// dlerror's message without the repeated path prefix (`PATH: undefined symbol: f` →
/// `undefined symbol: f`).
fn dl_reason(e: &libloading::Error, path: &Path) -> String {
    let s = e.to_string();
    let prefix = format!("{}: ", path.display());
    match s.find(&prefix) {
        Some(i) if s.len() > i + prefix.len() => s[i + prefix.len()..].to_string(),
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

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
//! before any work, and before the object is loaded here at all, a child process loads it
//! (its constructors run), calls the function on a few keys of each kind and unloads it
//! (its destructors run) ([`probe`]): an object that crashes, calls `exit()`, hangs past
//! [`PROBE_LIMIT`] or prints anything in any of these steps is refused, with one line
//! naming it and the step, instead of ending the run with a signal, a silent exit 0 or
//! output mixed into the results. An object built for another machine is named as such
//! (its ELF `e_machine`).
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
use std::ffi::{CString, OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
    /// The object misbehaved in the probe child ([`probe`]): its constructor, the function
    /// on one of the probe keys, or its destructor crashed, exited, hung or printed.
    ProbeFailed {
        /// The hasher's label.
        label: String,
        /// The file the user named (the C source for `c:`).
        path: PathBuf,
        /// What happened, in words ("its constructor called exit(0)", "futex_hash()
        /// crashed with SIGSEGV instead of returning, on key private:…").
        what: String,
    },
    /// The probe child could not be run, so the object is not loaded at all.
    ProbeUnavailable {
        /// The hasher's label.
        label: String,
        /// The file the user named.
        path: PathBuf,
        /// Why ("this program does not serve the probe child").
        reason: String,
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
                "C hasher '{label}' ({}): {what}, when probed in a child process before any \
                 work, so it is not loaded (a hasher must load, hash every key and unload \
                 without crashing, exiting, hanging or printing)",
                path.display()
            ),
            ExternalError::ProbeUnavailable {
                label,
                path,
                reason,
            } => write!(
                f,
                "C hasher '{label}' ({}) could not be probed in a child process before loading \
                 ({reason}), so it is not loaded",
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
    /// Probes the shared object `path` in a child process ([`probe`]: its constructors,
    /// `symbol` on a few keys, its destructors) and, only once that child has shown it
    /// behaves, opens it in this process and looks up `symbol`. `named` is the file
    /// messages name: the C source for `c:`, else `path` itself.
    ///
    /// # Safety
    /// Loading runs the object's initialisers here too (they ran without trouble in the
    /// probe child, but code may behave differently on a second run), and
    /// [`KeyHasher::hash`] will call `symbol` from any thread as `uint32_t symbol(const
    /// uint32_t *key, uint32_t offset)` with `key` pointing to four readable words. The
    /// caller guarantees the object is meant to be loaded into this process and the symbol
    /// is a pure, thread-safe function of exactly that signature that reads at most the
    /// four words.
    pub unsafe fn load(
        label: &str,
        path: &Path,
        named: &Path,
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
        probe(&resolved, symbol).map_err(|fault| match fault {
            ProbeFault::NotLoadable(reason) => ExternalError::NotLoadable {
                label: label.to_string(),
                path: path.to_path_buf(),
                reason: strip_path(&reason, &resolved),
            },
            ProbeFault::MissingSymbol => ExternalError::MissingSymbol {
                path: path.to_path_buf(),
                symbol: symbol.to_string(),
                source: None,
            },
            ProbeFault::Misbehaved(what) => ExternalError::ProbeFailed {
                label: label.to_string(),
                path: named.to_path_buf(),
                what,
            },
            ProbeFault::Unavailable(reason) => ExternalError::ProbeUnavailable {
                label: label.to_string(),
                path: named.to_path_buf(),
                reason,
            },
        })?;
        // RTLD_NOW: every symbol the object needs is resolved here, so an undefined one is
        // refused at load instead of killing the run (exit 127) at the first call;
        // RTLD_LOCAL: its symbols do not leak into later loads.
        // SAFETY: the caller guarantees the object may be loaded (its initialisers run), and
        // they have just run to completion, quietly, in the probe child.
        let library: libloading::Library = unsafe {
            libloading::os::unix::Library::open(
                Some(&resolved),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
            )
        }
        .map_err(|e| ExternalError::NotLoadable {
            label: label.to_string(),
            path: path.to_path_buf(),
            reason: strip_path(&e.to_string(), &resolved),
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

/// How long the probe child may take, from its start to its exit, before it counts as
/// hung and is killed. Starting this binary again, loading the object and hashing a dozen
/// keys takes milliseconds; the limit is generous so that a busy machine never refuses a
/// good hasher, and only a loop (or a sleep) reaches it.
pub const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// The first argument that makes this binary the probe child ([`serve_probe_child`]).
pub const PROBE_CHILD_FLAG: &str = "--internal-probe-c-hasher";

/// Set by [`serve_probe_child`] in a process that is not the probe child: this program
/// answers [`PROBE_CHILD_FLAG`], so [`probe`] may run it again as the child.
static PROBE_SERVED: AtomicBool = AtomicBool::new(false);

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

/// What the probe child found.
#[derive(Debug)]
enum ProbeFault {
    /// dlopen failed (dlerror's text): the object's constructors did not run.
    NotLoadable(String),
    /// The object loaded but has no such symbol.
    MissingSymbol,
    /// A constructor, the function or a destructor crashed, exited, hung or printed: in
    /// words, naming the step ("its constructor called exit(0)").
    Misbehaved(String),
    /// The child could not be run.
    Unavailable(String),
}

/// To be called first thing in `main` of a program that loads C hashers (futexhash's own
/// does). Run as the probe child (first argument [`PROBE_CHILD_FLAG`], then the object
/// and the symbol) it probes and exits, never returning; otherwise it records that this
/// program can serve as the probe child and returns at once. [`CHasher::load`] refuses
/// every object in a program that did not call it.
pub fn serve_probe_child() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(PROBE_CHILD_FLAG)) {
        PROBE_SERVED.store(true, Ordering::Relaxed);
        return;
    }
    let code = match (args.next(), args.next(), args.next()) {
        (Some(object), Some(symbol), None) => probe_child(&object, &symbol),
        _ => 2,
    };
    // exit(3), not _exit(2): the exit-time destructors of the object (and any atexit
    // handler it registered) run, and C stdio buffers are flushed into the capture pipe,
    // as at the end of a real run.
    std::process::exit(code)
}

/// Writes all of `bytes` to the descriptor `fd`, as far as it goes.
fn write_fd(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a readable slice of its length; `fd` is a descriptor this
        // process holds (a bad one only makes write fail).
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        } else {
            return;
        }
    }
}

/// The probe child's work: load `object`, call `symbol` on [`probe_keys`], unload it,
/// reporting each step as a line on the report channel so that the parent knows which
/// step a crash, exit or hang happened in. Runs in a fresh process of this binary
/// ([`probe`]), single-threaded, with fd 1 the report pipe and fd 2 the capture pipe.
fn probe_child(object: &OsStr, symbol: &OsStr) -> i32 {
    // The report goes to a copy of fd 1; fd 1 itself then becomes a copy of fd 2, so
    // whatever the object prints, on stdout or stderr, reaches the capture pipe and never
    // the report.
    // SAFETY: fcntl(F_DUPFD_CLOEXEC) duplicates fd 1, a descriptor this process holds.
    let report = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    // SAFETY: dup2 between two descriptors this process holds.
    if report < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        return 125;
    }
    let say = |line: &str| write_fd(report, line.as_bytes());
    // Rust's runtime catches SIGSEGV and SIGBUS to name stack overflows, and its handler
    // returns from a raise(SIGSEGV) as if nothing happened: here the object's crash must
    // end the process, as it would end a run.
    for sig in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: restores the default disposition; no handler is running (this is the
        // single thread, outside any signal handler).
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    let (Ok(object), Ok(symbol)) = (
        CString::new(object.as_bytes()),
        CString::new(symbol.as_bytes()),
    ) else {
        return 2;
    };
    let keys = probe_keys();
    say("open\n");
    // SAFETY: running the object's initialisers is this process's purpose: whatever they
    // do (exit, crash, loop, print) happens here, where the parent sees it, and not in
    // the run. `object` is a NUL-terminated path.
    let handle = unsafe { libc::dlopen(object.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        // SAFETY: dlerror(3) returns NULL or a NUL-terminated string valid until the next
        // dl call; it is copied at once.
        let e = unsafe { libc::dlerror() };
        let msg = if e.is_null() {
            "dlopen failed".to_string()
        } else {
            // SAFETY: `e` is a non-NULL, NUL-terminated string from dlerror.
            unsafe { std::ffi::CStr::from_ptr(e) }
                .to_string_lossy()
                .replace('\n', " ")
        };
        say(&format!("dlerror {msg}\n"));
        return 0;
    }
    say("loaded\n");
    // SAFETY: `handle` is a live handle from dlopen; `symbol` is NUL-terminated.
    let f = unsafe { libc::dlsym(handle, symbol.as_ptr()) };
    if f.is_null() {
        say("nosym\n");
        return 0;
    }
    // SAFETY: the user named this symbol as a hasher, whose signature `CHashFn` is the
    // documented contract (CHasher::load); a symbol that breaks it can only harm this
    // child, which is what the probe is for. A data pointer and a function pointer have
    // the same size and representation on every platform futexhash runs on.
    let func: CHashFn = unsafe { std::mem::transmute::<*mut libc::c_void, CHashFn>(f) };
    for k in &keys {
        let words = k.full_words();
        // SAFETY: `func` as above; `words` is four readable u32s.
        let h = unsafe { func(words.as_ptr(), k.offset()) };
        std::hint::black_box(h);
        say("hashed\n");
    }
    say("unload\n");
    // SAFETY: `handle` came from dlopen and nothing of the object is used after this: its
    // destructors run here (or at exit for an object that cannot be unloaded).
    unsafe { libc::dlclose(handle) };
    say("closed\n");
    0
}

/// Reads the child's report and capture pipes until both are closed or `deadline`
/// passes; keeps at most 64 KiB of each (the rest is read and dropped, so the child never
/// blocks on a full pipe).
fn read_pipes(
    report: &mut std::process::ChildStdout,
    capture: &mut std::process::ChildStderr,
    deadline: Instant,
) -> (Vec<u8>, Vec<u8>) {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    const KEEP: usize = 64 << 10;
    let mut out: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    let mut open = [true, true];
    let fds = [report.as_raw_fd(), capture.as_raw_fd()];
    while open.iter().any(|&o| o) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let mut pfds: Vec<libc::pollfd> = (0..2)
            .filter(|&i| open[i])
            .map(|i| libc::pollfd {
                fd: fds[i],
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: `pfds` is a valid array of `pfds.len()` pollfds.
        let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, ms) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        for p in pfds.iter().filter(|p| p.revents != 0) {
            let i = if p.fd == fds[0] { 0 } else { 1 };
            let mut buf = [0u8; 4096];
            let r = if i == 0 {
                report.read(&mut buf)
            } else {
                capture.read(&mut buf)
            };
            match r {
                Ok(0) | Err(_) => open[i] = false,
                Ok(k) => {
                    let room = KEEP.saturating_sub(out[i].len());
                    out[i].extend_from_slice(&buf[..k.min(room)]);
                }
            }
        }
    }
    let [report, capture] = out;
    (report, capture)
}

/// Whether the child `pid` has ended, without reaping it (waitid with `WNOWAIT`): while
/// unreaped, its pid, and so its process group id, cannot be reused.
fn ended_unreaped(pid: u32) -> bool {
    // SAFETY: siginfo_t is plain old data; all zeroes is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid siginfo_t to fill; `pid` is our own child.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: after a successful waitid, si_pid is the field the kernel set (0: the child
    // has not ended yet).
    r == 0 && unsafe { info.si_pid() } != 0
}

/// Loads `object` (the resolved path of a shared object) in a child process, calls
/// `symbol` on [`probe_keys`] and unloads it; the parent waits at most [`PROBE_LIMIT`]
/// and kills the child's whole process group after it.
///
/// Why a child, and why this binary started afresh (fork and exec of `/proc/self/exe`)
/// rather than a bare fork: dlopen runs the object's constructors, and whatever they do
/// (exit, abort, crash, loop, print) must not happen in the run, so nothing of the object
/// runs here before the child has shown it harmless. A bare fork of this possibly
/// multi-threaded process would leave the child to call dlopen, which is not
/// async-signal-safe and can deadlock on a lock another thread held at the fork; a fresh
/// process has one thread and a clean loader. It is its own process group, so that a
/// process the object starts is killed with it; its stdout and stderr are pipes, so that
/// the object's output is caught rather than mixed into the results.
fn probe(object: &Path, symbol: &str) -> Result<(), ProbeFault> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    if !PROBE_SERVED.load(Ordering::Relaxed) {
        return Err(ProbeFault::Unavailable(
            "this program does not serve the probe child: its main must call \
             hashers::external::serve_probe_child() first"
                .to_string(),
        ));
    }
    let keys = probe_keys();
    let mut child = Command::new("/proc/self/exe")
        .arg(PROBE_CHILD_FLAG)
        .arg(object)
        .arg(OsString::from(symbol))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| ProbeFault::Unavailable(format!("cannot start it: {e}")))?;
    let deadline = Instant::now() + PROBE_LIMIT;
    let (report, captured) = match (child.stdout.as_mut(), child.stderr.as_mut()) {
        (Some(out), Some(err)) => read_pipes(out, err, deadline),
        _ => (Vec::new(), Vec::new()),
    };
    let pid = child.id();
    let mut hung = false;
    while !ended_unreaped(pid) {
        if Instant::now() >= deadline {
            hung = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // Whatever is left of its process group (the child if it hung, anything the object
    // started) goes too. The child is not reaped yet, so the group id is still its own.
    // SAFETY: kill(2) with a negative pid signals that process group; `pid` is our
    // unreaped child, the leader of the group it was started in (process_group(0)).
    unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
    let status = child.wait();
    let report = String::from_utf8_lossy(&report);
    let lines: Vec<&str> = report.lines().collect();
    let seen = |l: &str| lines.contains(&l);
    if let Some(msg) = lines.iter().find_map(|l| l.strip_prefix("dlerror ")) {
        return Err(ProbeFault::NotLoadable(msg.to_string()));
    }
    if seen("nosym") {
        return Err(ProbeFault::MissingSymbol);
    }
    let hashed = lines.iter().filter(|&&l| l == "hashed").count();
    let how = match &status {
        _ if hung => format!("did not finish within {} s (killed)", PROBE_LIMIT.as_secs()),
        Err(e) => format!("could not be waited for ({e})"),
        Ok(st) => match (st.code(), st.signal()) {
            (Some(code), _) => format!("called exit({code})"),
            (None, Some(sig)) => format!("crashed with {}", signal_name(sig)),
            (None, None) => "ended abnormally".to_string(),
        },
    };
    let clean = !hung && status.as_ref().is_ok_and(|s| s.success());
    let limit = PROBE_LIMIT.as_secs();
    let what = if !seen("open") {
        return Err(ProbeFault::Unavailable(format!(
            "the probe child {how} before loading it"
        )));
    } else if !seen("loaded") {
        Some(if hung {
            format!("its constructor did not return within {limit} s (killed)")
        } else {
            format!("its constructor {how}")
        })
    } else if hashed < keys.len() {
        let key = &keys[hashed];
        Some(if hung {
            format!("{symbol}() did not return within {limit} s on key {key} (killed)")
        } else {
            format!("{symbol}() {how} instead of returning, on key {key}")
        })
    } else if !seen("closed") {
        Some(if hung {
            format!("its destructor did not return within {limit} s (killed)")
        } else {
            format!("its destructor {how}")
        })
    } else if !clean {
        Some(format!(
            "its code run at exit (a destructor or an atexit handler) {how}"
        ))
    } else {
        None
    };
    if let Some(what) = what {
        return Err(ProbeFault::Misbehaved(what));
    }
    if !captured.is_empty() {
        let text = String::from_utf8_lossy(&captured);
        let mut shown: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if shown.chars().count() > 40 {
            shown = shown.chars().take(40).collect::<String>() + "...";
        }
        return Err(ProbeFault::Misbehaved(format!(
            "it printed {} byte{} ('{shown}'), which would mix into the results",
            captured.len(),
            if captured.len() == 1 { "" } else { "s" }
        )));
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
fn strip_path(s: &str, path: &Path) -> String {
    let prefix = format!("{}: ", path.display());
    match s.find(&prefix) {
        Some(i) if s.len() > i + prefix.len() => s[i + prefix.len()..].to_string(),
        _ => s.to_string(),
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

//! The data files shipped with futexhash, compiled into the binary so that a copy of it
//! works away from its source tree ("build here, copy to the NUMA box"): the machine
//! profiles of `data/machines/` and the published seed tables of `data/published/`.
//!
//! Files named on the command line (a profile path, `--data DIR`) and a `data/` directory
//! under the current directory take precedence; the embedded copies are the last resort.
//! Code that reads these tables from a directory gets one through [`materialize`], which
//! writes the embedded files into a per-user cache directory (once per content version,
//! verified byte for byte on every use) and returns its path. The cache directory
//! ([`cache_roots`]: `$FUTEXHASH_CACHE_DIR`, `$XDG_CACHE_HOME`, `$HOME/.cache`, then a
//! private directory under the temporary directory) is shared with the compiled `c:`
//! hashers, so that a copy of the binary runs with a read-only or missing home too.

use std::io::Write;
use std::path::{Path, PathBuf};

/// One embedded file: its file name and its contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asset {
    /// File name, e.g. `seed-256cpu.toml`.
    pub file: &'static str,
    /// Contents.
    pub text: &'static str,
}

macro_rules! asset {
    ($dir:literal, $file:literal) => {
        Asset {
            file: $file,
            text: include_str!(concat!("../data/", $dir, "/", $file)),
        }
    };
}

/// `data/machines/`: machine profiles (`NAME.toml`) and the measurements they were fitted
/// on.
pub const MACHINES: &[Asset] = &[
    asset!("machines", "e5-2650-2s.toml"),
    asset!("machines", "e5-2650-2s-template.toml"),
    asset!("machines", "e7-8890v3-4s.toml"),
    asset!("machines", "e7-8890v3-4s-template.toml"),
    asset!("machines", "seed-256cpu.toml"),
    asset!("machines", "seed-256cpu-template.toml"),
    asset!("machines", "seed002-ivbep.toml"),
    asset!("machines", "seed003-80core.toml"),
    asset!("machines", "skl-2s-112.toml"),
    asset!("machines", "this-vm.toml"),
    asset!("machines", "this-vm-template.toml"),
    asset!("machines", "this-vm-kernel-t2.csv"),
    asset!("machines", "zen3-2s-256.toml"),
    asset!("machines", "zen3-2s-256-template.toml"),
];

/// `data/published/`: the seed threads' published tables, the published A/B figures of a
/// kernel patch that the simulator's blind prediction is scored against, and the tables of
/// the other machines the model was not built on.
pub const PUBLISHED: &[Asset] = &[
    asset!("published", "a734d9fca84e-perf-bench-futex-hash.csv"),
    asset!("published", "algos-240threads-256cpu.csv"),
    asset!("published", "buckets-110threads-node1-256cpu.csv"),
    asset!("published", "buckets-240threads-256cpu.csv"),
    asset!("published", "buckets-240threads-256cpu-runs.csv"),
    asset!("published", "seed003-2013-80core-threads.csv"),
    asset!("published", "sas2024-e7-8890v3-140threads.csv"),
    asset!("published", "sas2024-e7-8890v3-34threads-per-node.csv"),
    asset!("published", "sas2024-e7-8890v3-algos-140threads.csv"),
    asset!("published", "sas2024-e5-2650-28threads.csv"),
    asset!("published", "sas2024-e5-2650-14threads-per-node.csv"),
    asset!("published", "sas2024-e5-2650-algos-28threads.csv"),
    asset!("published", "sas2025-v11-reference-count.csv"),
];

/// The names of the embedded machine profiles (`NAME` of `NAME.toml`), sorted.
pub fn profile_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = MACHINES
        .iter()
        .filter_map(|a| a.file.strip_suffix(".toml"))
        .collect();
    v.sort_unstable();
    v
}

/// The embedded profile `name` (`NAME` or `NAME.toml`).
pub fn profile(name: &str) -> Option<&'static Asset> {
    let file = if name.ends_with(".toml") {
        name.to_string()
    } else {
        format!("{name}.toml")
    };
    MACHINES.iter().find(|a| a.file == file)
}

/// FNV-1a over every embedded file: names the cache directory, so a binary with other data
/// never reads this one's files.
fn content_hash() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for a in MACHINES.iter().chain(PUBLISHED) {
        for b in a.file.bytes().chain([0]).chain(a.text.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// One directory where futexhash may keep its per-user cache (the unpacked built-in data
/// of [`materialize`] and the compiled `c:` hashers), in the order [`cache_roots`] tries
/// them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheRoot {
    /// The directory itself: `$FUTEXHASH_CACHE_DIR`, `$XDG_CACHE_HOME/futexhash`,
    /// `$HOME/.cache/futexhash` or `TMPDIR/futexhash-UID`.
    pub dir: PathBuf,
    /// Where it came from, for messages (`$HOME/.cache`).
    pub from: &'static str,
    /// Named by the user (`$FUTEXHASH_CACHE_DIR`): used as it is (a symbolic link is
    /// followed) and never passed over for another.
    pub explicit: bool,
}

/// Why no cache directory could be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// A directory exists that this user does not own, that others may write or that is a
    /// symbolic link: someone else could have put files there, so it is refused, not
    /// silently replaced by another.
    Untrusted {
        /// The directory.
        path: PathBuf,
        /// Why ("it is owned by uid 65534, not by this user (uid 1000)").
        reason: String,
    },
    /// Every candidate failed to be created or written.
    NoneUsable {
        /// What the directory was wanted for ("the built-in data").
        what: &'static str,
        /// Each directory tried and the operating system's reason, in order.
        tried: Vec<(PathBuf, String)>,
    },
}

impl std::fmt::Display for CacheError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheError::Untrusted { path, reason } => write!(
                f,
                "refusing the cache directory '{}': {reason}, so another user could have put \
                 files there; remove it or set FUTEXHASH_CACHE_DIR to a directory of your own",
                path.display()
            ),
            CacheError::NoneUsable { what, tried } => {
                let list: Vec<String> = tried
                    .iter()
                    .map(|(d, why)| format!("'{}' ({why})", d.display()))
                    .collect();
                write!(
                    f,
                    "no writable cache directory for {what}: tried {}; set FUTEXHASH_CACHE_DIR \
                     (or XDG_CACHE_HOME) to a writable directory of your own",
                    list.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for CacheError {}

/// The cache directories to try, in order: `$FUTEXHASH_CACHE_DIR` alone when it is set;
/// else `$XDG_CACHE_HOME/futexhash`, `$HOME/.cache/futexhash` and, always last, a per-user
/// directory under the temporary directory (`$TMPDIR` or `/tmp`), `futexhash-UID`. Empty
/// variables count as unset. A shared-by-everyone name such as `/tmp/futexhash` is never
/// used: any local user could plant files there.
pub fn cache_roots() -> Vec<CacheRoot> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("FUTEXHASH_CACHE_DIR") {
        return vec![CacheRoot {
            dir: d,
            from: "$FUTEXHASH_CACHE_DIR",
            explicit: true,
        }];
    }
    let mut v = Vec::new();
    if let Some(x) = env("XDG_CACHE_HOME") {
        v.push(CacheRoot {
            dir: x.join("futexhash"),
            from: "$XDG_CACHE_HOME",
            explicit: false,
        });
    }
    if let Some(h) = env("HOME") {
        v.push(CacheRoot {
            dir: h.join(".cache").join("futexhash"),
            from: "$HOME/.cache",
            explicit: false,
        });
    }
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    v.push(CacheRoot {
        dir: std::env::temp_dir().join(format!("futexhash-{uid}")),
        from: "the temporary directory",
        explicit: false,
    });
    v
}

/// What [`CacheRoot::open`] found wrong with a directory.
#[derive(Debug)]
pub enum Unusable {
    /// It could not be created (or is not a directory): the next candidate may do.
    Skip(String),
    /// It exists and is not trusted: refused outright ([`CacheError::Untrusted`]).
    Refuse(CacheError),
}

/// Refuses `path` unless it is owned by this process's effective uid and not writable by
/// group or others (and, with `no_link`, is not itself a symbolic link): what a directory
/// or file must be before futexhash trusts what it finds there (and loads code from it).
pub fn check_private(path: &Path, no_link: bool) -> Result<(), Unusable> {
    use std::os::unix::fs::MetadataExt;
    let m = if no_link {
        std::fs::symlink_metadata(path)
    } else {
        std::fs::metadata(path)
    }
    .map_err(|e| Unusable::Skip(e.to_string()))?;
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let reason = if m.file_type().is_symlink() {
        "it is a symbolic link".to_string()
    } else if m.uid() != me {
        format!(
            "it is owned by uid {}, not by this user (uid {me})",
            m.uid()
        )
    } else if m.mode() & 0o022 != 0 {
        format!(
            "it is writable by {} (mode {:o})",
            if m.mode() & 0o002 != 0 {
                "everyone"
            } else {
                "its group"
            },
            m.mode() & 0o7777
        )
    } else {
        return Ok(());
    };
    Err(Unusable::Refuse(CacheError::Untrusted {
        path: path.to_path_buf(),
        reason,
    }))
}

impl CacheRoot {
    /// Creates `self.dir/sub` (each directory futexhash creates mode 0700) and checks that
    /// the root and `sub` are this user's, private and, unless the user named the root,
    /// not symbolic links ([`check_private`]). Returns `self.dir/sub`.
    pub fn open(&self, sub: &str) -> Result<PathBuf, Unusable> {
        use std::os::unix::fs::DirBuilderExt;
        let create = |dir: &Path, recursive: bool| match std::fs::DirBuilder::new()
            .recursive(recursive)
            .mode(0o700)
            .create(dir)
        {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                Err(Unusable::Skip(e.to_string()))
            }
            _ => Ok(()),
        };
        // The root is checked before anything is created inside it: through a planted
        // symbolic link, `sub` would be created wherever the link leads.
        create(&self.dir, true)?;
        check_private(&self.dir, !self.explicit)?;
        if sub.is_empty() {
            return Ok(self.dir.clone());
        }
        let dir = self.dir.join(sub);
        create(&dir, false)?;
        check_private(&dir, true)?;
        Ok(dir)
    }
}

/// The first cache directory ([`cache_roots`]) whose `sub` directory can be created and is
/// private ([`CacheRoot::open`]), for `what` ("compiled C hashers"). One that exists and
/// is not trusted is refused rather than passed over: the user should hear that someone
/// may have tampered with it.
pub fn private_cache_dir(sub: &str, what: &'static str) -> Result<PathBuf, CacheError> {
    let mut tried = Vec::new();
    for root in cache_roots() {
        match root.open(sub) {
            Ok(d) => return Ok(d),
            Err(Unusable::Refuse(e)) => return Err(e),
            Err(Unusable::Skip(why)) => tried.push((root.dir.join(sub), why)),
        }
    }
    Err(CacheError::NoneUsable { what, tried })
}

/// Whether `dir` holds exactly the embedded `files` (byte for byte).
fn holds(dir: &Path, files: &[Asset]) -> bool {
    files
        .iter()
        .all(|a| std::fs::read(dir.join(a.file)).is_ok_and(|b| b == a.text.as_bytes()))
}

/// Writes `files` into a fresh directory beside `dir` and renames it to `dir`.
fn write_dir(dir: &Path, files: &[Asset]) -> std::io::Result<()> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(
        ".{}.tmp-{}",
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("data"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp)?;
    for a in files {
        let mut f = std::fs::File::create(tmp.join(a.file))?;
        f.write_all(a.text.as_bytes())?;
        f.sync_all()?;
    }
    if std::fs::rename(&tmp, dir).is_err() {
        // Another process (or a stale copy) got there first: replace a bad one.
        if !holds(dir, files) {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::rename(&tmp, dir)?;
        } else {
            let _ = std::fs::remove_dir_all(&tmp);
        }
    }
    Ok(())
}

/// Which embedded set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// [`MACHINES`].
    Machines,
    /// [`PUBLISHED`].
    Published,
}

/// A directory holding the embedded files of `set`, in the per-user cache (written on
/// first use, checked byte for byte every time): `ROOT/data-HASH/NAME` under the first
/// cache directory of [`cache_roots`] that holds them or can be written. The error, one
/// line, names every directory tried and the variable that chooses one
/// ([`CacheError`]).
pub fn materialize(set: Set) -> std::io::Result<PathBuf> {
    let (name, files) = match set {
        Set::Machines => ("machines", MACHINES),
        Set::Published => ("published", PUBLISHED),
    };
    let sub = format!("data-{:016x}", content_hash());
    let mut tried = Vec::new();
    for root in cache_roots() {
        // Data, unlike code, is checked byte for byte before use, so a directory that is
        // not trusted (another user's `~/.cache` under sudo) is passed over, not refused.
        let base = match root.open(&sub) {
            Ok(b) => b,
            Err(Unusable::Refuse(e)) => {
                let why = match e {
                    CacheError::Untrusted { reason, .. } => reason,
                    e => e.to_string(),
                };
                tried.push((root.dir.join(&sub), why));
                continue;
            }
            Err(Unusable::Skip(why)) => {
                tried.push((root.dir.join(&sub), why));
                continue;
            }
        };
        let dir = base.join(name);
        if holds(&dir, files) {
            return Ok(dir);
        }
        match write_dir(&dir, files) {
            Ok(()) => return Ok(dir),
            Err(e) => tried.push((dir, e.to_string())),
        }
    }
    Err(std::io::Error::other(CacheError::NoneUsable {
        what: "the built-in data",
        tried,
    }))
}

/// The directory of the published tables to use when none was given: `data/published`
/// under the current directory if it exists, else the embedded copy.
pub fn published_dir() -> std::io::Result<PathBuf> {
    let local = PathBuf::from("data/published");
    if local.is_dir() {
        return Ok(local);
    }
    materialize(Set::Published)
}

/// The file of profile `name` to use: `data/machines/NAME.toml` under the current directory
/// if it exists, else the embedded copy (None: no such profile).
pub fn profile_path(name: &str) -> Option<std::io::Result<PathBuf>> {
    let local = PathBuf::from("data/machines").join(format!("{name}.toml"));
    if local.is_file() {
        return Some(Ok(local));
    }
    let a = profile(name)?;
    Some(materialize(Set::Machines).map(|d| d.join(a.file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded files are the repository's files (read here from the source tree,
    /// which only the tests may do), and every file of the two directories is embedded.
    #[test]
    fn embedded_files_are_the_shipped_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        for (dir, set) in [("machines", MACHINES), ("published", PUBLISHED)] {
            let mut on_disk: Vec<String> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            on_disk.sort();
            let mut embedded: Vec<String> = set.iter().map(|a| a.file.to_string()).collect();
            embedded.sort();
            assert_eq!(on_disk, embedded, "data/{dir}");
            for a in set {
                assert_eq!(
                    std::fs::read_to_string(root.join(dir).join(a.file)).unwrap(),
                    a.text
                );
            }
        }
        let mut toml: Vec<String> = std::fs::read_dir(root.join("machines"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".toml").map(String::from)
            })
            .collect();
        toml.sort();
        assert_eq!(profile_names(), toml);
    }

    #[test]
    fn materialized_directories_hold_the_files_and_are_repaired() {
        let dir = materialize(Set::Published).unwrap();
        assert!(holds(&dir, PUBLISHED));
        std::fs::write(dir.join(PUBLISHED[0].file), "tampered").unwrap();
        let again = materialize(Set::Published).unwrap();
        assert_eq!(again, dir);
        assert!(holds(&again, PUBLISHED));
    }
}

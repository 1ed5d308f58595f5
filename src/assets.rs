//! The data files shipped with futexhash, compiled into the binary so that a copy of it
//! works away from its source tree ("build here, copy to the NUMA box"): the machine
//! profiles of `data/machines/` and the published seed tables of `data/published/`.
//!
//! Files named on the command line (a profile path, `--data DIR`) and a `data/` directory
//! under the current directory take precedence; the embedded copies are the last resort.
//! Code that reads these tables from a directory gets one through [`materialize`], which
//! writes the embedded files into a per-user cache directory (once per content version,
//! verified byte for byte on every use) and returns its path.

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
    asset!("machines", "seed-256cpu.toml"),
    asset!("machines", "seed-256cpu-template.toml"),
    asset!("machines", "seed002-ivbep.toml"),
    asset!("machines", "seed003-80core.toml"),
    asset!("machines", "skl-2s-112.toml"),
    asset!("machines", "this-vm.toml"),
    asset!("machines", "this-vm-template.toml"),
    asset!("machines", "this-vm-kernel-t2.csv"),
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

/// `$XDG_CACHE_HOME/futexhash`, `$HOME/.cache/futexhash`, else `TMPDIR/futexhash-UID`.
fn cache_base() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(x) = env("XDG_CACHE_HOME") {
        return x.join("futexhash");
    }
    if let Some(h) = env("HOME") {
        return h.join(".cache").join("futexhash");
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    std::env::temp_dir().join(format!("futexhash-{uid}"))
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
/// first use, checked byte for byte every time).
pub fn materialize(set: Set) -> std::io::Result<PathBuf> {
    let (name, files) = match set {
        Set::Machines => ("machines", MACHINES),
        Set::Published => ("published", PUBLISHED),
    };
    let dir = cache_base()
        .join(format!("data-{:016x}", content_hash()))
        .join(name);
    if !holds(&dir, files) {
        write_dir(&dir, files).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot unpack the built-in data into '{}': {e}",
                    dir.display()
                ),
            )
        })?;
    }
    Ok(dir)
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

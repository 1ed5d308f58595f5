//! Where futexhash keeps its per-user cache (the built-in data it unpacks, the compiled
//! `c:` hashers) when the usual places cannot be written: `$FUTEXHASH_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/futexhash`, `$HOME/.cache/futexhash`, then `TMPDIR/futexhash-UID`
//! (docs/cli.md). Each run starts from an empty working directory (no `data/` to fall back
//! on) with only the variables the test gives.
//!
//! "Unwritable" is a path under a regular file: creating a directory there fails even for
//! root, whom a mode of 0500 would not stop.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Sandbox {
    dir: PathBuf,
}

impl Sandbox {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("fh-cachedirs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        std::fs::write(dir.join("a-file"), "not a directory").unwrap();
        Sandbox { dir }
    }

    /// A path nothing can be created under.
    fn unwritable(&self, name: &str) -> PathBuf {
        self.dir.join("a-file").join(name)
    }

    fn run(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_futexhash"));
        c.args(args)
            .current_dir(self.dir.join("work"))
            .env_remove("FUTEXHASH_CACHE_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("HOME")
            .env_remove("TMPDIR");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("run futexhash")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn uid() -> u32 {
    // SAFETY: geteuid(2) has no preconditions.
    unsafe { libc::geteuid() }
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

const SIM: [&str; 9] = [
    "sim",
    "--profile",
    "seed-256cpu",
    "-t",
    "8",
    "-b",
    "16",
    "--format",
    "csv",
];

/// The trial's case: `HOME` that cannot be written (it was `/proc/nohome`), so
/// `$HOME/.cache` cannot be created. Before the fix: exit 1, "cannot unpack the built-in
/// data". Now the data goes to a private directory under `TMPDIR`.
#[test]
fn an_unwritable_home_falls_back_to_a_private_directory_under_tmpdir() {
    let s = Sandbox::new("home");
    let home = s.unwritable("home");
    let tmp = s.dir.join("tmp");
    let o = s.run(&SIM, &[("HOME", &home), ("TMPDIR", &tmp)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("cache"), "{}", text(&o.stderr));
    assert!(text(&o.stdout).lines().count() >= 2, "{}", text(&o.stdout));
    let top = tmp.join(format!("futexhash-{}", uid()));
    assert_eq!(mode(&top), 0o700);
    let unpacked: Vec<PathBuf> = std::fs::read_dir(&top)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("machines/seed-256cpu.toml").is_file())
        .collect();
    assert_eq!(unpacked.len(), 1, "{:?}", std::fs::read_dir(&top).unwrap());

    // An unwritable XDG_CACHE_HOME is passed over the same way.
    let tmp2 = s.dir.join("tmp2");
    std::fs::create_dir_all(&tmp2).unwrap();
    let xdg = s.unwritable("xdg");
    let o = s.run(&SIM, &[("XDG_CACHE_HOME", &xdg), ("TMPDIR", &tmp2)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(tmp2.join(format!("futexhash-{}", uid())).is_dir());

    // So is the compile cache of `c:` hashers.
    let c = s.dir.join("h.c");
    std::fs::write(
        &c,
        "#include <stdint.h>\nuint32_t futex_hash(const uint32_t *k, uint32_t o) { return k[0] ^ o; }\n",
    )
    .unwrap();
    let algo = format!("c:{}", c.display());
    let o = s.run(
        &["hash", "--algo", &algo, "private:4:0x1000"],
        &[("HOME", &home), ("TMPDIR", &tmp)],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "0x00000004\n");
    assert_eq!(mode(&top.join("c-hashers")), 0o700);
}

/// `FUTEXHASH_CACHE_DIR` names the cache directory for the data too (before the fix only
/// the compile cache read it).
#[test]
fn futexhash_cache_dir_holds_the_built_in_data() {
    let s = Sandbox::new("explicit");
    let mine = s.dir.join("mine");
    let home = s.unwritable("home");
    let o = s.run(&SIM, &[("FUTEXHASH_CACHE_DIR", &mine), ("HOME", &home)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let unpacked = std::fs::read_dir(&mine)
        .unwrap()
        .map(|e| e.unwrap().path())
        .any(|p| p.join("machines/seed-256cpu.toml").is_file());
    assert!(unpacked, "nothing unpacked under {}", mine.display());
}

/// With no usable directory at all: one line naming every directory tried and the variable
/// that sets one, exit 2, nothing on stdout.
#[test]
fn no_usable_cache_directory_is_one_line_naming_what_was_tried() {
    let s = Sandbox::new("none");
    let home = s.unwritable("home");
    let xdg = s.unwritable("xdg");
    let tmp = s.unwritable("tmp");
    let o = s.run(
        &SIM,
        &[("HOME", &home), ("XDG_CACHE_HOME", &xdg), ("TMPDIR", &tmp)],
    );
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    for d in [&home, &xdg, &tmp] {
        assert!(
            e.contains(&d.display().to_string()),
            "{e} lacks {}",
            d.display()
        );
    }
    assert!(e.contains("FUTEXHASH_CACHE_DIR"), "{e}");
    assert!(o.stdout.is_empty());
}

/// The directory under the shared temporary directory is checked before use: one that is
/// a symbolic link (here to a directory of this user's, which its owner check alone would
/// let through) is not used, for data or for code.
#[test]
fn a_symlink_planted_in_place_of_the_temporary_cache_directory_is_not_used() {
    let s = Sandbox::new("symlink");
    let tmp = s.dir.join("tmp");
    let elsewhere = s.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, tmp.join(format!("futexhash-{}", uid()))).unwrap();
    let o = s.run(&SIM, &[("TMPDIR", &tmp)]);
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

    let c = s.dir.join("h.c");
    std::fs::write(
        &c,
        "#include <stdint.h>\nuint32_t futex_hash(const uint32_t *k, uint32_t o) { return o; }\n",
    )
    .unwrap();
    let algo = format!("c:{}", c.display());
    let o = s.run(
        &["hash", "--algo", &algo, "private:4:0x1000"],
        &[("TMPDIR", &tmp)],
    );
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("symbolic link"), "{e}");
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

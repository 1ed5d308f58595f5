//! Hashers from outside the crate (`so:`, `c:`), `check`, `keys` and `dist --hashes`, as a
//! user runs them. Expected values come from the key/hasher contract (docs/hashers.md §5),
//! from the built-in hasher the C code must equal, or from an independent Python
//! implementation of jhash2.

mod common;
use common::futexhash;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fh-hashers-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs with a private compile cache, so tests neither share nor leave state.
fn futexhash_cached(args: &[&str], cache: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .env("FUTEXHASH_CACHE_DIR", cache)
        .output()
        .expect("run futexhash")
}

/// Keys of all three kinds from a small LCG (not the crate's generator).
fn random_keys(n: usize) -> Vec<String> {
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x
    };
    (0..n)
        .map(|i| {
            let (a, b) = (next(), next());
            match i % 3 {
                0 => format!("private:{:#x}:{:#x}", a, b & !3),
                1 => format!("anon:{:#x}:{:#x}", a, b & !3),
                _ => format!("inode:{}:{}:{}", a, b >> 12, (b & 0xffc) as u32),
            }
        })
        .collect()
}

#[test]
fn the_kernels_jhash2_in_c_is_bit_exact_with_the_builtin_via_c_and_so() {
    let cache = tmpdir("exact");
    let keys = random_keys(300);
    let mut args = vec!["hash", "--algo", "jhash2"];
    args.extend(keys.iter().map(String::as_str));
    let builtin = futexhash(&args);
    assert!(builtin.status.success(), "{}", stderr(&builtin));

    let c_spec = format!("c:{}", repo("examples/hashers/jhash2.c"));
    args[2] = &c_spec;
    let c = futexhash_cached(&args, &cache);
    assert!(c.status.success(), "{}", stderr(&c));
    assert_eq!(stdout(&c), stdout(&builtin));

    // The same source compiled by the test itself, loaded as a shared object.
    let so = cache.join("mine.so");
    let cc = Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(repo("examples/hashers/jhash2.c"))
        .status()
        .expect("cc");
    assert!(cc.success());
    let so_spec = format!("so:{}", so.display());
    args[2] = &so_spec;
    let s = futexhash_cached(&args, &cache);
    assert!(s.status.success(), "{}", stderr(&s));
    assert_eq!(stdout(&s), stdout(&builtin));

    // The private hash's symbol equals jhash2-addr; the spec's vectors (hashers.md §5).
    let priv_spec = format!("mine-addr=so:{}:futex_hash_private", so.display());
    let v = futexhash_cached(
        &[
            "hash",
            "--algo",
            &priv_spec,
            "--format",
            "json",
            "private:0xffff888012345600:0x7f0000001010",
            "private:0xffff888100000000:0x7ffc00000000",
        ],
        &cache,
    );
    assert!(v.status.success(), "{}", stderr(&v));
    let j: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(j[0]["algo"], "mine-addr");
    assert_eq!(j[0]["hash"], 0x1ba1298d);
    assert_eq!(j[1]["hash"], 0xee62b950u32);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn check_passes_jhash2_and_fails_the_w0_skipping_bug() {
    let cache = tmpdir("check");
    let good = format!("c:{}", repo("examples/hashers/jhash2.c"));
    let o = futexhash_cached(
        &[
            "check", "--algo", &good, "--keys", "16384", "--format", "json",
        ],
        &cache,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(rows.as_array().unwrap().len() >= 15);

    let bad = format!("c:{}", repo("examples/hashers/unbreak_bug.c"));
    let o = futexhash_cached(
        &[
            "check", "--algo", &bad, "--keys", "16384", "--format", "json",
        ],
        &cache,
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let verdict = |c: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == c)
            .unwrap_or_else(|| panic!("no row {c}"))["verdict"]
            .clone()
    };
    assert_eq!(verdict("property:w0-bits"), "fail");
    assert_eq!(verdict("dist:inode:mask"), "fail");
    assert_eq!(verdict("property:w1-bits"), "pass");

    // Reference vectors: the spec's, right for the kernel hash, wrong for the bug.
    let vectors = cache.join("v.csv");
    std::fs::write(
        &vectors,
        "key,hash\nprivate:0xffff888012345600:0x7f0000001010,0x9aa839a9\ninode:1:0:0x10,0xe5878c77\n",
    )
    .unwrap();
    let v = vectors.display().to_string();
    let o = futexhash_cached(
        &["check", "--algo", &good, "--vectors", &v, "--keys", "4096"],
        &cache,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("2 of 2 vectors match"));
    let o = futexhash_cached(
        &["check", "--algo", &bad, "--vectors", &v, "--keys", "4096"],
        &cache,
    );
    assert_eq!(o.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn dist_fails_the_w0_bug_on_inode_keys_and_model_bench_runs_a_c_hash() {
    let cache = tmpdir("dist");
    let bad = format!("c:{}", repo("examples/hashers/unbreak_bug.c"));
    let o = futexhash_cached(
        &[
            "dist",
            "--algo",
            &format!("{bad},jhash2"),
            "--workload",
            "inode",
            "--keys",
            "16384",
            "--buckets",
            "1024",
            "--format",
            "json",
        ],
        &cache,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let by = |a: &str| {
        recs.as_array()
            .unwrap()
            .iter()
            .find(|r| r["algo"] == a)
            .unwrap()["verdict"]
            .clone()
    };
    assert_eq!(by("futex_hash"), "fail");
    assert_eq!(by("jhash2"), "pass");

    let good = format!("cjhash=c:{}", repo("examples/hashers/jhash2.c"));
    let o = futexhash_cached(
        &[
            "bench",
            "--backend",
            "model",
            "--algo",
            &good,
            "-t",
            "1",
            "-r",
            "0.1",
            "-b",
            "16",
            "--format",
            "json",
        ],
        &cache,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(recs[0]["algo"], "cjhash");
    assert!(recs[0]["ops_per_sec"].as_f64().unwrap() > 0.0);

    // The simulator: no profile knows this hasher, so its cost is measured here (never 0).
    let o = futexhash_cached(
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "1",
            "-b",
            "16",
            "--algo",
            &good,
            "--format",
            "json",
        ],
        &cache,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let recs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(recs[0]["algo"], "cjhash");
    assert!(recs[0]["hash_ns"].as_f64().unwrap() > 0.0, "{}", recs[0]);
    assert!(stderr(&o).contains("timed here"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&cache);
}

/// jhash2 (lookup3 `hashword`, as include/linux/jhash.h) written independently in Python.
const PY_JHASH2: &str = r#"
import csv, sys
M = 0xffffffff
def rol(x, k): return ((x << k) | (x >> (32 - k))) & M
def jhash2(k, initval):
    a = b = c = (0xdeadbeef + (len(k) << 2) + initval) & M
    i, n = 0, len(k)
    while n > 3:
        a = (a + k[i]) & M; b = (b + k[i+1]) & M; c = (c + k[i+2]) & M
        a = (a - c) & M; a ^= rol(c, 4);  c = (c + b) & M
        b = (b - a) & M; b ^= rol(a, 6);  a = (a + c) & M
        c = (c - b) & M; c ^= rol(b, 8);  b = (b + a) & M
        a = (a - c) & M; a ^= rol(c, 16); c = (c + b) & M
        b = (b - a) & M; b ^= rol(a, 19); a = (a + c) & M
        c = (c - b) & M; c ^= rol(b, 4);  b = (b + a) & M
        n -= 3; i += 3
    if n == 3: c = (c + k[i+2]) & M
    if n >= 2: b = (b + k[i+1]) & M
    if n >= 1:
        a = (a + k[i]) & M
        c ^= b; c = (c - rol(b, 14)) & M
        a ^= c; a = (a - rol(c, 11)) & M
        b ^= a; b = (b - rol(a, 25)) & M
        c ^= b; c = (c - rol(b, 16)) & M
        a ^= c; a = (a - rol(c, 4)) & M
        b ^= a; b = (b - rol(a, 14)) & M
        c ^= b; c = (c - rol(b, 24)) & M
    return c
r = csv.DictReader(open(sys.argv[1]))
w = csv.writer(sys.stdout)
w.writerow(["w0", "w1", "offset", "hash"])
for row in r:
    w0, w1, off = int(row["w0"], 16), int(row["w1"], 16), int(row["offset"])
    words = [w0 & M, w0 >> 32, w1 & M, w1 >> 32]
    w.writerow([row["w0"], row["w1"], off, "0x%08x" % jhash2(words, off)])
"#;

#[test]
fn keys_hashed_by_python_give_the_builtin_collision_counts() {
    let dir = tmpdir("roundtrip");
    let keys = dir.join("keys.csv");
    let o = futexhash(&[
        "keys",
        "--workload",
        "aslr",
        "--keys",
        "20000",
        "--output",
        keys.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&keys).unwrap();
    assert!(text.starts_with("kind,w0,w1,offset\n"), "{}", &text[..40]);
    assert_eq!(text.lines().count(), 20001);

    let script = dir.join("jhash2.py");
    std::fs::write(&script, PY_JHASH2).unwrap();
    let py = Command::new("python3")
        .arg(&script)
        .arg(&keys)
        .output()
        .expect("python3");
    assert!(py.status.success(), "{}", stderr(&py));
    let hashes = dir.join("py-jhash2.csv");
    std::fs::write(&hashes, &py.stdout).unwrap();

    let theirs = futexhash(&[
        "dist",
        "--hashes",
        hashes.to_str().unwrap(),
        "--buckets",
        "16..65536",
        "--reduce",
        "both",
        "--format",
        "json",
    ]);
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    let ours = futexhash(&[
        "dist",
        "--algo",
        "jhash2",
        "--workload",
        "aslr",
        "--keys",
        "20000",
        "--buckets",
        "16..65536",
        "--reduce",
        "both",
        "--format",
        "json",
    ]);
    let t: serde_json::Value = serde_json::from_slice(&theirs.stdout).unwrap();
    let o: serde_json::Value = serde_json::from_slice(&ours.stdout).unwrap();
    let (t, o) = (t.as_array().unwrap(), o.as_array().unwrap());
    assert_eq!(t.len(), o.len());
    for (a, b) in t.iter().zip(o) {
        assert_eq!(a["algo"], "py-jhash2");
        assert_eq!(a["keys"], 20000);
        for f in [
            "buckets",
            "reduce",
            "collisions",
            "empty",
            "max_load",
            "verdict",
        ] {
            assert_eq!(a[f], b[f], "{f} at {}", b["buckets"]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Flips the ELF class byte of a 64-bit shared object: a 32-bit object for dlopen.
fn wrong_class_copy(so: &Path, out: &Path) {
    let mut b = std::fs::read(so).unwrap();
    assert_eq!(&b[..4], b"\x7fELF");
    b[4] = 1; // EI_CLASS = ELFCLASS32
    std::fs::write(out, b).unwrap();
}

#[test]
fn bad_external_hashers_exit_2_with_one_line_naming_them() {
    let dir = tmpdir("bad");
    let so = dir.join("ok.so");
    assert!(
        Command::new("cc")
            .args(["-O2", "-shared", "-fPIC", "-o"])
            .arg(&so)
            .arg(repo("examples/hashers/jhash2.c"))
            .status()
            .unwrap()
            .success()
    );
    let wrong = dir.join("wrong-arch.so");
    wrong_class_copy(&so, &wrong);
    let text = dir.join("notes.so");
    std::fs::write(&text, "not an ELF file\n").unwrap();
    let broken_c = dir.join("broken.c");
    std::fs::write(&broken_c, "uint32_t futex_hash(oops\n").unwrap();
    let vectors = dir.join("bad-vectors.csv");
    std::fs::write(&vectors, "key,hash\ninode:1:0:0x10,0xe5878c77\ninode:1:0\n").unwrap();
    let d = |p: &Path| p.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "hash".into(),
                "--algo".into(),
                format!("so:{}/none.so", d(&dir)),
                "inode:1:0:0".into(),
            ],
            "none.so",
        ),
        (
            vec![
                "hash".into(),
                "--algo".into(),
                format!("so:{}:nosuch", d(&so)),
                "inode:1:0:0".into(),
            ],
            "nosuch",
        ),
        (
            vec![
                "hash".into(),
                "--algo".into(),
                format!("so:{}", d(&wrong)),
                "inode:1:0:0".into(),
            ],
            "wrong-arch.so",
        ),
        (
            vec![
                "hash".into(),
                "--algo".into(),
                format!("so:{}", d(&text)),
                "inode:1:0:0".into(),
            ],
            "notes.so",
        ),
        (
            vec![
                "hash".into(),
                "--algo".into(),
                format!("c:{}", d(&broken_c)),
                "inode:1:0:0".into(),
            ],
            "broken.c",
        ),
        (
            vec![
                "dist".into(),
                "--algo".into(),
                format!("c:{}/missing.c", d(&dir)),
            ],
            "missing.c",
        ),
        // A C file without the symbol: the fix names the c: form and the file, not so:
        // and the cached object.
        (
            vec![
                "hash".into(),
                "--algo".into(),
                format!("c:{}:no_such_fn", repo("examples/hashers/jhash2.c")),
                "inode:1:0:0".into(),
            ],
            "name the function as c:",
        ),
        (
            vec![
                "check".into(),
                "--algo".into(),
                "jhash2".into(),
                "--vectors".into(),
                d(&vectors),
            ],
            "line 3",
        ),
        (
            vec![
                "dist".into(),
                "--hashes".into(),
                format!("{}/none.csv", d(&dir)),
            ],
            "none.csv",
        ),
    ];
    for (args, needle) in cases {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = futexhash_cached(&a, &dir.join("cache"));
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: {e}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // No C compiler.
    let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args([
            "hash",
            "--algo",
            &format!("c:{}", repo("examples/hashers/jhash2.c")),
            "inode:1:0:0",
        ])
        .env("FUTEXHASH_CACHE_DIR", dir.join("empty-cache"))
        .env("CC", "/nonexistent/cc")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/cc"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compiles `source` (written to `dir/NAME.c`) into `dir/NAME.so` as `c:` would.
fn build_so(dir: &Path, name: &str, source: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let so = dir.join(format!("{name}.so"));
    let ok = Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
        .expect("cc")
        .success();
    assert!(ok, "cc {name}.c");
    so
}

#[test]
fn crashing_exiting_hanging_and_unresolved_c_hashers_are_refused_before_any_work() {
    let dir = tmpdir("misbehave");
    const HEAD: &str = "#include <stdint.h>\n#include <stdlib.h>\n";
    let segv = build_so(
        &dir,
        "segv",
        &format!(
            "{HEAD}uint32_t futex_hash(const uint32_t *k, uint32_t o)\n\
             {{ volatile uint32_t *p = 0; return *p + k[0] + o; }}\n"
        ),
    );
    let exits = build_so(
        &dir,
        "exits",
        &format!("{HEAD}uint32_t futex_hash(const uint32_t *k, uint32_t o) {{ exit(0); }}\n"),
    );
    let hangs = build_so(
        &dir,
        "hangs",
        &format!(
            "{HEAD}uint32_t futex_hash(const uint32_t *k, uint32_t o)\n\
             {{ volatile int spin = 1; while (spin) ; return k[0]; }}\n"
        ),
    );
    // Links (a shared object may leave symbols undefined) but cannot be loaded.
    let unresolved = build_so(
        &dir,
        "unresolved",
        &format!(
            "{HEAD}uint32_t nowhere_defined(uint32_t);\n\
             uint32_t futex_hash(const uint32_t *k, uint32_t o) {{ return nowhere_defined(o); }}\n"
        ),
    );
    // This machine's object with its ELF e_machine set to aarch64's (183, <elf.h>), or to
    // x86_64's (62) when this is an aarch64 machine.
    let foreign = dir.join("foreign.so");
    let mut b = std::fs::read(&segv).unwrap();
    let (code, name): (u16, &str) = if std::env::consts::ARCH == "aarch64" {
        (62, "x86_64")
    } else {
        (183, "aarch64")
    };
    b[18..20].copy_from_slice(&code.to_le_bytes());
    std::fs::write(&foreign, b).unwrap();
    let d = |p: &Path| p.display().to_string();
    let arch_line = format!("built for {name}, this is {}", std::env::consts::ARCH);
    let cases = [
        (
            format!("crasher=so:{}", d(&segv)),
            vec!["'crasher'", "SIGSEGV"],
        ),
        (
            format!("quitter=so:{}", d(&exits)),
            vec!["'quitter'", "exit(0)"],
        ),
        (
            format!("spinner=so:{}", d(&hangs)),
            vec![
                "'spinner'",
                "futex_hash() did not return within",
                "(killed)",
            ],
        ),
        (
            format!("so:{}", d(&unresolved)),
            vec!["'futex_hash'", "unresolved.so", "nowhere_defined"],
        ),
        (
            format!("alien=so:{}", d(&foreign)),
            vec!["'alien'", arch_line.as_str()],
        ),
        // A C source with the same crash, through the compile cache: named by its label.
        (
            format!("c-crasher=c:{}", d(&dir.join("segv.c"))),
            vec!["'c-crasher'", "SIGSEGV"],
        ),
    ];
    for (algo, needles) in &cases {
        for sub in [
            vec!["hash", "--algo", algo, "private:1:0x1000"],
            vec!["dist", "--algo", algo, "--keys", "64", "--buckets", "16"],
        ] {
            let o = futexhash_cached(&sub, &dir.join("cache"));
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{sub:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{sub:?}: {e}");
            for n in needles {
                assert!(e.contains(n), "{sub:?}: {e} lacks {n}");
            }
            assert!(o.stdout.is_empty(), "{sub:?}: work was done");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs with the cache found the way a user's run finds it: from `env` alone (no
/// `FUTEXHASH_CACHE_DIR`, and `HOME`/`XDG_CACHE_HOME`/`TMPDIR` only as given).
fn futexhash_env(args: &[&str], env: &[(&str, &Path)]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_futexhash"));
    c.args(args)
        .env_remove("FUTEXHASH_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOME")
        .env_remove("TMPDIR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run futexhash")
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn the_compile_cache_is_per_user_private_and_never_loaded_from_when_others_can_write_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmpdir("cache-trust");
    let jhash = format!("c:{}", repo("examples/hashers/jhash2.c"));
    let args = ["hash", "--algo", jhash.as_str(), "private:1:0x1000"];
    let want = futexhash(&["hash", "--algo", "jhash2", "private:1:0x1000"]);
    assert!(want.status.success());

    // Without HOME or XDG_CACHE_HOME: a directory named for the uid under $TMPDIR, 0700.
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let o = futexhash_env(&args, &[("TMPDIR", &tmp)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&want));
    // SAFETY: geteuid(2) has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let top = tmp.join(format!("futexhash-{uid}"));
    assert_eq!(mode(&top), 0o700);
    assert_eq!(mode(&top.join("c-hashers")), 0o700);
    assert!(
        !tmp.join("futexhash").exists(),
        "no directory shared by all users"
    );

    // A world-writable cache directory planted before the first run: refused.
    let xdg = dir.join("xdg");
    let planted = xdg.join("futexhash/c-hashers");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = futexhash_env(&args, &[("XDG_CACHE_HOME", &xdg)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("writable by everyone") && e.contains("c-hashers"),
        "{e}"
    );
    assert!(o.stdout.is_empty());
    // The same under HOME/.cache, with the group-writable top directory futexhash creates.
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".cache/futexhash")).unwrap();
    std::fs::set_permissions(
        home.join(".cache/futexhash"),
        std::fs::Permissions::from_mode(0o775),
    )
    .unwrap();
    let o = futexhash_env(&args, &[("HOME", &home)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("writable by its group"),
        "{}",
        stderr(&o)
    );

    // An object planted in a private cache in place of the compiled one: a hash returning 0
    // (a stand-in for code that runs as root), owned by another user or writable by others.
    let own = dir.join("own");
    let o = futexhash_env(&args, &[("XDG_CACHE_HOME", &own)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cache = own.join("futexhash/c-hashers");
    let objects: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(objects.len(), 1, "{objects:?}");
    let evil = build_so(
        &dir,
        "evil",
        "#include <stdint.h>\nuint32_t futex_hash(const uint32_t *k, uint32_t o) { return 0; }\n",
    );
    std::fs::copy(&evil, &objects[0]).unwrap();
    let c = std::ffi::CString::new(objects[0].as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path; chown(2) only reads it. 65534 is `nobody`.
    let chowned = unsafe { libc::chown(c.as_ptr(), 65534, 65534) } == 0;
    if chowned {
        let o = futexhash_env(&args, &[("XDG_CACHE_HOME", &own)]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains("owned by uid 65534"), "{e}");
        assert!(o.stdout.is_empty(), "the planted object ran");
        // SAFETY: as above, back to this user.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), uid, libc::getegid()) }, 0);
    }
    std::fs::set_permissions(&objects[0], std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = futexhash_env(&args, &[("XDG_CACHE_HOME", &own)]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("writable by everyone"), "{e}");
    assert!(o.stdout.is_empty(), "the planted object ran");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A C file whose constructor (or destructor) runs `body`, with a good hash.
fn lifecycle_c(dir: &Path, name: &str, attribute: &str, body: &str) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(
        &c,
        format!(
            "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <signal.h>\n\
             #include <unistd.h>\n\
             __attribute__(({attribute})) static void lifecycle(void) {{ {body} }}\n\
             uint32_t futex_hash(const uint32_t *k, uint32_t o)\n\
             {{ return (k[0] ^ k[1] ^ k[2] ^ k[3] ^ o) * 2654435761u; }}\n"
        ),
    )
    .unwrap();
    c
}

/// A constructor runs when the object is loaded, so before this fix one that exited,
/// aborted, crashed or looped did it inside futexhash, before the probe: `hash`, `dist` and
/// `check` ended with status 0 and no output (`check`'s "fit"), 134, or hung. A destructor
/// misbehaved at the end of a run, and a constructor's printf landed in the CSV. Each is
/// now seen in the probe child and refused: one line naming the file and the step, exit 2,
/// nothing on stdout.
#[test]
fn c_hashers_whose_constructor_or_destructor_misbehaves_are_refused_before_any_work() {
    let dir = tmpdir("lifecycle");
    let cases: [(&str, &str, &str, &[&str]); 9] = [
        (
            "ctor_exit",
            "constructor",
            "exit(0);",
            &["its constructor", "exit(0)"],
        ),
        (
            "ctor_abort",
            "constructor",
            "abort();",
            &["its constructor", "SIGABRT"],
        ),
        (
            "ctor_segv",
            "constructor",
            "raise(SIGSEGV);",
            &["its constructor", "SIGSEGV"],
        ),
        (
            "ctor_loop",
            "constructor",
            "volatile int spin = 1; while (spin) ;",
            &["its constructor", "did not return within", "(killed)"],
        ),
        (
            "ctor_print",
            "constructor",
            "printf(\"hello from the constructor\\n\");",
            &["printed", "hello from the constructor"],
        ),
        (
            "ctor_stderr",
            "constructor",
            "fputs(\"noise\", stderr);",
            &["printed", "noise"],
        ),
        (
            "dtor_exit",
            "destructor",
            "_exit(7);",
            &["its destructor", "exit(7)"],
        ),
        (
            "dtor_segv",
            "destructor",
            "raise(SIGSEGV);",
            &["its destructor", "SIGSEGV"],
        ),
        (
            "dtor_print",
            "destructor",
            "printf(\"bye\\n\");",
            &["printed", "bye"],
        ),
    ];
    for (name, attribute, body, needles) in cases {
        let c = lifecycle_c(&dir, name, attribute, body);
        let algo = format!("c:{}", c.display());
        let runs: Vec<Vec<&str>> = if name == "ctor_loop" {
            // Each run waits out the probe's limit: two are enough.
            vec![
                vec!["hash", "--algo", &algo, "--format", "csv", "private:4:8"],
                vec!["check", "--algo", &algo],
            ]
        } else {
            vec![
                vec!["hash", "--algo", &algo, "--format", "csv", "private:4:8"],
                vec!["dist", "--algo", &algo, "--keys", "64", "--buckets", "16"],
                vec!["check", "--algo", &algo],
            ]
        };
        for args in runs {
            let o = futexhash_cached(&args, &dir.join("cache"));
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{name} {args:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{name} {args:?}: {e}");
            assert!(e.contains(&format!("{name}.c")), "{name}: {e}");
            for n in needles {
                assert!(e.contains(n), "{name} {args:?}: {e} lacks {n}");
            }
            assert!(o.stdout.is_empty(), "{name} {args:?}: work was done");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A well-behaved constructor still runs in futexhash's own process once the probe has
/// passed: here it fills the table the hash reads, so a hash that equals the same
/// function's value computed here shows the table was set up in the run.
#[test]
fn a_c_hasher_with_a_quiet_constructor_loads_and_hashes() {
    let dir = tmpdir("ctor-good");
    let c = dir.join("table.c");
    std::fs::write(
        &c,
        "#include <stdint.h>\n\
         static uint32_t mult;\n\
         __attribute__((constructor)) static void init(void) { mult = 2654435761u; }\n\
         __attribute__((destructor)) static void fini(void) { mult = 0; }\n\
         uint32_t futex_hash(const uint32_t *k, uint32_t o) { return (k[0] ^ o) * mult; }\n",
    )
    .unwrap();
    let algo = format!("c:{}", c.display());
    let o = futexhash_cached(
        &[
            "hash",
            "--algo",
            &algo,
            "--format",
            "csv",
            "private:4:0x1000",
        ],
        &dir.join("cache"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    // The same function with the multiplier written in: the same hash.
    let plain = dir.join("plain.c");
    std::fs::write(
        &plain,
        "#include <stdint.h>\n\
         uint32_t futex_hash(const uint32_t *k, uint32_t o) { return (k[0] ^ o) * 2654435761u; }\n",
    )
    .unwrap();
    let want = futexhash_cached(
        &[
            "hash",
            "--algo",
            &format!("c:{}", plain.display()),
            "--format",
            "csv",
            "private:4:0x1000",
        ],
        &dir.join("cache"),
    );
    assert!(want.status.success(), "{}", stderr(&want));
    assert_eq!(stdout(&o), stdout(&want));
    assert!(
        !stdout(&o).contains(",0\n"),
        "the constructor did not run: {}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

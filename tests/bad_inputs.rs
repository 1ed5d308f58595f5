//! Bad input across every subcommand, as a new user types it (issue 12): each line must be
//! refused before any work with exit status 2 and exactly one line on stderr that names
//! the bad value (the second column is what the message must contain). The cases run in
//! a few seconds because nothing is measured.

use std::process::Command;

/// (command line, text the one-line message must contain). `PROFILE_MISSING_FIELD` and
/// the `PROFILE_BAD_*` names of `BAD_PROFILE_LINES` are replaced by profile files written
/// by the test.
const CASES: &[(&str, &str)] = &[
    ("bench -t 0", "'0'"),
    ("bench -t abc", "'abc'"),
    ("bench -t 1,,2", "''"),
    ("bench -t 16385", "'16385'"),
    ("bench -t -3", "'-3'"),
    ("bench -f 0", "'0'"),
    ("bench -f 99999999999", "99999999999"),
    ("bench -f -1", "'-1'"),
    ("bench -f x", "'x'"),
    ("bench -r 0", "'0'"),
    ("bench -r -1", "'-1'"),
    ("bench -r nan", "'nan'"),
    ("bench -r inf", "'inf'"),
    ("bench -r 1e7", "'1e7'"),
    ("bench -r 0.00000001", "'0.00000001'"),
    ("bench -r abc", "'abc'"),
    ("bench -b 3", "'3'"),
    ("bench -b -4", "'-4'"),
    ("bench -b 2..3", "'3'"),
    ("bench -b 16..2", "'16..2'"),
    ("bench -b 1 --backend kernel", "'1'"),
    ("bench -b 33554432", "'33554432'"),
    ("bench --backend foo", "'foo'"),
    ("bench --backend model,foo", "'foo'"),
    ("bench --algo nope", "'nope'"),
    ("bench --algo jhash2,nope", "'nope'"),
    ("bench --algo so:/nonexistent.so", "/nonexistent.so"),
    ("bench --algo c:/nonexistent.c", "/nonexistent.c"),
    ("bench --table foo", "'foo'"),
    ("bench --layout foo", "'foo'"),
    ("bench --workload foo", "'foo'"),
    ("bench --nodes 0 --table numa", "'0'"),
    ("bench --nodes 2000 --table numa", "'2000'"),
    ("bench --nodes 2", "2"),
    ("bench --squash", "--squash"),
    ("bench --backend kernel --table global", "--table"),
    ("bench --backend kernel --layout packed", "--layout"),
    ("bench --backend kernel --algo xxh3", "'xxh3'"),
    ("bench --holders 0 --workload lock", "'0'"),
    ("bench --victim-threads 0 --workload noisy", "'0'"),
    ("bench --victim-futexes 0 --workload noisy", "'0'"),
    ("bench --workload lock -t 1,2", "-t"),
    ("bench --workload lock -b 16,32", "-b"),
    ("bench --workload noisy -S", "-S"),
    ("bench --output /proc/x -r 2 -t 1", "/proc/x"),
    ("bench --output /nonexistent/dir/x -r 2", "/nonexistent/dir"),
    ("bench --output /tmp -r 2", "/tmp"),
    ("bench --plot /proc/x.svg -r 1", "/proc/x.svg"),
    ("bench --format yaml", "'yaml'"),
    (
        "bench --compare -t 5 -b 16 --algo xxhash --layout packed -r 0.1",
        "-t",
    ),
    ("bench --compare -S", "-S"),
    (
        "bench -t 2 -r 0.2 --table numa --nodes 1024 -b 16777216 -s",
        "TiB",
    ),
    ("bench --bogus", "--bogus"),
    ("dist --buckets -4", "'-4'"),
    ("dist --buckets 3", "'3'"),
    ("dist --buckets 0", "'0'"),
    ("dist --buckets 2..5", "'5'"),
    ("dist --algo nope", "'nope'"),
    ("dist --workload nope", "'nope'"),
    ("dist --keys 0", "'0'"),
    ("dist --keys -5", "'-5'"),
    ("dist --keys x", "'x'"),
    ("dist --seed x", "'x'"),
    ("dist --reduce foo", "'foo'"),
    ("dist --stat foo", "'foo'"),
    ("dist --format yaml", "'yaml'"),
    ("dist --output /proc/x", "/proc/x"),
    ("dist --plot /proc/x.svg", "/proc/x.svg"),
    // --plot writes SVG: another extension is refused (it was written as SVG under it).
    ("dist --plot /tmp/x.png", "/tmp/x.png"),
    ("bench --plot x.PDF -r 0.1", "x.PDF"),
    ("sim --profile this-vm --plot sim.png", "sim.png"),
    ("dist --workload trace:/nonexistent", "/nonexistent"),
    ("hash --algo jhash2", "<KEY>"),
    ("hash --algo nope private:0x1000:0x1000", "'nope'"),
    ("hash --algo jhash2 private:0x1000", "private:0x1000"),
    ("hash --algo jhash2 private:xyz:0x1000", "xyz"),
    ("hash --algo jhash2 bogus:1:2", "bogus"),
    ("hash --algo jhash2 private:0x1000:0x1001", "0x1001"),
    (
        "hash --algo jhash2 --hash-key zz private:0x1000:0x1000",
        "'zz'",
    ),
    (
        "hash --algo jhash2 --format yaml private:0x1000:0x1000",
        "'yaml'",
    ),
    (
        "hash --algo jhash2 --output /proc/x private:0x1000:0x1000",
        "/proc/x",
    ),
    ("hash", "--algo"),
    ("list --format yaml", "'yaml'"),
    ("list --output /proc/x", "/proc/x"),
    // An existing file on a virtual file system: said so (it was "No such file").
    ("list --output /proc/version", "virtual file system"),
    (
        "bench -b 99999999999999999999",
        "too large; at most 16777216",
    ),
    (
        "dist --buckets 0x100000000000000000",
        "too large; at most 16777216",
    ),
    ("list --bogus", "--bogus"),
    ("sim --profile nope", "'nope'"),
    (
        "sim --profile seed002-ivbep --workload lock --lock ticket",
        "--lock does not apply to --workload lock",
    ),
    (
        "sim --profile seed002-ivbep --workload lock --algo xxhash",
        "--algo does not apply to --workload lock",
    ),
    (
        "sim --profile seed002-ivbep --workload lock --plot x.svg",
        "--plot does not apply to --workload lock",
    ),
    (
        "sim validate --cv --ablate pending-bit,pending-bit",
        "names 'pending-bit' twice",
    ),
    (
        "sim validate --cv --ablate bogus",
        "'bogus' is not a mechanism: one of steady-state-lines",
    ),
    ("sim --profile /nonexistent.toml", "/nonexistent.toml"),
    ("sim --profile this-vm -t 0", "'0'"),
    ("sim --profile this-vm -t -1", "'-1'"),
    ("sim --profile this-vm -b 3", "'3'"),
    ("sim --profile this-vm --algo nope", "'nope'"),
    ("sim --profile this-vm --workload nope", "'nope'"),
    ("sim --profile this-vm --output /proc/x", "/proc/x"),
    ("sim --profile this-vm --plot /proc/x.svg", "/proc/x.svg"),
    ("sim --profile this-vm --format yaml", "'yaml'"),
    ("sim validate --output /proc/x", "/proc/x"),
    ("check --algo nope", "'nope'"),
    (
        "check --algo jhash2 --vectors /nonexistent.csv",
        "/nonexistent.csv",
    ),
    ("check --algo jhash2 --output /proc/x", "/proc/x"),
    ("keys --workload nope", "'nope'"),
    ("keys --workload perf --output /proc/x", "/proc/x"),
    ("keys --workload perf --keys -3", "'-3'"),
    ("keys --workload fork:4 --processes 8", "--processes '8'"),
    (
        "keys --workload trace:data/traces/sort-parallel.fxc --seed 3",
        "--seed '3'",
    ),
    ("dist --hashes /nonexistent.csv", "/nonexistent.csv"),
    ("sim --profile this-vm --workload lock -b 16,32", "'16,32'"),
    ("sim validate --rows 0", "'0'"),
    ("sim validate --rows a,b", "a,b"),
    ("sim validate --data /nonexistent", "/nonexistent"),
    ("sim bogus", "bogus"),
    ("report --out /proc/x --quick", "/proc/x"),
    ("report --out /etc/passwd --quick", "/etc/passwd"),
    (
        "report --data /nonexistent --quick --out /tmp/futexhash-bad-data-report",
        "/nonexistent",
    ),
    ("report --bogus", "--bogus"),
    ("bogus", "bogus"),
    ("bench -t 4096 -f 16777216 -r 0.1", "16777216"),
    (
        "sim calibrate --from data/published/buckets-240threads-256cpu.csv --rows 0,2 --threads 240 --cpus 256 --out /proc/x.toml",
        "/proc/x.toml",
    ),
    ("sim --profile PROFILE_MISSING_FIELD", "`cpus`"),
    ("sim --profile PROFILE_BAD_CPUS", "`cpus`"),
    // A value of the wrong type: the toml message ("expected a boolean") names no field.
    ("sim --profile PROFILE_BAD_HOME_SNOOP", "`home_snoop`"),
    (
        "sim --profile PROFILE_BAD_REMOTE_MISS",
        "line_miss_remote_ns = -5",
    ),
    // A top-level key written below `[hash_ns]` is a hash cost there: named as one.
    (
        "sim --profile PROFILE_KEY_UNDER_HASH_NS",
        "`hash_ns.home_snoop`",
    ),
    // A hash cost under a name that is no built-in (a typo) was ignored, the hasher timed.
    ("sim --profile PROFILE_UNKNOWN_HASHER", "'jhsah2'"),
    // The shared reference's two line transfers count in the clock's bound: this run
    // fitted the bound without them and overflowed the event key (a panic).
    (
        "sim --profile PROFILE_HUGE_MISS -t 4 -b 16 --refcount shared --ops 690000 --warmup 0",
        "4 threads",
    ),
];

/// Profiles written by the test: `data/machines/this-vm.toml` with the line starting with
/// the second column replaced by the third.
const BAD_PROFILE_LINES: &[(&str, &str, &str)] = &[
    ("PROFILE_BAD_CPUS", "cpus =", "cpus = 2^40"),
    ("PROFILE_BAD_HOME_SNOOP", "home_snoop =", "home_snoop = 2"),
    (
        "PROFILE_BAD_REMOTE_MISS",
        "home_snoop =",
        "home_snoop = false\nline_miss_remote_ns = -5",
    ),
    (
        "PROFILE_KEY_UNDER_HASH_NS",
        "[hash_ns]",
        "[hash_ns]\nhome_snoop = true",
    ),
    ("PROFILE_HUGE_MISS", "line_miss_ns =", "line_miss_ns = 1e9"),
    (
        "PROFILE_UNKNOWN_HASHER",
        "[hash_ns]",
        "[hash_ns]\njhsah2 = 3.0",
    ),
];

fn run(args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run futexhash")
}

#[test]
fn every_bad_input_is_one_line_exit_2_naming_the_value() {
    let dir = std::env::temp_dir().join(format!("fh-bad-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let missing = dir.join("missing-field.toml");
    std::fs::write(&missing, "name = \"x\"\n").unwrap();
    let vm = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines/this-vm.toml"),
    )
    .unwrap();
    let mut bad_profiles = Vec::new();
    for &(name, prefix, replacement) in BAD_PROFILE_LINES {
        assert!(vm.lines().any(|l| l.starts_with(prefix)), "{prefix}");
        let bad: String = vm
            .lines()
            .map(|l| {
                if l.starts_with(prefix) {
                    replacement
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, bad).unwrap();
        bad_profiles.push((name, path));
    }
    let mut failures = Vec::new();
    for (line, want) in CASES {
        let args: Vec<String> = line
            .split_whitespace()
            .map(|a| match a {
                "PROFILE_MISSING_FIELD" => missing.display().to_string(),
                a => bad_profiles
                    .iter()
                    .find(|(name, _)| *name == a)
                    .map_or(a.to_string(), |(_, path)| path.display().to_string()),
            })
            .collect();
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        let lines = err.lines().filter(|l| !l.trim().is_empty()).count();
        if o.status.code() != Some(2) || lines != 1 || !err.contains(want) || !o.stdout.is_empty() {
            failures.push(format!(
                "{line}: status {:?}, {lines} lines: {err}",
                o.status.code()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// Inputs that are fine must not be refused (issue 12 item 8: `seed,hash_long_old` was).
#[test]
fn a_list_mixing_seed_and_a_name_is_accepted() {
    let args: Vec<String> = "dist --algo seed,hash_long_old --keys 100 --buckets 16 --format csv"
        .split_whitespace()
        .map(String::from)
        .collect();
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(
        csv.lines().any(|l| l.starts_with("hash_long_old,")),
        "{csv}"
    );
    assert!(csv.lines().any(|l| l.starts_with("jhash2,")), "{csv}");
}

/// `dist`, `keys` and `check` with the documented maximum of keys under a 2 GB address
/// space limit (`ulimit -v`): refused up front with the limit named, not a SIGABRT of the
/// allocator half-way (issue 26). 134217728 keys at the 50-75 bytes a key `dist` holds
/// (80 with `keys`' text even more) are over 6 GiB, far above 2 GB whatever the estimate.
#[test]
fn the_largest_key_sets_are_refused_under_an_address_space_limit() {
    for cmd in [
        "dist --keys 134217728",
        "keys --keys 134217728",
        "keys --keys 134217728 --format json",
        "check --algo jhash2 --keys 134217728",
    ] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 2000000 && exec \"$0\" {cmd}",))
            .arg(env!("CARGO_BIN_EXE_futexhash"))
            .output()
            .expect("run sh");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
        assert!(
            // The address-space limit, or on a smaller machine the memory one, whichever
            // is met first.
            err.contains("134217728")
                && (err.contains("RLIMIT_AS (ulimit -v)")
                    || err.contains("MemAvailable")
                    || err.contains("memory.max")),
            "{cmd}: {err}"
        );
    }
}

/// `sim --bucket-bytes N` is the size of `struct futex_hash_bucket`, and 3 was accepted.
/// The allowed set follows from the struct on a 64-bit kernel: it holds pointers (the
/// `plist_head`'s `list_head`, 2 × 8 bytes), so its size is a multiple of 8, and the
/// smallest bucket that can hold a lock word and even a one-pointer list head is
/// 4 + 4 (padding) + 8 = 16 bytes; every kernel so far has 24 (3.12: `spinlock_t` 4 +
/// padding 4 + `plist_head` 16; 3.13+: `atomic_t waiters` in the padding); the upper
/// bound, a page (4096), is the simulator's own. The message names the value and the
/// allowed set.
#[test]
fn implausible_bucket_sizes_are_refused_and_real_ones_simulated() {
    let sim = |bytes: &str| {
        let args: Vec<String> = [
            "sim",
            "--profile",
            "this-vm",
            "-t",
            "2",
            "-b",
            "16",
            "--format",
            "json",
            "--bucket-bytes",
            bytes,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        run(&args)
    };
    for bad in [
        "0", "1", "3", "4", "8", "12", "20", "36", "4097", "4104", "8192",
    ] {
        let o = sim(bad);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "--bucket-bytes {bad}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "--bucket-bytes {bad}: {err}"
        );
        assert!(
            err.contains(&format!("'{bad}'"))
                && err.contains("multiple of 8")
                && err.contains("16")
                && err.contains("4096"),
            "--bucket-bytes {bad}: {err}"
        );
        assert!(o.stdout.is_empty(), "--bucket-bytes {bad}");
    }
    // 3.12's packed bucket, the smallest allowed, one and two cache lines, a page.
    for good in [24u64, 16, 64, 128, 4096] {
        let o = sim(&good.to_string());
        assert!(
            o.status.success(),
            "--bucket-bytes {good}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v[0]["bucket_bytes"], good, "{v}");
    }
}

/// `bench --table private -b 0` ran the global hash under a private-table request: per
/// docs/cli.md `-b 0` is the global hash, so naming a private table and 0 slots at once
/// contradicts itself and is refused (exit 2, one line naming `-b 0` and `--table
/// private`), in a list too. Without `--table` (the default table kind) and with
/// `--table global`, `-b 0` stays the global hash.
#[test]
fn a_private_table_of_zero_slots_is_refused() {
    for b in ["0", "0,16", "16,0"] {
        let args: Vec<String> = [
            "bench", "--table", "private", "-b", b, "-t", "1", "-r", "0.05",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "-b {b}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "-b {b}: {err}");
        assert!(
            err.contains("-b 0") && err.contains("--table private") && err.contains("global"),
            "-b {b}: {err}"
        );
        assert!(o.stdout.is_empty(), "-b {b}");
    }
    for table in [&[][..], &["--table", "global"][..]] {
        let mut args: Vec<String> = [
            "bench", "-b", "0", "-t", "1", "-r", "0.05", "--format", "json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(table.iter().map(|s| s.to_string()));
        let o = run(&args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v[0]["table"], "global", "{args:?}: {v}");
        assert_eq!(v[0]["buckets"], 0, "{args:?}: {v}");
    }
}

/// Defect L12: an argument that is not UTF-8 got clap's "invalid UTF-8 was detected in one
/// or more arguments", naming neither the value nor the flag. The line now names the flag
/// (or the positional argument) and shows the value with U+FFFD for the bad bytes, in
/// every spelling a value can take (`--flag V`, `--flag=V`, `-fV`, a positional).
#[test]
fn a_non_utf8_argument_is_named_with_its_flag_and_shown_lossily() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let b = |bytes: &[u8]| OsStr::from_bytes(bytes).to_os_string();
    let s = |text: &str| OsStr::new(text).to_os_string();
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec![s("hash"), s("--algo"), b(b"jh\xffash2"), s("private:4:8")],
            "invalid value 'jh\u{FFFD}ash2' for '--algo <LIST>'",
        ),
        (
            vec![s("hash"), b(b"--algo=x\xfe"), s("private:4:8")],
            "invalid value 'x\u{FFFD}' for '--algo <LIST>'",
        ),
        (
            vec![s("hash"), s("--algo"), s("jhash2"), b(b"private:4:\xff8")],
            "invalid value 'private:4:\u{FFFD}8' for '[KEY]...'",
        ),
        (
            vec![s("bench"), b(b"-t1\xff")],
            "invalid value '1\u{FFFD}' for '--threads <LIST>'",
        ),
        (
            vec![s("sim"), s("--profile"), b(b"\xffbox")],
            "invalid value '\u{FFFD}box' for '--profile <PROFILE>'",
        ),
    ];
    for (args, want) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_futexhash"))
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run futexhash");
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: {e} lacks {want}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// Defect L11: `KEY@1` without `--nodes` was accepted and its node silently dropped (the key
/// hashed and placed as if it had none), while `--nodes 3` refused `@7`. One rule now:
/// the node must be below the table's node count, which is 1 without `--nodes`.
#[test]
fn a_key_node_must_be_below_the_node_count_which_is_one_without_nodes() {
    let key = "private:0x1000:0x2000@1";
    for extra in [&[][..], &["--buckets", "16"][..]] {
        let mut args = vec!["hash", "--algo", "jhash2"];
        args.extend_from_slice(extra);
        args.push(key);
        let o = run(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(
            e.contains(&format!("'{key}'")) && e.contains("below 1") && e.contains("--nodes"),
            "{args:?}: {e}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // @0 names the one node; with --nodes 2, @1 is a node of the table.
    for args in [
        &["hash", "--algo", "jhash2", "private:0x1000:0x2000@0"][..],
        &[
            "hash",
            "--algo",
            "jhash2",
            "--buckets",
            "16",
            "--nodes",
            "2",
            key,
        ][..],
    ] {
        let o = run(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

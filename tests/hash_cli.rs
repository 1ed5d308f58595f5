//! `hash` as an everyday tool (several hashers, buckets and nodes, keys on stdin), distinct
//! names for unlabelled C hashers, the `fork` workload, `check`'s table fitness, the
//! `warning` of simulated and model-bench records, and table widths. Expected values come
//! from the reference vectors of docs/hashers.md §5, bucket and node arithmetic done by
//! hand on them (kernel/futex/core.c `__futex_hash()`, v6.16), and closed-form counts.

mod common;
use common::futexhash;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn json(o: &Output) -> Vec<serde_json::Value> {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice::<serde_json::Value>(&o.stdout)
        .expect("json")
        .as_array()
        .expect("array")
        .clone()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fh-hashcli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn with_stdin(args: &[&str], input: &str) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    c.wait_with_output().unwrap()
}

fn cached(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .env("FUTEXHASH_CACHE_DIR", cache)
        .output()
        .expect("run futexhash")
}

// docs/hashers.md §5: jhash2 / jhash2-addr of three private keys.
const K1: &str = "private:0xffff888012345600:0x7f0000001010";
const K1_FULL: u32 = 0x9aa839a9;
const K1_ADDR: u32 = 0x1ba1298d;
const K2: &str = "private:0xffff888100000000:0x7ffc00000000";
const K2_FULL: u32 = 0xb2953a23;
const K2_ADDR: u32 = 0xee62b950;
const K3: &str = "inode:1:0:0x10";
const K3_FULL: u32 = 0xe5878c77;

/// A hasher named twice in `--algo` is refused in one line naming it, nothing printed; its
/// rows used to be printed once and the repeat dropped without a word.
#[test]
fn a_hasher_named_twice_is_refused() {
    for (list, needle) in [
        ("jhash2,xxh3,jhash2", "--algo 'jhash2' is listed twice"),
        ("all,siphash-addr", "'siphash-addr' is listed twice"),
    ] {
        let o = futexhash(&["hash", "--algo", list, "private:1:0x1000"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{list}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{list}: {err}");
        assert!(err.contains(needle), "{list}: {err}");
        assert!(stdout(&o).is_empty(), "{list}: work was done");
    }
}

/// `--hash-key` given to `hash` or `check` when no hasher of `--algo` is keyed is refused
/// in one line naming the flag and the keyed hashers, also at its default value; it used
/// to be accepted and dropped. With a keyed hasher it is used.
#[test]
fn hash_key_without_a_keyed_hasher_is_refused() {
    let key = "000102030405060708090a0b0c0d0e0f";
    for args in [
        vec![
            "hash",
            "--algo",
            "jhash2",
            "--hash-key",
            key,
            "private:1:0x1000",
        ],
        vec![
            "hash",
            "--algo",
            "jhash2-addr,crc32",
            "--hash-key",
            key,
            "private:1:0x1000",
        ],
        vec!["check", "--algo", "xxh3", "--hash-key", key],
    ] {
        let o = futexhash(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("--hash-key is for keyed hashers and --algo '")
                && err.contains("siphash, hsiphash, hsiphash32"),
            "{args:?}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{args:?}: work was done");
    }
    let o = futexhash(&[
        "hash",
        "--algo",
        "jhash2,hsiphash-addr",
        "--hash-key",
        key,
        "private:1:0x1000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn hash_places_keys_in_buckets_and_nodes_as_the_kernel_does() {
    // 1024 buckets per node, 3 nodes: bucket = hash & 1023, node = (hash >> 10) % 3
    // (futex_hashshift = log2 1024); a key@NODE (FUTEX2_NUMA) keeps its node.
    let k3_numa = format!("{K3}@2");
    let recs = json(&futexhash(&[
        "hash",
        "--algo",
        "jhash2,jhash2-addr",
        "--buckets",
        "1024",
        "--nodes",
        "3",
        "--format",
        "json",
        K1,
        K2,
        &k3_numa,
    ]));
    let expect: [(&str, &str, u32, Option<u64>); 5] = [
        (K1, "jhash2", K1_FULL, None),
        (K1, "jhash2-addr", K1_ADDR, None),
        (K2, "jhash2", K2_FULL, None),
        (K2, "jhash2-addr", K2_ADDR, None),
        (&k3_numa, "jhash2", K3_FULL, Some(2)),
    ];
    // One record per key x hasher, keys in order, hashers in --algo order.
    assert_eq!(recs.len(), 6);
    for (i, (key, algo, hash, node)) in expect.into_iter().enumerate() {
        let r = &recs[i];
        assert_eq!(r["key"], key);
        assert_eq!(r["algo"], algo);
        assert_eq!(r["hash"].as_u64(), Some(hash as u64), "{r}");
        assert_eq!(r["bucket"].as_u64(), Some((hash & 1023) as u64), "{r}");
        let want_node = node.unwrap_or(((hash >> 10) % 3) as u64);
        assert_eq!(r["node"].as_u64(), Some(want_node), "{r}");
    }
    // The NUMA key under jhash2-addr (no reference vector): its own node, hash & 1023.
    let r = &recs[5];
    assert_eq!(r["node"], 2);
    assert_eq!(
        r["bucket"].as_u64(),
        Some(r["hash"].as_u64().unwrap() & 1023)
    );
    // By hand: 0x9aa839a9 & 1023 = 0x1a9 = 425; 0x9aa839a9 >> 10 = 0x26aa0e, 0x26aa0e % 3
    // = 2533902 % 3 = 0.
    assert_eq!(recs[0]["bucket"], 425);
    assert_eq!(recs[0]["node"], 0);

    // --reduce high: the top log2(N) bits; without --nodes no node field.
    let recs = json(&futexhash(&[
        "hash",
        "--algo",
        "jhash2",
        "--buckets",
        "256",
        "--reduce",
        "high",
        "--format",
        "json",
        K1,
    ]));
    assert_eq!(recs[0]["bucket"], (K1_FULL >> 24) as u64);
    assert!(recs[0].get("node").is_none(), "{}", recs[0]);
    // Without --buckets the records are the stable three fields.
    let recs = json(&futexhash(&[
        "hash", "--algo", "jhash2", "--format", "json", K1,
    ]));
    let fields: Vec<&String> = recs[0].as_object().unwrap().keys().collect();
    assert_eq!(fields, ["algo", "hash", "key"]);
    // The stable table form: one 0x%08x line per key.
    let o = futexhash(&["hash", "--algo", "jhash2", K1, K3]);
    assert_eq!(stdout(&o), "0x9aa839a9\n0xe5878c77\n");
}

#[test]
fn hash_reads_keys_from_stdin_and_refuses_a_bad_line_before_printing() {
    let input = format!("# keys\n\n{K1}\n  {K2}  \n# end\n");
    let o = with_stdin(&["hash", "--algo", "jhash2-addr"], &input);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{K1_ADDR:#010x}\n{K2_ADDR:#010x}\n"));
    let o = with_stdin(
        &["hash", "--algo", "jhash2"],
        &format!("{K1}\n# c\nprivate:1:0x1001\n{K2}\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        o.stdout.is_empty(),
        "printed before the bad line: {}",
        stdout(&o)
    );
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("line 3") && e.contains("private:1:0x1001"),
        "{e}"
    );
    // A node beyond --nodes is the kernel's EINVAL: refused.
    let o = futexhash(&[
        "hash",
        "--algo",
        "jhash2",
        "--buckets",
        "16",
        "--nodes",
        "2",
        "inode:1:0:0x10@2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'inode:1:0:0x10@2'"), "{}", stderr(&o));
    for bad in [
        &["hash", "--algo", "jhash2", "--buckets", "12", K1][..],
        &["hash", "--algo", "jhash2", "--nodes", "2", K1][..],
        &[
            "hash",
            "--algo",
            "jhash2",
            "--buckets",
            "16",
            "--nodes",
            "0",
            K1,
        ][..],
    ] {
        let o = futexhash(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

#[test]
fn hash_all_and_seed_are_the_lists_that_list_and_the_registry_name() {
    let listed: Vec<String> = json(&futexhash(&["list", "--format", "json"]))
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    let algos = |list: &str| -> Vec<String> {
        json(&futexhash(&[
            "hash", "--algo", list, "--format", "json", K1,
        ]))
        .iter()
        .map(|r| r["algo"].as_str().unwrap().to_string())
        .collect()
    };
    assert_eq!(algos("all"), listed);
    // `seed`: the eight columns of the seed thread's table, in its order.
    assert_eq!(
        algos("seed"),
        [
            "jhash2",
            "jhash2-addr",
            "xxhash",
            "hash_long",
            "crc32c",
            "crc32",
            "siphash",
            "hsiphash"
        ]
    );
    // jhash2 is the same whichever list it comes from.
    let recs = json(&futexhash(&[
        "hash", "--algo", "all", "--format", "json", K1,
    ]));
    assert_eq!(recs[0]["hash"].as_u64(), Some(K1_FULL as u64));
    // `check` takes one hasher: the lists are refused as lists, with exit 2.
    for l in ["all", "seed"] {
        let o = futexhash(&["check", "--algo", l]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains(&format!("'{l}' is a list")),
            "{}",
            stderr(&o)
        );
    }
    // Side by side, the table splits the hashers so that no line passes 100 columns.
    let o = futexhash(&[
        "hash",
        "--algo",
        "all",
        "--buckets",
        "64",
        "--nodes",
        "2",
        K1,
        K3,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    for name in &listed {
        assert!(
            text.contains(&format!(" {name} ")),
            "{name} missing:\n{text}"
        );
    }
}

#[test]
fn unlabelled_c_hashers_each_get_their_own_name_everywhere() {
    let dir = tmpdir("names");
    let cache = dir.join("cache");
    // Two different hashes, both under the default symbol futex_hash.
    std::fs::write(
        dir.join("a.c"),
        "#include <stdint.h>\nuint32_t futex_hash(const uint32_t *k, uint32_t o) { return k[2] ^ o; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.c"),
        "#include <stdint.h>\nuint32_t futex_hash(const uint32_t *k, uint32_t o) { return k[2] + 1; }\n",
    )
    .unwrap();
    let list = format!(
        "c:{},c:{}",
        dir.join("a.c").display(),
        dir.join("b.c").display()
    );
    let o = cached(
        &[
            "hash",
            "--algo",
            &list,
            "--format",
            "json",
            "private:1:0x7000",
        ],
        &cache,
    );
    let recs = json(&o);
    // k[2] = lo(w1) = 0x7000, offset 0: a gives 0x7000, b 0x7001.
    assert_eq!(recs.len(), 2);
    assert_eq!(
        (recs[0]["algo"].clone(), recs[0]["hash"].clone()),
        ("a".into(), 0x7000.into())
    );
    assert_eq!(
        (recs[1]["algo"].clone(), recs[1]["hash"].clone()),
        ("b".into(), 0x7001.into())
    );
    // dist keeps both: one record per hasher and size, two columns in the table.
    let recs = json(&cached(
        &[
            "dist",
            "--algo",
            &list,
            "--keys",
            "512",
            "--buckets",
            "16",
            "--format",
            "json",
        ],
        &cache,
    ));
    let algos: Vec<&str> = recs.iter().map(|r| r["algo"].as_str().unwrap()).collect();
    assert_eq!(algos, ["a", "b"]);
    let o = cached(
        &["dist", "--algo", &list, "--keys", "512", "--buckets", "16"],
        &cache,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let header = stdout(&o)
        .lines()
        .find(|l| l.starts_with("| buckets"))
        .unwrap_or_default()
        .to_string();
    assert!(
        header.contains(" a ") && header.contains(" b "),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fork_workload_fails_an_address_only_hash_and_passes_jhash2() {
    // 64 processes (the default) x 4096 locks = 2^18 keys (the default count). An
    // address-only hash sees 4096 distinct inputs, each the same in all 64 processes, so
    // every bucket's load is a multiple of 64, at most 4096 buckets are occupied and
    // collisions are at least 2^18 - 4096, whatever the table size. A random function
    // puts 2^18 keys into 65536 buckets with a mean load of 4, so a bucket of 64 or more
    // is far beyond chance (P(Poisson(4) >= 64) < 1e-40 per bucket).
    let n: u64 = 1 << 18;
    let recs = json(&futexhash(&[
        "dist",
        "--algo",
        "jhash2,jhash2-addr",
        "--workload",
        "fork",
        "--buckets",
        "16,256,4096,65536",
        "--format",
        "json",
    ]));
    assert_eq!(recs.len(), 8);
    for r in &recs {
        assert_eq!(r["workload"], "fork");
        assert_eq!(r["keys"].as_u64(), Some(n));
        let max = r["max_load"].as_u64().unwrap();
        if r["algo"] == "jhash2" {
            assert_eq!(r["verdict"], "pass", "{r}");
        } else {
            assert_eq!(r["verdict"], "fail", "{r}");
            assert_eq!(max % 64, 0, "{r}");
            assert!(max >= 64, "{r}");
            assert!(r["collisions"].as_u64().unwrap() >= n - 4096, "{r}");
        }
    }
    // --processes N: N processes of 2^18 / N locks; loads become multiples of N.
    let recs = json(&futexhash(&[
        "dist",
        "--algo",
        "jhash2-addr",
        "--workload",
        "fork",
        "--processes",
        "16",
        "--buckets",
        "65536",
        "--format",
        "json",
    ]));
    assert_eq!(recs[0]["workload"], "fork:16");
    assert_eq!(recs[0]["max_load"].as_u64().unwrap() % 16, 0);
    assert!(recs[0]["collisions"].as_u64().unwrap() >= n - n / 16);
    assert_eq!(recs[0]["verdict"], "fail");
    // keys --workload fork: every process's keys at the same addresses, one mm each.
    let o = futexhash(&[
        "keys",
        "--workload",
        "fork",
        "--processes",
        "4",
        "--keys",
        "8",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<Vec<String>> = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    assert_eq!(rows.len(), 8);
    let mms: std::collections::HashSet<&String> = rows.iter().map(|r| &r[1]).collect();
    assert_eq!(mms.len(), 4);
    for p in 0..4 {
        assert_eq!(rows[2 * p][2..], rows[0][2..]);
        assert_eq!(rows[2 * p + 1][2..], rows[1][2..]);
    }
    // --processes belongs to fork only.
    let o = futexhash(&["dist", "--workload", "perf", "--processes", "4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'perf'"), "{}", stderr(&o));
}

/// A well-mixed hash of `w0` and the page that ignores the offset word: every futex of a
/// page lands in one bucket.
const IGNORES_OFFSET: &str = "#include <stdint.h>
uint32_t futex_hash(const uint32_t *k, uint32_t offset) {
    uint64_t x = ((uint64_t)k[1] << 32 | k[0]) ^ (((uint64_t)k[3] << 32 | k[2]) * 0x9e3779b97f4a7c15ull);
    x ^= x >> 31; x *= 0xbf58476d1ce4e5b9ull; x ^= x >> 29;
    (void)offset;
    return (uint32_t)x;
}
";

#[test]
fn sim_and_model_bench_records_warn_when_the_hash_fails_on_the_keys_run() {
    let dir = tmpdir("warn");
    let cache = dir.join("cache");
    let c = dir.join("nooff.c");
    std::fs::write(&c, IGNORES_OFFSET).unwrap();
    let algo = format!("jhash2,nooff=c:{}", c.display());
    // perf's keys, 64 threads x 128 words: a thread's 512 bytes of words lie on at most 2
    // pages, so the offset-blind hash has at most 128 distinct values for 8192 keys. At
    // 256 buckets it occupies at most 128 (collisions >= 8064 where a random function
    // leaves about 7936); in the 65536-bucket global hash some bucket holds >= 64 keys
    // where a random function's fullest holds about 4.
    let recs = json(&cached(
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "64",
            "-f",
            "128",
            "-b",
            "256,0",
            "--algo",
            &algo,
            "--ops",
            "300",
            "--format",
            "json",
        ],
        &cache,
    ));
    assert_eq!(recs.len(), 4);
    for r in &recs {
        let w = r["warning"].as_str().expect("a warning string");
        if r["algo"] == "jhash2" {
            assert_eq!(w, "", "{r}");
        } else if r["buckets"] == 256 {
            assert!(
                w.starts_with("fails ") && w.ends_with("on perf keys at 256 buckets"),
                "{w}"
            );
        } else {
            assert!(
                w.starts_with("fails ") && w.contains("on perf keys at 65536 buckets"),
                "{w}"
            );
        }
    }
    // The table marks the warned cells and says why, once per warning.
    let o = cached(
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "64",
            "-f",
            "128",
            "-b",
            "256",
            "--algo",
            &algo,
            "--ops",
            "300",
        ],
        &cache,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    let row = t
        .lines()
        .find(|l| l.starts_with("|     256"))
        .expect("the 256 row");
    assert!(row.trim_end().ends_with("! |"), "{t}");
    assert!(
        t.contains("! nooff at threads 64, buckets 256: fails "),
        "{t}"
    );
    // The model bench: 2 threads x 1024 words (2 x 4096 bytes, so at most 3 pages each)
    // into 16 private slots: at most 6 distinct hashes for 2048 keys, at most 6 of 16
    // buckets occupied where a random function fills all 16.
    let recs = json(&cached(
        &[
            "bench",
            "--backend",
            "model",
            "--algo",
            &algo,
            "-t",
            "2",
            "-r",
            "0.05",
            "-b",
            "16",
            "--format",
            "json",
        ],
        &cache,
    ));
    assert_eq!(recs.len(), 2);
    for r in &recs {
        let w = r["warning"].as_str().expect("a warning string");
        if r["algo"] == "jhash2" {
            assert_eq!(w, "", "{r}");
        } else {
            assert!(
                w.starts_with("fails ") && w.contains("at 16 buckets"),
                "{w}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn assert_within_100(what: &str, o: &Output) {
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "{what}: {}",
        stderr(o)
    );
    let text = stdout(o);
    assert!(text.lines().count() > 3, "{what}: {text}");
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{what}: {} columns:\n{l}",
            l.chars().count()
        );
    }
}

#[test]
fn check_and_trace_replay_tables_fit_in_100_columns() {
    for algo in ["jhash2", "jhash2-addr", "hash_long"] {
        let o = futexhash(&["check", "--algo", algo, "--keys", "4096"]);
        assert_within_100(&format!("check {algo}"), &o);
        // Every row is still there: the wrapped detail continues on rows with empty
        // check and verdict cells, which begin "|  " where a named row begins "| x".
        let t = stdout(&o);
        assert!(t.contains("| tables "), "{t}");
        assert!(t.contains("| speed "), "{t}");
    }
    for trace in [
        "data/traces/multi-process.strace",
        "data/traces/sort-parallel.fxc",
    ] {
        let o = futexhash(&[
            "sim",
            "--profile",
            "seed-256cpu",
            "--workload",
            &format!("trace:{trace}"),
            "-b",
            "0,2,16",
            "--algo",
            "jhash2,jhash2-addr",
            "--think-scale",
            "0",
        ]);
        assert_within_100(trace, &o);
        let t = stdout(&o);
        // The columns were split, not dropped.
        for col in ["ops/s/thread", "80 % interval", "cont %", "p99 ns"] {
            assert!(t.contains(col), "{col} missing:\n{t}");
        }
    }
}

#[test]
fn trace_replay_records_warn_when_the_hash_fails_on_the_traces_keys() {
    let dir = tmpdir("tracewarn");
    let cache = dir.join("cache");
    let c = dir.join("constant.c");
    std::fs::write(
        &c,
        "#include <stdint.h>\nuint32_t futex_hash(const uint32_t *k, uint32_t o) { (void)k; (void)o; return 7; }\n",
    )
    .unwrap();
    let algo = format!("jhash2,const=c:{}", c.display());
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/traces/multi-process.strace");
    // The constant hash puts all of the trace's distinct keys in one bucket of the
    // 65536-bucket global hash, where a random function's fullest bucket holds 1 or 2.
    let recs = json(&cached(
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "--workload",
            &format!("trace:{}", trace.display()),
            "-b",
            "0",
            "--algo",
            &algo,
            "--think-scale",
            "0",
            "--format",
            "json",
        ],
        &cache,
    ));
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0]["warning"], "", "{}", recs[0]);
    let w = recs[1]["warning"].as_str().unwrap();
    assert!(
        w.starts_with("fails max load (") && w.ends_with("on trace keys at 65536 buckets"),
        "{w}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

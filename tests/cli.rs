//! The `list` and `hash` command lines, run as a user would: stable output forms, JSON
//! stable JSON fields, and one-line exit-2 errors on bad input.

mod common;
use common::futexhash;

use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn assert_usage_error(args: &[&str], must_mention: &str) {
    let o = futexhash(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line for {args:?}: {err}"
    );
    assert!(err.contains(must_mention), "{args:?}: {err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn hash_prints_one_hex_line_per_key() {
    // Spec §5 reference vectors, through the command line.
    let o = futexhash(&[
        "hash",
        "--algo",
        "jhash2",
        "private:0xffff888012345600:0x7f0000001010",
        "anon:0xffff888100000000:0x7f0000000010",
        "inode:1:0:0x10",
    ]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "0x9aa839a9\n0xdb6df4c9\n0xe5878c77\n");
    let o = futexhash(&[
        "hash",
        "--algo",
        "jhash2-addr",
        "private:0xffff9a0c81234c00:0x55555555a2a4",
    ]);
    assert_eq!(stdout(&o), "0xeff07843\n");
}

#[test]
fn hash_json_and_csv_records() {
    let o = futexhash(&[
        "hash",
        "--algo",
        "jhash2",
        "--format",
        "json",
        "private:0xffff888100000000:0x7ffc00000000",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v.as_array().unwrap()[0];
    assert_eq!(r["key"], "private:0xffff888100000000:0x7ffc00000000");
    assert_eq!(r["algo"], "jhash2");
    assert_eq!(r["hash"].as_u64(), Some(0xb2953a23));
    let o = futexhash(&["hash", "--algo", "crc32", "--format", "csv", "inode:1:0:0"]);
    assert!(stdout(&o).starts_with("key,algo,hash\ninode:1:0:0,crc32,"));
}

#[test]
fn hash_key_changes_keyed_hashers_only() {
    let run = |algo: &str, hk: &str| {
        stdout(&futexhash(&[
            "hash",
            "--algo",
            algo,
            "--hash-key",
            hk,
            "private:1:0x1000",
        ]))
    };
    let zero = "00000000000000000000000000000000";
    let dflt = "000102030405060708090a0b0c0d0e0f";
    assert_ne!(run("siphash", zero), run("siphash", dflt));
    // An unkeyed hasher beside a keyed one (alone, --hash-key is refused: hash_cli.rs):
    // its row is the same under either key.
    let jhash2_row = |hk: &str| {
        let out = stdout(&futexhash(&[
            "hash",
            "--algo",
            "siphash,jhash2",
            "--hash-key",
            hk,
            "--format",
            "csv",
            "private:1:0x1000",
        ]));
        let row = out
            .lines()
            .find(|l| l.contains(",jhash2,"))
            .map(str::to_string);
        assert!(row.is_some(), "{out}");
        row
    };
    assert_eq!(jhash2_row(zero), jhash2_row(dflt));
}

#[test]
fn list_has_every_hasher_with_spec_fields() {
    let o = futexhash(&["list", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 22);
    for r in rows {
        for f in ["name", "algorithm", "scope", "keyed", "source"] {
            assert!(r.get(f).is_some(), "missing {f} in {r}");
        }
    }
    let sip = rows.iter().find(|r| r["name"] == "siphash-addr").unwrap();
    assert_eq!(sip["scope"], "addr");
    assert_eq!(sip["keyed"], true);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    assert_usage_error(&["hash", "--algo", "nope", "private:1:2"], "jhash2-addr");
    assert_usage_error(&["hash", "--algo", "jhash2", "private:zz:1"], "'zz'");
    assert_usage_error(
        &["hash", "--algo", "jhash2", "inode:1:2:4096"],
        "inode:1:2:4096",
    );
    assert_usage_error(&["hash", "--algo", "jhash2", "private:1:6"], "aligned");
    assert_usage_error(
        &[
            "hash",
            "--algo",
            "siphash",
            "--hash-key",
            "abc",
            "private:1:4",
        ],
        "abc",
    );
    assert_usage_error(&["list", "--format", "xml"], "xml");
    assert_usage_error(&["frobnicate"], "frobnicate");
    assert_usage_error(
        &["list", "--output", "/nonexistent-dir/x.json"],
        "/nonexistent-dir/x.json",
    );
}

#[test]
fn output_file_is_written_whole() {
    let dir = std::env::temp_dir().join(format!("fh-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("list.csv");
    let o = futexhash(&[
        "list",
        "--format",
        "csv",
        "--output",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("name,algorithm,scope,keyed,source"));
    assert_eq!(text.lines().count(), 23);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A missing subcommand prints clap's usage and subcommand list on stderr (exit 2), not
/// the first line of the about text as an "error".
#[test]
fn a_missing_subcommand_prints_the_subcommand_list() {
    for (args, commands) in [
        (
            &[][..],
            &["list", "hash", "bench", "dist", "sim", "report"][..],
        ),
        (&["attack"][..], &["flood", "leak"][..]),
    ] {
        let o = futexhash(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains("Usage:") && err.contains("Commands:"),
            "{args:?}: {err}"
        );
        for c in commands {
            assert!(
                err.lines().any(|l| l.trim_start().starts_with(c)),
                "{c}: {err}"
            );
        }
        assert!(!err.contains("error:"), "{args:?}: {err}");
    }
}

/// Every table of `--format table` output fits a mail's 100 columns (wider tables are
/// split into several, each repeating the row labels); checked on the widest ones: every
/// hasher side by side.
#[test]
fn tables_fit_in_100_columns() {
    let runs: [&[&str]; 5] = [
        &["list"],
        &["hash", "--algo", "all", "private:0x1000:0x2000"],
        &["dist", "--algo", "all", "--buckets", "16"],
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "240",
            "-b",
            "2",
            "--algo",
            "seed",
        ],
        &[
            "bench", "-t", "1", "--algo", "all", "-b", "16", "-r", "0.05",
        ],
    ];
    for args in runs {
        let o = common::futexhash(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout);
        let tables = out.lines().filter(|l| l.starts_with('+')).count();
        assert!(tables >= 3, "{args:?}: no table in\n{out}");
        for l in out
            .lines()
            .filter(|l| l.starts_with('+') || l.starts_with('|'))
        {
            assert!(
                l.chars().count() <= 100,
                "{args:?}: {} columns: {l}",
                l.chars().count()
            );
        }
    }
}

/// `sim`'s table outputs keep every line, comments and prose too, within 100 columns: the
/// sweep with every hasher and several thread counts, the A/B layout of three kernels (and
/// of two with a warned hasher), and the futex_numa lock run.
#[test]
fn sim_outputs_fit_in_100_columns() {
    let runs: [&[&str]; 4] = [
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "30,240",
            "-b",
            "0,4",
            "--algo",
            "seed",
            "--ops",
            "200",
        ],
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "240",
            "--kernel",
            "6.17,6.16-rc,7.2",
            "-b",
            "auto,0,256",
            "--ops",
            "200",
        ],
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "240",
            "--kernel",
            "6.17,7.2",
            "-b",
            "0",
            "--algo",
            "hash_long",
            "--ops",
            "200",
        ],
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "--workload",
            "lock",
            "-t",
            "2",
        ],
    ];
    for args in runs {
        let o = common::futexhash(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.lines().count() > 3, "{args:?}: {out}");
        for l in out.lines() {
            assert!(
                l.chars().count() <= 100,
                "{args:?}: {} columns: {l}",
                l.chars().count()
            );
        }
    }
}

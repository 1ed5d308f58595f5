//! `futexhash attack leak|flood|channel`: records as in docs/cli.md, the
//! done-when outcomes on small spaces, and bad input.

mod common;

use common::futexhash;
use serde_json::Value;

fn json(args: &[&str]) -> Vec<Value> {
    let out = futexhash(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    match serde_json::from_slice(&out.stdout).expect("json") {
        Value::Array(v) => v,
        other => panic!("not an array: {other}"),
    }
}

fn has_fields(r: &Value, fields: &[&str]) {
    for f in fields {
        assert!(r.get(*f).is_some(), "field {f} missing in {r}");
    }
}

const LEAK_FIELDS: [&str; 6] = [
    "algo",
    "table",
    "probes",
    "collisions_observed",
    "bits_leaked",
    "mm_recovered",
];
const FLOOD_FIELDS: [&str; 6] = [
    "algo",
    "table",
    "attacker_keys",
    "victim_ops_per_sec",
    "victim_ops_per_sec_alone",
    "victim_slowdown",
];

#[test]
fn leak_recovers_mm_from_jhash2_global_and_nothing_from_private() {
    let rs = json(&[
        "attack",
        "leak",
        "--algo",
        "jhash2",
        "--space-bits",
        "16",
        "--buckets",
        "64",
        "--seed",
        "7",
        "--format",
        "json",
    ]);
    assert_eq!(rs.len(), 2);
    for r in &rs {
        has_fields(r, &LEAK_FIELDS);
    }
    let g = &rs[0];
    assert_eq!(g["table"], "global");
    assert_eq!(g["mm_recovered"], true);
    // All 16 bits of the candidate index: log2(2^16 / 1).
    assert_eq!(g["bits_leaked"].as_f64(), Some(16.0));
    assert_eq!(g["mm"], g["mm_guess"]);
    assert!(g["probes"].as_u64().unwrap() >= g["collisions_observed"].as_u64().unwrap());
    let p = &rs[1];
    assert_eq!(p["table"], "private");
    assert_eq!(p["bits_leaked"].as_f64(), Some(0.0));
    assert_eq!(p["mm_recovered"], false);
    assert_eq!(p["table_hasher"], "jhash2-addr");
}

#[test]
fn leak_keyed_hashers_leak_only_with_the_key() {
    let key = "f0e1d2c3b4a5968778695a4b3c2d1e0f";
    let base = [
        "attack",
        "leak",
        "--algo",
        "siphash,hsiphash",
        "--table",
        "global",
        "--space-bits",
        "14",
        "--buckets",
        "64",
        "--hash-key",
        key,
        "--format",
        "json",
    ];
    // No key: cannot test candidates.
    for r in json(&base) {
        assert_eq!(r["bits_leaked"].as_f64(), Some(0.0), "{r}");
        assert_eq!(r["mm_recovered"], false);
        assert_eq!(r["attacker_key"], "none");
    }
    // A wrong key: tests candidates, learns nothing true.
    let mut wrong = base.to_vec();
    wrong.extend(["--attacker-key", "000102030405060708090a0b0c0d0e0f"]);
    for r in json(&wrong) {
        assert_eq!(r["bits_leaked"].as_f64(), Some(0.0), "{r}");
        assert_eq!(r["attacker_key"], "other");
    }
    // The kernel's key: the same attack recovers mm.
    let mut same = base.to_vec();
    same.extend(["--attacker-key", key]);
    for r in json(&same) {
        assert_eq!(r["mm_recovered"], true, "{r}");
        assert_eq!(r["bits_leaked"].as_f64(), Some(14.0));
    }
}

#[test]
fn flood_slows_the_victim_in_the_global_table_only() {
    let rs = json(&[
        "attack",
        "flood",
        "--algo",
        "jhash2",
        "--attacker-keys",
        "256",
        "--placement",
        "computed",
        "--victim",
        "wake",
        "--duration-ms",
        "40",
        "--reps",
        "3",
        "--buckets",
        "64",
        "--format",
        "json",
    ]);
    // Per table: the control row, then the computed placement's.
    assert_eq!(rs.len(), 4);
    for r in &rs {
        has_fields(r, &FLOOD_FIELDS);
    }
    let placements: Vec<&str> = rs
        .iter()
        .map(|r| r["placement"].as_str().unwrap())
        .collect();
    assert_eq!(placements, ["control", "computed", "control", "computed"]);
    let (g, p) = (&rs[1], &rs[3]);
    assert_eq!(g["keys_in_victim_buckets"], 256);
    assert_eq!(p["keys_in_victim_buckets"], 0);
    // 256 foreign entries on the victim's chain instead of an empty bucket: far slower per
    // operation. The private design: the same work as alone.
    let (gs, ps) = (
        g["victim_slowdown_cpu"].as_f64().unwrap(),
        p["victim_slowdown_cpu"].as_f64().unwrap(),
    );
    assert!(gs > 3.0, "global slowdown {gs}");
    assert!(ps < gs / 2.0, "private slowdown {ps} vs global {gs}");
}

#[test]
fn every_flood_row_is_judged_against_a_control_that_shares_no_bucket() {
    let rs = json(&[
        "attack",
        "flood",
        "--algo",
        "jhash2",
        "--attacker-keys",
        "16",
        "--placement",
        "computed,blind",
        "--victim",
        "pingpong",
        "--duration-ms",
        "20",
        "--reps",
        "2",
        "--buckets",
        "64",
        "--format",
        "json",
    ]);
    // Two tables x (control, computed, blind).
    assert_eq!(rs.len(), 6);
    for (i, r) in rs.iter().enumerate() {
        has_fields(
            r,
            &[
                "control_slowdown",
                "slowdown_vs_control",
                "null_sd",
                "separable",
                "verdict",
            ],
        );
        let verdict = r["verdict"].as_str().unwrap();
        let separable = r["separable"].as_bool().unwrap();
        if i % 3 == 0 {
            assert_eq!(r["placement"], "control", "{r}");
            assert_eq!(r["keys_in_victim_buckets"], 0, "{r}");
            assert_eq!(verdict, "control");
            assert!(!separable);
            // The control row's slowdown is the control slowdown itself.
            assert_eq!(r["victim_slowdown"], r["control_slowdown"], "{r}");
        } else {
            assert_eq!(
                verdict,
                if separable {
                    "separable"
                } else {
                    "not separable"
                }
            );
            // Every row of one hasher/table/victim shares the control's figures.
            assert_eq!(r["control_slowdown"], rs[i - i % 3]["control_slowdown"]);
            assert_eq!(r["null_sd"], rs[i - i % 3]["null_sd"]);
        }
    }
    // One repetition has no spread: no verdict can be separable, whatever the load.
    let rs = json(&[
        "attack",
        "flood",
        "--algo",
        "jhash2",
        "--attacker-keys",
        "16",
        "--placement",
        "computed",
        "--victim",
        "wake",
        "--duration-ms",
        "20",
        "--reps",
        "1",
        "--format",
        "json",
    ]);
    assert!(
        rs.iter()
            .all(|r| r["separable"] == false && r["null_sd"].is_null())
    );
    // The table fits in 100 columns with the longest hasher name.
    let out = futexhash(&[
        "attack",
        "flood",
        "--algo",
        "hash_long_old-addr",
        "--attacker-keys",
        "4",
        "--placement",
        "computed",
        "--victim",
        "wake",
        "--duration-ms",
        "10",
        "--reps",
        "2",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    assert!(text.contains("| control "), "{text}");
}

#[test]
fn channel_separates_in_the_shared_table_only() {
    // Where the hit probes land is decided by the tables' routing: no timing involved.
    // Whether the times separate is a measurement on a shared, loaded 2-CPU machine, so the
    // verdict is taken by majority over three runs. Each run's own verdict is blocked and
    // paired (module docs of attack::channel): before it, one unblocked run in CI read an
    // empty private bucket as occupied (AUC 0.60, control 0.50); an AUC bound of 0.8 once
    // failed at 0.73 for the global table.
    let mut global_separable = 0;
    let mut private_separable = 0;
    for _ in 0..3 {
        let rs = json(&[
            "attack",
            "channel",
            "--waiters",
            "8",
            "--scenario",
            "cross",
            "--samples",
            "20000",
            "--format",
            "json",
        ]);
        assert_eq!(rs.len(), 2);
        let (g, p) = (&rs[0], &rs[1]);
        assert_eq!(g["table"], "global");
        assert_eq!(g["same_bucket"], true);
        assert_eq!(p["same_bucket"], false);
        for r in [g, p] {
            // The blocked verdict's parts are recorded, and they agree with it: separable
            // never without an excess of 4 standard errors.
            let blocks = r["blocks"].as_u64().unwrap();
            assert_eq!(blocks, 10, "{r}");
            let (ex, se) = (
                r["auc_excess"].as_f64().unwrap(),
                r["auc_excess_se"].as_f64().unwrap(),
            );
            assert!(se > 0.0, "{r}");
            if r["separable"] == true {
                assert!(ex > 4.0 * se - 1e-4, "{r}");
            }
        }
        global_separable += usize::from(g["separable"] == true);
        private_separable += usize::from(p["separable"] == true);
        if global_separable >= 2 && 3 - private_separable >= 2 {
            break;
        }
    }
    assert!(
        global_separable >= 2,
        "global separable in {global_separable} of 3 runs"
    );
    assert!(
        private_separable <= 1,
        "private separable in {private_separable} of 3 runs"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (
            &["attack", "leak", "--algo", "jhash2", "--table", "foo"][..],
            "'foo'",
        ),
        (
            &["attack", "leak", "--algo", "jhash2", "--buckets", "3"][..],
            "--buckets 3",
        ),
        (
            &["attack", "leak", "--algo", "jhash2", "--space-bits", "40"][..],
            "--space-bits 40",
        ),
        (&["attack", "leak", "--algo", "nope"][..], "'nope'"),
        (
            &["attack", "flood", "--algo", "jhash2", "--placement", "x"][..],
            "--placement 'x'",
        ),
        (
            &[
                "attack",
                "flood",
                "--algo",
                "jhash2",
                "--attacker-keys",
                "0",
            ][..],
            "--attacker-keys 0",
        ),
        (
            &["attack", "channel", "--waiters", "0"][..],
            "--waiters '0'",
        ),
        (
            &["attack", "leak", "--algo", "jhash2", "--hash-key", "zz"][..],
            "zz",
        ),
    ] {
        let out = futexhash(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// Runs `args`, expects exit 2 with one line on stderr containing every `needles`, and no
/// output (refused before any work).
fn refused(args: &[&str], needles: &[&str]) {
    let out = futexhash(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err} lacks {n}");
    }
    assert!(out.stdout.is_empty(), "{args:?}: work was done");
}

/// Tables are capped at 2^24 buckets, as in `bench`, `sim` and `dist`: every size flag of
/// every subcommand above it is refused with the value and the range. `channel` and
/// `flood` used to panic in the table's mapping from 2^29 on, and `leak` accepted up to
/// 2^31. The options that keep the old code's run short are there so that the test fails
/// quickly on it rather than running a long attack.
#[test]
fn table_sizes_above_2_to_the_24_are_refused_with_the_range() {
    let leak = ["attack", "leak", "--algo", "jhash2", "--space-bits", "8"];
    let channel = ["attack", "channel", "--samples", "100", "--waiters", "1"];
    let flood = [
        "attack",
        "flood",
        "--algo",
        "jhash2",
        "--duration-ms",
        "1",
        "--reps",
        "1",
        "--attacker-keys",
        "1",
    ];
    for cmd in [&leak[..], &channel[..], &flood[..]] {
        for (flag, table) in [("--buckets", "global"), ("--slots", "private")] {
            for v in ["33554432", "536870912", "2147483648"] {
                let mut args = cmd.to_vec();
                args.extend(["--table", table, flag, v]);
                refused(&args, &[&format!("{flag} {v}"), "2..=16777216"]);
            }
        }
    }
    // The help states the range the code enforces.
    for sub in ["leak", "channel", "flood"] {
        let out = futexhash(&["attack", sub, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert_eq!(help.matches("2..=2^24").count(), 2, "{sub}: {help}");
    }
}

/// A table inside the cap but beyond what the process may map (here RLIMIT_AS of about
/// 977 MiB against a 1 GiB table: 2^24 buckets of one 64-byte cache line) is refused up
/// front naming the limit, where the mapping used to panic.
#[test]
fn a_table_beyond_the_memory_limits_is_refused_not_a_panic() {
    for sub in ["channel --samples 100 --waiters 1", "flood --algo jhash2"] {
        let script = format!(
            "ulimit -v 1000000 && exec \"$0\" attack {sub} --table global --buckets 16777216"
        );
        let out = std::process::Command::new("sh")
            .args(["-c", &script, env!("CARGO_BIN_EXE_futexhash")])
            .output()
            .expect("run sh");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sub}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{sub}: {err}");
        assert!(err.contains("16777216 buckets"), "{sub}: {err}");
        assert!(err.contains("RLIMIT_AS"), "{sub}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// Flags the run would not read are refused when given, whatever their value; lists that
/// name an item twice are refused naming it. Each of these used to run (the old code
/// ignored the flag or dropped the repeat).
#[test]
fn unused_flags_and_repeated_list_items_are_refused() {
    let key = "000102030405060708090a0b0c0d0e0f";
    let leak = ["attack", "leak", "--space-bits", "8", "--max-probes", "64"];
    let channel = ["attack", "channel", "--samples", "100", "--waiters", "1"];
    let flood = [
        "attack",
        "flood",
        "--duration-ms",
        "1",
        "--reps",
        "1",
        "--attacker-keys",
        "1",
        "--placement",
        "blind",
        "--victim",
        "wake",
    ];
    let with = |base: &[&'static str], more: &[&'static str]| {
        let mut v = base.to_vec();
        v.extend_from_slice(more);
        v
    };
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        // Keys with no keyed hasher to use them.
        (
            with(&leak, &["--algo", "jhash2", "--attacker-key", key]),
            vec!["--attacker-key", "'jhash2'"],
        ),
        (
            with(&leak, &["--algo", "jhash2,crc32", "--hash-key", key]),
            vec!["--hash-key", "'jhash2,crc32'"],
        ),
        (
            with(&flood, &["--algo", "jhash2", "--attacker-key", key]),
            vec!["--attacker-key"],
        ),
        // A size of a table the run does not attack.
        (
            with(
                &leak,
                &["--algo", "jhash2", "--table", "global", "--slots", "16"],
            ),
            vec!["--slots 16", "private"],
        ),
        (
            with(
                &leak,
                &["--algo", "jhash2", "--table", "private", "--buckets", "64"],
            ),
            vec!["--buckets 64", "global"],
        ),
        (
            with(&channel, &["--table", "global", "--slots", "16"]),
            vec!["--slots 16"],
        ),
        (
            with(&channel, &["--table", "private", "--buckets", "64"]),
            vec!["--buckets 64"],
        ),
        (
            with(
                &flood,
                &["--algo", "jhash2", "--table", "global", "--slots", "16"],
            ),
            vec!["--slots 16"],
        ),
        // --cpus only sets default sizes: unused when every size read is given.
        (
            with(
                &leak,
                &[
                    "--algo",
                    "jhash2",
                    "--table",
                    "global",
                    "--buckets",
                    "64",
                    "--cpus",
                    "4",
                ],
            ),
            vec!["--cpus 4"],
        ),
        // Repeats.
        (
            with(&leak, &["--algo", "jhash2,jhash2"]),
            vec!["'jhash2' is listed twice"],
        ),
        (
            with(&leak, &["--algo", "seed,jhash2"]),
            vec!["'jhash2' is listed twice", "seed includes it"],
        ),
        (
            with(&leak, &["--algo", "jhash2", "--table", "global,global"]),
            vec!["'global' is listed twice"],
        ),
        (
            with(&channel, &["--scenario", "cross,cross"]),
            vec!["'cross' is listed twice"],
        ),
        (
            with(
                &["attack", "channel", "--samples", "100"],
                &["--waiters", "8,0x8"],
            ),
            vec!["--waiters '0x8' is listed twice"],
        ),
        (
            with(
                &["attack", "flood", "--algo", "jhash2"],
                &["--placement", "blind,blind"],
            ),
            vec!["'blind' is listed twice"],
        ),
        (
            with(
                &["attack", "flood", "--algo", "jhash2"],
                &["--victim", "wake,wake"],
            ),
            vec!["'wake' is listed twice"],
        ),
    ];
    for (args, needles) in &cases {
        refused(args, needles);
    }
}

/// Lines of `text` longer than the project's 100 columns.
fn too_wide(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.chars().count() > 100).collect()
}

/// The first cell of each table block's header row, and the header cells of each block.
fn block_headers(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        // A header row follows a block's top border (one that does not close a block).
        if l.starts_with("+-") && (i == 0 || !lines[i - 1].starts_with('|')) {
            let cells = lines[i + 1]
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            out.push(cells);
        }
    }
    out
}

/// The text output of `leak`: each block of a split table repeats the columns a row is
/// read by (hasher and table; only `algo` was), the preamble states the sizes used and
/// where they came from (it quoted the kernel formula for a size given by --buckets), and
/// no line is wider than 100 columns (the preamble was one line of about 600).
#[test]
fn leak_text_states_the_sizes_used_repeats_row_labels_and_fits_100_columns() {
    let out = futexhash(&[
        "attack",
        "leak",
        "--algo",
        "hash_long_old-addr,jhash2",
        "--space-bits",
        "10",
        "--buckets",
        "64",
        "--slots",
        "32",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(too_wide(&text).is_empty(), "{:?}", too_wide(&text));
    let blocks = block_headers(&text);
    assert!(blocks.len() >= 2, "the table is split: {text}");
    for b in &blocks {
        assert_eq!(b[..2], ["algo", "table"], "{text}");
    }
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("global table 64 buckets (--buckets)"),
        "{flat}"
    );
    assert!(flat.contains("private table 32 slots (--slots)"), "{flat}");
    assert!(!flat.contains("roundup_pow_of_two"), "{flat}");
    // Defaults name their source: roundup_pow_of_two(256 x 4) = 1024 for --cpus 4.
    let out = futexhash(&[
        "attack",
        "leak",
        "--algo",
        "jhash2",
        "--space-bits",
        "8",
        "--table",
        "global",
        "--cpus",
        "4",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("global table 1024 buckets (the kernel's size for 4 CPUs"),
        "{flat}"
    );
    assert!(flat.contains("CPU count from --cpus"), "{flat}");
    assert!(!flat.contains("private table"), "{flat}");
}

/// As for `leak`: `channel`'s split table repeats hasher, table, scenario and waiters in
/// every block, and its preamble (one line of about 700) fits 100 columns. The figures are
/// timings, but only the layout is checked.
#[test]
fn channel_text_repeats_row_labels_and_fits_100_columns() {
    let out = futexhash(&[
        "attack",
        "channel",
        "--algo",
        "hash_long_old-addr",
        "--samples",
        "100",
        "--waiters",
        "1",
        "--scenario",
        "cross",
        "--table",
        "private",
        "--slots",
        "16",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(too_wide(&text).is_empty(), "{:?}", too_wide(&text));
    let blocks = block_headers(&text);
    assert!(blocks.len() >= 2, "the table is split: {text}");
    for b in &blocks {
        assert_eq!(b[..4], ["algo", "table", "scenario", "waiters"], "{text}");
    }
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("private table 16 slots (--slots)"), "{flat}");
    assert!(!flat.contains("global table"), "{flat}");
}

/// `attack flood` counts its configurations on one line when stderr is a terminal (it ran
/// in silence for minutes with `--algo all`), and writes nothing extra when it is not.
#[test]
fn flood_counts_its_configurations_on_a_terminal_only() {
    let args = [
        "attack",
        "flood",
        "--algo",
        "jhash2",
        "--table",
        "global",
        "--victim",
        "wake,pingpong",
        "--placement",
        "blind",
        "--attacker-keys",
        "1",
        "--duration-ms",
        "1",
        "--reps",
        "1",
        "--format",
        "csv",
    ];
    let (child, screen) = common::pty::spawn_on_terminal(&args);
    let out = child.wait_with_output().unwrap();
    let shown = screen.closed_text();
    assert_eq!(out.status.code(), Some(0), "{shown}");
    // A header and the two configurations' control and blind rows.
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 5);
    assert!(shown.contains("attack flood: "), "{shown}");
    assert!(shown.contains(" of 2 configurations done"), "{shown}");
    let piped = futexhash(&args);
    assert_eq!(piped.status.code(), Some(0));
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(!err.contains("configurations done"), "{err:?}");
}

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

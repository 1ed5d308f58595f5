//! `futexhash sim --workload trace:FILE` end to end on small constructed strace files whose
//! contention is known by hand: two threads on one futex wait only for the same key; two
//! futexes forced into one bucket by a 1-slot table wait only for each other. Also the
//! design flags the replay refuses, and the table's width.

mod common;

use common::futexhash;
use std::path::{Path, PathBuf};

/// A profile with every cost stated (the hash too, so nothing is timed): 2 CPUs, one node,
/// holds long against the outside work, so nearly every acquisition of a shared lock waits.
const PROFILE: &str = r#"name = "trace test"
cpus = 2
nodes = 1
outside_ns = 100.0
hold_ns = 1000.0
handoff_local_ns = 200.0
handoff_remote_ns = 600.0
line_miss_ns = 50.0

[hash_ns]
jhash2 = 0.0
"#;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("futexhash-sim-trace-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An strace file: threads 100 and 101 alternate `n` wakes each, on one futex or one each.
fn trace(d: &Path, n: usize, one_futex: bool) -> PathBuf {
    let mut s = String::new();
    for _ in 0..n {
        for (tid, addr) in [(100, 0x7f00_0000_1000u64), (101, 0x7f00_0000_2000)] {
            let addr = if one_futex { 0x7f00_0000_1000 } else { addr };
            s.push_str(&format!(
                "{tid} futex({addr:#x}, FUTEX_WAKE_PRIVATE, 1) = 0\n"
            ));
        }
    }
    let p = d.join(if one_futex {
        "one.strace"
    } else {
        "two.strace"
    });
    std::fs::write(&p, s).unwrap();
    p
}

fn profile(d: &Path) -> PathBuf {
    let p = d.join("p.toml");
    std::fs::write(&p, PROFILE).unwrap();
    p
}

fn run(args: &[&str]) -> (String, String, i32) {
    let out = futexhash(args);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn records(profile: &Path, trace: &Path, buckets: &str) -> Vec<serde_json::Value> {
    let w = format!("trace:{}", trace.display());
    let (out, err, code) = run(&[
        "sim",
        "--profile",
        profile.to_str().unwrap(),
        "--workload",
        &w,
        "-b",
        buckets,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<serde_json::Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn f(r: &serde_json::Value, k: &str) -> f64 {
    r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"))
}

#[test]
fn contention_on_one_futex_is_all_same_key_and_the_table_says_no_hash_helps() {
    let d = dir("same");
    let (p, t) = (profile(&d), trace(&d, 200, true));
    // Back to back (strace without times), after the first every acquisition finds the
    // other thread holding the futex: 399 of 400, all same-key, whatever the table.
    for r in records(&p, &t, "0,1,1024") {
        assert!(
            (f(&r, "contended_pct") - 100.0 * 399.0 / 400.0).abs() < 1e-9,
            "{r}"
        );
        assert_eq!(f(&r, "contended_same_key_pct"), f(&r, "contended_pct"));
        assert_eq!(f(&r, "contended_shared_bucket_pct"), 0.0);
    }
    let w = format!("trace:{}", t.display());
    let (out, err, code) = run(&[
        "sim",
        "--profile",
        p.to_str().unwrap(),
        "--workload",
        &w,
        "-b",
        "0,1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.matches(
            "100.0 % of these waits were for the same futex: no hash or table size can help"
        )
        .count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("399 waits (399 same futex), 1 key(s):"),
        "{out}"
    );
    for line in out.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn two_futexes_in_one_bucket_wait_for_each_other_and_no_same_key_verdict_is_printed() {
    let d = dir("shared");
    let (p, t) = (profile(&d), trace(&d, 200, false));
    let recs = records(&p, &t, "1,1024");
    // 1 slot: both futexes in it, 399 of 400 acquisitions wait, each for the other futex.
    assert!(
        (f(&recs[0], "contended_shared_bucket_pct") - 99.75).abs() < 1e-9,
        "{}",
        recs[0]
    );
    assert_eq!(f(&recs[0], "contended_same_key_pct"), 0.0);
    assert_eq!(
        f(&recs[0], "contended_pct"),
        f(&recs[0], "contended_shared_bucket_pct")
    );
    // 1024 slots part them (jhash2 puts the two words in different buckets): no waits.
    assert_eq!(f(&recs[1], "contended_pct"), 0.0, "{}", recs[1]);
    let w = format!("trace:{}", t.display());
    let (out, _, code) = run(&[
        "sim",
        "--profile",
        p.to_str().unwrap(),
        "--workload",
        &w,
        "-b",
        "1",
    ]);
    assert_eq!(code, 0);
    assert!(!out.contains("no hash or table size can help\n"), "{out}");
    assert!(
        out.contains("process 0 slot 0: 399 waits (0 same futex), 2 key(s):"),
        "{out}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn design_flags_the_replay_cannot_honour_are_refused_and_the_others_are_recorded() {
    let d = dir("flags");
    let (p, t) = (profile(&d), trace(&d, 5, true));
    let w = format!("trace:{}", t.display());
    let base = ["sim", "--profile", p.to_str().unwrap(), "--workload", &w];
    for (extra, flag) in [
        (["--kernel", "6.16"], "--kernel"),
        (["--node", "0"], "--node"),
    ] {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let (out, err, code) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(flag), "{err}");
    }
    // --lock ticket needs the profile's ticket figure: refused, naming it.
    let args: Vec<&str> = base.iter().copied().chain(["--lock", "ticket"]).collect();
    let (_, err, code) = run(&args);
    assert_eq!(code, 2);
    assert!(err.contains("ticket_spinner_ns"), "{err}");
    let args: Vec<&str> = base
        .iter()
        .copied()
        .chain([
            "--layout",
            "packed",
            "--refcount",
            "shared",
            "-b",
            "4",
            "--format",
            "json",
        ])
        .collect();
    let (out, err, code) = run(&args);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            r[0]["layout"].as_str(),
            r[0]["refcount"].as_str(),
            r[0]["lock"].as_str()
        ),
        (Some("packed"), Some("shared"), Some("queued"))
    );
    std::fs::remove_dir_all(&d).unwrap();
}

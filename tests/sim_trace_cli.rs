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

/// A `futexhash capture` file (times in ns): thread 100 wakes one futex `n` times 10 ns
/// apart from 1 s on, thread 101 as many times on the same futex from `later_ns` after.
fn capture(d: &Path, n: u64, later_ns: u64) -> PathBuf {
    let mut s = String::from("# futexhash-capture v1 probe=tracepoint clock=monotonic_ns\n");
    let mut events = 0;
    for (tid, from) in [(100, 1_000_000_000u64), (101, 1_000_000_000 + later_ns)] {
        for i in 0..n {
            // FUTEX_WAKE | FUTEX_PRIVATE_FLAG (129) of one word, one waiter.
            s.push_str(&format!(
                "futex {} 100 {tid} 0xffff888100000000 129 0x7f0000001000 1 0x0 0x0 0\n",
                from + 10 * i
            ));
            events += 1;
        }
    }
    s.push_str(&format!(
        "# end events={events} lost=0 reason=exited exit_code=0\n"
    ));
    let p = d.join(format!("later-{later_ns}.fxc"));
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

/// `sim --workload trace:FILE` with `extra` flags, as JSON records.
fn records_with(profile: &Path, trace: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let w = format!("trace:{}", trace.display());
    let mut args = vec![
        "sim",
        "--profile",
        profile.to_str().unwrap(),
        "--workload",
        &w,
        "-b",
        "0",
        "--format",
        "json",
    ];
    args.extend(extra);
    let (out, err, code) = run(&args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<serde_json::Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn threads_the_program_started_a_second_apart_do_not_meet_as_captured() {
    // Two threads on one futex, the second starting 1 s after the first: thread 100's
    // 200 calls (10 ns apart as captured, shorter than a call of 100 + 1000 ns, so back to
    // back) end 220 µs in. As captured (--think-scale 1, the default) none of the 400
    // acquisitions waits; back to back (0) 399 of 400 do, as in the strace test above;
    // at 1e-7 the second's start (100 ns in) falls inside the first's calls again.
    let d = dir("starts");
    let (p, t) = (profile(&d), capture(&d, 200, 1_000_000_000));
    let captured = &records_with(&p, &t, &[])[0];
    assert_eq!(captured["think"], "captured", "{captured}");
    assert_eq!(f(captured, "acquisitions"), 400.0);
    assert_eq!(f(captured, "contended"), 0.0, "{captured}");
    assert!(f(captured, "simulated_secs") > 1.0, "{captured}");
    let back_to_back = &records_with(&p, &t, &["--think-scale", "0"])[0];
    assert_eq!(f(back_to_back, "contended"), 399.0, "{back_to_back}");
    let squeezed = &records_with(&p, &t, &["--think-scale", "1e-7"])[0];
    assert!(f(squeezed, "contended") > 0.0, "{squeezed}");
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

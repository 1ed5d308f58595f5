//! `futexhash sim`, `sim calibrate` and `sim validate` as a user runs them.

mod common;
use common::{BENCH_SPEC_FIELDS, futexhash};

use std::path::Path;

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fh-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn sim_json_has_the_bench_fields_and_the_contention_curve() {
    let o = futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "64",
        "-f",
        "128",
        "-b",
        "2,64,4096,0",
        "--algo",
        "jhash2,crc32",
        "--ops",
        "300",
        "--warmup",
        "50",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let recs = v.as_array().unwrap();
    assert_eq!(recs.len(), 8);
    for r in recs {
        for f in BENCH_SPEC_FIELDS {
            assert!(r.get(f).is_some_and(|x| !x.is_null()), "{f} missing in {r}");
        }
        assert_eq!(r["backend"], "sim");
        assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0);
    }
    let rate = |b: u64| {
        recs.iter()
            .find(|r| r["buckets"] == b && r["algo"] == "jhash2")
            .unwrap()["ops_per_sec"]
            .as_f64()
            .unwrap()
    };
    assert!(rate(4096) > 5.0 * rate(2), "{} {}", rate(4096), rate(2));
    assert_eq!(
        recs.iter().find(|r| r["buckets"] == 0).unwrap()["table"],
        "global"
    );
}

#[test]
fn calibrate_writes_a_profile_that_reproduces_its_rows() {
    let csv = tmp("measured.csv");
    std::fs::write(&csv, "buckets,ops/sec\n0,1500000\n2,40000\n1024,900000\n").unwrap();
    let prof = tmp("fitted.toml");
    let o = futexhash(&[
        "sim",
        "calibrate",
        "--from",
        csv.to_str().unwrap(),
        "--rows",
        "0,1",
        "--threads",
        "32",
        "--cpus",
        "32",
        "--nodes",
        "2",
        "-f",
        "128",
        "--out",
        prof.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = futexhash(&[
        "sim",
        "--profile",
        prof.to_str().unwrap(),
        "-t",
        "32",
        "-f",
        "128",
        "-b",
        "0,2",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for (b, want) in [(0, 1_500_000.0), (2, 40_000.0)] {
        let got = v
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["buckets"] == b)
            .unwrap()["ops_per_sec"]
            .as_f64()
            .unwrap();
        assert!(
            (got / want - 1.0).abs() < 0.03,
            "buckets {b}: {got} vs {want}"
        );
    }
}

#[test]
fn validate_reports_every_published_row() {
    let o = futexhash(&[
        "sim", "validate", "--ops", "150", "--warmup", "30", "--format", "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("table,algo,buckets,published,predicted,ratio,calibration_row"));
    // 18 + 8 × 17 + 16 rows.
    assert_eq!(text.lines().count() - 1, 18 + 136 + 16);
}

#[test]
fn absurd_sizes_and_profiles_are_refused_before_any_work() {
    let prof = tmp("absurd.toml");
    std::fs::write(
        &prof,
        "name='x'\ncpus=4294967295\nnodes=1\noutside_ns=1\nhold_ns=1\nhandoff_local_ns=1\nhandoff_remote_ns=1\n",
    )
    .unwrap();
    let huge = tmp("huge.toml");
    std::fs::write(
        &huge,
        "name='x'\ncpus=4\nnodes=1\noutside_ns=1\nhold_ns=1e300\nhandoff_local_ns=1\nhandoff_remote_ns=1\n",
    )
    .unwrap();
    let csv = tmp("bigrow.csv");
    std::fs::write(&csv, "buckets,ops/sec\n0,100\n4294967296,50\n").unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["sim", "--profile", "this-vm", "-t", "1", "-b", "4294967296"],
        vec![
            "sim",
            "--profile",
            "this-vm",
            "-t",
            "1",
            "-b",
            "9223372036854775808",
        ],
        vec!["sim", "--profile", "this-vm", "-t", "100000"],
        vec![
            "sim",
            "--profile",
            prof.to_str().unwrap(),
            "-t",
            "1",
            "-b",
            "2",
        ],
        vec![
            "sim",
            "--profile",
            huge.to_str().unwrap(),
            "-t",
            "1",
            "-b",
            "2",
        ],
        vec![
            "sim",
            "calibrate",
            "--from",
            csv.to_str().unwrap(),
            "--rows",
            "0,1",
            "--threads",
            "2",
            "--cpus",
            "2",
            "--out",
            "/tmp/fh-never.toml",
        ],
        vec![
            "sim",
            "--profile",
            "this-vm",
            "-t",
            "1",
            "-b",
            "2",
            "--output",
            "/tmp",
        ],
    ];
    for args in cases {
        let o = futexhash(&args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stderr)
                .trim_end()
                .lines()
                .count(),
            1
        );
    }
    assert!(!Path::new("/tmp/fh-never.toml").exists());
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let cases: [&[&str]; 8] = [
        &["sim", "--profile", "nope-no-such", "-t", "4"],
        &["sim", "--profile", "seed-256cpu", "-t", "0"],
        &["sim", "--profile", "seed-256cpu", "-b", "3"],
        &["sim", "--profile", "seed-256cpu", "--algo", "md5"],
        &["sim", "--profile", "seed-256cpu", "-f", "5000"],
        &["sim", "--profile", "seed-256cpu", "--node", "7"],
        &[
            "sim",
            "calibrate",
            "--from",
            "/nonexistent.csv",
            "--rows",
            "0,1",
            "--threads",
            "2",
            "--cpus",
            "2",
            "--out",
            "/tmp/x.toml",
        ],
        &["sim", "validate", "--rows", "0,0"],
    ];
    for args in cases {
        let o = futexhash(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn futex_numa_lock_test_separated_nodes_beat_one_bucket() {
    let rate = |extra: &[&str]| {
        let mut args = vec![
            "sim",
            "--profile",
            "seed-256cpu",
            "--workload",
            "lock",
            "-t",
            "10",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let o = futexhash(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v[0]["workload"], "lock");
        v[0]["ops_per_sec"].as_f64().unwrap()
    };
    let (split, shared) = (rate(&[]), rate(&["--same-node"]));
    assert!(split > 1.5 * shared, "{split} vs {shared}");
    let o = futexhash(&["sim", "--profile", "seed-256cpu", "--same-node"]);
    assert_eq!(o.status.code(), Some(2));
}

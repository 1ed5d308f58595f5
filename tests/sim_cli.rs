//! `futexhash sim`, `sim calibrate` and `sim validate` as a user runs them.

mod common;
use common::{BENCH_SPEC_FIELDS, futexhash};

use std::path::Path;

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fh-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `sim calibrate` of rows 0 and 1 of `from` as measured with 2 threads on 2 CPUs, plus
/// `extra`, writing `out`.
fn two_cpu_calibration<'a>(from: &'a str, extra: &[&'a str], out: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "sim",
        "calibrate",
        "--from",
        from,
        "--rows",
        "0,1",
        "--threads",
        "2",
        "--cpus",
        "2",
    ];
    args.extend_from_slice(extra);
    args.extend(["--out", out]);
    args
}

/// The command exits 2 with exactly one line on stderr.
fn assert_refused_in_one_line(args: &[&str]) {
    let o = futexhash(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
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
        // Every record carries its 80 % interval, around the rate.
        let (lo, ops, hi) = (
            r["ops_per_sec_lo"].as_f64().unwrap(),
            r["ops_per_sec"].as_f64().unwrap(),
            r["ops_per_sec_hi"].as_f64().unwrap(),
        );
        assert!(lo > 0.0 && lo < ops && ops < hi, "{r}");
        // The global hash it used: the kernel's roundup_pow_of_two(256 × 256 CPUs).
        assert_eq!(r["global_buckets"], 65536, "{r}");
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
fn calibrate_refuses_rows_its_threads_cannot_reach_before_computing() {
    // The seed's 240-thread rows given as 5000 threads on 2 CPUs: 1,868,129 ops/sec per
    // thread would need an operation every 0.214 ns per CPU (1e9 / (1868129 x 2500)), below
    // the template's 100 ns hold; at most floor(2e9 / (1868129 x 100)) = 10 threads could.
    let prof = tmp("never.toml");
    let o = futexhash(&[
        "sim",
        "calibrate",
        "--from",
        "data/published/buckets-240threads-256cpu.csv",
        "--rows",
        "0,2",
        "--threads",
        "5000",
        "--cpus",
        "2",
        "--out",
        prof.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("5000 threads on 2 CPUs")
            && err.contains("0.214 ns")
            && err.contains("at most 10 threads"),
        "{err}"
    );
    assert!(!prof.exists());
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
    assert!(text.starts_with("table,config,x,published,predicted,fitted,"));
    let table = |l: &str| l.split(',').next().unwrap_or("").to_string();
    // The 2024 tables: 18 + 8 × 17 + 16 cells; seed 003: 6 × 4; seed 002: one ratio;
    // seed 000's pinning figures: 3 CPU sets × (global, private).
    assert_eq!(text.lines().count() - 1, 18 + 136 + 16 + 24 + 1 + 6);
    assert_eq!(
        text.lines()
            .filter(|l| table(l).contains("pinning"))
            .count(),
        6
    );
    assert_eq!(
        text.lines().filter(|l| table(l).contains("2013")).count(),
        24
    );
    assert_eq!(
        text.lines()
            .filter(|l| table(l).contains("futex_numa"))
            .count(),
        1
    );
}

#[test]
fn the_validation_table_in_the_docs_is_the_template_run_s_output() {
    // docs/sim.md shows `sim validate --template seed-256cpu-template --summary` byte for
    // byte: a model change that moves a figure of that summary fails here until the docs
    // show the new output. (The docs' other figures, from other commands, are not checked.)
    let o = futexhash(&[
        "sim",
        "validate",
        "--template",
        "data/machines/seed-256cpu-template.toml",
        "--summary",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sim.md")).unwrap();
    assert!(
        docs.contains(out.trim()),
        "docs/sim.md does not hold this output:\n{out}"
    );
}

#[test]
fn validate_with_stated_hash_costs_is_reproducible() {
    // With every hash cost stated, nothing is timed: two runs, one of them confined to
    // one CPU (the parallel workers then number one), must print the same bytes. Without
    // stated costs the runs would differ in the cost digits, which is what this guards.
    let args = [
        "validate",
        "--template",
        "seed-256cpu-template",
        "--ops",
        "150",
        "--warmup",
        "30",
        "--format",
        "json",
    ];
    let mut all = vec!["sim"];
    all.extend(args);
    let a = futexhash(&all);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let bin = env!("CARGO_BIN_EXE_futexhash");
    let b = std::process::Command::new("taskset")
        .args(["-c", "0", bin, "sim"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    let b = match b {
        Ok(b) if b.status.success() => b,
        // No taskset here: a second unconfined run still checks run-to-run stability.
        _ => futexhash(&all),
    };
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    assert!(!a.stdout.is_empty());
    assert!(a.stdout == b.stdout, "two validation runs differ");
    // The summary ends with seed 003's column-order verdict, counted over its six rows.
    let mut summary = vec!["sim"];
    summary.extend(&args[..7]);
    summary.push("--summary");
    let s = futexhash(&summary);
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    assert!(
        last.starts_with("seed003-2013-80core-threads.csv: columns in the published order at ")
            && last.contains(" of 6 rows")
            && last.contains("closest pair: "),
        "{text}"
    );
}

/// A hasher named twice in `--algo` is refused before any simulation, in one line naming
/// it, for the sweep and the trace replay alike; both used to simulate it once and drop
/// the repeat without a word.
#[test]
fn a_hasher_named_twice_is_refused() {
    let trace = concat!(
        "trace:",
        env!("CARGO_MANIFEST_DIR"),
        "/data/traces/multi-process.strace"
    );
    for args in [
        vec![
            "sim",
            "--profile",
            "this-vm",
            "-t",
            "1",
            "-b",
            "2",
            "--algo",
            "xxh3,xxh3",
        ],
        vec![
            "sim",
            "--profile",
            "this-vm",
            "--workload",
            trace,
            "--algo",
            "seed,xxh3,crc32",
        ],
    ] {
        let o = futexhash(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        let needle = if args.contains(&"xxh3,xxh3") {
            "--algo 'xxh3' is listed twice"
        } else {
            "'crc32' is listed twice in 'seed,xxh3,crc32' (seed includes it)"
        };
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}: work was done");
    }
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
        two_cpu_calibration(csv.to_str().unwrap(), &[], "/tmp/fh-never.toml"),
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
        assert_refused_in_one_line(&args);
    }
    assert!(!Path::new("/tmp/fh-never.toml").exists());
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let missing_csv = two_cpu_calibration("/nonexistent.csv", &[], "/tmp/x.toml");
    let cases: [&[&str]; 8] = [
        &["sim", "--profile", "nope-no-such", "-t", "4"],
        &["sim", "--profile", "seed-256cpu", "-t", "0"],
        &["sim", "--profile", "seed-256cpu", "-b", "3"],
        &["sim", "--profile", "seed-256cpu", "--algo", "md5"],
        &["sim", "--profile", "seed-256cpu", "-f", "5000"],
        &["sim", "--profile", "seed-256cpu", "--node", "7"],
        &missing_csv,
        &["sim", "validate", "--rows", "0,0"],
    ];
    for args in cases {
        assert_refused_in_one_line(args);
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
        let rate = v[0]["ops_per_sec"].as_f64().unwrap();
        // Every sim record carries its 80 % interval; at the least it holds the CV model
        // error of an unseen machine, exp(±1.2816 × 0.179) (docs/sim.md: z of an 80 %
        // interval times the quoted model error), whatever the replications add.
        let lo = v[0]["ops_per_sec_lo"]
            .as_f64()
            .expect("lock record has ops_per_sec_lo");
        let hi = v[0]["ops_per_sec_hi"]
            .as_f64()
            .expect("lock record has ops_per_sec_hi");
        let least = (1.2816_f64 * 0.179).exp();
        assert!(
            lo * least <= rate * 1.0001 && rate * least <= hi * 1.0001,
            "{lo} {rate} {hi}"
        );
        rate
    };
    let (split, shared) = (rate(&[]), rate(&["--same-node"]));
    assert!(split > 1.5 * shared, "{split} vs {shared}");
    let o = futexhash(&["sim", "--profile", "seed-256cpu", "--same-node"]);
    assert_eq!(o.status.code(), Some(2));
}

fn json(args: &[&str]) -> Vec<serde_json::Value> {
    let o = futexhash(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&o.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn every_hasher_costs_something_and_says_where_it_came_from() {
    // The issue's case: the profile has no figure for the last four, which used to be
    // free. Now they are timed here and say so.
    let o = futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "1",
        "-b",
        "16",
        "--algo",
        "jhash2,xxh3,xxh32,hsiphash32,hash_long_old",
        "--ops",
        "200",
        "--warmup",
        "20",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let recs = v.as_array().unwrap();
    assert_eq!(recs.len(), 5);
    for r in recs {
        let ns = r["hash_ns"].as_f64().unwrap();
        assert!(ns > 0.0, "{r}");
        assert!(r["profile"].as_str().is_some_and(|p| !p.is_empty()));
        let algo = r["algo"].as_str().unwrap();
        if r["hash_ns_source"] == "measured" {
            assert!(err.contains(&format!("no hash cost for {algo}")), "{err}");
        }
    }
}

#[test]
fn csv_records_carry_hash_ns_and_profile() {
    let o = futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "4",
        "-b",
        "16,auto",
        "--ops",
        "100",
        "--warmup",
        "10",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let header = text.lines().next().unwrap();
    for f in ["hash_ns", "profile", "lock", "refcount", "slots"] {
        assert!(header.split(',').any(|h| h == f), "{f} in {header}");
    }
    // auto for 4 threads (+ perf's main) on 256 CPUs: roundup(4 × 5) = 32 slots.
    assert!(
        text.lines()
            .any(|l| l.contains(",auto,") && l.contains(",32,")),
        "{text}"
    );
}

#[test]
fn the_6_16_shared_reference_collapses_and_per_cpu_recovers() {
    // Kernel test robot on 7c4f75a21f63: -94.6 % on a 192-thread 2-socket box. Goal:
    // at 240 threads, -b auto, shared loses at least 75 % against per-CPU, and per-CPU
    // is within 10 % of no reference at all.
    let rate = |refcount: &str| {
        json(&[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "240",
            "-b",
            "auto",
            "--refcount",
            refcount,
            "--ops",
            "300",
            "--warmup",
            "50",
            "--format",
            "json",
        ])[0]["ops_per_sec"]
            .as_f64()
            .unwrap()
    };
    let (none, shared, percpu) = (rate("none"), rate("shared"), rate("percpu"));
    assert!(shared < 0.25 * percpu, "shared {shared} percpu {percpu}");
    assert!(
        (percpu / none - 1.0).abs() < 0.10,
        "percpu {percpu} none {none}"
    );
}

#[test]
fn kernel_presets_and_axes_bad_values_exit_2() {
    let cases: [&[&str]; 6] = [
        &["sim", "--profile", "seed-256cpu", "--kernel", "5.4"],
        &["sim", "--profile", "seed-256cpu", "--lock", "mcs"],
        &["sim", "--profile", "seed-256cpu", "--refcount", "atomic"],
        // this-vm has no ticket_spinner_ns: --lock ticket (and 3.13's preset) need it.
        &["sim", "--profile", "this-vm", "-t", "2", "--lock", "ticket"],
        &["sim", "--profile", "this-vm", "-t", "2", "--kernel", "3.13"],
        // 3.12 has no private hash.
        &[
            "sim",
            "--profile",
            "seed-256cpu",
            "--kernel",
            "3.12",
            "-b",
            "16",
        ],
    ];
    for args in cases {
        let o = futexhash(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    let o = futexhash(&["sim", "--profile", "this-vm", "-t", "2", "--lock", "ticket"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("ticket_spinner_ns"));
}

#[test]
fn oversubscribed_runs_are_time_sliced_and_say_so() {
    // 8 threads on the 2-CPU profile: four per CPU share it, so per-thread rates are
    // about a quarter of two threads' (no contention at 4096 slots).
    let o = futexhash(&[
        "sim",
        "--profile",
        "this-vm",
        "-t",
        "2,8",
        "-b",
        "4096",
        "--ops",
        "3000",
        "--warmup",
        "100",
        "--format",
        "json",
    ]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("time-sliced"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = |t: u64| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["threads"] == t)
            .unwrap()["ops_per_sec"]
            .as_f64()
            .unwrap()
    };
    let q = r(8) / r(2);
    assert!((q - 0.25).abs() < 0.03, "{q}");
}

#[test]
fn this_machine_profile_and_the_own_box_workflow() {
    // The documented workflow, end to end, on this machine.
    let prof = tmp("this-machine.toml");
    let o = futexhash(&[
        "sim",
        "profile",
        "--this-machine",
        "--out",
        prof.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&prof).unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(text.contains(&format!("cpus = {cpus}")), "{text}");
    assert!(text.contains("jhash2 = "), "{text}");
    let mine = tmp("mine.csv");
    let o = futexhash(&[
        "bench",
        "--backend",
        "kernel",
        "-t",
        "2",
        "-r",
        "1",
        "-b",
        "0,2,4,16,64,256,1024",
        "--format",
        "csv",
        "--output",
        mine.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fitted = tmp("mine.toml");
    let template =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines/this-vm-template.toml");
    let o = futexhash(&two_cpu_calibration(
        mine.to_str().unwrap(),
        &["--template", template.to_str().unwrap()],
        fitted.to_str().unwrap(),
    ));
    // On a busy machine (CI shares two CPUs) the measured rows can be so noisy that they
    // determine neither cost: then calibration must refuse, in one line saying so, and
    // write nothing. Which branch runs depends on the load; each checks its contract.
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("the rows do not determine outside_ns"),
            "{err}"
        );
        assert!(!fitted.exists());
        eprintln!("note: this machine's rows were too noisy to fit (busy machine): {err}");
        return;
    }
    let fitted_text = std::fs::read_to_string(&fitted).unwrap();
    // The development VM's hash costs are not copied into the fitted profile.
    assert!(
        !fitted_text.contains("[hash_ns]") || !fitted_text.contains("jhash2 ="),
        "{fitted_text}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("outside_ns"), "{err}");
    // And the fitted profile simulates.
    let v = json(&[
        "sim",
        "--profile",
        fitted.to_str().unwrap(),
        "-t",
        "2",
        "-b",
        "0,2",
        "--ops",
        "200",
        "--format",
        "json",
    ]);
    assert_eq!(v.len(), 2);
}

#[test]
fn calibration_refuses_rows_that_determine_nothing() {
    // Rows of one table size cannot separate the outside cost from the hand-off.
    let csv = tmp("same.csv");
    std::fs::write(&csv, "buckets,ops/sec\n16,100000\n16,100500\n").unwrap();
    let never = tmp("never.toml");
    assert_refused_in_one_line(&two_cpu_calibration(
        csv.to_str().unwrap(),
        &[],
        never.to_str().unwrap(),
    ));
}

#[test]
fn a_hand_off_the_rows_do_not_pin_is_not_fitted() {
    // The stored 2-thread sweep of the development VM: the 2-slot rate is the global
    // one within 0.3 % while each row's own noise is 6.6 % and 10.2 %, so nothing in the
    // rows can say what a hand-off costs. (The simulated rate steps in the hand-off:
    // a fit that judged determinacy by the local slope alone "found" 274.9 ± 4.8 ns.)
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines");
    let sweep = root.join("this-vm-kernel-t2.csv");
    let template = root.join("this-vm-template.toml");
    let out = tmp("stored-sweep.toml");
    let o = futexhash(&two_cpu_calibration(
        sweep.to_str().unwrap(),
        &["--template", template.to_str().unwrap()],
        out.to_str().unwrap(),
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("handoff_local_ns not determined"), "{err}");
    assert!(err.contains("kept the template's 50.0 ns"), "{err}");
}

#[test]
fn validate_cv_predicts_every_cell_without_its_table() {
    // Short runs: the roles, the intervals and the cell counts do not depend on the
    // length (the figures do; docs/sim.md shows the full-length run, checked below).
    let recs = json(&[
        "sim",
        "validate",
        "--cv",
        "--template",
        "seed-256cpu-template",
        "--ops",
        "150",
        "--warmup",
        "30",
        "--format",
        "json",
    ]);
    // 18 + 136 + 16 + 24 + 1 + 6 published seed cells, the 6 `-b` rows of each of the
    // two a734d9fca84e boxes (its table without the autosize rows), and every cell of the
    // 2024-11-01 machines' tables (E7: 18 + 4 × 18 + 8 × 17; E5: 15 + 2 × 15 + 8 × 14),
    // each once.
    assert_eq!(recs.len(), 213 + (18 + 72 + 136) + (15 + 30 + 112));
    let fit: Vec<(&str, u64)> = recs
        .iter()
        .filter(|r| r["role"] == "fit")
        .map(|r| (r["table"].as_str().unwrap(), r["x"].as_u64().unwrap()))
        .collect();
    // Only the held-out table's own calibration cells: rows 0 and 2 of the 240-thread
    // table (global hash, 4 slots), seed 003's two, each a734d9fca84e box's global hash
    // and 256 slots (`--rows 0,1`, as a user calibrates) and rows 0 and 2 of each
    // 2024-11-01 machine's all-node sweep (global hash, 4 slots); the pinning cells that set the SMT
    // slowdown are predicted with the generic figure when their table is held out.
    assert_eq!(
        fit,
        [
            ("buckets-240threads-256cpu.csv", 0),
            ("buckets-240threads-256cpu.csv", 4),
            ("seed003-2013-80core-threads.csv", 64),
            ("seed003-2013-80core-threads.csv", 32),
            ("a734d9fca84e-skl-2s-112", 0),
            ("a734d9fca84e-skl-2s-112", 256),
            ("a734d9fca84e-zen3-2s-256", 0),
            ("a734d9fca84e-zen3-2s-256", 256),
            ("sas2024-e7-8890v3-140threads.csv", 0),
            ("sas2024-e7-8890v3-140threads.csv", 4),
            ("sas2024-e5-2650-28threads.csv", 0),
            ("sas2024-e5-2650-28threads.csv", 4),
        ]
    );
    for r in &recs {
        assert!(r["role"] == "cv" || r["role"] == "fit", "{r}");
        let (lo, p, hi) = (
            r["lo"].as_f64().unwrap(),
            r["predicted"].as_f64().unwrap(),
            r["hi"].as_f64().unwrap(),
        );
        assert!(lo < p && p < hi, "{r}");
    }
    // Plain validate: the seed cells with roles fit/dev and no interval (the new boxes
    // are held-out units only: plain validate is the in-sample set).
    let plain = json(&[
        "sim",
        "validate",
        "--template",
        "seed-256cpu-template",
        "--ops",
        "150",
        "--warmup",
        "30",
        "--format",
        "json",
    ]);
    assert_eq!(plain.len(), 201);
    assert_eq!(plain.iter().filter(|r| r["role"] == "fit").count(), 6);
    assert!(
        plain
            .iter()
            .all(|r| (r["role"] == "fit") == (r["fitted"] == true))
    );
    assert!(plain.iter().all(|r| r.get("lo").is_none()));
    let o = futexhash(&["sim", "validate", "--cv", "--rows", "0,1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--rows '0,1'"));
}

#[test]
fn the_cv_summary_in_the_docs_is_the_template_run_s_output_and_the_quoted_error() {
    // docs/sim.md shows `sim validate --cv --template seed-256cpu-template --summary`
    // byte for byte, and sim::uncertainty::QUOTED (the error the report and every
    // interval use) is its "all tables" row: a model change fails here until both are
    // regenerated from a run.
    let o = futexhash(&[
        "sim",
        "validate",
        "--cv",
        "--template",
        "data/machines/seed-256cpu-template.toml",
        "--summary",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sim.md")).unwrap();
    assert!(
        docs.contains(out.trim()),
        "docs/sim.md does not hold this output:\n{out}"
    );
    let row = |label: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("a '{label}' row"))
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let q = futexhash::sim::uncertainty::quoted_error();
    for (label, fig, fitted) in [
        ("all tables", q.all, 12),
        ("seed tables (the model was built on them)", q.seed, 4),
        ("boxes not used to build the model", q.new_boxes, 8),
    ] {
        let cells = row(label);
        let num = |i: usize| cells[i].trim_end_matches(" %").parse::<f64>().unwrap();
        let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
        assert_eq!(cells[2], format!("{} ({fitted})", fig.n_cells), "{label}");
        assert_eq!(num(3), r3(fig.median), "{label}");
        assert_eq!(num(4), r3(fig.p90), "{label}");
        assert_eq!(num(5), r3(fig.mean_signed), "{label}");
        assert_eq!(num(6), r3(fig.rms), "{label}");
        assert_eq!(num(7), (fig.coverage * 100.0).round(), "{label}");
        assert_eq!(num(8), r3(fig.median_width), "{label}");
    }
    let sd = out
        .lines()
        .find_map(|l| l.strip_prefix("model error of an unseen machine"))
        .and_then(|l| l.rsplit(": ").next())
        .expect("a model-error line");
    assert_eq!(sd.trim(), format!("{:.3}", q.model_sd));
}

#[test]
fn kernel_lists_carry_the_preset_and_auto_is_the_global_hash_without_a_private_one() {
    // 6.16 as released (9a57c3773152: the private hash depends on BROKEN): `-b auto` is
    // its global hash, per node: 2 × roundup(256 × 256 / 2) = 65536 buckets in all.
    let short = ["--ops", "200", "--warmup", "20", "--format", "json"];
    let mut args = vec![
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "8",
        "--kernel",
        "6.16,6.15",
        "-b",
        "auto,0",
    ];
    args.extend(short);
    let v = json(&args);
    assert_eq!(v.len(), 4);
    for r in &v {
        assert_eq!(r["table"], "global", "{r}");
        assert_eq!(r["buckets"], 0, "{r}");
    }
    assert_eq!(v[0]["kernel"], "6.16");
    assert_eq!(v[0]["slots"], "auto");
    assert_eq!(v[3]["kernel"], "6.15");
    // Without --kernel the record says so with an empty name.
    let mut args = vec!["sim", "--profile", "seed-256cpu", "-t", "8", "-b", "16"];
    args.extend(short);
    assert_eq!(json(&args)[0]["kernel"], "");
    // A private size on a kernel without a private hash is refused, naming both.
    let o = futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "--kernel",
        "6.18,6.15",
        "-b",
        "auto,0,256",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("256") && err.contains("6.15"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn the_6_16_rc_shared_reference_loses_three_quarters_against_6_17() {
    // The kernel test robot measured -94.6 % on 7c4f75a21f63 (a fixture, not a
    // parameter): the goal is a loss of at least 75 % at 240 threads, -b auto, on the
    // 256-CPU profile. Two kernels print the A/B table with %change.
    let base = [
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "240",
        "--kernel",
        "6.17,6.16-rc",
        "-b",
        "auto",
        "--ops",
        "300",
        "--warmup",
        "50",
    ];
    let mut args = base.to_vec();
    args.extend(["--format", "json"]);
    let v = json(&args);
    let rate = |k: &str| {
        v.iter().find(|r| r["kernel"] == k).unwrap()["ops_per_sec"]
            .as_f64()
            .unwrap()
    };
    assert!(rate("6.16-rc") < 0.25 * rate("6.17"), "{v:?}");
    let o = futexhash(&base);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("6.17") && l.ends_with("6.16-rc")),
        "{text}"
    );
    assert!(lines.iter().any(|l| l.contains("%change")), "{text}");
    let row = lines
        .iter()
        .find(|l| l.contains("t=240 b=auto"))
        .expect("a row for the configuration");
    // The %change column: a loss (a minus sign) of more than 75 %.
    let change: f64 = row
        .split_whitespace()
        .find(|w| w.ends_with('%') && w.starts_with('-'))
        .and_then(|w| w.trim_end_matches('%').parse().ok())
        .expect("a %change");
    assert!(change < -75.0, "{row}");
}

#[test]
fn the_skylake_profile_is_built_in_and_built_from_its_line_transfers() {
    // Its hand-offs are 3 line transfers each, local and across sockets, and its
    // transfers the means of the two cited Cascade Lake matrices (46.878/48.087 and
    // 134.139/141.233 ns, by hand: 47.4825 and 137.686).
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines/skl-2s-112.toml"),
    )
    .unwrap();
    let p: toml::Value = toml::from_str(&text).unwrap();
    let f = |k: &str| p[k].as_float().unwrap();
    assert!((f("line_miss_ns") - (46.878 + 48.087) / 2.0).abs() < 0.001);
    assert!((f("line_miss_remote_ns") - (134.139 + 141.233) / 2.0).abs() < 0.001);
    assert!((f("handoff_local_ns") - 3.0 * f("line_miss_ns")).abs() < 0.01);
    assert!((f("handoff_remote_ns") - 3.0 * f("line_miss_remote_ns")).abs() < 0.01);
    assert_eq!(p["cpus"].as_integer(), Some(112));
    assert_eq!(p["nodes"].as_integer(), Some(2));
    assert_eq!(p["threads_per_core"].as_integer(), Some(2));
    let v = json(&[
        "sim",
        "--profile",
        "skl-2s-112",
        "-t",
        "112",
        "-b",
        "0",
        "--ops",
        "200",
        "--warmup",
        "20",
        "--format",
        "json",
    ]);
    assert_eq!(v[0]["hash_ns_source"], "profile");
    assert!(v[0]["ops_per_sec"].as_f64().unwrap() > 0.0);
}

#[test]
fn validate_cv_without_the_new_boxes_file_scores_the_seed_tables_and_says_so() {
    // A --data directory of the seed tables only (a user's copy from before the new
    // boxes' file existed): the new boxes are left out with a note, not a failure, and no
    // empty row reads as a perfect score.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/published");
    let dir = std::env::temp_dir().join(format!("fh-cv-seed-only-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("a734d9fca84e") && !name.starts_with("sas2024") {
            std::fs::copy(&p, dir.join(&name)).unwrap();
        }
    }
    let o = futexhash(&[
        "sim",
        "validate",
        "--cv",
        "--data",
        dir.to_str().unwrap(),
        "--template",
        "seed-256cpu-template",
        "--ops",
        "60",
        "--warmup",
        "10",
        "--summary",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains(
            "are not scored: a734d9fca84e-perf-bench-futex-hash.csv is not in the data directory"
        ),
        "{out}"
    );
    assert!(!out.contains("| a734d9fca84e"), "{out}");
    for machine in ["sas2024-e7-8890v3", "sas2024-e5-2650"] {
        assert!(out.contains(&format!("{machine} is not scored")), "{out}");
        assert!(!out.contains(&format!("| {machine}")), "{out}");
    }
    assert!(
        !out.contains("| boxes not used to build the model"),
        "{out}"
    );
    assert!(out.contains("| all tables | 197 (4) |"), "{out}");
}

/// Reads `key` of a profile's `[calibration_runs]` table, or of its top level.
fn profile_number(path: &Path, key: &str) -> Option<f64> {
    let v: toml::Value = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.get(key)
        .or_else(|| v.get("calibration_runs").and_then(|t| t.get(key)))
        .and_then(|x| x.as_float().or_else(|| x.as_integer().map(|i| i as f64)))
}

/// `sim calibrate --runs` fits the mean of the runs and carries the spread of a refit on
/// each run alone: checked against three separate calibrations, one per run column, and
/// one on the mean column, with the standard error computed here from their costs.
#[test]
fn calibrate_runs_carries_the_spread_of_one_fit_per_run() {
    let csv = tmp("runs.csv");
    // Three runs of a 32-thread box; the 2-slot row moves by ±15 % between runs.
    let runs = [
        [1_480_000.0, 34_000.0],
        [1_500_000.0, 40_000.0],
        [1_530_000.0, 46_000.0],
    ];
    let mean = |i: usize| runs.iter().map(|r| r[i]).sum::<f64>() / 3.0;
    std::fs::write(
        &csv,
        format!(
            "buckets,run1,run2,run3,mean\n0,{},{},{},{}\n2,{},{},{},{}\n",
            runs[0][0],
            runs[1][0],
            runs[2][0],
            mean(0),
            runs[0][1],
            runs[1][1],
            runs[2][1],
            mean(1)
        ),
    )
    .unwrap();
    let fit = |extra: &[&str], out: &Path| {
        let mut args = vec![
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
            // A template that states the hash cost: every fit here uses the same one
            // (a timed cost would differ between the separate calibrations).
            "--template",
            "data/machines/seed-256cpu-template.toml",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = futexhash(&args);
        assert!(
            o.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let with_runs = tmp("with-runs.toml");
    let said = fit(&["--runs", "run1,run2,run3"], &with_runs);
    assert!(said.contains("over 3 runs"), "{said}");
    let on_mean = tmp("on-mean.toml");
    fit(&["--column", "mean"], &on_mean);
    for key in ["outside_ns", "handoff_local_ns"] {
        let (a, b) = (
            profile_number(&with_runs, key).unwrap(),
            profile_number(&on_mean, key).unwrap(),
        );
        assert!(
            (a / b - 1.0).abs() < 1e-9,
            "{key}: runs {a} vs mean column {b}"
        );
    }
    let mut outside = Vec::new();
    let mut handoff = Vec::new();
    for run in ["run1", "run2", "run3"] {
        let p = tmp(&format!("{run}.toml"));
        fit(&["--column", run], &p);
        assert_eq!(profile_number(&p, "runs"), None, "one run has no spread");
        outside.push(profile_number(&p, "outside_ns").unwrap().ln());
        handoff.push(profile_number(&p, "handoff_local_ns").unwrap().ln());
    }
    // Standard error of the mean fit: sample sd (n − 1) of the logs over √n.
    let se = |l: &[f64]| {
        let m = l.iter().sum::<f64>() / 3.0;
        (l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt() / 3f64.sqrt()
    };
    assert_eq!(profile_number(&with_runs, "runs"), Some(3.0));
    for (key, want) in [
        ("outside_se_ln", se(&outside)),
        ("handoff_se_ln", se(&handoff)),
    ] {
        let got = profile_number(&with_runs, key).unwrap();
        assert!((got - want).abs() < 1e-9, "{key}: {got} vs {want}");
    }
    assert!(
        se(&handoff) > 0.01,
        "the runs must move the hand-off: {handoff:?}"
    );
    // The intervals of `sim` name the profile's own runs.
    let o = futexhash(&[
        "sim",
        "--profile",
        with_runs.to_str().unwrap(),
        "-t",
        "32",
        "-f",
        "128",
        "-b",
        "2",
    ]);
    // (Comments wrap at 100 columns: read them unwrapped.)
    let out = String::from_utf8_lossy(&o.stdout).replace("\n#   ", " ");
    assert!(out.contains("this profile's 3 calibration runs"), "{out}");
    let o = futexhash(&[
        "sim",
        "--profile",
        on_mean.to_str().unwrap(),
        "-t",
        "32",
        "-f",
        "128",
        "-b",
        "2",
    ]);
    let out = String::from_utf8_lossy(&o.stdout).replace("\n#   ", " ");
    assert!(
        out.contains("the seed box's three runs: this profile has none"),
        "{out}"
    );
}

#[test]
fn calibrate_runs_bad_lists_are_refused_in_one_line() {
    let csv = tmp("runs-bad.csv");
    std::fs::write(
        &csv,
        "buckets,run1,run2\n0,1500000,1490000\n2,40000,41000\n",
    )
    .unwrap();
    let out = tmp("never.toml");
    for runs in ["run1", "run1,run1", "run1,nope", ""] {
        let args = two_cpu_calibration(
            csv.to_str().unwrap(),
            &["--runs", runs],
            out.to_str().unwrap(),
        );
        assert_refused_in_one_line(&args);
        let err = String::from_utf8_lossy(&futexhash(&args).stderr).into_owned();
        assert!(err.contains("--runs"), "{runs}: {err}");
    }
    assert_refused_in_one_line(&two_cpu_calibration(
        csv.to_str().unwrap(),
        &["--runs", "all", "--column", "run1"],
        out.to_str().unwrap(),
    ));
    assert!(!out.exists());
}

/// A cost the rows do not determine keeps the template's value in every refit, so its
/// spread over the runs (0 here) measures nothing: the profile must not carry it.
#[test]
fn calibrate_runs_spread_of_an_undetermined_cost_is_not_used() {
    // This VM's stored 2-thread kernel rows (global hash, 2 slots), as two runs ±3 %: two
    // threads on two slots hardly ever meet, so no row says what a hand-off costs.
    let csv = tmp("vm-runs.csv");
    let (g, p) = (2_977_698.9, 2_986_014.2);
    std::fs::write(
        &csv,
        format!(
            "buckets,run1,run2\n0,{},{}\n2,{},{}\n",
            g * 0.97,
            g * 1.03,
            p * 1.03,
            p * 0.97
        ),
    )
    .unwrap();
    let out = tmp("vm-runs.toml");
    let template =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines/this-vm-template.toml");
    let o = futexhash(&two_cpu_calibration(
        csv.to_str().unwrap(),
        &["--runs", "all", "--template", template.to_str().unwrap()],
        out.to_str().unwrap(),
    ));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("handoff_local_ns not determined"), "{err}");
    assert!(
        err.contains("the runs' spread is not used: the hand-off is not determined"),
        "{err}"
    );
    assert_eq!(
        profile_number(&out, "runs"),
        None,
        "{}",
        std::fs::read_to_string(&out).unwrap()
    );
    // A header that names two runs alike is refused, naming the column.
    std::fs::write(
        &csv,
        "buckets,run1,run1\n0,1500000,1490000\n2,40000,41000\n",
    )
    .unwrap();
    let args = two_cpu_calibration(
        csv.to_str().unwrap(),
        &["--runs", "all"],
        out.to_str().unwrap(),
    );
    assert_refused_in_one_line(&args);
    let err = String::from_utf8_lossy(&futexhash(&args).stderr).into_owned();
    assert!(
        err.contains("column 3 of") && err.contains("'run1'"),
        "{err}"
    );
}

/// Defect: `sim --help`'s closing section ("When not to trust the simulator", built from
/// the stored cross-validation figures) printed lines of up to 567 columns. Every line of
/// it fits 100 columns (a mail's), and the figures are still there, each as the stored
/// QUOTED has it (which the test above recomputes from a run).
#[test]
fn sim_help_s_trust_section_fits_100_columns_and_carries_the_quoted_figures() {
    let o = futexhash(&["sim", "--help"]);
    assert!(o.status.success());
    let help = String::from_utf8(o.stdout).unwrap();
    let at = help
        .find("When not to trust the simulator")
        .expect("the trust section");
    let section = &help[at..];
    for line in section.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // Each item starts "- "; its continuation lines are indented two spaces.
    // Six: out of sample, shown/weak, not shown, and two exams failed, the intervals.
    let items = section.matches("\n- ").count();
    assert_eq!(items, 6, "{section}");
    let joined = section.replace("\n  ", " ");
    let q = futexhash::sim::uncertainty::quoted_error();
    for want in [
        format!(
            "the median |ln(pred/pub)| is {:.3} and the p90 {:.3} over {} cells (mean signed {:+.3})",
            q.all.median, q.all.p90, q.all.n_cells, q.all.mean_signed
        ),
        format!(
            "the 80 % intervals held {:.0} % of them, median width ln(hi/lo) {:.3}",
            100.0 * q.all.coverage,
            q.all.median_width
        ),
        format!(
            "median {:.3}, p90 {:.3}, {:.0} % inside, over {} cells",
            q.new_boxes.median,
            q.new_boxes.p90,
            100.0 * q.new_boxes.coverage,
            q.new_boxes.n_cells
        ),
        format!(
            "(sd {:.3} in ln; with the shared reference on a private table, the {:.3} its exam measured",
            q.model_sd,
            futexhash::sim::uncertainty::SHARED_REFERENCE_SD
        ),
    ] {
        assert!(joined.contains(&want), "'{want}' not in:\n{section}");
    }
}

/// Defect: `sim --help` said two configurations are "not told apart" by their ratio's
/// interval, the model error left out; the kernel A/B table's "not told apart" is the
/// widest change the two rates' intervals allow, and each rate's interval carries the model
/// error (src/cli/sim_ab.rs, docs/sim.md "Kernel versions and patches"). The help says
/// which comparison is which.
#[test]
fn sim_help_says_which_not_told_apart_carries_the_model_error() {
    let o = futexhash(&["sim", "--help"]);
    assert!(o.status.success());
    let help = String::from_utf8(o.stdout).unwrap().replace("\n  ", " ");
    for want in [
        "Two hashers of one run are compared by their ratio's interval from the replications \
         alone (common random numbers; the model error is taken to cancel)",
        "Two --kernel presets (the A/B table) are compared by the widest change their two \
         rates' intervals allow, model error included",
    ] {
        assert!(help.contains(want), "'{want}' not in:\n{help}");
    }
}

/// docs/sim.md, "A second exam": the committed predictions are what `sim` prints from the
/// shipped profiles (all eight runs, every record; the shared reference's intervals
/// widened since), and the transcription holds
/// every rate of the v11 message and its reply, typed from them ("-b128 Averaged
/// 141.394 operations/sec", ...; the message writes '.' between thousands).
#[test]
fn the_second_exam_s_predictions_are_what_sim_prints_and_its_figures_the_message_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let published =
        std::fs::read_to_string(root.join("data/published/sas2025-v11-reference-count.csv"))
            .unwrap();
    let message: [(&str, &str, &str); 19] = [
        ("e5-2650-2s", "shared", "1487148"),
        ("e5-2650-2s", "private", "2192405"),
        ("e5-2650-2s", "shared", "1326342"),
        ("e5-2650-2s", "-b128", "141394"),
        ("e5-2650-2s", "-Ib128", "851490"),
        ("e5-2650-2s", "-b8192", "131321"),
        ("e5-2650-2s", "-Ib8192", "1923077"),
        ("e7-8890v3-4s", "shared", "1810936"),
        ("e7-8890v3-4s", "private", "2505801"),
        ("e7-8890v3-4s", "shared", "1589002"),
        ("e7-8890v3-4s", "-b1024", "42410"),
        ("e7-8890v3-4s", "-Ib1024", "740638"),
        ("e7-8890v3-4s", "-b65536", "48811"),
        ("e7-8890v3-4s", "-Ib65536", "1963165"),
        ("epyc7713-2s", "-t 250", "25393"),
        ("epyc7713-2s", "-t 250 -b 1024 -I", "1645327"),
        ("epyc7713-2s", "-t 250 -b 65536", "25445"),
        ("epyc7713-2s", "-t 250 -b 65536 -I", "1733745"),
        ("epyc7713-2s", "-t 250 -b 0", "1745242"),
    ];
    let rows: Vec<Vec<&str>> = published
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), message.len());
    for (row, (machine, option, rate)) in rows.iter().zip(message) {
        assert_eq!((row[0], row[2], row[6]), (machine, option, rate), "{row:?}");
    }
    let machines = root.join("data/machines");
    let runs: [(&str, &str, &str, &str, &[&str]); 8] = [
        (
            "e5-shared.csv",
            "e5-2650-2s",
            "32",
            "128,8192",
            &["--kernel", "6.16-rc"],
        ),
        (
            "e5-none.csv",
            "e5-2650-2s",
            "32",
            "128,8192",
            &["--kernel", "6.16-rc", "--refcount", "none"],
        ),
        (
            "e5-before.csv",
            "e5-2650-2s",
            "32",
            "0",
            &["--kernel", "6.15"],
        ),
        (
            "e7-shared.csv",
            "e7-8890v3-4s",
            "144",
            "1024,65536",
            &["--kernel", "6.16-rc"],
        ),
        (
            "e7-none.csv",
            "e7-8890v3-4s",
            "144",
            "1024,65536",
            &["--kernel", "6.16-rc", "--refcount", "none"],
        ),
        (
            "e7-before.csv",
            "e7-8890v3-4s",
            "144",
            "0",
            &["--kernel", "6.15"],
        ),
        (
            "zen3-shared.csv",
            "zen3-2s-256",
            "250",
            "1024,65536,0",
            &["--kernel", "6.16-rc"],
        ),
        (
            "zen3-none.csv",
            "zen3-2s-256",
            "250",
            "1024,65536",
            &["--kernel", "6.16-rc", "--refcount", "none"],
        ),
    ];
    for (file, profile, threads, slots, extra) in runs {
        let profile = machines.join(format!("{profile}.toml"));
        let mut args = vec![
            "sim",
            "--profile",
            profile.to_str().unwrap(),
            "-t",
            threads,
            "-b",
            slots,
            "--format",
            "csv",
        ];
        args.extend_from_slice(extra);
        let o = futexhash(&args);
        assert!(o.status.success(), "{args:?}");
        let committed =
            std::fs::read(root.join("data/predictions/v11-reference-count").join(file)).unwrap();
        if !file.ends_with("-shared.csv") {
            // Byte for byte: the committed file is what `--output` wrote, the same records.
            assert_eq!(
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&committed),
                "{file}"
            );
            continue;
        }
        // With the shared reference a private table's records now carry the error its
        // exam measured (uncertainty::SHARED_REFERENCE_SD) in place of the model error of
        // an unseen machine: every field as committed but the interval, whose log sd is
        // the committed one with 0.179² swapped for that error's square (the replications'
        // spread and the profile's misfit unchanged); the global hash takes no reference
        // and keeps its committed interval.
        let read = |bytes: &[u8]| {
            let mut rd = csv::Reader::from_reader(bytes);
            let header = rd.headers().unwrap().clone();
            let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
            (header, rows)
        };
        let (header, printed) = read(&o.stdout);
        let (committed_header, committed) = read(&committed);
        assert_eq!(header, committed_header, "{file}");
        let at = |name: &str| header.iter().position(|h| h == name).unwrap();
        let (lo, hi) = (at("ops_per_sec_lo"), at("ops_per_sec_hi"));
        let z = futexhash::sim::uncertainty::Z80;
        let shared_sd = futexhash::sim::uncertainty::SHARED_REFERENCE_SD;
        let unseen_sd = futexhash::sim::uncertainty::quoted_error().model_sd;
        assert_eq!(printed.len(), committed.len(), "{file}");
        for (p, c) in printed.iter().zip(&committed) {
            for (k, (pf, cf)) in p.iter().zip(c.iter()).enumerate() {
                if (k != lo && k != hi) || &c[at("buckets")] == "0" {
                    assert_eq!(pf, cf, "{file}: column {}", &header[k]);
                }
            }
            let num = |r: &csv::StringRecord, k: usize| -> f64 { r[k].parse().unwrap() };
            let rate = num(c, at("ops_per_sec"));
            let committed_sd = (num(c, hi) / rate).ln() / z;
            let want = (committed_sd.powi(2) - unseen_sd.powi(2) + shared_sd.powi(2)).sqrt();
            let want = if &c[at("buckets")] == "0" {
                committed_sd
            } else {
                want
            };
            for (end, sign) in [(hi, 1.0), (lo, -1.0)] {
                let got = sign * (num(p, end) / rate).ln() / z;
                assert!((got - want).abs() < 1e-9, "{file}: {got} against {want}");
            }
        }
    }
}

/// A run with the shared reference count says on stderr that the axis failed its exam
/// (docs/sim.md, "A second exam"), whether it came from `--refcount shared` or the
/// 6.16-rc preset; a run without it does not.
#[test]
fn a_shared_reference_run_says_its_exam_failed() {
    let note = "failed its out-of-sample exam";
    let run = |slots: &str, extra: &[&str]| {
        let mut args = vec![
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "4",
            "-b",
            slots,
            "--ops",
            "50",
            "--warmup",
            "10",
            "--format",
            "csv",
        ];
        args.extend_from_slice(extra);
        let o = futexhash(&args);
        assert!(o.status.success(), "{extra:?}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(run("16", &["--refcount", "shared"]).contains(note));
    assert!(run("0,16", &["--kernel", "6.17,6.16-rc"]).contains(note));
    // The global hash takes no reference: nothing to warn of.
    assert!(!run("0", &["--refcount", "shared"]).contains(note));
    assert!(!run("16", &["--refcount", "percpu"]).contains(note));
    assert!(!run("16", &[]).contains(note));
}

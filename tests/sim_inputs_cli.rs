//! Bad input to `sim` and `sim calibrate` found by an independent trial: each is refused
//! before any work (exit 2, one line naming the value and what is allowed), no input file
//! is destroyed, and every `sim` record carries the fields docs/cli.md promises.

mod common;
use common::futexhash;

use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fh-sim-inputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The command exits 2 with exactly one line on stderr and nothing on stdout; the line.
fn refused(args: &[&str]) -> String {
    let o = futexhash(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(
        o.stdout.is_empty(),
        "{args:?} printed before refusing: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    err
}

// A. --plot with no private table -------------------------------------------------------

#[test]
fn plot_without_a_private_table_is_refused_before_the_run() {
    let plot = tmp("global-only.svg");
    let out = tmp("global-only.txt");
    // Every -b is the global hash: nothing for the plot's slots axis, known from the flags.
    let err = refused(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "30,60,120,240",
        "--algo",
        "seed",
        "-b",
        "0",
        "--plot",
        s(&plot),
        "--output",
        s(&out),
    ]);
    assert!(err.contains(s(&plot)) && err.contains("-b"), "{err}");
    assert!(!plot.exists() && !out.exists());
    // Kernels without a private hash: their default -b (and `auto`) is the global hash.
    for b in [None, Some("auto"), Some("0,auto")] {
        let mut args = vec![
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "8",
            "--kernel",
            "6.16,6.15",
            "--plot",
            s(&plot),
            "--output",
            s(&out),
        ];
        if let Some(b) = b {
            args.extend(["-b", b]);
        }
        let err = refused(&args);
        assert!(err.contains(s(&plot)), "{err}");
        assert!(!plot.exists() && !out.exists());
    }
    // One preset with a private hash among them: its `auto` is a private table, plotted.
    let o = futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "4",
        "--kernel",
        "6.15,6.17",
        "-b",
        "auto",
        "--ops",
        "50",
        "--warmup",
        "10",
        "--plot",
        s(&plot),
        "--output",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(plot.exists() && out.exists());
}

// B. Rows no model can reach at their table size, and a fit stuck at its floor ----------

/// The seed's three runs of the 240-thread table, with run2's 4-slot cell replaced.
fn runs_with_4_slot_run2(rate: u64) -> PathBuf {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/published/buckets-240threads-256cpu-runs.csv"),
    )
    .unwrap();
    assert!(text.contains("\n4,16911,24145,23941\n"), "{text}");
    let p = tmp(&format!("runs-4-{rate}.csv"));
    std::fs::write(
        &p,
        text.replace(
            "\n4,16911,24145,23941\n",
            &format!("\n4,16911,{rate},23941\n"),
        ),
    )
    .unwrap();
    p
}

fn seed_calibration<'a>(from: &'a str, extra: &[&'a str], out: &'a str) -> Vec<&'a str> {
    let mut a = vec![
        "sim",
        "calibrate",
        "--from",
        from,
        "--threads",
        "240",
        "--cpus",
        "256",
        "--nodes",
        "2",
        "--template",
        "data/machines/seed-256cpu-template.toml",
        "--out",
        out,
    ];
    a.extend_from_slice(extra);
    a
}

// 4 slots serve at most 4 of 240 threads at a time, each operation holding its bucket lock
// for at least the template's hold_ns = 100 ns: 4 / 240 × 1e9 / 100 = 166,667 ops/sec per
// thread at most (data/machines/seed-256cpu-template.toml states hold_ns = 100.0).
const FOUR_SLOT_BOUND: &str = "166667";

#[test]
fn calibrate_refuses_a_row_beyond_what_its_slots_can_serve() {
    let out = tmp("never-b.toml");
    // The mean of the runs: (16911 + 5000000 + 23941) / 3 = 1680284 per thread.
    let csv = runs_with_4_slot_run2(5_000_000);
    let err = refused(&seed_calibration(
        s(&csv),
        &["--runs", "all", "--rows", "0,2"],
        s(&out),
    ));
    assert!(
        err.contains("row 2") && err.contains("1680284") && err.contains(FOUR_SLOT_BOUND),
        "{err}"
    );
    assert!(!out.exists());
    // A mean within reach but one run beyond it: (16911 + 400000 + 23941) / 3 = 146951,
    // run2's 400000 is not.
    let csv = runs_with_4_slot_run2(400_000);
    let err = refused(&seed_calibration(
        s(&csv),
        &["--runs", "all", "--rows", "0,2"],
        s(&out),
    ));
    assert!(
        err.contains("row 2")
            && err.contains("run2")
            && err.contains("400000")
            && err.contains(FOUR_SLOT_BOUND),
        "{err}"
    );
    assert!(!out.exists());
    // Without --runs: the column's own value.
    let csv = tmp("one-run.csv");
    std::fs::write(&csv, "buckets,rate\n0,1868129\n4,200000\n").unwrap();
    let err = refused(&seed_calibration(s(&csv), &["--rows", "0,1"], s(&out)));
    assert!(
        err.contains("row 1") && err.contains("200000") && err.contains(FOUR_SLOT_BOUND),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn calibrate_refuses_a_fit_stuck_at_its_floor() {
    // The global row at 9.5 M ops/sec per thread is within the CPUs' reach (256 CPUs for 240
    // threads, 1e9 / 100 ns = 1e7) but not the template's: its hold_ns (100) and jhash2
    // (6.622 ns) alone take 106.6 ns an operation, 9.38 M per second, so outside_ns would
    // have to be below zero. No cost of this template reproduces the row; the fit must not
    // pass its floor off as a value nor keep the template's and write a profile that misses
    // the row by more than 100 %.
    let out = tmp("never-floor.toml");
    let csv = tmp("too-fast-global.csv");
    std::fs::write(&csv, "buckets,rate\n0,9500000\n4,24000\n").unwrap();
    let err = refused(&seed_calibration(s(&csv), &["--rows", "0,1"], s(&out)));
    assert!(err.contains("outside_ns") && err.contains("floor"), "{err}");
    assert!(!out.exists());
}

// C. --out naming an input --------------------------------------------------------------

#[test]
fn calibrate_out_may_not_name_its_own_input() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines");
    let from = tmp("r2.csv");
    let template = tmp("t2.toml");
    std::fs::copy(root.join("this-vm-kernel-t2.csv"), &from).unwrap();
    std::fs::copy(root.join("this-vm-template.toml"), &template).unwrap();
    let from_text = std::fs::read(&from).unwrap();
    let template_text = std::fs::read(&template).unwrap();
    let link = tmp("link-to-r2.csv");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&from, &link).unwrap();
    let dotted = from.parent().unwrap().join(".").join("r2.csv");
    let calibration = |out: &Path| {
        vec![
            "sim".to_string(),
            "calibrate".into(),
            "--from".into(),
            s(&from).into(),
            "--rows".into(),
            "0,1".into(),
            "--threads".into(),
            "2".into(),
            "--cpus".into(),
            "2".into(),
            "--template".into(),
            s(&template).into(),
            "--out".into(),
            s(out).into(),
        ]
    };
    for out in [&from, &link, &dotted, &template] {
        let args = calibration(out);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = refused(&args);
        assert!(err.contains(s(out)), "{err}");
        assert!(
            err.contains("--from") || err.contains("--template"),
            "{err}"
        );
        assert_eq!(std::fs::read(&from).unwrap(), from_text);
        assert_eq!(std::fs::read(&template).unwrap(), template_text);
        assert!(link.is_symlink());
    }
}

// D. A profile name with control characters, and `machine` without quoting -------------

/// A valid profile file named `name` (TOML basic-string escapes allowed).
fn profile_named(file: &str, name_toml: &str) -> PathBuf {
    let p = tmp(file);
    std::fs::write(
        &p,
        format!(
            "name = \"{name_toml}\"\ncpus = 4\nnodes = 1\noutside_ns = 200.0\nhold_ns = 50.0\n\
             handoff_local_ns = 100.0\nhandoff_remote_ns = 100.0\n\n[hash_ns]\njhash2 = 5.0\n"
        ),
    )
    .unwrap();
    p
}

#[test]
fn profile_names_with_control_characters_are_refused() {
    for (i, (esc, code)) in [
        ("\\n", "U+000A"),
        ("\\t", "U+0009"),
        ("\\r", "U+000D"),
        ("\\u001B", "U+001B"),
        ("\\u007F", "U+007F"),
    ]
    .into_iter()
    .enumerate()
    {
        let p = profile_named(&format!("ctl{i}.toml"), &format!("box{esc}two"));
        let err = refused(&[
            "sim",
            "--profile",
            s(&p),
            "-t",
            "2",
            "-b",
            "16",
            "--ops",
            "20",
        ]);
        assert!(err.contains("name") && err.contains(code), "{esc}: {err}");
    }
}

#[test]
fn machine_field_needs_no_csv_quoting_whatever_the_profile_name() {
    let p = profile_named("quoted.toml", "box \\\"A\\\", 4 CPUs");
    for workload in ["hash", "lock"] {
        let mut args = vec![
            "sim",
            "--profile",
            s(&p),
            "--workload",
            workload,
            "-t",
            "2",
            "--ops",
            "20",
            "--warmup",
            "5",
            "--format",
            "csv",
        ];
        if workload == "hash" {
            args.extend(["-b", "16"]);
        }
        let o = futexhash(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let col = rd
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "machine")
            .unwrap();
        let rec = rd.records().next().unwrap().unwrap();
        let machine = &rec[col];
        assert!(
            !machine.contains(',') && !machine.contains('"') && machine.contains("box"),
            "{machine}"
        );
        // Written as it is: no quotes around it in the file.
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .contains(&format!(",{machine},")),
            "{text}"
        );
    }
}

// E. An input far larger than any measured table ----------------------------------------

#[test]
fn calibrate_refuses_a_huge_input_before_reading_it() {
    let csv = tmp("huge.csv");
    let f = std::fs::File::create(&csv).unwrap();
    std::io::Write::write_all(&mut &f, b"buckets,rate\n0,1000\n16,2000\n").unwrap();
    // 17 MiB, sparse: reading it would take the memory, the check must not.
    f.set_len(17 << 20).unwrap();
    let out = tmp("never-huge.toml");
    let err = refused(&[
        "sim",
        "calibrate",
        "--from",
        s(&csv),
        "--rows",
        "0,1",
        "--threads",
        "2",
        "--cpus",
        "2",
        "--out",
        s(&out),
    ]);
    assert!(
        err.contains(s(&csv)) && err.contains("17825792") && err.contains("16 MiB"),
        "{err}"
    );
    assert!(!out.exists());
}

// F. --ops beyond the simulator's clock ------------------------------------------------

#[test]
fn ops_beyond_the_clock_name_ops_and_the_most_allowed() {
    let err = refused(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "240",
        "-b",
        "0",
        "--ops",
        "4294967295",
    ]);
    assert!(
        err.contains("--ops 4294967295") && err.contains("at most --ops"),
        "{err}"
    );
    // At 2 threads the clock holds it, but the work limit does not (docs/sim.md, "How long
    // a run may be"): 10^10 operations in all over 2 threads × 3 replications is
    // 1666666666 per thread, warm-up included, so at most --ops 1666666466 after the
    // default 200 of warm-up. (The limit replaced the 32-bit count per thread, which
    // allowed --ops 4294967095 here.)
    let err = refused(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "2",
        "-b",
        "0",
        "--ops",
        "4294967295",
    ]);
    assert!(
        err.contains("--ops 4294967295") && err.contains("at most --ops 1666666466"),
        "{err}"
    );
    // A profile whose only cost is 1.5e8 ns outside the lock, 1024 threads on 1024 CPUs:
    // the clock holds picoseconds in 64 - log2(1024) = 54 bits (docs/cli.md), and the
    // serialised bound of one operation of every thread is (1024 × 1.5e8 ns + one 1 µs
    // slice) = 1.536e14 ps, so (2^54 - 1) / 1.536e14 = 117.28: 117 operations per thread
    // fit, warm-up included.
    let p = tmp("slow.toml");
    std::fs::write(
        &p,
        "name = \"slow\"\ncpus = 1024\nnodes = 1\noutside_ns = 1.5e8\nhold_ns = 0.0\n\
         handoff_local_ns = 0.0\nhandoff_remote_ns = 0.0\natomic_ns = 0.0\n\
         timeslice_ns = 1000.0\n\n[hash_ns]\njhash2 = 0.0\n",
    )
    .unwrap();
    let run = |ops: &str| {
        futexhash(&[
            "sim",
            "--profile",
            s(&p),
            "-t",
            "1024",
            "-b",
            "0",
            "--warmup",
            "17",
            "--ops",
            ops,
            "--format",
            "csv",
        ])
    };
    let o = run("101");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--ops 101") && err.contains("at most --ops 100"),
        "{err}"
    );
    let o = run("100");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

// G. Lock records carry the sim fields --------------------------------------------------

#[test]
fn lock_records_carry_hash_ns_profile_and_kernel() {
    // The template states jhash2 = 6.622 ns; its name is its file's `name`.
    let name = "seed thread 256-CPU 2-node box (template, hash costs of the development VM)";
    let base = [
        "sim",
        "--profile",
        "data/machines/seed-256cpu-template.toml",
        "--workload",
        "lock",
        "-t",
        "2",
        "--ops",
        "100",
        "--warmup",
        "10",
        "--format",
    ];
    let mut args = base.to_vec();
    args.push("csv");
    let o = futexhash(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let rec = rd.records().next().unwrap().unwrap();
    let field = |f: &str| {
        let i = header
            .iter()
            .position(|h| h == f)
            .unwrap_or_else(|| panic!("{f} missing in {header:?}"));
        rec[i].to_string()
    };
    assert_eq!(field("hash_ns"), "6.622");
    assert_eq!(field("hash_ns_source"), "profile");
    assert_eq!(field("profile"), name);
    assert_eq!(field("kernel"), "");
    assert_eq!(field("workload"), "lock");
    let mut args = base.to_vec();
    args.push("json");
    let o = futexhash(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v[0];
    assert_eq!(r["hash_ns"], 6.622, "{r}");
    assert_eq!(r["hash_ns_source"], "profile", "{r}");
    assert_eq!(r["profile"], name, "{r}");
    assert_eq!(r["kernel"], "", "{r}");
}

// H. The work limit: at most 10^10 simulated operations a run -----------------------------

/// The most `--ops` a request of `threads` simulated threads (every run counted) allows
/// after `warmup`, by docs/sim.md's closed form: floor(10^10 / threads) - warmup.
fn most_ops(threads: u64, warmup: u64) -> u64 {
    10_000_000_000 / threads - warmup
}

#[test]
fn ops_beyond_the_work_limit_are_refused_before_any_work_naming_the_most() {
    let sim = |extra: &[&str], ops: u64| {
        let ops = ops.to_string();
        let mut a = vec!["sim", "--profile", "seed-256cpu"];
        a.extend(extra);
        a.extend(["--ops", &ops]);
        let err = refused(&a);
        (err, ops)
    };
    // A sweep: 2 table sizes × (1 + 2 threads) × 3 replications = 18 simulated threads.
    let most = most_ops(2 * (1 + 2) * 3, 200);
    assert_eq!(most, 555_555_355);
    let (err, ops) = sim(&["-t", "1,2", "-b", "0,16"], most + 1);
    assert!(
        err.contains(&format!("--ops {ops} is too many"))
            && err.contains(&format!("at most --ops {most} ")),
        "{err}"
    );
    // With --warmup 0 the warm-up's share goes to --ops.
    let (err, _) = sim(
        &["-t", "1,2", "-b", "0,16", "--warmup", "0"],
        most_ops(18, 0) + 1,
    );
    assert!(
        err.contains(&format!("at most --ops {} ", most_ops(18, 0))),
        "{err}"
    );
    // A warm-up alone beyond the limit names --warmup.
    let err = refused(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "2",
        "-b",
        "0",
        "--warmup",
        "4000000000",
    ]);
    assert!(
        err.contains("--warmup 4000000000 is too many")
            && err.contains(&format!("at most {} ", 10_000_000_000u64 / 6)),
        "{err}"
    );
    // The lock test: 10 contenders on each of the profile's 2 nodes, 8 start orders, 3
    // replications = 480 simulated threads.
    let (err, ops) = sim(&["--workload", "lock", "-t", "10"], most_ops(480, 200) + 1);
    assert!(
        err.contains(&format!("--ops {ops} is too many"))
            && err.contains(&format!("at most --ops {} ", most_ops(480, 200))),
        "{err}"
    );
}

/// The most the refusal names is accepted: the run gets past every check and starts (it
/// installs its SIGINT handler only then), and stops at SIGINT with nothing written.
#[test]
fn the_most_ops_the_work_limit_names_is_accepted() {
    use std::process::{Command, Stdio};
    // 2 threads × 3 replications = 6 simulated threads.
    let most = most_ops(6, 200).to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["sim", "--profile", "seed-256cpu", "-t", "2", "-b", "0"])
        .args(["--ops", &most, "--format", "csv"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !common::signals::catches_sigint(child.id()) {
        if let Ok(Some(status)) = child.try_wait() {
            let o = child.wait_with_output().unwrap();
            panic!(
                "--ops {most} ended ({status}) before its run started: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(120),
            "no handler"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: kill(2) on the child's pid, which it still has (it has not been waited for).
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("nothing written"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn calibrate_ops_beyond_the_work_limit_are_refused_naming_the_most() {
    // A fit simulates each row at most 547 times (docs/sim.md): rows 0 and 2 at 240
    // threads are 547 × 2 × 240 = 262560 simulated threads.
    let out = tmp("work-limit.toml");
    let most = most_ops(547 * 2 * 240, 200);
    assert_eq!(most, 37_886);
    let ops = (most + 1).to_string();
    let from = "data/published/buckets-240threads-256cpu.csv";
    let err = refused(&seed_calibration(
        from,
        &["--rows", "0,2", "--ops", &ops],
        s(&out),
    ));
    assert!(
        err.contains(&format!("--ops {ops} is too many"))
            && err.contains(&format!("at most --ops {most} ")),
        "{err}"
    );
    // With the three runs of its -runs table: four fits (their mean, then each run).
    let most = most_ops(4 * 547 * 2 * 240, 200);
    let ops = (most + 1).to_string();
    let err = refused(&seed_calibration(
        "data/published/buckets-240threads-256cpu-runs.csv",
        &["--runs", "all", "--rows", "0,2", "--ops", &ops],
        s(&out),
    ));
    assert!(err.contains(&format!("at most --ops {most} ")), "{err}");
    assert!(!out.exists());
}

// I. sim calibrate and the simulator's clock ---------------------------------------------

/// Defect: `sim calibrate --ops N` had no clock check (plain `sim` had): a huge N ran the
/// fit, beyond the clock. Refused before any work as `sim` refuses it, with the most that
/// fits; that most is accepted.
#[test]
fn calibrate_ops_beyond_the_clock_are_refused_naming_the_most() {
    // The fit may try outside_ns and the hand-off up to 8 × the slowest row's period
    // (100 ops/s: 8e7 ns each; the remote hand-off the same, the template's local and
    // remote being equal). The clock's bound charges every operation of every thread one
    // after the other (docs/cli.md): per operation 8e7 + 8e7 + 8e7 ns plus one queue
    // spinner term per thread, 64 × 1e9 ns, so 6.424e10 ns; 64 threads make a round of
    // 64 × 6.424e10 ns plus one 1 µs time slice = 4.11136000001e15 ps, and the clock holds
    // 2^(64 - log2 64) - 1 = 2^58 - 1 ps: 288230376151711743 / 4.11136000001e15 = 70.1,
    // so 70 operations per thread fit.
    let template = tmp("clock-template.toml");
    std::fs::write(
        &template,
        "name = \"clock\"\ncpus = 64\nnodes = 1\noutside_ns = 100.0\nhold_ns = 0.0\n\
         handoff_local_ns = 0.0\nhandoff_remote_ns = 0.0\natomic_ns = 0.0\n\
         queue_spinner_ns = 1e9\ntimeslice_ns = 1000.0\n\n[hash_ns]\njhash2 = 0.0\n",
    )
    .unwrap();
    let rows = tmp("clock-rows.csv");
    std::fs::write(&rows, "buckets,ops/sec\n0,100\n16,100\n").unwrap();
    let out = tmp("clock-fit.toml");
    let run = |ops: &str| {
        futexhash(&[
            "sim",
            "calibrate",
            "--from",
            s(&rows),
            "--rows",
            "0,1",
            "--threads",
            "64",
            "--cpus",
            "64",
            "--template",
            s(&template),
            "--warmup",
            "0",
            "--ops",
            ops,
            "--out",
            s(&out),
        ])
    };
    let o = run("71");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--ops 71 is too many") && err.contains("at most --ops 70 "),
        "{err}"
    );
    assert!(!out.exists());
    // Far beyond: the same refusal, at once.
    let o = run("4294967295");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("at most --ops 70 "));
    let o = run("70");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.exists());
}

// J. Flags trace replay has no use for ----------------------------------------------------

/// Defect: `--workload trace:FILE --plot OUT` ignored --plot (exit 0, no plot). Refused
/// before the trace is read, as are the perf loop's flags the replay does not use.
#[test]
fn trace_replay_refuses_plot_and_the_flags_it_does_not_use() {
    let plot = tmp("trace.svg");
    let out = tmp("trace.csv");
    let base = [
        "sim",
        "--profile",
        "seed-256cpu",
        "--workload",
        "trace:data/traces/xz-T2.strace",
        "--output",
        s(&out),
    ];
    let err = refused(&[&base[..], &["--plot", s(&plot)][..]].concat());
    assert!(
        err.contains("--plot") && err.contains(s(&plot)) && err.contains("trace"),
        "{err}"
    );
    for (extra, flag) in [
        (&["--same-node"][..], "--same-node"),
        (&["--ops", "10"][..], "--ops"),
        (&["--warmup", "10"][..], "--warmup"),
        (&["-f", "4"][..], "--futexes"),
        (&["--seed", "7"][..], "--seed"),
    ] {
        let err = refused(&[&base[..], extra].concat());
        assert!(err.contains(flag) && err.contains("trace"), "{err}");
    }
    assert!(!plot.exists() && !out.exists());
    // Without them the replay runs and writes its output.
    let o = futexhash(&base);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.exists());
}

/// Defect: the replay's check compared the perf loop's flags with their defaults, so
/// `--ops 1500` (or `--warmup 200`, `-f 1024`, `--seed 1`), the default given explicitly,
/// was accepted and ignored. A flag the user gave is refused whatever its value, with one
/// line naming it; the defaults (1500, 200, 1024, 1) are those of docs/sim.md.
#[test]
fn trace_replay_refuses_its_unused_flags_given_at_their_default_values() {
    let out = tmp("trace-defaults.csv");
    let base = [
        "sim",
        "--profile",
        "seed-256cpu",
        "--workload",
        "trace:data/traces/xz-T2.strace",
        "--output",
        s(&out),
    ];
    for (extra, flag) in [
        (&["--ops", "1500"][..], "--ops"),
        (&["--warmup", "200"][..], "--warmup"),
        (&["-f", "1024"][..], "--futexes"),
        (&["--futexes", "1024"][..], "--futexes"),
        (&["--seed", "1"][..], "--seed"),
        (&["--same-node"][..], "--same-node"),
    ] {
        let err = refused(&[&base[..], extra].concat());
        assert!(
            err.contains(&format!("has no use for {flag}:")) && err.contains("trace"),
            "{extra:?}: {err}"
        );
    }
    assert!(!out.exists());
}

/// The same defect in two more checks: `--workload lock` has no use for `-f` or `--seed`
/// (futex_numa: one futex per node), and the perf loop none for `--think-scale` (a
/// trace's think time); each was refused only when different from its default (1024,
/// 1, 1), so `-f 1024`, `--seed 1`, `--think-scale 1` were accepted and ignored.
/// `--algo jhash2` with lock is honoured (the test's hasher is jhash2) and still runs.
#[test]
fn lock_and_perf_loop_refuse_unused_flags_given_at_their_default_values() {
    let lock = [
        "sim",
        "--profile",
        "seed002-ivbep",
        "--workload",
        "lock",
        "--ops",
        "20",
        "--warmup",
        "0",
    ];
    for (extra, flag) in [
        (&["-f", "1024"][..], "--futexes"),
        (&["--seed", "1"][..], "--seed"),
    ] {
        let err = refused(&[&lock[..], extra].concat());
        assert!(
            err.contains(&format!("{flag} does not apply to --workload lock")),
            "{extra:?}: {err}"
        );
    }
    let hash = [
        "sim",
        "--profile",
        "seed002-ivbep",
        "-t",
        "2",
        "-b",
        "16",
        "--ops",
        "20",
        "--warmup",
        "0",
    ];
    for workload in ["hash", "wake"] {
        let err = refused(&[&hash[..], &["--workload", workload, "--think-scale", "1"]].concat());
        assert!(
            err.contains("--think-scale '1' only applies to --workload trace:FILE"),
            "{workload}: {err}"
        );
    }
    let o = futexhash(&[&lock[..], &["--algo", "jhash2"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

// J. Trace replay's --think-scale, --global-buckets; --seed and lock's -t ---------------

/// `trace:PATH` of a capture file written here: one FUTEX_WAIT (op 129) on one private
/// word of process 100 per `(time ns, thread)`, with the capture format's header and
/// trailer.
fn capture_workload(name: &str, calls: &[(u64, u32)]) -> String {
    let path = tmp(name);
    let mut text = String::from("# futexhash-capture v1 probe=tracepoint clock=monotonic_ns\n");
    for (t, tid) in calls {
        text.push_str(&format!(
            "futex {t} 100 {tid} 0xffff888100000000 129 0x7f0000001000 1 0x0 0x0 0\n"
        ));
    }
    text.push_str(&format!(
        "# end events={} lost=0 reason=exited exit_code=0\n",
        calls.len()
    ));
    std::fs::write(&path, text).unwrap();
    format!("trace:{}", s(&path))
}

/// Defect: `--think-scale X` on a trace without think time (strace output, which carries no
/// call times here, or a capture whose calls all have one time) was accepted and ignored.
/// A positive X is refused right after the trace is read: one line, before the trace's
/// note and any replay. Without the flag, and with 0 (back to back, what such a trace
/// gets), the same traces replay.
#[test]
fn think_scale_on_a_trace_without_think_time_is_refused() {
    let strace = "trace:data/traces/xz-T2.strace";
    let same = capture_workload("same-time.fxc", &[(5000, 100), (5000, 101)]);
    let base = |w: &str| -> Vec<String> {
        [
            "sim",
            "--profile",
            "seed-256cpu",
            "--workload",
            w,
            "-b",
            "0",
        ]
        .map(String::from)
        .to_vec()
    };
    for (w, why) in [
        (strace, "it has no call times"),
        (
            same.as_str(),
            "its calls were all captured at the same time",
        ),
    ] {
        for x in ["1", "1e-9", "2.5"] {
            let mut args = base(w);
            args.extend(["--think-scale".into(), x.into()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let err = refused(&args);
            assert!(
                err.contains(&format!("--think-scale '{x}' does not apply to trace '"))
                    && err.contains(why),
                "{args:?}: {err}"
            );
        }
        for extra in [&[][..], &["--think-scale", "0"]] {
            let mut args = base(w);
            args.extend(extra.iter().map(|a| a.to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let o = futexhash(&args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
    }
}

/// Defect: `--think-scale 1e300` was echoed as a 301-digit number. Every refused value is
/// echoed as typed, before the trace is read (the trace named here does not exist).
#[test]
fn a_think_scale_out_of_range_is_echoed_as_typed_before_the_trace_is_read() {
    for x in ["1e300", "-1", "NaN", "inf", "1000001", "fast"] {
        let err = refused(&[
            "sim",
            "--profile",
            "seed-256cpu",
            "--workload",
            "trace:/nonexistent/t.fxc",
            "--think-scale",
            x,
        ]);
        assert!(
            err.contains(&format!(
                "--think-scale '{x}' must be a number between 0 and 1000000"
            )),
            "{x}: {err}"
        );
        assert!(err.len() < 120, "{x}: {err}");
    }
}

/// Defect: `--global-buckets 3` with a trace was refused only after the trace was read
/// (by the replay). Now before: the trace named here does not exist, and the refusal is
/// the flag's, as without a trace.
#[test]
fn trace_replay_refuses_a_bad_global_hash_size_before_reading_the_trace() {
    for g in ["3", "33554432"] {
        let err = refused(&[
            "sim",
            "--profile",
            "seed-256cpu",
            "--workload",
            "trace:/nonexistent/t.fxc",
            "--global-buckets",
            g,
        ]);
        assert!(
            err.contains(&format!(
                "--global-buckets {g} must be a power of two up to 16777216 (2^24)"
            )),
            "{g}: {err}"
        );
    }
}

/// Defect: `--seed 18446744073709551616` (2^64) was "not a decimal or 0x-hex number". A
/// number beyond 64 bits is named too large, with the most (2^64 - 1); a malformed one is
/// still not a number.
#[test]
fn a_seed_beyond_64_bits_is_too_large_not_malformed() {
    let max = "18446744073709551615";
    for v in ["18446744073709551616", "0x10000000000000000"] {
        let err = refused(&["sim", "--profile", "seed-256cpu", "--seed", v]);
        assert!(
            err.contains(&format!("'{v}' is too large: at most {max}")),
            "{v}: {err}"
        );
    }
    let err = refused(&["sim", "--profile", "seed-256cpu", "--seed", "12ab"]);
    assert!(
        err.contains("'12ab' is not a decimal or 0x-hex number"),
        "{err}"
    );
}

/// Defect: `sim --workload lock -t 1,2` said lock takes one count without naming the list
/// given.
#[test]
fn a_lock_contender_list_is_named_in_its_refusal() {
    let err = refused(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "--workload",
        "lock",
        "-t",
        "1,2",
    ]);
    assert!(
        err.contains("-t '1,2' is a list: --workload lock takes one contender count per node"),
        "{err}"
    );
}

/// Defect: a think scale that stretched a capture's span past the replay's picosecond
/// clock wrapped it (a capture with calls 30 s apart at --think-scale 1e6 reported 9.7e-7
/// s simulated). Refused right after the trace is read, one line naming the most for the
/// trace: the clock's quarter, 2^62 ps = 4611686.018 s, over a 10 s span is 461168.6,
/// printed rounded down (4.611e5) so that the printed most is itself accepted.
#[test]
fn a_think_scale_beyond_the_replay_clock_is_refused_naming_the_most() {
    let w = capture_workload("long.fxc", &[(1_000_000_000, 100), (11_000_000_000, 100)]);
    let args = [
        "sim",
        "--profile",
        "seed-256cpu",
        "--workload",
        &w,
        "-b",
        "0",
    ];
    let err = refused(&[&args[..], &["--think-scale", "1e6"]].concat());
    assert!(
        err.contains("--think-scale '1e6' stretches the 10.000000 s")
            && err.contains("at most 4.611e5"),
        "{err}"
    );
    let o = futexhash(&[&args[..], &["--think-scale", "4.611e5"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

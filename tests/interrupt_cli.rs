//! Issue 12 item 4: SIGINT/SIGTERM during `bench` keep what was measured. A real signal
//! is sent to the running binary: it must print perf's lines for the elapsed time, exit
//! with 130 (128 + SIGINT), and leave no kernel-backend child behind — also when the
//! signal goes to the parent alone, and when the parent is killed outright.
//!
//! Issue 26: `sim` sweeps and `attack flood` stopped by a signal write the configurations
//! that finished (valid CSV / JSON, at least one record) and exit 130; an interrupted
//! `report` leaves no staging directory. Each says on stderr that it was interrupted and
//! what it kept.

use std::process::{Child, Command, Stdio};

/// How long the sim sweep runs before the signal (its configurations take well under a
/// second each here).
const SIM_WAIT_SECS: u64 = 5;
use std::time::{Duration, Instant};

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start futexhash")
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on the pid of our own, not yet reaped, child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Pids of live `--internal-child` processes whose configuration contains `marker`.
fn children_with(marker: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd);
        let zombie = std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        });
        if cmd.contains("--internal-child") && cmd.contains(marker) && !zombie {
            v.push(pid);
        }
    }
    v
}

/// Waits until `cond` holds or `limit` passes.
fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

fn finish(child: Child) -> (Option<i32>, String, String) {
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn sigint_prints_the_elapsed_time_and_exits_130_model() {
    let c = spawn(&["bench", "-t", "2", "-r", "30"]);
    std::thread::sleep(Duration::from_millis(1000));
    let t0 = Instant::now();
    signal(&c, libc::SIGINT);
    let (code, out, err) = finish(c);
    assert!(t0.elapsed() < Duration::from_secs(10), "stopped promptly");
    assert_eq!(code, Some(130), "{out}{err}");
    assert!(
        out.contains("Averaged") && out.contains("[thread  1]"),
        "{out}"
    );
    assert!(
        err.contains("futexhash: interrupted (SIGINT): 1 of 1 configurations measured"),
        "{err}"
    );
}

/// A sweep stopped in its first configuration says how many ran in the line every
/// interrupted subcommand prints, naming the signal (docs/cli.md): it said
/// `warning: interrupted: 1 of 2 configurations measured` without the signal.
#[test]
fn an_interrupted_sweep_names_the_signal_and_counts_its_configurations() {
    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let c = spawn(&["bench", "-t", "1,2", "-r", "30", "--format", "csv"]);
        std::thread::sleep(Duration::from_millis(1000));
        signal(&c, sig);
        let (code, out, err) = finish(c);
        assert_eq!(code, Some(130), "{out}{err}");
        assert_eq!(out.lines().count(), 2, "a header and the one row: {out}");
        let line = format!(
            "futexhash: interrupted ({name}): 1 of 2 configurations measured, the last one \
             for the time it ran"
        );
        assert!(err.lines().any(|l| l == line), "{err}");
        assert!(!err.contains("warning: interrupted"), "{err}");
    }
}

#[test]
fn sigint_to_the_parent_alone_stops_the_kernel_child_too() {
    // A run time no other test uses marks this test's child.
    let c = spawn(&[
        "bench",
        "--backend",
        "kernel",
        "-t",
        "2",
        "-r",
        "29.37",
        "-f",
        "64",
    ]);
    assert!(
        wait_for(Duration::from_secs(10), || !children_with("370000000")
            .is_empty()),
        "the kernel child started"
    );
    std::thread::sleep(Duration::from_millis(500));
    signal(&c, libc::SIGINT);
    let (code, out, err) = finish(c);
    assert_eq!(code, Some(130), "{out}{err}");
    assert!(out.contains("Averaged"), "partial results: {out}{err}");
    assert!(
        wait_for(Duration::from_secs(5), || children_with("370000000")
            .is_empty()),
        "a kernel child was left running"
    );
}

#[test]
fn a_killed_parent_takes_its_kernel_child_along() {
    let c = spawn(&[
        "bench",
        "--backend",
        "kernel",
        "-t",
        "1",
        "-r",
        "28.19",
        "-f",
        "64",
    ]);
    assert!(
        wait_for(Duration::from_secs(10), || !children_with("190000000")
            .is_empty()),
        "the kernel child started"
    );
    signal(&c, libc::SIGKILL);
    let (code, _, _) = finish(c);
    assert_eq!(code, None, "killed by a signal");
    assert!(
        wait_for(Duration::from_secs(5), || children_with("190000000")
            .is_empty()),
        "the kernel child outlived its parent"
    );
}

#[test]
fn sigint_during_the_noisy_workload_keeps_the_finished_rows() {
    // The model rows run first, in this process; the kernel rows in children. Once a
    // kernel child runs (its run time marks it), both model rows are done.
    let c = spawn(&[
        "bench",
        "--workload",
        "noisy",
        "--backend",
        "model,kernel",
        "-t",
        "1",
        "-r",
        "1.73",
        "--format",
        "csv",
    ]);
    assert!(
        wait_for(Duration::from_secs(60), || !children_with("730000000")
            .is_empty()),
        "the kernel child started"
    );
    signal(&c, libc::SIGINT);
    let (code, out, err) = finish(c);
    assert_eq!(code, Some(130), "{out}{err}");
    let model_rows = out.lines().filter(|l| l.starts_with("model,")).count();
    assert_eq!(
        model_rows, 2,
        "the two model rows that finished: {out}{err}"
    );
    assert!(!err.contains("no message"), "{err}");
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("futexhash-interrupt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Waits at most `limit` for `child` to exit (then kills it and fails).
fn finish_within(child: Child, limit: Duration) -> (Option<i32>, String, String) {
    let pid = child.id() as i32;
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    let watchdog = std::thread::spawn(move || {
        let t0 = Instant::now();
        while !d.load(std::sync::atomic::Ordering::SeqCst) {
            if t0.elapsed() > limit {
                // SAFETY: kill(2) on the pid of our own child, which `finish` has not
                // reaped yet (`done` is set only after it returns).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    });
    let r = finish(child);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(!watchdog.join().unwrap(), "still running after {limit:?}");
    r
}

#[test]
fn sigint_keeps_the_sim_configurations_that_finished() {
    let dir = scratch("sim");
    let out = dir.join("sim.csv");
    // Every hasher at 17 sizes and 4 thread counts: far more configurations than finish
    // in the wait below.
    let c = spawn(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "--algo",
        "all",
        "-t",
        "64,128,192,240",
        "-b",
        "2..131072",
        "--format",
        "csv",
        "--output",
        out.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(SIM_WAIT_SECS));
    signal(&c, libc::SIGINT);
    let (code, stdout, err) = finish_within(c, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{stdout}{err}");
    let text = std::fs::read_to_string(&out).expect("the output file was written");
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    assert!(header.iter().any(|h| h == "ops_per_sec"), "{header:?}");
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.expect("a complete row")).collect();
    assert!(!rows.is_empty(), "no configuration finished: {err}");
    assert!(rows.len() < 22 * 17 * 4, "the sweep was not interrupted");
    // One line says why the run stopped and that what finished is kept (it was silent).
    assert!(
        err.contains("interrupted (SIGINT)") && err.contains("results that finished are written"),
        "{err}"
    );
    for r in &rows {
        assert_eq!(r.len(), header.len());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigterm_keeps_the_flood_rows_that_finished() {
    let dir = scratch("flood");
    let out = dir.join("flood.json");
    // 22 hashers x 2 tables x 2 victims = 88 configurations of about 0.4 s each.
    let c = spawn(&[
        "attack",
        "flood",
        "--algo",
        "all",
        "--attacker-keys",
        "8",
        "--placement",
        "computed",
        "--duration-ms",
        "50",
        "--reps",
        "2",
        "--format",
        "json",
        "--output",
        out.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_secs(8));
    signal(&c, libc::SIGTERM);
    let (code, stdout, err) = finish_within(c, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{stdout}{err}");
    let text = std::fs::read_to_string(&out).expect("the output file was written");
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let rows = v.as_array().expect("an array of records");
    assert!(!rows.is_empty(), "no configuration finished: {err}");
    assert!(rows.len() < 88 * 2, "the flood was not interrupted");
    assert!(err.contains("interrupted (SIGTERM)"), "{err}");
    // Whole configurations only: a control row and its placement's row.
    assert_eq!(rows.len() % 2, 0, "{rows:?}");
    for r in rows {
        for f in ["algo", "table", "victim_slowdown", "verdict"] {
            assert!(r.get(f).is_some(), "{f} missing in {r}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_interrupted_report_leaves_no_staging_directory() {
    let dir = scratch("report");
    let target = dir.join("out");
    let c = spawn(&["report", "--quick", "--out", target.to_str().unwrap()]);
    let staging = dir.join(format!(".out.tmp{}", c.id()));
    assert!(
        wait_for(Duration::from_secs(60), || staging.is_dir()),
        "the report never created {}",
        staging.display()
    );
    std::thread::sleep(Duration::from_millis(500));
    signal(&c, libc::SIGINT);
    let (code, stdout, err) = finish_within(c, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stdout}{err}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(
        err.contains("interrupted (SIGINT): nothing written"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

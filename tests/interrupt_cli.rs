//! Issue 12 item 4: SIGINT/SIGTERM during `bench` keep what was measured. A real signal
//! is sent to the running binary: it must print perf's lines for the elapsed time, exit
//! with 130 (128 + SIGINT), and leave no kernel-backend child behind — also when the
//! signal goes to the parent alone, and when the parent is killed outright.
//!
//! Issue 26: `sim` sweeps and `attack flood` stopped by a signal write the configurations
//! that finished (valid CSV / JSON, at least one record) and exit 130; an interrupted
//! `report` leaves no staging directory. Each says on stderr that it was interrupted and
//! what it kept.
//!
//! `sim calibrate` and `sim validate` exit 130 at SIGINT saying nothing was written; a
//! simulation stops inside its configuration, and one stopped before any finished prints
//! no empty table; a run stuck in a C hasher is abandoned, exit 130, at a second signal
//! or a few seconds after the first. Each test signals only once the handler is there
//! (`SigCgt`), or once the run shows it is where the test wants it (its worker threads
//! exist and have run, it has used an amount of CPU time, its progress line on a
//! terminal, a marker file the hasher writes), never after a fixed sleep (the only sleeps
//! put a second signal at least 1 s after the first, which load can only lengthen), and
//! waits for the exit with a limit only a hung run reaches, so none depends on the
//! machine's speed or load.
//!
//! `dist`, `check`, `hash`, `keys`, `attack leak` and `attack channel` died of SIGINT
//! (no status 130, no line); they write only when done, so an interrupted run exits 130
//! saying nothing was written and leaves an `--output` file as it was. `report` shares
//! their signal watcher, which clears its progress line before its own.

mod common;

use common::pty;
use common::repo;
use common::signals::{
    catches_sigint, finish_within, sigint_and_wait_taken, sigint_twice_back_to_back, signal, spawn,
    thread_count, wait_for, wait_until_catching, wait_until_cpu_time, wait_until_working,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// Waits (at most a minute) until `parent` has a live kernel child whose configuration
/// contains `marker`, that child catches SIGINT and `workers` of its worker threads have
/// run: a signal then meets the child's own handling, whatever the machine's load.
/// Returns the child's pid; kills `parent` and fails if that never happens.
fn kernel_child_working(parent: &Child, marker: &str, workers: usize) -> u32 {
    let mut pid = 0;
    let ready = wait_for(Duration::from_secs(60), || {
        let Some(&p) = children_with(marker).first() else {
            return false;
        };
        pid = p;
        catches_sigint(p)
            && common::signals::threads_named(p, "futexhash-")
                .iter()
                .filter(|&&t| common::signals::thread_cpu_ticks(p, t) > 0)
                .count()
                >= workers
    });
    if !ready {
        signal(parent, libc::SIGKILL);
        panic!("no working kernel child ({marker}) in a minute");
    }
    pid
}

/// The run of 300 s is signalled once both its workers have run; it must stop long before
/// its end (the limit only catches a run that ignores the signal).
#[test]
fn sigint_prints_the_elapsed_time_and_exits_130_model() {
    let c = spawn(&["bench", "-t", "2", "-r", "300"]);
    wait_until_working(&c, "futexhash-", 2);
    signal(&c, libc::SIGINT);
    let (code, out, err) = finish_within(c, Duration::from_secs(120));
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
        // Signalled once the first configuration's worker runs (of 300 s).
        let c = spawn(&["bench", "-t", "1,2", "-r", "300", "--format", "csv"]);
        wait_until_working(&c, "futexhash-", 1);
        signal(&c, sig);
        let (code, out, err) = finish_within(c, Duration::from_secs(120));
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
    // Signalled once the child catches SIGINT and its two workers have run.
    let child = kernel_child_working(&c, "370000000", 2);
    signal(&c, libc::SIGINT);
    let (code, out, err) = finish_within(c, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{out}{err}");
    assert!(out.contains("Averaged"), "partial results: {out}{err}");
    assert!(
        wait_for(Duration::from_secs(60), || children_with("370000000")
            .is_empty()),
        "the kernel child {child} was left running"
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
    // Killed once the child has set itself up (it catches SIGINT) and its worker runs.
    let child = kernel_child_working(&c, "190000000", 1);
    signal(&c, libc::SIGKILL);
    let (code, _, _) = finish_within(c, Duration::from_secs(120));
    assert_eq!(code, None, "killed by a signal");
    assert!(
        wait_for(Duration::from_secs(60), || children_with("190000000")
            .is_empty()),
        "the kernel child {child} outlived its parent"
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
    kernel_child_working(&c, "730000000", 1);
    signal(&c, libc::SIGINT);
    let (code, out, err) = finish_within(c, Duration::from_secs(120));
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

/// The highest `N` of the progress lines `sim: N of M configurations done` on `screen`.
fn configurations_done(screen: &str) -> u64 {
    screen
        .split("sim: ")
        .skip(1)
        .filter_map(|s| s.split(" of ").next()?.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
}

#[test]
fn sigint_keeps_the_sim_configurations_that_finished() {
    let dir = scratch("sim");
    let out = dir.join("sim.csv");
    // Every hasher at 17 sizes and 4 thread counts: far more configurations than finish
    // before the signal, which comes once the progress line (stderr is a terminal here)
    // counts one done.
    let (c, screen) = pty::spawn_on_terminal(&[
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
    assert!(
        wait_for(Duration::from_secs(300), || configurations_done(
            &screen.text()
        ) >= 1),
        "no configuration done: {}",
        screen.text()
    );
    signal(&c, libc::SIGINT);
    let (code, stdout, _) = finish_within(c, Duration::from_secs(120));
    let err = screen.closed_text();
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
    // Signalled once a configuration runs: the flood checks the signal only between
    // configurations and has no thread but the main one outside them (no watcher), so a
    // second thread means one has started, and it finishes and is kept.
    wait_until_catching(&c);
    assert!(
        wait_for(Duration::from_secs(300), || thread_count(c.id()) > 1),
        "no configuration started"
    );
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
    // The handler is installed before the staging directory is made.
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

/// Defect: `sim calibrate` and `sim validate` died of SIGINT (no status 130, no line).
/// Both write only when done: the line says nothing was written, and nothing is.
#[test]
fn sim_calibrate_and_validate_exit_130_at_sigint_and_write_nothing() {
    let dir = scratch("calibrate");
    let out = dir.join("fitted.toml");
    let template = repo("data/machines/seed-256cpu-template.toml");
    let from = repo("data/published/buckets-240threads-256cpu-runs.csv");
    let runs: [Vec<&str>; 2] = [
        vec![
            "sim",
            "calibrate",
            "--from",
            &from,
            "--runs",
            "all",
            "--rows",
            "0,2",
            "--threads",
            "240",
            "--cpus",
            "256",
            "--nodes",
            "2",
            "--template",
            &template,
            "--out",
            out.to_str().unwrap(),
        ],
        vec![
            "sim",
            "validate",
            "--cv",
            "--template",
            &template,
            "--summary",
        ],
    ];
    for args in &runs {
        // Both run for 20 s or more; the signal comes once the handler is there.
        let c = spawn(args);
        wait_until_catching(&c);
        signal(&c, libc::SIGINT);
        let (code, stdout, err) = finish_within(c, Duration::from_secs(60));
        assert_eq!(code, Some(130), "{args:?}: {stdout}{err}");
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            ["futexhash: interrupted (SIGINT): nothing written"],
            "{args:?}"
        );
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(!out.exists(), "{args:?}: the profile was written");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Defect: a simulation of one long configuration ran to its end after SIGINT (8 s in,
/// out at 40 s) and printed tables with headers and no rows. The event loop heeds the
/// flag: out within seconds (the run would take minutes), no table, one line saying
/// nothing had finished.
#[test]
fn a_long_simulation_stops_inside_its_configuration_and_prints_no_empty_table() {
    for format in ["table", "csv"] {
        let c = spawn(&[
            "sim",
            "--profile",
            "seed-256cpu",
            "-t",
            "240",
            "-b",
            "0",
            "--ops",
            "10000000",
            "--format",
            format,
        ]);
        // Inside the configuration: the set-up and 300 operations take 0.2 s of CPU time
        // (debug build), so after 1 s of it the run is in its event loop, however long
        // the machine took to give it that.
        wait_until_catching(&c);
        wait_until_cpu_time(&c, 1.0);
        signal(&c, libc::SIGINT);
        // The limit only catches a hang; that it stopped inside the configuration is told
        // by what it printed (a run to its end prints the table).
        let (code, stdout, err) = finish_within(c, Duration::from_secs(120));
        assert_eq!(code, Some(130), "{format}: {stdout}{err}");
        assert!(stdout.is_empty(), "{format}: an empty table: {stdout}");
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            ["futexhash: interrupted (SIGINT): no configuration had finished; nothing written"],
            "{format}"
        );
    }
}

/// A C hasher that passes the start-up probe (a few calls in a child process), then
/// never returns from its 5001st call, after creating `marker`.
fn hanging_hasher(dir: &Path, marker: &Path) -> PathBuf {
    let src = dir.join("hangs.c");
    std::fs::write(
        &src,
        format!(
            r#"#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

static unsigned long calls;
static volatile unsigned long spin;

uint32_t futex_hash(const uint32_t *key, uint32_t offset)
{{
	unsigned long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (n > 5000) {{
		if (n == 5001)
			close(open("{}", O_CREAT | O_WRONLY, 0600));
		for (;;)
			spin++;
	}}
	return key[0] ^ key[1] ^ key[2] ^ key[3] ^ offset;
}}
"#,
            marker.display()
        ),
    )
    .unwrap();
    src
}

/// Runs futexhash with a private compile cache in `dir`.
fn spawn_cached(args: &[&str], dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .env("FUTEXHASH_CACHE_DIR", dir.join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start futexhash")
}

/// Defect: `sim` and `bench --backend model` with a C hasher stuck in a call could not
/// be stopped by SIGINT (no flag reaches inside the call); `report` could. They exit
/// 130 too: a second signal at once, a single one after a grace period of seconds, with
/// one line saying the run was abandoned and nothing written.
#[test]
fn a_run_stuck_in_a_c_hasher_is_abandoned_with_status_130() {
    let dir = scratch("hangs");
    let cases: [(&str, &[&str], usize); 3] = [
        (
            "sim",
            &["sim", "--profile", "seed-256cpu", "-t", "8", "-b", "64"],
            1,
        ),
        (
            "sim twice",
            &["sim", "--profile", "seed-256cpu", "-t", "8", "-b", "64"],
            2,
        ),
        (
            "bench",
            &["bench", "--backend", "model", "-t", "1", "-r", "30"],
            1,
        ),
    ];
    for (name, args, signals) in cases {
        let marker = dir.join(format!("{}.stuck", name.replace(' ', "-")));
        let src = hanging_hasher(&dir, &marker);
        let algo = format!("hangs=c:{}", src.display());
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--algo", &algo]);
        let c = spawn_cached(&all, &dir);
        assert!(
            wait_for(Duration::from_secs(120), || marker.exists()),
            "{name}: the hasher was never stuck"
        );
        wait_until_catching(&c);
        let t0 = Instant::now();
        sigint_and_wait_taken(&c);
        if signals == 2 {
            // A second Ctrl-C, beyond the 200 ms in which a signal is a copy of the first.
            std::thread::sleep(Duration::from_secs(1));
            signal(&c, libc::SIGINT);
        }
        let second_after = t0.elapsed();
        let (code, stdout, err) = finish_within(c, Duration::from_secs(60));
        assert_eq!(code, Some(130), "{name}: {stdout}{err}");
        assert!(stdout.is_empty(), "{name}: {stdout}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{name}: {err}");
        assert!(
            lines[0].starts_with("futexhash: interrupted (SIGINT): the run was abandoned")
                && lines[0].ends_with("nothing written"),
            "{name}: {err}"
        );
        // The 5 s grace after the first signal abandons it too: the second signal must be
        // the reason given only when it came well before that.
        let why = if signals == 1 {
            "did not stop within"
        } else if second_after < Duration::from_secs(4) {
            "a second signal came"
        } else {
            "abandoned"
        };
        assert!(lines[0].contains(why), "{name}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What an interrupted run that writes only when done prints: one line, and nothing else.
const NOTHING_WRITTEN: &str = "futexhash: interrupted (SIGINT): nothing written";

/// A file the user named with --output before the run: what it held, and a check that it
/// still holds that and that nothing else (a temporary file) was left beside it.
struct PreviousOutput {
    dir: PathBuf,
    file: PathBuf,
}

impl PreviousOutput {
    const TEXT: &str = "the previous run's output\n";

    fn new(name: &str) -> Self {
        let dir = scratch(name);
        let file = dir.join("previous.out");
        std::fs::write(&file, Self::TEXT).unwrap();
        PreviousOutput { dir, file }
    }

    fn path(&self) -> &str {
        self.file.to_str().unwrap()
    }

    fn assert_untouched(&self, what: &str) {
        assert_eq!(
            std::fs::read_to_string(&self.file).unwrap(),
            Self::TEXT,
            "{what}: the --output file was replaced"
        );
        let names: Vec<_> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["previous.out"], "{what}: left beside the output");
        std::fs::remove_dir_all(&self.dir).unwrap();
    }
}

/// Defect: `dist`, `check`, `keys`, `attack leak` and `attack channel` died of SIGINT. Each
/// is started on an input it needs many seconds for and signalled once its handler is in
/// place (the run is then under way; it would have taken seconds more): exit 130, the one
/// line, nothing on stdout, and the --output file as it was.
#[test]
fn sigint_stops_the_runs_that_write_when_done_and_keeps_their_output_file() {
    let runs: [(&str, &[&str]); 4] = [
        ("check", &["check", "--algo", "jhash2", "--keys", "2000000"]),
        ("keys", &["keys", "--keys", "4000000"]),
        ("attack leak", &["attack", "leak", "--algo", "jhash2"]),
        (
            "attack channel",
            &[
                "attack",
                "channel",
                "--algo",
                "seed",
                "--samples",
                "1000000",
            ],
        ),
    ];
    for (name, args) in runs {
        let previous = PreviousOutput::new(&name.replace(' ', "-"));
        let mut all = args.to_vec();
        all.extend(["--output", previous.path()]);
        let c = spawn(&all);
        wait_until_catching(&c);
        signal(&c, libc::SIGINT);
        let (code, stdout, err) = finish_within(c, Duration::from_secs(60));
        assert_eq!(code, Some(130), "{name}: {stdout}{err}");
        assert_eq!(err.lines().collect::<Vec<_>>(), [NOTHING_WRITTEN], "{name}");
        assert!(stdout.is_empty(), "{name}: {stdout}");
        previous.assert_untouched(name);
    }
}

/// Defect: `dist` died of SIGINT, its progress bar left on the terminal. Signalled once the
/// bar shows it hashing (22 hashers of 10 million keys: many seconds to go), it clears
/// the bar, says in one line that nothing was written, exits 130 and leaves --output as
/// it was.
#[test]
fn sigint_during_dist_clears_its_progress_bar_and_keeps_the_output_file() {
    let previous = PreviousOutput::new("dist");
    let (c, screen) = pty::spawn_on_terminal(&[
        "dist",
        "--algo",
        "all",
        "--keys",
        "10000000",
        "--format",
        "csv",
        "--output",
        previous.path(),
    ]);
    // The bar reads `[bar] N/22 HASHER` from the first hasher on.
    assert!(
        wait_for(Duration::from_secs(300), || screen.text().contains("/22 ")),
        "no progress bar: {}",
        screen.text()
    );
    wait_until_catching(&c);
    signal(&c, libc::SIGINT);
    let (code, stdout, _) = finish_within(c, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stdout}{}", screen.text());
    assert!(stdout.is_empty(), "{stdout}");
    assert_eq!(screen.last_line(), NOTHING_WRITTEN, "{:?}", screen.text());
    previous.assert_untouched("dist");
}

/// Defect: `hash` waiting for keys on stdin died of SIGINT. Signalled while it waits for
/// more (stdin stays open), it exits 130, says so in one line and writes nothing.
#[test]
fn sigint_while_hash_reads_its_keys_exits_130_and_writes_nothing() {
    use std::io::Write as _;
    let previous = PreviousOutput::new("hash");
    let mut c = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["hash", "--algo", "all", "--output", previous.path()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start futexhash");
    // Kept open until the child has exited: it is reading, not at the end of its keys.
    let mut stdin = c.stdin.take().unwrap();
    stdin.write_all(b"private:0x1000:0x7f0000\n").unwrap();
    stdin.flush().unwrap();
    wait_until_catching(&c);
    signal(&c, libc::SIGINT);
    let (code, stdout, err) = finish_within(c, Duration::from_secs(60));
    drop(stdin);
    assert_eq!(code, Some(130), "{stdout}{err}");
    assert_eq!(err.lines().collect::<Vec<_>>(), [NOTHING_WRITTEN]);
    assert!(stdout.is_empty(), "{stdout}");
    previous.assert_untouched("hash");
}

/// Defect: `report` had a signal watcher of its own, which left its progress line on the
/// terminal with the interruption line written after it. With the shared watcher the line
/// is cleared first: the last line on the terminal is the interruption's alone, exit 130,
/// and no report and no staging directory are left.
#[test]
fn an_interrupted_report_clears_its_progress_line_and_leaves_nothing() {
    let dir = scratch("report-tty");
    let target = dir.join("out");
    let (c, screen) =
        pty::spawn_on_terminal(&["report", "--quick", "--out", target.to_str().unwrap()]);
    // Its spinner names the first section; the run takes tens of seconds more.
    assert!(
        wait_for(Duration::from_secs(120), || screen
            .text()
            .contains("hash cost and simulator calibration")),
        "no progress line: {}",
        screen.text()
    );
    wait_until_catching(&c);
    signal(&c, libc::SIGINT);
    let (code, stdout, _) = finish_within(c, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{stdout}{}", screen.text());
    assert_eq!(screen.last_line(), NOTHING_WRITTEN, "{:?}", screen.text());
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A C hasher that passes the start-up probe (a few calls in a child process), then stays
/// inside its 5001st call until the file `$FH_TEST_RELEASE` exists, after creating
/// `$FH_TEST_MARKER`: a run that cannot stop at a signal until the test lets it.
fn blocking_hasher(dir: &Path) -> PathBuf {
    let src = dir.join("blocks.c");
    std::fs::write(
        &src,
        r#"#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned long calls;

uint32_t futex_hash(const uint32_t *key, uint32_t offset)
{
	unsigned long n = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (n == 5001) {
		const char *marker = getenv("FH_TEST_MARKER");
		const char *release = getenv("FH_TEST_RELEASE");
		if (marker && release) {
			close(open(marker, O_CREAT | O_WRONLY, 0600));
			while (access(release, F_OK) != 0)
				usleep(1000);
		}
	}
	return key[0] ^ key[1] ^ key[2] ^ key[3] ^ offset;
}
"#,
    )
    .unwrap();
    src
}

/// `bench --backend model` on [`blocking_hasher`], started and held inside the blocking
/// call: (the child, its release file).
fn bench_held_in_a_call(dir: &Path, src: &Path, name: &str) -> (Child, PathBuf) {
    let marker = dir.join(format!("{name}.held"));
    let release = dir.join(format!("{name}.release"));
    let algo = format!("blocks=c:{}", src.display());
    let c = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["bench", "--backend", "model", "-t", "1", "-r", "30"])
        .args(["--algo", &algo])
        .env("FUTEXHASH_CACHE_DIR", dir.join("cache"))
        .env("FH_TEST_MARKER", &marker)
        .env("FH_TEST_RELEASE", &release)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start futexhash");
    assert!(
        wait_for(Duration::from_secs(120), || marker.exists()),
        "{name}: the hasher was never entered"
    );
    wait_until_catching(&c);
    (c, release)
}

/// Defect: GNU `timeout -s INT N futexhash bench` made `bench` abandon its run, nothing
/// written: timeout signals the command and then its process group, and the copy was
/// taken for a second Ctrl-C. Two SIGINTs are delivered here the same way, back to back,
/// each taken by the child on its own, while the run cannot stop (its worker is inside a
/// hasher call); then the call is let return. One request: the run stops as at one
/// Ctrl-C, writes what it measured and exits 130. (On the old code the watcher abandoned
/// the run as soon as it saw the second signal.) The copies are judged against the
/// 200 ms window (REPEAT_AFTER); an attempt in which the two took 100 ms or more to be
/// taken (a very busy machine) proves nothing and is repeated.
#[test]
fn a_sigint_delivered_twice_at_once_stops_bench_as_one_ctrl_c_does() {
    let dir = scratch("twice");
    let src = blocking_hasher(&dir);
    for attempt in 0..5 {
        let (mut c, release) = bench_held_in_a_call(&dir, &src, &format!("try{attempt}"));
        let apart = sigint_twice_back_to_back(&c);
        // The call is held a while after the signals, so that a watcher that took the copy
        // for a second Ctrl-C (it looks every 20 ms) has ended the process by then. How
        // long does not decide the verdict: a correct run waits and then stops.
        let _ = wait_for(Duration::from_secs(1), || c.try_wait().unwrap().is_some());
        std::fs::write(&release, "").unwrap();
        let (code, out, err) = finish_within(c, Duration::from_secs(120));
        let abandoned = err.contains("abandoned");
        if abandoned && (apart >= Duration::from_millis(100) || err.contains("did not stop")) {
            // The copies came too far apart, or the release too late, to prove anything.
            continue;
        }
        assert!(!abandoned, "copies {apart:?} apart: {err}");
        assert_eq!(code, Some(130), "{out}{err}");
        assert!(out.contains("Averaged"), "the measured point: {out}{err}");
        assert!(
            err.contains("futexhash: interrupted (SIGINT): 1 of 1 configurations measured"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    // A machine so busy that five attempts could not deliver two signals within 100 ms
    // cannot show the copy is ignored; that says nothing against the code, so it is no
    // failure (the window itself is checked by bench::interrupt's unit tests).
    println!("INCONCLUSIVE: five attempts could not deliver two SIGINTs within 100 ms");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A second SIGINT well after the first (1 s, beyond the 200 ms window) is still a second
/// Ctrl-C: the run that does not stop is abandoned at once, nothing written.
#[test]
fn a_second_sigint_a_second_later_still_abandons_the_run() {
    let dir = scratch("apart");
    let src = blocking_hasher(&dir);
    let (c, _never_released) = bench_held_in_a_call(&dir, &src, "apart");
    let t0 = Instant::now();
    sigint_and_wait_taken(&c);
    std::thread::sleep(Duration::from_secs(1));
    signal(&c, libc::SIGINT);
    let second_after = t0.elapsed();
    let (code, out, err) = finish_within(c, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("futexhash: interrupted (SIGINT): the run was abandoned")
            && lines[0].ends_with("nothing written"),
        "{err}"
    );
    // The 5 s grace after the first signal abandons it too; only a second signal sent
    // well before then must be the reason given.
    if second_after < Duration::from_secs(4) {
        assert!(lines[0].contains("a second signal came"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

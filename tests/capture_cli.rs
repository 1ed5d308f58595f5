//! `futexhash capture` end to end: a small C program the test builds hits known futex words
//! a known number of times; the capture must hold exactly those addresses with exactly
//! those counts, one mm, the program's tgid. Expected values come from the program's own
//! output, and the capture file is read here with a few lines of independent parsing.
//!
//! Needs bpftrace and root (CI installs bpftrace and runs as root). Without either, the
//! live tests print why and return; the input checks run everywhere.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
static uint32_t priv_words[3], shared_word;
int main(void) {
    int hits[3] = {5, 7, 11};
    for (int i = 0; i < 3; i++)
        printf("word %p %d 129\n", (void *)&priv_words[i], hits[i]);
    printf("word %p 3 1\n", (void *)&shared_word);
    printf("tgid %d\n", getpid());
    fflush(stdout);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < hits[i]; j++)
            syscall(SYS_futex, &priv_words[i], FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    for (int j = 0; j < 3; j++)
        syscall(SYS_futex, &shared_word, FUTEX_WAKE, 1, NULL, NULL, 0);
    return 0;
}
"#;

/// A target that never pauses: one thread making `FUTEX_WAKE_PRIVATE` calls on one word as
/// fast as it can, until killed.
const BUSY: &str = r#"
#define _GNU_SOURCE
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
static uint32_t word;
int main(void) {
    for (;;)
        syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
"#;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "futexhash-capture-test-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Why the live tests cannot run here, if they cannot.
fn cannot_capture() -> Option<String> {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("bpftrace").is_file()));
    if !on_path {
        return Some("bpftrace is not installed (apt-get install bpftrace)".into());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not running as root (bpftrace needs root)".into());
    }
    None
}

fn build_program(dir: &Path) -> PathBuf {
    build_c(dir, "known", PROGRAM)
}

fn build_c(dir: &Path, name: &str, text: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, text).unwrap();
    let exe = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = Command::new(&cc)
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("run the C compiler");
    assert!(st.success(), "{cc} failed on {}", src.display());
    exe
}

/// What the test reads from a capture file.
struct Read {
    header: String,
    /// uaddr -> (calls, op) of every `futex` event line.
    words: BTreeMap<u64, (u32, u32)>,
    tgids: BTreeSet<u32>,
    mms: BTreeSet<u64>,
}

fn read_capture(path: &Path) -> Read {
    let text = std::fs::read_to_string(path).unwrap();
    let header = text.lines().next().unwrap().to_string();
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let mut words = BTreeMap::new();
    let (mut tgids, mut mms) = (BTreeSet::new(), BTreeSet::new());
    for l in text.lines().filter(|l| l.starts_with("futex")) {
        let f: Vec<&str> = l.split(' ').collect();
        // futex T TGID TID MM OP UADDR VAL VAL2 UADDR2 VAL3
        assert_eq!(f[0], "futex", "unexpected call in {l}");
        assert_eq!(f.len(), 11, "{l}");
        tgids.insert(f[2].parse().unwrap());
        mms.insert(hex(f[4]));
        let op: u32 = f[5].parse().unwrap();
        let e = words.entry(hex(f[6])).or_insert((0, op));
        assert_eq!(e.1, op, "two ops on one word: {l}");
        e.0 += 1;
    }
    Read {
        header,
        words,
        tgids,
        mms,
    }
}

#[test]
fn a_known_program_yields_exactly_its_futex_words() {
    if let Some(why) = cannot_capture() {
        println!("SKIPPED a_known_program_yields_exactly_its_futex_words: {why}");
        return;
    }
    let dir = scratch("known");
    let exe = build_program(&dir);
    let cap = dir.join("known.fxc");
    let out = common::futexhash(&[
        "capture",
        "-o",
        cap.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "capture failed: {stderr}");
    // What the program says it did.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut want = BTreeMap::new();
    let mut tgid = 0u32;
    for l in stdout.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        match f[0] {
            "word" => {
                let a = u64::from_str_radix(f[1].trim_start_matches("0x"), 16).unwrap();
                want.insert(a, (f[2].parse().unwrap(), f[3].parse().unwrap()));
            }
            "tgid" => tgid = f[1].parse().unwrap(),
            _ => panic!("unexpected program output {l}"),
        }
    }
    assert_eq!(want.len(), 4, "{stdout}");
    let Read {
        header,
        words: got,
        tgids,
        mms,
    } = read_capture(&cap);
    assert!(
        header.starts_with("# futexhash-capture v1 probe="),
        "{header}"
    );
    assert_eq!(got, want, "capture vs the program's own account");
    assert_eq!(tgids, BTreeSet::from([tgid]));
    assert_eq!(mms.len(), 1, "{mms:?}");
    assert!(
        *mms.first().unwrap() >= 0xffff_8000_0000_0000,
        "mm is not a kernel pointer: {mms:x?}"
    );
    assert!(
        std::fs::read_to_string(&cap)
            .unwrap()
            .contains("# end events=")
    );

    // The trace goes through every hasher and the simulator.
    let d = common::futexhash(&[
        "dist",
        "--algo",
        "all",
        "--buckets",
        "16,1024",
        "--workload",
        &format!("trace:{}", cap.display()),
        "--format",
        "json",
    ]);
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    let v: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    assert!(v.as_array().unwrap().iter().all(|r| r["keys"] == 4));
    let w = common::futexhash(&[
        "dist",
        "--algo",
        "jhash2",
        "--buckets",
        "16",
        "--weight",
        "ops",
        "--workload",
        &format!("trace:{}", cap.display()),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&w.stdout).unwrap();
    assert_eq!(v[0]["keys"], 5 + 7 + 11 + 3);
    let s = common::futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "--workload",
        &format!("trace:{}", cap.display()),
        "-b",
        "0,16",
        "--format",
        "json",
    ]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let recs = v.as_array().unwrap();
    assert_eq!(recs.len(), 2);
    assert!(
        recs.iter()
            .all(|r| r["ops"] == 26 && r["ops_per_sec"].as_f64().unwrap() > 0.0)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigint_keeps_what_was_captured_and_ends_the_command() {
    if let Some(why) = cannot_capture() {
        println!("SKIPPED sigint_keeps_what_was_captured_and_ends_the_command: {why}");
        return;
    }
    let dir = scratch("sigint");
    let cap = dir.join("sleep.fxc");
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["capture", "-o", cap.to_str().unwrap(), "--", "sleep", "60"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let mut target = 0u32;
    while err.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.split("capturing pid ").nth(1) {
            target = rest.split_whitespace().next().unwrap().parse().unwrap();
            break;
        }
        line.clear();
    }
    assert!(target > 0, "no 'capturing pid' line: {line}");
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "capture did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    let text = std::fs::read_to_string(&cap).unwrap();
    assert!(text.contains("reason=interrupted"), "{text}");
    // The command we started is gone (not orphaned).
    assert!(
        !Path::new(&format!("/proc/{target}")).exists(),
        "sleep {target} still runs"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigint_before_bpftrace_attaches_exits_130() {
    if let Some(why) = cannot_capture() {
        println!("SKIPPED sigint_before_bpftrace_attaches_exits_130: {why}");
        return;
    }
    use common::signals;
    let dir = scratch("early-sigint");
    let cap = dir.join("early.fxc");
    let child = signals::spawn(&["capture", "-o", cap.to_str().unwrap(), "--", "sleep", "60"]);
    // The handler is installed before bpftrace starts, and bpftrace takes a second or more
    // to attach: a signal now nearly always lands before the probes are up (and if not,
    // the capture ends as any interrupted one does; both must exit 130, as the spec says
    // of SIGINT).
    signals::wait_until_catching(&child);
    signals::signal(&child, libc::SIGINT);
    let (code, _, err) = signals::finish_within(child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{err}");
    if err.contains("nothing captured") {
        assert!(
            !cap.exists(),
            "a file was written although nothing was captured"
        );
    } else {
        let text = std::fs::read_to_string(&cap).unwrap();
        assert!(text.contains("reason=interrupted"), "{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A capture of the busy target started by this test, with `limits` (e.g. `--seconds 2`).
/// Returns the child and the time the capture said it had attached ("capturing pid"), when
/// its `--seconds` clock starts.
fn start_busy(exe: &Path, cap: &Path, limits: &[&str]) -> (std::process::Child, Instant, u32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .arg("capture")
        .args(limits)
        .args(["-o", cap.to_str().unwrap(), "--", exe.to_str().unwrap()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let mut target = 0u32;
    while err.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.split("capturing pid ").nth(1) {
            target = rest.split_whitespace().next().unwrap().parse().unwrap();
            break;
        }
        line.clear();
    }
    assert!(target > 0, "no 'capturing pid' line: {line}");
    let attached = Instant::now();
    // Keep reading stderr so that the capture never blocks on it.
    std::thread::spawn(move || {
        let mut rest = String::new();
        while err.read_line(&mut rest).is_ok_and(|n| n > 0) {}
    });
    (child, attached, target)
}

/// Waits for `child`, at most `limit` (then kills it and fails).
fn wait_at_most(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("capture still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The event lines of a capture file and its trailer's fields.
fn events_and_trailer(path: &Path) -> (Vec<String>, BTreeMap<String, String>) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'), "the file is cut short");
    let events: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(String::from)
        .collect();
    let last = text.lines().last().unwrap();
    let trailer = last
        .strip_prefix("# end ")
        .unwrap_or_else(|| panic!("no trailer as the last line: {last}"))
        .split(' ')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    (events, trailer)
}

#[test]
fn a_busy_target_is_stopped_at_each_limit() {
    if let Some(why) = cannot_capture() {
        println!("SKIPPED a_busy_target_is_stopped_at_each_limit: {why}");
        return;
    }
    let dir = scratch("busy");
    let exe = build_c(&dir, "busy", BUSY);
    let cap = dir.join("busy.fxc");

    // --seconds 2: the spec's bound is N + 2 s from the start of the capture (the
    // "capturing pid" line, after bpftrace attached; attaching itself is not timed). Before
    // the stop was enforced in futexhash, this target ran 20-60 s. The bound is checked on
    // the kernel's own times of the captured calls (the target runs from the start of the
    // capture to its stop), which this test's scheduling cannot stretch; the wall time this
    // test sees, which a busy machine can, only has to stay far below the old 20 s.
    let (mut child, attached, target) = start_busy(&exe, &cap, &["--seconds", "2"]);
    let status = wait_at_most(&mut child, Duration::from_secs(60));
    let took = attached.elapsed();
    assert_eq!(status.code(), Some(0));
    assert!(took < Duration::from_secs(15), "--seconds 2 took {took:?}");
    let (events, trailer) = events_and_trailer(&cap);
    let span = events_span(&events);
    assert!(
        span < Duration::from_secs(4),
        "--seconds 2 captured calls over {span:?}"
    );
    assert_eq!(trailer["reason"], "seconds");
    assert_eq!(trailer["events"], events.len().to_string());
    assert!(
        events.len() > 100,
        "a busy target made {} calls",
        events.len()
    );
    assert!(
        !Path::new(&format!("/proc/{target}")).exists(),
        "the busy target {target} still runs"
    );

    // --max-events 100: exactly 100 event lines (the busy target makes plain futex calls,
    // which have no vector entries to keep together).
    let (mut child, _, _) = start_busy(&exe, &cap, &["--max-events", "100"]);
    assert_eq!(
        wait_at_most(&mut child, Duration::from_secs(60)).code(),
        Some(0)
    );
    let (events, trailer) = events_and_trailer(&cap);
    assert_eq!(events.len(), 100);
    assert_eq!(trailer["reason"], "max-events");
    assert_eq!(trailer["events"], "100");
    assert!(
        events
            .iter()
            .all(|l| l.starts_with("futex ") || l.starts_with("fork ") || l.starts_with("exit ")),
        "{events:?}"
    );

    // --max-bytes 5000: at most 5000 bytes of event lines, and no room left for another.
    let (mut child, _, _) = start_busy(&exe, &cap, &["--max-bytes", "5000"]);
    assert_eq!(
        wait_at_most(&mut child, Duration::from_secs(60)).code(),
        Some(0)
    );
    let (events, trailer) = events_and_trailer(&cap);
    let bytes: usize = events.iter().map(|l| l.len() + 1).sum();
    let longest = events.iter().map(|l| l.len() + 1).max().unwrap();
    assert!(bytes <= 5000 && bytes + longest > 5000, "{bytes} bytes");
    assert_eq!(trailer["reason"], "max-bytes");
    assert_eq!(trailer["events"], events.len().to_string());

    // The files read back as captures (the reader counts the calls).
    let d = common::futexhash(&[
        "dist",
        "--algo",
        "jhash2",
        "--buckets",
        "16",
        "--weight",
        "ops",
        "--workload",
        &format!("trace:{}", cap.display()),
        "--format",
        "json",
    ]);
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    let v: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    let calls = events.iter().filter(|l| l.starts_with("futex ")).count();
    assert_eq!(v[0]["keys"], calls);
    assert!(
        String::from_utf8_lossy(&d.stderr).contains("stopped on max-bytes"),
        "{}",
        String::from_utf8_lossy(&d.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The span of the captured calls: the last event's time minus the first's (the `T`
/// column, CLOCK_MONOTONIC ns).
fn events_span(events: &[String]) -> Duration {
    let times: Vec<u64> = events
        .iter()
        .filter_map(|l| l.split(' ').nth(1)?.parse().ok())
        .collect();
    assert!(!times.is_empty(), "no timed events: {events:?}");
    let (lo, hi) = (times.iter().min().unwrap(), times.iter().max().unwrap());
    Duration::from_nanos(hi - lo)
}

/// SIGINT stops a capture of a target that never pauses, keeping what it captured. The
/// capture has a 30 s limit of its own; the signal comes once the target has run for
/// 0.2 s of CPU time (thousands of calls, however long the machine took to give it that),
/// and the capture must end because of it (`reason=interrupted`), well before its limit:
/// within 15 s, a bound only a capture that ignores the signal reaches, whatever the load
/// (the spec's 2 s is what an idle machine shows, docs/capture.md).
#[test]
fn sigint_stops_a_busy_capture_before_its_time_limit() {
    if let Some(why) = cannot_capture() {
        println!("SKIPPED sigint_stops_a_busy_capture_before_its_time_limit: {why}");
        return;
    }
    let dir = scratch("busy-sigint");
    let exe = build_c(&dir, "busy", BUSY);
    let cap = dir.join("busy.fxc");
    let (mut child, _, target) = start_busy(&exe, &cap, &["--seconds", "30"]);
    let enough = (0.2 * common::signals::ticks_per_second() as f64).ceil() as u64;
    assert!(
        common::signals::wait_for(Duration::from_secs(60), || {
            common::signals::process_cpu_ticks(target) >= enough
        }),
        "the busy target {target} never ran"
    );
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let signalled = Instant::now();
    let status = wait_at_most(&mut child, Duration::from_secs(60));
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(130));
    assert!(took < Duration::from_secs(15), "SIGINT took {took:?}");
    let (events, trailer) = events_and_trailer(&cap);
    assert_eq!(trailer["reason"], "interrupted");
    assert_eq!(trailer["events"], events.len().to_string());
    assert!(
        events.len() > 100,
        "a busy target made {} calls",
        events.len()
    );
    assert!(
        !Path::new(&format!("/proc/{target}")).exists(),
        "the busy target {target} still runs"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_refused_before_any_work() {
    let dir = scratch("bad");
    let cap = dir.join("x.fxc");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["capture", "-o", "/proc/nonexistent/x", "--", "true"],
            "/proc/nonexistent/x",
        ),
        (
            vec!["capture", "-o", cap.to_str().unwrap(), "-p", "4000000000"],
            "4000000000",
        ),
        (
            vec!["capture", "-o", cap.to_str().unwrap(), "-p", "3999999"],
            "3999999",
        ),
        (
            vec![
                "capture",
                "-o",
                cap.to_str().unwrap(),
                "--",
                "/no/such/program",
            ],
            "/no/such/program",
        ),
        (vec!["capture", "--seconds", "-1", "--", "true"], "-1"),
        (vec!["capture", "--seconds", "abc", "--", "true"], "abc"),
        (
            vec!["capture", "--max-events", "0", "--", "true"],
            "--max-events '0'",
        ),
        (vec!["capture", "--max-events", "-5", "--", "true"], "-5"),
        (
            vec!["capture", "--max-bytes", "1x", "--", "true"],
            "--max-bytes '1x'",
        ),
        (vec!["capture"], "required"),
    ];
    for (args, needle) in cases {
        let out = common::futexhash(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // bpftrace missing: one line saying how to install it.
    let out = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(["capture", "-o", cap.to_str().unwrap(), "--", "/bin/true"])
        .env("PATH", &dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("apt-get install bpftrace"), "{err}");
    assert!(!cap.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn checked_in_captures_go_through_dist_and_sim() {
    // Runs everywhere (no bpftrace needed). The expectation is counted here from the file:
    // distinct (mm, uaddr, private) words of the `futex` lines, and all their words.
    let file = "data/traces/sort-parallel.fxc";
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let mut distinct = BTreeSet::new();
    let mut words = 0u64;
    for l in text.lines().filter(|l| l.starts_with("futex ")) {
        let f: Vec<&str> = l.split(' ').collect();
        let op: u32 = f[5].parse().unwrap();
        let mut ws = vec![f[6]];
        if [3, 4, 5, 11, 12].contains(&(op & 127)) {
            ws.push(f[9]);
        }
        for w in ws {
            distinct.insert((f[4].to_string(), w.to_string(), op & 128));
            words += 1;
        }
    }
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("futex_") || l.starts_with("v "))
    );
    let w = format!("trace:{file}");
    for (weight, want) in [("keys", distinct.len() as u64), ("ops", words)] {
        let out = common::futexhash(&[
            "dist",
            "--algo",
            "all",
            "--buckets",
            "64",
            "--workload",
            &w,
            "--weight",
            weight,
            "--format",
            "json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for r in v.as_array().unwrap() {
            assert_eq!(r["keys"], want, "{weight}: {r}");
            assert_eq!(r["weight"], weight);
        }
    }
    let out = common::futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "--workload",
        &w,
        "-b",
        "0,2,16",
        "--think-scale",
        "0",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let recs = v.as_array().unwrap();
    assert_eq!(recs.len(), 3);
    let calls = text.lines().filter(|l| l.starts_with("futex ")).count() as u64;
    for r in recs {
        assert_eq!(r["ops"], calls);
        assert_eq!(r["think"], "captured");
        assert!(r["contended_pct"].as_f64().unwrap() >= 0.0);
    }
    // Two slots per process contend more than the global hash.
    assert!(recs[1]["contended_pct"].as_f64() > recs[0]["contended_pct"].as_f64());
    let bad = common::futexhash(&[
        "sim",
        "--profile",
        "seed-256cpu",
        "--workload",
        &w,
        "-t",
        "4",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    for (args, needle) in [
        (vec!["--think-scale", "-1"], "-1"),
        (
            vec!["--think-scale", "2", "--workload", "hash"],
            "trace:FILE",
        ),
        (vec!["--workload", "trace:/no/such.fxc"], "/no/such.fxc"),
    ] {
        let mut all = vec!["sim", "--profile", "seed-256cpu"];
        if !args.contains(&"--workload") {
            all.extend(["--workload", w.as_str()]);
        }
        all.extend(args.iter().copied());
        let bad = common::futexhash(&all);
        let err = String::from_utf8_lossy(&bad.stderr);
        assert_eq!(bad.status.code(), Some(2), "{all:?}: {err}");
        assert!(
            err.contains(needle) && err.trim().lines().count() == 1,
            "{all:?}: {err}"
        );
    }
    let bad = common::futexhash(&["dist", "--weight", "ops", "--workload", "perf"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("trace:FILE"));
}

#[test]
fn print_script_shows_the_program_without_running_it() {
    let out = common::futexhash(&[
        "capture",
        "--print-script",
        "-p",
        &std::process::id().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains(&format!("@f[{}] = 1;", std::process::id())),
        "{s}"
    );
    assert!(s.contains("tracepoint:syscalls:sys_enter_futex /@f[pid]/"));
    assert!(s.contains("kretprobe:get_futex_key"));
    let out = common::futexhash(&["capture", "--print-script", "--no-kernel-key", "--", "true"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("@f[0] = 1;") && !s.contains("get_futex_key"),
        "{s}"
    );
}

/// A capture cut short (its trailer gone, its last line half-written) says so on stderr
/// through `keys` as through `dist`: `keys` printed the keys silently.
#[test]
fn keys_of_a_truncated_capture_print_the_workload_note() {
    let d = scratch("truncated");
    let full =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/traces/sort-parallel.fxc"))
            .unwrap();
    let cut = d.join("cut.fxc");
    std::fs::write(&cut, &full[..9040.min(full.len())]).unwrap();
    let w = format!("trace:{}", cut.display());
    for cmd in [
        vec!["keys", "--workload", &w],
        vec!["dist", "--workload", &w, "--buckets", "64"],
    ] {
        let out = common::futexhash(&cmd);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cmd:?}: {err}");
        assert!(
            err.contains("1 unparseable line(s)") && err.contains("no '# end' trailer"),
            "{cmd:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `capture -o /dev/full` traced the whole command and only then failed to write, exit 1,
/// where every other writer refuses an output that takes no bytes with exit 2 (docs/cli.md:
/// an unwritable output path is bad input). The output is now opened and probed before
/// anything starts: exit 2, one line naming the path and the reason, and the command never
/// runs (its marker file is not made). Runs everywhere: it stops before bpftrace is needed.
#[test]
fn a_full_device_as_output_is_refused_before_the_command_starts() {
    let dir = scratch("full");
    // A private copy of the full device (major 1, minor 7) where this process may make one.
    let copy = dir.join("full");
    let c = std::ffi::CString::new(copy.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path; mknod(2) only reads it.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) };
    let full = if made == 0 {
        copy
    } else {
        PathBuf::from("/dev/full")
    };
    let marker = dir.join("started");
    let out = common::futexhash(&[
        "capture",
        "-o",
        full.to_str().unwrap(),
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("'{}'", full.display())) && err.contains("No space left on device"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran: {err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

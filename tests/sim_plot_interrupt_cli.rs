//! `sim --plot` stopped by SIGINT before any configuration with a private table finished:
//! the interruption is what is reported (exit 130, one line, nothing written), not the
//! refusal of a plot with nothing on its axis (exit 2, after the table was written).
//! The signal is sent when the progress line (stderr on a pseudo-terminal) says the first
//! of the two configurations is done, so the test waits for an event, not for a time.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fh-sim-plot-int-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn sigint_before_any_private_table_finished_is_exit_130_and_writes_nothing() {
    let dir = scratch("plot");
    let plot = dir.join("sim.svg");
    let out = dir.join("sim.txt");
    // Two configurations, run one after the other: 6.15's `auto` is its global hash (no
    // point on the plot's slots axis), 6.17's a private table. Each takes seconds, the
    // second as long as the first.
    let (tty, screen) = common::pty::terminal();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_futexhash"));
    cmd.args([
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "240",
        "--kernel",
        "6.15,6.17",
        "-b",
        "auto",
        "--ops",
        "200000",
        "--plot",
    ])
    .arg(&plot)
    .arg("--output")
    .arg(&out)
    .current_dir(env!("CARGO_MANIFEST_DIR"))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(tty);
    let mut child = cmd.spawn().expect("start futexhash");
    drop(cmd);
    let t0 = Instant::now();
    while !screen.text().contains("1 of 2 configurations done") {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("ended ({status}) before its first configuration was done");
        }
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "no configuration done in 10 minutes: {}",
            screen.text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the child's pid, which it still has (it has not been waited for).
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let shown = screen.closed_text();
    assert_eq!(o.status.code(), Some(130), "{shown}");
    assert!(o.stdout.is_empty());
    assert!(
        shown.contains("futexhash: interrupted (SIGINT): ") && shown.contains("nothing written"),
        "{shown}"
    );
    assert!(!shown.contains("error"), "{shown}");
    assert!(!out.exists(), "the table was written");
    assert!(!plot.exists(), "a plot was written");
    let _ = std::fs::remove_dir_all(&dir);
}

//! Long runs show their progress on stderr, one line updated in place, when stderr is a
//! terminal (here a pseudo-terminal), and nothing at all when it is not: a piped run's
//! stderr holds only its own lines (docs/cli.md).

mod common;

use common::{pty, repo};
use std::process::{Command, Stdio};

/// Runs futexhash with stderr on a terminal: (exit status, stdout, what the terminal
/// showed).
fn on_terminal(args: &[&str]) -> (Option<i32>, String, String) {
    let (child, screen) = pty::spawn_on_terminal(args);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        screen.closed_text(),
    )
}

/// Runs futexhash with stderr piped: (exit status, stdout, stderr).
fn piped(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run futexhash");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("futexhash-progress-{}-{name}", std::process::id()))
}

/// `sim calibrate` ran 20 s and more in silence. On a terminal it says which step runs
/// (`fit 1 of 1`); piped, its stderr is its one closing line.
#[test]
fn sim_calibrate_shows_its_fits_on_a_terminal_only() {
    let out = tmp("fitted.toml");
    let template = repo("data/machines/seed-256cpu-template.toml");
    let from = repo("data/published/buckets-240threads-256cpu.csv");
    let args = [
        "sim",
        "calibrate",
        "--from",
        &from,
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
        "--ops",
        "300",
    ];
    let (code, _, screen) = on_terminal(&args);
    assert_eq!(code, Some(0), "{screen}");
    assert!(screen.contains("sim calibrate: fit 1 of 1"), "{screen}");
    assert!(screen.contains("futexhash: fitted"), "{screen}");
    let (code, stdout, err) = piped(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(stdout.is_empty(), "{stdout}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "progress noise on a pipe: {err:?}");
    assert!(lines[0].starts_with("futexhash: fitted"), "{err}");
    assert!(!err.contains('\r') && !err.contains('\x1b'), "{err:?}");
    let _ = std::fs::remove_file(&out);
}

/// `sim` showed nothing before its first byte (40 s for a long configuration), and its
/// bar only for sweeps. On a terminal it counts the configurations done; piped, its
/// stderr holds only its notes.
#[test]
fn sim_counts_its_configurations_on_a_terminal_only() {
    let args = [
        "sim",
        "--profile",
        "seed-256cpu",
        "-t",
        "64",
        "-b",
        "2,64",
        "--ops",
        "300",
        "--format",
        "csv",
    ];
    let (code, stdout, screen) = on_terminal(&args);
    assert_eq!(code, Some(0), "{screen}");
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(screen.contains("sim: "), "{screen}");
    assert!(screen.contains(" of 2 configurations done"), "{screen}");
    let (code, stdout, err) = piped(&args);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(
        err.lines().all(|l| l.starts_with("futexhash: note: ")),
        "progress noise on a pipe: {err:?}"
    );
    assert!(!err.contains("configurations done"), "{err:?}");
}

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

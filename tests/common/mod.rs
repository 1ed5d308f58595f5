//! Helpers shared by the command-line tests: run the built binary, and the stable JSON
//! fields of `bench` and `sim` records; [`pty`] puts a child's stderr on a terminal,
//! [`signals`] interrupts a running child.
#![allow(dead_code)] // each test crate uses a different subset

pub mod pty;
pub mod signals;

use std::path::Path;
use std::process::{Command, Output};

/// The absolute path of `rel`, a file of the source tree.
pub fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

/// Runs `futexhash ARGS` from the source tree (so `data/` resolves as for a user there).
pub fn futexhash(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_futexhash"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run futexhash")
}

/// The JSON fields every `bench` (and `sim`) record must have.
pub const BENCH_SPEC_FIELDS: [&str; 13] = [
    "backend",
    "algo",
    "table",
    "layout",
    "buckets",
    "threads",
    "futexes",
    "runtime_s",
    "ops_per_sec",
    "ops_per_sec_total",
    "stderr_pct",
    "latency_ns_p50",
    "latency_ns_p99",
];

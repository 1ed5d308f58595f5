//! End-to-end throughput: the `perf bench futex hash` workload (`tools/perf/bench/
//! futex-hash.c`) run by [`runner`] against a [`runner::Backend`]: the real kernel
//! ([`kernel`]: `futex(2)` and the private hash of `prctl(PR_FUTEX_HASH)`, Linux 6.16+) or a
//! model bucket table. [`stats`] reproduces perf's mean and standard error; [`plot`] draws
//! ops/sec against bucket counts.

pub mod kernel;
pub mod plot;
pub mod record;
pub mod runner;
pub mod stats;

pub use record::BenchRecord;
pub use runner::{Backend, RunConfig, RunOutcome, ThreadOutcome, Worker, Workload};
pub use stats::ThroughputStats;

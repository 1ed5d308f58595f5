//! End-to-end throughput: the `perf bench futex hash` workload (`tools/perf/bench/
//! futex-hash.c`) run by [`runner`] against a [`runner::Backend`]: the real kernel
//! ([`kernel`]: `futex(2)` and the private hash of `prctl(PR_FUTEX_HASH)`, Linux 6.16+) or a
//! model bucket table ([`model`], `crate::table`). [`sweep`] runs whole sweeps (the CLI and
//! `futexhash report` call it); [`contend`] has the `lock` (futex_numa) and `noisy`
//! (noisy neighbour) workloads; [`compare`] measures the performance figures side by side;
//! [`stats`] reproduces perf's mean and standard error; [`record`] renders results
//! (perf's lines, the seed's table, plots through `crate::render::plot`).

pub mod compare;
pub mod contend;
pub mod kernel;
pub mod model;
pub mod runner;
pub mod sweep;

pub use runner::{Backend, RunConfig, Worker};
pub use sweep::{BackendChoice, ModelOptions, SweepSpec, sweep, sweep_records};

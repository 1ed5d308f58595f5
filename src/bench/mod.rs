//! End-to-end throughput: the `perf bench futex hash` workload (`tools/perf/bench/
//! futex-hash.c`) run by [`runner`] against a [`runner::Backend`]: the real kernel
//! ([`kernel`]: `futex(2)` and the private hash of `prctl(PR_FUTEX_HASH)`, Linux 6.16+) or a
//! model bucket table ([`backend`], `crate::table`).
//!
//! The files, bottom up: [`options`] (what they all share: backend choice, model options,
//! the error type), [`interrupt`] (SIGINT/SIGTERM), [`runner`] (perf's loop), [`backend`]
//! and [`kernel`] (where the operations go), [`lock`] (the futex_numa lock workload),
//! [`child`] (the kernel backend's child process: the only file that knows the binary
//! re-executes itself), then the drivers: [`sweep`] (whole sweeps; the CLI and
//! `futexhash report` call it), [`noisy`] (the noisy-neighbour workload), [`contend`]
//! (`lock`/`noisy` records), [`compare`] (the performance figures side by side) and
//! [`limits`] (what a run needs, checked before it starts).

pub mod backend;
pub mod child;
pub mod compare;
pub mod contend;
pub mod interrupt;
pub mod kernel;
pub mod limits;
pub mod lock;
pub mod noisy;
pub mod options;
pub mod runner;
pub mod sweep;

pub use options::{BackendChoice, BenchError, ModelOptions};
pub use runner::{Backend, RunConfig, Worker};
pub use sweep::{SweepSpec, sweep, sweep_records};

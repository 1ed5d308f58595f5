//! What a throughput run measured, as plain data shared by every layer that produces or
//! shows throughput (the benches, the simulator, the report): the per-thread outcome of a
//! run, its statistics, and its record with the fields of docs/cli.md.

use serde::{Deserialize, Serialize};

/// What each thread does to its futex words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// `perf bench futex hash`: wait with a wrong expected value; fails with EAGAIN.
    Hash,
    /// Wake one waiter on words nobody waits on; returns 0 woken.
    Wake,
}

impl Workload {
    /// The lowercase name used on the command line and in records.
    pub fn as_str(self) -> &'static str {
        match self {
            Workload::Hash => "hash",
            Workload::Wake => "wake",
        }
    }
}

/// What one thread did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadOutcome {
    /// The CPU it was pinned to (None: not pinned, or pinning failed).
    pub cpu: Option<usize>,
    /// Operations completed.
    pub ops: u64,
    /// Its own running time, seconds.
    pub secs: f64,
    /// CPU time the thread consumed while running, seconds (`CLOCK_THREAD_CPUTIME_ID`).
    /// Below `secs` when other processes took the CPU from it.
    pub cpu_secs: f64,
    /// Operations that did not return what the workload expects (perf warns on these).
    pub unexpected: u64,
    /// Address of its first futex word.
    pub first_addr: usize,
    /// Address of its last futex word.
    pub last_addr: usize,
}

impl ThreadOutcome {
    /// Operations per second of CPU time this thread got (the cost of an operation,
    /// independent of how much the scheduler let it run).
    pub fn rate_per_cpu_sec(&self) -> f64 {
        if self.cpu_secs > 0.0 {
            self.ops as f64 / self.cpu_secs
        } else {
            0.0
        }
    }

    /// Operations per second of this thread.
    pub fn rate(&self) -> f64 {
        if self.secs > 0.0 {
            self.ops as f64 / self.secs
        } else {
            0.0
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Wall-clock time between releasing the threads and raising the stop flag, seconds.
    pub runtime_s: f64,
    /// One entry per thread, in thread order.
    pub threads: Vec<ThreadOutcome>,
    /// Sampled per-operation latency, nanoseconds: median.
    pub latency_ns_p50: u64,
    /// 99th percentile.
    pub latency_ns_p99: u64,
    /// 99.9th percentile.
    pub latency_ns_p999: u64,
    /// Number of timed operations behind the percentiles.
    pub latency_samples: u64,
}

impl RunOutcome {
    /// Per-thread rates, in thread order.
    pub fn rates(&self) -> Vec<f64> {
        self.threads.iter().map(ThreadOutcome::rate).collect()
    }
}

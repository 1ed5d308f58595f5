//! A discrete-event contention simulator: predicts `perf bench futex hash` on machines we
//! do not have, from the real hashers on the real keys.
//!
//! Model (one run): T threads pinned round-robin to the CPUs of a machine profile
//! ([`profile::MachineProfile`]), each looping over its own futex keys as
//! `tools/perf/bench/futex-hash.c` does. One operation of thread `t` on key `k`:
//!
//! 1. work outside the lock (`outside_ns`: syscall entry/exit, `get_futex_key()`) plus the
//!    hasher's own cost (`hash_ns`);
//! 2. acquire the bucket lock of `bucket(hash(k))`: the kernel's queued spinlock is FIFO, so
//!    the thread starts at `max(arrival, lock free)`. If it had to wait, the lock is handed
//!    over from the previous holder (`handoff_local_ns` within a node, `handoff_remote_ns`
//!    across nodes: the queued-spinlock hand-off with its cache-line traffic); if the lock
//!    was free but its cache line was last owned by another CPU, it pays a plain line
//!    migration (`line_miss_ns`, times the remote/local ratio across nodes). Waiters spin,
//!    i.e. burn their own CPU;
//! 3. hold the lock for `hold_ns` (compare the futex word, `futex_q_unlock()`).
//!
//! Arrivals are processed in global time order, which is exactly FIFO queueing at every
//! lock, so one priority queue of next-arrival times is the whole simulator: O(ops·log T).
//! Deterministic: no randomness beyond the key set, and ties break by thread index.
//!
//! Limits, stated rather than hidden: no cache misses on the futex words themselves, no
//! memory bandwidth, no scheduler; when threads outnumber CPUs the threads sharing a CPU
//! are serialised on it (each op also waits for its CPU), which ignores preemption while
//! spinning.

pub mod calibrate;
pub mod profile;
pub mod sweep;
pub mod trace_replay;
pub mod validate;

use crate::throughput::stats::ThroughputStats;
use profile::MachineProfile;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Which loop the simulated threads run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SimOp {
    /// `perf bench futex hash`: `FUTEX_WAIT` with a wrong expected value, failing with
    /// `EAGAIN` after locking the bucket.
    #[default]
    WaitFail,
    /// `FUTEX_WAKE` on a futex nobody waits on: the lockless `futex_hb_waiters_pending()`
    /// check returns before the lock, so only the outside work and the hash remain.
    WakeNone,
}

/// Where each simulated thread runs and which buckets its operations hit, in order.
#[derive(Clone, Debug)]
pub struct SimWorkload {
    /// The loop every thread runs.
    pub op: SimOp,
    /// Per thread: the bucket index of each of its futexes, visited cyclically.
    pub buckets_per_thread: Vec<Vec<u32>>,
    /// Per thread: the CPU it is pinned to.
    pub cpu_of_thread: Vec<u32>,
    /// Number of distinct locks (table buckets).
    pub locks: usize,
}

/// Result of one simulated run.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    /// Mean per-thread operations per second (perf's "Averaged N operations/sec").
    pub ops_per_sec: f64,
    /// All threads together.
    pub ops_per_sec_total: f64,
    /// Standard error of the per-thread mean, in percent of it.
    pub stderr_pct: f64,
    /// Median simulated latency of one operation, ns.
    pub latency_ns_p50: f64,
    /// 99th percentile simulated latency, ns.
    pub latency_ns_p99: f64,
    /// 99.9th percentile simulated latency, ns.
    pub latency_ns_p999: f64,
    /// Simulated (virtual) time the run covered, seconds.
    pub simulated_secs: f64,
}

/// How long to simulate.
#[derive(Clone, Copy, Debug)]
pub struct SimLength {
    /// Operations per thread discarded as warm-up.
    pub warmup_ops: u32,
    /// Operations per thread measured after warm-up.
    pub measured_ops: u32,
}

impl Default for SimLength {
    fn default() -> Self {
        SimLength {
            warmup_ops: 200,
            measured_ops: 1500,
        }
    }
}

/// Time unit inside the simulator: picoseconds, so that sub-ns costs add up exactly.
fn ps(ns: f64) -> u64 {
    (ns * 1000.0).round().max(0.0) as u64
}

/// Assigns `threads` threads round-robin to `cpus` (perf pins thread `i` to CPU `i % C`).
pub fn round_robin_cpus(threads: usize, cpus: &[u32]) -> Vec<u32> {
    (0..threads).map(|i| cpus[i % cpus.len()]).collect()
}

/// Runs the simulation of `w` on machine `m` with per-hash cost `hash_ns`.
pub fn simulate(m: &MachineProfile, w: &SimWorkload, hash_ns: f64, len: SimLength) -> SimResult {
    let threads = w.buckets_per_thread.len();
    assert_eq!(threads, w.cpu_of_thread.len());
    assert!(threads > 0 && w.locks > 0);
    let outside = ps(m.outside_ns + hash_ns);
    let hold = ps(m.hold_ns);
    let local = ps(m.handoff_local_ns);
    let remote = ps(m.handoff_remote_ns);
    let miss_local = ps(m.line_miss_ns);
    let miss_remote = ps(m.line_miss_ns * m.remote_ratio());
    let cpus_per_node = (m.cpus / m.nodes.max(1)).max(1);
    let node_of = |cpu: u32| cpu / cpus_per_node;

    const NO_CPU: u32 = u32::MAX;
    let mut lock_free_at = vec![0u64; w.locks];
    let mut lock_last_cpu = vec![NO_CPU; w.locks];
    // A CPU shared by several threads runs one operation at a time.
    let max_cpu = w.cpu_of_thread.iter().copied().max().unwrap_or(0) as usize;
    let mut cpu_free_at = vec![0u64; max_cpu + 1];

    let mut pos = vec![0usize; threads];
    let mut done = vec![0u32; threads];
    let mut measure_start = vec![0u64; threads];
    let mut measure_end = vec![0u64; threads];
    let total_ops = len.warmup_ops + len.measured_ops;
    let mut latencies: Vec<u64> = Vec::with_capacity(threads * 64);

    // Each thread first does its outside work; stagger starts by thread index so ties are
    // deterministic and threads do not all arrive at the same picosecond.
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = (0..threads as u32)
        .map(|t| Reverse((outside + u64::from(t), t)))
        .collect();

    while let Some(Reverse((arrival, t))) = heap.pop() {
        let ti = t as usize;
        let keys = &w.buckets_per_thread[ti];
        let lock = keys[pos[ti] % keys.len()] as usize;
        pos[ti] += 1;
        let cpu = w.cpu_of_thread[ti];
        if w.op == SimOp::WakeNone {
            // No lock, no write to the bucket: the op ends where the outside work ends.
            done[ti] += 1;
            if done[ti] == len.warmup_ops {
                measure_start[ti] = arrival;
            }
            if done[ti] > len.warmup_ops && done[ti] % 16 == 0 {
                latencies.push(outside);
            }
            if done[ti] == total_ops {
                measure_end[ti] = arrival;
                continue;
            }
            let cpu_slot = &mut cpu_free_at[cpu as usize];
            let next_begin = arrival.max(*cpu_slot);
            *cpu_slot = next_begin + outside;
            heap.push(Reverse((next_begin + outside, t)));
            continue;
        }
        let contended = arrival < lock_free_at[lock];
        let mut start = arrival.max(lock_free_at[lock]);
        let last = lock_last_cpu[lock];
        if last != NO_CPU && last != cpu {
            let same_node = node_of(last) == node_of(cpu);
            start += match (contended, same_node) {
                (true, true) => local,
                (true, false) => remote,
                (false, true) => miss_local,
                (false, false) => miss_remote,
            };
        }
        let release = start + hold;
        lock_free_at[lock] = release;
        lock_last_cpu[lock] = cpu;
        let began = arrival.saturating_sub(outside);
        done[ti] += 1;
        if done[ti] == len.warmup_ops {
            measure_start[ti] = release;
        }
        if done[ti] > len.warmup_ops && done[ti] % 16 == 0 {
            latencies.push(release - began);
        }
        if done[ti] == total_ops {
            measure_end[ti] = release;
            continue;
        }
        // The CPU is taken for at least outside + hold by each op of a thread pinned to it
        // (a lower bound: waiting time spent spinning is not charged to the others).
        let cpu_slot = &mut cpu_free_at[cpu as usize];
        let next_begin = release.max(*cpu_slot);
        *cpu_slot = next_begin + outside + hold;
        heap.push(Reverse((next_begin + outside, t)));
    }

    let rates: Vec<f64> = (0..threads)
        .map(|t| {
            let span = (measure_end[t] - measure_start[t]) as f64 * 1e-12;
            f64::from(len.measured_ops) / span
        })
        .collect();
    let stats = ThroughputStats::from_rates(&rates);
    latencies.sort_unstable();
    let pct = |p: f64| {
        if latencies.is_empty() {
            0.0
        } else {
            let i = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
            latencies[i] as f64 / 1000.0
        }
    };
    SimResult {
        ops_per_sec: stats.mean,
        ops_per_sec_total: stats.total,
        stderr_pct: stats.stderr_pct(),
        latency_ns_p50: pct(0.50),
        latency_ns_p99: pct(0.99),
        latency_ns_p999: pct(0.999),
        simulated_secs: (0..threads).map(|t| measure_end[t]).max().unwrap_or(0) as f64 * 1e-12,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(cpus: u32, nodes: u32) -> MachineProfile {
        MachineProfile {
            name: "test".into(),
            cpus,
            nodes,
            outside_ns: 400.0,
            hold_ns: 100.0,
            handoff_local_ns: 200.0,
            handoff_remote_ns: 600.0,
            line_miss_ns: 0.0,
            hash_ns: Default::default(),
        }
    }

    fn workload(
        threads: usize,
        cpus: u32,
        buckets: impl Fn(usize) -> Vec<u32>,
        locks: usize,
    ) -> SimWorkload {
        let all: Vec<u32> = (0..cpus).collect();
        SimWorkload {
            op: SimOp::WaitFail,
            buckets_per_thread: (0..threads).map(buckets).collect(),
            cpu_of_thread: round_robin_cpus(threads, &all),
            locks,
        }
    }

    #[test]
    fn uncontended_rate_is_one_over_the_op_cost() {
        // Every thread has its own bucket: no waiting, no hand-off after the first op.
        let m = machine(8, 1);
        let w = workload(8, 8, |t| vec![t as u32], 8);
        let r = simulate(&m, &w, 20.0, SimLength::default());
        let expect = 1e9 / (400.0 + 20.0 + 100.0);
        assert!(
            (r.ops_per_sec / expect - 1.0).abs() < 1e-3,
            "{r:?} vs {expect}"
        );
        assert!(r.stderr_pct < 1e-6);
        assert!((r.latency_ns_p50 - 520.0).abs() < 1.0);
    }

    #[test]
    fn one_saturated_lock_serialises_everyone() {
        // 8 threads on one bucket, outside work short compared to 8 holds: the lock is the
        // bottleneck, each op costs hold + local hand-off, shared by 8 threads.
        let mut m = machine(8, 1);
        m.outside_ns = 10.0;
        let w = workload(8, 8, |_| vec![0], 1);
        let r = simulate(&m, &w, 0.0, SimLength::default());
        let total_expect = 1e9 / (100.0 + 200.0);
        assert!(
            (r.ops_per_sec_total / total_expect - 1.0).abs() < 0.01,
            "{r:?}"
        );
    }

    #[test]
    fn cross_node_handoffs_cost_more() {
        let w1 = workload(8, 8, |_| vec![0], 1);
        let mut one_node = machine(8, 1);
        one_node.outside_ns = 10.0;
        let mut two_nodes = one_node.clone();
        two_nodes.nodes = 2;
        let a = simulate(&one_node, &w1, 0.0, SimLength::default());
        let b = simulate(&two_nodes, &w1, 0.0, SimLength::default());
        assert!(b.ops_per_sec < a.ops_per_sec * 0.8, "{a:?} {b:?}");
    }

    #[test]
    fn more_buckets_help_under_contention() {
        let m = machine(64, 2);
        let run = |locks: u32| {
            let w = workload(
                64,
                64,
                |t| (0..64).map(|i| (t as u32 * 64 + i * 7) % locks).collect(),
                locks as usize,
            );
            simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec
        };
        let (small, large) = (run(2), run(4096));
        assert!(large > 5.0 * small, "{small} {large}");
    }

    #[test]
    fn threads_sharing_a_cpu_are_serialised() {
        let m = machine(1, 1);
        let w = workload(2, 1, |t| vec![t as u32], 2);
        let r = simulate(&m, &w, 0.0, SimLength::default());
        let alone = 1e9 / 500.0;
        assert!((r.ops_per_sec_total / alone - 1.0).abs() < 0.05, "{r:?}");
    }

    #[test]
    fn wake_on_empty_buckets_never_contends() {
        let m = machine(8, 2);
        let mut w = workload(8, 8, |_| vec![0], 1);
        w.op = SimOp::WakeNone;
        let r = simulate(&m, &w, 25.0, SimLength::default());
        assert!((r.ops_per_sec / (1e9 / 425.0) - 1.0).abs() < 1e-3, "{r:?}");
    }
}

//! A discrete-event contention simulator: predicts `perf bench futex hash` on machines we
//! do not have, from the real hashers on the real keys, for the design choices the seed
//! threads argue about (bucket layout, lock kind, table size, the private hash's
//! reference count, SMT, more threads than CPUs).
//!
//! Model (one run): T threads pinned round-robin to the CPUs of a machine profile
//! ([`profile::MachineProfile`]), each looping over its own futex keys as
//! `tools/perf/bench/futex-hash.c` does. One operation of thread `t` on key `k`:
//!
//! 1. work outside the lock (`outside_ns`: syscall entry/exit, `get_futex_key()`) plus the
//!    hasher's own cost (`hash_ns`); with `--refcount shared` (Linux 6.16,
//!    `futex_private_hash_get()` on one `rcuref` per process) an atomic read-modify-write
//!    on one cache line shared by every thread, before the lock and again after it;
//!    `--refcount percpu` (6.17, commit 56180dd20c19) costs one local atomic;
//! 2. acquire the bucket lock of `bucket(hash(k))`. Both lock kinds are FIFO (the ticket
//!    lock of ≤ 4.1 and the queued spinlock of 4.2+), so the thread starts at
//!    `max(arrival, lock free)`. If it had to wait, the lock is handed over from the
//!    previous holder (`handoff_local_ns` within a node, `handoff_remote_ns` across), plus
//!    a term per waiter: `ticket_spinner_ns` for a ticket lock, whose waiters all spin on
//!    the lock word so that each release must reach every one of them (Boyd-Wickizer,
//!    Kaashoek, Morris, Zeldovich, "Non-scalable locks are dangerous", Linux Symposium
//!    2012), and the small `queue_spinner_ns` for a queued (MCS) lock, whose waiters spin
//!    on their own nodes. A queued lock's lone waiter (it came while the holder, or an
//!    uncontended acquirer whose line was still migrating to it, had the lock, and no one
//!    else waited) takes qspinlock's pending bit instead (kernel/locking/qspinlock.c,
//!    4.2+): one line migration after the release. If the lock was free but its cache
//!    line was last written by another CPU, the line migrates (`line_miss_ns`; across
//!    nodes `line_miss_remote_ns`, by default `line_miss_ns` times the hand-off's
//!    remote/local ratio). Lines are those of the bucket array: with packed 24-byte
//!    buckets (the pre-3.13 `struct futex_hash_bucket`: a spinlock and a `plist_head`) two or three
//!    buckets share a line, so an uncontended operation misses when a neighbour's lock
//!    moved it (the false sharing that 3.13's `____cacheline_aligned_in_smp` removed);
//! 3. hold the lock for `hold_ns` (compare the futex word, `futex_q_unlock()`).
//!
//! Line homes: every bucket line has a home node, where the kernel put the table's memory
//! ([`LineHomes`]: a private hash on the node of the thread that sized it, the global
//! hash per node from 6.16 or interleaved at boot in 2 MiB pages before). On a profile
//! with `home_snoop` (a coherence directory at the home memory, as AMD EPYC has) a
//! migration or hand-off is local only when both CPUs and the home share a node.
//!
//! SMT: CPUs `c` and `c + cores` are siblings (Linux x86 numbering); a thread whose
//! sibling CPU also runs a thread does its own work (outside, hash, hold) `smt_slowdown`
//! times slower — perf's threads never sleep, so a sibling with a thread is always busy.
//!
//! More threads than CPUs: the threads pinned to one CPU share it in round-robin time
//! slices of `timeslice_ns`; a thread only progresses inside its own slices. The bucket
//! lock is a spinlock, and `spin_lock()` disables preemption (non-`PREEMPT_RT` kernels),
//! so a spinning waiter or a holder is never descheduled: a slice that ends inside the
//! locked section is extended to the unlock. Lock-holder and lock-waiter preemption do not
//! happen on bare metal; they are a virtualisation effect (a vCPU descheduled by the
//! host), which this model does not include.
//!
//! Start: each bucket line begins owned by the thread that used it last in one pass of the
//! loop (perf's steady state, not a cold cache), and threads begin at seeded random points
//! of one outside period (a full FIFO queue keeps the order it first saw).
//!
//! Events (a thread arriving at the shared reference, at its bucket lock, or releasing
//! the reference) are processed in global time order, which is exactly FIFO queueing at
//! every lock, so one priority queue is the whole simulator: O(ops·log T). Deterministic:
//! no randomness beyond the key set and the seeded start order
//! ([`SimWorkload::start_order`]), and ties break by thread index.
//!
//! Limits, stated rather than hidden: no cache misses on the futex words themselves, no
//! memory bandwidth, no priority or load balancing in the scheduler (threads stay pinned,
//! as perf pins them), SMT modelled as a constant factor.

pub mod bucket_line;
pub mod calibrate;
mod events;
pub mod hashcost;
pub mod kernel;
pub mod profile;
pub mod sweep;
pub mod trace_replay;
pub mod validate;

use crate::rng::{GOLDEN_GAMMA, mix64};
use crate::throughput::stats::ThroughputStats;
use events::EventQueue;
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

/// The bucket lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockKind {
    /// Queued (MCS) spinlock, x86 since Linux 4.2.
    #[default]
    Queued,
    /// Ticket spinlock, x86 up to Linux 4.1.
    Ticket,
}

/// The private hash's reference, taken and dropped by every operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refcount {
    /// No reference (the global hash; the private hash of a frozen model).
    #[default]
    None,
    /// One atomic shared by all threads of the process (Linux 6.16).
    Shared,
    /// Per-CPU counters (Linux 6.17+).
    PerCpu,
}

/// Bytes of one `futex_hash_bucket` in the pre-3.13 packed layout.
pub const PACKED_BUCKET_BYTES: u32 = 24;
/// Bytes of a cache line, and of an aligned bucket.
pub const CACHE_LINE: u32 = 64;

/// The table design being simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Design {
    /// Lock kind.
    pub lock: LockKind,
    /// Reference per operation.
    pub refcount: Refcount,
    /// Bytes per bucket: 64 = cache-line aligned, 24 = the pre-3.13 packed layout.
    pub bucket_bytes: u32,
    /// Line transfers an operation pays before the lock beyond the one every layout pays
    /// ([`bucket_line::extra_prelock_transfers`]: 1 where `futex_hash()` reads `hb->priv`
    /// before `futex_hb_waiters_inc()`, 6.16-rc … 7.1), each from the line's last writer.
    pub extra_prelock_transfers: u32,
}

impl Default for Design {
    fn default() -> Self {
        Design {
            lock: LockKind::Queued,
            refcount: Refcount::None,
            bucket_bytes: CACHE_LINE,
            extra_prelock_transfers: 0,
        }
    }
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
    /// The table design.
    pub design: Design,
    /// Which random order the threads first reach their locks in (a seed; see
    /// [`simulate`]).
    pub start_order: u64,
    /// The NUMA node whose memory holds each lock's cache line.
    pub homes: LineHomes,
}

/// Where a table's memory lives: which node is the home of each bucket's cache line.
/// It matters on a machine whose coherence directory sits with the home memory
/// ([`MachineProfile::home_snoop`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineHomes {
    /// The whole table on the node of this CPU: a private hash, allocated (`kvzalloc`,
    /// node-local) by the thread that sized it — perf's main thread, which runs on the
    /// benchmark's CPUs.
    NodeOfCpu(u32),
    /// Consecutive blocks of this many bytes of the bucket array on nodes 0, 1, 2, … in
    /// turn (a cache line goes with the block its first byte is in): the global hash,
    /// one table per node from 6.16, before that one table interleaved page by page over
    /// the nodes at boot (`alloc_large_system_hash()` with `hashdist`).
    Blocks(u64),
}

impl Default for LineHomes {
    fn default() -> Self {
        LineHomes::NodeOfCpu(0)
    }
}

/// The interleave granule of a single global hash table of at least this size: a 2 MiB
/// huge page. Seed 000's boot log prints "futex hash table entries: 65536 (order: 10,
/// 4194304 bytes, vmalloc hugepage)": since Linux 5.13 `alloc_large_system_hash()` maps
/// its table with huge pages when it is that large, so its boot-time interleave moves in
/// 2 MiB steps; a smaller table is interleaved in base pages
/// ([`crate::key::PAGE_SIZE`]), as every table was before 5.13. (3.12's 256 buckets were a static array on node 0, which this
/// rule does not know: no profile with home snooping models 3.12.)
pub const GLOBAL_INTERLEAVE_BYTES: u64 = 2 << 20;

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

impl SimResult {
    /// The mean of several runs of one configuration (different start orders or key
    /// sets): rates, times and latency percentiles averaged field by field; `stderr_pct`
    /// is the standard error of the mean rate between the runs (each run's own spread
    /// over threads says nothing of how much the start order moves it). Panics on an
    /// empty slice.
    pub fn mean(runs: &[SimResult]) -> SimResult {
        assert!(!runs.is_empty(), "mean of no runs");
        let n = runs.len() as f64;
        let avg = |f: fn(&SimResult) -> f64| runs.iter().map(f).sum::<f64>() / n;
        let rate = avg(|r| r.ops_per_sec);
        let between = if runs.len() > 1 && rate > 0.0 {
            let var = runs
                .iter()
                .map(|r| (r.ops_per_sec - rate).powi(2))
                .sum::<f64>()
                / (n - 1.0);
            100.0 * (var / n).sqrt() / rate
        } else {
            runs[0].stderr_pct
        };
        SimResult {
            ops_per_sec: rate,
            ops_per_sec_total: avg(|r| r.ops_per_sec_total),
            stderr_pct: between,
            latency_ns_p50: avg(|r| r.latency_ns_p50),
            latency_ns_p99: avg(|r| r.latency_ns_p99),
            latency_ns_p999: avg(|r| r.latency_ns_p999),
            simulated_secs: avg(|r| r.simulated_secs),
        }
    }
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

/// Refuses, before any work, a run whose simulated time could overflow the event clock
/// (`events`: picoseconds in `64 - ceil(log2 threads)` bits, ≈ 1,100 s at 16,384 threads).
///
/// The bound is the fully serialised run: every operation of every thread one after the
/// other, each costing every cost of the profile (hand-offs, misses, atomics, the hash,
/// one queue-spinner term per thread) plus, when threads outnumber CPUs, a time slice per
/// operation for every thread sharing the CPU. Real runs are far below it; only absurd
/// profiles (costs near the 1 s maximum) with thousands of threads reach it.
pub fn check_clock(
    m: &MachineProfile,
    threads: usize,
    hash_ns: f64,
    len: SimLength,
) -> Result<(), String> {
    let t = threads.max(1) as f64;
    let per_op_ns = m.outside_ns
        + m.hold_ns
        + m.handoff_local_ns
        + m.handoff_remote_ns
        // The bucket's transfer, the `priv` read's (6.16-rc … 7.1), and the shared
        // reference's two (6.16-rc: one on taking it, one on dropping it).
        + 4.0 * m.line_miss_ns.max(m.line_miss_remote())
        + m.ticket_spinner_ns.unwrap_or(0.0) * t
        + m.queue_spinner_ns * t
        + 2.0 * m.atomic_ns
        + hash_ns;
    let per_op_ns = per_op_ns * m.smt_slowdown.unwrap_or(1.0).max(1.0);
    let sharing = (t / f64::from(m.cpus.max(1))).ceil();
    let ops = f64::from(len.warmup_ops) + f64::from(len.measured_ops);
    let bound_ps = ops * (t * per_op_ns + sharing * m.timeslice_ns) * 1000.0;
    let bits = threads.max(1).next_power_of_two().trailing_zeros();
    let limit_ps = (u64::MAX >> bits) as f64;
    if bound_ps < limit_ps {
        Ok(())
    } else {
        Err(format!(
            "{threads} threads on this profile could simulate up to {:.3e} s, beyond the simulator's clock ({:.0} s at that thread count): lower the profile's costs (per operation up to {per_op_ns:.3e} ns) or the threads",
            bound_ps / 1e12,
            limit_ps / 1e12
        ))
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

/// Round-robin time slices of the threads pinned to one CPU: thread `index` of `count`
/// runs in `[(m·count + index)·slice, (m·count + index + 1)·slice)` for every `m`.
#[derive(Clone, Copy, Debug)]
struct Slices {
    index: u32,
    count: u32,
    slice: u64,
}

impl Slices {
    /// `(index·slice, (index + 1)·slice, count·slice)`: the thread's slice in a period,
    /// and the period.
    fn bounds(&self) -> (u64, u64, u64) {
        let i = u64::from(self.index);
        (
            i * self.slice,
            (i + 1) * self.slice,
            u64::from(self.count) * self.slice,
        )
    }

    /// The earliest time ≥ `t` at which the thread runs.
    fn running_at(&self, t: u64) -> u64 {
        if self.count <= 1 {
            return t;
        }
        let (lo, hi, period) = self.bounds();
        let (m, r) = (t / period, t % period);
        if r < lo {
            m * period + lo
        } else if r < hi {
            t
        } else {
            (m + 1) * period + lo
        }
    }

    /// When `work` picoseconds of CPU time started at `t` are done.
    fn finish(&self, t: u64, work: u64) -> u64 {
        if self.count <= 1 {
            return t + work;
        }
        let (_, hi, period) = self.bounds();
        let mut t = self.running_at(t);
        let mut left = work;
        loop {
            let slice_end = (t / period) * period + hi;
            let here = slice_end - t;
            if left <= here {
                return t + left;
            }
            left -= here;
            t = self.running_at(slice_end);
        }
    }
}

/// The next thing a thread does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    /// Take the shared reference (6.16), then the bucket lock.
    Get,
    /// Acquire the bucket lock.
    Lock,
    /// Drop the shared reference after the unlock.
    Put,
}

/// Per-thread costs in picoseconds, SMT factor applied.
#[derive(Clone, Copy, Debug)]
struct ThreadCosts {
    outside: u64,
    hold: u64,
}

/// A simulated thread's state in the event loop.
#[derive(Clone, Copy, Debug)]
struct ThreadState {
    /// Outside work per operation, ps (SMT factor applied).
    outside: u64,
    /// Lock hold per operation, ps (SMT factor applied).
    hold: u64,
    /// Its time slices.
    slices: Slices,
    /// When the operation in progress began.
    began: u64,
    /// Its CPU.
    cpu: u32,
    /// Index of the next futex in its key list.
    pos: u32,
    /// That futex's bucket.
    next_bucket: u32,
    /// Operations completed.
    done: u32,
    /// What its pending event is.
    stage: Stage,
}

/// One contended cache line's state: when it is next free and which CPU wrote it last.
#[derive(Clone, Copy, Debug)]
struct Line {
    free_at: u64,
    /// When the last acquisition took the lock (its holder has it from then to `free_at`):
    /// its start, or for an uncontended one its arrival, the line's migration included.
    held_from: u64,
    last_cpu: u32,
}

const NO_CPU: u32 = u32::MAX;

/// The costs of moving a cache line or a lock between two CPUs.
struct Transfers {
    /// The node of each CPU, looked up rather than computed (`node_of` divides).
    node: Vec<u32>,
    /// Whether a transfer is local only when the line's home is the CPUs' node too.
    home_snoop: bool,
    local: u64,
    remote: u64,
    miss_local: u64,
    miss_remote: u64,
}

impl Transfers {
    /// Whether moving a line homed on node `home` from CPU `a` to CPU `b` stays within
    /// one node: both CPUs on one node and, with home snooping, the line's memory there
    /// too (the request goes to the home's directory, which forwards it to the owner).
    fn stays_local(&self, a: u32, b: u32, home: u32) -> bool {
        let node = self.node[a as usize];
        node == self.node[b as usize] && (!self.home_snoop || node == home)
    }
    fn handoff(&self, from: u32, to: u32, home: u32) -> u64 {
        if from == NO_CPU || from == to {
            0
        } else if self.stays_local(from, to, home) {
            self.local
        } else {
            self.remote
        }
    }
    fn miss(&self, from: u32, to: u32, home: u32) -> u64 {
        if from == NO_CPU || from == to {
            0
        } else if self.stays_local(from, to, home) {
            self.miss_local
        } else {
            self.miss_remote
        }
    }
}

/// The acquisitions still to start on one cache line's locks: their waiters spin on it.
#[derive(Clone, Debug, Default)]
struct LineSpinners {
    /// Start times, earliest on top. A min-heap, not a FIFO: one lock's starts are
    /// increasing, but those of the two or three packed buckets of a line interleave, and
    /// a queue popped from its front kept finished acquisitions behind a later one and
    /// counted them as spinners.
    starts: BinaryHeap<Reverse<u64>>,
}

impl LineSpinners {
    /// How many acquisitions on the line start after `now` (forgetting those that did).
    fn spinning_at(&mut self, now: u64) -> u64 {
        while self.starts.peek().is_some_and(|&Reverse(s)| s <= now) {
            self.starts.pop();
        }
        self.starts.len() as u64
    }

    fn push(&mut self, start: u64) {
        self.starts.push(Reverse(start));
    }
}

/// A uniform number in [0, 1) from (`seed`, `index`): SplitMix64's output function on a
/// position, hashed rather than drawn in sequence so that it does not depend on event
/// order.
fn unit_interval(seed: u64, index: u64) -> f64 {
    let z = mix64(
        seed.wrapping_mul(GOLDEN_GAMMA)
            .wrapping_add(index.wrapping_add(1).wrapping_mul(0xd1b5_4a32_d192_ed03)),
    );
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Asks the CPU to bring `x`'s cache line closer: a hint, without effect on the results.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints the cache: it never faults and reads nothing into
    // the program (any address is allowed, and this one is a valid reference anyway). Its
    // target feature, SSE, is part of the x86_64 baseline, so every x86_64 CPU has it.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(x).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Checks that the profile has what the design needs; the error names the missing field.
pub fn check_design(m: &MachineProfile, d: &Design) -> Result<(), String> {
    if d.lock == LockKind::Ticket && m.ticket_spinner_ns.is_none() {
        return Err(format!(
            "profile '{}' has no ticket_spinner_ns, which --lock ticket needs",
            m.name
        ));
    }
    if d.bucket_bytes == 0 || d.bucket_bytes > 4096 {
        return Err(format!(
            "bucket size {} bytes must be 1..=4096",
            d.bucket_bytes
        ));
    }
    Ok(())
}

/// Runs the simulation of `w` on machine `m` with per-hash cost `hash_ns`.
///
/// # Panics
/// If the workload is empty or its threads and CPUs disagree (callers build it from a
/// validated sweep).
pub fn simulate(m: &MachineProfile, w: &SimWorkload, hash_ns: f64, len: SimLength) -> SimResult {
    let threads = w.buckets_per_thread.len();
    assert_eq!(threads, w.cpu_of_thread.len());
    assert!(threads > 0 && w.locks > 0);
    let d = w.design;
    let max_cpu = w.cpu_of_thread.iter().copied().max().unwrap_or(0);
    let x = Transfers {
        node: (0..=max_cpu.max(m.cpus)).map(|c| m.node_of(c)).collect(),
        home_snoop: m.home_snoop,
        local: ps(m.handoff_local_ns),
        remote: ps(m.handoff_remote_ns),
        miss_local: ps(m.line_miss_ns),
        miss_remote: ps(m.line_miss_remote()),
    };
    let per_waiter = ps(match d.lock {
        LockKind::Ticket => m.ticket_spinner_ns.unwrap_or(0.0),
        LockKind::Queued => m.queue_spinner_ns,
    });
    // Start times of the acquisitions still pending on each cache line of contended locks
    // (only lines that ever had a waiter get an entry): the waiters ahead of an arrival.
    // Ticket waiters spin by reading the lock's line, so with packed buckets the spinners
    // of every bucket in the line are in the way of each release. At a saturated lock
    // that count equals, on average, the spinners behind it when its own hand-off
    // happens, which is what the per-waiter term charges.
    let mut pending: Vec<LineSpinners> = if per_waiter > 0 {
        let lines = (w.locks as u64 * u64::from(d.bucket_bytes)).div_ceil(u64::from(CACHE_LINE));
        vec![LineSpinners::default(); lines as usize]
    } else {
        Vec::new()
    };
    let atomic = ps(m.atomic_ns);
    // qspinlock (4.2+, kernel/locking/qspinlock.c): the first waiter sets the pending bit
    // and spins on the lock word itself; only later waiters queue on MCS nodes. The ticket
    // lock has no such path.
    let pending_bit = d.lock == LockKind::Queued;

    // Which CPUs have threads: for SMT siblings and for time slices.
    let mut on_cpu = vec![0u32; max_cpu.max(m.cpus) as usize + 1];
    let slices: Vec<Slices> = w
        .cpu_of_thread
        .iter()
        .map(|&c| {
            let index = on_cpu[c as usize];
            on_cpu[c as usize] += 1;
            Slices {
                index,
                count: 0,
                slice: ps(m.timeslice_ns).max(1),
            }
        })
        .collect::<Vec<_>>()
        .into_iter()
        .zip(&w.cpu_of_thread)
        .map(|(s, &c)| Slices {
            count: on_cpu[c as usize],
            ..s
        })
        .collect();
    let cores = m.cores() as usize;
    let sibling_busy = |cpu: u32| {
        let core = cpu as usize % cores;
        (0..m.threads_per_core as usize)
            .map(|k| core + k * cores)
            .any(|c| c != cpu as usize && on_cpu.get(c).is_some_and(|&n| n > 0))
    };
    let smt = m.smt_factor();
    let extra_outside = match d.refcount {
        Refcount::PerCpu => 2.0 * m.atomic_ns,
        _ => 0.0,
    };
    let costs: Vec<ThreadCosts> = w
        .cpu_of_thread
        .iter()
        .map(|&c| {
            let f = if sibling_busy(c) { smt } else { 1.0 };
            ThreadCosts {
                outside: ps((m.outside_ns + hash_ns + extra_outside) * f),
                hold: ps(m.hold_ns * f),
            }
        })
        .collect();

    // Per lock: when it is next free and which CPU last held it, side by side (one cache
    // line of the simulator's memory per lookup).
    let mut lock = vec![
        Line {
            free_at: 0,
            held_from: 0,
            last_cpu: NO_CPU,
        };
        w.locks
    ];
    let bytes = u64::from(d.bucket_bytes);
    let line_of = |b: usize| (b as u64 * bytes / u64::from(CACHE_LINE)) as usize;
    // Buckets of a cache line or more: one bucket per line, so the line's last writer is
    // the lock's last holder and no separate line state is needed.
    let lines_shared = d.bucket_bytes < CACHE_LINE;
    let nodes = u64::from(m.nodes.max(1));
    let table_node = match w.homes {
        LineHomes::NodeOfCpu(c) => x.node.get(c as usize).copied().unwrap_or(0),
        LineHomes::Blocks(_) => 0,
    };
    // The home of cache line `line`. Without home snooping no transfer looks at it, so the
    // per-operation divisions of an interleaved table are skipped.
    let home_of_line = |line: usize| match w.homes {
        LineHomes::Blocks(bytes) if x.home_snoop => {
            (line as u64 * u64::from(CACHE_LINE) / bytes.max(1) % nodes) as u32
        }
        _ => table_node,
    };
    // The shared reference lives in the private hash's header (`struct
    // futex_private_hash`), on the table's node; only a private hash has one.
    let reference_home = table_node;
    let mut line_last_cpu = if lines_shared {
        vec![NO_CPU; line_of(w.locks - 1) + 1]
    } else {
        Vec::new()
    };
    let mut reference = Line {
        free_at: 0,
        held_from: 0,
        last_cpu: NO_CPU,
    };

    // Steady state, not a cold start: perf runs for 10 s, so every bucket's line was last
    // written by whichever thread used it last. Starting from unowned lines made each
    // thread's first pass over its keys (1024 operations, longer than the warm-up) free
    // of migrations: the global hash of the 256-CPU profile then ran 2.05 M ops/s per
    // thread over 300 simulated operations and 1.83 M over 3000. One pass in the loop's
    // own interleaving (operation `i` of every thread, then `i + 1`) leaves each line
    // with the owner it has when the loop comes round again.
    if w.op == SimOp::WaitFail {
        let longest = w.buckets_per_thread.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for (keys, &cpu) in w.buckets_per_thread.iter().zip(&w.cpu_of_thread) {
                if let Some(&b) = keys.get(i) {
                    lock[b as usize].last_cpu = cpu;
                    if lines_shared {
                        line_last_cpu[line_of(b as usize)] = cpu;
                    }
                }
            }
        }
    }
    let total_ops = len.warmup_ops + len.measured_ops;
    let first = if d.refcount == Refcount::Shared {
        Stage::Get
    } else {
        Stage::Lock
    };
    // Everything the event loop touches per thread, in one 64-byte record (one cache line
    // per event instead of one per array).
    let mut th: Vec<ThreadState> = (0..threads)
        .map(|t| ThreadState {
            outside: costs[t].outside,
            hold: costs[t].hold,
            slices: slices[t],
            began: 0,
            cpu: w.cpu_of_thread[t],
            pos: 0,
            next_bucket: w.buckets_per_thread[t].first().copied().unwrap_or(0),
            done: 0,
            stage: first,
        })
        .collect();
    let mut measure_start = vec![0u64; threads];
    let mut measure_end = vec![0u64; threads];
    let mut latencies: Vec<u64> = Vec::with_capacity(threads * 64);

    // Each thread first does its outside work, started at a random point of one outside
    // period: real threads are created one by one and woken from perf's barrier or the
    // scheduler in no particular order. A FIFO lock that every contender re-enters at once
    // keeps the order it first saw (nothing in the model reorders a full queue later), so
    // that order must be random rather than by thread index, which put every node's
    // threads side by side in futex_numa's shared queue. Ties still break by index.
    let starts: Vec<u64> = th
        .iter()
        .enumerate()
        .map(|(t, s)| {
            let at = unit_interval(w.start_order, t as u64) * s.outside as f64;
            s.slices.finish(t as u64 + at as u64, s.outside)
        })
        .collect();
    let mut queue = EventQueue::new(&starts);

    while let Some((now, t)) = queue.peek() {
        let ti = t as usize;
        let s = &mut th[ti];
        let cpu = s.cpu;
        // When the operation in progress ends, if it ends at this event.
        let mut op_end = None;
        // The thread's next event when the operation goes on.
        let mut next = (0, first);
        match s.stage {
            st @ (Stage::Get | Stage::Put) => {
                // One atomic RMW on the shared reference's line: FIFO on the line, the
                // line moves from its last writer.
                let start = s.slices.running_at(now.max(reference.free_at));
                let end = start + x.miss(reference.last_cpu, cpu, reference_home) + atomic;
                // `held_from` is a bucket lock's (the pending bit); the reference has none.
                reference = Line {
                    free_at: end,
                    last_cpu: cpu,
                    ..reference
                };
                if st == Stage::Get {
                    next = (end, Stage::Lock);
                } else {
                    op_end = Some(end);
                }
            }
            // No lock, no write to the bucket: the op ends where the outside work ends.
            Stage::Lock if w.op == SimOp::WakeNone => op_end = Some(now),
            Stage::Lock => {
                let b = s.next_bucket as usize;
                // This thread's following bucket, and a prefetch of its lock: about T
                // events from now the thread needs it, and a table of 2^17 buckets is
                // larger than a core's L2.
                let keys = &w.buckets_per_thread[ti];
                s.pos += 1;
                if s.pos as usize == keys.len() {
                    s.pos = 0;
                }
                s.next_bucket = keys[s.pos as usize];
                prefetch(&lock[s.next_bucket as usize]);
                let line = line_of(b);
                let l = lock[b];
                let home = home_of_line(line);
                // bucket_line: reads of the bucket's line before the operation's first
                // write to it (`hb->priv`, 6.16-rc … 7.1) move the line from its last
                // writer once more before the thread reaches the lock. The thread is
                // queued from this event, as its first request for the line.
                let now = if d.extra_prelock_transfers > 0 {
                    let writer = if lines_shared {
                        line_last_cpu[line]
                    } else {
                        l.last_cpu
                    };
                    now + u64::from(d.extra_prelock_transfers) * x.miss(writer, cpu, home)
                } else {
                    now
                };
                let contended = now < l.free_at;
                let mut start = now.max(l.free_at);
                if contended {
                    // The only waiter behind a holder that has the lock already: the
                    // pending waiter spins on the lock word, and the release hands it the
                    // word's line, one transfer, without the MCS hand-over that
                    // `handoff_*_ns` (fitted on long queues) holds.
                    start += if pending_bit && now >= l.held_from {
                        x.miss(l.last_cpu, cpu, home)
                    } else {
                        x.handoff(l.last_cpu, cpu, home)
                    };
                    if per_waiter > 0 {
                        let q = &mut pending[line];
                        start += q.spinning_at(now) * per_waiter;
                        q.push(start);
                    }
                } else if lines_shared {
                    start += x.miss(line_last_cpu[line], cpu, home);
                } else {
                    start += x.miss(l.last_cpu, cpu, home);
                }
                // `spin_lock()` disables preemption: a spinning waiter and a holder are not
                // descheduled; the tick's preemption waits for the unlock (and the next
                // outside work then starts in the thread's next slice).
                let release = start + s.hold;
                lock[b] = Line {
                    free_at: release,
                    // An uncontended acquirer owns the lock from its arrival: a thread that
                    // comes while the line is still migrating to it queues behind no one
                    // and takes the pending bit. A waiter owns it only from its start.
                    held_from: if contended { start } else { now },
                    last_cpu: cpu,
                };
                if lines_shared {
                    line_last_cpu[line] = cpu;
                }
                if d.refcount == Refcount::Shared {
                    next = (release, Stage::Put);
                } else {
                    op_end = Some(release);
                }
            }
        }
        if let Some(end) = op_end {
            s.done += 1;
            if s.done == len.warmup_ops {
                measure_start[ti] = end;
            }
            if s.done > len.warmup_ops && s.done % 16 == 0 {
                latencies.push(end - s.began);
            }
            if s.done == total_ops {
                measure_end[ti] = end;
                queue.retire(t);
                continue;
            }
            s.began = end;
            next = (s.slices.finish(end, s.outside), first);
        }
        s.stage = next.1;
        queue.set(t, next.0);
    }

    let rates: Vec<f64> = (0..threads)
        .map(|t| {
            let span = (measure_end[t] - measure_start[t]).max(1) as f64 * 1e-12;
            f64::from(len.measured_ops) / span
        })
        .collect();
    let stats = ThroughputStats::from_rates(&rates);
    // Three order statistics: selection, not a sort.
    let mut pct = |p: f64| {
        if latencies.is_empty() {
            0.0
        } else {
            let i = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
            *latencies.select_nth_unstable(i).1 as f64 / 1000.0
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

    #[test]
    fn the_mean_of_runs_reports_the_spread_between_them() {
        let run = |ops: f64| SimResult {
            ops_per_sec: ops,
            ops_per_sec_total: 2.0 * ops,
            stderr_pct: 0.0,
            latency_ns_p50: ops / 10.0,
            latency_ns_p99: 0.0,
            latency_ns_p999: 0.0,
            simulated_secs: 1.0,
        };
        // Rates 90, 100, 110: mean 100, sample sd 10, standard error 10/√3 = 5.77 %.
        let m = SimResult::mean(&[run(90.0), run(100.0), run(110.0)]);
        assert!((m.ops_per_sec - 100.0).abs() < 1e-9);
        assert!((m.ops_per_sec_total - 200.0).abs() < 1e-9);
        assert!((m.stderr_pct - 10.0 / 3f64.sqrt()).abs() < 1e-9, "{m:?}");
        assert!((m.latency_ns_p50 - 10.0).abs() < 1e-9);
        assert_eq!(SimResult::mean(&[run(5.0)]).stderr_pct, 0.0);
    }

    #[test]
    fn lines_start_owned_as_in_the_steady_state() {
        // Two threads on two CPUs walk the same 1024 buckets half a cycle apart, so they
        // never meet, but each bucket was last locked by the other thread: in perf's
        // steady state every operation migrates the line. Measured from the first
        // operation (no warm-up, 100 < 1024 operations), a cold start would find every
        // line unowned and charge no migration at all.
        let mut m = machine(2, 1);
        m.outside_ns = 1000.0;
        m.hold_ns = 10.0;
        m.line_miss_ns = 50.0;
        let w = workload(
            2,
            2,
            |t| (0..1024).map(|i| (i + 512 * t as u32) % 1024).collect(),
            1024,
        );
        let len = SimLength {
            warmup_ops: 0,
            measured_ops: 100,
        };
        let r = simulate(&m, &w, 0.0, len);
        let expect = 1e9 / (1000.0 + 50.0 + 10.0);
        assert!(
            (r.ops_per_sec / expect - 1.0).abs() < 0.005,
            "{r:?} vs {expect}"
        );
    }

    #[test]
    fn a_priv_read_before_the_lock_costs_one_more_transfer() {
        // As above (every operation finds its bucket's line last written by the other
        // thread), with bucket_line's extra transfer of 6.16-rc … 7.1: the `priv` read
        // moves the line, then `waiters_inc` upgrades it: 1000 + 2 × 50 + 10 ns.
        let mut m = machine(2, 1);
        m.outside_ns = 1000.0;
        m.hold_ns = 10.0;
        m.line_miss_ns = 50.0;
        let mut w = workload(
            2,
            2,
            |t| (0..1024).map(|i| (i + 512 * t as u32) % 1024).collect(),
            1024,
        );
        w.design.extra_prelock_transfers = 1;
        let len = SimLength {
            warmup_ops: 0,
            measured_ops: 100,
        };
        let r = simulate(&m, &w, 0.0, len);
        let expect = 1e9 / (1000.0 + 2.0 * 50.0 + 10.0);
        assert!(
            (r.ops_per_sec / expect - 1.0).abs() < 0.005,
            "{r:?} vs {expect}"
        );
        // One thread alone on its buckets: the line never leaves it, nothing extra.
        let mut one = workload(1, 2, |_| (0..64).collect(), 64);
        one.design.extra_prelock_transfers = 1;
        let warm = SimLength {
            warmup_ops: 10,
            measured_ops: 100,
        };
        let r = simulate(&m, &one, 0.0, warm);
        assert!(
            (r.ops_per_sec / (1e9 / 1010.0) - 1.0).abs() < 0.005,
            "{r:?}"
        );
    }

    #[test]
    fn a_line_counts_only_the_acquisitions_still_to_start_whatever_their_order() {
        // Two buckets of one packed line: bucket A's waiter starts at 300, then bucket B's
        // at 150. At 200 only A's is still spinning; at 400 none is.
        let mut line = LineSpinners::default();
        line.push(300);
        line.push(150);
        assert_eq!(line.spinning_at(200), 1);
        line.push(350);
        assert_eq!(line.spinning_at(300), 1);
        assert_eq!(line.spinning_at(400), 0);
    }

    #[test]
    fn the_clock_check_refuses_only_runs_that_could_overflow_the_event_key() {
        let len = SimLength::default(); // 1700 operations per thread
        // 1400 ns per op (the costs below plus 2 × 7 ns atomics and a 5 ns hash, no
        // spinner terms), 16384 threads on 256 CPUs (64 per CPU, 100 µs slices):
        // 1700 × (16384 × 1419 ns + 64 × 100 µs) ≈ 50 s, under the 2^50 ps ≈ 1126 s clock.
        let m = machine(256, 2);
        assert!(check_clock(&m, 16384, 5.0, len).is_ok());
        // Every cost at the profile maximum (1 s): 1700 × 16384 × ~5 s is far beyond it.
        let huge = MachineProfile {
            outside_ns: 1e9,
            hold_ns: 1e9,
            handoff_local_ns: 1e9,
            handoff_remote_ns: 1e9,
            ..machine(256, 2)
        };
        let e = check_clock(&huge, 16384, 5.0, len).unwrap_err();
        assert!(e.contains("16384 threads") && e.contains("1126 s"), "{e}");
        // One thread has 64 bits of picoseconds (5.8e7 s): the same profile fits.
        assert!(check_clock(&huge, 1, 5.0, len).is_ok());
    }

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
            line_miss_remote_ns: None,
            ..MachineProfile::minimal("test", cpus, nodes)
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
            design: Design::default(),
            start_order: 0,
            homes: LineHomes::default(),
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

    /// `w` with the ticket lock of Linux ≤ 4.1 instead of the queued one.
    fn with_ticket_lock(w: &SimWorkload) -> SimWorkload {
        SimWorkload {
            design: Design {
                lock: LockKind::Ticket,
                ..w.design
            },
            ..w.clone()
        }
    }

    #[test]
    fn a_lone_waiter_of_a_queued_lock_pays_one_line_transfer() {
        // Two threads on one lock, holds long against the outside work: each arrives while
        // the other holds the lock and no one else waits, so each acquisition is a
        // pending-bit hand-off, one line migration (50 ns), not the MCS hand-off (200 ns):
        // one acquisition per hold + 50 ns. A ticket lock pays the hand-off.
        let mut m = machine(2, 1);
        m.outside_ns = 100.0;
        m.hold_ns = 1000.0;
        m.line_miss_ns = 50.0;
        let w = workload(2, 2, |_| vec![0], 1);
        let total = |w: &SimWorkload| simulate(&m, w, 0.0, LONG).ops_per_sec_total;
        let queued = total(&w);
        assert!(
            (queued * 1050.0 / 1e9 - 1.0).abs() < 0.01,
            "{queued} vs 1e9/1050"
        );
        m.ticket_spinner_ns = Some(0.0);
        let t = simulate(&m, &with_ticket_lock(&w), 0.0, LONG).ops_per_sec_total;
        assert!((t * 1200.0 / 1e9 - 1.0).abs() < 0.01, "{t} vs 1e9/1200");
    }

    #[test]
    fn a_thread_arriving_while_the_line_migrates_to_an_uncontended_acquirer_is_its_pending_waiter()
    {
        // One operation each. Thread 0 comes at 1 ps to a free lock whose line thread 1's
        // CPU wrote last, so it migrates (1000 ns), then holds (100 ns). Thread 1 comes at
        // 2 ps, while the line is on its way to thread 0: no one waits yet, so thread 1 is
        // the lone (pending-bit) waiter and pays one migration after the release, not the
        // MCS hand-off (5000 ns). Last end: 1 ps + 2 × (1000 + 100) ns. A ticket lock has no
        // pending bit: 1 ps + 1100 ns + 5000 ns + 100 ns.
        let mut m = machine(2, 1);
        m.outside_ns = 0.001;
        m.line_miss_ns = 1000.0;
        m.handoff_local_ns = 5000.0;
        m.ticket_spinner_ns = Some(0.0);
        let w = workload(2, 2, |_| vec![0], 1);
        let one_op = SimLength {
            warmup_ops: 0,
            measured_ops: 1,
        };
        let last_end_ns = |w: &SimWorkload| simulate(&m, w, 0.0, one_op).simulated_secs * 1e9;
        let queued = last_end_ns(&w);
        assert!((queued - 2200.001).abs() < 1e-6, "{queued} ns vs 2200.001");
        let t = last_end_ns(&with_ticket_lock(&w));
        assert!((t - 6200.001).abs() < 1e-6, "{t} ns vs 6200.001");
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
    fn with_home_snooping_a_line_homed_on_another_node_migrates_as_a_remote_one() {
        // Two threads of node 0 (CPUs 0 and 1 of 4 on 2 nodes) swap two locks in lockstep:
        // every operation takes the line the other thread wrote last, never waits for it
        // (each is free an outside period before it is needed). Closed form: one
        // operation = outside + migration + hold.
        let mut m = machine(4, 2);
        m.outside_ns = 1000.0;
        m.line_miss_ns = 50.0; // remote: 50 × 600 / 200 = 150
        let keys = |t: usize| if t == 0 { vec![0, 1] } else { vec![1, 0] };
        let run = |m: &MachineProfile, homes: LineHomes| {
            let w = SimWorkload {
                homes,
                ..workload(2, 2, keys, 2)
            };
            simulate(m, &w, 0.0, LONG).ops_per_sec
        };
        let near = |got: f64, per_op_ns: f64| {
            assert!(
                (got * per_op_ns / 1e9 - 1.0).abs() < 0.01,
                "{got} vs 1e9/{per_op_ns}"
            );
        };
        // Without home snooping only the two CPUs' node counts.
        near(run(&m, LineHomes::NodeOfCpu(2)), 1150.0);
        m.home_snoop = true;
        near(run(&m, LineHomes::NodeOfCpu(0)), 1150.0);
        near(run(&m, LineHomes::NodeOfCpu(2)), 1250.0);
        // Lock 0 (its 64-byte line) on node 0, lock 1 on node 1: every other migration is
        // remote.
        near(run(&m, LineHomes::Blocks(64)), 1200.0);
        // CPUs on different nodes (0 and 2): every migration is remote, whichever node
        // the memory is on, with home snooping or without.
        let across = |m: &MachineProfile, homes: LineHomes| {
            let w = SimWorkload {
                homes,
                cpu_of_thread: vec![0, 2],
                ..workload(2, 2, keys, 2)
            };
            simulate(m, &w, 0.0, LONG).ops_per_sec
        };
        near(across(&m, LineHomes::NodeOfCpu(0)), 1250.0);
        near(across(&m, LineHomes::NodeOfCpu(2)), 1250.0);
        m.home_snoop = false;
        near(across(&m, LineHomes::NodeOfCpu(0)), 1250.0);
    }

    #[test]
    fn a_stated_cross_node_migration_replaces_the_hand_off_ratio_for_migrations_only() {
        // Two threads on different nodes (CPUs 0 and 2 of 4) swap two locks in lockstep,
        // as above: every operation is outside + one remote migration + hold.
        let mut m = machine(4, 2);
        m.outside_ns = 1000.0;
        m.line_miss_ns = 50.0;
        let keys = |t: usize| if t == 0 { vec![0, 1] } else { vec![1, 0] };
        let w = SimWorkload {
            cpu_of_thread: vec![0, 2],
            ..workload(2, 2, keys, 2)
        };
        let per_op = |m: &MachineProfile| 1e9 / simulate(m, &w, 0.0, LONG).ops_per_sec;
        // Unstated: 50 × 600 / 200 = 150.
        assert!((per_op(&m) - 1250.0).abs() < 10.0, "{}", per_op(&m));
        m.line_miss_remote_ns = Some(80.0);
        assert!((per_op(&m) - 1180.0).abs() < 10.0, "{}", per_op(&m));
        // A contended hand-off across nodes still costs handoff_remote_ns: two threads on
        // one lock with no outside work alternate, each acquisition a remote hand-off.
        let mut busy = m.clone();
        busy.outside_ns = 0.0;
        let one_lock = SimWorkload {
            cpu_of_thread: vec![0, 2],
            ..workload(2, 2, |_| vec![0], 1)
        };
        let total = simulate(&busy, &one_lock, 0.0, LONG).ops_per_sec_total;
        assert!(
            (total * (600.0 + 100.0) / 1e9 - 1.0).abs() < 0.02,
            "{total} vs 1e9/700"
        );
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

    const LONG: SimLength = SimLength {
        warmup_ops: 200,
        measured_ops: 20_000,
    };

    #[test]
    fn threads_sharing_a_cpu_share_its_time() {
        // Two threads on one CPU, no contention: together they do what one would alone.
        let m = machine(1, 1);
        let w = workload(2, 1, |t| vec![t as u32], 2);
        let r = simulate(&m, &w, 0.0, LONG);
        let alone = 1e9 / 500.0;
        assert!((r.ops_per_sec_total / alone - 1.0).abs() < 0.03, "{r:?}");
    }

    #[test]
    fn time_slices_alternate() {
        let s = Slices {
            index: 1,
            count: 3,
            slice: 10,
        };
        // Thread 1 of 3 runs in [10, 20), [40, 50), ...
        assert_eq!(s.running_at(0), 10);
        assert_eq!(s.running_at(15), 15);
        assert_eq!(s.running_at(20), 40);
        assert_eq!(s.finish(15, 3), 18);
        assert_eq!(s.finish(15, 10), 45);
        assert_eq!(s.finish(0, 25), 75);
    }

    #[test]
    fn spinlock_sections_are_not_preempted() {
        // Three threads per CPU on two CPUs, all on one bucket, long hold: the lock is
        // never held by a descheduled thread, so the lock stays busy — throughput at least
        // that of a hand-off after every hold, 1 / (hold + hand-off), and at most one hold
        // at a time, 1 / hold (consecutive holders on one CPU need no hand-off).
        let mut m = machine(2, 1);
        m.outside_ns = 10.0;
        m.hold_ns = 2000.0;
        m.timeslice_ns = 10_000.0;
        let one_lock = 1e9 / (2000.0 + 200.0);
        let w = workload(6, 2, |_| vec![0], 1);
        let r = simulate(&m, &w, 0.0, LONG);
        assert!(r.ops_per_sec_total > 0.97 * one_lock, "{r:?} {one_lock}");
        assert!(r.ops_per_sec_total <= 1e9 / 2000.0, "{r:?}");
    }

    #[test]
    fn ticket_hand_off_grows_with_the_spinners() {
        // 16 threads on one lock: queued costs hold + hand-off; ticket adds one
        // per-waiter term for each of the ~15 waiters ahead.
        let mut m = machine(16, 1);
        m.outside_ns = 10.0;
        m.ticket_spinner_ns = Some(20.0);
        let mut w = workload(16, 16, |_| vec![0], 1);
        let queued = simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec_total;
        w.design.lock = LockKind::Ticket;
        let ticket = simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec_total;
        assert!((queued / (1e9 / 300.0) - 1.0).abs() < 0.01, "{queued}");
        // Waiters ahead of an arrival at saturation: T-1 = 15 (closed form of FIFO with
        // everyone queued), each 20 ns.
        let expect = 1e9 / (300.0 + 15.0 * 20.0);
        assert!((ticket / expect - 1.0).abs() < 0.1, "{ticket} vs {expect}");
        assert!(check_design(&machine(2, 1), &w.design).is_err());
    }

    #[test]
    fn packed_buckets_miss_on_a_neighbours_line() {
        // Two threads, each on its own bucket (0 and 1): aligned, no op ever misses;
        // packed, both buckets are in line 0 and every op pays the migration.
        let mut m = machine(2, 1);
        m.line_miss_ns = 100.0;
        let mut w = workload(2, 2, |t| vec![t as u32], 2);
        let aligned = simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec;
        w.design.bucket_bytes = PACKED_BUCKET_BYTES;
        let packed = simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec;
        assert!((aligned / (1e9 / 500.0) - 1.0).abs() < 1e-3, "{aligned}");
        assert!((packed / (1e9 / 600.0) - 1.0).abs() < 0.01, "{packed}");
    }

    #[test]
    fn a_shared_reference_serialises_every_operation() {
        // Own buckets, no lock contention. Shared: every op does two RMWs on one line
        // that moves between 8 CPUs: total ≤ 1 / (2 × (miss + atomic)).
        let mut m = machine(8, 1);
        m.line_miss_ns = 100.0;
        m.outside_ns = 50.0;
        let mut w = workload(8, 8, |t| vec![t as u32], 8);
        let none = simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec_total;
        w.design.refcount = Refcount::PerCpu;
        let percpu = simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec_total;
        w.design.refcount = Refcount::Shared;
        let shared = simulate(&m, &w, 0.0, SimLength::default()).ops_per_sec_total;
        let bound = 1e9 / (2.0 * (100.0 + m.atomic_ns));
        assert!(shared <= bound * 1.01, "{shared} {bound}");
        assert!(shared > bound * 0.9, "{shared} {bound}");
        let expect_percpu = 8.0 * 1e9 / (50.0 + 2.0 * m.atomic_ns + 100.0);
        assert!((percpu / expect_percpu - 1.0).abs() < 1e-3, "{percpu}");
        assert!(none > percpu);
    }

    #[test]
    fn a_busy_sibling_slows_a_thread() {
        // 2 CPUs, 1 core: with both siblings busy each thread's work is 1.5x longer.
        let mut m = machine(2, 1);
        m.threads_per_core = 2;
        m.smt_slowdown = Some(1.5);
        let one = simulate(
            &m,
            &workload(1, 2, |_| vec![0], 2),
            0.0,
            SimLength::default(),
        );
        let two = simulate(
            &m,
            &workload(2, 2, |t| vec![t as u32], 2),
            0.0,
            SimLength::default(),
        );
        assert!((one.ops_per_sec / (1e9 / 500.0) - 1.0).abs() < 1e-3);
        assert!(
            (two.ops_per_sec / (1e9 / 750.0) - 1.0).abs() < 1e-3,
            "{two:?}"
        );
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

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
//! Code: every cost above is a function of [`cost`] (the one cost model, with
//! [`Mechanisms`] to switch each refinement off), the event loop is [`engine`] (re-exported
//! as [`simulate`]), and trace replay ([`trace_replay`]) charges the same functions.
//!
//! Limits, stated rather than hidden: no cache misses on the futex words themselves, no
//! memory bandwidth, no priority or load balancing in the scheduler (threads stay pinned,
//! as perf pins them), SMT modelled as a constant factor.

pub mod bucket_line;
pub mod calibrate;
pub mod cost;
pub mod engine;
mod error;
mod events;
pub mod hashcost;
pub mod kernel;
pub mod profile;
pub mod request;
pub mod sweep;
pub mod trace_replay;
pub mod uncertainty;
pub mod validate;

pub use cost::Mechanisms;
pub use engine::{simulate, simulate_until};
pub use error::{ClockOverflow, SimError, WorkLimit};
use profile::MachineProfile;

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

impl Refcount {
    /// The reference an operation on a table of `buckets` slots takes (0: the global
    /// hash): only a private hash is reference-counted (`futex_private_hash_get()`), so an
    /// operation on the global hash takes none, whatever the kernel.
    pub fn on_table(self, buckets: u64) -> Refcount {
        if buckets == 0 { Refcount::None } else { self }
    }
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
    /// Which refinements of the cost model are on (`Default`: all, the shipped model).
    pub mechanisms: Mechanisms,
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
) -> Result<(), SimError> {
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
    let bound_of = |ops: f64| ops * (t * per_op_ns + sharing * m.timeslice_ns) * 1000.0;
    let ops = f64::from(len.warmup_ops) + f64::from(len.measured_ops);
    let bound_ps = bound_of(ops);
    let bits = threads.max(1).next_power_of_two().trailing_zeros();
    let limit_ps = (u64::MAX >> bits) as f64;
    if bound_ps < limit_ps {
        return Ok(());
    }
    // The most operations whose bound is below the clock, by the same expression (the
    // quotient's rounding corrected by a step either way).
    let mut most = (limit_ps / bound_of(1.0)).floor().clamp(0.0, ops);
    while most > 0.0 && bound_of(most) >= limit_ps {
        most -= 1.0;
    }
    while most + 1.0 < ops && bound_of(most + 1.0) < limit_ps {
        most += 1.0;
    }
    Err(SimError::Clock(ClockOverflow {
        threads,
        len,
        bound_s: bound_ps / 1e12,
        limit_s: limit_ps / 1e12,
        per_op_ns,
        most_ops: most as u64,
    }))
}

/// Most operations one request may simulate, every thread of every simulated run
/// together, warm-up included (10^10). The simulator does some 2–7 × 10^7 operations a
/// second on one core of the 2-vCPU development VM (7 × 10^7 for one thread alone, 2 ×
/// 10^7 for 1024 threads), so the largest request is minutes of work there. Before this
/// limit only a thread's 32-bit count and the clock bounded a run: one configuration of
/// `-t 16 --ops 4294967095` was 2 × 10^11 operations with its three replications, an
/// hour or more, and a default sweep of 17 sizes a day. The runs also keep every 16th
/// measured operation's latency (8 bytes) until they end: up to 5 × 10^8 bytes per 10^9
/// operations of the runs in progress.
pub const MAX_SIMULATED_OPS: u64 = 10_000_000_000;

/// How much a request simulates, for [`check_work`]: how many threads it simulates in all
/// (a thread of a run simulated three times counts three times), each running one length,
/// and how they were counted, in words, for the refusal.
#[derive(Clone, Debug)]
pub struct Work {
    /// Threads simulated, every run counted.
    pub threads: u64,
    /// How `threads` was counted (e.g. "240 threads × 17 configurations × 3
    /// replications").
    pub counted: String,
}

/// Refuses, before any work, a request that would simulate more than
/// [`MAX_SIMULATED_OPS`] operations: `work.threads` threads each running `len`'s warm-up
/// and measured operations.
pub fn check_work(work: &Work, len: SimLength) -> Result<(), SimError> {
    let per_thread = u64::from(len.warmup_ops) + u64::from(len.measured_ops);
    let threads = work.threads.max(1);
    let total = u128::from(threads) * u128::from(per_thread);
    if total <= u128::from(MAX_SIMULATED_OPS) {
        return Ok(());
    }
    Err(SimError::Work(WorkLimit {
        threads,
        counted: work.counted.clone(),
        len,
        limit: MAX_SIMULATED_OPS,
        most_ops: MAX_SIMULATED_OPS / threads,
    }))
}

/// Both limits on a request's length, checked before any work: the clock
/// ([`check_clock`], at each of `threads` with a hash of `hash_ns`) and the work
/// ([`check_work`]). When both refuse, the one that allows fewer operations is returned,
/// so that the most it names is accepted.
pub fn check_length(
    m: &MachineProfile,
    threads: &[usize],
    hash_ns: f64,
    len: SimLength,
    work: &Work,
) -> Result<(), SimError> {
    let clock = threads
        .iter()
        .try_for_each(|&t| check_clock(m, t, hash_ns, len));
    match (clock, check_work(work, len)) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
        (Err(SimError::Clock(c)), Err(SimError::Work(w))) if w.most_ops <= c.most_ops => {
            Err(SimError::Work(w))
        }
        (Err(c), Err(_)) => Err(c),
    }
}

/// Assigns `threads` threads round-robin to `cpus` (perf pins thread `i` to CPU `i % C`).
pub fn round_robin_cpus(threads: usize, cpus: &[u32]) -> Vec<u32> {
    (0..threads).map(|i| cpus[i % cpus.len()]).collect()
}

/// Checks that the profile has what the design needs; the error names the missing field.
pub fn check_design(m: &MachineProfile, d: &Design) -> Result<(), SimError> {
    if d.lock == LockKind::Ticket && m.ticket_spinner_ns.is_none() {
        return Err(SimError::BadRequest(format!(
            "profile '{}' has no ticket_spinner_ns, which --lock ticket needs",
            m.name
        )));
    }
    if d.bucket_bytes == 0 || d.bucket_bytes > 4096 {
        return Err(SimError::BadRequest(format!(
            "bucket size {} bytes must be 1..=4096",
            d.bucket_bytes
        )));
    }
    Ok(())
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
        let e = check_clock(&huge, 16384, 5.0, len).unwrap_err().to_string();
        assert!(e.contains("16384 threads") && e.contains("1126 s"), "{e}");
        // One thread has 64 bits of picoseconds (5.8e7 s): the same profile fits.
        assert!(check_clock(&huge, 1, 5.0, len).is_ok());
    }

    #[test]
    fn the_work_check_refuses_beyond_ten_billion_operations_and_names_the_most() {
        let len = SimLength::default(); // 200 + 1500 = 1700 operations per thread
        let work = |threads| Work {
            threads,
            counted: "test".into(),
        };
        // 10^10 / 1700 = 5882352.9: 5882352 threads fit, 5882353 do not.
        assert!(check_work(&work(5_882_352), len).is_ok());
        let Err(SimError::Work(w)) = check_work(&work(5_882_353), len) else {
            panic!("not refused");
        };
        // 10^10 / 5882353 = 1699.99997: 1699 operations each, 1499 after the warm-up.
        assert_eq!((w.most_ops, w.most_measured()), (1699, 1499));
        assert_eq!(w.total(), 5_882_353 * 1700);
        // Where the clock allows fewer operations than the work limit, its refusal is
        // the one given: the most it names is then accepted by both.
        let huge = MachineProfile {
            outside_ns: 1e9,
            hold_ns: 1e9,
            handoff_local_ns: 1e9,
            handoff_remote_ns: 1e9,
            ..machine(256, 2)
        };
        let e = check_length(&huge, &[16384], 5.0, len, &work(5_882_353)).unwrap_err();
        assert!(matches!(e, SimError::Clock(_)), "{e}");
        let e = check_length(&machine(256, 2), &[16384], 5.0, len, &work(5_882_353));
        assert!(matches!(e, Err(SimError::Work(_))), "{e:?}");
    }

    /// The simulator tests' profile: costs stated, no line-transfer cost (engine tests too).
    pub(super) fn machine(cpus: u32, nodes: u32) -> MachineProfile {
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
}

//! Trace-driven simulation: replays each thread's futex operations of a real program
//! (`futexhash capture` or strace, [`crate::workload::read_trace`]) in their captured order
//! on a machine profile, to answer "what would my program's buckets do on 256 CPUs with N
//! slots, or on the global table".
//!
//! Model, on top of the cost model of [`super::simulate`] (same profile parameters):
//!
//! - every captured thread is one simulated thread, pinned round-robin to the profile's
//!   CPUs in order of first appearance (threads sharing a CPU are serialised on it);
//! - one operation = the outside work (`outside_ns + hash_ns`, once per call) and then, for
//!   each key the call names in argument order (`uaddr`, `uaddr2`, each `futex_waitv`
//!   entry), the FIFO bucket lock of that key's bucket for `hold_ns`, with the hand-off or
//!   line-migration cost when another CPU held it last. Wakes lock too: a real program
//!   calls `FUTEX_WAKE` when its lock word says there is a waiter (glibc), so the kernel's
//!   lockless "no waiters" shortcut is the exception. Waits are not blocked (nobody is
//!   woken in the model): the time a thread really slept is part of its think time;
//! - think time: the next call of a thread starts no earlier than `think_scale ×` the gap
//!   between the two calls' captured entry times after the previous call's start (and
//!   never before the previous call ends). `think_scale = 1` replays the program's own
//!   timeline (the table only adds delay when it is slower than where it was captured),
//!   `0` replays the calls back to back (a stress test of the key sequence). Traces
//!   without times (strace without `-ttt`) are replayed back to back whatever the scale;
//! - tables: `buckets = 0` is the global hash of `roundup_pow_of_two(256 × CPUs)` buckets
//!   for every key; `buckets = N > 0` gives every process (every `mm` of a private key) its
//!   own private table of N buckets (v6.16+ `futex_private_hash`), while shared keys still
//!   use the global hash, as in `kernel/futex/core.c` `futex_hash()`.

use super::calibrate::global_hash_size;
use super::profile::MachineProfile;
use crate::hashers::KeyHasher;
use crate::key::{FutexKey, KeyKind};
use crate::workload::Recording;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Picoseconds from nanoseconds (the simulator's time unit).
fn ps(ns: f64) -> u64 {
    (ns * 1000.0).round().max(0.0) as u64
}

/// One replayed operation: the locks it takes, and the captured gap to the thread's next
/// operation.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    locks: Vec<u32>,
    think_ps: u64,
}

/// The result of replaying one trace on one table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplayRecord {
    /// Always `sim`.
    pub backend: &'static str,
    /// `trace:FILE`.
    pub workload: String,
    /// The profile's name.
    pub profile: String,
    /// Hasher.
    pub algo: String,
    /// `global` (buckets 0) or `private`.
    pub table: &'static str,
    /// Private slots per process (0 = the global hash).
    pub buckets: u64,
    /// Buckets of the global hash on this profile.
    pub global_buckets: u64,
    /// Simulated threads (captured threads with at least one keyed call).
    pub threads: usize,
    /// Operations replayed.
    pub ops: u64,
    /// Think-time factor applied to the captured gaps.
    pub think_scale: f64,
    /// What the think time is: `captured` gaps (scaled) or `none` (trace without times).
    pub think: &'static str,
    /// First to last captured call, seconds (0 without times).
    pub captured_secs: f64,
    /// First to last simulated call end, seconds.
    pub simulated_secs: f64,
    /// Mean per-thread operations per second over each thread's own active span.
    pub ops_per_sec: f64,
    /// All operations over the simulated span.
    pub ops_per_sec_total: f64,
    /// Share of bucket-lock acquisitions that found the lock held, percent.
    pub contended_pct: f64,
    /// Mean wait for a held bucket lock per acquisition, ns.
    pub lock_wait_ns_mean: f64,
    /// Median latency of one operation (outside work to last unlock), ns.
    pub latency_ns_p50: u64,
    /// 99th percentile latency, ns.
    pub latency_ns_p99: u64,
    /// Per-hash cost used, ns.
    pub hash_ns: f64,
    /// Non-empty when the hasher fails a distribution test on the trace's keys in the
    /// tables they use ([`crate::stats::warning::tables_warning`]); left `""` by [`replay`],
    /// filled by its caller.
    pub warning: String,
    /// Lower end of the 80 % interval of `ops_per_sec`; [`replay`] leaves it at the rate
    /// itself, [`super::uncertainty::replay_with_interval`] sets it.
    pub ops_per_sec_lo: f64,
    /// Upper end of the 80 % interval of `ops_per_sec` (see `ops_per_sec_lo`).
    pub ops_per_sec_hi: f64,
}

/// The locks each key of `rec` uses with `hasher` and `buckets` (see the module docs), and
/// the total number of locks.
fn lock_of_keys<H: KeyHasher + ?Sized>(
    keys: &[FutexKey],
    hasher: &H,
    buckets: u64,
    global: u64,
) -> (Vec<u32>, usize) {
    let mut process: HashMap<u64, u64> = HashMap::new();
    let gmask = global - 1;
    let locks: Vec<u64> = keys
        .iter()
        .map(|k| {
            let h = u64::from(hasher.hash(k));
            if buckets == 0 || k.kind() != KeyKind::Private {
                h & gmask
            } else {
                let n = process.len() as u64;
                let p = *process.entry(k.w0()).or_insert(n);
                global + p * buckets + (h & (buckets - 1))
            }
        })
        .collect();
    let total = global + process.len() as u64 * buckets;
    // Locks are dense indices; the tables above are at most 2^24 buckets each.
    (
        locks.into_iter().map(|l| l as u32).collect(),
        total as usize,
    )
}

/// Replays `rec` on `m` with `hasher`, `buckets` private slots (0 = global hash) and
/// think-time factor `think_scale` (≥ 0). `workload` names the trace in the record.
pub fn replay<H: KeyHasher + ?Sized>(
    m: &MachineProfile,
    rec: &Recording,
    workload: &str,
    hasher: &H,
    buckets: u64,
    think_scale: f64,
) -> Result<ReplayRecord, String> {
    m.validate()?;
    if !(think_scale >= 0.0 && think_scale.is_finite()) {
        return Err(format!(
            "think scale '{think_scale}' must be a finite number ≥ 0"
        ));
    }
    if buckets != 0 && !buckets.is_power_of_two() {
        return Err(format!(
            "bucket count '{buckets}' must be 0 or a power of two"
        ));
    }
    let global = global_hash_size(m.cpus);
    let (lock_of, n_locks) = lock_of_keys(&rec.keys, hasher, buckets, global);
    if u32::try_from(n_locks).is_err() || n_locks > 1 << 28 {
        return Err(format!(
            "{n_locks} buckets in total (processes × slots) is more than the 2^28 the simulator holds"
        ));
    }
    // Per thread, in order of first appearance.
    let mut thread_index: HashMap<u32, usize> = HashMap::new();
    let mut per_thread: Vec<Vec<(Option<u64>, Vec<u32>)>> = Vec::new();
    for op in rec.ops.iter().filter(|o| !o.keys.is_empty()) {
        let n = thread_index.len();
        let t = *thread_index.entry(op.thread).or_insert(n);
        if t == per_thread.len() {
            per_thread.push(Vec::new());
        }
        per_thread[t].push((
            op.t_ns,
            op.keys.iter().map(|&k| lock_of[k as usize]).collect(),
        ));
    }
    if per_thread.is_empty() {
        return Err(format!("trace '{workload}' has no keyed operations"));
    }
    let timed = rec.ops.iter().all(|o| o.t_ns.is_some());
    let threads: Vec<Vec<Op>> = per_thread
        .into_iter()
        .map(|ops| {
            let times: Vec<Option<u64>> = ops.iter().map(|o| o.0).collect();
            ops.into_iter()
                .enumerate()
                .map(|(i, (t, locks))| {
                    let gap_ns = match (t, times.get(i + 1).copied().flatten()) {
                        (Some(a), Some(b)) if timed => b.saturating_sub(a) as f64,
                        _ => 0.0,
                    };
                    Op {
                        locks,
                        think_ps: ps(gap_ns * think_scale),
                    }
                })
                .collect()
        })
        .collect();
    let captured_secs = if timed {
        let ts = rec.ops.iter().filter_map(|o| o.t_ns);
        let (lo, hi) = ts.fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
        hi.saturating_sub(lo) as f64 * 1e-9
    } else {
        0.0
    };

    // The profile's figure for this hasher, else timed here (never 0 silently).
    let hash_ns = super::hashcost::hash_cost(m, hasher)?.ns;
    let outside = ps(m.outside_ns + hash_ns);
    let hold = ps(m.hold_ns);
    let (local, remote) = (ps(m.handoff_local_ns), ps(m.handoff_remote_ns));
    let (miss_local, miss_remote) = (ps(m.line_miss_ns), ps(m.line_miss_remote()));
    // The profile's own numbering (SMT siblings `cores` apart), as `simulate` uses,
    // looked up per CPU rather than divided out per acquisition.
    let node: Vec<u32> = (0..m.cpus).map(|c| m.node_of(c)).collect();
    let cpu_of: Vec<u32> = (0..threads.len())
        .map(|i| (i % m.cpus as usize) as u32)
        .collect();
    const NO_CPU: u32 = u32::MAX;
    let mut lock_free_at = vec![0u64; n_locks];
    let mut lock_last_cpu = vec![NO_CPU; n_locks];
    // When the last acquisition of each lock took it: an arrival after that, with the lock
    // still held, is its only waiter (as in `simulate`: qspinlock's pending bit).
    let mut lock_held_from = vec![0u64; n_locks];
    let mut cpu_free_at = vec![0u64; m.cpus as usize];
    let mut pos = vec![0usize; threads.len()];
    let mut first_begin = vec![u64::MAX; threads.len()];
    let mut last_end = vec![0u64; threads.len()];
    let (mut acquisitions, mut contended, mut waited_ps) = (0u64, 0u64, 0u128);
    let mut latencies: Vec<u64> = Vec::new();
    // Heap of (begin time of the thread's next op, thread). Starts staggered by index.
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> =
        (0..threads.len()).map(|t| Reverse((t as u64, t))).collect();
    while let Some(Reverse((ready, t))) = heap.pop() {
        let op = &threads[t][pos[t]];
        let cpu = cpu_of[t];
        let begin = ready.max(cpu_free_at[cpu as usize]);
        first_begin[t] = first_begin[t].min(begin);
        let mut now = begin + outside;
        for &l in &op.locks {
            let l = l as usize;
            acquisitions += 1;
            let busy = now < lock_free_at[l];
            if busy {
                contended += 1;
                waited_ps += u128::from(lock_free_at[l] - now);
            }
            let mut start = now.max(lock_free_at[l]);
            let last = lock_last_cpu[l];
            if last != NO_CPU && last != cpu {
                // A lone waiter spins on the lock word (pending bit): one line migration.
                let queued = busy && now < lock_held_from[l];
                start += match (queued, node[last as usize] == node[cpu as usize]) {
                    (true, true) => local,
                    (true, false) => remote,
                    (false, true) => miss_local,
                    (false, false) => miss_remote,
                };
            }
            // An uncontended acquirer has the lock from its arrival (as in `simulate`).
            lock_held_from[l] = if busy { start } else { now };
            now = start + hold;
            lock_free_at[l] = now;
            lock_last_cpu[l] = cpu;
        }
        // The CPU is taken for the op's own work (spinning is not charged to others).
        cpu_free_at[cpu as usize] = cpu_free_at[cpu as usize]
            .max(begin)
            .saturating_add(outside + hold * op.locks.len() as u64);
        latencies.push(now - begin);
        last_end[t] = now;
        pos[t] += 1;
        if pos[t] < threads[t].len() {
            heap.push(Reverse((now.max(begin + op.think_ps), t)));
        }
    }
    let ops: u64 = threads.iter().map(|t| t.len() as u64).sum();
    let start = first_begin.iter().copied().min().unwrap_or(0);
    let end = last_end.iter().copied().max().unwrap_or(0);
    let span_s = (end - start) as f64 * 1e-12;
    let rates: Vec<f64> = threads
        .iter()
        .enumerate()
        .map(|(t, o)| {
            let s = (last_end[t] - first_begin[t]) as f64 * 1e-12;
            o.len() as f64 / s.max(1e-12)
        })
        .collect();
    latencies.sort_unstable();
    let pct = |p: f64| {
        let i = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
        (latencies[i] as f64 / 1000.0).round() as u64
    };
    Ok(ReplayRecord {
        backend: "sim",
        workload: workload.to_string(),
        profile: m.name.clone(),
        algo: hasher.name().to_string(),
        table: if buckets == 0 { "global" } else { "private" },
        buckets,
        global_buckets: global,
        threads: threads.len(),
        ops,
        think_scale,
        think: if timed { "captured" } else { "none" },
        captured_secs,
        simulated_secs: span_s,
        ops_per_sec: rates.iter().sum::<f64>() / rates.len() as f64,
        ops_per_sec_total: ops as f64 / span_s.max(1e-12),
        contended_pct: 100.0 * contended as f64 / acquisitions.max(1) as f64,
        lock_wait_ns_mean: waited_ps as f64 / 1000.0 / acquisitions.max(1) as f64,
        latency_ns_p50: pct(0.5),
        latency_ns_p99: pct(0.99),
        hash_ns,
        warning: String::new(),
        ops_per_sec_lo: rates.iter().sum::<f64>() / rates.len() as f64,
        ops_per_sec_hi: rates.iter().sum::<f64>() / rates.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Builtin, HashKey};
    use crate::workload::TraceOp;

    fn machine(cpus: u32) -> MachineProfile {
        // The hash cost is the profile's (0 ns, stated), not timed on this machine: the
        // expected rates below are closed forms of the profile's costs alone and must not
        // move with the load of the machine running the test.
        let mut p = MachineProfile {
            name: "test".into(),
            cpus,
            nodes: 1,
            outside_ns: 400.0,
            hold_ns: 100.0,
            handoff_local_ns: 200.0,
            handoff_remote_ns: 600.0,
            line_miss_ns: 0.0,
            line_miss_remote_ns: None,
            ..MachineProfile::minimal("test", cpus, 1)
        };
        p.hash_ns.insert("jhash2".into(), 0.0);
        p
    }

    /// 4 CPUs = 2 cores × 2 SMT threads on 2 nodes (no SMT slowdown): siblings are
    /// `cores` apart, so CPUs 0 and 2 are core 0 (node 0), CPUs 1 and 3 core 1 (node 1).
    fn two_nodes_of_two_threads() -> MachineProfile {
        let mut m = machine(4);
        m.nodes = 2;
        m.threads_per_core = 2;
        m.smt_slowdown = Some(1.0);
        m
    }

    /// `threads` threads, each doing `n` ops on its own key (or all on key 0), `gap_ns`
    /// apart as captured.
    fn rec(threads: u32, n: u64, gap_ns: u64, same_key: bool) -> Recording {
        let keys: Vec<FutexKey> = (0..threads)
            .map(|t| {
                FutexKey::private(0xffff_8881_0000_0000, 0x5555_0000_1000 + 64 * u64::from(t))
                    .unwrap()
            })
            .collect();
        let mut ops = Vec::new();
        for i in 0..n {
            for t in 0..threads {
                ops.push(TraceOp {
                    thread: 100 + t,
                    t_ns: Some(i * gap_ns),
                    keys: vec![if same_key { 0 } else { t }],
                    wake: false,
                });
            }
        }
        Recording {
            format: "capture",
            keys,
            ops,
            processes: 1,
            mms: 1,
            note: String::new(),
        }
    }

    #[test]
    fn back_to_back_runs_at_the_op_cost_and_captured_gaps_set_the_pace() {
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let m = machine(4);
        let r = rec(4, 1000, 10_000, false);
        let fast = replay(&m, &r, "t", &h, 1024, 0.0).unwrap();
        assert_eq!((fast.ops, fast.threads, fast.think), (4000, 4, "captured"));
        // Own keys, own CPUs: 1e9 / (400 + 100) per thread.
        assert!((fast.ops_per_sec / 2e6 - 1.0).abs() < 0.01, "{fast:?}");
        assert!(fast.contended_pct < 1.0);
        // As captured: one op per 10 µs per thread.
        let paced = replay(&m, &r, "t", &h, 1024, 1.0).unwrap();
        assert!((paced.ops_per_sec / 1e5 - 1.0).abs() < 0.01, "{paced:?}");
        assert!((paced.captured_secs - 999.0 * 1e-5).abs() < 1e-9);
        let half = replay(&m, &r, "t", &h, 1024, 0.5).unwrap();
        assert!((half.ops_per_sec / 2e5 - 1.0).abs() < 0.01, "{half:?}");
    }

    #[test]
    fn replay_numbers_nodes_as_the_profile_does() {
        // 4 CPUs = 2 cores × 2 SMT threads on 2 nodes: siblings are `cores` apart, so
        // CPUs 0 and 2 are core 0 (node 0), CPUs 1 and 3 core 1 (node 1). Two threads on
        // one hot key run on CPUs 0 and 1, different nodes: each arrives (200 ns of outside
        // work) while the other holds the lock (1000 ns), its only waiter, so the lock
        // passes once per hold plus a remote migration (the pending bit), 1000 + 50 × 3 ns
        // (numbering CPUs 0 and 1 as node 0 gave 1000 + 50; the hand-off, 1000 + 600).
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let mut m = two_nodes_of_two_threads();
        m.outside_ns = 200.0;
        m.hold_ns = 1000.0;
        m.line_miss_ns = 50.0;
        assert_eq!((m.node_of(0), m.node_of(1), m.node_of(2)), (0, 1, 0));
        let r = rec(2, 2000, 0, true);
        let hot = replay(&m, &r, "t", &h, 0, 0.0).unwrap();
        let want = 1e9 / 1150.0;
        assert!(
            (hot.ops_per_sec_total / want - 1.0).abs() < 0.03,
            "{} vs {want}",
            hot.ops_per_sec_total
        );
    }

    #[test]
    fn a_replayed_arrival_during_an_uncontended_migration_takes_the_pending_path() {
        // Thread 100 takes key 0 first (no earlier owner: no migration), releasing at
        // 400 + 100 ns. Threads 101 and 102 (starts staggered by 1 ps) first take their own
        // keys, then key 0: 101 arrives at 1 ps + 900 ns to the free lock and waits for
        // its line (1000 ns); 102 arrives 1 ps later, while that line is on its way, so it
        // is the lone waiter: one migration after 101's release, not the hand-off (5000 ns).
        // Last end: 1 ps + 2 × 400 + 3 × 100 + 2 × 1000 ns (with the hand-off, 7100 ns).
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let mut m = machine(4);
        m.line_miss_ns = 1000.0;
        m.handoff_local_ns = 5000.0;
        let mut r = rec(3, 1, 0, false);
        let own = |thread: u32, key: u32| TraceOp {
            thread,
            t_ns: Some(0),
            keys: vec![key],
            wake: false,
        };
        r.ops = vec![
            own(100, 0),
            own(101, 1),
            own(101, 0),
            own(102, 2),
            own(102, 0),
        ];
        let run = replay(&m, &r, "t", &h, 0, 0.0).unwrap();
        let want = 3100.001e-9;
        assert!(
            (run.simulated_secs - want).abs() < 1e-15,
            "{} s vs {want}",
            run.simulated_secs
        );
    }

    #[test]
    fn a_stated_cross_node_migration_is_what_an_uncontended_replay_pays() {
        // CPUs 0 and 1 are on different nodes (as above). Two threads take key 0 in turn,
        // half a captured gap apart, so the lock is always free and always last held by
        // the other node: every op is outside + one remote migration + hold.
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let mut m = two_nodes_of_two_threads();
        m.outside_ns = 10.0;
        m.line_miss_ns = 50.0;
        let mut r = rec(2, 200, 10_000, true);
        for op in r.ops.iter_mut().filter(|op| op.thread == 101) {
            op.t_ns = op.t_ns.map(|t| t + 5_000);
        }
        let p50 = |m: &MachineProfile| replay(m, &r, "t", &h, 0, 1.0).unwrap().latency_ns_p50;
        // Unstated: 50 × 600 / 200 = 150 across nodes.
        assert_eq!(p50(&m), 10 + 150 + 100);
        m.line_miss_remote_ns = Some(80.0);
        assert_eq!(p50(&m), 10 + 80 + 100);
    }

    #[test]
    fn one_hot_key_serialises_the_threads() {
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let mut m = machine(8);
        m.outside_ns = 10.0;
        let r = rec(8, 500, 0, true);
        let hot = replay(&m, &r, "t", &h, 0, 0.0).unwrap();
        // Bounded by one lock: hold + hand-off per op.
        assert!(hot.ops_per_sec_total <= 1e9 / 300.0 * 1.02, "{hot:?}");
        assert!(hot.contended_pct > 80.0, "{hot:?}");
        assert!(replay(&m, &r, "t", &h, 3, 0.0).is_err());
        assert!(replay(&m, &r, "t", &h, 16, -1.0).is_err());
    }
}

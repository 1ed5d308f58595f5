//! The event engine: runs one simulated `perf bench futex hash` (or wake) loop of a
//! [`SimWorkload`] on a [`MachineProfile`], charging every cost through [`super::cost`].
//!
//! Each simulated thread has one pending event at a time — arriving at the shared
//! reference (6.16), arriving at its bucket lock, or releasing the reference — and events
//! are processed in global time order (`events::EventQueue`, ties by thread index), which is
//! exactly FIFO queueing at every lock: one priority queue is the whole simulator,
//! O(ops·log T). At a lock arrival the engine decides, from the lock's state (when it is
//! next free, when its holder took it, which CPU wrote its line last), whether the thread
//! waits, and adds the hand-off or pending-bit migration, the per-waiter term, or the
//! uncontended line migration that [`super::cost`] gives; the hold then runs unpreempted.
//! Outside work runs in the thread's time slices. After the warm-up, each thread's
//! measured operations give its rate; every 16th operation's latency is sampled.
//!
//! Deterministic: no randomness beyond the key set and the seeded start order
//! ([`SimWorkload::start_order`]).

use super::cost::{self, LineSpinners, NO_CPU, Slices, Transfers, ps};
use super::events::EventQueue;
use super::profile::MachineProfile;
use super::{Refcount, SimLength, SimOp, SimResult, SimWorkload};
use crate::throughput::stats::ThroughputStats;

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
    let mech = w.mechanisms;
    let max_cpu = w.cpu_of_thread.iter().copied().max().unwrap_or(0);
    let x = Transfers::new(m, max_cpu, &mech);
    let per_waiter = cost::per_waiter_ps(m, d.lock);
    // Start times of the acquisitions still pending on each cache line of contended locks
    // (only lines that ever had a waiter get an entry): the waiters ahead of an arrival.
    // Ticket waiters spin by reading the lock's line, so with packed buckets the spinners
    // of every bucket in the line are in the way of each release. At a saturated lock
    // that count equals, on average, the spinners behind it when its own hand-off
    // happens, which is what the per-waiter term charges.
    let mut pending: Vec<LineSpinners> = if per_waiter > 0 {
        let lines = cost::line_of(w.locks - 1, d.bucket_bytes) + 1;
        vec![LineSpinners::new(&mech); lines]
    } else {
        Vec::new()
    };
    let atomic = ps(m.atomic_ns);
    let pending_bit = cost::has_pending_bit(d.lock, &mech);

    // Which CPUs have threads: for SMT siblings and for time slices.
    let (slices, on_cpu) = Slices::of_threads(
        &w.cpu_of_thread,
        max_cpu.max(m.cpus) as usize + 1,
        ps(m.timeslice_ns).max(1),
    );
    let extra_outside = cost::refcount_outside_ns(m, d.refcount);
    let costs: Vec<ThreadCosts> = w
        .cpu_of_thread
        .iter()
        .map(|&c| {
            let f = cost::smt_factor_of(m, &on_cpu, c);
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
    let bytes = d.bucket_bytes;
    let line_of = |b: usize| cost::line_of(b, bytes);
    // Buckets of a cache line or more: one bucket per line, so the line's last writer is
    // the lock's last holder and no separate line state is needed.
    let lines_shared = d.bucket_bytes < super::CACHE_LINE;
    let nodes = u64::from(m.nodes.max(1));
    let table_node = cost::table_node(w.homes, &x);
    let home_of_line =
        |line: usize| cost::home_of_line(w.homes, x.home_snoop, line, nodes, table_node);
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
    if w.op == SimOp::WaitFail && mech.steady_state_lines {
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
            let at = cost::start_offset(w.start_order, t, s.outside, mech.seeded_start_order);
            s.slices.finish(at, s.outside)
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
                let end = start
                    + cost::reference_rmw(&x, reference.last_cpu, cpu, reference_home, atomic);
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
                // The thread is queued from this event, its first request for the line.
                let writer = if lines_shared {
                    line_last_cpu[line]
                } else {
                    l.last_cpu
                };
                let now =
                    now + cost::prelock_extra(&x, d.extra_prelock_transfers, writer, cpu, home);
                let contended = now < l.free_at;
                let mut start = now.max(l.free_at);
                if contended {
                    start += cost::acquire_contended(
                        &x,
                        pending_bit,
                        now,
                        l.held_from,
                        l.last_cpu,
                        cpu,
                        home,
                    );
                    if per_waiter > 0 {
                        let q = &mut pending[line];
                        start += cost::waiter_term(q.spinning_at(now), per_waiter);
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
                let release = cost::locked_section_end(start, s.hold);
                lock[b] = Line {
                    free_at: release,
                    held_from: cost::held_from(
                        contended,
                        now,
                        start,
                        mech.lone_waiter_in_migration,
                    ),
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
mod tests;

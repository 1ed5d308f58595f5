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
//! An arrival that queues behind a pending-bit waiter delays that waiter's release
//! ([`super::cost::queue_behind_pending`]), so the waiter's next step, already in the
//! queue, is moved too (`delay_pending_waiter`).
//! Outside work runs in the thread's time slices. After the warm-up, each thread's
//! measured operations give its rate; every 16th operation's latency is sampled.
//!
//! Deterministic: no randomness beyond the key set and the seeded start order
//! ([`SimWorkload::start_order`]).

use super::cost::{self, LineSpinners, NO_CPU, Slices, Transfers, ps};
use super::events::EventQueue;
use super::profile::MachineProfile;
use super::{LineHomes, Refcount, SimLength, SimOp, SimResult, SimWorkload};
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

/// A simulated thread's state in the event loop: everything the loop touches per thread,
/// in one 64-byte record (one cache line per event instead of one per array).
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
    /// Operations completed, warm-up included: 64 bits, so that no length a run may
    /// have ([`super::check_work`]) wraps it.
    done: u64,
    /// What its pending event is.
    stage: Stage,
}

impl ThreadState {
    /// The bucket of the thread's next lock, moving its cursor on to the following key
    /// of `keys` (its key list, visited cyclically).
    #[inline]
    fn take_bucket(&mut self, keys: &[u32]) -> usize {
        let b = self.next_bucket as usize;
        self.pos += 1;
        if self.pos as usize == keys.len() {
            self.pos = 0;
        }
        self.next_bucket = keys[self.pos as usize];
        b
    }
}

/// One contended cache line's state: when it is next free and which CPU wrote it last.
#[derive(Clone, Copy, Debug)]
struct Line {
    free_at: u64,
    /// When the last acquisition took the lock (its holder has it from then to `free_at`):
    /// its start, or for an uncontended one its arrival, the line's migration included.
    held_from: u64,
    last_cpu: u32,
    /// The thread of the last acquisition.
    last_thread: u32,
    /// The last acquisition took the pending-bit path and no thread has come behind it
    /// yet ([`cost::queue_behind_pending`]); it takes the lock at `held_from`.
    pending_waiter: bool,
}

impl Line {
    /// Free from the start, written by no CPU yet.
    const UNOWNED: Line = Line {
        free_at: 0,
        held_from: 0,
        last_cpu: NO_CPU,
        last_thread: u32::MAX,
        pending_waiter: false,
    };
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

/// What the threads contend for and what moving it costs: every bucket lock, the cache
/// lines packed buckets share, and the shared reference.
struct Memory {
    x: Transfers,
    /// Bytes per bucket.
    bytes: u32,
    homes: LineHomes,
    /// [`super::Design::extra_prelock_transfers`].
    extra_prelock: u32,
    /// [`super::Mechanisms::lone_waiter_in_migration`].
    lone_waiter: bool,
    /// [`super::Mechanisms::queue_behind_pending`].
    queue_behind_pending: bool,
    /// Ticket locks' per-waiter term, ps (0: none).
    per_waiter: u64,
    /// Start times of the acquisitions still pending on each cache line of contended locks
    /// (only lines that ever had a waiter get an entry): the waiters ahead of an arrival.
    /// Ticket waiters spin by reading the lock's line, so with packed buckets the spinners
    /// of every bucket in the line are in the way of each release. At a saturated lock
    /// that count equals, on average, the spinners behind it when its own hand-off
    /// happens, which is what the per-waiter term charges.
    pending: Vec<LineSpinners>,
    /// One atomic RMW, ps.
    atomic: u64,
    pending_bit: bool,
    /// Buckets smaller than a cache line. Buckets of a cache line or more: one bucket per
    /// line, so the line's last writer is the lock's last holder and no separate line
    /// state is needed.
    lines_shared: bool,
    nodes: u64,
    /// The node of the table's memory. The shared reference lives in the private hash's
    /// header (`struct futex_private_hash`), on that node; only a private hash has one.
    table_node: u32,
    /// Per lock: when it is next free and which CPU last held it, side by side (one cache
    /// line of the simulator's memory per lookup).
    lock: Vec<Line>,
    /// Per line of packed buckets: the CPU that wrote it last.
    line_last_cpu: Vec<u32>,
    /// The shared reference's line.
    reference: Line,
}

impl Memory {
    /// The memory of `w` on `m`, whose CPUs go up to `max_cpu`, every line unowned.
    fn new(m: &MachineProfile, w: &SimWorkload, max_cpu: u32) -> Memory {
        let d = w.design;
        let x = Transfers::new(m, max_cpu, &w.mechanisms);
        let per_waiter = cost::per_waiter_ps(m, d.lock);
        let lines = cost::line_of(w.locks - 1, d.bucket_bytes) + 1;
        let lines_shared = d.bucket_bytes < super::CACHE_LINE;
        Memory {
            bytes: d.bucket_bytes,
            homes: w.homes,
            extra_prelock: d.extra_prelock_transfers,
            lone_waiter: w.mechanisms.lone_waiter_in_migration,
            queue_behind_pending: w.mechanisms.queue_behind_pending,
            table_node: cost::table_node(w.homes, &x),
            x,
            per_waiter,
            pending: if per_waiter > 0 {
                vec![LineSpinners::new(&w.mechanisms); lines]
            } else {
                Vec::new()
            },
            atomic: ps(m.atomic_ns),
            pending_bit: cost::has_pending_bit(d.lock, &w.mechanisms),
            lines_shared,
            nodes: u64::from(m.nodes.max(1)),
            lock: vec![Line::UNOWNED; w.locks],
            line_last_cpu: if lines_shared {
                vec![NO_CPU; lines]
            } else {
                Vec::new()
            },
            reference: Line::UNOWNED,
        }
    }

    #[inline]
    fn line_of(&self, b: usize) -> usize {
        cost::line_of(b, self.bytes)
    }

    #[inline]
    fn home_of_line(&self, line: usize) -> u32 {
        cost::home_of_line(
            self.homes,
            self.x.home_snoop,
            line,
            self.nodes,
            self.table_node,
        )
    }

    /// Steady state, not a cold start: perf runs for 10 s, so every bucket's line was last
    /// written by whichever thread used it last. Starting from unowned lines made each
    /// thread's first pass over its keys (1024 operations, longer than the warm-up) free
    /// of migrations: the global hash of the 256-CPU profile then ran 2.05 M ops/s per
    /// thread over 300 simulated operations and 1.83 M over 3000. One pass in the loop's
    /// own interleaving (operation `i` of every thread, then `i + 1`) leaves each line
    /// with the owner it has when the loop comes round again.
    fn own_lines_as_in_the_steady_state(&mut self, w: &SimWorkload) {
        let longest = w.buckets_per_thread.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for (keys, &cpu) in w.buckets_per_thread.iter().zip(&w.cpu_of_thread) {
                if let Some(&b) = keys.get(i) {
                    self.lock[b as usize].last_cpu = cpu;
                    if self.lines_shared {
                        let line = self.line_of(b as usize);
                        self.line_last_cpu[line] = cpu;
                    }
                }
            }
        }
    }

    /// One atomic RMW on the shared reference's line by thread `s` at `now`: FIFO on the
    /// line, the line moves from its last writer. Returns when the RMW ends.
    #[inline]
    fn reference_rmw(&mut self, s: &ThreadState, now: u64) -> u64 {
        let r = self.reference;
        let start = s.slices.running_at(now.max(r.free_at));
        let end =
            start + cost::reference_rmw(&self.x, r.last_cpu, s.cpu, self.table_node, self.atomic);
        // `held_from` is a bucket lock's (the pending bit); the reference has none.
        self.reference = Line {
            free_at: end,
            last_cpu: s.cpu,
            ..r
        };
        end
    }

    /// Bucket `b`'s lock, requested at `now` by thread `thread` on `cpu` that holds it for
    /// `hold` ps: the wait, the hand-off or migration, the hold. Returns the release, and
    /// the pending waiter this arrival delays with the delay, if it queues behind one
    /// ([`cost::queue_behind_pending`]).
    #[inline]
    fn lock_bucket(
        &mut self,
        b: usize,
        thread: u32,
        cpu: u32,
        hold: u64,
        now: u64,
    ) -> (u64, Option<(u32, u64)>) {
        let x = &self.x;
        let line = self.line_of(b);
        let mut l = self.lock[b];
        let home = self.home_of_line(line);
        // The thread is queued from this event, its first request for the line.
        let writer = if self.lines_shared {
            self.line_last_cpu[line]
        } else {
            l.last_cpu
        };
        let now = now + cost::prelock_extra(x, self.extra_prelock, writer, cpu, home);
        let contended = now < l.free_at;
        let mut delayed = None;
        if contended {
            let back = cost::queue_behind_pending(
                x,
                self.queue_behind_pending,
                if l.pending_waiter { l.held_from } else { 0 },
                now,
                l.last_cpu,
                cpu,
                home,
            );
            if back > 0 {
                // The pending waiter takes the lock and releases it `back` later; the
                // caller moves its thread's next step with it.
                l.free_at += back;
                delayed = Some((l.last_thread, back));
            }
        }
        let pending_path = cost::takes_pending_path(self.pending_bit, contended, now, l.held_from);
        let mut start = now.max(l.free_at);
        if contended {
            start += cost::acquire_contended(
                x,
                self.pending_bit,
                now,
                l.held_from,
                l.last_cpu,
                cpu,
                home,
            );
            if self.per_waiter > 0 {
                let q = &mut self.pending[line];
                start += cost::waiter_term(q.spinning_at(now), self.per_waiter);
                q.push(start);
            }
        } else if self.lines_shared {
            start += x.miss(self.line_last_cpu[line], cpu, home);
        } else {
            start += x.miss(l.last_cpu, cpu, home);
        }
        // `spin_lock()` disables preemption: a spinning waiter and a holder are not
        // descheduled; the tick's preemption waits for the unlock (and the next
        // outside work then starts in the thread's next slice).
        let release = cost::locked_section_end(start, hold);
        self.lock[b] = Line {
            free_at: release,
            held_from: cost::held_from(contended, now, start, self.lone_waiter),
            last_cpu: cpu,
            last_thread: thread,
            pending_waiter: pending_path,
        };
        if self.lines_shared {
            self.line_last_cpu[line] = cpu;
        }
        (release, delayed)
    }
}

/// Every thread at the start, its costs with its CPU's SMT factor applied, its first
/// event `first`.
fn thread_states(
    m: &MachineProfile,
    w: &SimWorkload,
    hash_ns: f64,
    max_cpu: u32,
    first: Stage,
) -> Vec<ThreadState> {
    // Which CPUs have threads: for SMT siblings and for time slices.
    let (slices, on_cpu) = Slices::of_threads(
        &w.cpu_of_thread,
        max_cpu.max(m.cpus) as usize + 1,
        ps(m.timeslice_ns).max(1),
    );
    let extra_outside = cost::refcount_outside_ns(m, w.design.refcount);
    let per_thread = w
        .cpu_of_thread
        .iter()
        .zip(&w.buckets_per_thread)
        .zip(slices);
    per_thread
        .map(|((&cpu, keys), slices)| {
            let f = cost::smt_factor_of(m, &on_cpu, cpu);
            ThreadState {
                outside: ps((m.outside_ns + hash_ns + extra_outside) * f),
                hold: ps(m.hold_ns * f),
                slices,
                began: 0,
                cpu,
                pos: 0,
                next_bucket: keys.first().copied().unwrap_or(0),
                done: 0,
                stage: first,
            }
        })
        .collect()
}

/// When each thread's first event is. Each thread first does its outside work, started at
/// a random point of one outside period: real threads are created one by one and woken
/// from perf's barrier or the scheduler in no particular order. A FIFO lock that every
/// contender re-enters at once keeps the order it first saw (nothing in the model
/// reorders a full queue later), so that order must be random rather than by thread
/// index, which put every node's threads side by side in futex_numa's shared queue. Ties
/// still break by index.
fn start_times(th: &[ThreadState], w: &SimWorkload) -> Vec<u64> {
    let seeded = w.mechanisms.seeded_start_order;
    th.iter()
        .enumerate()
        .map(|(t, s)| {
            let at = cost::start_offset(w.start_order, t, s.outside, seeded);
            s.slices.finish(at, s.outside)
        })
        .collect()
}

/// What the measurement keeps: each thread's measured span and every 16th latency.
struct Measurement {
    len: SimLength,
    start: Vec<u64>,
    end: Vec<u64>,
    latencies: Vec<u64>,
}

impl Measurement {
    fn new(threads: usize, len: SimLength) -> Measurement {
        Measurement {
            len,
            start: vec![0; threads],
            end: vec![0; threads],
            latencies: Vec::with_capacity(threads * 64),
        }
    }

    /// Thread `t` (`s`) finished an operation at `end`; true when that was its last.
    #[inline]
    fn op_done(&mut self, t: usize, s: &mut ThreadState, end: u64) -> bool {
        let warmup = u64::from(self.len.warmup_ops);
        s.done += 1;
        if s.done == warmup {
            self.start[t] = end;
        }
        if s.done > warmup && s.done % 16 == 0 {
            self.latencies.push(end - s.began);
        }
        if s.done == warmup + u64::from(self.len.measured_ops) {
            self.end[t] = end;
            return true;
        }
        false
    }

    /// The per-thread rates and the sampled latencies' percentiles.
    fn result(mut self) -> SimResult {
        let rates: Vec<f64> = self
            .start
            .iter()
            .zip(&self.end)
            .map(|(&start, &end)| {
                let span = (end - start).max(1) as f64 * 1e-12;
                f64::from(self.len.measured_ops) / span
            })
            .collect();
        let stats = ThroughputStats::from_rates(&rates);
        let latencies = &mut self.latencies;
        // Three order statistics: selection, not a sort.
        let mut pct = |p: f64| {
            if latencies.is_empty() {
                0.0
            } else {
                let i =
                    ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
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
            simulated_secs: self.end.iter().copied().max().unwrap_or(0) as f64 * 1e-12,
        }
    }
}

/// Events between two calls of [`simulate_until`]'s `stop`: a few milliseconds of work
/// (an event costs tens of ns), so a stop request ends even a run of minutes at once,
/// and the call costs nothing measurable.
pub const STOP_CHECK_EVENTS: u32 = 1 << 16;

/// Runs the simulation of `w` on machine `m` with per-hash cost `hash_ns`.
///
/// # Panics
/// If the workload is empty or its threads and CPUs disagree (callers build it from a
/// validated sweep).
pub fn simulate(m: &MachineProfile, w: &SimWorkload, hash_ns: f64, len: SimLength) -> SimResult {
    simulate_until(m, w, hash_ns, len, &|| false).expect("a run never stopped")
}

/// [`simulate`] that calls `stop` every [`STOP_CHECK_EVENTS`] events and gives up (None)
/// once it returns true: the caller's stop request (the CLI's SIGINT/SIGTERM flag) ends a
/// long run within milliseconds instead of when the run is done. A run that is not
/// stopped gives exactly [`simulate`]'s result (the check changes no state).
///
/// # Panics
/// As [`simulate`].
pub fn simulate_until(
    m: &MachineProfile,
    w: &SimWorkload,
    hash_ns: f64,
    len: SimLength,
    stop: &dyn Fn() -> bool,
) -> Option<SimResult> {
    let threads = w.buckets_per_thread.len();
    assert_eq!(threads, w.cpu_of_thread.len());
    assert!(threads > 0 && w.locks > 0);
    let shared_ref = w.design.refcount == Refcount::Shared;
    let max_cpu = w.cpu_of_thread.iter().copied().max().unwrap_or(0);
    let mut mem = Memory::new(m, w, max_cpu);
    if w.op == SimOp::WaitFail && w.mechanisms.steady_state_lines {
        mem.own_lines_as_in_the_steady_state(w);
    }
    let first = if shared_ref { Stage::Get } else { Stage::Lock };
    let mut th = thread_states(m, w, hash_ns, max_cpu, first);
    let mut queue = EventQueue::new(&start_times(&th, w));
    let mut measured = Measurement::new(threads, len);

    let mut until_check = STOP_CHECK_EVENTS;
    while let Some((now, t)) = queue.peek() {
        until_check -= 1;
        if until_check == 0 {
            if stop() {
                return None;
            }
            until_check = STOP_CHECK_EVENTS;
        }
        let ti = t as usize;
        let s = &mut th[ti];
        // When the operation in progress ends, if it ends at this event.
        let mut op_end = None;
        // The thread's next event when the operation goes on.
        let mut next = (0, first);
        // A pending waiter this event delays (`cost::queue_behind_pending`).
        let mut delayed = None;
        match s.stage {
            Stage::Get => next = (mem.reference_rmw(s, now), Stage::Lock),
            Stage::Put => op_end = Some(mem.reference_rmw(s, now)),
            // No lock, no write to the bucket: the op ends where the outside work ends.
            Stage::Lock if w.op == SimOp::WakeNone => op_end = Some(now),
            Stage::Lock => {
                // This thread's following bucket, and a prefetch of its lock: about T
                // events from now the thread needs it, and a table of 2^17 buckets is
                // larger than a core's L2.
                let b = s.take_bucket(&w.buckets_per_thread[ti]);
                prefetch(&mem.lock[s.next_bucket as usize]);
                let release;
                (release, delayed) = mem.lock_bucket(b, t, s.cpu, s.hold, now);
                if shared_ref {
                    next = (release, Stage::Put);
                } else {
                    op_end = Some(release);
                }
            }
        }
        let finished = match op_end {
            Some(end) => measured.op_done(ti, s, end),
            None => false,
        };
        if finished {
            queue.retire(t);
        } else {
            if let Some(end) = op_end {
                s.began = end;
                next = (s.slices.finish(end, s.outside), first);
            }
            s.stage = next.1;
            queue.set(t, next.0);
        }
        if let Some((waiter, back)) = delayed {
            delay_pending_waiter(
                &mut th[waiter as usize],
                waiter,
                back,
                &mut queue,
                &mut measured,
            );
        }
    }
    Some(measured.result())
}

/// The pending waiter `s` (thread `t`) releases its lock `back` later than was set when
/// it took it, because a thread queued behind it ([`cost::queue_behind_pending`]): its
/// next step moves. With the shared reference its pending event is the reference's drop
/// at the release, `back` later now. Without, its operation ended at the release: the
/// end, the measured span's bound if that operation was one, and the next outside work
/// (through its time slices) move; a latency sampled at that operation keeps the earlier
/// end, and so does the start the line's spinner count holds for it (which only a queued
/// lock with a per-waiter term, `queue_spinner_ns` > 0, reads: none of the shipped
/// profiles has one). Its pending event has not fired yet: the arrival that delays it
/// came before its release, and that event is at or after the release.
fn delay_pending_waiter(
    s: &mut ThreadState,
    t: u32,
    back: u64,
    queue: &mut EventQueue,
    measured: &mut Measurement,
) {
    let ti = t as usize;
    match queue.time_of(t) {
        // That operation was its last: retired at the earlier end.
        None => measured.end[ti] += back,
        Some(at) if s.stage == Stage::Put => queue.set(t, at + back),
        Some(_) => {
            s.began += back;
            if s.done == u64::from(measured.len.warmup_ops) {
                measured.start[ti] += back;
            }
            queue.set(t, s.slices.finish(s.began, s.outside));
        }
    }
}

#[cfg(test)]
mod tests;

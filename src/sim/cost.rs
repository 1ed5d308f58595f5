//! The simulator's one cost model: every cost a simulated futex operation pays, as a
//! function, called by the event engine ([`super::engine`]) and by trace replay
//! ([`super::trace_replay`]) alike, so that the two cannot drift apart.
//!
//! Each mechanism, with where it comes from:
//!
//! - **Lock hand-off** ([`Transfers::handoff`]): a waiter gets the bucket lock from the
//!   previous holder, `handoff_local_ns` within a node and `handoff_remote_ns` across
//!   (fitted by `sim calibrate`). On top, a term per waiter ([`waiter_term`]): a ticket
//!   lock's waiters all spin on the lock word, so each release must reach every one of
//!   them (`ticket_spinner_ns`; Boyd-Wickizer, Kaashoek, Morris, Zeldovich, "Non-scalable
//!   locks are dangerous", Linux Symposium 2012; x86 ticket spinlock up to Linux 4.1), a
//!   queued (MCS) lock's spin on their own nodes (the small `queue_spinner_ns`; Linux
//!   4.2+, `kernel/locking/qspinlock.c`).
//! - **Line migration** ([`Transfers::miss`]): a free lock whose cache line another CPU
//!   wrote last costs one transfer, `line_miss_ns` within a node and
//!   `line_miss_remote_ns` across (a core-to-core latency matrix's one-line figure; absent,
//!   or with [`Mechanisms::separate_remote_migration`] off, `line_miss_ns` times the
//!   hand-off's remote/local ratio).
//! - **Pending bit** ([`acquire_contended`]): qspinlock's first waiter sets the pending
//!   bit and spins on the lock word itself, so the release hands it one line migration,
//!   not the MCS hand-over (`kernel/locking/qspinlock.c`, `queued_spin_lock_slowpath()`,
//!   4.2+). The ticket lock has no such path.
//! - **Lone waiter during a migration** ([`held_from`]): an uncontended acquirer owns the
//!   lock from its arrival, while its line is still on its way, so a thread arriving then
//!   is the lone (pending-bit) waiter, not a queued one.
//! - **Queue behind a pending waiter** ([`queue_behind_pending`]): the next thread to
//!   come before the pending waiter has the lock spins on the lock word when the waiter
//!   takes it over — as the MCS queue's head after its `xchg_tail()` write if the holder
//!   still holds, or in the bounded wait for the take-over (`_Q_PENDING_LOOPS`) if it
//!   comes during it (`kernel/locking/qspinlock.c`, `queued_spin_lock_slowpath()`, 4.2+)
//!   — so the waiter's take-over write, `clear_pending_set_locked()`, first takes the
//!   line back: one more migration on its way to the lock, its release and its thread's
//!   next step that much later.
//! - **Line homes and home snooping** ([`home_of_line`], [`Transfers::stays_local`]):
//!   every bucket line has a home node (a private hash on the node of the thread that
//!   sized it, `kvzalloc` in `futex_hash_allocate()`, 6.16; the global hash per node from
//!   6.16 or interleaved at boot by `alloc_large_system_hash()` in 2 MiB pages (5.13+
//!   huge-page vmalloc) or base pages before). On a machine whose coherence directory
//!   sits with the home memory (AMD EPYC; `nviennot/core-to-core-latency` matrices) a
//!   transfer is local only when both CPUs and the home share a node.
//! - **Packed buckets** ([`line_of`]): with the pre-3.13 24-byte `struct
//!   futex_hash_bucket` two or three buckets share a 64-byte line, so a neighbour's lock
//!   moves the line (the false sharing 3.13's `____cacheline_aligned_in_smp` removed).
//! - **SMT** ([`smt_factor_of`]): CPUs `c` and `c + cores` are siblings (Linux x86
//!   numbering); a thread whose sibling runs a thread does its own work `smt_slowdown`
//!   times slower (perf's threads never sleep, so such a sibling is always busy).
//! - **Refcount** ([`refcount_outside_ns`], [`reference_rmw`]): 6.16's private hash takes
//!   one `rcuref` shared by the process before the lock and drops it after
//!   (`futex_private_hash_get()`/`_put()`): two atomic RMWs on one line that moves between
//!   the CPUs; 6.17's per-CPU counter (commit 56180dd20c19) is two local atomics.
//! - **Time slicing** ([`Slices`], [`locked_section_end`]): threads pinned to one CPU
//!   share it in round-robin slices of `timeslice_ns`; `spin_lock()` disables preemption
//!   (non-`PREEMPT_RT` kernels), so a slice that ends inside the locked section is extended
//!   to the unlock.
//! - **Start state** ([`start_offset`], steady-state owners in the engine): threads begin
//!   at seeded random points of one outside period, and every line begins owned by the
//!   thread that used it last in one pass of perf's loop.
//!
//! [`Mechanisms`] switches each refinement off, to measure what it does (`Default`: all on,
//! the model as shipped).

use super::profile::MachineProfile;
use super::{CACHE_LINE, GLOBAL_INTERLEAVE_BYTES, LineHomes, LockKind, Refcount};
use crate::key::PAGE_SIZE;
use crate::rng::{GOLDEN_GAMMA, mix64};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Which refinements of the model are on. `Default` is every one on (the shipped model);
/// switching one off restores what the model did before it was added, so that its effect
/// on the error can be measured out of sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mechanisms {
    /// Every bucket line starts owned by the thread that used it last in one pass of the
    /// loop (perf's steady state); off: lines start unowned (a cold start).
    pub steady_state_lines: bool,
    /// Threads start at seeded random points of one outside period; off: in thread-index
    /// order (thread `t` at `t` ps).
    pub seeded_start_order: bool,
    /// A packed line's pending waiters are counted from a min-heap of start times; off:
    /// a FIFO popped from its front (which counts a neighbour bucket's finished
    /// acquisitions behind a later one as spinners).
    pub spinner_heap: bool,
    /// Seed 003's predictions are the mean over three key sets
    /// ([`super::validate::SEED003_KEY_SETS`]); off: one key set. Read by the validation
    /// ([`Mechanisms::key_sets`]), not by the engine.
    pub key_set_means: bool,
    /// A profile's `home_snoop` counts (a transfer is local only if the home shares the
    /// CPUs' node); off: only the two CPUs' nodes count, whatever the profile says.
    pub home_snoop: bool,
    /// A profile's `line_miss_remote_ns` counts; off: a cross-node migration is
    /// `line_miss_ns` times the hand-off's remote/local ratio.
    pub separate_remote_migration: bool,
    /// A queued lock's lone waiter takes the pending-bit path (one line migration); off:
    /// every waiter pays the hand-off.
    pub pending_bit: bool,
    /// An uncontended acquirer owns the lock from its arrival, so a thread arriving while
    /// the line migrates to it is the lone waiter; off: from its start (after the
    /// migration), so such a thread pays the hand-off.
    pub lone_waiter_in_migration: bool,
    /// A thread queueing while a pending-bit waiter still spins takes the lock word's line
    /// from it, which it fetches back before it takes the lock (one migration); off: the
    /// pending waiter's hand-over is not delayed.
    pub queue_behind_pending: bool,
}

impl Default for Mechanisms {
    fn default() -> Self {
        Mechanisms {
            steady_state_lines: true,
            seeded_start_order: true,
            spinner_heap: true,
            key_set_means: true,
            home_snoop: true,
            separate_remote_migration: true,
            pending_bit: true,
            lone_waiter_in_migration: true,
            queue_behind_pending: true,
        }
    }
}

impl Mechanisms {
    /// Every switch with its name, in declaration order (for tables and CLI flags).
    pub const NAMES: [&'static str; 9] = [
        "steady-state-lines",
        "seeded-start-order",
        "spinner-heap",
        "key-set-means",
        "home-snoop",
        "separate-remote-migration",
        "pending-bit",
        "lone-waiter-in-migration",
        "queue-behind-pending",
    ];

    /// The switch called `name` (one of [`Mechanisms::NAMES`]).
    pub fn switch_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "steady-state-lines" => &mut self.steady_state_lines,
            "seeded-start-order" => &mut self.seeded_start_order,
            "spinner-heap" => &mut self.spinner_heap,
            "key-set-means" => &mut self.key_set_means,
            "home-snoop" => &mut self.home_snoop,
            "separate-remote-migration" => &mut self.separate_remote_migration,
            "pending-bit" => &mut self.pending_bit,
            "lone-waiter-in-migration" => &mut self.lone_waiter_in_migration,
            "queue-behind-pending" => &mut self.queue_behind_pending,
            _ => return None,
        })
    }

    /// The model with the switch `name` off; the error lists the valid names.
    pub fn without(mut self, name: &str) -> Result<Mechanisms, String> {
        match self.switch_mut(name) {
            Some(b) => {
                *b = false;
                Ok(self)
            }
            None => Err(format!(
                "'{name}' is not a model mechanism; valid: {}",
                Mechanisms::NAMES.join(", ")
            )),
        }
    }

    /// How many key sets a prediction averages when the model averages `n`.
    pub fn key_sets(&self, n: u64) -> u64 {
        if self.key_set_means { n } else { 1 }
    }
}

/// Time unit inside the simulator: picoseconds, so that sub-ns costs add up exactly.
#[inline]
pub fn ps(ns: f64) -> u64 {
    (ns * 1000.0).round().max(0.0) as u64
}

/// No CPU has written the line yet.
pub const NO_CPU: u32 = u32::MAX;

/// The costs of moving a cache line or a lock between two CPUs, in picoseconds.
#[derive(Clone, Debug)]
pub struct Transfers {
    /// The node of each CPU, looked up rather than computed (`node_of` divides).
    pub node: Vec<u32>,
    /// Whether a transfer is local only when the line's home is the CPUs' node too.
    pub home_snoop: bool,
    /// Lock hand-off within a node.
    pub local: u64,
    /// Lock hand-off across nodes.
    pub remote: u64,
    /// Line migration within a node.
    pub miss_local: u64,
    /// Line migration across nodes.
    pub miss_remote: u64,
}

impl Transfers {
    /// The transfers of profile `m` for CPUs `0..=max_cpu.max(m.cpus)`, with `mech`'s
    /// switches applied.
    pub fn new(m: &MachineProfile, max_cpu: u32, mech: &Mechanisms) -> Transfers {
        Transfers {
            node: (0..=max_cpu.max(m.cpus)).map(|c| m.node_of(c)).collect(),
            home_snoop: m.home_snoop && mech.home_snoop,
            local: ps(m.handoff_local_ns),
            remote: ps(m.handoff_remote_ns),
            miss_local: ps(m.line_miss_ns),
            miss_remote: ps(line_miss_remote_ns(m, mech)),
        }
    }

    /// Whether moving a line homed on node `home` from CPU `a` to CPU `b` stays within
    /// one node: both CPUs on one node and, with home snooping, the line's memory there
    /// too (the request goes to the home's directory, which forwards it to the owner).
    #[inline]
    pub fn stays_local(&self, a: u32, b: u32, home: u32) -> bool {
        let node = self.node[a as usize];
        node == self.node[b as usize] && (!self.home_snoop || node == home)
    }

    /// A contended lock's hand-off from the CPU that held it last (0 from none or from
    /// itself).
    #[inline]
    pub fn handoff(&self, from: u32, to: u32, home: u32) -> u64 {
        if from == NO_CPU || from == to {
            0
        } else if self.stays_local(from, to, home) {
            self.local
        } else {
            self.remote
        }
    }

    /// One line's migration from the CPU that wrote it last (0 from none or from itself).
    #[inline]
    pub fn miss(&self, from: u32, to: u32, home: u32) -> u64 {
        if from == NO_CPU || from == to {
            0
        } else if self.stays_local(from, to, home) {
            self.miss_local
        } else {
            self.miss_remote
        }
    }
}

/// A line migration across nodes, ns: the profile's `line_miss_remote_ns` when it states
/// one and the mechanism is on, else `line_miss_ns` times the hand-off's remote/local
/// ratio.
pub fn line_miss_remote_ns(m: &MachineProfile, mech: &Mechanisms) -> f64 {
    match m.line_miss_remote_ns {
        Some(v) if mech.separate_remote_migration => v,
        _ => m.line_miss_ns * m.remote_ratio(),
    }
}

/// The per-waiter term of a lock kind, ps: `ticket_spinner_ns` for a ticket lock (every
/// waiter re-reads the lock word after each release), `queue_spinner_ns` for a queued one.
pub fn per_waiter_ps(m: &MachineProfile, lock: LockKind) -> u64 {
    ps(match lock {
        LockKind::Ticket => m.ticket_spinner_ns.unwrap_or(0.0),
        LockKind::Queued => m.queue_spinner_ns,
    })
}

/// The extra hand-off time of `spinners` waiters ahead of an arrival, ps.
#[inline]
pub fn waiter_term(spinners: u64, per_waiter: u64) -> u64 {
    spinners * per_waiter
}

/// The extra line transfers before the lock ([`super::bucket_line`]: reads of the bucket
/// line before the operation's first write to it, `hb->priv` on 6.16-rc … 7.1), ps: each
/// moves the line once more from `writer`, its last writer, before the thread reaches the
/// lock.
#[inline]
pub fn prelock_extra(x: &Transfers, transfers: u32, writer: u32, cpu: u32, home: u32) -> u64 {
    if transfers == 0 {
        0
    } else {
        u64::from(transfers) * x.miss(writer, cpu, home)
    }
}

/// Whether a lock of kind `lock` has qspinlock's pending-bit path in this model.
pub fn has_pending_bit(lock: LockKind, mech: &Mechanisms) -> bool {
    lock == LockKind::Queued && mech.pending_bit
}

/// What a contended acquisition pays on top of waiting for the release, ps: arriving at
/// `now` to a lock whose current holder took it at `held_from` (see [`held_from`]) and
/// whose line CPU `last` wrote last. The only waiter behind a holder that has the lock
/// already (`now >= held_from`) spins on the lock word with the pending bit, and the
/// release hands it the word's line, one migration, without the MCS hand-over that
/// `handoff_*_ns` (fitted on long queues) holds. Otherwise the hand-off.
#[inline]
pub fn acquire_contended(
    x: &Transfers,
    pending_bit: bool,
    now: u64,
    held_from: u64,
    last: u32,
    cpu: u32,
    home: u32,
) -> u64 {
    if pending_bit && now >= held_from {
        x.miss(last, cpu, home)
    } else {
        x.handoff(last, cpu, home)
    }
}

/// Whether an acquisition took qspinlock's pending-bit path, the condition of
/// [`acquire_contended`]: contended, on a lock that has the path, arriving when the
/// holder had the lock already.
#[inline]
pub fn takes_pending_path(pending_bit: bool, contended: bool, now: u64, held_from: u64) -> bool {
    pending_bit && contended && now >= held_from
}

/// What a thread arriving at `now` costs the pending waiter ahead of it, ps. The lock's
/// last acquisition, on CPU `waiter`, took the pending path and takes the lock at
/// `waiter_start` (0: it did not take the pending path, or a thread has come behind it
/// already). An arrival before then, on `cpu`, spins on the lock word when the waiter's
/// take-over write (`clear_pending_set_locked()`) comes: arriving while the holder holds,
/// it finds the word locked and pending and queues, becoming the MCS queue's head, which
/// writes the word (`xchg_tail()`) and spins on it; arriving during the take-over, it
/// finds the word pending without the lock and spins on it in the bounded wait for the
/// take-over (`_Q_PENDING_LOOPS`, 512 reads on x86) before it sets the pending bit
/// itself. Either way the take-over first takes the line back from it: one migration
/// from `cpu` (an approximation of invalidating its copy). Nothing otherwise, or when
/// `on` is false. (The second kind then takes the pending path, where the engine charges
/// it the hand-off: see [`acquire_contended`].)
#[inline]
pub fn queue_behind_pending(
    x: &Transfers,
    on: bool,
    waiter_start: u64,
    now: u64,
    waiter: u32,
    cpu: u32,
    home: u32,
) -> u64 {
    if on && now < waiter_start {
        x.miss(cpu, waiter, home)
    } else {
        0
    }
}

/// From when an acquisition counts as holding the lock, for the pending-bit test of the
/// next arrival: a waiter from its `start`; an uncontended acquirer from its arrival
/// `now` (with [`Mechanisms::lone_waiter_in_migration`]), so that a thread coming while
/// the line is still migrating to it queues behind no one.
#[inline]
pub fn held_from(contended: bool, now: u64, start: u64, lone_waiter_in_migration: bool) -> u64 {
    if contended || !lone_waiter_in_migration {
        start
    } else {
        now
    }
}

/// The cache line of bucket `b` in an array of `bucket_bytes`-byte buckets.
#[inline]
pub fn line_of(b: usize, bucket_bytes: u32) -> usize {
    (b as u64 * u64::from(bucket_bytes) / u64::from(CACHE_LINE)) as usize
}

/// The node of the table's memory for [`LineHomes::NodeOfCpu`] (0 for blocks).
pub fn table_node(homes: LineHomes, x: &Transfers) -> u32 {
    match homes {
        LineHomes::NodeOfCpu(c) => x.node.get(c as usize).copied().unwrap_or(0),
        LineHomes::Blocks(_) => 0,
    }
}

/// The home node of cache line `line` of a table laid out as `homes` on `nodes` nodes
/// (`table_node` from [`table_node`]). Without home snooping no transfer looks at the
/// home, so an interleaved table's divisions are skipped and `table_node` returned.
#[inline]
pub fn home_of_line(
    homes: LineHomes,
    home_snoop: bool,
    line: usize,
    nodes: u64,
    table_node: u32,
) -> u32 {
    match homes {
        LineHomes::Blocks(bytes) if home_snoop => {
            (line as u64 * u64::from(CACHE_LINE) / bytes.max(1) % nodes) as u32
        }
        _ => table_node,
    }
}

/// The line homes of one global hash table of `buckets` buckets of `bucket_bytes` bytes,
/// interleaved over the nodes at boot (`alloc_large_system_hash()` with `hashdist`): in
/// 2 MiB huge pages when the table is that large (5.13+ huge-page vmalloc), else in base
/// pages.
pub fn global_table_homes(buckets: u64, bucket_bytes: u32) -> LineHomes {
    if buckets * u64::from(bucket_bytes.max(1)) >= GLOBAL_INTERLEAVE_BYTES {
        LineHomes::Blocks(GLOBAL_INTERLEAVE_BYTES)
    } else {
        LineHomes::Blocks(PAGE_SIZE)
    }
}

/// Whether a thread on `cpu` has a busy SMT sibling: another CPU of its core
/// (`cpu % cores + k·cores`) with a thread (`on_cpu[c] > 0`).
pub fn sibling_busy(m: &MachineProfile, on_cpu: &[u32], cpu: u32) -> bool {
    let cores = m.cores() as usize;
    let core = cpu as usize % cores;
    (0..m.threads_per_core as usize)
        .map(|k| core + k * cores)
        .any(|c| c != cpu as usize && on_cpu.get(c).is_some_and(|&n| n > 0))
}

/// The factor on a thread's own work (outside, hash, hold) on `cpu`: the profile's SMT
/// slowdown when a sibling is busy, else 1.
pub fn smt_factor_of(m: &MachineProfile, on_cpu: &[u32], cpu: u32) -> f64 {
    if sibling_busy(m, on_cpu, cpu) {
        m.smt_factor()
    } else {
        1.0
    }
}

/// Work a reference adds outside the lock, ns: the per-CPU counter's two local atomics
/// (6.17+); the shared reference's RMWs are on a contended line ([`reference_rmw`]).
pub fn refcount_outside_ns(m: &MachineProfile, refcount: Refcount) -> f64 {
    match refcount {
        Refcount::PerCpu => 2.0 * m.atomic_ns,
        _ => 0.0,
    }
}

/// One RMW on the shared reference (6.16), ps: its line migrates from the CPU that wrote
/// it last, then the atomic itself. An operation pays it twice (get and put).
#[inline]
pub fn reference_rmw(x: &Transfers, last: u32, cpu: u32, home: u32, atomic: u64) -> u64 {
    x.miss(last, cpu, home) + atomic
}

/// When a locked section begun at `start` ends: `hold` later, whatever the thread's time
/// slice, since `spin_lock()` disables preemption and the tick's reschedule waits for the
/// unlock (the slice is extended over the section).
#[inline]
pub fn locked_section_end(start: u64, hold: u64) -> u64 {
    start + hold
}

/// Round-robin time slices of the threads pinned to one CPU: thread `index` of `count`
/// runs in `[(m·count + index)·slice, (m·count + index + 1)·slice)` for every `m`.
#[derive(Clone, Copy, Debug)]
pub struct Slices {
    /// This thread's place among the CPU's threads.
    pub index: u32,
    /// Threads on the CPU.
    pub count: u32,
    /// The slice, ps.
    pub slice: u64,
}

impl Slices {
    /// The slices of threads pinned to `cpu_of_thread`, `slice` ps each.
    pub fn of_threads(cpu_of_thread: &[u32], cpus: usize, slice: u64) -> (Vec<Slices>, Vec<u32>) {
        let mut on_cpu = vec![0u32; cpus];
        let index: Vec<u32> = cpu_of_thread
            .iter()
            .map(|&c| {
                let i = on_cpu[c as usize];
                on_cpu[c as usize] += 1;
                i
            })
            .collect();
        let slices = index
            .into_iter()
            .zip(cpu_of_thread)
            .map(|(index, &c)| Slices {
                index,
                count: on_cpu[c as usize],
                slice,
            })
            .collect();
        (slices, on_cpu)
    }

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
    #[inline]
    pub fn running_at(&self, t: u64) -> u64 {
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
    #[inline]
    pub fn finish(&self, t: u64, work: u64) -> u64 {
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

/// A uniform number in [0, 1) from (`seed`, `index`): SplitMix64's output function on a
/// position, hashed rather than drawn in sequence so that it does not depend on event
/// order.
pub fn unit_interval(seed: u64, index: u64) -> f64 {
    let z = mix64(
        seed.wrapping_mul(GOLDEN_GAMMA)
            .wrapping_add(index.wrapping_add(1).wrapping_mul(0xd1b5_4a32_d192_ed03)),
    );
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// When thread `t` begins its first outside work of `outside` ps: at a seeded random point
/// of one outside period plus `t` ps (ties by index), or at `t` ps with
/// [`Mechanisms::seeded_start_order`] off.
pub fn start_offset(seed: u64, t: usize, outside: u64, seeded: bool) -> u64 {
    let at = if seeded {
        (unit_interval(seed, t as u64) * outside as f64) as u64
    } else {
        0
    };
    t as u64 + at
}

/// The acquisitions still to start on one cache line's locks: their waiters spin on it.
#[derive(Clone, Debug)]
pub enum LineSpinners {
    /// Start times, earliest on top. A min-heap, not a FIFO: one lock's starts are
    /// increasing, but those of the two or three packed buckets of a line interleave.
    Heap(BinaryHeap<Reverse<u64>>),
    /// Start times in arrival order, popped from the front ([`Mechanisms::spinner_heap`]
    /// off): keeps a neighbour bucket's finished acquisitions behind a later one and
    /// counts them as spinners.
    Fifo(VecDeque<u64>),
}

impl LineSpinners {
    /// An empty line, counted as `mech` says.
    pub fn new(mech: &Mechanisms) -> LineSpinners {
        if mech.spinner_heap {
            LineSpinners::Heap(BinaryHeap::new())
        } else {
            LineSpinners::Fifo(VecDeque::new())
        }
    }

    /// How many acquisitions on the line start after `now` (forgetting those that did).
    pub fn spinning_at(&mut self, now: u64) -> u64 {
        match self {
            LineSpinners::Heap(h) => {
                while h.peek().is_some_and(|&Reverse(s)| s <= now) {
                    h.pop();
                }
                h.len() as u64
            }
            LineSpinners::Fifo(q) => {
                while q.front().is_some_and(|&s| s <= now) {
                    q.pop_front();
                }
                q.len() as u64
            }
        }
    }

    /// Records an acquisition starting at `start`.
    pub fn push(&mut self, start: u64) {
        match self {
            LineSpinners::Heap(h) => h.push(Reverse(start)),
            LineSpinners::Fifo(q) => q.push_back(start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 CPUs on 2 nodes (CPUs 0, 1 on node 0; 2, 3 on node 1), hand-off 200 / 600 ns,
    /// migration 50 ns (remote by ratio: 150 ns).
    fn machine() -> MachineProfile {
        MachineProfile {
            handoff_local_ns: 200.0,
            handoff_remote_ns: 600.0,
            line_miss_ns: 50.0,
            ..MachineProfile::minimal("test", 4, 2)
        }
    }

    fn transfers(m: &MachineProfile) -> Transfers {
        Transfers::new(m, 3, &Mechanisms::default())
    }

    #[test]
    fn a_hand_off_is_local_within_a_node_and_remote_across() {
        let x = transfers(&machine());
        assert_eq!(x.handoff(0, 1, 0), 200_000);
        assert_eq!(x.handoff(0, 2, 0), 600_000);
        assert_eq!(x.handoff(1, 1, 0), 0);
        assert_eq!(x.handoff(NO_CPU, 1, 0), 0);
    }

    #[test]
    fn a_migration_across_nodes_defaults_to_the_hand_off_ratio_or_the_stated_figure() {
        let mut m = machine();
        let x = transfers(&m);
        assert_eq!((x.miss(0, 1, 0), x.miss(0, 3, 0)), (50_000, 150_000));
        m.line_miss_remote_ns = Some(80.0);
        assert_eq!(transfers(&m).miss(0, 3, 0), 80_000);
        let off = Mechanisms::default()
            .without("separate-remote-migration")
            .unwrap();
        assert_eq!(Transfers::new(&m, 3, &off).miss(0, 3, 0), 150_000);
    }

    #[test]
    fn with_home_snooping_a_transfer_is_local_only_at_home() {
        let mut m = machine();
        m.home_snoop = true;
        let x = transfers(&m);
        // CPUs 0 and 1 (node 0): local with the line at home on node 0, remote from node 1.
        assert_eq!((x.miss(0, 1, 0), x.miss(0, 1, 1)), (50_000, 150_000));
        assert_eq!((x.handoff(0, 1, 0), x.handoff(0, 1, 1)), (200_000, 600_000));
        let off = Mechanisms::default().without("home-snoop").unwrap();
        assert_eq!(Transfers::new(&m, 3, &off).miss(0, 1, 1), 50_000);
    }

    #[test]
    fn the_priv_read_moves_the_line_once_more_from_its_last_writer() {
        // bucket_line's one extra transfer (6.16-rc … 7.1): a migration from the writer,
        // 50 ns within a node, 150 ns across, nothing from this CPU itself or for 7.2.
        let x = transfers(&machine());
        assert_eq!(prelock_extra(&x, 1, 1, 0, 0), 50_000);
        assert_eq!(prelock_extra(&x, 1, 3, 0, 0), 150_000);
        assert_eq!(prelock_extra(&x, 1, 0, 0, 0), 0);
        assert_eq!(prelock_extra(&x, 0, 3, 0, 0), 0);
    }

    #[test]
    fn the_per_waiter_term_is_the_lock_kinds() {
        let mut m = machine();
        m.ticket_spinner_ns = Some(20.0);
        m.queue_spinner_ns = 1.5;
        assert_eq!(per_waiter_ps(&m, LockKind::Ticket), 20_000);
        assert_eq!(per_waiter_ps(&m, LockKind::Queued), 1_500);
        // 15 waiters ahead of a ticket arrival: 15 × 20 ns.
        assert_eq!(waiter_term(15, 20_000), 300_000);
    }

    #[test]
    fn a_lone_waiter_of_a_queued_lock_pays_one_migration_and_a_queued_one_the_hand_off() {
        let x = transfers(&machine());
        let mech = Mechanisms::default();
        let pb = has_pending_bit(LockKind::Queued, &mech);
        // Holder took the lock at 100 ps; arrival at 150 from node 0 / node 1.
        assert_eq!(acquire_contended(&x, pb, 150, 100, 0, 1, 0), 50_000);
        assert_eq!(acquire_contended(&x, pb, 150, 100, 0, 2, 0), 150_000);
        // Arrival before the holder took it (it waits behind someone): hand-off.
        assert_eq!(acquire_contended(&x, pb, 50, 100, 0, 1, 0), 200_000);
        // Ticket locks and the switch off: always the hand-off.
        assert!(!has_pending_bit(LockKind::Ticket, &mech));
        let off = mech.without("pending-bit").unwrap();
        assert!(!has_pending_bit(LockKind::Queued, &off));
        assert_eq!(acquire_contended(&x, false, 150, 100, 0, 1, 0), 200_000);
    }

    #[test]
    fn a_thread_queueing_behind_a_spinning_pending_waiter_costs_it_one_migration_back() {
        // machine(): CPUs 0, 1 on node 0, 2, 3 on node 1; migrations 50 ns within a
        // node, 150 ns across. The pending waiter on CPU 1 takes the lock at 300 ps.
        let x = transfers(&machine());
        let q =
            |on, waiter_start, now, cpu| queue_behind_pending(&x, on, waiter_start, now, 1, cpu, 0);
        assert_eq!(
            (q(true, 300, 200, 0), q(true, 300, 200, 2)),
            (50_000, 150_000)
        );
        // Once it holds the lock, no pending waiter (0), or the switch off: nothing.
        assert_eq!(
            (
                q(true, 300, 300, 0),
                q(true, 0, 200, 0),
                q(false, 300, 200, 0)
            ),
            (0, 0, 0)
        );
        // The pending path: contended, the lock has it, the holder had the lock already.
        assert!(takes_pending_path(true, true, 150, 100));
        assert!(!takes_pending_path(true, true, 50, 100));
        assert!(!takes_pending_path(true, false, 150, 100));
        assert!(!takes_pending_path(false, true, 150, 100));
    }

    #[test]
    fn an_uncontended_acquirer_holds_the_lock_from_its_arrival() {
        // Arrived at 10, line migrated until 60.
        assert_eq!(held_from(false, 10, 60, true), 10);
        assert_eq!(held_from(false, 10, 60, false), 60);
        assert_eq!(held_from(true, 10, 60, true), 60);
    }

    #[test]
    fn packed_buckets_share_lines_and_aligned_ones_do_not() {
        // 24-byte buckets start at bytes 0, 24, 48 (line 0), 72, 96, 120 (line 1), 144.
        let lines: Vec<usize> = (0..7).map(|b| line_of(b, 24)).collect();
        assert_eq!(lines, [0, 0, 0, 1, 1, 1, 2]);
        assert_eq!((line_of(5, 64), line_of(5, 128)), (5, 10));
    }

    #[test]
    fn a_lines_home_follows_the_interleave() {
        // 2 MiB blocks on 2 nodes: lines 0..32767 on node 0, 32768.. on node 1, then 0.
        let homes = LineHomes::Blocks(2 << 20);
        let h = |line| home_of_line(homes, true, line, 2, 0);
        assert_eq!((h(0), h(32767), h(32768), h(65536)), (0, 0, 1, 0));
        // Without home snooping the home is not computed.
        assert_eq!(home_of_line(homes, false, 32768, 2, 0), 0);
        let x = transfers(&machine());
        assert_eq!(table_node(LineHomes::NodeOfCpu(3), &x), 1);
        // 65536 aligned buckets = 4 MiB: huge pages; 256 = 16 KiB: base pages.
        assert_eq!(global_table_homes(65536, 64), LineHomes::Blocks(2 << 20));
        assert_eq!(global_table_homes(256, 64), LineHomes::Blocks(4096));
    }

    #[test]
    fn a_busy_sibling_applies_the_smt_factor() {
        // 4 CPUs, 2 cores: CPU 0's sibling is CPU 2.
        let mut m = MachineProfile::minimal("smt", 4, 1);
        m.threads_per_core = 2;
        m.smt_slowdown = Some(1.5);
        assert_eq!(smt_factor_of(&m, &[1, 0, 0, 0], 0), 1.0);
        assert_eq!(smt_factor_of(&m, &[1, 0, 1, 0], 0), 1.5);
        assert_eq!(smt_factor_of(&m, &[1, 1, 0, 0], 0), 1.0);
    }

    #[test]
    fn the_references_cost_two_local_atomics_per_cpu_or_a_migration_each_when_shared() {
        let m = machine();
        assert_eq!(refcount_outside_ns(&m, Refcount::PerCpu), 14.0);
        assert_eq!(refcount_outside_ns(&m, Refcount::Shared), 0.0);
        assert_eq!(refcount_outside_ns(&m, Refcount::None), 0.0);
        let x = transfers(&m);
        // From CPU 0 to CPU 2 (remote, 150 ns) plus the 7 ns atomic.
        assert_eq!(reference_rmw(&x, 0, 2, 0, 7_000), 157_000);
        assert_eq!(reference_rmw(&x, 2, 2, 0, 7_000), 7_000);
    }

    #[test]
    fn time_slices_alternate_and_a_locked_section_is_not_cut() {
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
        // A section begun at 18 with 5 ps of hold ends at 23, past the slice end at 20.
        assert_eq!(locked_section_end(18, 5), 23);
        let (sl, on) = Slices::of_threads(&[0, 1, 0], 2, 7);
        assert_eq!(on, [2, 1]);
        assert_eq!((sl[2].index, sl[2].count, sl[1].count), (1, 2, 1));
    }

    #[test]
    fn the_start_order_is_seeded_or_by_index() {
        assert_eq!(start_offset(9, 3, 1000, false), 3);
        let a = start_offset(9, 3, 1000, true);
        assert!((3..1003).contains(&a));
        assert_eq!(a, 3 + (unit_interval(9, 3) * 1000.0) as u64);
    }

    #[test]
    fn a_line_counts_only_the_acquisitions_still_to_start_whatever_their_order() {
        // Two buckets of one packed line: bucket A's waiter starts at 300, then bucket B's
        // at 150. At 200 only A's is still spinning; at 400 none is. A FIFO keeps B's
        // behind A's and counts it at 200 too.
        let mut line = LineSpinners::new(&Mechanisms::default());
        line.push(300);
        line.push(150);
        assert_eq!(line.spinning_at(200), 1);
        line.push(350);
        assert_eq!(line.spinning_at(300), 1);
        assert_eq!(line.spinning_at(400), 0);
        let mut fifo = LineSpinners::new(&Mechanisms::default().without("spinner-heap").unwrap());
        fifo.push(300);
        fifo.push(150);
        assert_eq!(fifo.spinning_at(200), 2);
    }

    #[test]
    fn every_switch_has_a_name_and_a_bad_one_is_refused() {
        for n in Mechanisms::NAMES {
            let m = Mechanisms::default().without(n).unwrap();
            assert_ne!(m, Mechanisms::default(), "{n}");
        }
        let e = Mechanisms::default().without("magic").unwrap_err();
        assert!(e.contains("'magic'") && e.contains("pending-bit"), "{e}");
        let one = Mechanisms::default().without("key-set-means").unwrap();
        assert_eq!((Mechanisms::default().key_sets(3), one.key_sets(3)), (3, 1));
    }
}

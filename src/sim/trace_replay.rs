//! Trace-driven simulation: replays each thread's futex operations of a real program
//! (`futexhash capture` or strace, [`crate::workload::read_trace`]) in their captured order
//! on a machine profile, to answer "what would my program's buckets do on 256 CPUs with N
//! slots, or on the global table".
//!
//! Every cost is a function of [`super::cost`], the one cost model [`super::simulate`]
//! charges too, on the design axes `sim` has ([`ReplayDesign`]): hand-off, line migration
//! (`line_miss_remote_ns`), qspinlock's pending bit, the lone waiter during a migration
//! and the queue behind a pending waiter, ticket locks' per-spinner term, packed buckets
//! sharing lines, line homes with home snooping, SMT slowdown, the private hash's
//! reference (6.16 shared, 6.17 per-CPU) and time slices. One difference in how a cost
//! lands: a call queueing behind a pending waiter delays the lock's release here, but not
//! the waiter's own call end, latency or next call, which the replay placed when it
//! processed that call whole (the event engine moves them). What the replay itself adds:
//!
//! - every captured thread is one simulated thread, pinned round-robin to the profile's
//!   CPUs in order of first appearance;
//! - one operation = the outside work (`outside_ns + hash_ns`, once per call) and then, for
//!   each key the call names in argument order (`uaddr`, `uaddr2`, each `futex_waitv`
//!   entry), the FIFO bucket lock of that key's bucket for `hold_ns`. A call's locks are
//!   taken one after the other when the call is processed, in order of the calls' start
//!   times (the engine's order for single-lock calls). Wakes lock too: a real program
//!   calls `FUTEX_WAKE` when its lock word says there is a waiter (glibc), so the kernel's
//!   lockless "no waiters" shortcut is the exception. Waits are not blocked (nobody is
//!   woken in the model): the time a thread really slept is part of its think time;
//! - think time: the next call of a thread starts no earlier than `think_scale ×` the gap
//!   between the two calls' captured entry times after the previous call's start (and
//!   never before the previous call ends). `think_scale = 1` replays the program's own
//!   timeline, `0` replays the calls back to back (a stress test of the key sequence).
//!   Traces without times (strace without `-ttt`) are replayed back to back;
//! - threads sharing a CPU: replayed back to back they never sleep, as perf's threads, and
//!   share it in round-robin time slices as in `simulate` (locked sections unpreempted);
//!   with think time a thread that thinks gives the CPU away, so the CPU runs its threads'
//!   calls one after another (work-conserving, each call whole);
//! - tables: `buckets = 0` is the global hash (`roundup_pow_of_two(256 × CPUs)` buckets
//!   unless [`ReplayDesign::global_buckets`] says otherwise) for every key; `buckets = N >
//!   0` gives every process (every `mm` of a private key) its own private table of N
//!   buckets (v6.16+ `futex_private_hash`), while shared keys still use the global hash,
//!   as in `kernel/futex/core.c` `futex_hash()`. Only a call on a private table takes the
//!   reference (`futex_private_hash_get()`), before its first lock and dropped after its
//!   last;
//! - line homes: the global table is interleaved over the nodes (2 MiB pages when it is
//!   that large, else 4 KiB, [`cost::global_table_homes`]); a process's private table is
//!   on the node of the first of its threads that uses it (the capture does not say which
//!   thread sized it), and so is its reference;
//! - the start: lines begin unowned (a program's start, not perf's steady state). With
//!   think time each thread's first call starts at `think_scale ×` its captured entry
//!   time after the earliest replayed call's, so threads the program started seconds apart
//!   do not meet at the start (threads whose first calls were captured at the same time
//!   start together, taken in order of first appearance); replayed back to back the
//!   threads begin 1 ps apart in order of first appearance, as perf's threads start
//!   together. Either way [`Mechanisms::steady_state_lines`] and
//!   [`Mechanisms::seeded_start_order`] do not apply.
//!
//! Contention is split by cause: an acquisition that found its lock held waited for the
//! same futex (the holder locked the same key: no hash or table size can help) or for
//! another futex sharing the bucket (the hash and the table size can help), and the
//! buckets with the most waits are kept with their keys.

use super::calibrate::global_hash_size;
use super::cost::{self, LineSpinners, Mechanisms, NO_CPU, Slices, Transfers, ps};
use super::profile::MachineProfile;
use super::{CACHE_LINE, Design, LineHomes, Refcount};
use crate::hashers::KeyHasher;
use crate::key::{FutexKey, KeyKind};
use crate::sim::SimError;
use crate::workload::Recording;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// The design a trace is replayed on (`Default`: aligned buckets, queued lock, no
/// reference, the profile's global hash size, every mechanism on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayDesign {
    /// Lock kind, reference and bucket size, as `sim`'s flags set them.
    pub design: Design,
    /// Buckets of the global hash; `None`: `roundup_pow_of_two(256 × CPUs)`.
    pub global_buckets: Option<u64>,
    /// Which refinements of the cost model are on.
    pub mechanisms: Mechanisms,
}

/// One replayed operation: the locks it takes with the key of each, the private table
/// whose reference it takes (if any), and the captured gap to the thread's next operation.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Op {
    locks: Vec<(u32, u32)>,
    process: Option<u32>,
    think_ps: u64,
}

/// A bucket with waits, for the list of the hottest.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HotBucket {
    /// `global N`, or `process P slot N` for a private table.
    pub bucket: String,
    /// Acquisitions of it that found it held.
    pub waits: u64,
    /// Of those, the ones whose holder had locked the same futex.
    pub same_key_waits: u64,
    /// Every key of the trace in it, in order of first appearance.
    pub keys: Vec<String>,
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
    /// `aligned`, `packed` or `N B`.
    pub layout: String,
    /// `queued` or `ticket`.
    pub lock: &'static str,
    /// `none`, `shared` or `percpu`.
    pub refcount: &'static str,
    /// Simulated threads (captured threads with at least one keyed call).
    pub threads: usize,
    /// Operations replayed.
    pub ops: u64,
    /// Think-time factor applied to the captured gaps.
    pub think_scale: f64,
    /// What the think time is: `captured` gaps (scaled) or `none` (trace without times).
    pub think: &'static str,
    /// First to last replayed call as captured, seconds (0 without times).
    pub captured_secs: f64,
    /// First to last simulated call end, seconds.
    pub simulated_secs: f64,
    /// Mean per-thread operations per second over each thread's own active span.
    pub ops_per_sec: f64,
    /// All operations over the simulated span.
    pub ops_per_sec_total: f64,
    /// Bucket-lock acquisitions.
    pub acquisitions: u64,
    /// Of those, the ones that found the lock held.
    pub contended: u64,
    /// Share of bucket-lock acquisitions that found the lock held, percent.
    pub contended_pct: f64,
    /// Share that found it held by a thread that had locked the same futex: no hash can
    /// help, percent.
    pub contended_same_key_pct: f64,
    /// Share that found it held for a different futex sharing the bucket: the hash and
    /// the table size can help, percent (`contended_pct` minus the same-key share).
    pub contended_shared_bucket_pct: f64,
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
    /// itself, [`replay_with_interval`] sets it.
    pub ops_per_sec_lo: f64,
    /// Upper end of the 80 % interval of `ops_per_sec` (see `ops_per_sec_lo`).
    pub ops_per_sec_hi: f64,
    /// The five buckets with the most waits, most first (table output; not in CSV/JSON).
    #[serde(skip)]
    pub hot_buckets: Vec<HotBucket>,
}

/// The locks each key of `rec` uses with `hasher` and `buckets` (see the module docs), the
/// process (private table) of each key that has one, and the number of processes.
fn lock_of_keys<H: KeyHasher + ?Sized>(
    keys: &[FutexKey],
    hasher: &H,
    buckets: u64,
    global: u64,
) -> (Vec<u32>, Vec<Option<u32>>, u64) {
    let mut process: HashMap<u64, u64> = HashMap::new();
    let gmask = global - 1;
    let mut proc_of = Vec::with_capacity(keys.len());
    // Locks are dense indices below 2^28 (checked by the caller from the total).
    let locks: Vec<u32> = keys
        .iter()
        .map(|k| {
            let h = u64::from(hasher.hash(k));
            if buckets == 0 || k.kind() != KeyKind::Private {
                proc_of.push(None);
                (h & gmask) as u32
            } else {
                let n = process.len() as u64;
                let p = *process.entry(k.w0()).or_insert(n);
                proc_of.push(Some(p as u32));
                (global + p * buckets + (h & (buckets - 1))) as u32
            }
        })
        .collect();
    (locks, proc_of, process.len() as u64)
}

/// Where the bucket locks of the replayed tables are: the global hash's `global` buckets,
/// then each process's `buckets` private ones, each table starting on its own line.
struct Tables {
    global: u64,
    buckets: u64,
    bytes: u32,
    global_lines: u64,
    private_lines: u64,
    global_homes: LineHomes,
}

impl Tables {
    fn new(global: u64, buckets: u64, bytes: u32) -> Tables {
        let lines = |n: u64| (n * u64::from(bytes)).div_ceil(u64::from(CACHE_LINE));
        Tables {
            global,
            buckets,
            bytes,
            global_lines: lines(global),
            private_lines: lines(buckets),
            global_homes: cost::global_table_homes(global, bytes),
        }
    }

    /// The cache line of lock `l`, and its table's process (`None`: the global hash).
    fn line(&self, l: u32) -> (u64, Option<u64>) {
        let l = u64::from(l);
        if l < self.global {
            (cost::line_of(l as usize, self.bytes) as u64, None)
        } else {
            let (p, slot) = (
                (l - self.global) / self.buckets,
                (l - self.global) % self.buckets,
            );
            let line = cost::line_of(slot as usize, self.bytes) as u64;
            (self.global_lines + p * self.private_lines + line, Some(p))
        }
    }

    fn lines(&self, processes: u64) -> u64 {
        self.global_lines + processes * self.private_lines
    }

    /// How lock `l` is named in the hottest-bucket list.
    fn label(&self, l: u32) -> String {
        let l = u64::from(l);
        if l < self.global {
            format!("global {l}")
        } else {
            let r = l - self.global;
            format!("process {} slot {}", r / self.buckets, r % self.buckets)
        }
    }
}

/// Replays `rec` on `m` with `hasher`, `buckets` private slots (0 = global hash) and
/// think-time factor `think_scale` (≥ 0), on the default design (aligned buckets, queued
/// lock, no reference). `workload` names the trace in the record.
pub fn replay<H: KeyHasher + ?Sized>(
    m: &MachineProfile,
    rec: &Recording,
    workload: &str,
    hasher: &H,
    buckets: u64,
    think_scale: f64,
) -> Result<ReplayRecord, SimError> {
    replay_with(
        m,
        rec,
        workload,
        hasher,
        buckets,
        think_scale,
        &ReplayDesign::default(),
    )
}

/// What [`replay_with`] refuses before it replays anything: a bad profile or design, a
/// think scale that is not a finite number ≥ 0, a private size that is not 0 or a power
/// of two, a global hash beyond 2^24 buckets. Returns the global hash's buckets.
fn check_replay(
    m: &MachineProfile,
    buckets: u64,
    think_scale: f64,
    rd: &ReplayDesign,
) -> Result<u64, SimError> {
    m.validate()?;
    super::check_design(m, &rd.design)?;
    if !(think_scale >= 0.0 && think_scale.is_finite()) {
        return Err(SimError::BadRequest(format!(
            "think scale '{think_scale}' must be a finite number ≥ 0"
        )));
    }
    if buckets != 0 && !buckets.is_power_of_two() {
        return Err(SimError::BadRequest(format!(
            "bucket count '{buckets}' must be 0 or a power of two"
        )));
    }
    let global = rd
        .global_buckets
        .unwrap_or_else(|| global_hash_size(m.cpus));
    if !global.is_power_of_two() || global > 1 << 24 {
        return Err(SimError::BadRequest(format!(
            "global hash size '{global}' must be a power of two up to 16777216 (2^24)"
        )));
    }
    Ok(global)
}

/// The operations of every captured thread with a keyed call, per thread in order of
/// first appearance, each with its locks (`lock_of` per key) and its think time (the
/// captured gap to the thread's next call times `think_scale`, 0 unless `timed`); and per
/// process (`proc_of` per key) the CPU of the first thread that uses its private table:
/// each private table's home is that CPU's node.
fn thread_ops(
    rec: &Recording,
    lock_of: &[u32],
    proc_of: &[Option<u32>],
    processes: u64,
    cpus: usize,
    think_scale: f64,
    timed: bool,
) -> (Vec<Vec<Op>>, Vec<u32>) {
    let mut thread_index: HashMap<u32, usize> = HashMap::new();
    let mut per_thread: Vec<Vec<(Option<u64>, Op)>> = Vec::new();
    let mut table_cpu: Vec<u32> = vec![NO_CPU; processes as usize];
    for op in rec.ops.iter().filter(|o| !o.keys.is_empty()) {
        let n = thread_index.len();
        let t = *thread_index.entry(op.thread).or_insert(n);
        if t == per_thread.len() {
            per_thread.push(Vec::new());
        }
        let process = op.keys.iter().find_map(|&k| proc_of[k as usize]);
        if let Some(p) = process
            && table_cpu[p as usize] == NO_CPU
        {
            table_cpu[p as usize] = (t % cpus) as u32;
        }
        let locks = op.keys.iter().map(|&k| (lock_of[k as usize], k)).collect();
        per_thread[t].push((
            op.t_ns,
            Op {
                locks,
                process,
                think_ps: 0,
            },
        ));
    }
    let threads = per_thread
        .into_iter()
        .map(|ops| {
            let times: Vec<Option<u64>> = ops.iter().map(|o| o.0).collect();
            ops.into_iter()
                .enumerate()
                .map(|(i, (t, op))| {
                    let gap_ns = match (t, times.get(i + 1).copied().flatten()) {
                        (Some(a), Some(b)) if timed => b.saturating_sub(a) as f64,
                        _ => 0.0,
                    };
                    Op {
                        think_ps: ps(gap_ns * think_scale),
                        ..op
                    }
                })
                .collect()
        })
        .collect();
    (threads, table_cpu)
}

/// When each replayed thread (numbered in order of first appearance, as [`thread_ops`]
/// numbers them) begins its first call, ps. With think time (`think`): `think_scale ×` its
/// first call's captured entry time after the earliest thread's, the program's own start
/// times scaled as its gaps are (threads whose first calls were captured together start
/// together; the replay takes them in order of first appearance). Back to back: 1 ps
/// apart in order of first appearance, a tie-break only (perf's threads start together).
fn first_starts(rec: &Recording, think_scale: f64, think: bool) -> Vec<u64> {
    let mut seen = std::collections::HashSet::new();
    let first: Vec<Option<u64>> = rec
        .ops
        .iter()
        .filter(|o| !o.keys.is_empty() && seen.insert(o.thread))
        .map(|o| o.t_ns)
        .collect();
    if !think {
        return (0..first.len() as u64).collect();
    }
    let earliest = first.iter().flatten().copied().min().unwrap_or(0);
    first
        .iter()
        .map(|t| ps(t.map_or(0, |t| t - earliest) as f64 * think_scale))
        .collect()
}

/// Most picoseconds of scaled captured time a replay may have: a quarter of the clock
/// (`u64` ps, 213 days), the rest for the calls' own work and waits.
const MAX_THINK_PS: f64 = (1u64 << 62) as f64;

/// First to last replayed (keyed) call of a timed trace, ns.
fn captured_span_ns(rec: &Recording) -> u64 {
    let ts = rec.ops.iter().filter(|o| !o.keys.is_empty());
    let (lo, hi) = ts
        .filter_map(|o| o.t_ns)
        .fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
    hi.saturating_sub(lo)
}

/// The longest captured timeline a replay stretches, ns: for each thread, its first keyed
/// call's time after the earliest thread's plus every forward gap between its keyed calls
/// (what [`first_starts`] and the think times add up to; a thread whose captured times go
/// backwards, as a migrating thread's events can, gets only its forward gaps, so this can
/// exceed the first-to-last span).
fn stretched_span_ns(rec: &Recording) -> u64 {
    let keyed = || rec.ops.iter().filter(|o| !o.keys.is_empty());
    let earliest = keyed().filter_map(|o| o.t_ns).min().unwrap_or(0);
    // Per thread: (last time seen, time so far).
    let mut threads: HashMap<u32, (u64, u64)> = HashMap::new();
    for o in keyed() {
        let Some(t) = o.t_ns else { continue };
        threads
            .entry(o.thread)
            .and_modify(|(last, total)| {
                *total = total.saturating_add(t.saturating_sub(*last));
                *last = t;
            })
            .or_insert((t, t - earliest));
    }
    threads.values().map(|&(_, total)| total).max().unwrap_or(0)
}

/// Whether `rec` has think time for a think scale to scale: every call has a time and its
/// replayed calls were not all captured at the same time (strace traces have no times
/// here; a capture whose times are all equal has no gaps).
pub fn has_think_time(rec: &Recording) -> bool {
    rec.ops.iter().all(|o| o.t_ns.is_some()) && captured_span_ns(rec) > 0
}

/// Why `think_scale` is beyond the replay's clock for `rec`, when it is: it would stretch
/// the captured span of the replayed calls past [`MAX_THINK_PS`] and wrap the clock. The
/// reason names the span and the most for `rec` (a trace without times has nothing to
/// stretch).
pub fn think_scale_beyond_clock(rec: &Recording, think_scale: f64) -> Option<String> {
    if !rec.ops.iter().all(|o| o.t_ns.is_some()) {
        return None;
    }
    let span_ns = stretched_span_ns(rec);
    let scaled_ps = span_ns as f64 * think_scale * 1000.0;
    (scaled_ps > MAX_THINK_PS).then(|| {
        format!(
            "stretches the {:.6} s this trace's threads were captured over to {:.4e} s, \
             beyond the replay's clock ({:.4e} s); at most {} for this trace",
            span_ns as f64 * 1e-9,
            scaled_ps * 1e-12,
            MAX_THINK_PS * 1e-12,
            four_digits_down(MAX_THINK_PS / 1000.0 / span_ns as f64),
        )
    })
}

/// `x > 0` rounded down to four significant digits, in `{:e}` form: a maximum printed
/// rounded to nearest could be above the true one and be refused when fed back.
fn four_digits_down(x: f64) -> String {
    let exp = x.log10().floor() as i32;
    let mantissa = (x / 10f64.powi(exp - 3)).floor() / 1000.0;
    format!("{mantissa:.3}e{exp}")
}

/// Refuses a think scale beyond the replay's clock for `rec` ([`think_scale_beyond_clock`]).
fn check_think_scale(rec: &Recording, think_scale: f64) -> Result<(), SimError> {
    match think_scale_beyond_clock(rec, think_scale) {
        Some(why) => Err(SimError::BadRequest(format!(
            "think scale {think_scale} {why}"
        ))),
        None => Ok(()),
    }
}

/// A replayed thread's CPU (round-robin in order of first appearance), its time slices
/// and its costs, ps, SMT factor applied.
#[derive(Clone, Copy, Debug)]
struct ThreadCosts {
    cpu: u32,
    slices: Slices,
    /// Outside work per call off a private table.
    outside: u64,
    /// Outside work per call on a private table (the per-CPU reference's cost included).
    outside_with_ref: u64,
    /// Hold per lock.
    hold: u64,
}

/// The [`ThreadCosts`] of `threads` threads on `m`'s `cpus` CPUs.
fn thread_costs(
    m: &MachineProfile,
    hash_ns: f64,
    refcount: Refcount,
    threads: usize,
    cpus: usize,
) -> Vec<ThreadCosts> {
    let cpu_of: Vec<u32> = (0..threads).map(|i| (i % cpus) as u32).collect();
    let (slices, on_cpu) = Slices::of_threads(&cpu_of, cpus, ps(m.timeslice_ns).max(1));
    let reference_extra = cost::refcount_outside_ns(m, refcount);
    cpu_of
        .iter()
        .zip(slices)
        .map(|(&cpu, slices)| {
            let f = cost::smt_factor_of(m, &on_cpu, cpu);
            ThreadCosts {
                cpu,
                slices,
                outside: ps((m.outside_ns + hash_ns) * f),
                outside_with_ref: ps((m.outside_ns + hash_ns + reference_extra) * f),
                hold: ps(m.hold_ns * f),
            }
        })
        .collect()
}

/// What the replay counts of the bucket locks.
#[derive(Debug, Default)]
struct Contention {
    acquisitions: u64,
    /// Acquisitions that found the lock held.
    contended: u64,
    /// Of those, the ones whose holder had locked the same key.
    same_key: u64,
    waited_ps: u128,
    /// Per lock with waits: (waits, same-key waits).
    waits_of: HashMap<u32, (u64, u64)>,
}

/// The replayed tables' bucket locks, the lines they share and the processes' shared
/// references, with what moving them costs; and the contention counted on the locks.
struct Locks {
    x: Transfers,
    tables: Tables,
    /// The node of each process's private table, and of its reference.
    table_node: Vec<u32>,
    nodes: u64,
    mech: Mechanisms,
    per_waiter: u64,
    pending_bit: bool,
    atomic: u64,
    lines_shared: bool,
    /// Whether a call on a private table takes its shared reference (6.16).
    shared_ref: bool,
    free_at: Vec<u64>,
    last_cpu: Vec<u32>,
    /// The key the lock's last holder locked: a waiter for the same key is same-futex
    /// contention.
    last_key: Vec<u32>,
    /// When the last acquisition of each lock took it (`cost::held_from`).
    held_from: Vec<u64>,
    /// Whether the last acquisition of each lock took the pending-bit path and no call
    /// has come behind it yet (`cost::queue_behind_pending`); it takes the lock at
    /// `held_from`.
    pending_waiter: Vec<bool>,
    line_last_cpu: Vec<u32>,
    /// Pending acquisitions of the lines that ever had a waiter (per-waiter term only).
    spinners: HashMap<u64, LineSpinners>,
    /// Per process: the shared reference's line, (free at, last CPU).
    reference: Vec<(u64, u32)>,
    counts: Contention,
}

impl Locks {
    /// `n_locks` unowned locks of `tables` on `m`, designed as `rd`; `table_cpu`: per
    /// process, the CPU whose node holds its private table.
    fn new(
        m: &MachineProfile,
        rd: &ReplayDesign,
        tables: Tables,
        table_cpu: &[u32],
        n_locks: usize,
    ) -> Locks {
        let (d, mech) = (rd.design, rd.mechanisms);
        let x = Transfers::new(m, m.cpus.saturating_sub(1), &mech);
        let lines_shared = d.bucket_bytes < CACHE_LINE;
        let processes = table_cpu.len() as u64;
        Locks {
            table_node: table_cpu
                .iter()
                .map(|&c| if c == NO_CPU { 0 } else { x.node[c as usize] })
                .collect(),
            x,
            nodes: u64::from(m.nodes.max(1)),
            mech,
            per_waiter: cost::per_waiter_ps(m, d.lock),
            pending_bit: cost::has_pending_bit(d.lock, &mech),
            atomic: ps(m.atomic_ns),
            lines_shared,
            shared_ref: d.refcount == Refcount::Shared,
            free_at: vec![0; n_locks],
            last_cpu: vec![NO_CPU; n_locks],
            last_key: vec![u32::MAX; n_locks],
            held_from: vec![0; n_locks],
            pending_waiter: vec![false; n_locks],
            line_last_cpu: if lines_shared {
                vec![NO_CPU; tables.lines(processes) as usize]
            } else {
                Vec::new()
            },
            tables,
            spinners: HashMap::new(),
            reference: vec![(0, NO_CPU); processes as usize],
            counts: Contention::default(),
        }
    }

    fn home_of(&self, line: u64, process: Option<u64>) -> u32 {
        match process {
            Some(p) => self.table_node[p as usize],
            None => {
                let homes = self.tables.global_homes;
                cost::home_of_line(homes, self.x.home_snoop, line as usize, self.nodes, 0)
            }
        }
    }

    /// One RMW on the shared reference of `process` (if the call takes it) by a thread on
    /// `cpu` at `now`, in its time slices `running` when it never sleeps. Returns when
    /// the RMW ends (`now` without one).
    fn reference_rmw(
        &mut self,
        process: Option<u32>,
        cpu: u32,
        now: u64,
        running: Option<&Slices>,
    ) -> u64 {
        let Some(p) = process.filter(|_| self.shared_ref) else {
            return now;
        };
        let r = &mut self.reference[p as usize];
        let at = now.max(r.0);
        let at = running.map_or(at, |s| s.running_at(at));
        let home = self.table_node[p as usize];
        let end = at + cost::reference_rmw(&self.x, r.1, cpu, home, self.atomic);
        *r = (end, cpu);
        end
    }

    /// Lock `l`, requested for key `k` at `now` by a thread on `cpu` that holds it for
    /// `hold` ps: counted, waited for, handed off or migrated, held. Returns the release.
    fn acquire(&mut self, l: u32, k: u32, cpu: u32, hold: u64, now: u64) -> u64 {
        let li = l as usize;
        let c = &mut self.counts;
        c.acquisitions += 1;
        let busy = now < self.free_at[li];
        if busy {
            c.contended += 1;
            c.waited_ps += u128::from(self.free_at[li] - now);
            let same = self.last_key[li] == k;
            c.same_key += u64::from(same);
            let e = c.waits_of.entry(l).or_default();
            e.0 += 1;
            e.1 += u64::from(same);
        }
        let (line, process) = self.tables.line(l);
        let home = self.home_of(line, process);
        if busy {
            // The pending waiter ahead fetching the lock word back delays the lock's
            // release. Unlike the engine, replay does not move the waiter's call end,
            // latency or next call: it places each call whole when its thread is ready,
            // so the waiter's call is placed (and its successor queued) already.
            self.free_at[li] += cost::queue_behind_pending(
                &self.x,
                self.mech.queue_behind_pending,
                if self.pending_waiter[li] {
                    self.held_from[li]
                } else {
                    0
                },
                now,
                self.last_cpu[li],
                cpu,
                home,
            );
        }
        let pending_path =
            cost::takes_pending_path(self.pending_bit, busy, now, self.held_from[li]);
        let mut start = now.max(self.free_at[li]);
        if busy {
            start += cost::acquire_contended(
                &self.x,
                self.pending_bit,
                now,
                self.held_from[li],
                self.last_cpu[li],
                cpu,
                home,
            );
            if self.per_waiter > 0 {
                let mech = self.mech;
                let q = self
                    .spinners
                    .entry(line)
                    .or_insert_with(|| LineSpinners::new(&mech));
                start += cost::waiter_term(q.spinning_at(now), self.per_waiter);
                q.push(start);
            }
        } else if self.lines_shared {
            start += self.x.miss(self.line_last_cpu[line as usize], cpu, home);
        } else {
            start += self.x.miss(self.last_cpu[li], cpu, home);
        }
        let lone_waiter = self.mech.lone_waiter_in_migration;
        self.held_from[li] = cost::held_from(busy, now, start, lone_waiter);
        self.pending_waiter[li] = pending_path;
        let end = cost::locked_section_end(start, hold);
        self.free_at[li] = end;
        self.last_cpu[li] = cpu;
        self.last_key[li] = k;
        if self.lines_shared {
            self.line_last_cpu[line as usize] = cpu;
        }
        end
    }
}

/// When each replayed thread began its first call and ended its last, and every call's
/// latency, sorted.
struct Timeline {
    first_begin: Vec<u64>,
    last_end: Vec<u64>,
    latencies: Vec<u64>,
}

impl Timeline {
    /// First call begun to last call ended, seconds.
    fn span_secs(&self) -> f64 {
        let start = self.first_begin.iter().copied().min().unwrap_or(0);
        let end = self.last_end.iter().copied().max().unwrap_or(0);
        (end - start) as f64 * 1e-12
    }

    /// The mean over the threads of each one's calls (`threads`) over its own active span.
    fn mean_rate(&self, threads: &[Vec<Op>]) -> f64 {
        let rates: Vec<f64> = threads
            .iter()
            .enumerate()
            .map(|(t, o)| {
                let s = (self.last_end[t] - self.first_begin[t]) as f64 * 1e-12;
                o.len() as f64 / s.max(1e-12)
            })
            .collect();
        rates.iter().sum::<f64>() / rates.len() as f64
    }

    /// Latency percentile `p` (nearest rank), ns.
    fn latency_ns(&self, p: f64) -> u64 {
        let l = &self.latencies;
        let i = ((l.len() as f64 * p).ceil() as usize).clamp(1, l.len()) - 1;
        (l[i] as f64 / 1000.0).round() as u64
    }
}

/// Replays every thread's calls (`threads`, the first at `starts`, costed `costs`) on
/// `locks`, each call when its thread is ready, in order of the calls' start times (equal
/// ones in order of first appearance); `always_runnable`: the
/// threads never sleep and share their CPUs (`cpus` of them) in time slices, else each CPU
/// runs its threads' calls one after another (see the module docs).
fn run_threads(
    threads: &[Vec<Op>],
    starts: &[u64],
    costs: &[ThreadCosts],
    always_runnable: bool,
    cpus: usize,
    locks: &mut Locks,
) -> Timeline {
    let mut cpu_free_at = vec![0u64; cpus];
    let mut pos = vec![0usize; threads.len()];
    let mut first_begin = vec![u64::MAX; threads.len()];
    let mut last_end = vec![0u64; threads.len()];
    let mut latencies: Vec<u64> = Vec::new();
    // Heap of (begin time of the thread's next op, thread): ties go to the thread that
    // appeared first.
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (0..threads.len())
        .map(|t| Reverse((starts[t], t)))
        .collect();
    while let Some(Reverse((ready, t))) = heap.pop() {
        let op = &threads[t][pos[t]];
        let ThreadCosts {
            cpu, slices, hold, ..
        } = costs[t];
        let outside = if op.process.is_some() {
            costs[t].outside_with_ref
        } else {
            costs[t].outside
        };
        let begin = if always_runnable {
            ready
        } else {
            ready.max(cpu_free_at[cpu as usize])
        };
        first_begin[t] = first_begin[t].min(begin);
        let mut now = if always_runnable {
            slices.finish(begin, outside)
        } else {
            begin + outside
        };
        // One RMW on the process's shared reference (get before the locks, put after).
        let running = always_runnable.then_some(&slices);
        now = locks.reference_rmw(op.process, cpu, now, running);
        for &(l, k) in &op.locks {
            now = locks.acquire(l, k, cpu, hold, now);
        }
        now = locks.reference_rmw(op.process, cpu, now, running);
        if !always_runnable {
            // The CPU is taken for the op's own work (spinning is not charged to others).
            cpu_free_at[cpu as usize] = cpu_free_at[cpu as usize]
                .max(begin)
                .saturating_add(outside + hold * op.locks.len() as u64);
        }
        latencies.push(now - begin);
        last_end[t] = now;
        pos[t] += 1;
        if pos[t] < threads[t].len() {
            // Saturating: the think-scale check bounds this below the clock's end; a
            // wrap would put the call before its own thread's previous one.
            heap.push(Reverse((now.max(begin.saturating_add(op.think_ps)), t)));
        }
    }
    latencies.sort_unstable();
    Timeline {
        first_begin,
        last_end,
        latencies,
    }
}

/// The five buckets of `waits_of` (per lock: waits, same-key waits) with the most waits,
/// most first, each with every key of `rec` in it (`lock_of` per key).
fn hot_buckets(
    waits_of: HashMap<u32, (u64, u64)>,
    tables: &Tables,
    rec: &Recording,
    lock_of: &[u32],
) -> Vec<HotBucket> {
    let mut hot: Vec<(u32, (u64, u64))> = waits_of.into_iter().collect();
    hot.sort_unstable_by_key(|&(l, (w, _))| (Reverse(w), l));
    hot.truncate(5);
    hot.into_iter()
        .map(|(l, (waits, same))| HotBucket {
            bucket: tables.label(l),
            waits,
            same_key_waits: same,
            keys: (0..rec.keys.len())
                .filter(|&k| lock_of[k] == l)
                .map(|k| rec.keys[k].to_string())
                .collect(),
        })
        .collect()
}

/// [`replay`] on design `rd`.
pub fn replay_with<H: KeyHasher + ?Sized>(
    m: &MachineProfile,
    rec: &Recording,
    workload: &str,
    hasher: &H,
    buckets: u64,
    think_scale: f64,
    rd: &ReplayDesign,
) -> Result<ReplayRecord, SimError> {
    let global = check_replay(m, buckets, think_scale, rd)?;
    let d = rd.design;
    let (lock_of, proc_of, processes) = lock_of_keys(&rec.keys, hasher, buckets, global);
    let n_locks = global + processes * buckets;
    if n_locks > 1 << 28 {
        return Err(SimError::BadRequest(format!(
            "{n_locks} buckets in total (processes × slots) is more than the 2^28 the simulator holds"
        )));
    }
    let cpus = m.cpus as usize;
    let timed = rec.ops.iter().all(|o| o.t_ns.is_some());
    check_think_scale(rec, think_scale)?;
    let (threads, table_cpu) =
        thread_ops(rec, &lock_of, &proc_of, processes, cpus, think_scale, timed);
    if threads.is_empty() {
        return Err(SimError::Data(format!(
            "trace '{workload}' has no keyed operations"
        )));
    }
    // The profile's figure for this hasher, else timed here (never 0 silently).
    let hash_ns = super::hashcost::hash_cost(m, hasher)?.ns;
    let costs = thread_costs(m, hash_ns, d.refcount, threads.len(), cpus);
    // Never sleeping, the threads of a CPU share it in time slices, as perf's do; with
    // think time the CPU is work-conserving (see the module docs).
    let always_runnable = think_scale == 0.0 || !timed;
    let starts = first_starts(rec, think_scale, !always_runnable);
    let tables = Tables::new(global, buckets.max(1), d.bucket_bytes);
    let mut locks = Locks::new(m, rd, tables, &table_cpu, n_locks as usize);
    let timeline = run_threads(&threads, &starts, &costs, always_runnable, cpus, &mut locks);
    let ops: u64 = threads.iter().map(|t| t.len() as u64).sum();
    let span_s = timeline.span_secs();
    let mean_rate = timeline.mean_rate(&threads);
    let c = std::mem::take(&mut locks.counts);
    let share = |n: u64| 100.0 * n as f64 / c.acquisitions.max(1) as f64;
    Ok(ReplayRecord {
        backend: "sim",
        workload: workload.to_string(),
        profile: m.name.clone(),
        algo: hasher.name().to_string(),
        table: if buckets == 0 { "global" } else { "private" },
        buckets,
        global_buckets: global,
        layout: super::sweep::layout_name(d.bucket_bytes),
        lock: super::sweep::lock_name(d.lock),
        refcount: super::sweep::refcount_name(d.refcount),
        threads: threads.len(),
        ops,
        think_scale,
        think: if timed { "captured" } else { "none" },
        captured_secs: if timed {
            captured_span_ns(rec) as f64 * 1e-9
        } else {
            0.0
        },
        simulated_secs: span_s,
        ops_per_sec: mean_rate,
        ops_per_sec_total: ops as f64 / span_s.max(1e-12),
        acquisitions: c.acquisitions,
        contended: c.contended,
        contended_pct: share(c.contended),
        contended_same_key_pct: share(c.same_key),
        contended_shared_bucket_pct: share(c.contended - c.same_key),
        lock_wait_ns_mean: c.waited_ps as f64 / 1000.0 / c.acquisitions.max(1) as f64,
        latency_ns_p50: timeline.latency_ns(0.5),
        latency_ns_p99: timeline.latency_ns(0.99),
        hash_ns,
        warning: String::new(),
        ops_per_sec_lo: mean_rate,
        ops_per_sec_hi: mean_rate,
        hot_buckets: hot_buckets(c.waits_of, &locks.tables, rec, lock_of.as_slice()),
    })
}

/// [`replay_with`] with its 80 % interval: replayed with each of the
/// [`replication_profiles`] of `m` (a replay has no start order to vary: its threads
/// start as captured, or together back to back), the spread combined with the CV model
/// error.
pub fn replay_with_interval<H: crate::hashers::KeyHasher + ?Sized>(
    m: &MachineProfile,
    rec: &crate::workload::Recording,
    workload: &str,
    hasher: &H,
    buckets: u64,
    think_scale: f64,
    rd: &ReplayDesign,
) -> Result<ReplayRecord, SimError> {
    let unc = super::uncertainty::profile_uncertainty(m);
    let profiles = super::uncertainty::replication_profiles(m, &unc.calibration);
    let mut first = replay_with(m, rec, workload, hasher, buckets, think_scale, rd)?;
    let mut rates = vec![first.ops_per_sec];
    for p in &profiles[1..] {
        rates.push(replay_with(p, rec, workload, hasher, buckets, think_scale, rd)?.ops_per_sec);
    }
    let (lo, hi) = super::uncertainty::interval(
        first.ops_per_sec,
        super::uncertainty::log_sd(&rates),
        super::uncertainty::design_model_sd(&unc, rd.design.refcount.on_table(buckets)),
    );
    first.ops_per_sec_lo = lo;
    first.ops_per_sec_hi = hi;
    first.profile = m.name.clone();
    Ok(first)
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

    /// [`machine`]`(4)` with slow line migrations (1000 ns) and slower hand-offs (5000 ns).
    fn slow_lines() -> MachineProfile {
        let mut m = machine(4);
        m.line_miss_ns = 1000.0;
        m.handoff_local_ns = 5000.0;
        m
    }

    /// `threads` captured threads, all at time 0: thread 100 takes key 0; each later one
    /// takes its own key, then key 0.
    fn key_0_after_own_keys(threads: u32) -> Recording {
        let mut r = rec(threads, 1, 0, false);
        let op = |thread: u32, key: u32| TraceOp {
            thread,
            t_ns: Some(0),
            keys: vec![key],
            wake: false,
        };
        r.ops = std::iter::once(op(100, 0))
            .chain((1..threads).flat_map(|t| [op(100 + t, t), op(100 + t, 0)]))
            .collect();
        r
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
        let (m, r) = (slow_lines(), key_0_after_own_keys(3));
        let run = replay(&m, &r, "t", &h, 0, 0.0).unwrap();
        let want = 3100.001e-9;
        assert!(
            (run.simulated_secs - want).abs() < 1e-15,
            "{} s vs {want}",
            run.simulated_secs
        );
    }

    #[test]
    fn a_replayed_call_queueing_behind_the_pending_waiter_delays_its_release() {
        // The test above with a fourth thread, 103, taking key 0 the same way 1 ps after
        // 102, while 102 is still the pending waiter: 103 becomes the MCS head and takes
        // the lock word's line, so 102 fetches it back (1000 ns) and releases that much
        // later, then 103 takes the hand-off (5000 ns) and holds (100 ns). Without the
        // mechanism 103 ends 1000 ns earlier.
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let (m, r) = (slow_lines(), key_0_after_own_keys(4));
        let last_end = |mechanisms: Mechanisms| {
            let rd = ReplayDesign {
                mechanisms,
                ..ReplayDesign::default()
            };
            replay_with(&m, &r, "t", &h, 0, 0.0, &rd)
                .unwrap()
                .simulated_secs
        };
        // 102 releases at 3100.001 ns (the test above); 103: + 1000 + 5000 + 100 ns.
        let with = last_end(Mechanisms::default());
        assert!((with - 9200.001e-9).abs() < 1e-15, "{with} s");
        let off = Mechanisms::default()
            .without("queue-behind-pending")
            .unwrap();
        let without = last_end(off);
        assert!((without - 8200.001e-9).abs() < 1e-15, "{without} s");
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

    fn jhash2() -> Builtin {
        Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap()
    }

    /// `r` replayed with `design` (global hash size `global`, if given).
    fn on(
        m: &MachineProfile,
        r: &Recording,
        buckets: u64,
        think_scale: f64,
        design: Design,
        global: Option<u64>,
    ) -> ReplayRecord {
        let rd = ReplayDesign {
            design,
            global_buckets: global,
            ..ReplayDesign::default()
        };
        replay_with(m, r, "t", &jhash2(), buckets, think_scale, &rd).unwrap()
    }

    /// Two threads of `rec(2, 200, 10_000, same_key)` with thread 101 half a gap later:
    /// their calls never overlap.
    fn alternating(same_key: bool) -> Recording {
        let mut r = rec(2, 200, 10_000, same_key);
        for op in r.ops.iter_mut().filter(|op| op.thread == 101) {
            op.t_ns = op.t_ns.map(|t| t + 5_000);
        }
        r
    }

    #[test]
    fn two_threads_on_one_futex_wait_for_the_same_key_only() {
        // Holds long against the outside work: after the first, every acquisition finds
        // the other thread holding the same futex: (2n - 1) / 2n of them, all same-key.
        let mut m = machine(2);
        m.outside_ns = 100.0;
        m.hold_ns = 1000.0;
        let r = rec(2, 500, 0, true);
        let run = replay(&m, &r, "t", &jhash2(), 0, 0.0).unwrap();
        let want = 100.0 * 999.0 / 1000.0;
        assert!((run.contended_pct - want).abs() < 1e-9, "{run:?}");
        assert_eq!(run.contended_same_key_pct, run.contended_pct);
        assert_eq!(run.contended_shared_bucket_pct, 0.0);
        assert_eq!(run.hot_buckets.len(), 1);
        assert_eq!(
            (run.hot_buckets[0].waits, run.hot_buckets[0].same_key_waits),
            (999, 999)
        );
        assert_eq!(run.hot_buckets[0].keys, [r.keys[0].to_string()]);
    }

    #[test]
    fn threads_captured_far_apart_start_far_apart_with_think_time() {
        // Thread 100 makes 500 calls on one futex 10 ns apart as captured (shorter than a
        // call: each starts when the last ends, 500 × (100 + 1000) ns = 550 µs); thread
        // 101 makes as many on the same futex from 1 s on. As captured they never meet: no
        // acquisition waits, and the run spans the second. Back to back both start at
        // once and, holds long against the outside work, 999 of 1000 acquisitions wait
        // (as in the test above). At think scale 1e-7 thread 101 starts 100 ns in, inside
        // thread 100's calls: they meet again.
        let mut m = machine(2);
        m.outside_ns = 100.0;
        m.hold_ns = 1000.0;
        let mut r = rec(2, 500, 10, true);
        for op in r.ops.iter_mut().filter(|op| op.thread == 101) {
            op.t_ns = op.t_ns.map(|t| t + 1_000_000_000);
        }
        let captured = replay(&m, &r, "t", &jhash2(), 0, 1.0).unwrap();
        assert_eq!((captured.acquisitions, captured.contended), (1000, 0));
        assert!(captured.simulated_secs > 1.0, "{captured:?}");
        let back_to_back = replay(&m, &r, "t", &jhash2(), 0, 0.0).unwrap();
        assert_eq!(back_to_back.contended, 999, "{back_to_back:?}");
        let squeezed = replay(&m, &r, "t", &jhash2(), 0, 1e-7).unwrap();
        assert!(squeezed.contended > 0, "{squeezed:?}");
    }

    #[test]
    fn a_think_scale_beyond_the_clock_is_refused_naming_the_most() {
        // Two calls 10 s apart: the clock holds 2^62 ps ≈ 4.61e6 s of scaled think time,
        // so a scale of 1e6 (1e7 s) is refused and the most is about 4.61e5.
        let mut r = rec(1, 2, 10_000_000_000, true);
        r.ops[1].t_ns = Some(10_000_000_000);
        let e = replay(&machine(2), &r, "t", &jhash2(), 0, 1e6)
            .unwrap_err()
            .to_string();
        // 2^62 ps / 10 s = 461168.6…, rounded down: the printed most must be accepted.
        assert!(e.contains("at most 4.611e5"), "{e}");
        assert!(replay(&machine(2), &r, "t", &jhash2(), 0, 4.611e5).is_ok());
        assert!(replay(&machine(2), &r, "t", &jhash2(), 0, 4.612e5).is_err());
    }

    #[test]
    fn a_thread_whose_times_go_backwards_cannot_slip_past_the_clock_check() {
        // One thread, times 1, 11, 1, 11, … s: a first-to-last span of 10 s, but every
        // forward gap is 10 s of think time, 5 of them 50 s. At 4.6e5 the span alone would
        // pass (4.6e6 s < 2^62 ps ≈ 4.61e6 s) while the think times add up to 2.3e7 s: a
        // wrapped clock. The check must count the gaps: at most 2^62 ps / 50 s = 92233.7….
        let mut r = rec(1, 11, 0, true);
        for (i, op) in r.ops.iter_mut().enumerate() {
            op.t_ns = Some(if i % 2 == 0 {
                1_000_000_000
            } else {
                11_000_000_000
            });
        }
        let e = replay(&machine(2), &r, "t", &jhash2(), 0, 4.6e5)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 9.223e4"), "{e}");
        assert!(replay(&machine(2), &r, "t", &jhash2(), 0, 9.223e4).is_ok());
    }

    #[test]
    fn two_futexes_in_a_one_bucket_table_wait_for_each_other() {
        // As above with a futex each, forced into one bucket by a 1-slot private table:
        // every wait is for the other futex of the bucket.
        let mut m = machine(2);
        m.outside_ns = 100.0;
        m.hold_ns = 1000.0;
        let r = rec(2, 500, 0, false);
        let run = replay(&m, &r, "t", &jhash2(), 1, 0.0).unwrap();
        let want = 100.0 * 999.0 / 1000.0;
        assert!((run.contended_pct - want).abs() < 1e-9, "{run:?}");
        assert_eq!(run.contended_same_key_pct, 0.0);
        assert!((run.contended_shared_bucket_pct - want).abs() < 1e-9);
        assert_eq!(run.hot_buckets[0].bucket, "process 0 slot 0");
        assert_eq!(run.hot_buckets[0].keys.len(), 2);
        // With a table large enough to part them, no one waits.
        let apart = replay(&m, &r, "t", &jhash2(), 1024, 0.0).unwrap();
        assert_eq!(apart.contended, 0, "{apart:?}");
    }

    #[test]
    fn a_ticket_lock_adds_a_term_per_spinner() {
        // 16 threads on one key back to back: the queued lock passes once per hold +
        // hand-off (300 ns); the ticket lock adds 20 ns for each of the ~15 waiters ahead.
        let mut m = machine(16);
        m.outside_ns = 10.0;
        m.ticket_spinner_ns = Some(20.0);
        let r = rec(16, 500, 0, true);
        let total = |lock| {
            let d = Design {
                lock,
                ..Design::default()
            };
            on(&m, &r, 0, 0.0, d, None).ops_per_sec_total
        };
        let queued = total(super::super::LockKind::Queued);
        assert!((queued * 300.0 / 1e9 - 1.0).abs() < 0.02, "{queued}");
        let ticket = total(super::super::LockKind::Ticket);
        let want = 1e9 / (300.0 + 15.0 * 20.0);
        assert!((ticket / want - 1.0).abs() < 0.1, "{ticket} vs {want}");
        // A profile without the ticket figure is refused, naming it.
        let e = replay_with(
            &machine(2),
            &r,
            "t",
            &jhash2(),
            0,
            0.0,
            &ReplayDesign {
                design: Design {
                    lock: super::super::LockKind::Ticket,
                    ..Design::default()
                },
                ..ReplayDesign::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("ticket_spinner_ns"), "{e}");
    }

    #[test]
    fn packed_buckets_make_neighbours_futexes_miss() {
        // Two threads, each on its own futex, the two futexes in slots 0 and 1 of a
        // 2-slot private table: aligned, no operation moves a line (500 ns each); packed,
        // both slots are in one line, which every operation takes from the other CPU
        // (500 + 100 ns).
        let mut m = machine(2);
        m.line_miss_ns = 100.0;
        let h = jhash2();
        let key =
            |i: u64| FutexKey::private(0xffff_8881_0000_0000, 0x5555_0000_1000 + 64 * i).unwrap();
        let slot = |k: &FutexKey| h.hash(k) & 1;
        let a = (0..).map(key).find(|k| slot(k) == 0).unwrap();
        let b = (0..).map(key).find(|k| slot(k) == 1).unwrap();
        let mut r = rec(2, 1000, 0, false);
        r.keys = vec![a, b];
        let per_thread = |bytes| {
            let d = Design {
                bucket_bytes: bytes,
                ..Design::default()
            };
            on(&m, &r, 2, 0.0, d, None).ops_per_sec
        };
        let aligned = per_thread(CACHE_LINE);
        assert!((aligned * 500.0 / 1e9 - 1.0).abs() < 0.01, "{aligned}");
        let packed = per_thread(super::super::PACKED_BUCKET_BYTES);
        assert!((packed * 600.0 / 1e9 - 1.0).abs() < 0.01, "{packed}");
    }

    #[test]
    fn with_home_snooping_a_global_bucket_homed_on_the_other_node_migrates_remotely() {
        // CPUs 0 and 1 of 4 on 2 nodes (node 0), taking one futex in turn without
        // overlapping: each call is outside + one migration + hold. The global table of
        // 1024 aligned buckets is interleaved in 4 KiB pages: bucket b's line is on node
        // (b / 64) % 2. A futex in a node-1 bucket migrates locally (50 ns) without home
        // snooping and remotely (50 × 600 / 200 = 150 ns) with it.
        let mut m = machine(4);
        m.nodes = 2;
        m.outside_ns = 10.0;
        m.line_miss_ns = 50.0;
        let h = jhash2();
        let mut r = alternating(true);
        let node1 = (0..)
            .map(|i| FutexKey::private(0xffff_8881_0000_0000, 0x5555_0000_1000 + 64 * i).unwrap())
            .find(|k| (h.hash(k) & 1023) / 64 % 2 == 1)
            .unwrap();
        r.keys[0] = node1;
        let p50 =
            |m: &MachineProfile| on(m, &r, 0, 1.0, Design::default(), Some(1024)).latency_ns_p50;
        assert_eq!(p50(&m), 10 + 50 + 100);
        m.home_snoop = true;
        assert_eq!(p50(&m), 10 + 150 + 100);
        // A private table is on the node of its first thread's CPU (CPU 0, node 0): local.
        let private = on(&m, &r, 16, 1.0, Design::default(), None).latency_ns_p50;
        assert_eq!(private, 10 + 50 + 100);
    }

    #[test]
    fn a_busy_smt_sibling_slows_a_replayed_thread() {
        // 2 CPUs = 1 core × 2 threads, slowdown 1.5: alone a thread's call costs 500 ns,
        // with the sibling busy 750.
        let mut m = machine(2);
        m.threads_per_core = 2;
        m.smt_slowdown = Some(1.5);
        let one = replay(&m, &rec(1, 1000, 0, false), "t", &jhash2(), 1024, 0.0).unwrap();
        assert!(
            (one.ops_per_sec * 500.0 / 1e9 - 1.0).abs() < 0.01,
            "{one:?}"
        );
        let two = replay(&m, &rec(2, 1000, 0, false), "t", &jhash2(), 1024, 0.0).unwrap();
        assert!(
            (two.ops_per_sec * 750.0 / 1e9 - 1.0).abs() < 0.01,
            "{two:?}"
        );
    }

    #[test]
    fn threads_sharing_a_cpu_back_to_back_run_in_time_slices() {
        // Two threads on one CPU, own futexes, 1 µs slices, calls of 400 ns outside + 200
        // ns hold. Back to back (never sleeping) they alternate slices: thread 0 runs its
        // outside work in [0, 1000) ns of every 2000; its second call's outside work ends
        // at 1000, the slice end, and its hold runs on to 1200 unpreempted; the third
        // waits for the next slice: 1200 -> 2600, 1400 ns. So the calls take 600 and
        // 1400 ns in turn (p99 1400), two per 2 µs per thread. With think time (captured
        // gaps of 0) the CPU runs whole calls one after another: every call 600 ns.
        let mut m = machine(1);
        m.outside_ns = 400.0;
        m.hold_ns = 200.0;
        m.timeslice_ns = 1000.0;
        let r = rec(2, 200, 0, false);
        let sliced = replay(&m, &r, "t", &jhash2(), 1024, 0.0).unwrap();
        assert_eq!(sliced.latency_ns_p99, 1400, "{sliced:?}");
        assert!((sliced.ops_per_sec / 1e6 - 1.0).abs() < 0.01, "{sliced:?}");
        let whole = replay(&m, &r, "t", &jhash2(), 1024, 1.0).unwrap();
        assert_eq!((whole.latency_ns_p50, whole.latency_ns_p99), (600, 600));
    }

    #[test]
    fn the_private_hash_reference_costs_what_its_kind_says() {
        // Two threads on CPUs 0 and 1 (one node) take their own futexes in turn without
        // overlapping, 6.16's shared reference: each call's get takes the reference's
        // line from the other CPU (100 ns) plus the 7 ns atomic, its put 7 ns: 400 + 107
        // + 100 + 7. Per-CPU (6.17): two local atomics, 400 + 14 + 100. The global hash
        // takes no reference: 500.
        let mut m = machine(2);
        m.line_miss_ns = 100.0;
        let r = alternating(false);
        let p50 = |refcount, buckets| {
            let d = Design {
                refcount,
                ..Design::default()
            };
            on(&m, &r, buckets, 1.0, d, None).latency_ns_p50
        };
        assert_eq!(p50(Refcount::Shared, 16), 614);
        assert_eq!(p50(Refcount::PerCpu, 16), 514);
        assert_eq!(p50(Refcount::None, 16), 500);
        assert_eq!(p50(Refcount::Shared, 0), 500);
    }
}

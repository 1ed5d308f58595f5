//! Contention workloads beyond perf's hash loop:
//!
//! * **`lock`** — the `futex_numa` test of the FUTEX2_NUMA series (seed 002, Peter
//!   Zijlstra, 2023; `tools/testing/selftests/futex/functional/futex_numa.c`, Linux 6.16+):
//!   in each of G groups ("processes", one per node) H holder threads take and release a
//!   "fairly stupid test-and-set lock with a waiter flag" (`N_LOCK = 1`, `N_WAITERS =
//!   0x1000`) around a bounded critical section (two counters that must stay equal — the
//!   test's integrity check), while C contender threads call `wait(lock, ~0)`, which always
//!   fails after hashing and locking the lock's bucket ("knowingly setting val 'wrong'
//!   ... generate hb-lock contention"). Loops are counted; higher is better. With the model's
//!   `numa` table group g's lock key names node g (FUTEX2_NUMA); with `--squash` every node
//!   is one bucket, so `--table global --squash` puts every group in one bucket (the seed's
//!   "*ouch*" run) and `--table numa --squash` separates them (its "much improved" run).
//!   The critical section has no `nanosleep` (the seed's `-n0`).
//! * **`noisy`** — the noisy neighbour that motivated the private hash (seed 000): a victim
//!   process (few threads, few futexes, *every* operation timed) runs perf's failing wait
//!   next to a noisy process doing the same on many futexes, once with both in the global
//!   table and once with a private table each. Reported: the victim's p50/p99/p99.9 latency,
//!   its rate, the noisy rate, and (model) how many of the victim's buckets the noisy
//!   process's futexes also hash to.
//!
//! Model runs are in this process (two synthetic processes = two `mm` values over one
//! global table, [`crate::table::Process`]); kernel runs use child processes of the
//! `futexhash` binary (one per group setting for `lock`, two concurrent ones — victim and
//! noisy — for `noisy`).
//!
//! Memory ordering of the lock: the acquiring CAS is `Acquire`, the releasing `fetch_sub`
//! is `Release`, so the critical section's counters (relaxed) are ordered by the lock
//! itself, as in the C test (`__ATOMIC_ACQUIRE` / `__ATOMIC_RELEASE`). The futex word itself
//! is compared by the table under its bucket lock (or by the kernel). Every wait has a
//! timeout, so a run always ends.

use super::kernel::{self, ChildConfig, LockChild};
use super::model::{SYNTHETIC_MM, SYNTHETIC_MM_2, make_key};
use super::runner::{self, Backend, RunConfig, Worker, allowed_cpus};
use super::sweep::{BackendChoice, ModelOptions, SweepError, model_spec};
use crate::hashers::{KeyHasher, SharedHasher};
use crate::key::NO_NODE;
use crate::render::{TextTable, fmt_grouped};
use crate::table::{
    Aligned, BucketLayout, GlobalTable, ModelTable, Packed, Process, SlotPolicy, TableKind,
    kernel_per_node_size, merged_default_slots, possible_cpus,
};
use crate::throughput::record::{BenchRecord, RecordMeta};
use crate::throughput::{RunOutcome, ThreadOutcome, Workload};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The lock bit of the test's lock word.
pub const N_LOCK: u32 = 0x1;
/// The waiter flag.
pub const N_WAITERS: u32 = 0x1000;

/// Longest single futex wait of the lock workload (a timed-out wait just retries).
const WAIT_SLICE: Duration = Duration::from_millis(20);

/// A futex implementation the lock test can use: wait on / wake a word of group `g`.
pub trait LockFutex: Sync {
    /// `FUTEX_WAIT(word, expected)` with a timeout. Returns true if it failed at once
    /// because the word differed (EAGAIN).
    fn wait(&self, group: usize, word: &AtomicU32, expected: u32, timeout: Duration) -> bool;
    /// `FUTEX_WAKE(word, n)`; returns how many were woken.
    fn wake(&self, group: usize, word: &AtomicU32, n: u32) -> usize;
}

/// The lock test on a model table: group g is process `SYNTHETIC_MM + g × 4096`, its lock
/// key names node g when the table is per-node (FUTEX2_NUMA), no node otherwise.
#[derive(Debug)]
pub struct ModelLockFutex {
    /// The table.
    pub table: ModelTable,
    /// Lock keys carry node = group (FUTEX2_NUMA).
    pub numa: bool,
}

impl ModelLockFutex {
    fn key(&self, group: usize, word: &AtomicU32) -> crate::key::FutexKey {
        let k = make_key(
            SYNTHETIC_MM + 4096 * group as u64,
            word.as_ptr() as usize,
            false,
        );
        if self.numa {
            k.with_node((group % self.table.nodes()) as i32)
        } else {
            k.with_node(NO_NODE)
        }
    }
}

impl LockFutex for ModelLockFutex {
    fn wait(&self, group: usize, word: &AtomicU32, expected: u32, timeout: Duration) -> bool {
        self.table
            .wait(&self.key(group, word), word, expected, Some(timeout))
            .is_err()
    }
    fn wake(&self, group: usize, word: &AtomicU32, n: u32) -> usize {
        self.table.wake(&self.key(group, word), n as usize)
    }
}

/// The lock test on the real `futex(2)` (private futexes, this process).
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelLockFutex;

impl LockFutex for KernelLockFutex {
    fn wait(&self, _group: usize, word: &AtomicU32, expected: u32, timeout: Duration) -> bool {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `word` is a live, aligned 4-byte atomic for the duration of the call; `ts`
        // is a valid relative timeout on our stack; uaddr2/val3 are unused by FUTEX_WAIT.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                &ts as *const libc::timespec,
                std::ptr::null::<u32>(),
                0u32,
            )
        };
        rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN)
    }
    fn wake(&self, _group: usize, word: &AtomicU32, n: u32) -> usize {
        // SAFETY: as above; FUTEX_WAKE only hashes the address.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                n,
                std::ptr::null::<libc::timespec>(),
                std::ptr::null::<u32>(),
                0u32,
            )
        };
        rc.max(0) as usize
    }
}

/// One group's lock and its critical-section counters, on their own cache line.
#[repr(align(64))]
#[derive(Debug, Default)]
struct GroupLock {
    word: AtomicU32,
    val1: AtomicU64,
    val2: AtomicU64,
}

/// `futex_numa_32_lock()` without the node half of the word.
fn lock<F: LockFutex>(f: &F, g: usize, word: &AtomicU32) {
    loop {
        let mut old = word.load(Ordering::Relaxed);
        let new = loop {
            let mut new = old | N_LOCK;
            if old & N_LOCK != 0 {
                new |= N_WAITERS;
            }
            if new == old {
                break new; // locked with the waiter flag set: block
            }
            match word.compare_exchange(old, new, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) if old & N_LOCK == 0 => return, // we set N_LOCK: ours
                Ok(_) => break new,
                Err(v) => old = v,
            }
        };
        f.wait(g, word, new, WAIT_SLICE);
    }
}

/// `futex_numa_32_unlock()`.
fn unlock<F: LockFutex>(f: &F, g: usize, word: &AtomicU32) {
    let val = word.fetch_sub(N_LOCK, Ordering::Release) - N_LOCK;
    if val & N_WAITERS != 0 && f.wake(g, word, 1) == 0 {
        let _ = word.compare_exchange(val, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Shape of a lock run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LockShape {
    /// Groups (processes / nodes), each with its own lock.
    pub groups: usize,
    /// Lock-taking threads per group.
    pub holders: usize,
    /// Contender threads per group.
    pub contenders: usize,
}

/// The lock test: returns (contenders, holders) outcomes. `unexpected` counts integrity
/// violations (holders) and contender waits that did not fail at once.
pub fn lock_run<F: LockFutex>(
    f: &F,
    shape: LockShape,
    runtime: Duration,
) -> Result<(RunOutcome, RunOutcome), String> {
    if shape.groups == 0 || shape.holders + shape.contenders == 0 {
        return Err("lock test needs at least one group and one thread".into());
    }
    let locks: Vec<GroupLock> = (0..shape.groups).map(|_| GroupLock::default()).collect();
    let cpus = allowed_cpus();
    let per_group = shape.holders + shape.contenders;
    let n = shape.groups * per_group;
    let barrier = Barrier::new(n + 1);
    let stop = AtomicBool::new(false);
    let (wall, outs) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (g, r) = (i / per_group, i % per_group);
                let holder = r < shape.holders;
                let (l, barrier, stop) = (&locks[g], &barrier, &stop);
                let cpu = cpus[i % cpus.len()];
                s.spawn(move || {
                    let pinned = runner::pin_current_thread(cpu);
                    let mut hist = runner::new_hist();
                    barrier.wait();
                    let (t0, c0) = (Instant::now(), runner::thread_cpu_secs());
                    let (mut ops, mut bad) = (0u64, 0u64);
                    // Relaxed stop flag: publishes nothing but "stop soon"; results come back
                    // through join.
                    while !stop.load(Ordering::Relaxed) {
                        let timed = ops % u64::from(runner::SAMPLE_PERIOD) == 0;
                        let ts = timed.then(Instant::now);
                        if holder {
                            lock(f, g, &l.word);
                            let (a, b) = (
                                l.val1.load(Ordering::Relaxed),
                                l.val2.load(Ordering::Relaxed),
                            );
                            bad += u64::from(a != b);
                            l.val1.store(a + 1, Ordering::Relaxed);
                            l.val2.store(b + 1, Ordering::Relaxed);
                            unlock(f, g, &l.word);
                        } else {
                            // The word is never !0 (values 0, 1, 0x1000, 0x1001).
                            bad += u64::from(!f.wait(g, &l.word, !0, WAIT_SLICE));
                        }
                        if let Some(ts) = ts {
                            hist.saturating_record(ts.elapsed().as_nanos().max(1) as u64);
                        }
                        ops += 1;
                    }
                    let secs = t0.elapsed().as_secs_f64();
                    let out = ThreadOutcome {
                        cpu: pinned.then_some(cpu),
                        ops,
                        secs,
                        cpu_secs: (runner::thread_cpu_secs() - c0).max(0.0),
                        unexpected: bad,
                        first_addr: l.word.as_ptr() as usize,
                        last_addr: l.word.as_ptr() as usize,
                    };
                    (holder, out, hist)
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        std::thread::sleep(runtime);
        stop.store(true, Ordering::Relaxed);
        let wall = t0.elapsed().as_secs_f64();
        let outs: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (wall, outs)
    });
    let mut parts = [
        (Vec::new(), runner::new_hist()),
        (Vec::new(), runner::new_hist()),
    ];
    for o in outs {
        let (holder, out, hist) = o.map_err(|_| "a lock-test thread panicked".to_string())?;
        let p = &mut parts[usize::from(holder)];
        p.0.push(out);
        p.1.add(&hist).map_err(|e| format!("{e:?}"))?;
    }
    let [c, h] = parts;
    Ok((outcome(wall, c.0, &c.1), outcome(wall, h.0, &h.1)))
}

fn outcome(wall: f64, threads: Vec<ThreadOutcome>, h: &hdrhistogram::Histogram<u64>) -> RunOutcome {
    let q = |p: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(p)
        }
    };
    RunOutcome {
        runtime_s: wall,
        threads,
        latency_ns_p50: q(0.5),
        latency_ns_p99: q(0.99),
        latency_ns_p999: q(0.999),
        latency_samples: h.len(),
    }
}

/// A `lock` or `noisy` request.
#[derive(Clone, Debug)]
pub struct ContendSpec {
    /// Backends (one record set each).
    pub backends: Vec<BackendChoice>,
    /// Model options (one record per hasher).
    pub model: ModelOptions,
    /// `lock`: contenders per group; `noisy`: noisy threads.
    pub threads: usize,
    /// `lock`: as in a sweep; `noisy`: private slots of the private run (None: the kernel's
    /// automatic size).
    pub buckets: Option<u64>,
    /// `noisy`: futex words per noisy thread.
    pub futexes: usize,
    /// Run time.
    pub runtime: Duration,
    /// `lock`: holder threads per group.
    pub holders: usize,
    /// `lock`: groups (processes, one per node).
    pub groups: usize,
    /// `noisy`: victim threads.
    pub victim_threads: usize,
    /// `noisy`: futex words per victim thread.
    pub victim_futexes: usize,
    /// `futexhash` binary for kernel children (None: this executable).
    pub exe: Option<PathBuf>,
}

/// Records and warnings.
#[derive(Clone, Debug, Default)]
pub struct ContendResult {
    /// One record per (backend, hasher) for `lock`; two per (backend, hasher) for `noisy`
    /// (`table` = `global`, then `private`).
    pub records: Vec<BenchRecord>,
    /// One-line warnings.
    pub warnings: Vec<String>,
}

fn exe(spec: &ContendSpec) -> Result<PathBuf, SweepError> {
    match &spec.exe {
        Some(p) => Ok(p.clone()),
        None => std::env::current_exe().map_err(|e| SweepError {
            usage: false,
            message: format!("cannot find this program's path: {e}"),
        }),
    }
}

fn rt(message: String) -> SweepError {
    SweepError {
        usage: false,
        message,
    }
}

fn busy_warning(records: &[BenchRecord], warnings: &mut Vec<String>) {
    let cpus = allowed_cpus().len();
    if let Some(r) = records.iter().find(|r| r.threads > cpus) {
        warnings.push(format!(
            "{} threads on {cpus} CPUs: oversubscribed, so waits also measure the scheduler",
            r.threads
        ));
    }
}

/// The `lock` workload on every backend (and model hasher) of `spec`.
pub fn run_lock(spec: &ContendSpec) -> Result<ContendResult, SweepError> {
    let shape = LockShape {
        groups: spec.groups.max(1),
        holders: spec.holders,
        contenders: spec.threads,
    };
    let mut res = ContendResult::default();
    for &b in &spec.backends {
        let runs: Vec<(String, String, u64, RunOutcome, RunOutcome, u32)> = match b {
            BackendChoice::Model => {
                let mut v = Vec::new();
                for algo in &spec.model.algos {
                    let ms = model_spec(&spec.model, algo.clone(), spec.buckets);
                    let kind = ms.kind;
                    let table = ModelTable::build(ms).map_err(|e| SweepError {
                        usage: true,
                        message: format!("model table: {e}"),
                    })?;
                    let size = table.size() as u64;
                    let f = ModelLockFutex {
                        numa: kind == TableKind::Numa,
                        table,
                    };
                    let (c, h) = lock_run(&f, shape, spec.runtime).map_err(rt)?;
                    v.push((
                        algo.name().to_string(),
                        kind.as_str().to_string(),
                        spec.buckets.unwrap_or(size),
                        c,
                        h,
                        std::process::id(),
                    ));
                }
                v
            }
            BackendChoice::Kernel => {
                let cfg = ChildConfig {
                    run: RunConfig::new(1, 1, spec.runtime, Workload::Hash),
                    slots: spec.buckets.filter(|_| kernel::private_hash_supported()),
                    shared: false,
                    mlockall: false,
                    lock: Some(LockChild { shape }),
                };
                let mut fwd = |s: &str| eprint!("{s}");
                let r =
                    kernel::run_in_child(&exe(spec)?, &cfg, &mut fwd).map_err(|e| SweepError {
                        usage: e.usage,
                        message: e.message,
                    })?;
                let h = r
                    .lock_outcome
                    .ok_or_else(|| rt("the child did not run the lock test".into()))?;
                let buckets = spec.buckets.or(r.slots_applied).unwrap_or(0);
                vec![(
                    "kernel".into(),
                    if buckets == 0 { "global" } else { "private" }.into(),
                    buckets,
                    r.outcome,
                    h,
                    r.pid,
                )]
            }
        };
        for (algo, table, buckets, c, h, pid) in runs {
            let layout = match b {
                BackendChoice::Model => spec.model.layout.as_str().to_string(),
                BackendChoice::Kernel => "kernel".into(),
            };
            let mut r = BenchRecord::new(
                RecordMeta {
                    backend: b.as_str().into(),
                    algo,
                    table,
                    layout,
                    buckets,
                    futexes: 1,
                    workload: Workload::Hash,
                    shared: false,
                    slots_applied: None,
                    pid,
                },
                &c,
            );
            r.workload = "lock";
            r.lock_ops_per_sec =
                Some(crate::throughput::stats::ThroughputStats::from_rates(&h.rates()).mean);
            r.unexpected += h.threads.iter().map(|t| t.unexpected).sum::<u64>();
            if r.unexpected > 0 {
                res.warnings.push(format!(
                    "lock test ({} {}): {} unexpected results (critical-section violations or \
                     contender waits that did not fail)",
                    r.backend, r.algo, r.unexpected
                ));
            }
            res.records.push(r);
        }
    }
    busy_warning(&res.records, &mut res.warnings);
    Ok(res)
}

/// A process of the noisy-neighbour model: its own `mm`, sharing the global table.
struct ProcBackend<L: BucketLayout> {
    proc: Arc<Process<SharedHasher, L>>,
    mm: u64,
}

struct ProcWorker<'a, L: BucketLayout> {
    proc: &'a Process<SharedHasher, L>,
    words: Box<[AtomicU32]>,
    keys: Box<[crate::key::FutexKey]>,
}

impl<L: BucketLayout> Worker for ProcWorker<'_, L> {
    #[inline]
    fn wait_fail(&mut self, idx: usize) -> bool {
        self.proc
            .wait(&self.keys[idx], &self.words[idx], 1234, None)
            .is_err()
    }
    #[inline]
    fn wake(&mut self, idx: usize) -> bool {
        self.proc.wake(&self.keys[idx], 1) == 0
    }
    fn word_addr(&self, idx: usize) -> usize {
        self.words[idx].as_ptr() as usize
    }
}

impl<L: BucketLayout> Backend for ProcBackend<L> {
    type Worker<'a>
        = ProcWorker<'a, L>
    where
        L: 'a;
    fn worker(&self, _thread: usize, futexes: usize) -> ProcWorker<'_, L> {
        let words: Box<[AtomicU32]> = (0..futexes).map(|_| AtomicU32::new(0)).collect();
        let keys = words
            .iter()
            .map(|w| make_key(self.mm, w.as_ptr() as usize, false))
            .collect();
        ProcWorker {
            proc: &self.proc,
            words,
            keys,
        }
    }
}

/// What one noisy-neighbour run measured.
struct NoisyRun {
    victim: RunOutcome,
    noisy: RunOutcome,
    victim_buckets: Option<u64>,
    shared_buckets: Option<u64>,
    slots: u64,
    pid: u32,
}

/// Buckets (`(private table?, index)`) the keys of the words `first..=last` map to.
fn buckets_of<L: BucketLayout>(
    p: &Process<SharedHasher, L>,
    mm: u64,
    out: &RunOutcome,
) -> HashSet<crate::table::BucketId> {
    let mut set = HashSet::new();
    for t in &out.threads {
        let mut a = t.first_addr;
        while a <= t.last_addr {
            set.insert(p.route(&make_key(mm, a, false)));
            a += 4;
        }
    }
    set
}

fn noisy_model<L: BucketLayout>(
    algo: SharedHasher,
    opts: &ModelOptions,
    spec: &ContendSpec,
    private: bool,
) -> Result<NoisyRun, SweepError> {
    let cpus = possible_cpus();
    let g = GlobalTable::<SharedHasher, L>::new(
        algo.clone(),
        crate::table::Geometry {
            nodes: 1,
            per_node: kernel_per_node_size(cpus, 1),
            reduce: crate::table::Reduce::Mask,
            squash: false,
        },
    )
    .map_err(|e| rt(e.to_string()))?;
    let g = Arc::new(g);
    let slots = if private {
        let threads = spec.threads.max(spec.victim_threads);
        spec.buckets
            .filter(|&b| b != 0)
            .unwrap_or(merged_default_slots(threads, cpus, g.per_node_size()) as u64)
    } else {
        0
    };
    let mk = |mm: u64| -> Result<ProcBackend<L>, SweepError> {
        let p = Process::new(
            mm,
            g.clone(),
            algo.clone(),
            SlotPolicy::Manual,
            crate::table::Reduce::Mask,
            cpus,
        );
        p.set_slots(slots).map_err(|e| SweepError {
            usage: true,
            message: format!("private slots {slots}: {e}"),
        })?;
        Ok(ProcBackend {
            proc: Arc::new(p),
            mm,
        })
    };
    let _ = opts;
    let (v, n) = (mk(SYNTHETIC_MM)?, mk(SYNTHETIC_MM_2)?);
    let vcfg = RunConfig {
        sample_period: 1,
        ..RunConfig::new(
            spec.victim_threads,
            spec.victim_futexes,
            spec.runtime,
            Workload::Hash,
        )
    };
    let ncfg = RunConfig {
        first_cpu: spec.victim_threads,
        ..RunConfig::new(spec.threads, spec.futexes, spec.runtime, Workload::Hash)
    };
    let (vo, no) = std::thread::scope(|s| {
        let nh = s.spawn(|| runner::run(&n, &ncfg));
        let vo = runner::run(&v, &vcfg);
        (vo, nh.join())
    });
    let vo = vo.map_err(|e| rt(e.0))?;
    let no = no
        .map_err(|_| rt("noisy runner panicked".into()))?
        .map_err(|e| rt(e.0))?;
    let vb = buckets_of(&v.proc, v.mm, &vo);
    let nb = buckets_of(&n.proc, n.mm, &no);
    // Private-table buckets of different processes are different buckets.
    let shared = vb
        .iter()
        .filter(|b| !b.is_private() && nb.contains(b))
        .count();
    Ok(NoisyRun {
        victim: vo,
        noisy: no,
        victim_buckets: Some(vb.len() as u64),
        shared_buckets: Some(shared as u64),
        slots,
        pid: std::process::id(),
    })
}

fn noisy_kernel(spec: &ContendSpec, private: bool) -> Result<NoisyRun, SweepError> {
    let exe = exe(spec)?;
    let slots = if private {
        spec.buckets.filter(|&b| b != 0)
    } else {
        Some(0)
    };
    let vcfg = ChildConfig {
        run: RunConfig {
            sample_period: 1,
            ..RunConfig::new(
                spec.victim_threads,
                spec.victim_futexes,
                spec.runtime,
                Workload::Hash,
            )
        },
        slots,
        shared: false,
        mlockall: false,
        lock: None,
    };
    let ncfg = ChildConfig {
        run: RunConfig {
            first_cpu: spec.victim_threads,
            ..RunConfig::new(spec.threads, spec.futexes, spec.runtime, Workload::Hash)
        },
        slots,
        shared: false,
        mlockall: false,
        lock: None,
    };
    let (v, n) = std::thread::scope(|s| {
        let e2 = exe.clone();
        let nh = s.spawn(move || kernel::run_in_child(&e2, &ncfg, &mut |l| eprint!("{l}")));
        let v = kernel::run_in_child(&exe, &vcfg, &mut |l| eprint!("{l}"));
        (v, nh.join())
    });
    let ke = |e: kernel::KernelError| SweepError {
        usage: e.usage,
        message: e.message,
    };
    let v = v.map_err(ke)?;
    let n = n
        .map_err(|_| rt("noisy child thread panicked".into()))?
        .map_err(ke)?;
    Ok(NoisyRun {
        slots: v.slots_applied.unwrap_or(0),
        victim: v.outcome,
        noisy: n.outcome,
        victim_buckets: None,
        shared_buckets: None,
        pid: v.pid,
    })
}

/// The `noisy` workload: for each backend (and model hasher), a run with both processes in
/// the global table, then one with a private table each.
pub fn run_noisy(spec: &ContendSpec) -> Result<ContendResult, SweepError> {
    let mut res = ContendResult::default();
    let private_ok = kernel::private_hash_supported();
    for &b in &spec.backends {
        let algos: Vec<Option<SharedHasher>> = match b {
            BackendChoice::Model => spec.model.algos.iter().map(|a| Some(a.clone())).collect(),
            BackendChoice::Kernel => vec![None],
        };
        for algo in algos {
            for private in [false, true] {
                if b == BackendChoice::Kernel && private && !private_ok {
                    res.warnings.push(
                        "this kernel has no private futex hash (PR_FUTEX_HASH): the noisy \
                         neighbour runs with the global hash only"
                            .into(),
                    );
                    continue;
                }
                let run = match (b, algo.clone()) {
                    (BackendChoice::Model, Some(a)) => match spec.model.layout {
                        crate::table::Layout::Aligned => {
                            noisy_model::<Aligned>(a, &spec.model, spec, private)?
                        }
                        crate::table::Layout::Packed => {
                            noisy_model::<Packed>(a, &spec.model, spec, private)?
                        }
                    },
                    _ => noisy_kernel(spec, private)?,
                };
                let mut r = BenchRecord::new(
                    RecordMeta {
                        backend: b.as_str().into(),
                        algo: algo.as_ref().map_or("kernel".into(), |a| a.name().into()),
                        table: if private { "private" } else { "global" }.into(),
                        layout: match b {
                            BackendChoice::Model => spec.model.layout.as_str().into(),
                            BackendChoice::Kernel => "kernel".into(),
                        },
                        buckets: run.slots,
                        futexes: spec.victim_futexes,
                        workload: Workload::Hash,
                        shared: false,
                        slots_applied: None,
                        pid: run.pid,
                    },
                    &run.victim,
                );
                r.workload = "noisy";
                r.victim_latency_ns_p50 = Some(run.victim.latency_ns_p50);
                r.victim_latency_ns_p99 = Some(run.victim.latency_ns_p99);
                r.victim_latency_ns_p999 = Some(run.victim.latency_ns_p999);
                r.victim_buckets = run.victim_buckets;
                r.shared_buckets = run.shared_buckets;
                r.noisy_ops_per_sec = Some(
                    crate::throughput::stats::ThroughputStats::from_rates(&run.noisy.rates()).mean,
                );
                res.records.push(r);
            }
        }
    }
    let cpus = allowed_cpus().len();
    if spec.threads + spec.victim_threads > cpus {
        res.warnings.push(format!(
            "victim ({}) + noisy ({}) threads exceed the {cpus} CPUs: the victim's latency then \
             includes waiting for a CPU",
            spec.victim_threads, spec.threads
        ));
    }
    Ok(res)
}

/// A table of `lock` / `noisy` records.
pub fn render(records: &[BenchRecord]) -> String {
    let noisy = records.iter().any(|r| r.workload == "noisy");
    let mut headers: Vec<String> = ["backend", "algo", "table", "buckets"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if noisy {
        headers.extend(
            [
                "victim ops/s",
                "p50 ns",
                "p99 ns",
                "p99.9 ns",
                "shared buckets",
                "noisy ops/s",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
    } else {
        headers.extend(
            ["threads", "contender loops/s", "lock loops/s"]
                .iter()
                .map(|s| s.to_string()),
        );
    }
    let mut t = TextTable::new(headers);
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in records {
        let mut row = vec![
            r.backend.clone(),
            r.algo.clone(),
            r.table.clone(),
            r.buckets.to_string(),
        ];
        if noisy {
            row.push(fmt_grouped(r.ops_per_sec, 0));
            row.push(opt(r.victim_latency_ns_p50));
            row.push(opt(r.victim_latency_ns_p99));
            row.push(opt(r.victim_latency_ns_p999));
            row.push(match (r.shared_buckets, r.victim_buckets) {
                (Some(s), Some(v)) => format!("{s} of {v}"),
                _ => "-".into(),
            });
            row.push(fmt_grouped(r.noisy_ops_per_sec.unwrap_or(0.0), 0));
        } else {
            row.push(r.threads.to_string());
            row.push(fmt_grouped(r.ops_per_sec, 0));
            row.push(fmt_grouped(r.lock_ops_per_sec.unwrap_or(0.0), 0));
        }
        t.push(row);
    }
    let mut s = t.render();
    s.push_str(if noisy {
        "victim: mean ops/sec per thread and latency of every operation; shared buckets: the \
         victim's buckets that the noisy process's futexes also hash to (model only)\n"
    } else {
        "per-thread loops/sec: contenders (failing waits on the lock's bucket, the seed's \
         \"contenders:\" count) and lock holders (lock + critical section + unlock)\n"
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::Builtin;
    use crate::hashers::HashKey;

    fn jhash() -> SharedHasher {
        Builtin::by_name("jhash2", HashKey::DEFAULT)
            .unwrap()
            .shared()
    }

    #[test]
    fn lock_keeps_the_critical_section_and_counts_loops() {
        for (kind, squash) in [(TableKind::Global, true), (TableKind::Numa, false)] {
            let mut s = crate::table::ModelSpec::new(jhash(), kind);
            s.nodes = if kind == TableKind::Numa { 2 } else { 1 };
            s.squash = squash;
            s.buckets = Some(16);
            let f = ModelLockFutex {
                table: ModelTable::build(s).unwrap(),
                numa: kind == TableKind::Numa,
            };
            let shape = LockShape {
                groups: 2,
                holders: 2,
                contenders: 1,
            };
            let (c, h) = lock_run(&f, shape, Duration::from_millis(30)).unwrap();
            assert_eq!(c.threads.len(), 2);
            assert_eq!(h.threads.len(), 4);
            assert!(h.threads.iter().all(|t| t.unexpected == 0), "{h:?}");
            assert!(c.threads.iter().all(|t| t.unexpected == 0), "{c:?}");
            assert!(h.threads.iter().map(|t| t.ops).sum::<u64>() > 0);
            // Every waiter left the table.
            assert_eq!(f.table.waiters(), 0);
        }
    }

    #[test]
    fn kernel_lock_works_in_process() {
        let shape = LockShape {
            groups: 1,
            holders: 2,
            contenders: 1,
        };
        let (c, h) = lock_run(&KernelLockFutex, shape, Duration::from_millis(20)).unwrap();
        assert!(h.threads.iter().all(|t| t.unexpected == 0));
        assert!(c.threads.iter().all(|t| t.unexpected == 0));
    }

    fn noisy_spec() -> ContendSpec {
        ContendSpec {
            backends: vec![BackendChoice::Model],
            model: ModelOptions::default(),
            threads: 1,
            buckets: Some(16),
            futexes: 1024,
            runtime: Duration::from_millis(20),
            holders: 2,
            groups: 1,
            victim_threads: 1,
            victim_futexes: 4,
            exe: None,
        }
    }

    #[test]
    fn noisy_model_shares_buckets_only_in_the_global_table() {
        let r = run_noisy(&noisy_spec()).unwrap();
        assert_eq!(r.records.len(), 2);
        let (g, p) = (&r.records[0], &r.records[1]);
        assert_eq!((g.table.as_str(), p.table.as_str()), ("global", "private"));
        assert_eq!(p.buckets, 16);
        // The victim's 4 keys land in at most 4 buckets.
        let vb = g.victim_buckets.unwrap();
        assert!((1..=4).contains(&vb));
        // 1024 noisy futexes over the global table (256 × CPUs buckets, at most 2048 here
        // on big machines) almost surely cover some of them; private tables never share.
        assert_eq!(p.shared_buckets, Some(0));
        assert!(g.shared_buckets.unwrap() <= vb);
        for rec in [g, p] {
            let (a, b, c) = (
                rec.victim_latency_ns_p50.unwrap(),
                rec.victim_latency_ns_p99.unwrap(),
                rec.victim_latency_ns_p999.unwrap(),
            );
            assert!(a > 0 && a <= b && b <= c, "{rec:?}");
            assert!(rec.noisy_ops_per_sec.unwrap() > 0.0);
            assert_eq!(rec.workload, "noisy");
        }
        assert!(render(&r.records).contains("of"));
    }
}

//! The throughput runner: the loop of `perf bench futex hash`
//! (`tools/perf/bench/futex-hash.c`, Linux 6.16+, originally by Davidlohr Bueso, 2013), run
//! against any [`Backend`] — the real kernel ([`super::kernel`]) or a user-space model table.
//!
//! Each of T threads owns F 4-byte futex words (value 0) and, until told to stop, walks them
//! in turn calling `wait(word, expected = 1234)`: the value never matches, so each call
//! hashes the key, locks the bucket, compares and fails at once (`EAGAIN`). The `wake`
//! workload calls `wake(word, 1)` on words nobody waits on instead. As in perf, the stop
//! flag is checked after each full pass over the F words, threads are pinned round-robin
//! to the CPUs the process may run on, and the figure reported is the mean per-thread rate
//! with the standard error of the mean ([`super::stats`]).
//!
//! Differences from perf, all on the measuring side: the runtime may be fractional and
//! each thread divides its own operation count by its own elapsed time (perf divides by
//! whole seconds); one operation in [`SAMPLE_PERIOD`] is timed with the monotonic clock
//! into a per-thread HDR histogram (merged after the run) for latency percentiles. The
//! sampled latency includes one clock read (~20–40 ns with the vDSO).
//!
//! Concurrency: nothing is shared in the loop except the read-only stop flag. Each
//! thread's counters (`ops`, `unexpected`, its histogram) are locals of its own stack frame
//! and reach the caller through `join`, so no cache line is written by two threads.

use crate::throughput::{RunOutcome, ThreadOutcome, Workload};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// One operation in this many is timed (a prime, so that with F futexes per thread the
/// timed word moves through all of them instead of always being the same one).
pub const SAMPLE_PERIOD: u32 = 1009;

/// A thread's view of a backend: the two operations on its futex words (allocated by the
/// runner, see [`run`]). Implemented by the kernel backend (raw `futex(2)`) and by the model
/// tables ([`super::backend`]).
pub trait Worker {
    /// `FUTEX_WAIT(word[idx], expected = 1234)`; the word holds 0, so the call must fail
    /// at once. Returns whether it behaved as expected (failed with "value mismatch").
    fn wait_fail(&mut self, idx: usize) -> bool;
    /// `FUTEX_WAKE(word[idx], 1)` with no waiters. Returns whether it woke nobody.
    fn wake(&mut self, idx: usize) -> bool;
}

/// A configured backend for one run (set up beforehand: e.g. the kernel's private hash
/// slots, or a model table with its hasher and layout). Shared by reference between the
/// worker threads, so it must be `Sync`.
pub trait Backend: Sync {
    /// The per-thread state.
    type Worker<'a>: Worker
    where
        Self: 'a;
    /// Creates thread `thread`'s worker over its futex words `words` (all 0). Called on
    /// the worker thread itself (after pinning).
    fn worker<'a>(&'a self, thread: usize, words: &'a [AtomicU32]) -> Self::Worker<'a>;
}

/// One run's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Worker threads (≥ 1).
    pub threads: usize,
    /// Futex words per thread (≥ 1).
    pub futexes: usize,
    /// How long the threads run.
    pub runtime: Duration,
    /// What each operation is.
    pub workload: Workload,
    /// Pin thread i to the i-th allowed CPU (round-robin), as perf does.
    pub pin: bool,
    /// Time one operation in this many ([`SAMPLE_PERIOD`] normally; 1 times every
    /// operation, as the noisy-neighbour victim does).
    #[serde(default = "default_sample_period")]
    pub sample_period: u32,
    /// Thread i is pinned to allowed CPU `(first_cpu + i) % CPUs` (0 normally; the noisy
    /// neighbour starts after the victim's CPUs).
    #[serde(default)]
    pub first_cpu: usize,
}

fn default_sample_period() -> u32 {
    SAMPLE_PERIOD
}

impl RunConfig {
    /// `threads` × `futexes`, `runtime`, `workload`, pinned, sampling one operation in
    /// [`SAMPLE_PERIOD`].
    pub fn new(threads: usize, futexes: usize, runtime: Duration, workload: Workload) -> Self {
        RunConfig {
            threads,
            futexes,
            runtime,
            workload,
            pin: true,
            sample_period: SAMPLE_PERIOD,
            first_cpu: 0,
        }
    }
}

/// Why a run could not be done.
#[derive(Debug)]
pub struct RunError(pub String);

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunError {}

/// The CPUs this process may run on (its affinity mask), ascending. Falls back to
/// `0..available_parallelism` if the mask cannot be read.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; all-zero is a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the pointer and size describe `set`, which
    // lives for the duration of the call.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc == 0 {
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `c` is below CPU_SETSIZE, the capacity of `set`.
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect();
        if !cpus.is_empty() {
            return cpus;
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n).collect()
}

/// Pins the calling thread to `cpu`. Returns whether the kernel accepted it.
pub(crate) fn pin_current_thread(cpu: usize) -> bool {
    if cpu >= libc::CPU_SETSIZE as usize {
        return false;
    }
    // SAFETY: cpu_set_t is plain data; all-zero is a valid (empty) set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` < CPU_SETSIZE (checked above); `set` is a valid cpu_set_t.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is the calling thread; pointer and size describe `set`.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0 }
}

/// CPU time consumed so far by the calling thread, seconds (0 if the clock is missing).
pub(crate) fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        0.0
    }
}

/// The start gate: workers report ready and wait until the main thread opens (or aborts).
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    ready: usize,
    open: bool,
    abort: bool,
}

/// A thread's raw result.
struct ThreadRaw {
    outcome: ThreadOutcome,
    hist: Histogram<u64>,
}

pub(crate) fn new_hist() -> Histogram<u64> {
    // 1 ns .. 60 s at 2 significant digits (1 % resolution, about 30 KiB per thread, so
    // thousands of threads stay cheap); larger values saturate.
    Histogram::new_with_bounds(1, 60_000_000_000, 2).expect("valid histogram bounds")
}

/// The measured loop of one thread. `WAKE` picks the workload at compile time so the hot
/// loop has no branch on it.
fn spin<W: Worker, const WAKE: bool>(
    w: &mut W,
    futexes: usize,
    stop: &AtomicBool,
    hist: &mut Histogram<u64>,
    period: u32,
) -> (u64, u64) {
    let mut ops: u64 = 0;
    let mut unexpected: u64 = 0;
    let period = period.max(1);
    let mut countdown = period;
    loop {
        for i in 0..futexes {
            countdown -= 1;
            let ok = if countdown == 0 {
                countdown = period;
                let t0 = Instant::now();
                let ok = if WAKE { w.wake(i) } else { w.wait_fail(i) };
                let ns = t0.elapsed().as_nanos().clamp(1, u64::MAX as u128) as u64;
                hist.saturating_record(ns);
                ok
            } else if WAKE {
                w.wake(i)
            } else {
                w.wait_fail(i)
            };
            unexpected += u64::from(!ok);
            ops += 1;
        }
        // Relaxed: the flag publishes no data, only "stop soon"; coherence makes the store
        // visible within a pass or so, and the results travel back through `join`.
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    (ops, unexpected)
}

/// Stack of each worker thread. The loop's frame is small (the histogram lives on the
/// heap), and the default 2 MiB × 16384 threads would reserve 32 GiB of address space.
pub const WORKER_STACK: usize = 256 * 1024;

/// Sleeps for `runtime`, in slices, returning early when an interrupt
/// ([`super::interrupt`]) arrives; returns the seconds actually slept.
pub(crate) fn sleep_unless_interrupted(runtime: Duration) -> f64 {
    const SLICE: Duration = Duration::from_millis(20);
    let t0 = Instant::now();
    while !super::interrupt::requested() {
        let left = runtime.saturating_sub(t0.elapsed());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(SLICE));
    }
    t0.elapsed().as_secs_f64()
}

/// The futex words of every thread, allocated by the calling thread one array after the
/// other, as perf's `calloc(params.nfutexes, sizeof(*worker[i].futex))` in its main thread:
/// consecutive chunks of one heap, so the keys are the ones the kernel hashes under perf.
/// (Allocating on each worker thread would put every array at the start of its own malloc
/// arena, 64 MiB apart, with identical low address bits.)
pub(crate) fn allocate_words(threads: usize, futexes: usize) -> Vec<Box<[AtomicU32]>> {
    (0..threads)
        .map(|_| (0..futexes).map(|_| AtomicU32::new(0)).collect())
        .collect()
}

/// What one worker thread needs, shared by reference with the spawning thread.
struct Shared<'s, B> {
    backend: &'s B,
    cfg: &'s RunConfig,
    gate: Gate,
    stop: AtomicBool,
}

/// The body of worker thread `t`: pin, make the worker, wait at the gate, run the loop.
/// None if the run was aborted before the gate opened.
fn worker_thread<B: Backend>(
    sh: &Shared<'_, B>,
    t: usize,
    cpu: usize,
    words: &[AtomicU32],
) -> Option<ThreadRaw> {
    let cfg = sh.cfg;
    let pinned = cfg.pin && pin_current_thread(cpu);
    let mut w = sh.backend.worker(t, words);
    let mut hist = new_hist();
    if !sh.gate.arrive_and_wait() {
        return None;
    }
    let start = Instant::now();
    let cpu0 = thread_cpu_secs();
    let (ops, unexpected) = match cfg.workload {
        Workload::Hash => {
            spin::<_, false>(&mut w, words.len(), &sh.stop, &mut hist, cfg.sample_period)
        }
        Workload::Wake => {
            spin::<_, true>(&mut w, words.len(), &sh.stop, &mut hist, cfg.sample_period)
        }
    };
    Some(ThreadRaw {
        outcome: ThreadOutcome {
            cpu: pinned.then_some(cpu),
            ops,
            secs: start.elapsed().as_secs_f64(),
            cpu_secs: (thread_cpu_secs() - cpu0).max(0.0),
            unexpected,
            first_addr: words[0].as_ptr() as usize,
            last_addr: words[words.len() - 1].as_ptr() as usize,
        },
        hist,
    })
}

impl Gate {
    /// Worker side: report ready, wait for the gate. False if the run was aborted.
    fn arrive_and_wait(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.ready += 1;
        self.cv.notify_all();
        while !st.open && !st.abort {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        !st.abort
    }

    /// Main side: wait for `n` workers, then open the gate.
    fn open_when_ready(&self, n: usize) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while st.ready < n {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.open = true;
        self.cv.notify_all();
    }

    /// Main side: release every waiting worker without running.
    fn abort(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.abort = true;
        self.cv.notify_all();
    }
}

/// Merges the threads' results (in thread order) into a [`RunOutcome`].
fn merge(runtime_s: f64, raws: Vec<Option<ThreadRaw>>) -> Result<RunOutcome, RunError> {
    let mut merged = new_hist();
    let mut threads = Vec::with_capacity(raws.len());
    for (t, raw) in raws.into_iter().enumerate() {
        let raw = raw.ok_or_else(|| RunError(format!("worker thread {t} panicked")))?;
        merged
            .add(&raw.hist)
            .map_err(|e| RunError(format!("merging latency histograms: {e:?}")))?;
        threads.push(raw.outcome);
    }
    let q = |p: f64| {
        if merged.is_empty() {
            0
        } else {
            merged.value_at_quantile(p)
        }
    };
    Ok(RunOutcome {
        runtime_s,
        threads,
        latency_ns_p50: q(0.50),
        latency_ns_p99: q(0.99),
        latency_ns_p999: q(0.999),
        latency_samples: merged.len(),
    })
}

/// Runs `cfg` against `backend` and returns what each thread did. Blocks for about
/// `cfg.runtime` plus thread start-up, or less if SIGINT/SIGTERM arrives
/// ([`super::interrupt`]): the workers then stop and the outcome covers the elapsed time
/// (`runtime_s` says how long).
pub fn run<B: Backend>(backend: &B, cfg: &RunConfig) -> Result<RunOutcome, RunError> {
    if cfg.threads == 0 || cfg.futexes == 0 {
        return Err(RunError("threads and futexes must be at least 1".into()));
    }
    let cpus = allowed_cpus();
    let words = allocate_words(cfg.threads, cfg.futexes);
    let sh = Shared {
        backend,
        cfg,
        gate: Gate::default(),
        stop: AtomicBool::new(false),
    };
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(cfg.threads);
        for (t, words) in words.iter().enumerate() {
            let (sh, cpu) = (&sh, cpus[(cfg.first_cpu + t) % cpus.len()]);
            let spawned = std::thread::Builder::new()
                .name(format!("futexhash-{t}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(s, move || worker_thread(sh, t, cpu, words));
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    sh.gate.abort();
                    for h in handles {
                        let _ = h.join();
                    }
                    return Err(RunError(format!(
                        "cannot start thread {t} of {}: {e}",
                        cfg.threads
                    )));
                }
            }
        }
        sh.gate.open_when_ready(cfg.threads);
        let runtime_s = sleep_unless_interrupted(cfg.runtime);
        // Relaxed: see `spin`; the results come back through `join`.
        sh.stop.store(true, Ordering::Relaxed);
        let raws = handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect();
        merge(runtime_s, raws)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A trivial backend: each thread counts its calls in its own words; `wake` fails on
    /// odd indices so the "unexpected" count can be checked.
    struct Counting;

    struct CountingWorker {
        words: Vec<Cell<u32>>,
    }

    impl Worker for CountingWorker {
        fn wait_fail(&mut self, idx: usize) -> bool {
            self.words[idx].set(self.words[idx].get() + 1);
            true
        }
        fn wake(&mut self, idx: usize) -> bool {
            idx % 2 == 0
        }
    }

    impl Backend for Counting {
        type Worker<'a> = CountingWorker;
        fn worker(&self, _thread: usize, words: &[AtomicU32]) -> CountingWorker {
            CountingWorker {
                words: words.iter().map(|_| Cell::new(0)).collect(),
            }
        }
    }

    fn cfg(threads: usize, futexes: usize, workload: Workload) -> RunConfig {
        RunConfig {
            runtime: Duration::from_millis(20),
            ..RunConfig::new(threads, futexes, Duration::ZERO, workload)
        }
    }

    #[test]
    fn whole_passes_and_per_thread_results() {
        let out = run(&Counting, &cfg(3, 7, Workload::Hash)).unwrap();
        assert_eq!(out.threads.len(), 3);
        for t in &out.threads {
            // The stop flag is only checked after a full pass over the words.
            assert!(t.ops > 0 && t.ops % 7 == 0, "ops {}", t.ops);
            assert_eq!(t.unexpected, 0);
            assert_eq!(t.last_addr - t.first_addr, 6 * std::mem::size_of::<u32>());
            assert!(t.secs > 0.0);
            // A busy loop consumes CPU time, but never more than the wall-clock time.
            assert!(
                t.cpu_secs > 0.0 && t.cpu_secs <= t.secs * 1.01 + 1e-3,
                "{t:?}"
            );
        }
        let total: u64 = out.threads.iter().map(|t| t.ops).sum();
        // One sample per SAMPLE_PERIOD operations, per thread (counted down from the start).
        let want: u64 = out
            .threads
            .iter()
            .map(|t| t.ops / u64::from(SAMPLE_PERIOD))
            .sum();
        assert_eq!(out.latency_samples, want);
        assert!(total >= out.latency_samples);
        assert!(out.latency_ns_p50 <= out.latency_ns_p99);
        assert!(out.latency_ns_p99 <= out.latency_ns_p999);
    }

    #[test]
    fn unexpected_results_are_counted() {
        // 4 words: indices 1 and 3 "fail", so exactly half of the operations.
        let out = run(&Counting, &cfg(1, 4, Workload::Wake)).unwrap();
        let t = &out.threads[0];
        assert_eq!(t.unexpected * 2, t.ops);
    }

    #[test]
    fn threads_are_pinned_round_robin() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        let out = run(&Counting, &cfg(cpus.len() + 1, 1, Workload::Hash)).unwrap();
        for (i, t) in out.threads.iter().enumerate() {
            assert_eq!(t.cpu, Some(cpus[i % cpus.len()]));
        }
    }

    #[test]
    fn zero_threads_is_an_error() {
        assert!(run(&Counting, &cfg(0, 1, Workload::Hash)).is_err());
        assert!(run(&Counting, &cfg(1, 0, Workload::Hash)).is_err());
    }
}

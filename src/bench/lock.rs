//! The `lock` workload: the `futex_numa` test of the FUTEX2_NUMA series (seed 002, Peter
//! Zijlstra, 2023; `tools/testing/selftests/futex/functional/futex_numa.c`, Linux 6.16+).
//! In each of G groups ("processes", one per node) H holder threads take and release a
//! "fairly stupid test-and-set lock with a waiter flag" (`N_LOCK = 1`, `N_WAITERS =
//! 0x1000`) around a bounded critical section (two counters that must stay equal — the
//! test's integrity check), while C contender threads call `wait(lock, ~0)`, which always
//! fails after hashing and locking the lock's bucket ("knowingly setting val 'wrong'
//! ... generate hb-lock contention"). Loops are counted; higher is better. With the model's
//! `numa` table group g's lock key names node g (FUTEX2_NUMA); with `--squash` every node
//! is one bucket, so `--table global --squash` puts every group in one bucket (the seed's
//! "*ouch*" run) and `--table numa --squash` separates them (its "much improved" run).
//! The critical section has no `nanosleep` (the seed's `-n0`).
//!
//! This file is the workload on any [`LockFutex`] (a model table or the real `futex(2)`);
//! [`super::contend`] runs it per backend and makes the records.
//!
//! Memory ordering of the lock: the acquiring CAS is `Acquire`, the releasing `fetch_sub`
//! is `Release`, so the critical section's counters (relaxed) are ordered by the lock
//! itself, as in the C test (`__ATOMIC_ACQUIRE` / `__ATOMIC_RELEASE`). The futex word itself
//! is compared by the table under its bucket lock (or by the kernel). Every wait has a
//! timeout, so a run always ends.

use super::backend::{SYNTHETIC_MM, make_key};
use super::options::LockShape;
use super::runner;
use crate::key::NO_NODE;
use crate::table::ModelTable;
use crate::throughput::{RunOutcome, ThreadOutcome};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
    let cpus = runner::allowed_cpus();
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
        let wall = runner::sleep_unless_interrupted(runtime);
        stop.store(true, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Builtin, HashKey, SharedHasher};
    use crate::table::TableKind;

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
}

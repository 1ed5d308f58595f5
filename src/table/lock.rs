//! The bucket lock: a test-and-test-and-set spinlock that spins briefly, then yields.
//!
//! The kernel protects each `struct futex_hash_bucket` with a `spinlock_t`
//! (kernel/futex/futex.h). A kernel spinlock holder cannot be preempted, so pure spinning is
//! fine there. A user-space holder can be descheduled at any moment, and on this crate's
//! 2-CPU test machine the threads routinely outnumber the CPUs; a waiter that only spins would
//! then burn its whole time slice while the holder waits for a CPU. So after a short bounded
//! spin (exponential back-off, at most [`SPIN_ROUNDS`] rounds of `spin_loop` hints) the lock
//! calls `std::thread::yield_now` (`sched_yield`) between attempts.
//!
//! Cost of the uncontended path, which the `model` throughput backend measures: one
//! compare-and-swap to take the lock and one release store to drop it — the same as the
//! kernel's queued spinlock fast path (`queued_spin_lock` / `queued_spin_unlock`).
//!
//! Memory ordering: the successful CAS is `Acquire` and the unlocking store is `Release`, so
//! everything written inside one critical section happens-before everything read in the next
//! one (the usual lock argument). The spin loop's loads are `Relaxed`: they are only hints;
//! ownership is decided by the `Acquire` CAS.

use std::sync::atomic::{AtomicU32, Ordering};

/// Spin rounds before the lock starts yielding; round `i` spins `2^i` times.
pub const SPIN_ROUNDS: u32 = 6;

const UNLOCKED: u32 = 0;
const LOCKED: u32 = 1;

/// A 4-byte lock, the size of the kernel's `spinlock_t` without lockdep.
#[derive(Debug, Default)]
pub struct BucketLock {
    state: AtomicU32,
}

impl BucketLock {
    /// Takes the lock, spinning briefly and then yielding while it is held elsewhere.
    #[inline]
    pub fn lock(&self) {
        if self
            .state
            .compare_exchange_weak(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow();
        }
    }

    #[cold]
    fn lock_slow(&self) {
        let mut round = 0u32;
        loop {
            // Test before test-and-set: wait with plain loads so the cache line stays shared.
            while self.state.load(Ordering::Relaxed) != UNLOCKED {
                if round < SPIN_ROUNDS {
                    for _ in 0..(1u32 << round) {
                        std::hint::spin_loop();
                    }
                    round += 1;
                } else {
                    std::thread::yield_now();
                }
            }
            if self
                .state
                .compare_exchange_weak(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }

    /// Tries once to take the lock (only the tests need it).
    #[cfg(test)]
    pub fn try_lock(&self) -> bool {
        self.state
            .compare_exchange(UNLOCKED, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Drops the lock.
    ///
    /// # Safety
    /// The calling thread must hold the lock (taken by [`BucketLock::lock`] or a successful
    /// [`BucketLock::try_lock`] and not yet dropped): data the lock guards is accessed on the
    /// strength of holding it, and unlocking someone else's critical section would let a
    /// second thread in.
    #[inline]
    pub unsafe fn unlock(&self) {
        debug_assert_eq!(self.state.load(Ordering::Relaxed), LOCKED);
        self.state.store(UNLOCKED, Ordering::Release);
    }

    /// Whether somebody holds the lock right now (a snapshot, for tests and debugging).
    pub fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) != UNLOCKED
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::UnsafeCell;
    use std::sync::Arc;

    struct Shared {
        lock: BucketLock,
        value: UnsafeCell<u64>,
    }
    // SAFETY: `value` is only touched while `lock` is held (see the test body).
    unsafe impl Sync for Shared {}

    #[test]
    fn mutual_exclusion_with_more_threads_than_cpus() {
        let s = Arc::new(Shared {
            lock: BucketLock::default(),
            value: UnsafeCell::new(0),
        });
        let threads = 8;
        let per = 5_000;
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..per {
                        s.lock.lock();
                        // SAFETY: we hold the lock, so no other thread accesses `value`.
                        unsafe {
                            let v = *s.value.get();
                            *s.value.get() = v + 1;
                        }
                        // SAFETY: taken by `lock()` above.
                        unsafe { s.lock.unlock() };
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        // SAFETY: all other threads have been joined.
        assert_eq!(unsafe { *s.value.get() }, threads * per);
    }

    #[test]
    fn try_lock_fails_while_held() {
        let l = BucketLock::default();
        assert!(l.try_lock());
        assert!(l.is_locked());
        assert!(!l.try_lock());
        // SAFETY: taken by the first `try_lock`.
        unsafe { l.unlock() };
        assert!(!l.is_locked());
        assert!(l.try_lock());
        // SAFETY: taken by the `try_lock` just above.
        unsafe { l.unlock() };
    }
}

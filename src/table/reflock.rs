//! A reader-sharded lock: the user-space stand-in for the kernel's per-CPU reference on the
//! private hash (`futex_ref_get` / `futex_ref_put`, kernel/futex/core.c v6.17+).
//!
//! Every futex operation on a process with a private table takes a *read* reference for the
//! time between hashing and queueing; replacing the table needs all references gone. The
//! kernel counts references per CPU while no replacement is pending (`FR_PERCPU`) so the hot
//! path touches no shared cache line, and folds them into one atomic only when a replacement
//! starts. Likewise, readers here increment a counter in one of [`SHARDS`] cache-line-sized
//! shards chosen per thread; a writer raises `pending`, waits until every shard is zero, and
//! then has exclusive access.
//!
//! Memory ordering (Dekker / store-buffering argument, all four accesses `SeqCst`):
//! reader: `shard += 1` then load `pending`; writer: store `pending = true` then load each
//! shard. In the single total order of `SeqCst` operations either the reader's load of
//! `pending` comes after the writer's store (the reader sees `true`, backs off) or the
//! reader's increment comes before the writer's load of that shard (the writer sees it and
//! waits). A reader leaves with a `Release` decrement that the writer's load reads, so the
//! reader's critical section happens-before the writer's; the writer leaves with a `Release`
//! store of `pending = false` that the next reader's `SeqCst` load reads, so the writer's
//! changes happen-before the reader's critical section.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Number of reader shards.
pub const SHARDS: usize = 16;

#[derive(Debug, Default)]
#[repr(align(64))]
struct Shard(AtomicUsize);

/// The calling thread's shard (assigned round-robin on first use).
#[inline]
pub fn thread_shard() -> usize {
    thread_local! {
        static SHARD: usize = {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            // Relaxed: only spreads threads over shards; any value is correct.
            NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS
        };
    }
    SHARD.with(|s| *s)
}

/// A value behind a reader-sharded lock.
#[derive(Debug)]
pub struct RefLock<T> {
    pending: AtomicBool,
    readers: [Shard; SHARDS],
    writer: Mutex<()>,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is read only under a read reference and written only by the single writer
// (serialised by `writer`) after every read reference is gone (see the module docs), so
// sharing the lock is as safe as sharing an `RwLock<T>`, which needs `T: Send + Sync`.
// (`Send` is derived by the compiler: `UnsafeCell<T>` is `Send` when `T` is.)
unsafe impl<T: Send + Sync> Sync for RefLock<T> {}

/// A read reference.
#[derive(Debug)]
pub struct ReadRef<'a, T> {
    lock: &'a RefLock<T>,
    shard: usize,
}

/// Exclusive access.
#[derive(Debug)]
pub struct WriteRef<'a, T> {
    lock: &'a RefLock<T>,
    _serial: MutexGuard<'a, ()>,
}

impl<T> RefLock<T> {
    /// A new lock around `value`.
    pub fn new(value: T) -> Self {
        RefLock {
            pending: AtomicBool::new(false),
            readers: Default::default(),
            writer: Mutex::new(()),
            value: UnsafeCell::new(value),
        }
    }

    /// Takes a read reference (must not be called while this thread holds a `WriteRef`).
    #[inline]
    pub fn read(&self) -> ReadRef<'_, T> {
        let shard = thread_shard();
        let c = &self.readers[shard].0;
        loop {
            c.fetch_add(1, Ordering::SeqCst);
            if !self.pending.load(Ordering::SeqCst) {
                return ReadRef { lock: self, shard };
            }
            // A replacement is pending: step back and let it finish.
            c.fetch_sub(1, Ordering::Release);
            while self.pending.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
        }
    }

    /// Takes exclusive access, waiting until every read reference is gone (must not be called
    /// while this thread holds a `ReadRef`).
    pub fn write(&self) -> WriteRef<'_, T> {
        let serial = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        self.pending.store(true, Ordering::SeqCst);
        for s in &self.readers {
            while s.0.load(Ordering::SeqCst) != 0 {
                std::thread::yield_now();
            }
        }
        WriteRef {
            lock: self,
            _serial: serial,
        }
    }
}

impl<T> RefLock<T> {
    /// The value, through exclusive access to the lock itself (no reference can be live;
    /// a `ReadRef` that was leaked with `mem::forget` does not make this wait).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T> ReadRef<'_, T> {
    /// The shard this reference counted in (the calling thread's), reusable for other
    /// per-thread-sharded counters.
    #[inline]
    pub fn shard(&self) -> usize {
        self.shard
    }
}

impl<T> Deref for ReadRef<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a read reference is held, so no writer has access (module docs).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> Drop for ReadRef<'_, T> {
    fn drop(&mut self) {
        self.lock.readers[self.shard]
            .0
            .fetch_sub(1, Ordering::Release);
    }
}

impl<T> Deref for WriteRef<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: exclusive access: no reader and no other writer (module docs).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for WriteRef<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: exclusive access: no reader and no other writer (module docs).
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for WriteRef<'_, T> {
    fn drop(&mut self) {
        self.lock.pending.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn writers_exclude_readers() {
        // The value is a pair that writers keep equal; a reader seeing a torn pair means a
        // writer ran during a read reference.
        let l = Arc::new(RefLock::new((0u64, 0u64)));
        let hs: Vec<_> = (0..6)
            .map(|i| {
                let l = l.clone();
                std::thread::spawn(move || {
                    let mut torn = 0;
                    for j in 0..3000 {
                        if (i + j) % 50 == 0 {
                            let mut w = l.write();
                            let v = w.0 + 1;
                            w.0 = v;
                            std::hint::spin_loop();
                            w.1 = v;
                        } else {
                            let r = l.read();
                            if r.0 != r.1 {
                                torn += 1;
                            }
                        }
                    }
                    torn
                })
            })
            .collect();
        let torn: usize = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(torn, 0);
        let r = l.read();
        assert_eq!(r.0, r.1);
        assert_eq!(r.0, 6 * 3000 / 50);
    }
}

//! One hash bucket and the wait/wake protocol on it.
//!
//! Mirrors `struct futex_hash_bucket` (kernel/futex/futex.h, v6.16+): a waiter count
//! (`atomic_t waiters`), a lock (`spinlock_t lock`) and the chain of queued waiters
//! (`struct plist_head chain` of `struct futex_q`). The kernel's chain is a priority list;
//! every non-real-time task has the same priority there, so it degenerates to FIFO order,
//! which is what this chain keeps (a `Vec` in queueing order).
//!
//! # The lockless empty check and why no wake-up is lost
//!
//! The 2013 series "futex: Avoid taking hb lock if nothing to wakeup" (Davidlohr Bueso,
//! seed thread 003; kernel/futex/futex.h `futex_hb_waiters_inc` / `futex_hb_waiters_pending`)
//! lets `wake` skip the bucket lock when the bucket has no waiters. The argument, as
//! implemented here:
//!
//! ```text
//!   waiter (wait)                          waker (user code, then wake)
//!   waiters.fetch_add(1)     ; (A1)        *word = new                ; (B1)
//!   fence(SeqCst)            ; (A)         fence(SeqCst)              ; (B)
//!   lock; v = *word          ; (A2)        n = waiters.load()         ; (B2)
//!   v == expected ? queue : EAGAIN         n == 0 ? return 0 : lock, dequeue, wake
//! ```
//!
//! This is the store-buffering pattern. Both sides separate their store from their load by
//! a `SeqCst` fence, and `SeqCst` fences are totally ordered: if (A) comes first, the waker's
//! load (B2) sees the increment (A1) (or a later value) and takes the lock; if (B) comes
//! first, the waiter's read (A2) sees the new word (B1) and returns "would block". The
//! outcome "waker sees 0 waiters *and* waiter sees the old word" — a lost wake-up — is
//! impossible. A waiter that passed (A) but still spins for the lock is already counted, so
//! the waker takes the lock and, because the waiter reads the word only under the lock, either
//! the waker's critical section comes first (then the waiter reads the new word, by the lock's
//! release/acquire) or the waiter is already queued when the waker scans the chain.
//! `waiters` is decremented only after the waiter has left the chain (by a waker under the
//! lock, by a timed-out waiter just after dropping the lock it removed itself under) or was
//! never queued (`futex_q_unlock` after EAGAIN), so it never reads 0 while a queued waiter
//! exists.
//!
//! The kernel's (A) is implied by `atomic_inc` + `smp_mb__after_atomic()`, its (B) is the
//! `smp_mb()` in `futex_hb_waiters_pending()`. The exhaustive check in `table::tests`
//! (and the loom test under `--cfg loom`) explore every interleaving of this protocol.
//!
//! # Blocking
//!
//! A queued waiter parks its thread (`std::thread::park` / `park_timeout`). The waker removes
//! it from the chain, sets its `woken` flag (`Release`) under the bucket lock, drops the lock
//! and only then unparks it (as the kernel's `wake_q` defers `wake_up_q` until after
//! `spin_unlock`). The waiter checks `woken` with `Acquire` after every return from `park`, so
//! spurious unparks are harmless. On timeout the waiter takes the lock of the bucket it is
//! *currently* queued on (requeue and private-table rehash can move it, like the kernel's
//! `q->lock_ptr`) and removes itself unless a waker was first.

use std::cell::UnsafeCell;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering, fence};
use std::thread::Thread;
use std::time::Instant;

use super::lock::BucketLock;
use crate::key::FutexKey;

/// One queued waiter (the kernel's `struct futex_q`).
#[derive(Debug)]
pub(crate) struct Waiter {
    /// The bucket whose chain holds this waiter (the kernel's `q->lock_ptr`). Changed only
    /// while the old and the new bucket are both locked.
    bucket: AtomicPtr<BucketCore>,
    /// Set (under the bucket lock) by the waker that dequeued this waiter.
    woken: AtomicBool,
    thread: Thread,
}

/// A chain entry: the key the waiter waits on (changed by requeue) and the waiter.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) key: FutexKey,
    pub(crate) waiter: Arc<Waiter>,
}

/// The bucket proper, shared by both layouts: 32 bytes on 64-bit targets.
#[derive(Debug, Default)]
pub struct BucketCore {
    /// Waiters queued or about to queue (`futex_hash_bucket::waiters`).
    waiters: AtomicU32,
    lock: BucketLock,
    /// Protected by `lock`.
    chain: UnsafeCell<Vec<Entry>>,
}

// SAFETY: `chain` is only accessed while `lock` is held (every access below goes through
// `BucketCore::locked`, which takes the lock), so sharing a `BucketCore` between threads is
// data-race free; the other fields are atomics. Entries move between threads through the
// chain, which needs `Entry: Send` (a `FutexKey` and an `Arc<Waiter>` of atomics and a
// `Thread`: it is). `Send` needs no impl: `UnsafeCell<Vec<Entry>>` is `Send` because `Entry`
// is, so the compiler derives it.
unsafe impl Sync for BucketCore {}

/// Why [`enqueue`] did not queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ValueMismatch;

/// The bucket lock held, giving access to the chain.
pub(crate) struct Locked<'a> {
    bucket: &'a BucketCore,
}

impl Locked<'_> {
    pub(crate) fn chain(&mut self) -> &mut Vec<Entry> {
        // SAFETY: a `Locked` exists only while `bucket.lock` is held by this thread, and it
        // is not `Clone`, so this is the only live reference to the chain.
        unsafe { &mut *self.bucket.chain.get() }
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        // SAFETY: a `Locked` is created only by `BucketCore::locked` after taking the lock,
        // and dropped exactly once, so this thread holds the lock here.
        unsafe { self.bucket.lock.unlock() };
    }
}

impl BucketCore {
    /// An empty bucket.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waiters counted right now (`Relaxed` snapshot).
    pub fn waiter_count(&self) -> u32 {
        self.waiters.load(Ordering::Relaxed)
    }

    /// Whether the lock is held right now (snapshot).
    pub fn is_locked(&self) -> bool {
        self.lock.is_locked()
    }

    pub(crate) fn locked(&self) -> Locked<'_> {
        self.lock.lock();
        Locked { bucket: self }
    }

    /// Number of chain entries (takes the lock).
    pub fn queued(&self) -> usize {
        self.locked().chain().len()
    }

    pub(crate) fn inc_waiters(&self) {
        // Part (A1) of the protocol when called from `enqueue`, ordered before the waiter's
        // read of the word by the `SeqCst` fence that follows it there; `requeue`'s first
        // increment of its target is likewise followed by a fence before it takes the locks.
        // The other callers increment before the entry lands on the chain: `requeue` for
        // each moved waiter with both locks held, rehash while holding the old bucket's lock
        // and before taking the new one's (a waker of the new bucket then takes the lock and
        // finds the entry, or is ordered before it by that lock). None relies on this
        // operation's own ordering beyond atomicity; `SeqCst` costs nothing extra on x86
        // (a `lock xadd` either way) and keeps (A1) trivially in the fences' total order.
        self.waiters.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn dec_waiters(&self) {
        // The decrement always follows the waiter's removal from the chain (under the bucket
        // lock, or after it) or a wait that never queued, so the count never drops while a
        // waiter is still queued: a waker that reads 0 in its lockless check (B2) has nobody
        // to miss, and one that still reads 1 takes the lock and finds nobody. The chain
        // itself is published by the bucket lock, not by this counter: the only lockless
        // reader (B2) loads `Relaxed` and uses the value as a hint, so this `Release` pairs
        // with no acquire and is not needed for correctness (kept: it is free on x86, and a
        // counter that never reorders before the removal is easier to reason about).
        self.waiters.fetch_sub(1, Ordering::Release);
    }
}

mod sealed {
    /// Keeps [`super::BucketLayout`] implemented by [`super::Aligned`] and
    /// [`super::Packed`] only: the tables store raw pointers to the `BucketCore` a layout
    /// derefs to and rely on it being the same, stable, field of the layout value for the
    /// table's whole life, which an outside `Deref` impl need not be.
    pub trait Sealed {}
    impl Sealed for super::Aligned {}
    impl Sealed for super::Packed {}
}

/// How buckets are laid out in memory: [`Aligned`] or [`Packed`] (sealed: the tables rely on
/// `deref` returning the same embedded bucket every time).
pub trait BucketLayout:
    sealed::Sealed + Deref<Target = BucketCore> + Default + Send + Sync + 'static
{
    /// `aligned` or `packed`.
    const NAME: &'static str;
}

/// One bucket per 64-byte cache line, like the kernel's `____cacheline_aligned_in_smp`.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Aligned(BucketCore);

/// No padding: two 32-byte buckets share a cache line (the 2013 "unaligned" case).
#[derive(Debug, Default)]
#[repr(C)]
pub struct Packed(BucketCore);

impl Deref for Aligned {
    type Target = BucketCore;
    #[inline(always)]
    fn deref(&self) -> &BucketCore {
        &self.0
    }
}
impl Deref for Packed {
    type Target = BucketCore;
    #[inline(always)]
    fn deref(&self) -> &BucketCore {
        &self.0
    }
}
impl BucketLayout for Aligned {
    const NAME: &'static str = "aligned";
}
impl BucketLayout for Packed {
    const NAME: &'static str = "packed";
}

const _: () = assert!(std::mem::size_of::<Aligned>() == 64);
const _: () = assert!(std::mem::align_of::<Aligned>() == 64);
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Packed>() == 32);

/// The first half of `futex_wait`: count, lock, compare, queue (`futex_wait_setup` +
/// `futex_queue`). Returns the queued waiter, or [`ValueMismatch`] (EAGAIN) without queueing.
///
/// `bucket` must stay alive until the waiter is dequeued (see [`block`]).
#[inline]
pub(crate) fn enqueue(
    bucket: &BucketCore,
    key: FutexKey,
    word: &AtomicU32,
    expected: u32,
) -> Result<Arc<Waiter>, ValueMismatch> {
    bucket.inc_waiters(); // (A1)
    fence(Ordering::SeqCst); // (A)
    let mut g = bucket.locked();
    // (A2): read under the lock. `Relaxed` suffices for the protocol (the fence orders it);
    // `Acquire` additionally makes the waker's earlier writes visible to a caller that got
    // EAGAIN, as a load of the futex word by the caller would.
    if word.load(Ordering::Acquire) != expected {
        drop(g);
        bucket.dec_waiters();
        return Err(ValueMismatch);
    }
    let waiter = Arc::new(Waiter {
        bucket: AtomicPtr::new(bucket as *const BucketCore as *mut BucketCore),
        woken: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    g.chain().push(Entry {
        key,
        waiter: waiter.clone(),
    });
    Ok(waiter)
}

/// Result of [`block`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// A waker dequeued us.
    Woken,
    /// The deadline passed first; we removed ourselves from the chain.
    TimedOut,
}

/// The second half of `futex_wait`: sleep until woken or `deadline`.
///
/// # Safety contract (crate-private so that only the tables, which uphold it, can call it)
/// Every bucket the waiter can be queued on must outlive this call: the callers borrow the
/// table(s) for the whole call and never free a bucket array that may hold waiters (retired
/// private tables are kept until the process is dropped).
pub(crate) fn block(waiter: &Waiter, deadline: Option<Instant>) -> Blocked {
    loop {
        if waiter.woken.load(Ordering::Acquire) {
            return Blocked::Woken;
        }
        match deadline {
            None => std::thread::park(),
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    break;
                }
                std::thread::park_timeout(d - now);
            }
        }
    }
    // Timed out: lock the bucket we are queued on now (it can change under requeue/rehash
    // until we hold its lock, hence the re-check loop, as in the kernel's `futex_unqueue`).
    loop {
        let p = waiter.bucket.load(Ordering::Acquire);
        // SAFETY: `p` points to a bucket of a table that outlives this call (see the contract
        // above); the pointer was stored by `enqueue` or by a mover holding both locks.
        let bucket = unsafe { &*p };
        let mut g = bucket.locked();
        if waiter.bucket.load(Ordering::Relaxed) != p {
            continue; // moved while we were taking the lock
        }
        if waiter.woken.load(Ordering::Relaxed) {
            return Blocked::Woken; // a waker dequeued us before we got the lock
        }
        let chain = g.chain();
        let pos = chain
            .iter()
            .position(|e| std::ptr::eq(Arc::as_ptr(&e.waiter), waiter))
            .expect("a waiter that was not woken is on its bucket's chain");
        chain.remove(pos);
        drop(g);
        bucket.dec_waiters();
        return Blocked::TimedOut;
    }
}

/// `futex_wake`: wake up to `n` waiters on `key` queued in `bucket`; returns how many.
///
/// Crate-private: the tables pick the bucket (`__futex_hash`); a caller passing another
/// bucket would bypass the routing the tables model.
#[inline]
pub(crate) fn wake(bucket: &BucketCore, key: &FutexKey, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    fence(Ordering::SeqCst); // (B): orders the caller's word change before (B2)
    if bucket.waiters.load(Ordering::Relaxed) == 0 {
        return 0; // (B2): lockless empty check
    }
    wake_locked_path(bucket, key, n)
}

#[cold]
fn wake_locked_path(bucket: &BucketCore, key: &FutexKey, n: usize) -> usize {
    let mut woken: Vec<Arc<Waiter>> = Vec::new();
    {
        let mut g = bucket.locked();
        take_matching(g.chain(), key, n, |e| woken.push(e.waiter));
        for w in &woken {
            bucket.dec_waiters();
            w.woken.store(true, Ordering::Release);
        }
    }
    for w in &woken {
        w.thread.unpark();
    }
    woken.len()
}

/// Removes up to `n` entries matching `key` from `chain` in FIFO order, passing each to `f`.
fn take_matching(chain: &mut Vec<Entry>, key: &FutexKey, n: usize, mut f: impl FnMut(Entry)) {
    let mut taken = 0;
    let mut i = 0;
    while i < chain.len() && taken < n {
        if chain[i].key == *key {
            f(chain.remove(i));
            taken += 1;
        } else {
            i += 1;
        }
    }
}

/// Result of [`requeue`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requeued {
    /// Waiters woken on the first key.
    pub woken: usize,
    /// Waiters moved to the second key.
    pub moved: usize,
}

/// `futex_requeue` (FUTEX_CMP_REQUEUE when `cmp` is given): under both bucket locks, check
/// `cmp` (EAGAIN on mismatch), wake up to `nr_wake` waiters of `key1` and move up to
/// `nr_requeue` more of them to `key2` in `bucket2`.
///
/// Crate-private because of its contract: `bucket2` must outlive every waiter moved into it
/// (same contract as [`block`]). A public safe `requeue` would let safe code move a table's
/// waiter onto a bucket on its own stack, drop that and let the waiter time out into freed
/// memory. The tables call it only with buckets of their own arrays (see
/// `GlobalTable::adopt` for private tables).
pub(crate) fn requeue(
    bucket1: &BucketCore,
    key1: &FutexKey,
    bucket2: &BucketCore,
    key2: &FutexKey,
    nr_wake: usize,
    nr_requeue: usize,
    cmp: Option<(&AtomicU32, u32)>,
) -> Result<Requeued, ValueMismatch> {
    // Like the kernel, count a potential arrival on bucket2 first so a concurrent waker of
    // key2 does not skip it, and drop the count at the end.
    bucket2.inc_waiters();
    fence(Ordering::SeqCst);
    let (mut g1, mut g2) = lock_pair(bucket1, bucket2);
    if let Some((word, expected)) = cmp
        && word.load(Ordering::Acquire) != expected
    {
        drop(g2);
        drop(g1);
        bucket2.dec_waiters();
        return Err(ValueMismatch);
    }
    let mut woken: Vec<Arc<Waiter>> = Vec::new();
    let mut moved: Vec<Entry> = Vec::new();
    {
        let chain1 = g1.chain();
        take_matching(chain1, key1, nr_wake, |e| woken.push(e.waiter));
        take_matching(chain1, key1, nr_requeue, |e| moved.push(e));
    }
    for w in &woken {
        bucket1.dec_waiters();
        w.woken.store(true, Ordering::Release);
    }
    let n_moved = moved.len();
    for mut e in moved {
        e.key = *key2;
        bucket2.inc_waiters();
        e.waiter.bucket.store(
            bucket2 as *const BucketCore as *mut BucketCore,
            Ordering::Release,
        );
        match g2.as_mut() {
            Some(g) => g.chain().push(e),
            None => g1.chain().push(e),
        }
        bucket1.dec_waiters();
    }
    drop(g2);
    drop(g1);
    bucket2.dec_waiters();
    for w in &woken {
        w.thread.unpark();
    }
    Ok(Requeued {
        woken: woken.len(),
        moved: n_moved,
    })
}

/// `double_lock_hb()`: both bucket locks in address order, so two requeues in opposite
/// directions cannot deadlock; one lock (and `None`) when both are the same bucket.
fn lock_pair<'a>(
    bucket1: &'a BucketCore,
    bucket2: &'a BucketCore,
) -> (Locked<'a>, Option<Locked<'a>>) {
    if std::ptr::eq(bucket1, bucket2) {
        (bucket1.locked(), None)
    } else if (bucket1 as *const BucketCore) < (bucket2 as *const BucketCore) {
        let a = bucket1.locked();
        let b = bucket2.locked();
        (a, Some(b))
    } else {
        let b = bucket2.locked();
        let a = bucket1.locked();
        (a, Some(b))
    }
}

/// Moves every waiter of `old` to the bucket `pick(key)` returns (the kernel's
/// `futex_rehash_private`). The target buckets must not be reachable by new waiters yet and
/// must outlive every waiter they receive.
pub(crate) fn rehash_into<'a>(old: &BucketCore, pick: impl FnMut(&FutexKey) -> &'a BucketCore) {
    rehash_matching_into(old, |_| true, pick);
}

/// Like [`rehash_into`], but moves only the waiters whose key satisfies `matches`; the others
/// stay on `old` in their FIFO order. Used when a process installs its first private table
/// while waiters of its private keys are queued on the global table.
pub(crate) fn rehash_matching_into<'a>(
    old: &BucketCore,
    mut matches: impl FnMut(&FutexKey) -> bool,
    mut pick: impl FnMut(&FutexKey) -> &'a BucketCore,
) {
    let mut g_old = old.locked();
    let (entries, keep): (Vec<Entry>, Vec<Entry>) = std::mem::take(g_old.chain())
        .into_iter()
        .partition(|e| matches(&e.key));
    *g_old.chain() = keep;
    for e in entries {
        let new = pick(&e.key);
        new.inc_waiters();
        let mut g_new = new.locked();
        e.waiter.bucket.store(
            new as *const BucketCore as *mut BucketCore,
            Ordering::Release,
        );
        g_new.chain().push(e);
        drop(g_new);
        old.dec_waiters();
    }
}

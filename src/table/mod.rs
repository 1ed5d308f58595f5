//! A real futex bucket table in user space: threads really block and really wake.
//!
//! This is the kernel's futex hash table (kernel/futex/core.c and kernel/futex/futex.h,
//! Linux v6.16 – v6.18) rebuilt with user-space primitives, so that hash functions and table
//! designs can be compared end to end (the `model` backend of the throughput benchmark):
//!
//! | kernel | here |
//! |---|---|
//! | `struct futex_hash_bucket` (`waiters`, `lock`, `chain`) | [`BucketCore`], laid out as [`Aligned`] or [`Packed`] |
//! | `spinlock_t` | [`lock::BucketLock`]: spin briefly, then yield |
//! | `struct futex_q` on a `plist` | a FIFO chain of [`bucket::Waiter`]s, parked with `std::thread::park` |
//! | global `futex_queues[node][]`, `futex_init()` | [`GlobalTable`] (one node or per-node, v6.16+) |
//! | `struct futex_private_hash`, `PR_FUTEX_HASH` | [`Process`], [`SlotPolicy`], [`SlotError`] |
//! | `__futex_hash()` routing | [`Process::route`] / every `Process` operation |
//! | `futex_wait` / `futex_wake` / `futex_requeue` | `wait` / `wake` / `requeue` on each table |
//! | `futex_hb_waiters_pending()` lockless check (2013, seed 003) | `bucket::wake`; the argument is in the `bucket` module's docs (src/table/bucket.rs) |
//!
//! Differences from the kernel: keys are given, not derived from memory; the futex word is an
//! `AtomicU32` the caller owns; no PI, no signals, no real-time priorities (the chain is FIFO,
//! which is what a `plist` of equal-priority tasks is); a private table replacement is
//! guarded by a reader-sharded lock (src/table/reflock.rs) instead of per-CPU reference counts. `docs/table.md` has the details.
//!
//! Every table implements [`FutexTable`] (wait, wake, requeue, bucket of a key, queue
//! counts), so code that drives a table — the throughput benchmark's backend, the fuzz
//! target — is written once, generic over `T: FutexTable` or on `dyn FutexTable`. For
//! run-time selection (CLI, benchmarks) use [`ModelTable::build`] with a [`ModelSpec`].
//!
//! # Soundness
//!
//! A queued waiter keeps a raw pointer to the bucket it is queued on (the kernel's
//! `q->lock_ptr`) and dereferences it when it times out, so every bucket a waiter can be
//! moved to must outlive it. The public API cannot break that: the bucket-level operations
//! that take a bucket from the caller (`bucket::wake`, `bucket::requeue`, enqueue/block,
//! rehash) are crate-private and used only with buckets of the table's own arrays; bucket
//! layouts are a sealed trait; private tables are never freed while a process sharing the
//! same global table could still have a waiter on them (`GlobalTable::adopt`).

/// The operations of [`FutexTable`] every table also has as inherent methods of the same
/// name (`wait_until`, `wake`, `requeue`): the trait impl forwards to them, so their long
/// signatures stand once. `$ty` must have those inherent methods (else the path would
/// resolve to the trait method and recurse; rustc's `unconditional_recursion` lint, denied
/// in CI, catches that).
macro_rules! forward_table_operations {
    ($ty:ty) => {
        fn wait_until(
            &self,
            key: &FutexKey,
            word: &AtomicU32,
            expected: u32,
            deadline: Option<Instant>,
        ) -> Result<WaitOutcome, WaitError> {
            <$ty>::wait_until(self, key, word, expected, deadline)
        }
        #[inline]
        fn wake(&self, key: &FutexKey, n: usize) -> usize {
            <$ty>::wake(self, key, n)
        }
        fn requeue(
            &self,
            key1: &FutexKey,
            key2: &FutexKey,
            nr_wake: usize,
            nr_requeue: usize,
            cmp: Option<(&AtomicU32, u32)>,
        ) -> Result<Requeued, WaitError> {
            <$ty>::requeue(self, key1, key2, nr_wake, nr_requeue, cmp)
        }
    };
}

mod bucket;
mod global;
mod lock;
mod model;
mod pages;
mod private;
mod private_hash;
mod reflock;

#[cfg(all(test, loom))]
mod loom;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use crate::key::FutexKey;

pub use bucket::{Aligned, BucketCore, BucketLayout, Packed, Requeued};
pub use global::{Geometry, GlobalTable, MAX_NODES, kernel_per_node_size, possible_cpus};
pub use model::{Layout, ModelSpec, ModelTable, TableKind};
pub use pages::NoMemory;
pub use private::{Process, SlotError, SlotPolicy, TableUsage, merged_default_slots, rfc_v2_slots};

pub use crate::reduce::Reduce;

/// The bucket a key maps to in a table (see [`FutexTable::bucket_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BucketId {
    /// Flat index into the global table (node-major when there are several nodes).
    Global(usize),
    /// Index into the process's current private table.
    Private(usize),
}

impl BucketId {
    /// Whether the bucket is in a private table.
    pub fn is_private(self) -> bool {
        matches!(self, BucketId::Private(_))
    }

    /// The index within its table.
    pub fn index(self) -> usize {
        match self {
            BucketId::Global(i) | BucketId::Private(i) => i,
        }
    }
}

/// A futex hash table: the operations of `futex(2)` on given keys, whatever the table's
/// design. Implemented by [`GlobalTable`] (global or per-node), [`Process`] (a process's
/// private table plus the shared global one) and [`ModelTable`] (either, chosen at run time),
/// and by `Arc<T>` and `&T` of any implementation. The trait is object safe
/// (`Arc<dyn FutexTable>` works).
///
/// Semantics, for every implementation:
/// - `wait*`: `Err(WaitError::WouldBlock)` at once if `word` does not hold `expected` (read
///   under the bucket lock, after counting the waiter; see the bucket protocol); otherwise
///   queue on `bucket_of(key)` and block until a `wake`/`requeue` of `key` takes this waiter
///   (`Ok(Woken)`) or the timeout passes (`Ok(TimedOut)`). `None` waits forever.
/// - `wake`: wakes up to `n` waiters of `key`, oldest first; returns how many. With no
///   waiter counted on the key's bucket it takes no lock (the 2013 lockless check).
/// - `requeue`: with both bucket locks held, checks `cmp` (EAGAIN on mismatch, nothing
///   changes), wakes up to `nr_wake` waiters of `key1` and moves up to `nr_requeue` more to
///   `key2`.
/// - The caller changes the futex word *before* calling `wake` (as with the syscall); the
///   memory-ordering argument that no wake-up is lost is in src/table/bucket.rs.
pub trait FutexTable: Send + Sync {
    /// FUTEX_WAIT with a relative timeout.
    fn wait(
        &self,
        key: &FutexKey,
        word: &AtomicU32,
        expected: u32,
        timeout: Option<Duration>,
    ) -> Result<WaitOutcome, WaitError> {
        self.wait_until(key, word, expected, deadline(timeout))
    }

    /// FUTEX_WAIT with an absolute deadline (`None` = forever).
    fn wait_until(
        &self,
        key: &FutexKey,
        word: &AtomicU32,
        expected: u32,
        deadline: Option<Instant>,
    ) -> Result<WaitOutcome, WaitError>;

    /// FUTEX_WAKE: wakes up to `n` waiters of `key`; returns how many were woken.
    fn wake(&self, key: &FutexKey, n: usize) -> usize;

    /// FUTEX_CMP_REQUEUE (FUTEX_REQUEUE when `cmp` is `None`).
    fn requeue(
        &self,
        key1: &FutexKey,
        key2: &FutexKey,
        nr_wake: usize,
        nr_requeue: usize,
        cmp: Option<(&AtomicU32, u32)>,
    ) -> Result<Requeued, WaitError>;

    /// The bucket `key` maps to right now (`__futex_hash`). For a [`Process`] this changes
    /// when its private table is replaced.
    fn bucket_of(&self, key: &FutexKey) -> BucketId;

    /// Rejects a key the kernel would reject with EINVAL (a node the table does not have).
    /// The other operations accept such a key and fold its node into range.
    fn check_key(&self, key: &FutexKey) -> Result<(), TableError>;

    /// Waiters on every chain this table can route to (takes each bucket lock; for tests
    /// and reports). For a [`Process`] this includes the shared global table, and so the
    /// waiters of other processes queued there.
    fn queued(&self) -> usize;

    /// Waiters counted in every bucket this table can route to (a lock-free snapshot; 0
    /// when idle). Same scope as [`FutexTable::queued`].
    fn waiters(&self) -> u64;
}

macro_rules! forward_futex_table {
    ($($ty:ty),*) => {$(
        impl<T: FutexTable + ?Sized> FutexTable for $ty {
            fn wait(
                &self,
                key: &FutexKey,
                word: &AtomicU32,
                expected: u32,
                timeout: Option<Duration>,
            ) -> Result<WaitOutcome, WaitError> {
                (**self).wait(key, word, expected, timeout)
            }
            fn wait_until(
                &self,
                key: &FutexKey,
                word: &AtomicU32,
                expected: u32,
                deadline: Option<Instant>,
            ) -> Result<WaitOutcome, WaitError> {
                (**self).wait_until(key, word, expected, deadline)
            }
            fn wake(&self, key: &FutexKey, n: usize) -> usize {
                (**self).wake(key, n)
            }
            fn requeue(
                &self,
                key1: &FutexKey,
                key2: &FutexKey,
                nr_wake: usize,
                nr_requeue: usize,
                cmp: Option<(&AtomicU32, u32)>,
            ) -> Result<Requeued, WaitError> {
                (**self).requeue(key1, key2, nr_wake, nr_requeue, cmp)
            }
            fn bucket_of(&self, key: &FutexKey) -> BucketId {
                (**self).bucket_of(key)
            }
            fn check_key(&self, key: &FutexKey) -> Result<(), TableError> {
                (**self).check_key(key)
            }
            fn queued(&self) -> usize {
                (**self).queued()
            }
            fn waiters(&self) -> u64 {
                (**self).waiters()
            }
        }
    )*};
}
forward_futex_table!(Arc<T>, &T);

/// A wait that returned after queueing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// A `wake` or `requeue` woke us.
    Woken,
    /// The timeout passed first (the kernel's ETIMEDOUT).
    TimedOut,
}

impl WaitOutcome {
    pub(crate) fn from_blocked(b: bucket::Blocked) -> Self {
        match b {
            bucket::Blocked::Woken => WaitOutcome::Woken,
            bucket::Blocked::TimedOut => WaitOutcome::TimedOut,
        }
    }
}

/// A wait (or compare-requeue) that did not queue: the futex operation's expected failure
/// (an errno), kept apart from [`TableError`] (a table that cannot be built or a key it
/// rejects), which callers handle differently: EAGAIN is the hot path of
/// `perf bench futex hash`, not a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitError {
    /// The futex word did not hold the expected value (EAGAIN): the path
    /// `perf bench futex hash` measures.
    WouldBlock,
}

impl WaitError {
    /// The kernel's errno.
    pub fn errno(&self) -> i32 {
        libc::EAGAIN
    }
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("futex word changed (EAGAIN)")
    }
}
impl std::error::Error for WaitError {}

/// A table that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableError {
    /// Bucket count is not a power of two in `1..=2^31`.
    InvalidSize(usize),
    /// Node count is 0 or above [`MAX_NODES`].
    InvalidNodes(usize),
    /// A key names a node the table does not have (the kernel's EINVAL).
    InvalidNode(i32),
    /// A private-table slot request was rejected (transparent: shows as the [`SlotError`]).
    Slots(SlotError),
    /// More than one node asked of a table kind other than `numa`.
    NodesNeedNuma {
        /// The kind asked for.
        kind: TableKind,
        /// The node count asked for.
        nodes: usize,
    },
    /// FUTEX_SQUASH asked of the private table (it applies to the global/numa tables).
    SquashNeedsGlobal,
    /// The bucket array could not be mapped (`futex_init()` panics in the kernel; here
    /// the caller reports it).
    NoMemory(NoMemory),
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::InvalidSize(n) => {
                write!(f, "bucket count {n} is not a power of two in 1..=2^31")
            }
            TableError::InvalidNodes(n) => {
                write!(f, "node count {n} must be in 1..={}", global::MAX_NODES)
            }
            TableError::InvalidNode(n) => write!(f, "key names node {n}, which does not exist"),
            // Transparent (thiserror's `#[error(transparent)]`): the slot error says it all.
            TableError::Slots(e) => e.fmt(f),
            TableError::NodesNeedNuma { kind, nodes } => write!(
                f,
                "{nodes} nodes asked of the {} table; only the numa table has nodes",
                kind.as_str()
            ),
            TableError::SquashNeedsGlobal => {
                f.write_str("squash applies to the global and numa tables, not private")
            }
            TableError::NoMemory(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the wrapped error's own source (see `Display`).
            TableError::Slots(e) => e.source(),
            _ => None,
        }
    }
}

impl From<SlotError> for TableError {
    fn from(e: SlotError) -> Self {
        TableError::Slots(e)
    }
}

fn deadline(timeout: Option<Duration>) -> Option<Instant> {
    timeout.map(|t| {
        let now = Instant::now();
        // A timeout too large to represent means "forever".
        now.checked_add(t)
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
    })
}

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
//! | `futex_hb_waiters_pending()` lockless check (2013, seed 003) | [`bucket::wake`], argument in [`bucket`] |
//!
//! Differences from the kernel: keys are given, not derived from memory; the futex word is an
//! `AtomicU32` the caller owns; no PI, no signals, no real-time priorities (the chain is FIFO,
//! which is what a `plist` of equal-priority tasks is); a private table replacement is
//! guarded by a reader-sharded lock ([`reflock`]) instead of per-CPU reference counts. `docs/table.md` has the details.
//!
//! For run-time selection (CLI, benchmarks) use [`ModelTable::build`] with a [`ModelSpec`].

pub mod bucket;
mod global;
pub mod lock;
mod model;
mod private;
pub mod reflock;

#[cfg(all(test, loom))]
mod loom;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::{Duration, Instant};

pub use bucket::{Aligned, BucketCore, BucketLayout, Packed, Requeued};
pub use global::{Geometry, GlobalTable, kernel_per_node_size, possible_cpus};
pub use model::{Layout, ModelSpec, ModelTable, TableKind};
pub use private::{
    PrivateTable, Process, SlotError, SlotPolicy, TableUsage, merged_default_slots, rfc_v2_slots,
};

/// How a 32-bit hash is reduced to a bucket index (spec `hashers.md` §4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduce {
    /// `hash & (buckets - 1)`, the kernel's.
    #[default]
    Mask,
    /// `hash >> (32 - log2(buckets))`, the top bits.
    High,
}

impl Reduce {
    /// Index for `hash` in a table of `2^bits` buckets (`bits ≤ 31`).
    #[inline(always)]
    pub fn index(self, hash: u32, bits: u32) -> usize {
        match self {
            Reduce::Mask => (hash & ((1u32 << bits) - 1)) as usize,
            Reduce::High => ((hash as u64) >> (32 - bits)) as usize,
        }
    }

    /// Parses `mask` or `high`.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "mask" => Some(Reduce::Mask),
            "high" => Some(Reduce::High),
            _ => None,
        }
    }

    /// `mask` or `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reduce::Mask => "mask",
            Reduce::High => "high",
        }
    }
}

/// A wait that returned after queueing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// A `wake` or `requeue` woke us.
    Woken,
    /// The timeout passed first (the kernel's ETIMEDOUT).
    TimedOut,
}

impl From<bucket::Blocked> for WaitOutcome {
    fn from(b: bucket::Blocked) -> Self {
        match b {
            bucket::Blocked::Woken => WaitOutcome::Woken,
            bucket::Blocked::TimedOut => WaitOutcome::TimedOut,
        }
    }
}

/// A wait (or compare-requeue) that did not queue.
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
    /// Node count is 0.
    InvalidNodes(usize),
    /// A key names a node the table does not have (the kernel's EINVAL).
    InvalidNode(i32),
    /// A private-table slot request was rejected.
    Slots(SlotError),
    /// An option that does not apply to the chosen kind.
    Unsupported(String),
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::InvalidSize(n) => {
                write!(f, "bucket count {n} is not a power of two in 1..=2^31")
            }
            TableError::InvalidNodes(n) => write!(f, "node count {n} must be at least 1"),
            TableError::InvalidNode(n) => write!(f, "key names node {n}, which does not exist"),
            TableError::Slots(e) => e.fmt(f),
            TableError::Unsupported(s) => f.write_str(s),
        }
    }
}
impl std::error::Error for TableError {}

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

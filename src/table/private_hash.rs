//! One private hash table (`struct futex_private_hash`, kernel/futex/core.c, v6.16+): its
//! buckets, size and usage counter. Its own module because two owners hold it: the
//! process whose hash it is ([`super::private`]) and, once that process is gone, the
//! global table that keeps it alive for waiters still queued on it
//! ([`super::global::GlobalTable::adopt`]).

use super::pages::NoMemory;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Reduce;
use super::bucket::{BucketCore, BucketLayout};
use super::pages::PageArray;

const USAGE_SHARDS: usize = 16;

#[derive(Debug, Default)]
#[repr(align(64))]
struct Shard(AtomicU64);

/// A private table (`struct futex_private_hash`).
#[derive(Debug)]
pub(crate) struct PrivateTable<L> {
    pub(super) buckets: PageArray<L>,
    pub(super) bits: u32,
    pub(super) reduce: Reduce,
    /// Whether the user sized it (`custom`).
    pub(super) custom: bool,
    /// Lookups served, sharded per thread to keep the counter off the shared hot line.
    usage: [Shard; USAGE_SHARDS],
}

impl<L: BucketLayout> PrivateTable<L> {
    pub(super) fn new(slots: usize, reduce: Reduce, custom: bool) -> Result<Self, NoMemory> {
        Ok(PrivateTable {
            buckets: PageArray::new(slots)?,
            bits: slots.trailing_zeros(),
            reduce,
            custom,
            usage: Default::default(),
        })
    }

    /// Number of buckets.
    pub fn slots(&self) -> usize {
        self.buckets.len()
    }

    /// Lookups this table served so far.
    pub fn lookups(&self) -> u64 {
        // Relaxed: a statistic; nothing else is published through these counters, and a
        // sum taken while lookups run is approximate by nature.
        self.usage.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
    }

    #[inline]
    pub(super) fn bucket_for(&self, hash: u32) -> &BucketCore {
        &self.buckets[self.reduce.index(hash, self.bits)]
    }

    #[inline]
    pub(super) fn count_lookup(&self, shard: usize) {
        // Relaxed: an independent counter per shard (see `lookups`).
        self.usage[shard % USAGE_SHARDS]
            .0
            .fetch_add(1, Ordering::Relaxed);
    }
}

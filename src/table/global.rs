//! The global futex hash table, optionally split per NUMA node (v6.16+).
//!
//! Kernel: `futex_init()` and `__futex_hash()` in kernel/futex/core.c (v6.16 – v6.18). The
//! kernel allocates one table of `roundup_pow_of_two(max(4, 256 × possible CPUs / nodes))`
//! buckets *per node*. A key whose `node` is `FUTEX_NO_NODE` picks its node from the hash
//! bits above the mask, `(hash >> log2(per_node_size)) % nodes`; a FUTEX2_NUMA key names its
//! node explicitly. Before v6.16 there was a single table of
//! `roundup_pow_of_two(256 × CPUs)` buckets — the same formula with one node.

use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::bucket::{self, BucketCore, BucketLayout};
use super::pages::PageArray;
use super::private_hash::PrivateTable;
use super::{BucketId, FutexTable, Reduce, Requeued, TableError, WaitError, WaitOutcome, deadline};
use crate::hashers::KeyHasher;
use crate::key::{FutexKey, NO_NODE};

/// Most NUMA nodes a table may have: the kernel's `MAX_NUMNODES` at its largest
/// (`CONFIG_NODES_SHIFT` = 10). With at most 2^31 buckets per node this keeps every table's
/// size far inside `isize`.
pub const MAX_NODES: usize = 1024;

/// Buckets per node the kernel allocates: `roundup_pow_of_two(max(4, 256 × cpus / nodes))`
/// (kernel/futex/core.c `futex_init`, v6.16+; with `nodes = 1` the pre-v6.16 size).
pub fn kernel_per_node_size(cpus: usize, nodes: usize) -> usize {
    let nodes = nodes.max(1);
    (256 * cpus.max(1) / nodes).max(4).next_power_of_two()
}

/// CPUs the kernel would count (`num_possible_cpus`; here the configured CPUs as reported
/// by `sysconf(_SC_NPROCESSORS_CONF)`, falling back to the available parallelism).
pub fn possible_cpus() -> usize {
    // SAFETY: sysconf has no preconditions; it only reads a system value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n > 0 {
        n as usize
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The shape of a bucket array: nodes × buckets per node, reduction and squash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Number of nodes (1 = the classic single global table).
    pub nodes: usize,
    /// Buckets per node (power of two).
    pub per_node: usize,
    /// How the hash is reduced to a bucket index.
    pub reduce: Reduce,
    /// FUTEX_SQUASH (seed 002): every node collapses to bucket 0; node choice is unchanged.
    pub squash: bool,
}

impl Geometry {
    /// Checks the geometry: `nodes ≥ 1`, `per_node` a power of two in `1..=2^31`.
    pub fn validate(&self) -> Result<(), TableError> {
        if self.nodes == 0 || self.nodes > MAX_NODES {
            return Err(TableError::InvalidNodes(self.nodes));
        }
        if !self.per_node.is_power_of_two() || self.per_node > (1 << 31) {
            return Err(TableError::InvalidSize(self.per_node));
        }
        Ok(())
    }

    /// `(node, bucket-in-node)` for a hash; `node_hint` is the key's node (`-1` = none).
    #[inline]
    pub fn locate(&self, hash: u32, node_hint: i32) -> (usize, usize) {
        let bits = self.per_node.trailing_zeros();
        let node = if self.nodes == 1 {
            0
        } else if node_hint == NO_NODE {
            // Kernel: `node = (hash >> futex_hashshift) % nr_node_ids` (mask reduction). With
            // the `high` reduction the index uses the top bits, so the node uses the bits
            // below them instead.
            let rest = match self.reduce {
                Reduce::Mask => ((hash as u64) >> bits) as u32,
                Reduce::High => ((hash as u64) & ((1u64 << (32 - bits)) - 1)) as u32,
            };
            rest as usize % self.nodes
        } else {
            // An explicit node (FUTEX2_NUMA). The kernel rejects invalid nodes with EINVAL
            // when it builds the key (`get_futex_key`); see `GlobalTable::check_key`. An
            // unchecked out-of-range node is folded back here rather than panicking.
            node_hint as u32 as usize % self.nodes
        };
        let idx = if self.squash {
            0
        } else {
            self.reduce.index(hash, bits)
        };
        (node, idx)
    }

    /// Total buckets (`nodes × per_node`).
    pub fn total(&self) -> usize {
        self.nodes * self.per_node
    }
}

/// The global table (one node) or the per-node tables (v6.16+), over hasher `H` and bucket
/// layout `L`.
#[derive(Debug)]
pub struct GlobalTable<H, L> {
    hasher: H,
    geometry: Geometry,
    buckets: PageArray<L>,
    /// Private tables of dropped [`super::Process`]es sharing this table, kept until this
    /// table is dropped (see [`GlobalTable::adopt`]).
    adopted: Mutex<Vec<Arc<PrivateTable<L>>>>,
}

impl<H, L> GlobalTable<H, L> {
    /// Keeps the private tables of a process that is being dropped alive as long as this
    /// table.
    ///
    /// Why: a process's private table can receive waiters of *other* processes sharing this
    /// global table (its first table takes over the global waiters of the private keys it
    /// owns, and `requeue` moves a waiter of any key into it). Such a waiter blocks through
    /// its own process, which keeps this global table alive, not the dropped one; if the
    /// private buckets were freed, its timeout path would lock freed memory. Every bucket a
    /// waiter can reach lives in this table or in a private table of a process sharing it,
    /// so keeping those tables until this one is dropped is enough (the kernel frees a
    /// private hash only after an RCU grace period and when no `futex_q` references it).
    pub(super) fn adopt(&self, tables: impl IntoIterator<Item = Arc<PrivateTable<L>>>) {
        self.adopted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(tables);
    }

    /// Private tables adopted from dropped processes (see [`GlobalTable::adopt`]).
    pub fn adopted_tables(&self) -> usize {
        self.adopted.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

impl<H: KeyHasher, L: BucketLayout> GlobalTable<H, L> {
    /// A table with an explicit geometry.
    pub fn new(hasher: H, geometry: Geometry) -> Result<Self, TableError> {
        geometry.validate()?;
        let buckets = PageArray::new(geometry.total()).map_err(TableError::NoMemory)?;
        Ok(GlobalTable {
            hasher,
            geometry,
            buckets,
            adopted: Mutex::new(Vec::new()),
        })
    }

    /// The kernel's size for this machine: one node of
    /// `roundup_pow_of_two(max(4, 256 × CPUs))` buckets, mask reduction.
    pub fn kernel_default(hasher: H) -> Self {
        Self::per_node_kernel(hasher, possible_cpus(), 1)
    }

    /// The kernel's v6.16+ per-node tables for `cpus` CPUs and `nodes` nodes.
    pub fn per_node_kernel(hasher: H, cpus: usize, nodes: usize) -> Self {
        let g = Geometry {
            nodes: nodes.max(1),
            per_node: kernel_per_node_size(cpus, nodes),
            reduce: Reduce::Mask,
            squash: false,
        };
        Self::new(hasher, g).expect("kernel geometry is valid")
    }

    /// The geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The hasher.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// Buckets per node (the kernel's `futex_hashmask + 1`).
    pub fn per_node_size(&self) -> usize {
        self.geometry.per_node
    }

    /// All buckets, node-major.
    pub fn buckets(&self) -> &[L] {
        &self.buckets
    }

    /// Rejects a key whose explicit node does not exist (the kernel's EINVAL).
    pub fn check_key(&self, key: &FutexKey) -> Result<(), TableError> {
        let n = key.node();
        if n != NO_NODE && (n < 0 || n as usize >= self.geometry.nodes) {
            return Err(TableError::InvalidNode(n));
        }
        Ok(())
    }

    /// Flat bucket index of `key` (`__futex_hash` without the private part).
    #[inline]
    pub fn index_of(&self, key: &FutexKey) -> usize {
        let h = self.hasher.hash(key);
        let (node, idx) = self.geometry.locate(h, key.node());
        node * self.geometry.per_node + idx
    }

    /// The bucket of `key`.
    #[inline]
    pub fn bucket(&self, key: &FutexKey) -> &BucketCore {
        &self.buckets[self.index_of(key)]
    }

    /// FUTEX_WAIT: block while `*word == expected` until woken or `timeout` passes.
    pub fn wait(
        &self,
        key: &FutexKey,
        word: &AtomicU32,
        expected: u32,
        timeout: Option<Duration>,
    ) -> Result<WaitOutcome, WaitError> {
        self.wait_until(key, word, expected, deadline(timeout))
    }

    /// FUTEX_WAIT with an absolute deadline.
    pub fn wait_until(
        &self,
        key: &FutexKey,
        word: &AtomicU32,
        expected: u32,
        deadline: Option<Instant>,
    ) -> Result<WaitOutcome, WaitError> {
        let b = self.bucket(key);
        let w = bucket::enqueue(b, *key, word, expected).map_err(|_| WaitError::WouldBlock)?;
        Ok(WaitOutcome::from_blocked(bucket::block(&w, deadline)))
    }

    /// FUTEX_WAKE: wake up to `n` waiters of `key`; returns how many were woken.
    #[inline]
    pub fn wake(&self, key: &FutexKey, n: usize) -> usize {
        bucket::wake(self.bucket(key), key, n)
    }

    /// FUTEX_CMP_REQUEUE (or FUTEX_REQUEUE when `cmp` is `None`).
    pub fn requeue(
        &self,
        key1: &FutexKey,
        key2: &FutexKey,
        nr_wake: usize,
        nr_requeue: usize,
        cmp: Option<(&AtomicU32, u32)>,
    ) -> Result<Requeued, WaitError> {
        bucket::requeue(
            self.bucket(key1),
            key1,
            self.bucket(key2),
            key2,
            nr_wake,
            nr_requeue,
            cmp,
        )
        .map_err(|_| WaitError::WouldBlock)
    }
}

impl<H: KeyHasher, L: BucketLayout> FutexTable for GlobalTable<H, L> {
    forward_table_operations!(GlobalTable<H, L>);
    fn bucket_of(&self, key: &FutexKey) -> BucketId {
        BucketId::Global(self.index_of(key))
    }
    fn check_key(&self, key: &FutexKey) -> Result<(), TableError> {
        GlobalTable::check_key(self, key)
    }
    fn queued(&self) -> usize {
        self.buckets.iter().map(|b| b.queued()).sum()
    }
    fn waiters(&self) -> u64 {
        self.buckets.iter().map(|b| b.waiter_count() as u64).sum()
    }
}

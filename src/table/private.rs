//! Per-process private hash tables and `prctl(PR_FUTEX_HASH)` (v6.16+).
//!
//! Kernel: kernel/futex/core.c, v6.16 – v6.18: `struct futex_private_hash`,
//! `futex_hash_allocate()`, `futex_hash_allocate_default()`, `futex_hash_get_slots()`,
//! `futex_hash_prctl()`, `__futex_hash()` / `__futex_hash_private()` and
//! `futex_rehash_private()`; kernel/fork.c calls `futex_hash_allocate_default()` on every
//! `CLONE_THREAD | CLONE_VM` clone, before the new thread is counted.
//!
//! Semantics reproduced ([`SlotPolicy::Merged`]):
//! - `set_slots(0)`: switch the process to the global hash, irreversibly (the kernel keeps a
//!   private hash with `hash_mask == 0`). A later `set_slots` of any value is `EBUSY`.
//! - `set_slots(n)`, `n` a power of two ≥ 2: a private table of `n` buckets; existing
//!   waiters are rehashed into it. `n == 1` or not a power of two: `EINVAL`.
//! - `get_slots()`: the private table's size, or 0 (none, or switched to global).
//! - A user-set size (`custom`) disables automatic sizing.
//! - On each new thread: `buckets = clamp(roundup_pow_of_two(4 × min(threads, CPUs)), 16,
//!   per-node global size)`; replace the table only if it grows.
//!
//! [`SlotPolicy::RfcV2`] reproduces the seed's RFC v2 (seed thread 000,
//! `PR_FUTEX_HASH_ALLOCATE`): `0` means 4 slots, other values are clamped to `2..=16` and
//! rounded down to a power of two; a second allocation is `EALREADY`; the automatic
//! allocation happens once, when the process creates its first thread, with 4 slots.
//!
//! Routing ([`Process::bucket`]) is `__futex_hash()`: a key with an explicit node goes to the
//! global (per-node) table; a private key of this process goes to the private table if one
//! with slots exists; everything else goes to the global table. The private table hashes with
//! its own hasher — the kernel uses jhash2 over the address word only (`jhash2-addr`).
//!
//! Replacing a table: the kernel pins the current private hash with a reference
//! (`futex_private_hash_get`, per-CPU counters since v6.17) for the duration of an operation
//! and switches tables only when no reference remains (`__futex_pivot_hash`). Here a
//! reader-sharded lock ([`super::reflock::RefLock`], one counter per thread shard, like the
//! per-CPU references) plays that role: every operation holds a read reference from hashing
//! until its waiter is queued; `set_slots`/auto-resize takes exclusive access, rehashes every
//! queued waiter and publishes the new table. The old table is kept until the process is dropped (the kernel
//! frees it after an RCU grace period), because a timed-out waiter may still be on its way to
//! lock a bucket it read before the move.

use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::bucket::{self, BucketCore, BucketLayout};
use super::global::GlobalTable;
use super::pages::NoMemory;
use super::private_hash::PrivateTable;
use super::reflock::RefLock;
use super::{BucketId, FutexTable, Reduce, Requeued, TableError, WaitError, WaitOutcome, deadline};
use crate::hashers::KeyHasher;
use crate::key::{FutexKey, KeyKind, NO_NODE};

/// How the process's private table is sized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlotPolicy {
    /// The merged kernel (v6.16+).
    #[default]
    Merged,
    /// The seed's RFC v2 (default 4 slots, clamped to 2..16, allocated once).
    RfcV2,
    /// No automatic allocation; only explicit `set_slots`, with the merged semantics.
    Manual,
}

impl SlotPolicy {
    /// Parses `merged`, `rfc-v2` or `manual`.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "merged" => Some(SlotPolicy::Merged),
            "rfc-v2" | "rfcv2" => Some(SlotPolicy::RfcV2),
            "manual" => Some(SlotPolicy::Manual),
            _ => None,
        }
    }
}

/// A rejected `PR_FUTEX_HASH` request; [`SlotError::errno`] gives the kernel's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotError {
    /// `EINVAL`: slots neither 0 nor a power of two ≥ 2.
    Invalid(u64),
    /// `EBUSY`: the process already switched to the global hash.
    Busy,
    /// `EALREADY` (RFC v2 only): a private table already exists.
    AlreadyAllocated,
    /// `ENOMEM`: the table could not be mapped; the process keeps its current one.
    NoMemory(NoMemory),
}

impl SlotError {
    /// The kernel's errno (`EINVAL`, `EBUSY`, `EALREADY`).
    pub fn errno(&self) -> i32 {
        match self {
            SlotError::Invalid(_) => libc::EINVAL,
            SlotError::Busy => libc::EBUSY,
            SlotError::AlreadyAllocated => libc::EALREADY,
            SlotError::NoMemory(_) => libc::ENOMEM,
        }
    }
}

impl fmt::Display for SlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotError::Invalid(n) => write!(
                f,
                "invalid futex hash slots {n}: must be 0 (global) or a power of two >= 2 (EINVAL)"
            ),
            SlotError::Busy => write!(
                f,
                "the process switched to the global futex hash; that cannot be undone (EBUSY)"
            ),
            SlotError::AlreadyAllocated => {
                write!(f, "a private futex hash is already allocated (EALREADY)")
            }
            SlotError::NoMemory(e) => e.fmt(f),
        }
    }
}
impl std::error::Error for SlotError {}

/// The outcome of an automatic resize at thread creation. The default sizes are always
/// valid slot counts, so only `ENOMEM` can come back: the kernel then fails the `clone()`
/// (`copy_process()` → `futex_hash_allocate_default()`); the model has no clone to fail,
/// so the process goes on with the table it has, which is still correct, only smaller.
fn keep_current_table_on_enomem(result: Result<(), SlotError>) {
    match result {
        Ok(()) | Err(SlotError::NoMemory(_)) => {}
        Err(e) => unreachable!("a default slot count is always valid: {e}"),
    }
}

/// The process's `mm->futex_phash`.
#[derive(Debug)]
enum PrivHash<L> {
    /// Never allocated.
    None,
    /// Switched to the global hash (`hash_mask == 0`), irreversible.
    Global,
    /// A private table.
    Table(Arc<PrivateTable<L>>),
}

/// Usage of one private table (current or retired), for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableUsage {
    /// Buckets.
    pub slots: usize,
    /// Lookups it served.
    pub lookups: u64,
    /// Whether the user sized it.
    pub custom: bool,
}

/// One process (`mm`): its private-hash state plus a handle on the shared global table.
#[derive(Debug)]
pub struct Process<H, L> {
    /// `None`: every private key belongs to this process (a single-process model).
    mm: Option<u64>,
    global: Arc<GlobalTable<H, L>>,
    hasher: H,
    policy: SlotPolicy,
    reduce: Reduce,
    cpus: usize,
    threads: AtomicUsize,
    state: RefLock<PrivHash<L>>,
    retired: Mutex<Vec<Arc<PrivateTable<L>>>>,
}

impl<H: KeyHasher, L: BucketLayout> Process<H, L> {
    /// A single-threaded process `mm` whose private tables hash with `hasher` (the kernel:
    /// `jhash2-addr`) and reduce with `reduce`; `cpus` is the online-CPU count for the auto
    /// policy.
    pub fn new(
        mm: u64,
        global: Arc<GlobalTable<H, L>>,
        hasher: H,
        policy: SlotPolicy,
        reduce: Reduce,
        cpus: usize,
    ) -> Self {
        Process {
            mm: Some(mm),
            global,
            hasher,
            policy,
            reduce,
            cpus: cpus.max(1),
            threads: AtomicUsize::new(1),
            state: RefLock::new(PrivHash::None),
            retired: Mutex::new(Vec::new()),
        }
    }

    /// Like [`Process::new`], but every private key counts as this process's, whatever its
    /// `mm` (a model of one process whose key generator uses several `mm` values).
    pub fn owning_all_private(
        global: Arc<GlobalTable<H, L>>,
        hasher: H,
        policy: SlotPolicy,
        reduce: Reduce,
        cpus: usize,
    ) -> Self {
        let mut p = Self::new(0, global, hasher, policy, reduce, cpus);
        p.mm = None;
        p
    }

    /// The process's `mm` (`None` for [`Process::owning_all_private`]).
    pub fn mm(&self) -> Option<u64> {
        self.mm
    }

    /// The shared global table.
    pub fn global(&self) -> &Arc<GlobalTable<H, L>> {
        &self.global
    }

    /// Threads in the process.
    pub fn threads(&self) -> usize {
        // Relaxed: a count, not a guard for other data (see `thread_created`).
        self.threads.load(Ordering::Relaxed)
    }

    /// `PR_FUTEX_HASH_GET_SLOTS`.
    pub fn get_slots(&self) -> usize {
        match &*self.state.read() {
            PrivHash::Table(t) => t.slots(),
            PrivHash::None | PrivHash::Global => 0,
        }
    }

    /// Whether the process switched to the global hash for good.
    pub fn is_global(&self) -> bool {
        matches!(&*self.state.read(), PrivHash::Global)
    }

    /// `PR_FUTEX_HASH_SET_SLOTS` (merged) or `PR_FUTEX_HASH_ALLOCATE` (RFC v2).
    pub fn set_slots(&self, slots: u64) -> Result<(), SlotError> {
        match self.policy {
            SlotPolicy::Merged | SlotPolicy::Manual => self.allocate(slots, true),
            SlotPolicy::RfcV2 => {
                if matches!(&*self.state.read(), PrivHash::Table(_)) {
                    return Err(SlotError::AlreadyAllocated);
                }
                self.allocate(rfc_v2_slots(slots), true)
            }
        }
    }

    /// `futex_hash_allocate(hash_slots, custom)`.
    fn allocate(&self, slots: u64, custom: bool) -> Result<(), SlotError> {
        if slots != 0 && (slots == 1 || !slots.is_power_of_two() || slots > (1 << 31)) {
            return Err(SlotError::Invalid(slots));
        }
        let mut st = self.state.write();
        if matches!(&*st, PrivHash::Global) {
            // "Once we've disabled the global hash there is no way back."
            return if custom { Err(SlotError::Busy) } else { Ok(()) };
        }
        let new = if slots == 0 {
            PrivHash::Global
        } else {
            // Before anything moves: a table that cannot be mapped leaves the process on
            // the one it has (futex_hash_allocate() returns -ENOMEM before rehashing).
            PrivHash::Table(Arc::new(
                PrivateTable::new(slots as usize, self.reduce, custom)
                    .map_err(SlotError::NoMemory)?,
            ))
        };
        // futex_rehash_private(): move every queued waiter of the old table. Private keys
        // leaving for the global hash go to the global table's bucket for them.
        if let PrivHash::Table(old) = &*st {
            for b in old.buckets.iter() {
                bucket::rehash_into(b, |k| match &new {
                    PrivHash::Table(t) => t.bucket_for(self.hasher.hash(k)),
                    _ => self.global.bucket(k),
                });
            }
        } else if let (PrivHash::None, PrivHash::Table(t)) = (&*st, &new) {
            // The first private table: this process's private keys were hashed into the
            // global table until now, and waiters queued there would be stranded (a lost
            // wake-up; found by the `table_ops` fuzz target, seed `regress-first-table`).
            // Move them. The new table is not reachable yet and the write reference excludes
            // every operation that could route a key of ours to it.
            for b in self.global.buckets().iter() {
                bucket::rehash_matching_into(
                    b,
                    |k| self.is_ours_private(k),
                    |k| t.bucket_for(self.hasher.hash(k)),
                );
            }
        }
        let old = std::mem::replace(&mut *st, new);
        drop(st);
        if let PrivHash::Table(old) = old {
            self.retired.lock().expect("retired tables").push(old);
        }
        Ok(())
    }

    /// A thread of this process creates another thread (`copy_process` with
    /// `CLONE_THREAD | CLONE_VM`): run the automatic sizing policy, then count the thread.
    pub fn thread_created(&self) {
        // Relaxed load, separate from the increment below: two threads created at once may
        // both size for the same count. That is what the kernel does too (`copy_process`
        // reads `get_nr_threads()` without serialising against other clones), and the
        // sizing only grows, so a later creation catches up. The table itself is
        // published under the `state` lock, not through this counter.
        let threads = self.threads.load(Ordering::Relaxed);
        match self.policy {
            SlotPolicy::Manual => {}
            SlotPolicy::Merged => {
                let (custom, current) = match &*self.state.read() {
                    PrivHash::Table(t) => (t.custom, t.slots()),
                    PrivHash::Global => (true, 0),
                    PrivHash::None => (false, 0),
                };
                if !custom {
                    let want =
                        merged_default_slots(threads, self.cpus, self.global.per_node_size());
                    // A one-bucket global table clamps the size to 1, which
                    // `futex_hash_allocate` refuses (EINVAL: one slot is no table). The
                    // kernel never gets here (`futex_init` makes at least 4 buckets a node);
                    // a model table of one bucket keeps the process on the global hash.
                    if current < want && want >= 2 {
                        keep_current_table_on_enomem(self.allocate(want as u64, false));
                    }
                }
            }
            SlotPolicy::RfcV2 => {
                let none = matches!(&*self.state.read(), PrivHash::None);
                if threads == 1 && none {
                    keep_current_table_on_enomem(self.allocate(rfc_v2_slots(0), false));
                }
            }
        }
        // Relaxed: see the load above.
        self.threads.fetch_add(1, Ordering::Relaxed);
    }

    /// Usage of the current private table and every retired one (oldest first).
    pub fn usage(&self) -> Vec<TableUsage> {
        let mut v: Vec<TableUsage> = self
            .retired
            .lock()
            .expect("retired tables")
            .iter()
            .map(|t| TableUsage {
                slots: t.slots(),
                lookups: t.lookups(),
                custom: t.custom,
            })
            .collect();
        if let PrivHash::Table(t) = &*self.state.read() {
            v.push(TableUsage {
                slots: t.slots(),
                lookups: t.lookups(),
                custom: t.custom,
            });
        }
        v
    }

    /// Waiters queued on the current private table's chains (takes each bucket lock).
    pub fn private_queued(&self) -> usize {
        match &*self.state.read() {
            PrivHash::Table(t) => t.buckets.iter().map(|b| b.queued()).sum(),
            _ => 0,
        }
    }

    /// Waiters counted in the current private table (snapshot).
    pub fn private_waiters(&self) -> u64 {
        match &*self.state.read() {
            PrivHash::Table(t) => t.buckets.iter().map(|b| b.waiter_count() as u64).sum(),
            _ => 0,
        }
    }

    #[inline]
    fn is_ours_private(&self, key: &FutexKey) -> bool {
        key.node() == NO_NODE
            && key.kind() == KeyKind::Private
            && self.mm.is_none_or(|mm| key.w0() == mm)
    }

    /// Runs `f` on the bucket `__futex_hash()` picks for `key`, holding the table reference.
    #[inline]
    fn with_bucket<R>(&self, key: &FutexKey, f: impl FnOnce(&BucketCore) -> R) -> R {
        if self.is_ours_private(key) {
            let st = self.state.read();
            if let PrivHash::Table(t) = &*st {
                t.count_lookup(st.shard());
                return f(t.bucket_for(self.hasher.hash(key)));
            }
        }
        f(self.global.bucket(key))
    }

    /// The bucket `key` maps to (`__futex_hash`): in the private table for a private key of
    /// this process while it has one, else in the global table (flat, node-major).
    pub fn route(&self, key: &FutexKey) -> BucketId {
        if self.is_ours_private(key)
            && let PrivHash::Table(t) = &*self.state.read()
        {
            return BucketId::Private(t.reduce.index(self.hasher.hash(key), t.bits));
        }
        BucketId::Global(self.global.index_of(key))
    }

    /// FUTEX_WAIT on a key of this process (or a shared key).
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
        dl: Option<Instant>,
    ) -> Result<WaitOutcome, WaitError> {
        let w = self
            .with_bucket(key, |b| bucket::enqueue(b, *key, word, expected))
            .map_err(|_| WaitError::WouldBlock)?;
        // The read reference is dropped: a resize may now move this waiter (it updates the
        // waiter's bucket pointer under both locks), and the old table stays alive in
        // `retired`, so `block` may use either.
        Ok(WaitOutcome::from_blocked(bucket::block(&w, dl)))
    }

    /// FUTEX_WAKE.
    #[inline]
    pub fn wake(&self, key: &FutexKey, n: usize) -> usize {
        self.with_bucket(key, |b| bucket::wake(b, key, n))
    }

    /// FUTEX_CMP_REQUEUE (FUTEX_REQUEUE when `cmp` is `None`).
    pub fn requeue(
        &self,
        key1: &FutexKey,
        key2: &FutexKey,
        nr_wake: usize,
        nr_requeue: usize,
        cmp: Option<(&AtomicU32, u32)>,
    ) -> Result<Requeued, WaitError> {
        // Hold one read reference across both lookups so no resize happens in between.
        let st = self.state.read();
        let pick = |k: &FutexKey| -> &BucketCore {
            match &*st {
                PrivHash::Table(t) if self.is_ours_private(k) => {
                    t.count_lookup(st.shard());
                    t.bucket_for(self.hasher.hash(k))
                }
                _ => self.global.bucket(k),
            }
        };
        let (b1, b2) = (pick(key1), pick(key2));
        bucket::requeue(b1, key1, b2, key2, nr_wake, nr_requeue, cmp)
            .map_err(|_| WaitError::WouldBlock)
    }
}

impl<H: KeyHasher, L: BucketLayout> FutexTable for Process<H, L> {
    forward_table_operations!(Process<H, L>);
    fn bucket_of(&self, key: &FutexKey) -> BucketId {
        self.route(key)
    }
    fn check_key(&self, key: &FutexKey) -> Result<(), TableError> {
        self.global.check_key(key)
    }
    fn queued(&self) -> usize {
        self.private_queued() + self.global.queued()
    }
    fn waiters(&self) -> u64 {
        self.private_waiters() + self.global.waiters()
    }
}

impl<H, L> Drop for Process<H, L> {
    fn drop(&mut self) {
        // Waiters of other processes may be queued on our private tables (see
        // `GlobalTable::adopt`); hand the tables to the shared global table instead of
        // freeing them. `get_mut`: `&mut self` already excludes every reference, so this
        // takes no lock (and cannot wait on a read reference leaked with `mem::forget`).
        let mut tables = std::mem::take(self.retired.get_mut().unwrap_or_else(|e| e.into_inner()));
        if let PrivHash::Table(t) = std::mem::replace(self.state.get_mut(), PrivHash::None) {
            tables.push(t);
        }
        if !tables.is_empty() {
            self.global.adopt(tables);
        }
    }
}

/// The merged kernel's automatic size: `clamp(roundup_pow_of_two(4 × min(threads, cpus)), 16,
/// global_per_node)` (`futex_hash_allocate_default`, v6.16+).
pub fn merged_default_slots(threads: usize, cpus: usize, global_per_node: usize) -> usize {
    let t = threads.min(cpus).max(1);
    let b = (4 * t).next_power_of_two();
    // The kernel's clamp(val, lo, hi) with lo = 16 > hi for tiny global tables yields hi.
    b.max(16).min(global_per_node.max(1))
}

/// The RFC v2 size for a request (`PR_FUTEX_HASH_ALLOCATE`, seed thread 000): 0 → 4, then
/// clamped to 2..=16 and rounded down to a power of two.
pub fn rfc_v2_slots(requested: u64) -> u64 {
    let s = if requested == 0 { 4 } else { requested };
    let s = s.clamp(2, 16);
    1u64 << (63 - s.leading_zeros())
}

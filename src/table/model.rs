//! Run-time construction of a table (the `model` backend of the throughput benchmark).
//!
//! [`ModelSpec`] says what to build; [`ModelTable::build`] builds it; [`ModelTable`] is
//! `Send + Sync` (share it with `Arc`) and dispatches each operation with one `match` over
//! the (kind, layout) pair to a monomorphic table.

use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use super::{
    Aligned, BucketId, BucketLayout, FutexTable, Geometry, GlobalTable, Packed, Process, Reduce,
    Requeued, SlotPolicy, TableError, TableUsage, WaitError, WaitOutcome, kernel_per_node_size,
    merged_default_slots, possible_cpus,
};
use crate::hashers::{KeyHasher, SharedHasher};
use crate::key::FutexKey;

/// Which table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableKind {
    /// One global table (pre-v6.16 layout; `nodes` is ignored).
    #[default]
    Global,
    /// Per-node global tables (v6.16+).
    Numa,
    /// A process's private table for its private keys, the global table for the rest.
    Private,
}

impl TableKind {
    /// Parses `global`, `numa` or `private`.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "global" => Some(TableKind::Global),
            "numa" => Some(TableKind::Numa),
            "private" => Some(TableKind::Private),
            _ => None,
        }
    }
    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            TableKind::Global => "global",
            TableKind::Numa => "numa",
            TableKind::Private => "private",
        }
    }
}

/// Bucket layout chosen at run time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// One bucket per 64-byte cache line.
    #[default]
    Aligned,
    /// 32-byte buckets, no padding.
    Packed,
}

impl Layout {
    /// Parses `aligned` or `packed`.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "aligned" => Some(Layout::Aligned),
            "packed" => Some(Layout::Packed),
            _ => None,
        }
    }
    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Aligned => "aligned",
            Layout::Packed => "packed",
        }
    }
}

/// What [`ModelTable::build`] builds.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// Hasher of the global (or per-node) table.
    pub hasher: SharedHasher,
    /// Hasher of the private table (`Private` only); `None` = `hasher`. The kernel uses
    /// `jhash2-addr` there.
    pub private_hasher: Option<SharedHasher>,
    /// Which table.
    pub kind: TableKind,
    /// Bucket layout.
    pub layout: Layout,
    /// Buckets: per node for `Global`/`Numa`, private slots for `Private`. `None` = the
    /// kernel's size for `cpus` (`Private`: the merged auto size of a process with at least
    /// `cpus` threads).
    pub buckets: Option<usize>,
    /// Hash-to-bucket reduction.
    pub reduce: Reduce,
    /// Nodes (`Numa` only; at least 1).
    pub nodes: usize,
    /// FUTEX_SQUASH: each node reduced to one bucket (`Global`/`Numa`).
    pub squash: bool,
    /// CPU count for the kernel's sizing formulas; `None` = this machine's.
    pub cpus: Option<usize>,
}

impl ModelSpec {
    /// Defaults: aligned buckets, kernel sizes, mask reduction, 1 node, no squash.
    pub fn new(hasher: SharedHasher, kind: TableKind) -> Self {
        ModelSpec {
            hasher,
            private_hasher: None,
            kind,
            layout: Layout::Aligned,
            buckets: None,
            reduce: Reduce::Mask,
            nodes: 1,
            squash: false,
            cpus: None,
        }
    }
}

#[derive(Debug)]
enum Inner {
    GlobalAligned(GlobalTable<SharedHasher, Aligned>),
    GlobalPacked(GlobalTable<SharedHasher, Packed>),
    PrivateAligned(Process<SharedHasher, Aligned>),
    PrivatePacked(Process<SharedHasher, Packed>),
}

macro_rules! dispatch {
    ($self:expr, $t:ident => $body:expr) => {
        match &$self.inner {
            Inner::GlobalAligned($t) => $body,
            Inner::GlobalPacked($t) => $body,
            Inner::PrivateAligned($t) => $body,
            Inner::PrivatePacked($t) => $body,
        }
    };
}

/// A table built at run time from a [`ModelSpec`].
#[derive(Debug)]
pub struct ModelTable {
    spec: ModelSpec,
    /// Buckets per node (global) or private slots.
    size: usize,
    nodes: usize,
    inner: Inner,
}

impl ModelTable {
    /// Builds the table. Errors: bucket count not a power of two (`Private`: not ≥ 2),
    /// zero nodes, `squash` or `nodes > 1` with a kind they do not apply to.
    pub fn build(spec: ModelSpec) -> Result<Self, TableError> {
        let cpus = spec.cpus.unwrap_or_else(possible_cpus).max(1);
        if spec.nodes == 0 {
            return Err(TableError::InvalidNodes(0));
        }
        if spec.kind != TableKind::Numa && spec.nodes != 1 {
            return Err(TableError::NodesNeedNuma {
                kind: spec.kind,
                nodes: spec.nodes,
            });
        }
        if spec.kind == TableKind::Private && spec.squash {
            return Err(TableError::SquashNeedsGlobal);
        }
        let (size, inner) = match spec.kind {
            TableKind::Global | TableKind::Numa => Self::build_global(&spec, cpus)?,
            TableKind::Private => Self::build_private(&spec, cpus)?,
        };
        if size == 0 {
            return Err(TableError::InvalidSize(0));
        }
        Ok(ModelTable {
            nodes: spec.nodes,
            spec,
            size,
            inner,
        })
    }

    /// `(buckets per node, table)` for `Global`/`Numa`.
    fn build_global(spec: &ModelSpec, cpus: usize) -> Result<(usize, Inner), TableError> {
        let per_node = spec
            .buckets
            .unwrap_or_else(|| kernel_per_node_size(cpus, spec.nodes));
        let g = Geometry {
            nodes: spec.nodes,
            per_node,
            reduce: spec.reduce,
            squash: spec.squash,
        };
        let inner = match spec.layout {
            Layout::Aligned => Inner::GlobalAligned(GlobalTable::new(spec.hasher.clone(), g)?),
            Layout::Packed => Inner::GlobalPacked(GlobalTable::new(spec.hasher.clone(), g)?),
        };
        Ok((per_node, inner))
    }

    /// `(private slots, table)` for `Private`: one process owning every private key, with a
    /// private table of `spec.buckets` (or the merged auto size for `cpus` threads) and the
    /// kernel-sized global table for everything else.
    fn build_private(spec: &ModelSpec, cpus: usize) -> Result<(usize, Inner), TableError> {
        let g = Geometry {
            nodes: 1,
            per_node: kernel_per_node_size(cpus, 1),
            reduce: spec.reduce,
            squash: false,
        };
        let slots = spec
            .buckets
            .unwrap_or_else(|| merged_default_slots(cpus, cpus, g.per_node));
        let private_hasher = spec
            .private_hasher
            .clone()
            .unwrap_or_else(|| spec.hasher.clone());
        fn process<L: BucketLayout>(
            spec: &ModelSpec,
            g: Geometry,
            private_hasher: SharedHasher,
            cpus: usize,
            slots: usize,
        ) -> Result<Process<SharedHasher, L>, TableError> {
            let p = Process::owning_all_private(
                Arc::new(GlobalTable::new(spec.hasher.clone(), g)?),
                private_hasher,
                SlotPolicy::Manual,
                spec.reduce,
                cpus,
            );
            p.set_slots(slots as u64)?;
            Ok(p)
        }
        let inner = match spec.layout {
            Layout::Aligned => {
                Inner::PrivateAligned(process(spec, g, private_hasher, cpus, slots)?)
            }
            Layout::Packed => Inner::PrivatePacked(process(spec, g, private_hasher, cpus, slots)?),
        };
        Ok((slots, inner))
    }

    /// The spec it was built from.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Buckets per node (`Global`/`Numa`) or private slots (`Private`).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Nodes.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// One line, e.g. `numa jhash2 2x512 aligned mask`.
    pub fn describe(&self) -> String {
        let s = &self.spec;
        let h = match (s.kind, &s.private_hasher) {
            (TableKind::Private, Some(p)) => format!("{}/{}", p.name(), s.hasher.name()),
            _ => s.hasher.name().to_string(),
        };
        format!(
            "{} {} {}x{} {} {}{}",
            s.kind.as_str(),
            h,
            self.nodes,
            self.size,
            s.layout.as_str(),
            s.reduce.as_str(),
            if s.squash { " squash" } else { "" }
        )
    }

    /// FUTEX_WAIT ([`FutexTable::wait`]).
    #[inline]
    pub fn wait(
        &self,
        key: &FutexKey,
        word: &AtomicU32,
        expected: u32,
        timeout: Option<Duration>,
    ) -> Result<WaitOutcome, WaitError> {
        dispatch!(self, t => t.wait(key, word, expected, timeout))
    }

    /// FUTEX_WAIT with an absolute deadline ([`FutexTable::wait_until`]).
    #[inline]
    pub fn wait_until(
        &self,
        key: &FutexKey,
        word: &AtomicU32,
        expected: u32,
        deadline: Option<Instant>,
    ) -> Result<WaitOutcome, WaitError> {
        dispatch!(self, t => t.wait_until(key, word, expected, deadline))
    }

    /// FUTEX_WAKE ([`FutexTable::wake`]).
    #[inline]
    pub fn wake(&self, key: &FutexKey, n: usize) -> usize {
        dispatch!(self, t => t.wake(key, n))
    }

    /// FUTEX_CMP_REQUEUE ([`FutexTable::requeue`]).
    pub fn requeue(
        &self,
        key1: &FutexKey,
        key2: &FutexKey,
        nr_wake: usize,
        nr_requeue: usize,
        cmp: Option<(&AtomicU32, u32)>,
    ) -> Result<Requeued, WaitError> {
        dispatch!(self, t => t.requeue(key1, key2, nr_wake, nr_requeue, cmp))
    }

    /// The bucket of `key` ([`FutexTable::bucket_of`]).
    pub fn bucket_of(&self, key: &FutexKey) -> BucketId {
        dispatch!(self, t => FutexTable::bucket_of(t, key))
    }

    /// Private-table usage (`Private` only; empty otherwise).
    pub fn usage(&self) -> Vec<TableUsage> {
        match &self.inner {
            Inner::PrivateAligned(p) => p.usage(),
            Inner::PrivatePacked(p) => p.usage(),
            _ => Vec::new(),
        }
    }

    /// Waiters queued on all chains ([`FutexTable::queued`]).
    pub fn queued(&self) -> usize {
        dispatch!(self, t => FutexTable::queued(t))
    }

    /// Waiters counted in all buckets ([`FutexTable::waiters`]).
    pub fn waiters(&self) -> u64 {
        dispatch!(self, t => FutexTable::waiters(t))
    }
}

impl FutexTable for ModelTable {
    forward_table_operations!(ModelTable);
    fn bucket_of(&self, key: &FutexKey) -> BucketId {
        ModelTable::bucket_of(self, key)
    }
    fn check_key(&self, key: &FutexKey) -> Result<(), TableError> {
        dispatch!(self, t => t.check_key(key))
    }
    fn queued(&self) -> usize {
        ModelTable::queued(self)
    }
    fn waiters(&self) -> u64 {
        ModelTable::waiters(self)
    }
}

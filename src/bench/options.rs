//! What every part of `bench` shares: the backend choice, the model backend's options,
//! the `lock`/`noisy` request, the one error type, and the model table a configuration
//! gets. It depends on nothing else in `bench`, so the runner, the backends, the child
//! protocol and the workloads all build on it without importing each other in a circle.

use crate::hashers::{Builtin, SharedHasher};
use crate::table::{Layout, ModelSpec, TableKind};
use crate::throughput::record::BenchRecord;
use std::path::PathBuf;
use std::time::Duration;

/// Where the operations of a configuration go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The crate's user-space bucket table ([`crate::table`]).
    Model,
    /// The real `futex(2)` of this machine.
    Kernel,
}

impl BackendChoice {
    /// `model` or `kernel`.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendChoice::Model => "model",
            BackendChoice::Kernel => "kernel",
        }
    }
    /// The `backend` of this choice's records.
    pub fn record(self) -> crate::throughput::Backend {
        match self {
            BackendChoice::Model => crate::throughput::Backend::Model,
            BackendChoice::Kernel => crate::throughput::Backend::Kernel,
        }
    }
}

// The record's field types live in `throughput`, which may not see `table`; the model
// table's run-time choices map onto them here, one layer up.
impl From<crate::table::TableKind> for crate::throughput::TableKind {
    fn from(k: crate::table::TableKind) -> Self {
        match k {
            crate::table::TableKind::Global => Self::Global,
            crate::table::TableKind::Private => Self::Private,
            crate::table::TableKind::Numa => Self::Numa,
        }
    }
}

impl From<crate::table::Layout> for crate::throughput::Layout {
    fn from(l: crate::table::Layout) -> Self {
        match l {
            crate::table::Layout::Aligned => Self::Aligned,
            crate::table::Layout::Packed => Self::Packed,
        }
    }
}

/// Options of the model backend.
#[derive(Clone, Debug)]
pub struct ModelOptions {
    /// One column per hasher.
    pub algos: Vec<SharedHasher>,
    /// Table kind. With `Private`, buckets = private slots and 0 = the global hash (as the
    /// kernel's `-b`); with `Global`/`Numa`, buckets = table size per node, 0 = the kernel's
    /// size for this machine.
    pub table: TableKind,
    /// Bucket layout.
    pub layout: Layout,
    /// Nodes (`Numa` only).
    pub nodes: usize,
    /// FUTEX_SQUASH: every node reduced to one bucket (`Global`/`Numa`).
    pub squash: bool,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            algos: vec![
                Builtin::by_name("jhash2", crate::hashers::HashKey::DEFAULT)
                    .expect("jhash2 is registered")
                    .shared(),
            ],
            table: TableKind::Private,
            layout: Layout::Aligned,
            nodes: 1,
            squash: false,
        }
    }
}

/// The model table for one configuration: `Private` with 0 buckets is the global hash (as
/// the kernel's `-b 0`); 0 or `None` buckets otherwise mean the kernel's size.
pub fn model_spec(opts: &ModelOptions, algo: SharedHasher, buckets: Option<u64>) -> ModelSpec {
    let kind = match (opts.table, buckets) {
        (TableKind::Private, Some(0)) => TableKind::Global,
        (k, _) => k,
    };
    let mut s = ModelSpec::new(algo, kind);
    s.layout = opts.layout;
    s.nodes = if kind == TableKind::Numa {
        opts.nodes
    } else {
        1
    };
    s.squash = opts.squash && kind != TableKind::Private;
    s.buckets = match buckets {
        None | Some(0) => None,
        Some(b) => Some(b as usize),
    };
    s
}

/// Why a benchmark could not run. `usage`: the request is wrong; otherwise the machine
/// failed. What each means to the user (an exit status) is the CLI's to decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchError {
    /// Caused by the request rather than the machine.
    pub usage: bool,
    /// One line.
    pub message: String,
}

impl BenchError {
    /// A bad request.
    pub fn usage(message: impl Into<String>) -> Self {
        BenchError {
            usage: true,
            message: message.into(),
        }
    }

    /// A failure of the machine or the run.
    pub fn runtime(message: impl Into<String>) -> Self {
        BenchError {
            usage: false,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BenchError {}

/// Shape of a `lock` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LockShape {
    /// Groups (processes / nodes), each with its own lock.
    pub groups: usize,
    /// Lock-taking threads per group.
    pub holders: usize,
    /// Contender threads per group.
    pub contenders: usize,
}

/// A `lock` or `noisy` request.
#[derive(Clone, Debug)]
pub struct ContendSpec {
    /// Backends (one record set each).
    pub backends: Vec<BackendChoice>,
    /// Model options (one record per hasher).
    pub model: ModelOptions,
    /// `lock`: contenders per group; `noisy`: noisy threads.
    pub threads: usize,
    /// `lock`: as in a sweep; `noisy`: private slots of the private run (None: the kernel's
    /// automatic size).
    pub buckets: Option<u64>,
    /// `noisy`: futex words per noisy thread.
    pub futexes: usize,
    /// Run time.
    pub runtime: Duration,
    /// `lock`: holder threads per group.
    pub holders: usize,
    /// `lock`: groups (processes, one per node).
    pub groups: usize,
    /// `noisy`: victim threads.
    pub victim_threads: usize,
    /// `noisy`: futex words per victim thread.
    pub victim_futexes: usize,
    /// `futexhash` binary for kernel children (None: this executable).
    pub exe: Option<PathBuf>,
}

/// Records and warnings of a `lock` or `noisy` run.
#[derive(Clone, Debug, Default)]
pub struct ContendResult {
    /// One record per (backend, hasher) for `lock`; two per (backend, hasher) for `noisy`
    /// (`table` = `global`, then `private`).
    pub records: Vec<BenchRecord>,
    /// One-line warnings.
    pub warnings: Vec<String>,
}

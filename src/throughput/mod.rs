//! Throughput results as data, below every layer that measures or predicts them (`bench`,
//! `sim`) and every layer that shows them (`report`): [`outcome`] (what a run measured, per
//! thread), [`stats`] (perf's mean and standard error, `tools/perf/util/stat.c`), and
//! [`record`] (one record per configuration with the stable fields, perf's own lines, the
//! seed thread's table, plot series).

pub mod outcome;
pub mod record;
pub mod stats;

pub use outcome::{RunOutcome, ThreadOutcome, Workload};
pub use record::{Backend, BenchRecord, Layout, RecordMeta, TableKind};
pub use stats::ThroughputStats;

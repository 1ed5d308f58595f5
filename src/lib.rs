//! futexhash: evaluate hash functions and bucket-table designs for Linux futex keys.
//!
//! Data flows one way: workload → keys ([`key`]) → hasher ([`hashers`]) → bucket →
//! table/stats → report. The command-line front end lives in [`cli`]; `src/main.rs` only
//! calls it.
#![warn(missing_docs)]

pub mod cli;
pub mod hashers;
pub mod key;
pub mod report;
pub mod table;

pub use hashers::{AnyHasher, HashKey, KeyHasher, Scope};
pub use key::{FutexKey, KeyError, KeyKind};

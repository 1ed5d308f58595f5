//! futexhash: evaluate hash functions and bucket-table designs for Linux futex keys.
//!
//! Data flows one way: a module uses only modules of lower layers (checked by
//! `tests/architecture.rs`, as is this line).
//!
//! Layers, lowest first: `assets` `key` `limits` `machine` `reduce` `render` `rng` → `hashers`
//! `workload` → `capture` `stats` `table` `throughput` → `bench` `check` `sim` → `attack`
//! → `report` → `cli` `fuzz_targets`
//!
//! The command-line front end lives in [`cli`]; `src/main.rs` only calls it.
#![warn(missing_docs)]

pub mod assets;
pub mod attack;
pub mod bench;
pub mod capture;
pub mod check;
pub mod cli;
pub mod fuzz_targets;
pub mod hashers;
pub mod key;
pub mod limits;
pub mod machine;
pub mod reduce;
pub mod render;
pub mod report;
pub mod rng;
pub mod sim;
pub mod stats;
pub mod table;
pub mod throughput;
pub mod workload;

pub use hashers::{Builtin, HashKey, KeyHasher, Scope, SharedHasher};
pub use key::{FutexKey, KeyError, KeyKind};

//! `futexhash report`: the whole evaluation (distribution, hash cost, model and kernel
//! throughput, simulation) run in one go and written as Markdown with plots and a JSON
//! file of every figure, answering the seed threads' questions first. The top library
//! layer: it calls every layer below and is called only by the CLI.
//!
//! - [`context`]: what all sections share (hashers, measured costs, calibrated profile);
//! - [`answers`]: the answers to the seed threads' questions;
//! - [`evaluation`]: the detailed sections and the order they run in;
//! - [`machine`], [`spread`], [`staging`]: the machine description, repeated-run figures,
//!   and writing the directory whole.

pub mod answers;
pub mod context;
mod error;
pub mod evaluation;
pub mod section;
pub mod simulation;
pub mod spread;
pub mod staging;

pub use error::ReportError;

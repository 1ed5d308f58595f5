//! Rendering only, a leaf that imports no other layer of the crate: text tables in the seed
//! threads' `+-----+` style, CSV and JSON records, atomic file output, and SVG line plots.
//! Every layer that has results to show (throughput, the simulator, the report) calls it.

pub mod output;
pub mod plot;

pub use output::{Format, MAIL_WIDTH, TextTable, fmt_grouped, write_atomic};

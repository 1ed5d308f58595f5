//! Reporting: text tables in the seed threads' `+-----+` style, CSV and JSON records, atomic
//! file output (and, as later issues land, SVG plots and the Markdown report).

pub mod evaluation;
pub mod output;
pub mod plot;

pub use output::{Format, TextTable, fmt_grouped, write_atomic};

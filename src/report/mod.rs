//! `futexhash report`: the whole evaluation (distribution, model and kernel throughput,
//! simulation) run in one go and written as Markdown with plots. The top layer: it calls
//! every layer below and is called only by the CLI.

pub mod evaluation;

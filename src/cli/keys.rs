//! `futexhash keys --workload W [--keys N] [--seed S] [--format csv|json] [--output F]`:
//! the distinct keys of a workload in the order `dist` hashes them, so that a hash computed
//! anywhere (Python, a kernel module printing hashes) can be judged with
//! `futexhash dist --hashes` on exactly the keys the built-ins are judged on.

use super::interrupt::{self, Keeps};
use super::{CliError, args};
use crate::key::{FutexKey, KeyKind};
use crate::render::{output, write_atomic};
use crate::workload::KeyWorkload;
use serde::Serialize;
use std::path::PathBuf;

/// `--format` of `keys`: records only (a table of hex words helps nobody).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum KeysFormat {
    Csv,
    Json,
}

#[derive(Debug, clap::Args)]
pub(super) struct KeysArgs {
    /// Key set: perf, aslr, pages, stride:N, inode, sparse, random, fork, trace:FILE.
    #[arg(long, value_name = "NAME", default_value = "perf")]
    workload: String,
    /// Processes of --workload fork (default 64): forked from one parent, the same futex
    /// addresses in each, one mm each.
    #[arg(long, value_name = "N", value_parser = args::number)]
    processes: Option<u64>,
    /// Number of distinct keys (default: perf 245760, trace: all its keys, others 262144).
    #[arg(long, value_name = "N", value_parser = args::number)]
    keys: Option<u64>,
    /// Seed of the workload generator (default 1; not for trace:FILE, whose keys are read).
    #[arg(long, value_name = "S", value_parser = args::number)]
    seed: Option<u64>,
    /// Output format: csv (columns kind,w0,w1,offset) or json.
    #[arg(long, value_enum, default_value_t = KeysFormat::Csv)]
    format: KeysFormat,
    /// Write to FILE (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Serialize)]
struct KeyRecord {
    kind: &'static str,
    w0: String,
    w1: String,
    offset: u32,
}

fn record(k: &FutexKey) -> KeyRecord {
    KeyRecord {
        kind: match k.kind() {
            KeyKind::Private => "private",
            KeyKind::SharedAnon => "anon",
            KeyKind::Inode => "inode",
        },
        w0: format!("{:#x}", k.w0()),
        w1: format!("{:#x}", k.w1()),
        offset: k.offset(),
    }
}

pub(super) fn run(a: KeysArgs) -> Result<(), CliError> {
    if let Some(p) = &a.output {
        args::check_output_path(p, "output")?;
    }
    // As `dist`: a flag the workload will not read is refused, not dropped.
    let named = a.workload.trim();
    if let (Some(n), Some(count)) = (a.processes, named.strip_prefix("fork:")) {
        return Err(CliError::Usage(format!(
            "--processes '{n}' repeats the process count --workload {named} gives ({count}); \
             give it once: --workload fork --processes {n} or --workload fork:{count}"
        )));
    }
    if let (Some(seed), true) = (a.seed, named.starts_with("trace:")) {
        return Err(CliError::Usage(format!(
            "--seed '{seed}' draws the keys of a generated workload; --workload {named} reads \
             its keys from the trace: drop --seed"
        )));
    }
    let workload: KeyWorkload = a
        .workload
        .parse()
        .and_then(|w: KeyWorkload| w.with_processes(a.processes))
        .map_err(CliError::usage)?;
    if let Some(k) = a.keys
        && (k == 0 || k > super::dist::MAX_KEYS)
    {
        return Err(CliError::Usage(format!(
            "--keys '{k}' must be between 1 and {}",
            super::dist::MAX_KEYS
        )));
    }
    if let Some(k) = a.keys {
        let per_key = match a.format {
            KeysFormat::Csv => args::KEYS_CSV_BYTES_PER_KEY,
            KeysFormat::Json => args::KEYS_JSON_BYTES_PER_KEY,
        };
        args::check_key_memory(k, per_key)?;
    }
    // The keys are written when all are generated: an interruption keeps nothing.
    interrupt::watch(Keeps::Nothing);
    let set = workload
        .generate(a.keys.map(|k| k as usize), a.seed.unwrap_or(1))
        .map_err(CliError::usage)?;
    // What the workload says of its keys (a trace's unparseable lines, a missing trailer),
    // as `dist` and `sim` say it: the keys written may not be all the program used.
    if let Some(note) = &set.note {
        eprintln!("futexhash: {note}");
    }
    let records: Vec<KeyRecord> = set.keys.iter().map(record).collect();
    let text = match a.format {
        KeysFormat::Csv => output::to_csv(&records).map_err(|e| e.to_string()),
        KeysFormat::Json => output::to_json(&records).map_err(|e| e.to_string()),
    }
    .map_err(CliError::Runtime)?;
    interrupt::claim_output();
    // An output that refuses the bytes (`/dev/full`) is an unwritable output path: bad
    // input, exit 2, as `OutputArgs::emit` has it for every other subcommand.
    write_atomic(a.output.as_deref(), text.as_bytes()).map_err(|e| {
        CliError::Usage(format!(
            "cannot write output '{}': {e}",
            a.output
                .as_ref()
                .map_or("stdout".into(), |p| p.display().to_string())
        ))
    })
}

//! `futexhash check --algo NAME [--vectors FILE]`: is this hasher fit for `futex_hash()`?
//! One verdict row per check ([`crate::check`]); exit status 0 when nothing fails, 1 when
//! a check fails, 2 on bad input.

use super::interrupt::{self, Keeps};
use super::{CliError, OutputArgs, args};
use crate::check::{CheckOptions, CheckVerdict, check, read_vectors};
use crate::hashers::HashKey;
use crate::render::output::wrap_words;
use crate::render::{Format, MAIL_WIDTH, TextTable, output};
use std::path::PathBuf;

/// Widest line of the table output.
const TABLE_WIDTH: usize = 100;

#[derive(Debug, clap::Args)]
pub(super) struct CheckArgs {
    /// The hasher: a built-in name, so:PATH[:SYMBOL] or c:FILE.c[:SYMBOL], optionally
    /// LABEL=…; a label ending in -addr declares a private-hash candidate (it must then
    /// ignore w0).
    #[arg(long, value_name = "NAME")]
    algo: String,
    /// Reference vectors: CSV rows key,hash (key in text form, hash 0x hex or decimal), or
    /// `hash --format csv` output (key,algo,hash: the rows of this hasher, else of the
    /// file's only one).
    #[arg(long, value_name = "FILE")]
    vectors: Option<PathBuf>,
    /// Keys per workload in the distribution suite (default: each workload's own).
    #[arg(long, value_name = "N", value_parser = args::number)]
    keys: Option<u64>,
    /// Seed of the workloads and the property sample.
    #[arg(long, value_name = "S", value_parser = args::number, default_value = "1")]
    seed: u64,
    /// Key of the keyed built-ins: 32 hex digits, the 16 key bytes in order [default:
    /// 000102030405060708090a0b0c0d0e0f]; refused, if given, when --algo is not keyed.
    // No clap default: whether the user gave one is what decides the refusal.
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key)]
    hash_key: Option<HashKey>,
    #[command(flatten)]
    out: OutputArgs,
}

/// Whether a check failed, for the exit status.
pub(super) fn run(a: CheckArgs) -> Result<bool, CliError> {
    a.out.check()?;
    let vectors = a
        .vectors
        .as_deref()
        .map(read_vectors)
        .transpose()
        .map_err(CliError::usage)?;
    if let Some(k) = a.keys
        && !(64..=super::dist::MAX_KEYS).contains(&k)
    {
        return Err(CliError::Usage(format!(
            "--keys '{k}' must be between 64 and {}",
            super::dist::MAX_KEYS
        )));
    }
    if let Some(k) = a.keys {
        args::check_key_memory(k, args::DIST_BYTES_PER_KEY)?;
    }
    if a.hash_key.is_some() {
        args::no_key_without_keyed(&a.algo, "--hash-key")?;
    }
    let hasher = args::one_algo(&a.algo, a.hash_key.unwrap_or(HashKey::DEFAULT))?;
    let vectors = match vectors {
        Some(f) => f.for_hasher(hasher.name()).map_err(CliError::usage)?,
        None => Vec::new(),
    };
    let opts = CheckOptions {
        vectors,
        keys: a.keys.map(|k| k as usize),
        seed: a.seed,
        skip_speed: false,
    };
    // The verdicts are printed when every check is done: an interruption keeps nothing.
    interrupt::watch(Keeps::Nothing);
    let rows = check(&*hasher, &opts);
    interrupt::claim_output();
    let failed = rows.iter().any(|r| r.verdict == CheckVerdict::Fail);
    let text = match a.out.format {
        Format::Json => output::to_json(&rows).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Csv => output::to_csv(&rows).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Table => {
            let mut t = TextTable::new(["check", "verdict", "detail"]);
            // Within 100 columns: a long detail continues on rows of its own.
            let name_w = rows.iter().map(|r| r.check.len()).max().unwrap_or(5).max(5);
            let detail_w = TABLE_WIDTH.saturating_sub(name_w + 7 + 10).max(20);
            for r in &rows {
                for (i, part) in wrap_words(&r.detail, detail_w).into_iter().enumerate() {
                    t.push(if i == 0 {
                        vec![r.check.clone(), r.verdict.as_str().to_string(), part]
                    } else {
                        vec![String::new(), String::new(), part]
                    });
                }
            }
            // What the `tables` row found, in the closing verdict's words.
            let tables = rows
                .iter()
                .find(|r| r.check == "tables")
                .and_then(|r| r.detail.split(" (").next())
                .map_or(String::new(), |d| format!("; {d}"));
            let count = |v| rows.iter().filter(|r| r.verdict == v).count();
            format!(
                "# futexhash check {}: {} pass, {} warn, {} fail, {} skipped\n{}{}{}\n",
                hasher.name(),
                count(CheckVerdict::Pass),
                count(CheckVerdict::Warn),
                count(CheckVerdict::Fail),
                count(CheckVerdict::Skip),
                t.render_within(MAIL_WIDTH, 1),
                if failed {
                    "verdict: UNFIT for futex_hash() (a check failed)"
                } else {
                    "verdict: fit for futex_hash() (no check failed)"
                },
                tables
            )
        }
    };
    a.out.emit(&text)?;
    Ok(failed)
}

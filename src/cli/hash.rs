//! `futexhash hash --algo NAME [--hash-key HEX32] KEY...`: one hash per key.

use super::{CliError, OutputArgs, args};
use crate::hashers::{HashKey, KeyHasher};
use crate::key::FutexKey;
use crate::render::{Format, output};
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub(super) struct HashArgs {
    /// Hasher name (see `futexhash list`), e.g. jhash2 or jhash2-addr.
    #[arg(long, value_name = "NAME")]
    algo: String,
    /// Key of the keyed hashers: 32 hex digits, the 16 key bytes in order.
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key, default_value = "000102030405060708090a0b0c0d0e0f")]
    hash_key: HashKey,
    /// Keys: private:MM:UADDR, anon:MM:UADDR, inode:ISEQ:PGOFF:OFFSET (decimal or 0x hex).
    #[arg(value_name = "KEY", required = true)]
    keys: Vec<String>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Serialize)]
struct HashRecord<'a> {
    key: &'a str,
    algo: &'a str,
    hash: u32,
}

pub(super) fn run(a: HashArgs) -> Result<(), CliError> {
    let hasher = args::one_algo(&a.algo, a.hash_key)?;
    let mut records = Vec::with_capacity(a.keys.len());
    for token in &a.keys {
        let key: FutexKey = token
            .parse()
            .map_err(|e| CliError::Usage(format!("bad key '{token}': {e}")))?;
        records.push(HashRecord {
            key: token,
            algo: hasher.name(),
            hash: hasher.hash(&key),
        });
    }
    let text = match a.out.format {
        Format::Table => {
            // The stable form: one `0x%08x` line per key, so scripts can read it directly.
            records
                .iter()
                .map(|r| format!("{:#010x}\n", r.hash))
                .collect()
        }
        Format::Csv => output::to_csv(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    a.out.emit(&text)
}

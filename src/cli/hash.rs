//! `futexhash hash --algo LIST [--buckets N] [--nodes K] [--reduce mask|high] [KEY...]`:
//! the hash of each key under each hasher, and with `--buckets` where the kernel's table
//! puts it.
//!
//! Placement is the global hash's, kernel/futex/core.c `__futex_hash()` as of v6.16 (the
//! per-node tables): `node = (hash >> futex_hashshift) % nr_node_ids` for a key without a
//! node, the key's own node for a FUTEX2_NUMA key, and the bucket `hash & futex_hashmask`
//! inside that node's table, `futex_hashmask + 1` being the buckets of one node's table
//! (`--buckets`). The arithmetic is [`Geometry::locate`], the one the model tables use;
//! with `--reduce high` the bucket is the top bits and the node comes from the bits below
//! them.
//!
//! Keys come from the arguments or, with none, one a line from stdin (blank lines and `#`
//! comments skipped). Every key is read and checked before anything is printed.

use super::interrupt::{self, Keeps};
use super::{CliError, OutputArgs, args};
use crate::hashers::{HashKey, KeyHasher, SharedHasher};
use crate::key::{FutexKey, NO_NODE};
use crate::reduce::Reduce;
use crate::render::{Format, MAIL_WIDTH, TextTable, output};
use crate::table::{Geometry, MAX_NODES};
use serde::Serialize;
use std::io::BufRead;

/// Largest `--buckets`: one node's table of the model tables ([`Geometry::validate`]).
const MAX_HASH_BUCKETS: u64 = 1 << 31;

#[derive(Debug, clap::Args)]
pub(super) struct HashArgs {
    /// Hashers: a comma list of names (see `futexhash list`), `all` (every built-in),
    /// `seed` (the seed thread's eight), so:PATH[:SYMBOL] or c:FILE.c[:SYMBOL].
    #[arg(long, value_name = "LIST")]
    algo: String,
    /// Buckets of the table (per node with --nodes; a power of two): print each key's
    /// bucket as the kernel reduces the hash.
    #[arg(long, value_name = "N", value_parser = args::number)]
    buckets: Option<u64>,
    /// NUMA nodes of the global hash (v6.16+): print each key's node as well.
    #[arg(long, value_name = "K", value_parser = args::number, requires = "buckets")]
    nodes: Option<u64>,
    /// Bucket reduction: mask (hash & (N-1), the kernel's) or high (the top bits).
    #[arg(long, value_enum, default_value_t = ReduceArg::Mask, requires = "buckets")]
    reduce: ReduceArg,
    /// Key of the keyed hashers: 32 hex digits, the 16 key bytes in order [default:
    /// 000102030405060708090a0b0c0d0e0f]; refused, if given, when no hasher of --algo is
    /// keyed.
    // No clap default: whether the user gave one is what decides the refusal.
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key)]
    hash_key: Option<HashKey>,
    /// Keys: private:MM:UADDR, anon:MM:UADDR, inode:ISEQ:PGOFF:OFFSET (decimal or 0x hex),
    /// optionally @NODE for a FUTEX2_NUMA key (below --nodes; @0 without it); none: one a
    /// line from stdin.
    #[arg(value_name = "KEY")]
    keys: Vec<String>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ReduceArg {
    Mask,
    High,
}

#[derive(Serialize)]
struct HashRecord<'a> {
    key: &'a str,
    algo: &'a str,
    hash: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    bucket: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<u64>,
}

/// A key as written, with its optional `@NODE`.
fn parse_key(token: &str, nodes: Option<u64>) -> Result<FutexKey, String> {
    let (text, node) = match token.rsplit_once('@') {
        Some((k, n)) => (k, Some(n)),
        None => (token, None),
    };
    let key: FutexKey = text.parse().map_err(|e| match e {
        // This one names the text already.
        crate::key::KeyError::UnknownForm(_) => format!("bad {e}"),
        e => format!("bad key '{token}': {e}"),
    })?;
    let Some(n) = node else {
        return Ok(key);
    };
    // Without --nodes the table has one node, so only @0 names a node of it: a higher one
    // is refused as with --nodes (the kernel's EINVAL), not silently dropped.
    let limit = nodes.unwrap_or(1);
    match crate::key::parse_number(n) {
        Some(v) if v < limit => Ok(key.with_node(v as i32)),
        _ => Err(format!(
            "bad key '{token}': node '{n}' must be a number below {limit}{}",
            if nodes.is_some() {
                " (--nodes)"
            } else {
                " (one node without --nodes, so only @0; give --buckets N --nodes K for more)"
            }
        )),
    }
}

/// The keys: the arguments, else stdin's lines (blank and `#` lines skipped), every one
/// checked before the first is hashed.
fn read_keys(a: &HashArgs) -> Result<Vec<(String, FutexKey)>, CliError> {
    let mut out = Vec::new();
    if !a.keys.is_empty() {
        for t in &a.keys {
            out.push((t.clone(), parse_key(t, a.nodes).map_err(CliError::Usage)?));
        }
        return Ok(out);
    }
    let stdin = std::io::stdin();
    for (i, line) in stdin.lock().lines().enumerate() {
        let line =
            line.map_err(|e| CliError::Usage(format!("cannot read keys from stdin: {e}")))?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let key = parse_key(t, a.nodes)
            .map_err(|e| CliError::Usage(format!("stdin line {}: {e}", i + 1)))?;
        out.push((t.to_string(), key));
    }
    if out.is_empty() {
        return Err(CliError::Usage(
            "no keys: give <KEY> arguments or one key a line on stdin".into(),
        ));
    }
    Ok(out)
}

/// `--buckets`/`--nodes` as a geometry, checked.
fn geometry(a: &HashArgs) -> Result<Option<Geometry>, CliError> {
    let Some(b) = a.buckets else {
        return Ok(None);
    };
    if !b.is_power_of_two() || b > MAX_HASH_BUCKETS {
        return Err(CliError::Usage(format!(
            "--buckets '{b}' must be a power of two from 1 to {MAX_HASH_BUCKETS} (2^31)"
        )));
    }
    let nodes = a.nodes.unwrap_or(1);
    if nodes == 0 || nodes > MAX_NODES as u64 {
        return Err(CliError::Usage(format!(
            "--nodes '{nodes}' must be between 1 and {MAX_NODES}"
        )));
    }
    Ok(Some(Geometry {
        nodes: nodes as usize,
        per_node: b as usize,
        reduce: match a.reduce {
            ReduceArg::Mask => Reduce::Mask,
            ReduceArg::High => Reduce::High,
        },
        squash: false,
    }))
}

pub(super) fn run(a: HashArgs) -> Result<(), CliError> {
    a.out.check()?;
    let geo = geometry(&a)?;
    if a.hash_key.is_some() {
        args::no_key_without_keyed(&a.algo, "--hash-key")?;
    }
    let key = a.hash_key.unwrap_or(HashKey::DEFAULT);
    let hashers: Vec<SharedHasher> = args::algo_list(&a.algo, key)?;
    // Nothing is printed before every key is read and hashed: an interruption (also one
    // while stdin is still being read) keeps nothing.
    interrupt::watch(Keeps::Nothing);
    let keys = read_keys(&a)?;
    let with_node = a.nodes.is_some();
    let mut records = Vec::with_capacity(keys.len() * hashers.len());
    for (text, key) in &keys {
        for h in &hashers {
            let hash = h.hash(key);
            let placed = geo.map(|g| g.locate(hash, key.node()));
            records.push(HashRecord {
                key: text,
                algo: h.name(),
                hash,
                bucket: placed.map(|(_, b)| b as u64),
                node: placed.filter(|_| with_node).map(|(n, _)| n as u64),
            });
        }
    }
    let text = match a.out.format {
        // The stable form: one `0x%08x` line per key, so scripts can read it directly.
        Format::Table if hashers.len() == 1 && geo.is_none() => records
            .iter()
            .map(|r| format!("{:#010x}\n", r.hash))
            .collect(),
        Format::Table => side_by_side(&hashers, &records, geo.as_ref(), with_node, &keys),
        Format::Csv => output::to_csv(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    interrupt::claim_output();
    a.out.emit(&text)
}

/// Widest table line before the hashers are split over several tables of the same keys.
const TABLE_WIDTH: usize = 100;

/// One row per key, the hashers side by side (hash, then bucket and node when asked); as
/// many hashers in one table as fit in [`TABLE_WIDTH`] columns, the rest in further
/// tables of the same rows.
fn side_by_side(
    hashers: &[SharedHasher],
    records: &[HashRecord],
    geo: Option<&Geometry>,
    with_node: bool,
    keys: &[(String, FutexKey)],
) -> String {
    let table = |from: usize, to: usize| {
        one_table(hashers, records, from, to, geo.is_some(), with_node, keys)
    };
    let mut out = String::new();
    let mut from = 0;
    while from < hashers.len() {
        // At least one hasher per table, however long the keys.
        let mut to = from + 1;
        while to < hashers.len() && width(&table(from, to + 1)) <= TABLE_WIDTH {
            to += 1;
        }
        out.push_str(&table(from, to));
        from = to;
    }
    let head = match geo {
        None => String::new(),
        Some(g) => format!(
            "# {} buckets{}, reduce {}{}\n",
            g.per_node,
            if with_node {
                format!(" per node, {} node(s)", g.nodes)
            } else {
                String::new()
            },
            g.reduce,
            if with_node && keys.iter().any(|(_, k)| k.node() != NO_NODE) {
                "; a key@NODE (FUTEX2_NUMA) is placed on its own node"
            } else {
                ""
            }
        ),
    };
    format!("{head}{out}")
}

fn width(rendered: &str) -> usize {
    rendered
        .lines()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}

/// The table of hashers `from..to`.
fn one_table(
    all: &[SharedHasher],
    records: &[HashRecord],
    from: usize,
    to: usize,
    with_bucket: bool,
    with_node: bool,
    keys: &[(String, FutexKey)],
) -> String {
    let hashers = &all[from..to];
    let geo = with_bucket.then_some(());
    let mut headers = vec!["key".to_string()];
    for h in hashers {
        headers.push(h.name().to_string());
        if geo.is_some() {
            headers.push("bucket".into());
        }
        if with_node {
            headers.push("node".into());
        }
    }
    let mut t = TextTable::new(headers);
    for (row, chunk) in records.chunks(all.len()).enumerate() {
        let mut cells = vec![keys[row].0.clone()];
        for r in &chunk[from..to] {
            cells.push(format!("{:#010x}", r.hash));
            if let Some(b) = r.bucket {
                cells.push(b.to_string());
            }
            if let Some(n) = r.node {
                cells.push(n.to_string());
            }
        }
        t.push(cells);
    }
    t.render_within(MAIL_WIDTH, 1)
}

//! Hashes computed outside futexhash, read back for judging (`futexhash dist --hashes`):
//! a CSV file with the columns `w0,w1,offset,hash` and optionally `algo` (several hashers
//! in one file). Keys are the words of docs/hashers.md §1 (`w0`, `w1` decimal or `0x` hex,
//! `offset` the offset word with its kind bits); a hash is decimal or `0x` hex and must fit
//! in 32 bits. A key listed twice counts once; listed twice with different hashes, the
//! "hash" is not a function and the file is refused.
//!
//! The companion is `futexhash keys`, which writes a workload's keys in exactly this
//! column layout (plus `kind`), so a hash written in any language can be judged on the same
//! keys as the built-ins.

use crate::key::{FutexKey, KEY_BYTES, KeyError, NO_NODE, parse_number};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// The hashes of one hasher, in first-appearance order of their keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashColumn {
    /// The `algo` column's value, or the file's stem.
    pub algo: String,
    /// One hash per distinct key.
    pub hashes: Vec<u32>,
}

/// Why a hashes file cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HashesError(pub String);

impl fmt::Display for HashesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for HashesError {}

/// Reads a hashes file: one [`HashColumn`] per distinct `algo` value (or one, labelled
/// with the file's stem, without that column), in order of first appearance.
pub fn read_hashes(path: &Path) -> Result<Vec<HashColumn>, HashesError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| HashesError(format!("cannot read hashes file '{}': {e}", path.display())))?;
    let stem = path
        .file_stem()
        .map_or("hashes".to_string(), |s| s.to_string_lossy().to_string());
    parse_hashes(&text, &stem).map_err(|e| HashesError(format!("'{}': {e}", path.display())))
}

/// [`read_hashes`] on the file's text; `default_algo` labels a file without `algo`.
pub fn parse_hashes(text: &str, default_algo: &str) -> Result<Vec<HashColumn>, HashesError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| HashesError(format!("unreadable header: {e}")))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let (Some(iw0), Some(iw1), Some(ioff), Some(ih)) =
        (col("w0"), col("w1"), col("offset"), col("hash"))
    else {
        return Err(HashesError(format!(
            "header '{}' lacks a column; needed: w0,w1,offset,hash (and optionally algo)",
            headers.iter().collect::<Vec<_>>().join(",")
        )));
    };
    let ialgo = col("algo");
    let mut columns: Vec<HashColumn> = Vec::new();
    let mut seen: Vec<HashMap<(u64, u64, u32), u32>> = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let row = i + 2; // 1-based, after the header line
        let rec = rec.map_err(|e| HashesError(format!("row {row}: {e}")))?;
        let field = |idx: usize, name: &str| -> Result<u64, HashesError> {
            let v = rec.get(idx).unwrap_or("");
            parse_number(v).ok_or_else(|| {
                HashesError(format!(
                    "row {row}: {name} '{v}' is not a decimal or 0x-hex number"
                ))
            })
        };
        let (w0, w1) = (field(iw0, "w0")?, field(iw1, "w1")?);
        let offset = u32::try_from(field(ioff, "offset")?).map_err(|_| {
            HashesError(format!(
                "row {row}: offset '{}' exceeds 32 bits",
                &rec[ioff]
            ))
        })?;
        let hash = u32::try_from(field(ih, "hash")?)
            .map_err(|_| HashesError(format!("row {row}: hash '{}' exceeds 32 bits", &rec[ih])))?;
        key_from_words(w0, w1, offset)
            .map_err(|e| HashesError(format!("row {row}: key {w0:#x},{w1:#x},{offset}: {e}")))?;
        let algo = ialgo.map_or(default_algo, |a| rec.get(a).unwrap_or(default_algo));
        let c = match columns.iter().position(|c| c.algo == algo) {
            Some(c) => c,
            None => {
                columns.push(HashColumn {
                    algo: algo.to_string(),
                    hashes: Vec::new(),
                });
                seen.push(HashMap::new());
                columns.len() - 1
            }
        };
        match seen[c].get(&(w0, w1, offset)) {
            Some(&h) if h != hash => {
                return Err(HashesError(format!(
                    "row {row}: key {w0:#x},{w1:#x},{offset} of '{algo}' was hashed to {h:#010x} before and {hash:#010x} here (a hash must be a function of the key)"
                )));
            }
            Some(_) => {}
            None => {
                seen[c].insert((w0, w1, offset), hash);
                columns[c].hashes.push(hash);
            }
        }
    }
    if columns.is_empty() {
        return Err(HashesError("no rows after the header".to_string()));
    }
    Ok(columns)
}

/// The key with these words (and no node), validated as the kernel image is.
pub fn key_from_words(w0: u64, w1: u64, offset: u32) -> Result<FutexKey, KeyError> {
    let mut b = [0u8; KEY_BYTES];
    b[..8].copy_from_slice(&w0.to_le_bytes());
    b[8..16].copy_from_slice(&w1.to_le_bytes());
    b[16..20].copy_from_slice(&offset.to_le_bytes());
    b[20..24].copy_from_slice(&NO_NODE.to_le_bytes());
    FutexKey::from_bytes(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_by_algo_with_duplicates_counted_once() {
        let text = "w0,w1,offset,hash,algo\n\
                    0xffff888012345600,0x7f0000001000,16,0x9aa839a9,a\n\
                    0xffff888012345600,0x7f0000001000,16,0x9aa839a9,a\n\
                    1,0,17,7,b\n\
                    0xffff888012345600,0x7f0000002000,16,12,a\n";
        let c = parse_hashes(text, "x").unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].algo, "a");
        assert_eq!(c[0].hashes, [0x9aa839a9, 12]);
        assert_eq!(c[1].hashes, [7]);
    }

    #[test]
    fn bad_rows_are_named() {
        let e = parse_hashes("w0,w1,offset,hash\n1,0,17,0x1ffffffff\n", "x").unwrap_err();
        assert!(e.0.contains("row 2") && e.0.contains("0x1ffffffff"), "{e}");
        let e = parse_hashes("w0,w1,offset,hash\n1,0,17,zz\n", "x").unwrap_err();
        assert!(e.0.contains("'zz'"), "{e}");
        let e = parse_hashes("w0,w1,hash\n1,0,5\n", "x").unwrap_err();
        assert!(e.0.contains("w0,w1,offset,hash"), "{e}");
        let e = parse_hashes("w0,w1,offset,hash\n1,0,17,1\n1,0,17,2\n", "x").unwrap_err();
        assert!(e.0.contains("a hash must be a function"), "{e}");
        // Kind bits 3 do not exist.
        let e = parse_hashes("w0,w1,offset,hash\n1,0,19,1\n", "x").unwrap_err();
        assert!(e.0.contains("row 2"), "{e}");
    }
}

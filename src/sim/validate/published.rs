//! The published figures of the seed threads, as transcribed in `data/published/` and
//! here, and the readers of their CSV files: the slots tables (`buckets,COL…`, or the
//! CSV of `futexhash bench`), seed 003's threads table, and the runs behind the
//! 240-thread table's means, each checked as it is read.

use crate::sim::SimError;
use std::path::Path;

/// Largest table the simulator accepts (as `dist` and `bench`): 2^24 buckets.
pub const MAX_SIM_BUCKETS: u64 = 1 << 24;

/// A published table: `buckets` then one column per configuration.
#[derive(Clone, Debug)]
pub struct PublishedTable {
    /// Column headers after `buckets`.
    pub columns: Vec<String>,
    /// `(buckets, one rate per column)`.
    pub rows: Vec<(u64, Vec<f64>)>,
}

/// Reads a `buckets,COL…` CSV of the `data/published/` form, or the CSV that
/// `futexhash bench --format csv` writes (its `buckets` and `ops_per_sec` columns).
pub fn read_published(path: &Path) -> Result<PublishedTable, SimError> {
    parse_published(path, &read_table_text(path)?)
}

/// Largest table file read, bytes (16 MiB). A measured table has a row per table size and
/// configuration: the seed's are under 1 kB, and a `bench --format csv` sweep of every
/// size, hasher and thread count of `futexhash list` is well under 1 MiB. Parsing takes
/// several times the file's size in memory, so a file far beyond any table (a log, a
/// capture given by mistake) is refused instead of read.
pub const MAX_TABLE_BYTES: u64 = 16 << 20;

/// The text of the table file at `path`: a regular file larger than [`MAX_TABLE_BYTES`]
/// is refused before any of it is read, anything else (a pipe, a device) read no further
/// than that bound.
pub fn read_table_text(path: &Path) -> Result<String, SimError> {
    use std::io::Read;
    let read_error = |source| SimError::Read {
        path: path.to_path_buf(),
        source,
    };
    let limit = format!(
        "the {} MiB a measured table can need (a row per table size and configuration)",
        MAX_TABLE_BYTES >> 20
    );
    let file = std::fs::File::open(path).map_err(read_error)?;
    if let Ok(m) = file.metadata()
        && m.is_file()
        && m.len() > MAX_TABLE_BYTES
    {
        return Err(SimError::Data(format!(
            "'{}' is {} bytes ({}), more than {limit}; refused before reading it",
            path.display(),
            m.len(),
            crate::limits::human(m.len())
        )));
    }
    let mut text = String::new();
    file.take(MAX_TABLE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read_error)?;
    if text.len() as u64 > MAX_TABLE_BYTES {
        return Err(SimError::Data(format!(
            "'{}' holds more than {limit}; stopped reading it there",
            path.display()
        )));
    }
    Ok(text)
}

/// [`read_published`] of a file's `text`, already read from `path` (named in errors).
pub fn parse_published(path: &Path, text: &str) -> Result<PublishedTable, SimError> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines
        .next()
        .ok_or_else(|| SimError::Data(format!("'{}' is empty", path.display())))?;
    let names: Vec<String> = header.split(',').map(|s| s.trim().to_string()).collect();
    // Which CSV columns hold the buckets and the rates.
    let (bucket_col, rate_cols): (usize, Vec<usize>) = if names[0] == "buckets" {
        (0, (1..names.len()).collect())
    } else {
        match (
            names.iter().position(|n| n == "buckets"),
            names.iter().position(|n| n == "ops_per_sec"),
        ) {
            (Some(b), Some(r)) => (b, vec![r]),
            _ => {
                return Err(SimError::Data(format!(
                    "'{}': expected a 'buckets' first column, or the 'buckets' and \
                     'ops_per_sec' columns of futexhash bench --format csv",
                    path.display()
                )));
            }
        }
    };
    let columns: Vec<String> = rate_cols.iter().map(|&c| names[c].clone()).collect();
    if columns.is_empty() {
        return Err(SimError::Data(format!(
            "'{}' has no rate column",
            path.display()
        )));
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let bad = || {
            SimError::Data(format!(
                "'{}' data row {i}: cannot read '{line}'",
                path.display()
            ))
        };
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != names.len() {
            return Err(bad());
        }
        let buckets: u64 = cells[bucket_col].parse().map_err(|_| bad())?;
        let rates: Vec<f64> = rate_cols
            .iter()
            .map(|&c| cells[c].parse::<f64>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        if !(buckets == 0 || buckets.is_power_of_two()) || buckets > MAX_SIM_BUCKETS {
            return Err(SimError::Data(format!(
                "'{}' data row {i}: buckets {buckets} must be 0 (global hash) or a power of two up to 2^24",
                path.display()
            )));
        }
        if !rates.iter().all(|&r| plausible_rate(r)) {
            return Err(SimError::Data(format!(
                "'{}' data row {i}: rates must be operations per second from {MIN_PUBLISHED_RATE} to {MAX_PUBLISHED_RATE:e} in '{line}'",
                path.display()
            )));
        }
        rows.push((buckets, rates));
    }
    if rows.is_empty() {
        return Err(SimError::Data(format!(
            "'{}' has no data rows",
            path.display()
        )));
    }
    Ok(PublishedTable { columns, rows })
}

/// The hasher a published column header stands for (the seed's names; `ops/sec` columns
/// were measured with the kernel's jhash2 over the full key).
pub fn hasher_for_column(header: &str) -> Option<&'static str> {
    Some(match header {
        "ops/sec" | "jhash2 (regular)" | "jhash2" => "jhash2",
        "jhash2 (addr+offs)" => "jhash2-addr",
        "xxhash" => "xxhash",
        "hash_long" => "hash_long",
        "crc32c" => "crc32c",
        "crc32" => "crc32",
        "siphash" => "siphash",
        "hsiphash" => "hsiphash",
        _ => return None,
    })
}

/// The slowest and fastest rate a published table may state, ops/sec. Slower rates need
/// costs of milliseconds per operation, which no fit searches in reasonable time and
/// which overflow the simulator's clock at hundreds of threads (the seeds' slowest figure
/// is 9,158 ops/sec).
pub const MIN_PUBLISHED_RATE: f64 = 100.0;

/// See [`MIN_PUBLISHED_RATE`].
pub const MAX_PUBLISHED_RATE: f64 = 1e12;

/// A rate a published table may state: within [`MIN_PUBLISHED_RATE`] and
/// [`MAX_PUBLISHED_RATE`] (so never NaN or infinite).
pub(super) fn plausible_rate(r: f64) -> bool {
    (MIN_PUBLISHED_RATE..=MAX_PUBLISHED_RATE).contains(&r)
}

/// Seed 000's 240-thread slots table.
pub const TABLE_240: &str = "buckets-240threads-256cpu.csv";

/// The runs behind each mean of [`TABLE_240`] (`buckets,run1,run2,run3`), from the raw
/// output posted with it (seed 000, 2024-10-31): what the published table itself varies by.
pub const TABLE_240_RUNS: &str = "buckets-240threads-256cpu-runs.csv";

/// Seed 000's algorithm table.
pub const TABLE_ALGOS: &str = "algos-240threads-256cpu.csv";

/// Seed 000's node-pinned table.
pub const TABLE_110: &str = "buckets-110threads-node1-256cpu.csv";

/// Seed 003's table (file in `data/published/`).
pub const TABLE_2013: &str = "seed003-2013-80core-threads.csv";

/// Seed 002's pair, as its validation rows are named.
pub const TABLE_NUMA: &str = "seed002-futex_numa-ivbep";

/// Name of seed 000's pinning figures in validation output.
pub const TABLE_PINNING: &str = "seed000-110threads-pinning";

/// Seed 000's 110-thread runs (Sebastian Andrzej Siewior, "Re: [RFC v2 PATCH 0/4] futex:
/// Add support task local hash maps", 2024-10-31; mean of 5 runs each), ops/sec per
/// thread: `(node mask, global hash, private hash of 65536 slots)`. Mask 1 = the CPUs of
/// node 0, 2 = node 1, 3 = both nodes (the first 110 CPUs: 64 on node 0, 46 on node 1,
/// no two on one core). Node 1's private figure and the both-nodes private figure set
/// the template's SMT slowdown ([`seed_box_template`]), so those two cells count as
/// fitted.
///
/// [`seed_box_template`]: super::seed_box_template
pub const PINNING_110: [(u64, f64, f64); 3] = [
    (1, 2_278_572.2, 2_534_827.4),
    (2, 2_229_838.6, 2_437_498.8),
    (3, 2_542_602.4, 2_535_749.8),
];

/// A `threads,COL…` table (seed 003's).
pub fn read_threads_table(path: &Path) -> Result<PublishedTable, SimError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| SimError::Data(format!("'{}' is empty", path.display())))?
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    if let Some(twice) = header
        .iter()
        .enumerate()
        .find(|(i, h)| header[..*i].contains(h))
        .map(|(_, h)| h)
    {
        return Err(SimError::Data(format!(
            "'{}': column '{twice}' appears twice",
            path.display()
        )));
    }
    if header.first().map(String::as_str) != Some("threads") || header.len() < 2 {
        return Err(SimError::Data(format!(
            "'{}': expected a 'threads' first column",
            path.display()
        )));
    }
    let mut rows = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let bad = || SimError::Data(format!("'{}': cannot read '{line}'", path.display()));
        if cells.len() != header.len() {
            return Err(bad());
        }
        let t: u64 = cells[0].parse().map_err(|_| bad())?;
        let r: Vec<f64> = cells[1..]
            .iter()
            .map(|c| c.parse::<f64>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        if t == 0 || t > 16384 || !r.iter().all(|&x| plausible_rate(x)) {
            return Err(SimError::Data(format!(
                "{} (threads 1 to 16384; rates from {MIN_PUBLISHED_RATE} to {MAX_PUBLISHED_RATE:e} ops/sec)",
                bad()
            )));
        }
        if rows.iter().any(|(seen, _)| *seen == t) {
            return Err(SimError::Data(format!(
                "'{}': {t} threads appear twice (one row per thread count)",
                path.display()
            )));
        }
        rows.push((t, r));
    }
    Ok(PublishedTable {
        columns: header[1..].to_vec(),
        rows,
    })
}

/// Seed 002's `futex_numa` loop counts (Peter Zijlstra, 2023-09-22): forced together
/// (`-N0` on both nodes) 16,154,935 and 16,202,472; separated 48,584,991 and 48,680,560.
pub const FUTEX_NUMA_FORCED: [f64; 2] = [16_154_935.0, 16_202_472.0];

/// See [`FUTEX_NUMA_FORCED`].
pub const FUTEX_NUMA_SEPARATED: [f64; 2] = [48_584_991.0, 48_680_560.0];

/// Reads [`TABLE_240_RUNS`] from `data_dir`, checked against [`TABLE_240`] there: one
/// row per published cell and no other, each averaging to the cell's mean as published
/// (to its two decimals), so a mistyped run cannot pass unnoticed. `Ok(None)` when the
/// directory has no runs file (a user's own data).
pub fn read_runs(data_dir: &Path) -> Result<Option<PublishedTable>, SimError> {
    let path = data_dir.join(TABLE_240_RUNS);
    if !path.exists() {
        return Ok(None);
    }
    let runs = read_published(&path)?;
    let table = read_published(&data_dir.join(TABLE_240))?;
    for (i, (buckets, _)) in runs.rows.iter().enumerate() {
        if runs.rows[..i].iter().any(|(b, _)| b == buckets) {
            return Err(SimError::Data(format!(
                "{TABLE_240_RUNS}: two rows for {buckets} slots"
            )));
        }
        if !table.rows.iter().any(|(b, _)| b == buckets) {
            return Err(SimError::Data(format!(
                "{TABLE_240_RUNS}: runs for {buckets} slots, which {TABLE_240} does not have"
            )));
        }
    }
    for (buckets, means) in &table.rows {
        let Some((_, v)) = runs.rows.iter().find(|(b, _)| b == buckets) else {
            return Err(SimError::Data(format!(
                "{TABLE_240_RUNS}: no runs for {buckets} slots"
            )));
        };
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        // The table gives each mean to two decimals (truncated or rounded); perf's runs are
        // whole numbers, so a mistyped one moves the mean by at least 1/3.
        if (mean - means[0]).abs() > 0.0101 {
            return Err(SimError::Data(format!(
                "{TABLE_240_RUNS}: the runs at {buckets} slots average {mean:.2}, not the published {:.2}",
                means[0]
            )));
        }
    }
    Ok(Some(runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/published")
    }

    #[test]
    fn published_tables_parse() {
        let t = read_published(&data().join("algos-240threads-256cpu.csv")).unwrap();
        assert_eq!(t.columns.len(), 8);
        assert_eq!(t.rows.len(), 17);
        assert_eq!(t.rows[0].0, 2);
        assert_eq!(t.rows[0].1[0], 9172.4);
        for c in &t.columns {
            assert!(hasher_for_column(c).is_some(), "{c}");
        }
        let b = read_published(&data().join("buckets-240threads-256cpu.csv")).unwrap();
        assert_eq!(b.rows[0], (0, vec![1868129.33]));
        let dir = std::env::temp_dir().join(format!("fh-bcsv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("bench.csv");
        std::fs::write(
            &p,
            "backend,algo,buckets,ops_per_sec\nkernel,kernel,2,100.5\nkernel,kernel,0,200\n",
        )
        .unwrap();
        let k = read_published(&p).unwrap();
        assert_eq!(k.columns, ["ops_per_sec"]);
        assert_eq!(k.rows, vec![(2, vec![100.5]), (0, vec![200.0])]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_tables_are_errors() {
        let dir = std::env::temp_dir().join(format!("fh-pub-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in [
            ("a.csv", "threads,x\n1,2\n"),
            ("b.csv", "buckets,x\n3,2\n"),
            ("c.csv", "buckets,x\n2,abc\n"),
            ("d.csv", ""),
            ("e.csv", "buckets,x\n"),
            ("f.csv", "buckets,x\n2,1,3\n"),
        ] {
            std::fs::write(dir.join(name), text).unwrap();
            assert!(read_published(&dir.join(name)).is_err(), "{name}");
        }
        // Threads tables: one row per thread count.
        std::fs::write(
            dir.join("t.csv"),
            "threads,a,b\n64,100,200\n32,300,400\n64,500,600\n",
        )
        .unwrap();
        let e = read_threads_table(&dir.join("t.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("64 threads appear twice"), "{e}");
        // Rates no fit could reach, and a column twice.
        std::fs::write(dir.join("s.csv"), "threads,a\n64,99\n").unwrap();
        let e = read_threads_table(&dir.join("s.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rates from 100"), "{e}");
        std::fs::write(dir.join("u.csv"), "threads,a,a\n64,100,200\n").unwrap();
        let e = read_threads_table(&dir.join("u.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("column 'a' appears twice"), "{e}");
        std::fs::write(dir.join("v.csv"), "buckets,ops/sec\n0,0.5\n").unwrap();
        assert!(read_published(&dir.join("v.csv")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

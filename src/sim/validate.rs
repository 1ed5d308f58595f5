//! Validation of the simulator against the seed threads' published tables
//! (`data/published/`, transcribed from `shared/data-seed/`): calibrate a 256-CPU, 2-node
//! profile on two rows of `buckets-240threads-256cpu.csv`, then predict every row of that
//! table, every column of `algos-240threads-256cpu.csv` and the node-pinned
//! `buckets-110threads-node1-256cpu.csv`, none of which (but the two rows) it has seen.

use super::calibrate::{Observation, Scenario, calibrate, global_hash_size};
use super::profile::MachineProfile;
use super::{SimLength, SimOp, simulate};
use crate::hashers::{Builtin, HashKey};
use crate::key::FutexKey;
use crate::workload::{KeyWorkload, PERF_FUTEXES};
use serde::Serialize;
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
pub fn read_published(path: &Path) -> Result<PublishedTable, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines
        .next()
        .ok_or_else(|| format!("'{}' is empty", path.display()))?;
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
                return Err(format!(
                    "'{}': expected a 'buckets' first column, or the 'buckets' and \
                     'ops_per_sec' columns of futexhash bench --format csv",
                    path.display()
                ));
            }
        }
    };
    let columns: Vec<String> = rate_cols.iter().map(|&c| names[c].clone()).collect();
    if columns.is_empty() {
        return Err(format!("'{}' has no rate column", path.display()));
    }
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        let bad = || format!("'{}' data row {i}: cannot read '{line}'", path.display());
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
            return Err(format!(
                "'{}' data row {i}: buckets {buckets} must be 0 (global hash) or a power of two up to 2^24",
                path.display()
            ));
        }
        if rates.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
            return Err(format!(
                "'{}' data row {i}: rates must be positive numbers in '{line}'",
                path.display()
            ));
        }
        rows.push((buckets, rates));
    }
    if rows.is_empty() {
        return Err(format!("'{}' has no data rows", path.display()));
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

/// `perf bench futex hash` keys split per thread: `threads` arrays of `futexes` words
/// (at most [`PERF_FUTEXES`], the layout of the `perf` workload).
pub fn perf_keys_per_thread(
    threads: usize,
    futexes: usize,
    seed: u64,
) -> Result<Vec<Vec<FutexKey>>, String> {
    if futexes == 0 || futexes > PERF_FUTEXES {
        return Err(format!(
            "futexes per thread must be 1..={PERF_FUTEXES} for the simulated perf layout, got {futexes}"
        ));
    }
    let keys = KeyWorkload::Perf
        .generate(Some(threads * PERF_FUTEXES), seed)
        .map_err(|e| e.to_string())?
        .keys;
    Ok(keys
        .chunks(PERF_FUTEXES)
        .map(|c| c[..futexes].to_vec())
        .collect())
}

/// One predicted row.
#[derive(Clone, Debug, Serialize)]
pub struct ValidationRow {
    /// Published table file name.
    pub table: String,
    /// Hasher of the column.
    pub algo: String,
    /// Private slots, 0 = global hash.
    pub buckets: u64,
    /// The published mean per-thread ops/sec.
    pub published: f64,
    /// The simulator's prediction.
    pub predicted: f64,
    /// predicted / published.
    pub ratio: f64,
    /// Whether this row was one of the two calibration rows.
    pub calibration_row: bool,
}

/// Median ns per hash of the eight seed hashers, geometric mean over the `perf` and `aslr`
/// workloads, measured with `cargo bench --bench hashers` on the 2-CPU development machine
/// (docs/benches.md). Used as the hash cost of every profile until one is measured on the
/// target machine.
pub const SEED_HASH_NS: [(&str, f64); 8] = [
    ("jhash2", 5.34),
    ("jhash2-addr", 2.58),
    ("xxhash", 5.21),
    ("hash_long", 0.70),
    ("crc32c", 10.39),
    ("crc32", 8.93),
    ("siphash", 15.43),
    ("hsiphash", 8.71),
];

/// The 256-CPU template: what calibration does not fit. Hold time and line migration are
/// typical figures for a two-socket x86 server (a bucket lock held for a compare and an
/// unlock, an L2-to-L2 line transfer); the remote/local hand-off ratio of 4 reflects a
/// cross-socket transfer; hash costs are [`SEED_HASH_NS`]. See `docs/sim.md` for how
/// sensitive predictions are to these.
pub fn seed_box_template() -> MachineProfile {
    MachineProfile {
        name: "seed thread 256-CPU 2-node box (template)".into(),
        cpus: 256,
        nodes: 2,
        outside_ns: 400.0,
        hold_ns: 100.0,
        handoff_local_ns: 100.0,
        handoff_remote_ns: 400.0,
        line_miss_ns: 50.0,
        hash_ns: SEED_HASH_NS
            .iter()
            .map(|&(n, ns)| (n.to_string(), ns))
            .collect(),
    }
}

/// Calibrates the 256-CPU profile on rows `rows` of `buckets-240threads-256cpu.csv`.
pub fn calibrate_seed_box(
    data_dir: &Path,
    template: &MachineProfile,
    rows: [usize; 2],
    len: SimLength,
) -> Result<MachineProfile, String> {
    let t = read_published(&data_dir.join("buckets-240threads-256cpu.csv"))?;
    let pick = |i: usize| -> Result<Observation, String> {
        let (b, r) = t
            .rows
            .get(i)
            .ok_or_else(|| format!("row {i} does not exist (the table has {})", t.rows.len()))?;
        Ok(Observation {
            buckets: *b,
            ops_per_sec: r[0],
        })
    };
    let sc = scenario(240, (0..template.cpus).collect(), template.cpus)?;
    let h = Builtin::by_name("jhash2", HashKey::DEFAULT)
        .expect("registry")
        .shared();
    let mut p = calibrate(template, &sc, &h, [pick(rows[0])?, pick(rows[1])?], len)?;
    p.name = format!(
        "seed thread 256-CPU 2-node box, calibrated on rows {} and {} of buckets-240threads-256cpu.csv",
        rows[0], rows[1]
    );
    Ok(p)
}

fn scenario(threads: usize, cpus: Vec<u32>, all_cpus: u32) -> Result<Scenario, String> {
    Ok(Scenario {
        keys_per_thread: perf_keys_per_thread(threads, PERF_FUTEXES, 1)?,
        cpus,
        global_buckets: global_hash_size(all_cpus),
        op: SimOp::WaitFail,
    })
}

/// Predicts the three published tables with `profile`; `calibration` names the rows of
/// the 240-thread buckets table that were used to fit it.
pub fn predict_published(
    data_dir: &Path,
    profile: &MachineProfile,
    calibration: [usize; 2],
    len: SimLength,
) -> Result<Vec<ValidationRow>, String> {
    let mut out = Vec::new();
    let node1: Vec<u32> = profile.node_cpus(profile.nodes.saturating_sub(1));
    let all: Vec<u32> = (0..profile.cpus).collect();
    let cases = [
        ("buckets-240threads-256cpu.csv", 240, all.clone()),
        ("algos-240threads-256cpu.csv", 240, all),
        ("buckets-110threads-node1-256cpu.csv", 110, node1),
    ];
    for (file, threads, cpus) in cases {
        let table = read_published(&data_dir.join(file))?;
        let sc = scenario(threads, cpus, profile.cpus)?;
        for (c, header) in table.columns.iter().enumerate() {
            let name = hasher_for_column(header)
                .ok_or_else(|| format!("{file}: unknown column '{header}'"))?;
            let h = Builtin::by_name(name, HashKey::DEFAULT)
                .expect("registry")
                .shared();
            for (i, (buckets, rates)) in table.rows.iter().enumerate() {
                let predicted = simulate(
                    profile,
                    &sc.workload(&h, *buckets),
                    profile.hash_cost(name),
                    len,
                )
                .ops_per_sec;
                out.push(ValidationRow {
                    table: file.to_string(),
                    algo: name.to_string(),
                    buckets: *buckets,
                    published: rates[c],
                    predicted,
                    ratio: predicted / rates[c],
                    calibration_row: file == "buckets-240threads-256cpu.csv"
                        && calibration.contains(&i),
                });
            }
        }
    }
    Ok(out)
}

/// Root-mean-square of `ln(ratio)` over rows: 0.10 means typically about 10 % off.
pub fn rms_log_error<'a>(rows: impl IntoIterator<Item = &'a ValidationRow>) -> f64 {
    let v: Vec<f64> = rows.into_iter().map(|r| r.ratio.ln().powi(2)).collect();
    if v.is_empty() {
        return 0.0;
    }
    (v.iter().sum::<f64>() / v.len() as f64).sqrt()
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
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn perf_keys_are_per_thread_arrays() {
        let k = perf_keys_per_thread(3, 16, 1).unwrap();
        assert_eq!(k.len(), 3);
        assert!(k.iter().all(|t| t.len() == 16));
        assert_eq!(k[0][1].address() - k[0][0].address(), 4);
        assert_eq!(
            k[1][0].address() - k[0][0].address(),
            crate::workload::PERF_CHUNK
        );
        assert!(perf_keys_per_thread(3, 2000, 1).is_err());
    }
}

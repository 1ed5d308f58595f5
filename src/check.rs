//! "Is this hasher fit for `futex_hash()`?" — the checks `futexhash check` runs on any
//! [`KeyHasher`], one verdict per check:
//!
//! - **vectors**: the user's reference vectors (`key,hash` rows, or `hash --format csv`'s
//!   `key,algo,hash`), when given;
//! - **properties**: the suite every built-in is tested with ([`properties`]): determinism,
//!   the NUMA node ignored, no dead input bit in the scope's words and seed, and for the
//!   addr scope (the private hash) no dependence on `w0`;
//! - **distribution**: every built-in workload under both reductions, over table sizes
//!   16..65536, judged as `futexhash dist` judges (exact random-function expectations,
//!   Bonferroni-corrected p-values; docs/dist.md). An addr-scope hasher is judged on the
//!   distinct `(w1, offset)` pairs of a workload, the keys one process's private table
//!   sees;
//! - **speed**: nanoseconds per hash against the kernel's `jhash2`, measured side by side
//!   in one run (batches alternate, medians compared);
//! - **tables**: which of the kernel's tables the hasher is fit for. The private table
//!   (`__futex_hash_private()`, one process's keys): the vectors, properties, speed and the
//!   distribution suite (all but `fork`) do not fail. The global table
//!   (`__futex_hash()`, every process's keys): that, the full scope (the hash covers `w0`,
//!   the `mm`), and the `fork` workload hashed with every process's `mm` in the key does
//!   not fail under the kernel's mask. An address-only hash fails the last by
//!   construction: every forked process's copy of a lock lands in one bucket.
//!
//! The speed thresholds: a failing `FUTEX_WAIT` costs about 200–400 ns of which jhash2 is
//! 1–3 %; a hash 4× slower still costs under a tenth of the syscall (pass), 16× slower
//! costs about a third of it (warn above 4×, fail above 16×).

use crate::hashers::properties::{self, BitRule};
use crate::hashers::{Builtin, HashKey, KeyHasher, Scope};
use crate::key::FutexKey;
use crate::stats::{DistRecord, ExpectationCache, Reduce, Verdict, assign_verdicts, sweep_hashes};
use crate::workload::KeyWorkload;
use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::time::Instant;

/// Table sizes of the distribution suite.
pub const CHECK_BUCKETS: [u64; 13] = [
    16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];
/// Slower than jhash2 by more than this: warn.
pub const SPEED_WARN_RATIO: f64 = 4.0;
/// Slower than jhash2 by more than this: fail.
pub const SPEED_FAIL_RATIO: f64 = 16.0;

/// One reference vector: a key and the hash it must have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vector {
    /// The key as written (text form).
    pub text: String,
    /// The key.
    pub key: FutexKey,
    /// The expected hash.
    pub hash: u32,
}

/// A vectors file that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorsError(pub String);

impl fmt::Display for VectorsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for VectorsError {}

/// A vectors file as read: its rows, each with the hasher that `hash --format csv` named
/// in its `algo` column (none in the `key,hash` form). [`VectorsFile::for_hasher`] picks the
/// rows a hasher is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorsFile {
    /// Where the rows came from, for messages (`'PATH'`, or empty for text).
    source: String,
    rows: Vec<(Option<String>, Vector)>,
}

impl VectorsFile {
    /// The rows to check hasher `name` against: in the `key,hash` form all of them; in the
    /// `key,algo,hash` form the rows of `name`, else those of the file's only hasher. A
    /// file of several hashers none of which is `name` is refused: which one was meant is
    /// not known.
    pub fn for_hasher(&self, name: &str) -> Result<Vec<Vector>, VectorsError> {
        let mut algos: Vec<&str> = Vec::new();
        for a in self.rows.iter().filter_map(|(a, _)| a.as_deref()) {
            if !algos.contains(&a) {
                algos.push(a);
            }
        }
        let pick = |want: Option<&str>| {
            self.rows
                .iter()
                .filter(|(a, _)| want.is_none() || a.as_deref() == want)
                .map(|(_, v)| v.clone())
                .collect::<Vec<_>>()
        };
        match algos.as_slice() {
            [] | [_] => Ok(pick(None)),
            _ if algos.contains(&name) => Ok(pick(Some(name))),
            _ => Err(VectorsError(format!(
                "{}holds vectors of {} hashers ({}) and none of '{name}': keep one hasher's \
                 rows, or name one of those",
                self.source,
                algos.len(),
                algos.join(", ")
            ))),
        }
    }
}

/// Reads a vectors file: CSV rows `key,hash` (key in text form, hash decimal or `0x` hex),
/// or `key,algo,hash` as `futexhash hash --format csv` writes them; an optional header
/// (`key,hash` or `key,algo,hash`), `#` comments. Without a header the first row's number
/// of fields says which form it is.
pub fn read_vectors(path: &Path) -> Result<VectorsFile, VectorsError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        VectorsError(format!(
            "cannot read vectors file '{}': {e}",
            path.display()
        ))
    })?;
    let source = format!("'{}': ", path.display());
    let mut file = parse_vectors(&text).map_err(|e| VectorsError(format!("{source}{e}")))?;
    file.source = source;
    Ok(file)
}

/// [`read_vectors`] on the file's text.
pub fn parse_vectors(text: &str) -> Result<VectorsFile, VectorsError> {
    let mut rows = Vec::new();
    // Whether rows carry an `algo` column; known from the header or the first row.
    let mut with_algo: Option<bool> = None;
    for (i, line) in text.lines().enumerate() {
        let row = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if rows.is_empty() && with_algo.is_none() {
            let header: Vec<&str> = line.split(',').map(str::trim).collect();
            if header == ["key", "hash"] || header == ["key", "algo", "hash"] {
                with_algo = Some(header.len() == 3);
                continue;
            }
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let algo_col = *with_algo.get_or_insert(fields.len() == 3);
        let (k, algo, h) = match (algo_col, fields.as_slice()) {
            (false, [k, h]) => (*k, None, *h),
            (true, [k, a, h]) => (*k, Some(a.to_string()), *h),
            _ => {
                return Err(VectorsError(format!(
                    "line {row}: '{line}' is not '{}'",
                    if algo_col {
                        "key,algo,hash"
                    } else {
                        "key,hash"
                    }
                )));
            }
        };
        let key: FutexKey = k
            .parse()
            .map_err(|e| VectorsError(format!("line {row}: bad key '{k}': {e}")))?;
        let hash = crate::key::parse_number(h)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| {
                VectorsError(format!(
                    "line {row}: hash '{h}' is not a 32-bit decimal or 0x-hex number"
                ))
            })?;
        rows.push((
            algo,
            Vector {
                text: k.to_string(),
                key,
                hash,
            },
        ));
    }
    if rows.is_empty() {
        return Err(VectorsError("no vectors in the file".to_string()));
    }
    Ok(VectorsFile {
        source: String::new(),
        rows,
    })
}

/// A check's outcome. `Skip`: nothing to check (no vectors given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckVerdict {
    /// Holds.
    Pass,
    /// Unusual but not disqualifying.
    Warn,
    /// Unfit for `futex_hash()`.
    Fail,
    /// Not run.
    Skip,
}

impl CheckVerdict {
    /// `pass`, `warn`, `fail`, `skip`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckVerdict::Pass => "pass",
            CheckVerdict::Warn => "warn",
            CheckVerdict::Fail => "fail",
            CheckVerdict::Skip => "skip",
        }
    }
}

/// One row of `futexhash check`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CheckRow {
    /// The hasher.
    pub algo: String,
    /// `vectors`, `property:NAME`, `dist:WORKLOAD:REDUCE`, `speed`.
    pub check: String,
    /// The outcome.
    pub verdict: CheckVerdict,
    /// What was measured, in one sentence.
    pub detail: String,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Reference vectors (none: the vectors row is `skip`).
    pub vectors: Vec<Vector>,
    /// Keys per workload of the distribution suite (the workloads' defaults if `None`).
    pub keys: Option<usize>,
    /// Seed of the workloads and the property sample.
    pub seed: u64,
    /// Skip the speed measurement (it takes about a second).
    pub skip_speed: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            vectors: Vec::new(),
            keys: None,
            seed: 1,
            skip_speed: false,
        }
    }
}

/// The built-in workloads of the distribution suite.
pub fn suite_workloads() -> Vec<KeyWorkload> {
    vec![
        KeyWorkload::Perf,
        KeyWorkload::Aslr,
        KeyWorkload::Pages,
        KeyWorkload::Stride(64),
        KeyWorkload::Inode,
        KeyWorkload::Sparse,
        KeyWorkload::Random,
        KeyWorkload::Fork(crate::workload::FORK_PROCESSES),
    ]
}

/// Runs every check on `h`.
pub fn check<H: KeyHasher + ?Sized>(h: &H, opts: &CheckOptions) -> Vec<CheckRow> {
    let algo = h.name().to_string();
    let row = |check: String, verdict, detail: String| CheckRow {
        algo: algo.clone(),
        check,
        verdict,
        detail,
    };
    let mut out = vec![vectors_row(h, &opts.vectors)];
    let sample = properties::sample_keys(256, opts.seed);
    for p in properties::check_properties(h, None, &sample, BitRule::NoDeadBit) {
        let v = if p.passed {
            CheckVerdict::Pass
        } else {
            CheckVerdict::Fail
        };
        out.push(row(format!("property:{}", p.name), v, p.detail));
    }
    out.extend(distribution_rows(h, opts));
    out.push(if opts.skip_speed {
        row("speed".into(), CheckVerdict::Skip, "not measured".into())
    } else {
        speed_row(h, opts.seed)
    });
    let tables = tables_row(h, opts, &out);
    out.push(tables);
    out
}

/// The tables a hasher is fit for, from the rows already judged and a sweep of the fork
/// workload on full keys (see the module docs).
fn tables_row<H: KeyHasher + ?Sized>(h: &H, opts: &CheckOptions, rows: &[CheckRow]) -> CheckRow {
    let fork = KeyWorkload::Fork(crate::workload::FORK_PROCESSES);
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| r.verdict == CheckVerdict::Fail && !r.check.starts_with("dist:fork:"))
        .map(|r| r.check.as_str())
        .collect();
    let private = failed.is_empty();
    // The global table sees every process's keys, `mm` included, whatever the scope.
    let keys = fork
        .generate(opts.keys, opts.seed)
        .map(|k| k.keys)
        .unwrap_or_else(|e| unreachable!("built-in workload {fork} failed: {e}"));
    let mut hashes = vec![0u32; keys.len()];
    h.hash_many(&keys, &mut hashes);
    let mut recs = sweep_hashes(
        h.name(),
        &fork.to_string(),
        &hashes,
        &CHECK_BUCKETS,
        &[Reduce::Mask],
        &mut ExpectationCache::default(),
    )
    .expect("CHECK_BUCKETS are powers of two up to 2^32");
    assign_verdicts(&mut recs);
    let fork_fail = recs
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .max_by(|a, b| a.log2_p.total_cmp(&b.log2_p));
    let full = h.scope() == Scope::Full;
    let global = private && full && fork_fail.is_none();
    let why_not_global = match (full, fork_fail) {
        (_, Some(r)) => format!(
            "global: fork keys fail, {} at {} buckets",
            failing_statistic(r),
            r.buckets
        ),
        (false, None) => "global: scope addr leaves out the mm".to_string(),
        (true, None) => format!("global: {} fails", failed.join(", ")),
    };
    let (verdict, detail) = match (global, private) {
        (true, _) => (
            CheckVerdict::Pass,
            "fit for: global and private tables".to_string(),
        ),
        // An address-only hash claims the private table only: fit for what it claims.
        (false, true) => (
            if full {
                CheckVerdict::Fail
            } else {
                CheckVerdict::Pass
            },
            format!("fit for: private table only ({why_not_global})"),
        ),
        (false, false) => (
            CheckVerdict::Fail,
            format!("fit for: neither table ({} fails)", failed.join(", ")),
        ),
    };
    CheckRow {
        algo: h.name().to_string(),
        check: "tables".into(),
        verdict,
        detail,
    }
}

fn vectors_row<H: KeyHasher + ?Sized>(h: &H, vectors: &[Vector]) -> CheckRow {
    let mut row = CheckRow {
        algo: h.name().to_string(),
        check: "vectors".into(),
        verdict: CheckVerdict::Skip,
        detail: "no reference vectors given (--vectors FILE)".into(),
    };
    if vectors.is_empty() {
        return row;
    }
    let wrong: Vec<(&Vector, u32)> = vectors
        .iter()
        .map(|v| (v, h.hash(&v.key)))
        .filter(|(v, got)| *got != v.hash)
        .collect();
    row.verdict = if wrong.is_empty() {
        CheckVerdict::Pass
    } else {
        CheckVerdict::Fail
    };
    row.detail = match wrong.first() {
        None => format!("{} of {} vectors match", vectors.len(), vectors.len()),
        Some((v, got)) => format!(
            "{} of {} vectors differ; first: {} gives {got:#010x}, expected {:#010x}",
            wrong.len(),
            vectors.len(),
            v.text,
            v.hash
        ),
    };
    row
}

/// The verdict's test with the smallest p-value, with what it observed against the
/// random-function expectation.
fn failing_statistic(r: &DistRecord) -> String {
    let chi2_p = if r.p_value.is_nan() { 1.0 } else { r.p_value };
    if r.p_collisions <= r.p_max_load && r.p_collisions <= chi2_p {
        format!(
            "collisions {} vs {:.0} expected",
            r.collisions, r.collisions_expected
        )
    } else if r.p_max_load <= chi2_p {
        format!(
            "max load {} vs {:.1} expected",
            r.max_load, r.max_load_expected
        )
    } else {
        format!("chi-squared {:.0} vs {} expected", r.chi2, r.buckets - 1)
    }
}

/// Keys of `w` as the hasher's table sees them: all of them for the full scope, the
/// distinct `(w1, offset)` pairs (first of each) for the addr scope.
fn scope_keys(keys: Vec<FutexKey>, scope: Scope) -> Vec<FutexKey> {
    match scope {
        Scope::Full => keys,
        Scope::Addr => {
            let mut seen = HashSet::new();
            keys.into_iter()
                .filter(|k| seen.insert((k.w1(), k.offset())))
                .collect()
        }
    }
}

fn distribution_rows<H: KeyHasher + ?Sized>(h: &H, opts: &CheckOptions) -> Vec<CheckRow> {
    let mut cache = ExpectationCache::default();
    let mut groups: Vec<(String, Vec<DistRecord>)> = Vec::new();
    for w in suite_workloads() {
        let keys = match w.generate(opts.keys, opts.seed) {
            Ok(k) => scope_keys(k.keys, h.scope()),
            Err(e) => unreachable!("built-in workload {w} failed: {e}"),
        };
        let mut hashes = vec![0u32; keys.len()];
        h.hash_many(&keys, &mut hashes);
        for reduce in [Reduce::Mask, Reduce::High] {
            let recs = sweep_hashes(
                h.name(),
                &w.to_string(),
                &hashes,
                &CHECK_BUCKETS,
                &[reduce],
                &mut cache,
            )
            .expect("CHECK_BUCKETS are powers of two up to 2^32");
            groups.push((format!("dist:{w}:{}", reduce.as_str()), recs));
        }
    }
    // One Bonferroni correction over every record of the suite, as `dist` does per run.
    let mut all: Vec<DistRecord> = groups.iter().flat_map(|(_, r)| r.clone()).collect();
    assign_verdicts(&mut all);
    let mut rows = Vec::new();
    let mut at = 0;
    for (check, recs) in &groups {
        let judged = &all[at..at + recs.len()];
        at += recs.len();
        let worst = judged
            .iter()
            .max_by(|a, b| a.log2_p.total_cmp(&b.log2_p))
            .expect("non-empty sweep");
        let verdict = match worst.verdict {
            Verdict::Pass => CheckVerdict::Pass,
            Verdict::Warn => CheckVerdict::Warn,
            Verdict::Fail => CheckVerdict::Fail,
        };
        let detail = if verdict == CheckVerdict::Pass {
            format!(
                "{} keys, 16..65536 buckets: every size as random (collisions at 65536 buckets {:.2}x expected)",
                worst.keys,
                judged.last().map_or(1.0, DistRecord::collisions_ratio)
            )
        } else {
            let bad: Vec<&DistRecord> = judged
                .iter()
                .filter(|r| r.verdict != Verdict::Pass)
                .collect();
            format!(
                "{} keys: {} of {} sizes {} (from {} buckets); worst at {} buckets: {} (p = 2^-{:.0})",
                worst.keys,
                bad.len(),
                judged.len(),
                verdict.as_str(),
                bad[0].buckets,
                worst.buckets,
                failing_statistic(worst),
                worst.log2_p
            )
        };
        rows.push(CheckRow {
            algo: h.name().to_string(),
            check: check.clone(),
            verdict,
            detail,
        });
    }
    rows
}

/// Median nanoseconds per hash of `h` and of jhash2 on the same perf keys, measured in
/// alternating batches.
pub fn speed_vs_jhash2<H: KeyHasher + ?Sized>(h: &H, seed: u64) -> (f64, f64) {
    let keys = KeyWorkload::Perf
        .generate(Some(4096), seed)
        .expect("perf workload")
        .keys;
    let jhash2 = Builtin::by_name("jhash2", HashKey::DEFAULT).expect("registry");
    let mut out = vec![0u32; keys.len()];
    let mut time = |f: &dyn Fn(&mut [u32])| {
        let t = Instant::now();
        for _ in 0..8 {
            f(&mut out);
            std::hint::black_box(&out);
        }
        t.elapsed().as_secs_f64() * 1e9 / (8 * keys.len()) as f64
    };
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..25 {
        mine.push(time(&|o| h.hash_many(std::hint::black_box(&keys), o)));
        theirs.push(time(&|o| jhash2.hash_many(std::hint::black_box(&keys), o)));
    }
    (median(&mut mine), median(&mut theirs))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn speed_row<H: KeyHasher + ?Sized>(h: &H, seed: u64) -> CheckRow {
    let (mine, jhash2) = speed_vs_jhash2(h, seed);
    let ratio = mine / jhash2.max(1e-3);
    let verdict = if ratio > SPEED_FAIL_RATIO {
        CheckVerdict::Fail
    } else if ratio > SPEED_WARN_RATIO {
        CheckVerdict::Warn
    } else {
        CheckVerdict::Pass
    };
    CheckRow {
        algo: h.name().to_string(),
        check: "speed".into(),
        verdict,
        detail: format!(
            "{mine:.2} ns/hash vs jhash2 {jhash2:.2} ns/hash ({ratio:.2}x; warn above {SPEED_WARN_RATIO}x, fail above {SPEED_FAIL_RATIO}x)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_parse_and_name_bad_rows() {
        let v = parse_vectors("key,hash\n# c\ninode:1:0:0x10,0xe5878c77\nprivate:1:0x1000,5\n")
            .unwrap()
            .for_hasher("any")
            .unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].hash, 0xe5878c77);
        let e = parse_vectors("inode:1:0:0x10\n").unwrap_err();
        assert!(
            e.0.contains("line 1") && e.0.contains("inode:1:0:0x10"),
            "{e}"
        );
        let e = parse_vectors("nonsense:1,5\n").unwrap_err();
        assert!(e.0.contains("'nonsense:1'"), "{e}");
        let e = parse_vectors("inode:1:0:0x10,0x100000000\n").unwrap_err();
        assert!(e.0.contains("'0x100000000'"), "{e}");
    }

    /// `hash --format csv` output (`key,algo,hash`, decimal hashes) is a vectors file too:
    /// the checked hasher's rows, else the only hasher's; several others are refused.
    #[test]
    fn hash_csv_output_is_read_as_vectors() {
        let text = "key,algo,hash\n\
                    private:1:0x1000,jhash2,1081321040\n\
                    private:1:0x1000,xxhash,2300193051\n\
                    inode:1:0:0x10,jhash2,3850865783\n\
                    inode:1:0:0x10,xxhash,1323672882\n";
        let f = parse_vectors(text).unwrap();
        let v = f.for_hasher("xxhash").unwrap();
        assert_eq!(
            v.iter().map(|v| v.hash).collect::<Vec<_>>(),
            [2300193051, 1323672882]
        );
        let j = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let v = f.for_hasher("jhash2").unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(vectors_row(&j, &v).verdict, CheckVerdict::Pass);
        let e = f.for_hasher("mine").unwrap_err();
        assert!(
            e.0.contains("'mine'") && e.0.contains("jhash2, xxhash"),
            "{e}"
        );
        // One hasher in the file: its rows are the reference whatever the checked name.
        let one: String = text
            .lines()
            .filter(|l| !l.contains("xxhash"))
            .collect::<Vec<_>>()
            .join("\n");
        let v = parse_vectors(&one).unwrap().for_hasher("mine").unwrap();
        assert_eq!(vectors_row(&j, &v).verdict, CheckVerdict::Pass);
        // Without a header the field count says the form; a row of the other form is named.
        assert_eq!(
            parse_vectors("inode:1:0:0x10,jhash2,3850865783\n")
                .unwrap()
                .for_hasher("x")
                .unwrap()[0]
                .hash,
            3850865783
        );
        let e = parse_vectors("key,algo,hash\ninode:1:0:0x10,5\n").unwrap_err();
        assert!(
            e.0.contains("line 2") && e.0.contains("key,algo,hash"),
            "{e}"
        );
    }

    #[test]
    fn the_spec_vectors_pass_for_jhash2_and_fail_for_xxhash() {
        // docs/hashers.md §5 (from lookup3 run on the kernel's key layout).
        let text = "private:0xffff888012345600:0x7f0000001010,0x9aa839a9\n\
                    anon:0xffff888100000000:0x7f0000000010,0xdb6df4c9\n\
                    inode:1:0:0x10,0xe5878c77\n";
        let v = parse_vectors(text).unwrap().for_hasher("jhash2").unwrap();
        let j = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        assert_eq!(vectors_row(&j, &v).verdict, CheckVerdict::Pass);
        let x = Builtin::by_name("xxhash", HashKey::DEFAULT).unwrap();
        let r = vectors_row(&x, &v);
        assert_eq!(r.verdict, CheckVerdict::Fail);
        assert!(r.detail.starts_with("3 of 3"), "{}", r.detail);
    }

    /// The 2020 "futex: Unbreak futex hashing" bug: w0 is left out of the global hash.
    struct SkipsW0;
    impl KeyHasher for SkipsW0 {
        fn name(&self) -> &str {
            "skips-w0"
        }
        fn scope(&self) -> Scope {
            Scope::Full
        }
        fn hash(&self, key: &FutexKey) -> u32 {
            crate::hashers::jhash2(&key.addr_words(), key.offset())
        }
    }

    fn tables(h: &dyn KeyHasher) -> CheckRow {
        let opts = CheckOptions {
            keys: Some(1 << 14),
            skip_speed: true,
            ..CheckOptions::default()
        };
        check(h, &opts)
            .into_iter()
            .find(|r| r.check == "tables")
            .expect("a tables row")
    }

    #[test]
    fn tables_jhash2_both_jhash2_addr_private_only_the_w0_bug_neither() {
        let j = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let r = tables(&j);
        assert_eq!(
            (r.verdict, r.detail.as_str()),
            (CheckVerdict::Pass, "fit for: global and private tables")
        );
        // 64 forked processes x 256 locks (2^14 keys): the address-only hash has 256
        // distinct inputs, each in all 64 processes, so its max load is a multiple of 64
        // at every size; a random function's is near 2^14 / 65536 + a few.
        let a = Builtin::by_name("jhash2-addr", HashKey::DEFAULT).unwrap();
        let r = tables(&a);
        assert_eq!(r.verdict, CheckVerdict::Pass, "{r:?}");
        assert!(
            r.detail
                .starts_with("fit for: private table only (global: fork keys fail"),
            "{}",
            r.detail
        );
        let r = tables(&SkipsW0);
        assert_eq!(r.verdict, CheckVerdict::Fail);
        assert!(r.detail.starts_with("fit for: neither"), "{}", r.detail);
        assert!(r.detail.contains("property:w0-bits"), "{}", r.detail);
    }

    #[test]
    fn jhash2_passes_and_the_w0_bug_fails_properties_and_inode() {
        let opts = CheckOptions {
            keys: Some(1 << 14),
            skip_speed: true,
            ..CheckOptions::default()
        };
        let j = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        let rows = check(&j, &opts);
        let bad: Vec<_> = rows
            .iter()
            .filter(|r| r.verdict == CheckVerdict::Fail)
            .collect();
        assert!(bad.is_empty(), "{bad:?}");
        let rows = check(&SkipsW0, &opts);
        let verdict = |c: &str| rows.iter().find(|r| r.check == c).unwrap().verdict;
        assert_eq!(verdict("property:w0-bits"), CheckVerdict::Fail);
        assert_eq!(verdict("property:w1-bits"), CheckVerdict::Pass);
        // The inode workload has 128 (pgoff, offset) pairs per file: without w0 every
        // file's futexes collide with every other file's.
        assert_eq!(verdict("dist:inode:mask"), CheckVerdict::Fail);
        assert_eq!(verdict("dist:inode:high"), CheckVerdict::Fail);
    }
}

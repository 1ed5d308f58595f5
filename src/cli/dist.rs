//! `futexhash dist`: distribution and collision quality of hashers on a workload's keys
//! for every power-of-two table size (statistics in [`crate::stats`],
//! workloads in [`crate::workload`]; user docs in `docs/dist.md`).

use super::interrupt::{self, Keeps};
use super::{CliError, OutputArgs, args};
use crate::hashers::{HashKey, KeyHasher};
use crate::render::plot::{Line, Plot, plot_svg};
use crate::render::{Format, MAIL_WIDTH, TextTable, fmt_grouped, output};
use crate::stats::weighted::{WeightedNull, sweep_weighted};
use crate::stats::{
    DistRecord, ExpectationCache, FAIL_LOG2, Reduce, TESTS_PER_RECORD, Verdict, WARN_LOG2,
    assign_verdicts, diagnostics, sweep, sweep_hashes,
};
use crate::workload::KeyWorkload;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Largest table size accepted (the histogram of the largest table is held in memory).
pub const MAX_BUCKETS: u64 = 1 << 24;
/// Most keys accepted.
pub const MAX_KEYS: u64 = 1 << 27;

/// `--reduce`: the spec's two reductions, or both in one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum ReduceArg {
    Mask,
    High,
    Both,
}

/// `--weight`: what one unit of the distribution is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum WeightArg {
    /// Each distinct key once.
    Keys,
    /// Each operation of a trace (call's uaddr, uaddr2, each futex_waitv entry) once.
    Ops,
}

/// `--stat`: the statistic shown in table cells and plotted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Stat {
    /// Keys minus occupied buckets (with the random-function expectation as last column).
    Collisions,
    /// Collisions over their expectation (1.00 = as random; > 1 worse).
    #[value(alias = "collisions_ratio")]
    CollisionsRatio,
    /// Empty buckets.
    Empty,
    /// Largest bucket load.
    #[value(alias = "max_load")]
    MaxLoad,
    /// Pearson's chi-squared against uniform (expectation m − 1).
    Chi2,
    /// Upper-tail p-value of chi-squared.
    P,
    /// Lower-tail p-value of chi-squared (small = more even than random).
    #[value(alias = "p_even")]
    PEven,
    /// −log2 of the Bonferroni-corrected p-value behind the verdict.
    Log2p,
    /// pass/warn/fail.
    Verdict,
}

#[derive(Debug, clap::Args)]
pub(super) struct DistArgs {
    /// Hashers: a comma list, `seed` (the seed thread's eight) or `all`.
    #[arg(long, value_name = "LIST|all", default_value = "seed")]
    algo: String,
    /// Table sizes: powers of two as a list (16,1024) or a range (2..131072).
    #[arg(long, value_name = "LIST|RANGE", default_value = "2..131072")]
    buckets: String,
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
    /// Seed of the workload generator.
    #[arg(long, value_name = "S", value_parser = args::number, default_value = "1")]
    seed: u64,
    /// Bucket reduction: mask (hash & (m-1), the kernel), high (top bits), or both.
    #[arg(long, value_enum, default_value_t = ReduceArg::Mask)]
    reduce: ReduceArg,
    /// Count each distinct key once (keys) or each operation of a trace:FILE (ops: a key
    /// named by N operations weighs N; see docs/dist.md).
    #[arg(long, value_enum, default_value_t = WeightArg::Keys)]
    weight: WeightArg,
    /// Statistic in the table cells and the plot.
    #[arg(long, value_enum, default_value_t = Stat::Collisions)]
    stat: Stat,
    /// Also draw the statistic against buckets (log2 axis), one line per algorithm.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Judge precomputed hashes instead of hashing: a CSV with columns w0,w1,offset,hash
    /// (and optionally algo, several hashers in one file; else the file's stem labels it),
    /// e.g. `futexhash keys` output hashed by another program. Duplicate keys count once.
    #[arg(long, value_name = "FILE.csv", conflicts_with_all = ["algo", "workload", "keys", "seed", "diagnostics"])]
    hashes: Option<PathBuf>,
    /// Print the per-hasher bit diagnostics (differential and avalanche) instead. They
    /// judge the 32-bit hash of random private keys, with no table size: `--plot`,
    /// `--stat`, `--buckets`, `--reduce`, `--workload`, `--keys`, `--processes` and
    /// `--weight` are refused with them (before any work), whatever the value given.
    #[arg(long, conflicts_with = "plot")]
    diagnostics: bool,
    /// Random keys sampled by --diagnostics (refused without it).
    #[arg(long, value_name = "N", value_parser = args::number, default_value = "4096")]
    samples: u64,
    /// Key of the keyed hashers: 32 hex digits, the 16 key bytes in order (refused, if
    /// given, when no hasher of --algo is keyed).
    #[arg(long, value_name = "HEX32", value_parser = args::hash_key, default_value = "000102030405060708090a0b0c0d0e0f")]
    hash_key: HashKey,
    #[command(flatten)]
    out: OutputArgs,
    /// The flags given on the command line ([`args::Given`], set by [`super::run`]).
    #[arg(skip)]
    pub(super) given: args::Given,
}

/// The flags `--diagnostics` has no use for, by clap id and as spelled: the diagnostics
/// judge the 32-bit hash value of random private keys, per hasher, so no table size,
/// reduction, statistic, workload or weight enters them.
const NOT_FOR_DIAGNOSTICS: [(&str, &str); 7] = [
    ("stat", "--stat"),
    ("buckets", "--buckets"),
    ("reduce", "--reduce"),
    ("workload", "--workload"),
    ("keys", "--keys"),
    ("processes", "--processes"),
    ("weight", "--weight"),
];

/// Refuses, before any work, a flag given that the run asked for will not read: those of
/// [`NOT_FOR_DIAGNOSTICS`] with `--diagnostics`, `--samples` without it, `--hash-key`
/// with no keyed hasher in `--algo` (or with `--hashes`), `--seed` with a trace (its keys
/// are read, not drawn), and `--processes` with `fork:N` (which gives the count already;
/// one of the two would be dropped).
fn check_unused(a: &DistArgs) -> Result<(), CliError> {
    if a.diagnostics {
        if let Some((_, flag)) = NOT_FOR_DIAGNOSTICS.iter().find(|(id, _)| a.given.has(id)) {
            return Err(CliError::Usage(format!(
                "{flag} does not apply to --diagnostics (the bit diagnostics judge each \
                 hasher's 32-bit value on --samples random private keys: no table size, \
                 reduction, statistic or workload); drop {flag}, or --diagnostics for the \
                 distribution table"
            )));
        }
    } else if a.given.has("samples") {
        return Err(CliError::Usage(format!(
            "--samples '{}' only applies to --diagnostics (the random keys of the bit \
             diagnostics); add --diagnostics or drop --samples",
            a.samples
        )));
    }
    if a.given.has("hash_key") {
        if a.hashes.is_some() {
            return Err(CliError::usage(
                "--hash-key keys the hashers of --algo; --hashes judges hashes computed \
                 elsewhere, with no hasher here: drop --hash-key",
            ));
        }
        args::no_key_without_keyed(&a.algo, "--hash-key")?;
    }
    let workload = a.workload.trim();
    if a.given.has("seed") && !a.diagnostics && workload.starts_with("trace:") {
        return Err(CliError::Usage(format!(
            "--seed '{}' draws the keys of a generated workload; --workload {workload} reads \
             its keys from the trace: drop --seed",
            a.seed
        )));
    }
    if let (Some(n), Some(count)) = (a.processes, workload.strip_prefix("fork:")) {
        return Err(CliError::Usage(format!(
            "--processes '{n}' repeats the process count --workload {workload} gives ({count}); \
             give it once: --workload fork --processes {n} or --workload fork:{count}"
        )));
    }
    Ok(())
}

/// Refuses, before any work, a `--buckets` list that names a table size twice (one line
/// naming it), as `sim --kernel` does; a repeated `--algo` hasher is refused by
/// [`args::algo_list`].
fn check_repeats(a: &DistArgs, buckets: &[u64]) -> Result<(), CliError> {
    for (i, b) in buckets.iter().enumerate() {
        if buckets[..i].contains(b) {
            return Err(CliError::Usage(format!(
                "--buckets: bucket count {b} is listed twice in '{}'",
                a.buckets
            )));
        }
    }
    Ok(())
}

fn run_err(e: impl std::fmt::Display) -> CliError {
    CliError::Runtime(e.to_string())
}

pub(super) fn run(a: DistArgs) -> Result<(), CliError> {
    check_unused(&a)?;
    a.out.check()?;
    if let Some(p) = &a.plot {
        args::check_output_path(p, "plot")?;
    }
    let buckets = args::pow2_list_max(&a.buckets, "bucket count", false, MAX_BUCKETS)?;
    check_repeats(&a, &buckets)?;
    let mut buckets_sorted = buckets.clone();
    buckets_sorted.sort_unstable();
    buckets_sorted.dedup();
    let reduces: Vec<Reduce> = match a.reduce {
        ReduceArg::Mask => vec![Reduce::Mask],
        ReduceArg::High => vec![Reduce::High],
        ReduceArg::Both => vec![Reduce::Mask, Reduce::High],
    };
    if let Some(path) = &a.hashes {
        if a.weight == WeightArg::Ops {
            return Err(CliError::Usage(
                "--weight ops needs --workload trace:FILE, not --hashes (a hashes file has no operations)"
                    .into(),
            ));
        }
        return run_hashes(&a, path, &buckets_sorted, &reduces);
    }
    let hashers = args::algo_list(&a.algo, a.hash_key)?;
    if a.diagnostics {
        return run_diagnostics(&a, &hashers);
    }
    let workload: KeyWorkload = a
        .workload
        .parse()
        .and_then(|w: KeyWorkload| w.with_processes(a.processes))
        .map_err(CliError::usage)?;
    if let Some(k) = a.keys
        && (k == 0 || k > MAX_KEYS)
    {
        return Err(CliError::Usage(format!(
            "--keys '{k}' must be between 1 and {MAX_KEYS}"
        )));
    }
    if let Some(k) = a.keys {
        args::check_key_memory(k, args::DIST_BYTES_PER_KEY)?;
    }
    // Everything is written when every hasher is done: an interruption keeps nothing.
    interrupt::watch(Keeps::Nothing);
    let keyset = workload
        .generate(a.keys.map(|k| k as usize), a.seed)
        .map_err(CliError::usage)?;
    let weights = match (a.weight, &keyset.weights) {
        (WeightArg::Keys, _) => None,
        (WeightArg::Ops, Some(w)) => Some(w.as_slice()),
        (WeightArg::Ops, None) => {
            return Err(CliError::Usage(format!(
                "--weight ops needs a trace workload (trace:FILE); '{}' has one operation per key",
                a.workload
            )));
        }
    };
    if let Some(note) = &keyset.note {
        eprintln!("futexhash: {note}");
    }
    let wname = workload.to_string();
    let keys = &keyset.keys;

    let progress = (std::io::stderr().is_terminal() && keys.len() * hashers.len() >= 4_000_000)
        .then(|| {
            let pb = indicatif::ProgressBar::new(hashers.len() as u64);
            pb.set_style(
                indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                    .expect("static template"),
            );
            // So that the signal watcher clears it before its line.
            super::progress::register(&pb);
            pb
        });
    let mut cache = ExpectationCache::default();
    let mut null = WeightedNull::default();
    let mut records = Vec::new();
    for h in &hashers {
        if let Some(pb) = &progress {
            pb.set_message(h.name().to_string());
        }
        match weights {
            None => records.extend(
                sweep(h, &wname, keys, &buckets_sorted, &reduces, &mut cache)
                    .map_err(CliError::usage)?,
            ),
            Some(w) => records.extend(sweep_weighted(
                h,
                &wname,
                keys,
                w,
                &buckets_sorted,
                &reduces,
                &mut cache,
                &mut null,
            )),
        }
        if let Some(pb) = &progress {
            pb.inc(1);
        }
    }
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    let names: Vec<String> = hashers.iter().map(|h| h.name().to_string()).collect();
    // A trace's keys are read, not drawn: no seed to state.
    let source = match workload {
        KeyWorkload::Trace(_) => format!("workload {wname}"),
        _ => format!("workload {wname}, seed {}", a.seed),
    };
    finish(
        &a,
        &source,
        keys.len(),
        records,
        &names,
        &buckets_sorted,
        &reduces,
    )
}

/// Verdicts, the plot and the output, for hashed and precomputed records alike.
fn finish(
    a: &DistArgs,
    source: &str,
    n: usize,
    mut records: Vec<DistRecord>,
    names: &[String],
    buckets: &[u64],
    reduces: &[Reduce],
) -> Result<(), CliError> {
    assign_verdicts(&mut records);
    interrupt::claim_output();
    if let Some(path) = &a.plot {
        plot(a, path, &records, reduces)?;
    }
    let text = match a.out.format {
        Format::Json => output::to_json(&records).map_err(run_err)?,
        Format::Csv => output::to_csv(&records).map_err(run_err)?,
        Format::Table => table(a, source, n, &records, names, buckets, reduces),
    };
    a.out.emit(&text)
}

/// `--hashes FILE`: the records of precomputed hashes.
fn run_hashes(
    a: &DistArgs,
    path: &std::path::Path,
    buckets: &[u64],
    reduces: &[Reduce],
) -> Result<(), CliError> {
    let columns = crate::workload::hashes::read_hashes(path).map_err(CliError::usage)?;
    interrupt::watch(Keeps::Nothing);
    let wname = format!("hashes:{}", path.display());
    let mut cache = ExpectationCache::default();
    let mut records = Vec::new();
    for c in &columns {
        records.extend(
            sweep_hashes(&c.algo, &wname, &c.hashes, buckets, reduces, &mut cache)
                .map_err(CliError::usage)?,
        );
    }
    let names: Vec<String> = columns.iter().map(|c| c.algo.clone()).collect();
    let n = columns.iter().map(|c| c.hashes.len()).max().unwrap_or(0);
    finish(a, &wname, n, records, &names, buckets, reduces)
}

fn stat_value(stat: Stat, r: &DistRecord) -> f64 {
    match stat {
        Stat::Collisions => r.collisions as f64,
        Stat::CollisionsRatio => r.collisions_ratio(),
        Stat::Empty => r.empty as f64,
        Stat::MaxLoad => r.max_load as f64,
        Stat::Chi2 => r.chi2,
        Stat::P => r.p_value,
        Stat::PEven => r.p_value_even,
        Stat::Log2p => r.log2_p,
        Stat::Verdict => match r.verdict {
            Verdict::Pass => 0.0,
            Verdict::Warn => 1.0,
            Verdict::Fail => 2.0,
        },
    }
}

fn stat_cell(stat: Stat, r: &DistRecord) -> String {
    match stat {
        Stat::Collisions | Stat::Empty | Stat::MaxLoad => fmt_grouped(stat_value(stat, r), 0),
        Stat::CollisionsRatio => fmt_grouped(r.collisions_ratio(), 3),
        Stat::Chi2 => fmt_grouped(r.chi2, 1),
        Stat::P | Stat::PEven => format!("{:.3e}", stat_value(stat, r)),
        Stat::Log2p => format!("{:.1}", r.log2_p),
        Stat::Verdict => r.verdict.as_str().to_string(),
    }
}

/// The random-function expectation of the statistic, for the last column.
fn expected_cell(stat: Stat, r: &DistRecord) -> Option<String> {
    Some(match stat {
        Stat::Collisions => fmt_grouped(r.collisions_expected, 1),
        Stat::Empty => fmt_grouped(r.empty_expected, 1),
        Stat::MaxLoad => fmt_grouped(r.max_load_expected, 2),
        Stat::CollisionsRatio => "1.000".to_string(),
        Stat::Chi2 => fmt_grouped((r.buckets - 1) as f64, 1),
        _ => return None,
    })
}

fn stat_name(stat: Stat) -> &'static str {
    match stat {
        Stat::Collisions => "collisions (keys - occupied buckets)",
        Stat::CollisionsRatio => "collisions / expected",
        Stat::Empty => "empty buckets",
        Stat::MaxLoad => "max load",
        Stat::Chi2 => "chi-squared",
        Stat::P => "chi-squared p-value (upper tail)",
        Stat::PEven => "chi-squared p-value (lower tail: more even than random)",
        Stat::Log2p => "-log2 corrected p-value",
        Stat::Verdict => "verdict",
    }
}

fn table(
    a: &DistArgs,
    source: &str,
    n: usize,
    records: &[DistRecord],
    names: &[String],
    buckets: &[u64],
    reduces: &[Reduce],
) -> String {
    let head = match a.weight {
        WeightArg::Keys => format!(
            "# {source}: {} distinct keys; cells: {}",
            fmt_grouped(n as f64, 0),
            stat_name(a.stat)
        ),
        WeightArg::Ops => format!(
            "# {source}: {} distinct keys weighted by {} operations (--weight ops: loads count \
             operations); cells: {}",
            fmt_grouped(n as f64, 0),
            fmt_grouped(records.first().map_or(0, |r| r.keys) as f64, 0),
            stat_name(a.stat)
        ),
    };
    let mut out = wrap_indented(&head, MAIL_WIDTH, "#   ");
    out.push('\n');
    let with_expected = records
        .first()
        .and_then(|r| expected_cell(a.stat, r))
        .is_some();
    let find = |algo: &str, b: u64, red: Reduce| {
        records
            .iter()
            .find(|r| r.algo == algo && r.buckets == b && r.reduce == red)
    };
    for &red in reduces {
        let mut headers = vec![format!("buckets ({})", red.as_str())];
        headers.extend(names.iter().cloned());
        if with_expected {
            headers.push("random".to_string());
        }
        let mut t = TextTable::new(headers);
        for &b in buckets {
            let mut row = vec![fmt_grouped(b as f64, 0)];
            let mut any = None;
            for name in names {
                let r = find(name, b, red);
                row.push(r.map_or_else(String::new, |r| stat_cell(a.stat, r)));
                any = any.or(r);
            }
            if with_expected {
                row.push(
                    any.and_then(|r| expected_cell(a.stat, r))
                        .unwrap_or_default(),
                );
            }
            t.push(row);
        }
        out.push_str(&t.render_within(MAIL_WIDTH, 1));
    }
    let count = |v| records.iter().filter(|r| r.verdict == v).count();
    out.push_str(&wrap_indented(
        &format!(
            "verdicts: {} pass, {} warn, {} fail of {} (Bonferroni over {} tests; warn if p < \
             2^-{WARN_LOG2}, fail if p < 2^-{FAIL_LOG2})",
            count(Verdict::Pass),
            count(Verdict::Warn),
            count(Verdict::Fail),
            records.len(),
            records.len() * TESTS_PER_RECORD
        ),
        MAIL_WIDTH,
        "  ",
    ));
    out.push('\n');
    // The cells not passed, one line per hasher and reduction (wrapped at the mail width):
    // a hasher that fails every size of a long sweep flags dozens of cells, far beyond one
    // line, and a reader looks them up by hasher.
    let mut groups: Vec<(&str, Reduce, Vec<&DistRecord>)> = Vec::new();
    for r in records.iter().filter(|r| r.verdict != Verdict::Pass) {
        match groups
            .iter_mut()
            .find(|(n, red, _)| *n == r.algo && *red == r.reduce)
        {
            Some((_, _, v)) => v.push(r),
            None => groups.push((&r.algo, r.reduce, vec![r])),
        }
    }
    if !groups.is_empty() {
        out.push_str("flagged (buckets by verdict):\n");
    }
    for (name, red, rs) in &groups {
        let by = |v: Verdict| {
            let sizes: Vec<String> = rs
                .iter()
                .filter(|r| r.verdict == v)
                .map(|r| r.buckets.to_string())
                .collect();
            (!sizes.is_empty()).then(|| format!("{} at {}", v.as_str(), sizes.join(", ")))
        };
        let line = [by(Verdict::Fail), by(Verdict::Warn)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ");
        out.push_str(&wrap_indented(
            &format!("  {name} ({}): {line}", red.as_str()),
            MAIL_WIDTH,
            "    ",
        ));
        out.push('\n');
    }
    out
}

/// `text` broken at spaces into lines of at most `width` characters, every line after
/// the first starting with `indent` (a longer word stays whole on its own line).
fn wrap_indented(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let lead = text.len() - text.trim_start().len();
    let mut cur = text[..lead].to_string();
    for w in text.split_whitespace() {
        let fresh = cur.trim().is_empty();
        if !fresh && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::replace(&mut cur, indent.to_string()));
        } else if !fresh {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    lines.push(cur);
    lines.join("\n")
}

fn plot(
    a: &DistArgs,
    path: &std::path::Path,
    records: &[DistRecord],
    reduces: &[Reduce],
) -> Result<(), CliError> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in records {
        let name = if reduces.len() > 1 {
            format!("{} ({})", r.algo, r.reduce.as_str())
        } else {
            r.algo.clone()
        };
        let v = (r.buckets as f64, stat_value(a.stat, r));
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push(v),
            None => series.push((name, vec![v])),
        }
    }
    let title = format!("futexhash dist: {} on {}", stat_name(a.stat), a.workload);
    // A verdict is a category, drawn at 0, 1, 2 and labelled pass, warn, fail
    // ([`stat_value`]), never as numbers between them.
    let y_categories = if a.stat == Stat::Verdict {
        [Verdict::Pass, Verdict::Warn, Verdict::Fail]
            .iter()
            .map(|v| v.as_str().to_string())
            .collect()
    } else {
        Vec::new()
    };
    let p = Plot {
        title,
        x_label: "buckets".into(),
        y_label: stat_name(a.stat).into(),
        lines: series
            .into_iter()
            .map(|(n, pts)| Line::new(n, pts))
            .collect(),
        log2_x: true,
        y_categories,
        ..Plot::default()
    };
    plot_svg(path, &p)
        .map_err(|e| CliError::Usage(format!("cannot write plot '{}': {e}", path.display())))
}

fn run_diagnostics(a: &DistArgs, hashers: &[crate::hashers::SharedHasher]) -> Result<(), CliError> {
    if a.samples < 16 || a.samples > 1 << 20 {
        return Err(CliError::Usage(format!(
            "--samples '{}' must be between 16 and 1048576",
            a.samples
        )));
    }
    interrupt::watch(Keeps::Nothing);
    let recs: Vec<_> = hashers
        .iter()
        .map(|h| diagnostics(h, a.samples as usize, a.seed))
        .collect();
    interrupt::claim_output();
    let text = match a.out.format {
        Format::Json => output::to_json(&recs).map_err(run_err)?,
        Format::Csv => output::to_csv(&recs).map_err(run_err)?,
        Format::Table => {
            let mut t = TextTable::new([
                "algo",
                "diff min distinct",
                "worst bit",
                "affine bits",
                "differential",
                "aval worst bias",
                "aval mean bias",
                "avalanche",
            ]);
            for d in &recs {
                t.push(vec![
                    d.algo.clone(),
                    fmt_grouped(d.diff_min_distinct as f64, 0),
                    d.diff_worst_bit.clone(),
                    format!("{}/{}", d.diff_constant_bits, d.bits),
                    if d.diff_flagged { "FLAGGED" } else { "ok" }.to_string(),
                    format!("{:.4}", d.avalanche_worst_bias),
                    format!("{:.4}", d.avalanche_mean_bias),
                    if d.avalanche_flagged { "FLAGGED" } else { "ok" }.to_string(),
                ]);
            }
            format!(
                "# bit diagnostics over {} random private keys (seed {}): distinct values of h(k)^h(k^e_i); output-bit flip bias\n{}",
                a.samples,
                a.seed,
                t.render_within(MAIL_WIDTH, 1)
            )
        }
    };
    a.out.emit(&text)
}

//! `futexhash bench`: end-to-end throughput, flags compatible with `perf bench futex hash`
//! (`shared/spec/cli.md`). The `kernel` backend runs every configuration in a child
//! process of this binary (see [`crate::bench::kernel`]); the hidden `--internal-child`
//! flag is that child's entry point.

use super::args::{number, pow2_list};
use super::{CliError, OutputArgs};
use crate::bench::kernel::{self, ChildConfig};
use crate::bench::plot;
use crate::bench::record::{self, BenchRecord, RecordMeta};
use crate::bench::runner::RunOutcome;
use crate::bench::runner::{RunConfig, Workload, allowed_cpus};
use crate::key::parse_number;
use crate::report::{Format, output};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// Largest accepted thread count, futex count per thread, and private slot count.
const MAX_THREADS: u64 = 16_384;
const MAX_FUTEXES: u64 = 1 << 24;
const MAX_SLOTS: u64 = 1 << 24;

/// Which implementation the operations go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum BackendKind {
    /// This crate's user-space bucket table.
    Model,
    /// The real futex(2) system call of this machine.
    Kernel,
}

/// Model table kinds (`--table`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum TableKind {
    /// One table for every process.
    Global,
    /// A table per process.
    Private,
    /// One table per NUMA node.
    Numa,
}

/// Model bucket layouts (`--layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum LayoutKind {
    /// One bucket per cache line.
    Aligned,
    /// Buckets packed, sharing cache lines.
    Packed,
}

#[derive(Debug, clap::Args)]
pub(super) struct BenchArgs {
    /// Threads, or a list of thread counts for a sweep [default: the number of CPUs].
    #[arg(short = 't', long, value_name = "LIST")]
    threads: Option<String>,
    /// Futex words per thread.
    #[arg(short = 'f', long, value_name = "N", default_value = "1024", value_parser = number)]
    futexes: u64,
    /// Run time per configuration, seconds (fractions allowed, e.g. 0.5).
    #[arg(short = 'r', long, value_name = "SECS", default_value = "10")]
    runtime: String,
    /// Use shared futexes instead of private ones.
    #[arg(short = 'S', long)]
    shared: bool,
    /// Silent mode: no per-thread lines.
    #[arg(short = 's', long)]
    silent: bool,
    /// Hash buckets (kernel: private hash slots), list or range for a sweep; 0 = the
    /// global hash [kernel default: the kernel's automatic sizing].
    #[arg(short = 'b', long, value_name = "LIST")]
    buckets: Option<String>,
    /// Lock all current and future memory (mlockall).
    #[arg(short = 'm', long)]
    mlockall: bool,
    /// Where the operations go.
    #[arg(long, value_enum, default_value_t = BackendKind::Model)]
    backend: BackendKind,
    /// Hashers for the model backend (list, `seed` or `all`).
    #[arg(long, value_name = "LIST")]
    algo: Option<String>,
    /// Model table kind.
    #[arg(long, value_enum)]
    table: Option<TableKind>,
    /// Model bucket layout.
    #[arg(long, value_enum)]
    layout: Option<LayoutKind>,
    /// What each operation is: `hash` (perf's failing wait) or `wake` (no waiters).
    #[arg(long, value_enum, default_value_t = Workload::Hash)]
    workload: Workload,
    /// Also draw ops/sec against buckets (log2 axis) into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
    /// Internal: run one kernel configuration (JSON) and print the report as JSON.
    #[arg(long, hide = true, value_name = "JSON")]
    internal_child: Option<String>,
}

/// `-r`: positive, finite seconds, decimal (fractions allowed) or 0x hex.
fn parse_runtime(s: &str) -> Result<Duration, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "runtime '{s}' is not a positive number of seconds (e.g. 10 or 0.5, at most 1e6)"
        ))
    };
    let secs = match s.trim().parse::<f64>() {
        Ok(v) => v,
        Err(_) => parse_number(s).ok_or_else(bad)? as f64,
    };
    if !(secs.is_finite() && secs > 0.0 && secs <= 1e6) {
        return Err(bad());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
}

/// `-t`: a comma-separated list of thread counts, each 1..=MAX_THREADS.
fn parse_threads(s: &str) -> Result<Vec<usize>, CliError> {
    s.split(',')
        .map(|p| match parse_number(p.trim()) {
            Some(n) if (1..=MAX_THREADS).contains(&n) => Ok(n as usize),
            _ => Err(CliError::Usage(format!(
                "thread count '{p}' is not a number from 1 to {MAX_THREADS}; use a list like 1,2,4"
            ))),
        })
        .collect()
}

/// The validated plan of a `bench` invocation.
#[derive(Debug)]
struct Plan {
    threads: Vec<usize>,
    futexes: usize,
    runtime: Duration,
    buckets: Option<Vec<u64>>,
}

fn plan(args: &BenchArgs) -> Result<Plan, CliError> {
    let threads = match &args.threads {
        Some(s) => parse_threads(s)?,
        None => vec![allowed_cpus().len()],
    };
    if !(1..=MAX_FUTEXES).contains(&args.futexes) {
        return Err(CliError::Usage(format!(
            "futex count '{}' must be from 1 to {MAX_FUTEXES}",
            args.futexes
        )));
    }
    let runtime = parse_runtime(&args.runtime)?;
    let buckets = match &args.buckets {
        Some(s) => {
            let list = pow2_list(s, "bucket count", true)?;
            if let Some(&big) = list.iter().find(|&&b| b > MAX_SLOTS) {
                return Err(CliError::Usage(format!(
                    "bucket count '{big}' is too large; at most {MAX_SLOTS}"
                )));
            }
            Some(list)
        }
        None => None,
    };
    Ok(Plan {
        threads,
        futexes: args.futexes as usize,
        runtime,
        buckets,
    })
}

/// Refuses, before any measuring, an output path whose directory does not exist.
fn check_writable_dir(path: &std::path::Path, what: &str) -> Result<(), CliError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if dir.is_dir() {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "cannot write {what} '{}': directory '{}' does not exist",
            path.display(),
            dir.display()
        )))
    }
}

pub(super) fn run(args: BenchArgs) -> Result<(), CliError> {
    if let Some(json) = &args.internal_child {
        return run_child(json);
    }
    let plan = plan(&args)?;
    if let Some(p) = &args.out.output {
        check_writable_dir(p, "output")?;
    }
    if let Some(p) = &args.plot {
        check_writable_dir(p, "plot")?;
    }
    match args.backend {
        BackendKind::Model => Err(CliError::Usage(
            "--backend model is not available yet (the model bucket table is still being \
             built); use --backend kernel"
                .into(),
        )),
        BackendKind::Kernel => run_kernel(&args, &plan),
    }
}

/// The child side: run one configuration here, print the report as JSON.
fn run_child(json: &str) -> Result<(), CliError> {
    let cfg: ChildConfig = serde_json::from_str(json)
        .map_err(|e| CliError::Usage(format!("bad --internal-child configuration: {e}")))?;
    let report = kernel::run_here(&cfg).map_err(|e| {
        if e.usage {
            CliError::Usage(e.message)
        } else {
            CliError::Runtime(e.message)
        }
    })?;
    let s = serde_json::to_string(&report).map_err(|e| CliError::Runtime(e.to_string()))?;
    println!("{s}");
    Ok(())
}

fn warn(msg: &str) {
    eprintln!("futexhash: warning: {msg}");
}

fn run_kernel(args: &BenchArgs, plan: &Plan) -> Result<(), CliError> {
    if args.table.is_some() {
        return Err(CliError::usage(
            "--table applies to the model backend; for the kernel choose its table with -b \
             (0 = global hash, N = N private slots)",
        ));
    }
    if args.layout.is_some() {
        return Err(CliError::usage(
            "--layout applies to the model backend; the kernel's layout is its own",
        ));
    }
    if let Some(a) = args.algo.as_deref().filter(|&a| a != "kernel") {
        return Err(CliError::Usage(format!(
            "--algo '{a}' applies to the model backend; the kernel backend always uses the \
             kernel's own hash (jhash2), --algo kernel"
        )));
    }
    if plan.buckets.as_ref().is_some_and(|b| b.contains(&1)) {
        return Err(CliError::usage(
            "bucket count '1' is refused by the kernel; use 0 (global hash) or a power of two >= 2",
        ));
    }

    // Which slot settings can run on this kernel.
    let mut slot_settings: Vec<Option<u64>> = match &plan.buckets {
        Some(list) => list.iter().map(|&b| Some(b)).collect(),
        None => vec![None],
    };
    if !kernel::private_hash_supported() {
        let skipped: Vec<String> = slot_settings
            .iter()
            .flatten()
            .filter(|&&b| b != 0)
            .map(|b| b.to_string())
            .collect();
        if !skipped.is_empty() {
            warn(&format!(
                "this kernel has no private futex hash (prctl PR_FUTEX_HASH, Linux 6.16+, \
                 CONFIG_FUTEX_PRIVATE_HASH): skipping bucket counts {}; running the global \
                 hash only",
                skipped.join(",")
            ));
        }
        slot_settings.retain(|b| b.is_none_or(|b| b == 0));
        if slot_settings.is_empty() {
            slot_settings.push(Some(0));
        }
    }
    if args.shared && slot_settings.iter().any(|b| b.is_some_and(|b| b > 0)) {
        warn(
            "shared futexes (-S) always hash into the kernel's global table; the private \
             slot setting does not affect them",
        );
    }
    let cpus = allowed_cpus().len();
    if let Some(&t) = plan.threads.iter().find(|&&t| t > cpus) {
        warn(&format!(
            "{t} threads on {cpus} CPUs: oversubscribed: measures the scheduler, not the hash"
        ));
    }

    let exe = std::env::current_exe()
        .map_err(|e| CliError::Runtime(format!("cannot find this program's path: {e}")))?;
    let configs: Vec<(usize, Option<u64>)> = plan
        .threads
        .iter()
        .flat_map(|&t| slot_settings.iter().map(move |&b| (t, b)))
        .collect();
    let bar = (configs.len() > 1 && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(configs.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} configurations, {msg} (eta {eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b.set_prefix("bench");
        b
    });

    let mut results: Vec<Measured> = Vec::new();
    for &(threads, slots) in &configs {
        if let Some(b) = &bar {
            b.set_message(format!(
                "t={threads} b={}",
                slots.map_or("auto".into(), |s| s.to_string())
            ));
        }
        let cfg = ChildConfig {
            run: RunConfig {
                threads,
                futexes: plan.futexes,
                runtime: plan.runtime,
                workload: args.workload,
                pin: true,
            },
            slots,
            shared: args.shared,
            mlockall: args.mlockall,
        };
        let mut forward = |s: &str| {
            for l in s.lines().filter(|l| !l.trim().is_empty()) {
                match &bar {
                    Some(b) => b.println(l),
                    None => eprintln!("{l}"),
                }
            }
        };
        let report = kernel::run_in_child(&exe, &cfg, &mut forward).map_err(|e| {
            if let Some(b) = &bar {
                b.abandon();
            }
            let b = slots.map_or("auto".to_string(), |s| s.to_string());
            let msg = format!("threads {threads}, buckets {b}: {}", e.message);
            if e.usage {
                CliError::Usage(msg)
            } else {
                CliError::Runtime(msg)
            }
        })?;
        let buckets = slots.or(report.slots_applied).unwrap_or(0);
        let rec = BenchRecord::new(
            RecordMeta {
                backend: "kernel".into(),
                algo: "kernel".into(),
                table: if buckets == 0 || args.shared {
                    "global"
                } else {
                    "private"
                }
                .into(),
                layout: "kernel".into(),
                buckets,
                futexes: plan.futexes,
                workload: args.workload,
                shared: args.shared,
                slots_applied: report.slots_applied,
                pid: report.pid,
            },
            &report.outcome,
        );
        if rec.unexpected > 0 && !args.silent {
            warn(&format!(
                "{} of the futex calls (threads {threads}) did not return as expected \
                 (perf: \"Non-expected futex return call\")",
                rec.unexpected
            ));
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
        results.push(Measured {
            hash_line: record::kernel_hash_line(report.slots_requested, report.slots_applied),
            record: rec,
            outcome: report.outcome,
        });
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let worst = results
        .iter()
        .map(|m| m.record.cpu_share)
        .min_by(f64::total_cmp);
    if let Some(worst) = worst.filter(|&w| w < 0.9) {
        warn(&format!(
            "busy machine: the worker threads got as little as {:.0}% of their wall-clock \
             time on a CPU, so ops/sec understates; ops_per_cpu_sec (CSV/JSON) does not",
            worst * 100.0
        ));
    }
    emit(args, plan, &results)
}

/// One measured configuration, whatever the backend: its record, the raw outcome (for
/// perf's per-thread lines) and perf's "Futex hashing: ..." line.
struct Measured {
    record: BenchRecord,
    outcome: RunOutcome,
    hash_line: String,
}

/// Writes the plot (if asked) and the records: perf's lines for a single configuration in
/// table format, the sweep table otherwise, or CSV/JSON.
fn emit(args: &BenchArgs, plan: &Plan, results: &[Measured]) -> Result<(), CliError> {
    let records: Vec<BenchRecord> = results.iter().map(|r| r.record.clone()).collect();
    if let Some(path) = &args.plot {
        let title = format!(
            "futex {} throughput, {} futexes/thread, {} s",
            args.workload.as_str(),
            plan.futexes,
            record::fmt_secs(plan.runtime.as_secs_f64())
        );
        plot::write_svg(
            path,
            &title,
            "mean ops/sec per thread",
            &record::plot_series(&records),
        )
        .map_err(CliError::Usage)?;
    }
    let text = match args.out.format {
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Csv => output::to_csv(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Table if results.len() == 1 => {
            let m = &results[0];
            record::perf_lines(
                &m.record,
                &m.outcome,
                plan.runtime.as_secs_f64(),
                args.silent,
                &m.hash_line,
            )
        }
        Format::Table => {
            let mut s = record::sweep_table(&records);
            s.push_str(
                "mean operations/sec per thread (perf's \"Averaged\"); buckets 0 = global hash\n",
            );
            s
        }
    };
    args.out.emit(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes() {
        assert_eq!(parse_runtime("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_runtime("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_runtime("0x2").unwrap(), Duration::from_secs(2));
        for bad in ["0", "-1", "nan", "inf", "abc", "", "1e7"] {
            assert!(parse_runtime(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn thread_lists() {
        assert_eq!(parse_threads("1,2,0x4").unwrap(), [1, 2, 4]);
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("1,,2").is_err());
        assert!(parse_threads("16385").is_err());
    }
}

//! `futexhash bench`: end-to-end throughput, flags compatible with `perf bench futex hash`
//! (docs/bench.md). Sweeps go through [`crate::bench::sweep`]; the `kernel` backend
//! runs every configuration in a child process of this binary (see
//! [`crate::bench::child`]); the hidden `--internal-child` flag is that child's entry
//! point. `--workload lock|noisy` go to [`crate::bench::contend`], `--compare` to
//! [`crate::bench::compare`].

use super::args::{self, algo_list, number};
use super::{CliError, OutputArgs};
use crate::bench::contend;
use crate::bench::options::{BackendChoice, BenchError, ContendSpec, ModelOptions};
use crate::bench::runner::allowed_cpus;
use crate::bench::sweep::{self, Progress, SweepSpec};
use crate::bench::{child, interrupt};
use crate::hashers::HashKey;
use crate::key::parse_number;
use crate::render::{Format, output};
use crate::table::{Layout, TableKind as ModelKind};
use crate::throughput::Workload;
use crate::throughput::record::{self, BenchRecord};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// Largest accepted thread count, futex count per thread, and private slot count.
const MAX_THREADS: u64 = 16_384;
const MAX_FUTEXES: u64 = 1 << 24;
const MAX_SLOTS: u64 = 1 << 24;
/// `-f` when not given (perf's default).
const DEFAULT_FUTEXES: u64 = 1024;

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

/// `--workload`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum WorkloadArg {
    /// perf's loop: wait with a wrong expected value (EAGAIN).
    Hash,
    /// Wake on words nobody waits on.
    Wake,
    /// The seed's futex_numa lock test: holders take and release a futex lock, contenders
    /// hammer its bucket with failing waits.
    Lock,
    /// A victim process next to a noisy one: global vs private tables.
    Noisy,
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
    #[arg(short = 't', long, value_name = "LIST", allow_hyphen_values = true)]
    threads: Option<String>,
    /// Futex words per thread (`noisy`: of each noisy thread) [default: 1024].
    #[arg(short = 'f', long, value_name = "N", value_parser = number, allow_hyphen_values = true)]
    futexes: Option<u64>,
    /// Run time per configuration, seconds (fractions allowed, e.g. 0.5).
    #[arg(
        short = 'r',
        long,
        value_name = "SECS",
        default_value = "10",
        allow_hyphen_values = true
    )]
    runtime: String,
    /// Use shared futexes instead of private ones.
    #[arg(short = 'S', long)]
    shared: bool,
    /// Silent mode: no per-thread lines.
    #[arg(short = 's', long)]
    silent: bool,
    /// Hash buckets (kernel: private hash slots), list or range for a sweep; 0 = the
    /// global hash (so not with an explicit --table private) [kernel default: the
    /// kernel's automatic sizing].
    #[arg(short = 'b', long, value_name = "LIST", allow_hyphen_values = true)]
    buckets: Option<String>,
    /// Lock all current and future memory (mlockall).
    #[arg(short = 'm', long)]
    mlockall: bool,
    /// Where the operations go: `model`, `kernel`, or both side by side (`model,kernel`)
    /// [default: model].
    #[arg(long, value_name = "LIST")]
    backend: Option<String>,
    /// Hashers for the model backend (list, `seed` or `all`).
    #[arg(long, value_name = "LIST")]
    algo: Option<String>,
    /// Model table kind.
    #[arg(long, value_enum)]
    table: Option<TableKind>,
    /// Model bucket layout.
    #[arg(long, value_enum)]
    layout: Option<LayoutKind>,
    /// What each thread does: `hash` (perf's failing wait), `wake` (no waiters), `lock`
    /// (futex_numa lock test), `noisy` (victim next to a noisy neighbour).
    #[arg(long, value_enum, default_value_t = WorkloadArg::Hash)]
    workload: WorkloadArg,
    /// Model `numa` table (and `lock` workload groups): number of nodes [default: 2].
    #[arg(long, value_name = "N", value_parser = number)]
    nodes: Option<u64>,
    /// FUTEX_SQUASH (seed 002): every node of the model table reduced to one bucket.
    #[arg(long)]
    squash: bool,
    /// `lock` workload: lock-taking threads per group (the contenders are `-t`).
    /// [default: 2]
    #[arg(long, value_name = "N", value_parser = number)]
    holders: Option<u64>,
    /// `noisy` workload: victim threads (the noisy process gets `-t` threads) [default: 1].
    #[arg(long, value_name = "N", value_parser = number)]
    victim_threads: Option<u64>,
    /// `noisy` workload: futex words of each victim thread [default: 4].
    #[arg(long, value_name = "N", value_parser = number)]
    victim_futexes: Option<u64>,
    /// Measure the performance figures side by side (model op vs syscall, 2 threads vs 1
    /// against the machine's own scaling, packed vs aligned) and print them as ratios; `-r`
    /// is the time of each measurement, `-f` perf's futexes per thread; the configurations
    /// are fixed, so the other run flags are refused.
    #[arg(long)]
    compare: bool,
    /// Also draw ops/sec against buckets (log2 axis) into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
    /// Internal: run one kernel configuration (JSON) and print the report as JSON.
    #[arg(long, hide = true, value_name = "JSON")]
    internal_child: Option<String>,
}

/// Shortest accepted run time: below it thread start-up dominates and perf's "for N secs"
/// line would round to 0.
const MIN_RUNTIME_S: f64 = 0.01;

/// `-r`: finite seconds from [`MIN_RUNTIME_S`] to 1e6, decimal (fractions allowed) or 0x hex.
fn parse_runtime(s: &str) -> Result<Duration, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "runtime '{s}' is not a number of seconds from {MIN_RUNTIME_S} to 1e6 (e.g. 10 or 0.5)"
        ))
    };
    let secs = match s.trim().parse::<f64>() {
        Ok(v) => v,
        Err(_) => parse_number(s).ok_or_else(bad)? as f64,
    };
    if !(secs.is_finite() && (MIN_RUNTIME_S..=1e6).contains(&secs)) {
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
    let futexes = args.futexes.unwrap_or(DEFAULT_FUTEXES);
    if !(1..=MAX_FUTEXES).contains(&futexes) {
        return Err(CliError::Usage(format!(
            "futex count '{futexes}' must be from 1 to {MAX_FUTEXES}"
        )));
    }
    let runtime = parse_runtime(&args.runtime)?;
    let buckets = match &args.buckets {
        Some(s) => Some(args::pow2_list_max(s, "bucket count", true, MAX_SLOTS)?),
        None => None,
    };
    Ok(Plan {
        threads,
        futexes: futexes as usize,
        runtime,
        buckets,
    })
}

/// `--backend`: `model`, `kernel`, `model,kernel` (any order) or `both`.
fn parse_backends(s: &str) -> Result<Vec<BackendChoice>, CliError> {
    let parts: Vec<&str> = if s.trim() == "both" {
        vec!["model", "kernel"]
    } else {
        s.split(',').map(str::trim).collect()
    };
    let mut out = Vec::new();
    for p in parts {
        let b = match p {
            "model" => BackendChoice::Model,
            "kernel" => BackendChoice::Kernel,
            _ => {
                return Err(CliError::Usage(format!(
                    "backend '{p}' is not known; use model, kernel, model,kernel or both"
                )));
            }
        };
        if !out.contains(&b) {
            out.push(b);
        }
    }
    Ok(out)
}

/// The model options from the flags (checked against the backends).
fn model_options(args: &BenchArgs, backends: &[BackendChoice]) -> Result<ModelOptions, CliError> {
    let model = backends.contains(&BackendChoice::Model);
    if !model {
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
        if args.squash || args.nodes.is_some() {
            return Err(CliError::usage(
                "--squash and --nodes apply to the model backend",
            ));
        }
        if let Some(a) = args.algo.as_deref().filter(|&a| a != "kernel") {
            return Err(CliError::Usage(format!(
                "--algo '{a}' applies to the model backend; the kernel backend always uses the \
                 kernel's own hash (jhash2), --algo kernel"
            )));
        }
    }
    let table = match args.table {
        None | Some(TableKind::Private) => ModelKind::Private,
        Some(TableKind::Global) => ModelKind::Global,
        Some(TableKind::Numa) => ModelKind::Numa,
    };
    let algos = match args.algo.as_deref() {
        None | Some("kernel") => vec![
            crate::hashers::Builtin::by_name("jhash2", HashKey::DEFAULT)
                .map_err(CliError::usage)?
                .shared(),
        ],
        Some(a) => algo_list(a, HashKey::DEFAULT)?,
    };
    let nodes = match (args.nodes, table) {
        (Some(n), _) if !(1..=1024).contains(&n) => {
            return Err(CliError::Usage(format!(
                "node count '{n}' must be from 1 to 1024"
            )));
        }
        (Some(n), ModelKind::Numa) => n as usize,
        (None, ModelKind::Numa) => 2,
        (Some(n), _) if n != 1 && args.workload != WorkloadArg::Lock => {
            return Err(CliError::Usage(format!(
                "--nodes {n} applies to --table numa (or the lock workload's groups)"
            )));
        }
        _ => 1,
    };
    if args.squash && table == ModelKind::Private {
        return Err(CliError::usage(
            "--squash applies to --table global or numa (FUTEX_SQUASH reduces each node to one bucket)",
        ));
    }
    Ok(ModelOptions {
        algos,
        table,
        layout: match args.layout {
            None | Some(LayoutKind::Aligned) => Layout::Aligned,
            Some(LayoutKind::Packed) => Layout::Packed,
        },
        nodes,
        squash: args.squash,
    })
}

impl WorkloadArg {
    fn name(self) -> &'static str {
        match self {
            WorkloadArg::Hash => "hash",
            WorkloadArg::Wake => "wake",
            WorkloadArg::Lock => "lock",
            WorkloadArg::Noisy => "noisy",
        }
    }
}

/// The flags that only some workloads read, refused with any other: a flag that would be
/// silently ignored reads as measured when it was not. `lock` has one futex per group (no
/// `-f`), and neither `lock` nor `noisy` has perf's per-thread lines (`-s`), shared
/// futexes (`-S`) or `mlockall` (`-m`); `noisy` compares the kernel-sized global table
/// with private tables itself, so the model table flags do not reach it.
fn check_workload_flags(args: &BenchArgs) -> Result<(), CliError> {
    use WorkloadArg::{Hash, Lock, Noisy, Wake};
    let rules: [(bool, &str, &[WorkloadArg]); 10] = [
        (args.futexes.is_some(), "-f", &[Hash, Wake, Noisy]),
        (args.shared, "-S", &[Hash, Wake]),
        (args.silent, "-s", &[Hash, Wake]),
        (args.mlockall, "-m", &[Hash, Wake]),
        (args.table.is_some(), "--table", &[Hash, Wake, Lock]),
        (args.nodes.is_some(), "--nodes", &[Hash, Wake, Lock]),
        (args.squash, "--squash", &[Hash, Wake, Lock]),
        (args.holders.is_some(), "--holders", &[Lock]),
        (args.victim_threads.is_some(), "--victim-threads", &[Noisy]),
        (args.victim_futexes.is_some(), "--victim-futexes", &[Noisy]),
    ];
    for (given, flag, applies) in rules {
        if given && !applies.contains(&args.workload) {
            let names: Vec<&str> = applies.iter().map(|w| w.name()).collect();
            let list = match names.split_last() {
                Some((last, [])) => format!("--workload {last} only"),
                Some((last, rest)) => format!("--workload {} and {last}", rest.join(", ")),
                None => String::new(),
            };
            return Err(CliError::Usage(format!(
                "{flag} applies to {list}, and has no effect with --workload {}{}",
                args.workload.name(),
                if args.workload == Hash {
                    " (the default)"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

/// `--table private` with a 0 in `-b`: 0 slots is the global hash (docs/cli.md, as perf's
/// `-b 0`), so the pair asks for a private table and for none at once; refused rather than
/// silently run as the global hash. Without `--table` (private is only its default) a 0
/// in `-b` stays the global hash, the baseline of a sweep.
fn check_private_slots(args: &BenchArgs, plan: &Plan) -> Result<(), CliError> {
    let zero = plan.buckets.as_ref().is_some_and(|b| b.contains(&0));
    if zero && args.table == Some(TableKind::Private) {
        return Err(CliError::usage(
            "-b 0 is the global hash, not a private table, so it contradicts --table private; \
             leave out --table (its default is private, and -b 0 then runs the global hash as \
             perf does) or use --table global",
        ));
    }
    Ok(())
}

fn warn(msg: &str) {
    eprintln!("futexhash: warning: {msg}");
}

fn sweep_error(e: BenchError) -> CliError {
    if e.usage {
        CliError::Usage(e.message)
    } else {
        CliError::Runtime(e.message)
    }
}

pub(super) fn run(args: BenchArgs) -> Result<(), CliError> {
    // Parent and child alike: SIGINT/SIGTERM stop the workers and keep what was measured.
    interrupt::install();
    if let Some(json) = &args.internal_child {
        return run_child(json);
    }
    // The parent: a run that does not stop at the signal (a C hasher stuck in a call) is
    // abandoned at a second signal or after a grace period ([`super::interrupt`]).
    super::interrupt::watch(super::interrupt::Keeps::Finished);
    let plan = plan(&args)?;
    args.out.check()?;
    if let Some(p) = &args.plot {
        args::check_output_path(p, "plot")?;
    }
    let backends = parse_backends(args.backend.as_deref().unwrap_or("model"))?;
    // `--compare` names every flag it cannot honour itself ([`compare_conflicts`]).
    if !args.compare {
        check_workload_flags(&args)?;
    }
    let model = model_options(&args, &backends)?;
    check_private_slots(&args, &plan)?;
    if args.compare {
        return run_compare(&args, &plan);
    }
    let workload = match args.workload {
        WorkloadArg::Hash => Workload::Hash,
        WorkloadArg::Wake => Workload::Wake,
        WorkloadArg::Lock | WorkloadArg::Noisy => {
            return run_contend(&args, &plan, &backends, model);
        }
    };
    let spec = SweepSpec {
        backends,
        model,
        threads: plan.threads.clone(),
        buckets: plan.buckets.clone(),
        futexes: plan.futexes,
        runtime: plan.runtime,
        workload,
        shared: args.shared,
        mlockall: args.mlockall,
        exe: None,
    };
    sweep::validate(&spec).map_err(sweep_error)?;
    let result = run_sweep(&spec);
    super::interrupt::claim_output();
    let result = result?;
    if result.interrupted && result.measured.is_empty() {
        // No table of headers without rows, no empty file.
        eprintln!(
            "{}",
            super::interrupted_with(&format!(
                "0 of {} configurations measured; nothing written",
                result.total
            ))
        );
        return Err(CliError::InterruptedReported);
    }
    let shown = result.warnings.iter().filter(|w| {
        !(args.silent && args.out.format == Format::Table && w.contains("did not return"))
    });
    for w in shown {
        warn(w);
    }
    emit(&args, &plan, workload.as_str(), &result.measured)?;
    if result.interrupted {
        // What a sweep keeps is a count of configurations, not "the results that
        // finished": the last one ran only for part of its time.
        eprintln!(
            "{}",
            super::interrupted_with(&format!(
                "{} of {} configurations measured, the last one for the time it ran",
                result.measured.len(),
                result.total
            ))
        );
        return Err(CliError::InterruptedReported);
    }
    Ok(())
}

/// The flags `--compare` cannot honour: its configurations are fixed.
fn compare_conflicts(args: &BenchArgs) -> Vec<&'static str> {
    let set = [
        (args.threads.is_some(), "-t"),
        (args.buckets.is_some(), "-b"),
        (args.shared, "-S"),
        (args.silent, "-s"),
        (args.mlockall, "-m"),
        (args.backend.is_some(), "--backend"),
        (args.algo.is_some(), "--algo"),
        (args.table.is_some(), "--table"),
        (args.layout.is_some(), "--layout"),
        (args.workload != WorkloadArg::Hash, "--workload"),
        (args.nodes.is_some(), "--nodes"),
        (args.squash, "--squash"),
        (args.holders.is_some(), "--holders"),
        (args.victim_threads.is_some(), "--victim-threads"),
        (args.victim_futexes.is_some(), "--victim-futexes"),
        (args.plot.is_some(), "--plot"),
    ];
    set.iter().filter(|(on, _)| *on).map(|&(_, f)| f).collect()
}

/// `--compare`: the fixed side-by-side figures.
fn run_compare(args: &BenchArgs, plan: &Plan) -> Result<(), CliError> {
    let bad = compare_conflicts(args);
    if !bad.is_empty() {
        return Err(CliError::Usage(format!(
            "--compare measures fixed configurations (1 and 2 threads, jhash2, the kernel's \
             default and 65536-bucket tables, both layouts) and takes only -r, -f, --format \
             and --output; drop {}",
            bad.join(", ")
        )));
    }
    let figs = crate::bench::compare::compare(plan.runtime, plan.futexes);
    super::interrupt::claim_output();
    let figs = figs.map_err(sweep_error)?;
    let text = match args.out.format {
        Format::Json => {
            output::to_json(&figs.rows()).map_err(|e| CliError::Runtime(e.to_string()))?
        }
        Format::Csv => {
            output::to_csv(&figs.rows()).map_err(|e| CliError::Runtime(e.to_string()))?
        }
        Format::Table => figs.render(),
    };
    args.out.emit(&text)?;
    if interrupt::requested() {
        return Err(CliError::Interrupted);
    }
    Ok(())
}

/// Runs the sweep with a progress bar on a terminal.
fn run_sweep(spec: &SweepSpec) -> Result<sweep::SweepResult, CliError> {
    let total = sweep::configs(spec).len();
    let bar = (total > 1 && std::io::stderr().is_terminal()).then(|| {
        let b = indicatif::ProgressBar::new(total as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} configurations, {msg} (eta {eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b.set_prefix("bench");
        super::progress::register(&b);
        b
    });
    let result = sweep::sweep(spec, &mut |p| match p {
        Progress::Start {
            index,
            total,
            config,
        } => {
            if let Some(b) = &bar {
                b.set_length(total as u64);
                b.set_position(index as u64);
                b.set_message(config.to_string());
            }
        }
        Progress::Message(l) => match &bar {
            Some(b) => b.println(l),
            None => eprintln!("{l}"),
        },
    });
    match &bar {
        Some(b) if result.is_err() => b.abandon(),
        Some(b) => b.finish_and_clear(),
        None => {}
    }
    result.map_err(sweep_error)
}

/// `--workload lock|noisy`: one run (per hasher / backend), records with the extra fields.
fn run_contend(
    args: &BenchArgs,
    plan: &Plan,
    backends: &[BackendChoice],
    model: ModelOptions,
) -> Result<(), CliError> {
    if plan.threads.len() != 1 {
        return Err(CliError::usage(
            "--workload lock and noisy take a single thread count (-t N)",
        ));
    }
    let bucket_list = plan.buckets.clone().unwrap_or_default();
    if bucket_list.len() > 1 {
        return Err(CliError::usage(
            "--workload lock and noisy take a single bucket count (-b N)",
        ));
    }
    let check = |v: u64, what: &str, max: u64| -> Result<usize, CliError> {
        if (1..=max).contains(&v) {
            Ok(v as usize)
        } else {
            Err(CliError::Usage(format!(
                "{what} '{v}' must be from 1 to {max}"
            )))
        }
    };
    let spec = ContendSpec {
        backends: backends.to_vec(),
        model: model.clone(),
        threads: plan.threads[0],
        buckets: bucket_list.first().copied(),
        futexes: plan.futexes,
        runtime: plan.runtime,
        holders: check(args.holders.unwrap_or(2), "holder count", 1024)?,
        groups: if args.workload == WorkloadArg::Lock {
            args.nodes.map_or(
                if model.table == ModelKind::Numa {
                    model.nodes
                } else {
                    2
                },
                |n| n as usize,
            )
        } else {
            1
        },
        victim_threads: check(
            args.victim_threads.unwrap_or(1),
            "victim thread count",
            1024,
        )?,
        victim_futexes: check(
            args.victim_futexes.unwrap_or(4),
            "victim futex count",
            MAX_FUTEXES,
        )?,
        exe: None,
    };
    let lock = args.workload == WorkloadArg::Lock;
    crate::bench::limits::check(&crate::bench::limits::Needs {
        threads: if lock {
            (spec.groups * (spec.holders + spec.threads)) as u64
        } else {
            (spec.threads + spec.victim_threads) as u64
        },
        futexes: if lock { 1 } else { spec.futexes as u64 },
        keys: backends.contains(&BackendChoice::Model),
        table_bytes: if backends.contains(&BackendChoice::Model) {
            sweep::model_table_bytes(&spec.model, spec.buckets)
        } else {
            0
        },
    })
    .map_err(sweep_error)?;
    let result = if lock {
        contend::run_lock(&spec)
    } else {
        contend::run_noisy(&spec)
    };
    super::interrupt::claim_output();
    let result = result.map_err(sweep_error)?;
    for w in &result.warnings {
        warn(w);
    }
    let records = result.records;
    if let Some(path) = &args.plot {
        record::write_plot(path, "futex contention", &records)
            .map_err(|e| CliError::Usage(format!("cannot write plot '{}': {e}", path.display())))?;
    }
    let text = match args.out.format {
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Csv => output::to_csv(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Table => contend::render(&records),
    };
    args.out.emit(&text)?;
    if interrupt::requested() {
        return Err(CliError::Interrupted);
    }
    Ok(())
}

/// The child side ([`crate::bench::child`]): run one configuration here, print the
/// report as JSON.
fn run_child(json: &str) -> Result<(), CliError> {
    println!("{}", child::serve(json).map_err(sweep_error)?);
    Ok(())
}

/// Writes the plot (if asked) and the records: perf's lines for a single configuration in
/// table format, the sweep table otherwise, or CSV/JSON.
fn emit(
    args: &BenchArgs,
    plan: &Plan,
    workload: &str,
    results: &[sweep::Measured],
) -> Result<(), CliError> {
    let records: Vec<BenchRecord> = results.iter().map(|r| r.record.clone()).collect();
    if let Some(path) = &args.plot {
        let title = format!(
            "futex {} throughput, {} futexes/thread, {} s",
            workload,
            plan.futexes,
            record::fmt_secs(plan.runtime.as_secs_f64())
        );
        record::write_plot(path, &title, &records)
            .map_err(|e| CliError::Usage(format!("cannot write plot '{}': {e}", path.display())))?;
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
        assert_eq!(parse_runtime("0.01").unwrap(), Duration::from_millis(10));
        for bad in [
            "0",
            "-1",
            "nan",
            "inf",
            "abc",
            "",
            "1e7",
            "0.00000001",
            "0.009",
        ] {
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

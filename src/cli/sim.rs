//! `futexhash sim`: predict `perf bench futex hash` on a machine profile;
//! `futexhash sim calibrate`: fit a profile to measured rows;
//! `futexhash sim validate`: the validation against every published seed table;
//! `futexhash sim profile --this-machine`: a profile template of the machine it runs on.

use super::{CliError, OutputArgs, args};
use crate::hashers::HashKey;
use crate::render::plot::line_plot_svg;
use crate::render::{Format, TextTable, fmt_grouped, output};
use crate::sim::calibrate::{DEFAULT_NOISE, Observation, Scenario, calibrate, global_hash_size};
use crate::sim::hashcost::hash_cost;
use crate::sim::kernel::Kernel;
use crate::sim::profile::MachineProfile;
use crate::sim::sweep::{SimOptions, SimRecord, SimSweep, Slots, check_sweep, run_sweep_until};
use crate::sim::uncertainty::ratio;
use crate::sim::validate::{CV_TABLES, CrossValidation, cv_stats, validate_cv};
use crate::sim::validate::{
    MAX_SIM_BUCKETS, RunSpread, TABLE_240, TABLE_2013, ValidationRow, abs_log_error_quantile,
    column_order, hasher_for_column, perf_keys_per_thread, read_published, read_runs,
    rms_log_error, run_spread, seed_box_template, validate_all,
};
use crate::sim::{CACHE_LINE, Design, LockKind, PACKED_BUCKET_BYTES, Refcount, SimLength, SimOp};
use crate::throughput::record::{BenchRecord, sweep_table};
use std::path::{Path, PathBuf};

/// `sim --help`'s closing section: when not to trust the simulator, with the quoted
/// out-of-sample figures ([`crate::sim::uncertainty::QUOTED`], from `sim validate --cv`).
pub(super) fn trust_help() -> String {
    let q = crate::sim::uncertainty::quoted_error();
    format!(
        "When not to trust the simulator (docs/sim.md says more):\n\
         - Out of sample (`sim validate --cv`: each seed table predicted by the model calibrated \
         without it) the median |ln(pred/pub)| is {:.3} and the p90 {:.3} over {} published \
         cells of three machines (mean signed {:+.3}); the 80 % intervals held {:.0} % of those \
         cells, median width ln(hi/lo) {:.3}. That is the error to expect, not the smaller \
         in-sample figures of plain `sim validate`.\n\
         - Shown: seed 000's 256-CPU box at 240 threads (slots and hashers) from two of its \
         rows, its node-pinned runs and its pinning figures, seed 002's futex_numa ratio. \
         Weakest: seed 003's 2013 box (ticket locks, packed buckets; its aligned-only column \
         is far too slow), the node-pinned table when the box's cross-node transfer is \
         unknown.\n\
         - Not shown at all: any other machine, trace replay, kernels and designs no seed \
         table measured (6.16+ presets, refcounts, other sizes of box).\n\
         - Two configurations of one run are compared by their ratio's interval (common \
         random numbers); \"not told apart\" means the simulator cannot separate them, and \
         a told-apart pair smaller than the model error ({:.3} rms) is a statement about \
         the model, not yet about a machine.",
        q.median,
        q.p90,
        q.n_cells,
        q.mean_signed,
        100.0 * q.coverage,
        q.median_width,
        q.rms
    )
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
#[command(after_long_help = trust_help())]
pub(super) struct SimArgs {
    #[command(subcommand)]
    sub: Option<SimSub>,
    #[command(flatten)]
    run: SimRunArgs,
}

#[derive(Debug, clap::Subcommand)]
enum SimSub {
    /// Fit a profile's free costs to two measured rows of a `buckets,ops/sec` CSV.
    Calibrate(CalibrateArgs),
    /// Calibrate on two rows of the published 240-thread table and predict every
    /// published seed table (2024, seed 003's 2013 table, seed 002's futex_numa pair).
    Validate(ValidateArgs),
    /// Write a profile template of this machine: topology from sysfs, hash costs timed here.
    Profile(ProfileArgs),
}

#[derive(Debug, clap::Args)]
struct ProfileArgs {
    /// Profile the machine this runs on (the only source supported).
    #[arg(long)]
    this_machine: bool,
    /// Where to write the profile (TOML, atomically).
    #[arg(long, value_name = "P.toml")]
    out: PathBuf,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum LayoutArg {
    /// 64-byte buckets, one per cache line (Linux 3.13+).
    Aligned,
    /// 24-byte buckets sharing cache lines (Linux ≤ 3.12).
    Packed,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum LockArg {
    /// Queued (MCS) spinlock (x86 Linux 4.2+).
    Queued,
    /// Ticket spinlock (x86 Linux ≤ 4.1).
    Ticket,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum RefcountArg {
    /// No reference per operation.
    None,
    /// One atomic shared by the process (Linux 6.16).
    Shared,
    /// Per-CPU reference (Linux 6.17+).
    Percpu,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum SimWorkload {
    /// perf's failing FUTEX_WAIT loop.
    Hash,
    /// FUTEX_WAKE with no waiters.
    Wake,
    /// The futex_numa contention test (seed 002): `-t` contenders per node on their node's
    /// lock futex, every node squashed to one bucket.
    Lock,
}

#[derive(Debug, clap::Args)]
struct LengthArgs {
    /// Operations per thread measured (after warm-up).
    #[arg(long, value_name = "N", default_value = "1500", value_parser = args::number)]
    ops: u64,
    /// Operations per thread discarded as warm-up.
    #[arg(long, value_name = "N", default_value = "200", value_parser = args::number)]
    warmup: u64,
}

impl LengthArgs {
    fn length(&self) -> Result<SimLength, CliError> {
        let to_u32 = |v: u64, what: &str| {
            u32::try_from(v)
                .ok()
                .filter(|&v| v > 0 || what == "--warmup")
                .ok_or_else(|| {
                    CliError::Usage(format!("{what} {v} must be 1..=4294967295 operations"))
                })
        };
        Ok(SimLength {
            warmup_ops: to_u32(self.warmup, "--warmup")?,
            measured_ops: to_u32(self.ops, "--ops")?,
        })
    }
}

#[derive(Debug, clap::Args)]
struct SimRunArgs {
    /// Machine profile: a TOML file, or a name in data/machines/ (e.g. seed-256cpu).
    #[arg(long, value_name = "PROFILE", required = true)]
    profile: Option<String>,
    /// Threads, or a list for a sweep [default: the profile's CPU count].
    #[arg(short = 't', long, value_name = "LIST")]
    threads: Option<String>,
    /// Futex words per thread (perf's -f; at most 1024 in the simulated heap layout).
    #[arg(short = 'f', long, value_name = "N", default_value = "1024", value_parser = args::number)]
    futexes: u64,
    /// Private hash slots, list or range; 0 = the global hash; `auto` = the merged
    /// kernel's sizing for the thread count, `auto-rfc` = the RFC v2 default
    /// [default: 2..131072, or the --kernel preset's: auto for 6.16+, else 0].
    #[arg(short = 'b', long, value_name = "LIST")]
    buckets: Option<String>,
    /// Kernel preset of the design axes (explicit axis flags override it).
    #[arg(long, value_name = "VERSION")]
    kernel: Option<String>,
    /// Bucket layout [default: aligned, or the preset's].
    #[arg(long, value_enum)]
    layout: Option<LayoutArg>,
    /// Bytes per bucket (overrides --layout).
    #[arg(long, value_name = "N", value_parser = args::number)]
    bucket_bytes: Option<u64>,
    /// Bucket lock kind [default: queued, or the preset's].
    #[arg(long, value_enum)]
    lock: Option<LockArg>,
    /// The private hash's reference per operation [default: none, or the preset's].
    #[arg(long, value_enum)]
    refcount: Option<RefcountArg>,
    /// Global hash size, buckets (a power of two) [default: roundup_pow_of_two(256 × CPUs),
    /// or the preset's].
    #[arg(long, value_name = "N", value_parser = args::number)]
    global_buckets: Option<u64>,
    /// Hashers (list, `seed` or `all`).
    #[arg(long, value_name = "LIST", default_value = "jhash2")]
    algo: String,
    /// The loop each thread runs (hash, wake, lock), or trace:FILE to replay a captured
    /// program's per-thread futex operations (see docs/sim.md, "Replaying a trace").
    #[arg(long, value_name = "hash|wake|lock|trace:FILE", default_value = "hash", value_parser = super::sim_trace::workload_arg)]
    workload: String,
    /// With --workload trace:FILE: factor on the captured think time between a thread's
    /// calls (1 = as captured, 0 = back to back).
    #[arg(
        long,
        value_name = "X",
        default_value = "1",
        allow_hyphen_values = true
    )]
    think_scale: f64,
    /// With `--workload lock`: force every node's lock futex to hash to node 0 (all
    /// contenders share one bucket), as `futex_numa -N0` on both nodes.
    #[arg(long)]
    same_node: bool,
    /// Pin the threads to the CPUs of this NUMA node only.
    #[arg(long, value_name = "N", value_parser = args::number)]
    node: Option<u64>,
    /// Seed of the key set.
    #[arg(long, value_name = "S", default_value = "1", value_parser = args::number)]
    seed: u64,
    #[command(flatten)]
    len: LengthArgs,
    /// Also draw ops/sec against buckets (log2 axis) into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    out: OutputArgs,
}

#[derive(Debug, clap::Args)]
struct CalibrateArgs {
    /// Measured rows: CSV with a `buckets` column and one or more rate columns
    /// (mean per-thread ops/sec, as perf prints it); bucket 0 = the global hash.
    #[arg(long, value_name = "FILE.csv")]
    from: PathBuf,
    /// The data rows (0-based) to fit, at least two, e.g. 0,2 or 0,1,2,3.
    #[arg(long, value_name = "I,J,...")]
    rows: String,
    /// Threads of the measurement.
    #[arg(long, value_name = "T", value_parser = args::number)]
    threads: u64,
    /// CPUs of the machine.
    #[arg(long, value_name = "C", value_parser = args::number)]
    cpus: u64,
    /// NUMA nodes of the machine.
    #[arg(long, value_name = "N", default_value = "1", value_parser = args::number)]
    nodes: u64,
    /// The threads ran pinned to this node only.
    #[arg(long, value_name = "N", value_parser = args::number)]
    node: Option<u64>,
    /// Futex words per thread of the measurement.
    #[arg(short = 'f', long, value_name = "N", default_value = "1024", value_parser = args::number)]
    futexes: u64,
    /// Which rate column [default: the first].
    #[arg(long, value_name = "NAME")]
    column: Option<String>,
    /// Hasher the measured kernel used [default: from the column name, else jhash2].
    #[arg(long, value_name = "NAME")]
    algo: Option<String>,
    /// Profile whose fixed costs (hold, line migration, remote/local ratio, hash costs)
    /// are kept [default: the built-in two-socket template].
    #[arg(long, value_name = "PROFILE")]
    template: Option<String>,
    /// Where to write the fitted profile (TOML, atomically).
    #[arg(long, value_name = "PROFILE.toml")]
    out: PathBuf,
    #[command(flatten)]
    len: LengthArgs,
}

#[derive(Debug, clap::Args)]
struct ValidateArgs {
    /// Directory holding the published CSVs.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Calibration rows of buckets-240threads-256cpu.csv.
    #[arg(long, value_name = "I,J", default_value = "0,2")]
    rows: String,
    /// Profile whose fixed costs are kept; its [hash_ns] costs, if any, are used for every
    /// prediction (a reproducible run: seed-256cpu-template) [default: the built-in
    /// two-socket template, hash costs timed here].
    #[arg(long, value_name = "PROFILE")]
    template: Option<String>,
    /// Print the Markdown error summary (one row per table, as docs/sim.md shows it)
    /// instead of the cells.
    #[arg(long)]
    summary: bool,
    /// Leave one table out: every published cell predicted by the model calibrated
    /// without its table (and without the template figures derived from it), with its
    /// 80 % interval (`lo`, `hi`); the summary adds the interval coverage.
    #[arg(long)]
    cv: bool,
    /// With --cv: switch these refinements of the model off (comma list of
    /// steady-state-lines, seeded-start-order, spinner-heap, key-set-means, home-snoop,
    /// separate-remote-migration, pending-bit, lone-waiter-in-migration), to measure what
    /// each does to the out-of-sample error.
    #[arg(long, value_name = "LIST")]
    ablate: Option<String>,
    #[command(flatten)]
    len: LengthArgs,
    #[command(flatten)]
    out: OutputArgs,
}

pub(super) fn run(a: SimArgs) -> Result<(), CliError> {
    match a.sub {
        Some(SimSub::Calibrate(c)) => run_calibrate(c),
        Some(SimSub::Validate(v)) => run_validate(v),
        Some(SimSub::Profile(p)) => run_profile(p),
        None => run_sim(a.run),
    }
}

/// A profile argument: an existing file, else a built-in profile ([`args::machine_profile`]).
fn resolve_profile(arg: &str) -> Result<MachineProfile, CliError> {
    args::machine_profile(arg)
}

fn published_dir(arg: Option<PathBuf>) -> Result<PathBuf, CliError> {
    match arg {
        Some(d) => Ok(d),
        None => crate::assets::published_dir().map_err(|e| CliError::Runtime(e.to_string())),
    }
}

fn row_list(s: &str) -> Result<Vec<usize>, CliError> {
    let v: Vec<usize> = s
        .split(',')
        .map(|x| x.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| CliError::Usage(format!("--rows '{s}' must be row numbers like 0,2")))?;
    let mut u = v.clone();
    u.sort_unstable();
    u.dedup();
    if u.len() < 2 || u.len() != v.len() {
        return Err(CliError::Usage(format!(
            "--rows '{s}' must name at least two different rows, like 0,2"
        )));
    }
    Ok(v)
}

fn two_rows(s: &str) -> Result<[usize; 2], CliError> {
    let v: Vec<usize> = s
        .split(',')
        .map(|x| x.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| CliError::Usage(format!("--rows '{s}' must be two row numbers like 0,2")))?;
    match v[..] {
        [a, b] if a != b => Ok([a, b]),
        _ => Err(CliError::Usage(format!(
            "--rows '{s}' must name exactly two different rows, like 0,2"
        ))),
    }
}

/// Most simulated threads (as `bench`).
const MAX_SIM_THREADS: u64 = 16384;

fn parse_threads(s: &str) -> Result<Vec<usize>, CliError> {
    s.split(',')
        .map(|t| {
            crate::key::parse_number(t)
                .filter(|&n| (1..=MAX_SIM_THREADS).contains(&n))
                .map(|n| n as usize)
                .ok_or_else(|| {
                    CliError::Usage(format!(
                        "thread count '{t}' must be a number in 1..={MAX_SIM_THREADS}"
                    ))
                })
        })
        .collect()
}

/// `-b`: powers of two (0 = global hash) up to 2^24, as `dist` and `bench`.
fn sim_buckets(s: &str) -> Result<Vec<u64>, CliError> {
    let v = args::pow2_list(s, "buckets", true)?;
    match v.iter().find(|&&b| b > MAX_SIM_BUCKETS) {
        Some(b) => Err(CliError::Usage(format!(
            "bucket count '{b}' is too large; at most {MAX_SIM_BUCKETS} (2^24)"
        ))),
        None => Ok(v),
    }
}

fn check_futexes(f: u64) -> Result<usize, CliError> {
    if (1..=1024).contains(&f) {
        Ok(f as usize)
    } else {
        Err(CliError::Usage(format!(
            "futexes per thread '{f}' must be 1..=1024 for the simulated perf heap layout"
        )))
    }
}

fn progress(n: usize) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() && n > 1 {
        let pb = indicatif::ProgressBar::new(n as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("simulating {bar:40} {pos}/{len} {eta}")
                .expect("static template"),
        );
        pb
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// `-b` with `auto`/`auto-rfc` allowed among the numbers.
fn slot_list(s: &str) -> Result<Vec<Slots>, CliError> {
    let mut out = Vec::new();
    for part in s.split(',') {
        match part.trim() {
            "auto" => out.push(Slots::Auto),
            "auto-rfc" => out.push(Slots::AutoRfc),
            p => out.extend(sim_buckets(p)?.into_iter().map(Slots::Fixed)),
        }
    }
    Ok(out)
}

/// The `--kernel` presets, in the order given; `[None]` without the flag.
fn kernel_list(a: &SimRunArgs) -> Result<Vec<Option<Kernel>>, CliError> {
    match a.kernel.as_deref() {
        None => Ok(vec![None]),
        Some(s) => Ok(Kernel::parse_list(s)
            .map_err(CliError::Usage)?
            .into_iter()
            .map(Some)
            .collect()),
    }
}

/// `base` with the explicit layout, bucket-size, lock and refcount flags applied, checked
/// against the profile.
fn design_axes(a: &SimRunArgs, profile: &MachineProfile, base: Design) -> Result<Design, CliError> {
    let mut design = base;
    if let Some(l) = a.layout {
        design.bucket_bytes = match l {
            LayoutArg::Aligned => CACHE_LINE,
            LayoutArg::Packed => PACKED_BUCKET_BYTES,
        };
    }
    if let Some(b) = a.bucket_bytes {
        if !(1..=4096).contains(&b) {
            return Err(CliError::Usage(format!(
                "--bucket-bytes {b} must be 1..=4096"
            )));
        }
        design.bucket_bytes = b as u32;
    }
    if let Some(l) = a.lock {
        design.lock = match l {
            LockArg::Queued => LockKind::Queued,
            LockArg::Ticket => LockKind::Ticket,
        };
    }
    if let Some(r) = a.refcount {
        design.refcount = match r {
            RefcountArg::None => Refcount::None,
            RefcountArg::Shared => Refcount::Shared,
            RefcountArg::Percpu => Refcount::PerCpu,
        };
    }
    crate::sim::check_design(profile, &design).map_err(CliError::Usage)?;
    Ok(design)
}

/// The design axes from the preset and the explicit flags.
fn design_of(
    a: &SimRunArgs,
    profile: &MachineProfile,
    kernel: Option<Kernel>,
) -> Result<SimOptions, CliError> {
    let design = design_axes(
        a,
        profile,
        kernel.map_or_else(Design::default, Kernel::design),
    )?;
    let (mut global, mut global_nodes) = kernel.map_or((global_hash_size(profile.cpus), 1), |k| {
        k.global_hash(profile.cpus, profile.nodes)
    });
    if let Some(g) = a.global_buckets {
        if !g.is_power_of_two() || g > MAX_SIM_BUCKETS {
            return Err(CliError::Usage(format!(
                "--global-buckets {g} must be a power of two up to {MAX_SIM_BUCKETS} (2^24)"
            )));
        }
        global = g;
        global_nodes = global_nodes.min(g as u32);
    }
    let kernels = kernel_list(a)?;
    let default_b = if kernels.iter().flatten().any(|k| k.has_private_hash()) {
        "auto"
    } else if kernels.iter().all(Option::is_some) {
        "0"
    } else {
        "2..131072"
    };
    let mut slots = slot_list(a.buckets.as_deref().unwrap_or(default_b))?;
    if let Some(k) = kernel
        && !k.has_private_hash()
    {
        // `auto` is whatever the kernel gives a process: here, its global hash.
        for s in &mut slots {
            if *s == Slots::Auto {
                *s = Slots::AutoGlobal;
            }
        }
        if let Some(s) = slots
            .iter()
            .find(|s| !matches!(s, Slots::Fixed(0) | Slots::AutoGlobal))
        {
            return Err(CliError::Usage(format!(
                "-b {} needs a private futex hash, which kernel {} does not have (6.16-rc, 6.17+); use -b 0 or auto",
                s.label(),
                k.name()
            )));
        }
    }
    Ok(SimOptions {
        design,
        global_buckets: Some(global),
        global_nodes,
        slots: Some(slots),
        kernel: kernel.map_or_else(String::new, |k| k.name().to_string()),
    })
}

fn run_sim(a: SimRunArgs) -> Result<(), CliError> {
    a.out.check()?;
    if let Some(p) = &a.plot {
        args::check_output_path(p, "plot")?;
    }
    let profile = resolve_profile(a.profile.as_deref().unwrap_or_default())?;
    if let Some(file) = a.workload.strip_prefix("trace:") {
        return super::sim_trace::run(
            &profile,
            Path::new(file),
            &super::sim_trace::TraceSimArgs {
                threads_given: a.threads.is_some(),
                buckets: a.buckets.as_deref().unwrap_or("2..131072"),
                algo: &a.algo,
                think_scale: a.think_scale,
                out: &a.out,
                kernel_given: a.kernel.is_some(),
                node_given: a.node.is_some(),
                design: design_axes(&a, &profile, Design::default())?,
                global_buckets: a.global_buckets,
            },
        );
    }
    let workload =
        <SimWorkload as clap::ValueEnum>::from_str(&a.workload, false).map_err(CliError::Usage)?;
    if a.think_scale != 1.0 {
        return Err(CliError::Usage(format!(
            "--think-scale '{}' only applies to --workload trace:FILE",
            a.think_scale
        )));
    }
    if matches!(workload, SimWorkload::Lock) {
        return run_lock(&a, &profile);
    }
    if a.same_node {
        return Err(CliError::Usage(
            "--same-node only applies to --workload lock".into(),
        ));
    }
    let threads = match &a.threads {
        Some(t) => parse_threads(t)?,
        None => vec![profile.cpus as usize],
    };
    let node = match a.node {
        Some(n) if n >= u64::from(profile.nodes) => {
            return Err(CliError::Usage(format!(
                "--node {n} does not exist: profile '{}' has {} node(s)",
                profile.name, profile.nodes
            )));
        }
        n => n.map(|n| n as u32),
    };
    let all_opts: Vec<SimOptions> = kernel_list(&a)?
        .into_iter()
        .map(|k| design_of(&a, &profile, k))
        .collect::<Result<_, _>>()?;
    let opts = &all_opts[0];
    let sweep = SimSweep {
        threads,
        futexes: check_futexes(a.futexes)?,
        buckets: Vec::new(),
        hashers: args::algo_list(&a.algo, HashKey::DEFAULT)?,
        op: match workload {
            SimWorkload::Hash => SimOp::WaitFail,
            SimWorkload::Wake => SimOp::WakeNone,
            SimWorkload::Lock => unreachable!("handled by run_lock"),
        },
        node,
        len: a.len.length()?,
        seed: a.seed,
    };
    // Refused before the note below and before any hash is timed.
    for o in &all_opts {
        check_sweep(&profile, &sweep, o).map_err(CliError::Usage)?;
    }
    let cpus_used = node.map_or(profile.cpus, |n| profile.node_cpus(n).len() as u32);
    if let Some(&t) = sweep.threads.iter().find(|&&t| t > cpus_used as usize) {
        eprintln!(
            "futexhash: note: {t} threads on {cpus_used} CPUs: threads sharing a CPU are time-sliced \
             ({:.0} µs slices, modelled); the figures measure the scheduler as much as the table",
            profile.timeslice_ns / 1000.0
        );
    }
    let pb = progress(
        all_opts.len()
            * sweep.threads.len()
            * opts.slots.as_ref().map_or(0, Vec::len)
            * sweep.hashers.len(),
    );
    // SIGINT/SIGTERM: no further configuration starts; those that finished are printed
    // and written, and the exit status is 130 (as `bench`).
    crate::bench::interrupt::install();
    let mut records = Vec::new();
    for o in &all_opts {
        if crate::bench::interrupt::requested() {
            break;
        }
        records.extend(
            run_sweep_until(
                &profile,
                &sweep,
                o,
                || pb.inc(1),
                crate::bench::interrupt::requested,
            )
            .map_err(CliError::Usage)?,
        );
    }
    pb.finish_and_clear();
    let mut noted: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| r.hash_ns_source == "measured") {
        if !noted.contains(&r.bench.algo.as_str()) {
            noted.push(&r.bench.algo);
            eprintln!(
                "futexhash: note: profile '{}' has no hash cost for {}: timed here, {:.2} ns",
                profile.name, r.bench.algo, r.hash_ns
            );
        }
    }
    let benches: Vec<BenchRecord> = records.iter().map(|r| r.bench.clone()).collect();
    if let Some(path) = &a.plot {
        plot_records(path, &benches, &profile.name)?;
    }
    let text = match a.out.format {
        Format::Table if all_opts.len() > 1 => {
            super::sim_ab::ab_table(&profile.name, &records, super::sim_ab::record_interval)
        }
        Format::Table => {
            let global = opts
                .global_buckets
                .unwrap_or_else(|| global_hash_size(profile.cpus));
            let d = opts.design;
            format!(
                "# simulated on profile: {}{}\n# design: {} buckets ({} B), {} lock, refcount {}; buckets 0 = global hash of {global} buckets\n# mean per-thread ops/sec\n{}{}",
                profile.name,
                if opts.kernel.is_empty() {
                    String::new()
                } else {
                    format!("\n# kernel preset: {}", opts.kernel)
                },
                crate::sim::sweep::layout_name(d.bucket_bytes),
                d.bucket_bytes,
                crate::sim::sweep::lock_name(d.lock),
                crate::sim::sweep::refcount_name(d.refcount),
                sweep_table(&benches),
                interval_tables(&records)
            )
        }
        Format::Csv => sim_csv(&records)?,
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    a.out.emit(&text)?;
    if crate::bench::interrupt::requested() {
        return Err(CliError::Interrupted);
    }
    Ok(())
}

/// The table output's interval sections: each rate's 80 % interval, and with several
/// hashers each one's ratio to the first at the same threads and size, its 80 % interval
/// from the common-random-number replications, and whether the two are told apart.
fn interval_tables(records: &[SimRecord]) -> String {
    let mut algos: Vec<&str> = Vec::new();
    let mut rows: Vec<(usize, u64)> = Vec::new();
    for r in records {
        if !algos.contains(&r.bench.algo.as_str()) {
            algos.push(&r.bench.algo);
        }
        if !rows.contains(&(r.bench.threads, r.bench.buckets)) {
            rows.push((r.bench.threads, r.bench.buckets));
        }
    }
    let find = |t: usize, b: u64, a: &str| {
        records
            .iter()
            .find(|r| r.bench.threads == t && r.bench.buckets == b && r.bench.algo == a)
    };
    let mut head = vec!["threads".to_string(), "buckets".to_string()];
    head.extend(algos.iter().map(|a| a.to_string()));
    let mut t = TextTable::new(head);
    for &(th, b) in &rows {
        let mut row = vec![th.to_string(), b.to_string()];
        for a in &algos {
            row.push(find(th, b, a).map_or("-".into(), |r| {
                format!(
                    "{} … {}",
                    fmt_grouped(r.ops_per_sec_lo, 0),
                    fmt_grouped(r.ops_per_sec_hi, 0)
                )
            }));
        }
        t.push(row);
    }
    let mut s = format!(
        "\n# 80 % prediction interval of each rate (run to run, calibration, model error as measured by sim validate --cv)\n{}",
        t.render()
    );
    if algos.len() > 1 {
        let mut head = vec!["threads".to_string(), "buckets".to_string()];
        head.extend(algos[1..].iter().map(|a| a.to_string()));
        let mut t = TextTable::new(head);
        for &(th, b) in &rows {
            let mut row = vec![th.to_string(), b.to_string()];
            for a in &algos[1..] {
                let cell = match (find(th, b, a), find(th, b, algos[0])) {
                    (Some(x), Some(y)) => {
                        let q = ratio(&x.replications, &y.replications);
                        format!(
                            "{:.3} [{:.3}, {:.3}]{}",
                            q.ratio,
                            q.lo,
                            q.hi,
                            if q.told_apart { "" } else { " not told apart" }
                        )
                    }
                    _ => "-".into(),
                };
                row.push(cell);
            }
            t.push(row);
        }
        s.push_str(&format!(
            "\n# ratio to {} at the same threads and size, with its 80 % interval from the replications (common random numbers; the model error is taken to cancel): \"not told apart\" when it holds 1\n{}",
            algos[0],
            t.render()
        ));
    }
    s
}

/// CSV of sim records: the bench columns, then the simulator's own.
fn sim_csv(records: &[SimRecord]) -> Result<String, CliError> {
    let rt = |e: csv::Error| CliError::Runtime(e.to_string());
    let benches: Vec<BenchRecord> = records.iter().map(|r| r.bench.clone()).collect();
    let base = output::to_csv(&benches).map_err(rt)?;
    let mut rd = csv::Reader::from_reader(base.as_bytes());
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = rd.headers().map_err(rt)?.iter().map(String::from).collect();
    header.extend(
        [
            "hash_ns",
            "hash_ns_source",
            "profile",
            "kernel",
            "lock",
            "refcount",
            "bucket_bytes",
            "slots",
            "threads_per_cpu",
            "ops_per_sec_lo",
            "ops_per_sec_hi",
        ]
        .map(String::from),
    );
    w.write_record(&header).map_err(rt)?;
    for (row, r) in rd.records().zip(records) {
        let mut cells: Vec<String> = row.map_err(rt)?.iter().map(String::from).collect();
        cells.extend([
            r.hash_ns.to_string(),
            r.hash_ns_source.to_string(),
            r.profile.clone(),
            r.kernel.clone(),
            r.lock.to_string(),
            r.refcount.to_string(),
            r.bucket_bytes.to_string(),
            r.slots.clone(),
            r.threads_per_cpu.to_string(),
            r.ops_per_sec_lo.to_string(),
            r.ops_per_sec_hi.to_string(),
        ]);
        w.write_record(&cells).map_err(rt)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    Ok(String::from_utf8(bytes).expect("csv output is UTF-8"))
}

/// `--workload lock`: one simulated futex_numa run, printed as futex_numa's
/// "contenders:" line per node plus the record.
fn run_lock(a: &SimRunArgs, profile: &MachineProfile) -> Result<(), CliError> {
    // futex_numa squashes every node to one bucket: a bucket count has nothing to set.
    if let Some(b) = &a.buckets {
        return Err(CliError::Usage(format!(
            "-b '{b}' does not apply to --workload lock (futex_numa squashes every node to one \
             bucket); drop -b"
        )));
    }
    // The lock test is the 6.x futex_numa run: queued lock, aligned buckets, no reference,
    // jhash2; a design flag would be silently ignored.
    let ignored = [
        ("--kernel", a.kernel.is_some()),
        ("--layout", a.layout.is_some()),
        ("--bucket-bytes", a.bucket_bytes.is_some()),
        ("--lock", a.lock.is_some()),
        ("--refcount", a.refcount.is_some()),
        ("--global-buckets", a.global_buckets.is_some()),
        ("--algo", a.algo != "jhash2"),
        ("--node", a.node.is_some()),
        ("--plot", a.plot.is_some()),
        ("--futexes", a.futexes != 1024),
        ("--seed", a.seed != 1),
    ];
    if let Some((flag, _)) = ignored.iter().find(|(_, given)| *given) {
        return Err(CliError::Usage(format!(
            "{flag} does not apply to --workload lock (the futex_numa test of Linux 6.x: one \
             futex per node, queued lock, aligned buckets, jhash2, every node's CPUs); drop {flag}"
        )));
    }
    let contenders = match &a.threads {
        Some(t) => match parse_threads(t)?[..] {
            [n] => n,
            _ => {
                return Err(CliError::Usage(
                    "--workload lock takes one contender count per node in -t".into(),
                ));
            }
        },
        None => 10,
    };
    let rec = crate::sim::sweep::run_lock_test(profile, contenders, a.same_node, a.len.length()?)
        .map_err(CliError::Usage)?;
    let text = match a.out.format {
        Format::Table => {
            let per_node = rec.ops_per_sec * contenders as f64;
            let mut s = format!(
                "# simulated futex_numa on profile: {}
# {} node(s) x {contenders} contenders, every node squashed to one bucket{}
",
                profile.name,
                profile.nodes,
                if a.same_node {
                    "; all futexes forced to node 0"
                } else {
                    ""
                }
            );
            // The nodes are symmetric in the model, so every node's line is the same.
            for node in 0..profile.nodes {
                s.push_str(&format!(
                    "node {node}: contenders: {} loops/sec\n",
                    per_node.round() as u64
                ));
            }
            s
        }
        Format::Csv => output::to_csv(&[rec]).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Json => output::to_json(&[rec]).map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    a.out.emit(&text)
}

fn plot_records(path: &Path, records: &[BenchRecord], title: &str) -> Result<(), CliError> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in records.iter().filter(|r| r.buckets > 0) {
        let label = format!("{} t={}", r.algo, r.threads);
        let point = (r.buckets as f64, r.ops_per_sec);
        match series.iter_mut().find(|s| s.0 == label) {
            Some(s) => s.1.push(point),
            None => series.push((label, vec![point])),
        }
    }
    line_plot_svg(
        path,
        &format!("simulated: {title}"),
        "private hash slots",
        "ops/sec per thread",
        &series,
        true,
    )
    .map_err(|e| CliError::Usage(format!("cannot write plot '{}': {e}", path.display())))
}

fn run_calibrate(c: CalibrateArgs) -> Result<(), CliError> {
    args::check_output_path(&c.out, "profile")?;
    let rows = row_list(&c.rows)?;
    let table = read_published(&c.from).map_err(CliError::Usage)?;
    let col = match &c.column {
        None => 0,
        Some(name) => table
            .columns
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "column '{name}' is not in '{}'; columns: {}",
                    c.from.display(),
                    table.columns.join(", ")
                ))
            })?,
    };
    let algo = c
        .algo
        .clone()
        .or_else(|| hasher_for_column(&table.columns[col]).map(String::from))
        .unwrap_or_else(|| "jhash2".into());
    let hasher = args::one_algo(&algo, HashKey::DEFAULT)?;
    if c.cpus == 0 || c.nodes == 0 || c.cpus % c.nodes != 0 || c.cpus > 65536 {
        return Err(CliError::Usage(format!(
            "--cpus {} must be a positive multiple of --nodes {} (at most 65536)",
            c.cpus, c.nodes
        )));
    }
    let threads = parse_threads(&c.threads.to_string())?;
    let mut template = match &c.template {
        Some(t) => resolve_profile(t)?,
        None => seed_box_template(),
    };
    if template.cpus != c.cpus as u32 || template.nodes != c.nodes as u32 {
        // A different machine than the template's: keep its costs, take the topology
        // from the flags, without SMT unless the template's cores still divide.
        template.cpus = c.cpus as u32;
        template.nodes = c.nodes as u32;
        if template.validate().is_err() {
            template.threads_per_core = 1;
        }
    }
    template.validate().map_err(|e| {
        CliError::Usage(format!(
            "template with --cpus {} --nodes {}: {e}",
            c.cpus, c.nodes
        ))
    })?;
    let cpus: Vec<u32> = match c.node {
        Some(n) if n >= c.nodes => {
            return Err(CliError::Usage(format!(
                "--node {n} does not exist with --nodes {}",
                c.nodes
            )));
        }
        Some(n) => template.node_cpus(n as u32),
        None => (0..template.cpus).collect(),
    };
    let noise = read_noise(&c.from, table.rows.len());
    let pick = |i: usize| -> Result<Observation, CliError> {
        let (b, r) = table.rows.get(i).ok_or_else(|| {
            CliError::Usage(format!(
                "row {i} does not exist: '{}' has {} data rows (0-based)",
                c.from.display(),
                table.rows.len()
            ))
        })?;
        Ok(Observation {
            buckets: *b,
            ops_per_sec: r[col],
            noise: noise[i],
        })
    };
    let scenario = Scenario {
        keys_per_thread: perf_keys_per_thread(threads[0], check_futexes(c.futexes)?, 1)
            .map_err(CliError::Usage)?,
        cpus,
        global_buckets: global_hash_size(template.cpus),
        op: SimOp::WaitFail,
        design: Design::default(),
        global_nodes: 1,
        mechanisms: Default::default(),
    };
    let obs: Vec<Observation> = rows.iter().map(|&i| pick(i)).collect::<Result<_, _>>()?;
    // What calibrate would refuse, refused before the hash is timed and anything simulated.
    crate::sim::calibrate::check_calibration(&template, &scenario, &obs)
        .map_err(CliError::Usage)?;
    // The measured kernel's hash: the template's figure only if the template is this
    // machine's; otherwise timed here.
    let cost = hash_cost(&template, &hasher).map_err(CliError::Usage)?;
    let fit = calibrate(
        &template,
        &scenario,
        &hasher,
        cost.ns,
        &obs,
        c.len.length()?,
    )
    .map_err(CliError::Usage)?;
    let mut fitted = fit.profile.clone();
    fitted.name = format!(
        "{} CPUs, {} node(s): calibrated on rows {} ({} threads, {}) of {}",
        c.cpus,
        c.nodes,
        rows.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(","),
        threads[0],
        algo,
        c.from.file_name().map_or_else(
            || c.from.display().to_string(),
            |f| f.to_string_lossy().into_owned()
        )
    );
    crate::render::write_atomic(Some(&c.out), fitted.to_toml().as_bytes()).map_err(|e| {
        CliError::Runtime(format!("cannot write profile '{}': {e}", c.out.display()))
    })?;
    let say = |what: &str, f: &crate::sim::calibrate::Fitted| {
        if f.determined {
            format!("{what} = {:.1} ± {:.1} ns", f.value, f.sigma)
        } else {
            format!(
                "{what} not determined by these rows (halving or doubling it moves them by less than their noise); kept the template's {:.1} ns",
                f.value
            )
        }
    };
    eprintln!(
        "futexhash: fitted {}; {}; handoff_remote_ns = {:.1}; RMS residual {:.2}% over {} rows; hash cost {:.2} ns ({}); wrote {} (no hash costs: they are timed where the profile is used)",
        say("outside_ns", &fit.outside),
        say("handoff_local_ns", &fit.handoff),
        fitted.handoff_remote_ns,
        fit.rms_residual * 100.0,
        obs.len(),
        cost.ns,
        cost.source.as_str(),
        c.out.display()
    );
    Ok(())
}

/// Per data row, the relative noise of the rate: `stderr_pct / 100` from a bench CSV,
/// else [`DEFAULT_NOISE`].
fn read_noise(path: &Path, rows: usize) -> Vec<f64> {
    let fallback = vec![DEFAULT_NOISE; rows];
    let Ok(text) = std::fs::read_to_string(path) else {
        return fallback;
    };
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return fallback;
    };
    let Some(col) = header.split(',').position(|h| h.trim() == "stderr_pct") else {
        return fallback;
    };
    let v: Vec<f64> = lines
        .map(|l| {
            l.split(',')
                .nth(col)
                .and_then(|x| x.trim().parse::<f64>().ok())
                .filter(|x| x.is_finite() && *x > 0.0)
                .map_or(DEFAULT_NOISE, |x| x / 100.0)
        })
        .collect();
    if v.len() == rows { v } else { fallback }
}

fn run_validate(v: ValidateArgs) -> Result<(), CliError> {
    v.out.check()?;
    let rows = two_rows(&v.rows)?;
    let data = published_dir(v.data)?;
    let template = match &v.template {
        Some(t) => resolve_profile(t)?,
        None => seed_box_template(),
    };
    let len = v.len.length()?;
    let published_runs = read_runs(&data).map_err(CliError::Usage)?;
    if v.ablate.is_some() && !v.cv {
        return Err(CliError::Usage(
            "--ablate applies to --cv only (the out-of-sample error is what it measures)".into(),
        ));
    }
    if v.cv {
        let mut mech = crate::sim::Mechanisms::default();
        for name in v.ablate.iter().flat_map(|l| l.split(',')) {
            match mech.switch_mut(name.trim()) {
                Some(on) => *on = false,
                None => {
                    return Err(CliError::Usage(format!(
                        "--ablate '{name}' is not a mechanism: one of {}",
                        crate::sim::Mechanisms::NAMES.join(", ")
                    )));
                }
            }
        }
        if v.rows != "0,2" {
            return Err(CliError::Usage(format!(
                "--rows '{}' does not apply to --cv: its protocol calibrates on rows 0,2 (docs/sim.md, \"Validation protocol\")",
                v.rows
            )));
        }
        let cv = validate_cv(&data, &template, len, mech).map_err(CliError::Usage)?;
        let text = if v.summary {
            cv_summary(&cv)
        } else {
            match v.out.format {
                Format::Json => {
                    output::to_json(&cv.rows).map_err(|e| CliError::Runtime(e.to_string()))?
                }
                Format::Csv => {
                    output::to_csv(&cv.rows).map_err(|e| CliError::Runtime(e.to_string()))?
                }
                Format::Table => cv_table(&cv),
            }
        };
        return v.out.emit(&text);
    }
    let (profile, old, results) =
        validate_all(&data, &template, rows, len).map_err(CliError::Usage)?;
    let runs = runs_line(
        published_runs
            .as_ref()
            .and_then(|r| run_spread(r, &results))
            .as_ref(),
    );
    let text = if v.summary {
        validation_summary(&results, &runs)
    } else {
        match v.out.format {
            Format::Json => {
                output::to_json(&results).map_err(|e| CliError::Runtime(e.to_string()))?
            }
            Format::Csv => {
                output::to_csv(&results).map_err(|e| CliError::Runtime(e.to_string()))?
            }
            Format::Table => format!(
                "{}{runs}{}# seed 003 box: {}: outside_ns = {:.1}, handoff_local_ns = {:.1}, handoff_remote_ns = {:.1}\n",
                validation_tables(&profile, &results),
                order_line(&results, TABLE_2013),
                old.name,
                old.outside_ns,
                old.handoff_local_ns,
                old.handoff_remote_ns
            ),
        }
    };
    v.out.emit(&text)
}

/// One Markdown row per table (and one for the three 2024 tables together): cells,
/// median and 90th percentile of |ln(predicted / published)| over the cells not fitted.
fn validation_summary(rows: &[ValidationRow], runs: &str) -> String {
    let mut tables: Vec<&str> = Vec::new();
    for r in rows {
        if !tables.contains(&r.table.as_str()) {
            tables.push(&r.table);
        }
    }
    let mut s = String::from(
        "| table | cells (fitted) | median \\|ln(pred/pub)\\| | p90 | max |\n|---|---:|---:|---:|---:|\n",
    );
    let mut line = |name: &str, these: Vec<&ValidationRow>| {
        let free: Vec<&ValidationRow> = these.iter().copied().filter(|r| !r.fitted).collect();
        s.push_str(&format!(
            "| {name} | {} ({}) | {:.3} | {:.3} | {:.3} |\n",
            these.len(),
            these.len() - free.len(),
            abs_log_error_quantile(free.iter().copied(), 0.5),
            abs_log_error_quantile(free.iter().copied(), 0.9),
            abs_log_error_quantile(free.iter().copied(), 1.0),
        ));
    };
    for t in &tables {
        line(t, rows.iter().filter(|r| r.table == *t).collect());
    }
    line(
        "all three 2024 tables",
        rows.iter()
            .filter(|r| r.table.ends_with("256cpu.csv"))
            .collect(),
    );
    s.push_str(runs);
    s.push_str(&order_line(rows, TABLE_2013));
    s
}

/// The `--cv --summary` Markdown: per held-out table and over every `cv` cell, the
/// error quantiles, the mean signed error and the 80 % intervals' coverage and width;
/// then each fold's line-transfer choice.
fn cv_summary(cv: &CrossValidation) -> String {
    let mut s = String::from(
        "| held-out table | cells cv (fit) | median \\|ln(pred/pub)\\| | p90 | mean signed | rms | 80 % coverage | median ln(hi/lo) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut line = |name: &str, these: Vec<&ValidationRow>| {
        let st = cv_stats(these.iter().copied());
        s.push_str(&format!(
            "| {name} | {} ({}) | {:.3} | {:.3} | {:+.3} | {:.3} | {:.0} % | {:.3} |\n",
            st.cells,
            these.len() - st.cells,
            st.median,
            st.p90,
            st.mean_signed,
            st.rms,
            100.0 * st.coverage,
            st.median_width,
        ));
    };
    for t in CV_TABLES {
        line(t, cv.rows.iter().filter(|r| r.table == t).collect());
    }
    line("all tables", cv.rows.iter().collect());
    let choices: Vec<String> = cv
        .line_choice
        .iter()
        .map(|(t, c)| format!("{t}: {c}"))
        .collect();
    s.push_str(&format!(
        "\nline transfers chosen in each fold (smallest median over the box's other tables): {}\n",
        choices.join("; ")
    ));
    s
}

/// `--cv` as a table: the cells per held-out table (predicted/published, `*` = fit cell),
/// each with its interval as ratios to the published figure, then the summary.
fn cv_table(cv: &CrossValidation) -> String {
    let mut s = String::new();
    for t in CV_TABLES {
        let mut tt = TextTable::new(
            [
                "config",
                "x",
                "published",
                "predicted",
                "lo/pub",
                "pred/pub",
                "hi/pub",
                "inside",
            ]
            .map(String::from)
            .to_vec(),
        );
        for r in cv.rows.iter().filter(|r| r.table == t) {
            let (lo, hi) = (r.lo.unwrap_or(f64::NAN), r.hi.unwrap_or(f64::NAN));
            let decimals = if r.published < 100.0 { 2 } else { 0 };
            tt.push(vec![
                r.config.clone(),
                r.x.to_string(),
                fmt_grouped(r.published, decimals),
                fmt_grouped(r.predicted, decimals),
                format!("{:.2}", lo / r.published),
                format!("{:.2}{}", r.ratio, if r.role == "fit" { "*" } else { "" }),
                format!("{:.2}", hi / r.published),
                if lo <= r.published && r.published <= hi {
                    "yes"
                } else {
                    "no"
                }
                .into(),
            ]);
        }
        s.push_str(&format!("\n{t} (held out):\n{}", tt.render()));
    }
    s.push('\n');
    s.push_str(&cv_summary(cv));
    s
}

/// One line: how much the published runs behind the 240-thread table disagree, and how
/// many predictions fall within them (empty without the runs file).
fn runs_line(spread: Option<&RunSpread>) -> String {
    let Some(r) = spread else {
        return String::new();
    };
    let widest: Vec<String> = r
        .spread
        .iter()
        .take(2)
        .map(|(b, d)| format!("{d:.3} ({b} slots)"))
        .collect();
    format!(
        "\n{TABLE_240}: its {} published runs per cell differ by ln(max/min) up to {}, a median of {:.3} over its {} cells; the prediction lies within the runs' range at {} of {} unfitted cells, and beyond it by a median of {:.3}\n",
        r.runs,
        widest.join(", then "),
        r.spread_median,
        r.spread.len(),
        r.inside.0,
        r.inside.1,
        r.beyond_median
    )
}

/// One line: at how many rows of a threads table the predicted columns come in the
/// published order, where not, and the closest call.
fn order_line(rows: &[ValidationRow], table: &str) -> String {
    let order = column_order(rows, table);
    if order.is_empty() {
        return String::new();
    }
    let wrong: Vec<String> = order
        .iter()
        .filter(|o| !o.right)
        .map(|o| {
            format!(
                "{} ({} predicted {:.3}× {})",
                o.x, o.closest.1, o.closest.2, o.closest.0
            )
        })
        .collect();
    let closest = order
        .iter()
        .min_by(|a, b| a.closest.2.total_cmp(&b.closest.2))
        .expect("non-empty");
    format!(
        "\n{table}: columns in the published order at {} of {} rows{}; closest pair: {} vs {} at {} ({:.3}×)\n",
        order.len() - wrong.len(),
        order.len(),
        if wrong.is_empty() {
            String::new()
        } else {
            format!(", not at {}", wrong.join(", "))
        },
        closest.closest.1,
        closest.closest.0,
        closest.x,
        closest.closest.2
    )
}

/// `sim profile --this-machine`: topology from sysfs, hash costs of the seed hashers timed
/// here; the costs calibration fits are the 2-CPU template's starting values.
fn run_profile(p: ProfileArgs) -> Result<(), CliError> {
    if !p.this_machine {
        return Err(CliError::Usage(
            "sim profile needs --this-machine (the only source of a profile it knows)".into(),
        ));
    }
    args::check_output_path(&p.out, "profile")?;
    let topo = crate::sim::profile::read_sysfs_topology(Path::new("/sys/devices/system"))
        .map_err(CliError::Runtime)?;
    let mut prof = MachineProfile::minimal(
        &format!(
            "this machine: {} CPUs, {} cores, {} node(s) (sysfs); costs are a template until `sim calibrate` fits them",
            topo.cpus, topo.cores, topo.nodes
        ),
        topo.cpus,
        topo.nodes,
    );
    prof.threads_per_core = topo.threads_per_core;
    if prof.threads_per_core > 1 {
        // Intel's Hyper-Threading figure (see seed003_box_template), until measured.
        prof.smt_slowdown = Some(2.0 / 1.3);
    }
    prof.outside_ns = 250.0;
    prof.hold_ns = 30.0;
    prof.handoff_local_ns = 50.0;
    prof.handoff_remote_ns = if topo.nodes > 1 { 200.0 } else { 50.0 };
    prof.line_miss_ns = 20.0;
    prof.ticket_spinner_ns = Some(20.0);
    for h in args::algo_list("seed", HashKey::DEFAULT)? {
        let ns = crate::sim::hashcost::measure_hash_ns(&h).map_err(CliError::Runtime)?;
        prof.hash_ns
            .insert(h.name().to_string(), (ns * 1000.0).round() / 1000.0);
    }
    prof.validate().map_err(|e| {
        CliError::Runtime(format!(
            "the topology read from sysfs does not make a profile: {e}"
        ))
    })?;
    crate::render::write_atomic(Some(&p.out), prof.to_toml().as_bytes()).map_err(|e| {
        CliError::Runtime(format!("cannot write profile '{}': {e}", p.out.display()))
    })?;
    eprintln!(
        "futexhash: wrote {}: {} CPUs, {} threads per core, {} node(s); hash costs of the seed hashers timed here",
        p.out.display(),
        topo.cpus,
        topo.threads_per_core,
        topo.nodes
    );
    Ok(())
}

/// One table per published file: rows = buckets, per column `published / predicted /
/// ratio`; then the RMS log error per table.
fn validation_tables(profile: &MachineProfile, rows: &[ValidationRow]) -> String {
    let mut s = format!(
        "# profile: {}\n# fitted: outside_ns = {:.1}, hold_ns = {:.1}, handoff_local_ns = {:.1}, handoff_remote_ns = {:.1}, line_miss_ns = {:.1}{}\n",
        profile.name,
        profile.outside_ns,
        profile.hold_ns,
        profile.handoff_local_ns,
        profile.handoff_remote_ns,
        profile.line_miss_ns,
        profile
            .line_miss_remote_ns
            .map_or(String::new(), |r| format!(", line_miss_remote_ns = {r:.1}"))
    );
    let mut tables: Vec<&str> = Vec::new();
    for r in rows {
        if !tables.contains(&r.table.as_str()) {
            tables.push(&r.table);
        }
    }
    for table in tables {
        let these: Vec<&ValidationRow> = rows.iter().filter(|r| r.table == table).collect();
        let mut algos: Vec<&str> = Vec::new();
        let mut buckets: Vec<u64> = Vec::new();
        for r in &these {
            if !algos.contains(&r.config.as_str()) {
                algos.push(&r.config);
            }
            if !buckets.contains(&r.x) {
                buckets.push(r.x);
            }
        }
        s.push_str(&format!(
            "\n{table}: predicted/published (RMS log error {:.3}; * = calibration row)\n",
            rms_log_error(these.iter().copied())
        ));
        let single = algos.len() == 1;
        let mut headers = vec![if table.contains("2013") {
            "threads".to_string()
        } else if table.contains("futex_numa") {
            "contenders/node".to_string()
        } else if table.contains("pinning") {
            "node mask".to_string()
        } else {
            "buckets".to_string()
        }];
        if single {
            headers.extend(["published".into(), "predicted".into(), "ratio".into()]);
        } else {
            headers.extend(algos.iter().map(|a| a.to_string()));
        }
        let mut t = TextTable::new(headers);
        for b in buckets {
            let mut row = vec![b.to_string()];
            for a in &algos {
                let Some(r) = these.iter().find(|r| r.x == b && r.config == *a) else {
                    row.push("-".into());
                    continue;
                };
                let ratio = format!("{:.2}{}", r.ratio, if r.fitted { "*" } else { "" });
                if single {
                    // Rates as integers; the futex_numa figure is a ratio (≈ 3).
                    let decimals = if r.published < 100.0 { 2 } else { 0 };
                    row.push(fmt_grouped(r.published, decimals));
                    row.push(fmt_grouped(r.predicted, decimals));
                }
                row.push(ratio);
            }
            t.push(row);
        }
        s.push_str(&t.render());
    }
    s
}

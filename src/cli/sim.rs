//! `futexhash sim`: predict `perf bench futex hash` on a machine profile (the request is
//! [`crate::sim::request::SimRequest`]); `sim profile --this-machine`: a profile template of
//! the machine it runs on. `sim calibrate` is [`super::sim_calibrate`], `sim validate`
//! [`super::sim_validate`], the kernel A/B table [`super::sim_ab`] and trace replay
//! [`super::sim_trace`].

use super::sim_args::{LengthArgs, parse_threads, resolve_profile};
use super::sim_calibrate::CalibrateArgs;
use super::sim_validate::ValidateArgs;
use super::{CliError, OutputArgs, args};
use crate::hashers::HashKey;
use crate::render::output::wrap_comment;
use crate::render::{Format, MAIL_WIDTH, TextTable, fmt_grouped, output};
use crate::sim::calibrate::global_hash_size;
use crate::sim::kernel::Kernel;
use crate::sim::profile::MachineProfile;
use crate::sim::request::{SimRequest, futexes_per_thread, timed_hash_costs};
use crate::sim::sweep::{LockTestRecord, SimOptions, SimRecord, SimSweep, Slots};
use crate::sim::uncertainty::ratio;
use crate::sim::validate::MAX_SIM_BUCKETS;
use crate::sim::{CACHE_LINE, Design, LockKind, PACKED_BUCKET_BYTES, Refcount, SimOp};
use crate::throughput::record::{BenchRecord, sweep_table};
use std::path::{Path, PathBuf};

/// `sim --help`'s closing section: when not to trust the simulator, with the quoted
/// out-of-sample figures ([`crate::sim::uncertainty::QUOTED`], from `sim validate --cv`).
/// Wrapped here at [`MAIL_WIDTH`], continuation lines indented two spaces: clap prints
/// it as it is given (it wraps only with its `wrap_help` feature, which this build does
/// not have), and the figures make its lines as long as they come out.
pub(super) fn trust_help() -> String {
    let q = crate::sim::uncertainty::quoted_error();
    let text = format!(
        "When not to trust the simulator (docs/sim.md says more):\n\
         - Out of sample (`sim validate --cv --template seed-256cpu-template`: each published \
         table predicted by the model calibrated without it; the template states the hash \
         costs, without it they are timed on your machine and the figures move in the third \
         decimal) the median |ln(pred/pub)| is {:.3} and the p90 {:.3} over {} \
         cells (mean signed {:+.3}); the 80 % intervals held {:.0} % of them, median width \
         ln(hi/lo) {:.3}. On the four boxes the model was not built on (a734d9fca84e's \
         dual-socket Skylake and Zen3 runs; a 4-socket Xeon E7-8890 v3 and a 2-socket \
         E5-2650, scored by a protocol committed before their cells were predicted), \
         calibrated on two rows each as a user calibrates theirs, with their \
         microarchitectures' published line transfers: median {:.3}, p90 {:.3}, \
         {:.0} % inside, over {} cells. That is the error to expect on your box, not the \
         smaller in-sample figures of plain `sim validate`.\n\
         - Shown: seed 000's 256-CPU box at 240 threads (slots and hashers) from two of its \
         rows, its pinning figures and its node-pinned 110-thread table (that one only under \
         a cross-node transfer figure the seed does not give); seed 002's futex_numa ratio. \
         Weak: other boxes (above), and runs bound to one node of them, predicted from an \
         all-node calibration (of the two boxes that have them, the E5 within the 0.06 \
         median wanted, the E7 far from it: docs/sim.md); seed 003's 2013 box (ticket \
         locks, packed buckets; its aligned-only column is far too slow).\n\
         - Not shown at all: trace replay, kernels and designs no exam has scored (the \
         6.16, 6.17, 6.18 and 7.3 presets, the per-CPU reference).\n\
         - Failed: the one patch predicted blind (7.2's a734d9fca84e on a 2-socket Skylake-SP, \
         112 threads): every sign right, but the private rows' gains and the private/global \
         level far off (docs/sim.md, \"The exam\"). Do not trust a patch's size, or the \
         private table's level, on a box the model was not calibrated on.\n\
         - Failed: the shared reference count (--refcount shared, 6.16-rc), against v11's \
         immutable private hash on three boxes: its cost off by -1.47 to +0.23 in ln, 4 of 6 \
         published ratios outside their range (docs/sim.md, \"A second exam\"). The sign is \
         right and both lose over 80 %, but its effect is off by up to 4.3x and the rate \
         under it by up to 2.8x.\n\
         - Every rate's interval carries the model error of an unseen machine (sd {:.3} in \
         ln; with the shared reference on a private table, the {:.3} its exam measured, a \
         rule adopted after that exam). Two hashers of one run are compared by their ratio's interval from the \
         replications alone (common random numbers; the model error is taken to cancel): \
         \"not told apart\" when it holds 1, and a told-apart pair whose ratio is within \
         that error is a statement about the model, not yet about a machine. Two --kernel \
         presets (the A/B table) are compared by the widest change their two rates' \
         intervals allow, model error included: \"not told apart\" when that holds 0.",
        q.all.median,
        q.all.p90,
        q.all.n_cells,
        q.all.mean_signed,
        100.0 * q.all.coverage,
        q.all.median_width,
        q.new_boxes.median,
        q.new_boxes.p90,
        100.0 * q.new_boxes.coverage,
        q.new_boxes.n_cells,
        q.model_sd,
        crate::sim::uncertainty::SHARED_REFERENCE_SD
    );
    crate::render::output::wrap_prose(&text, MAIL_WIDTH)
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
    /// Kernel presets of the design axes, a comma list (explicit axis flags override
    /// them): 3.12, 3.13, 6.15, 6.16-rc, 6.16, 6.17, 6.18, 7.2, 7.3. With two or more the
    /// table is the A/B comparison against the first.
    #[arg(long, value_name = "VERSION[,VERSION...]")]
    kernel: Option<String>,
    /// Bucket layout [default: aligned, or the preset's].
    #[arg(long, value_enum)]
    layout: Option<LayoutArg>,
    /// Bytes per bucket (overrides --layout): a multiple of 8 from 16 to 4096.
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
    /// With --workload trace:FILE: factor on the captured times, the threads' starts and
    /// the think time between a thread's calls (1 = as captured, 0 = back to back; at
    /// most 1000000).
    // Kept as typed, so that messages echo it as the user wrote it (1e300, not 301 digits).
    #[arg(
        long,
        value_name = "X",
        default_value = "1",
        allow_hyphen_values = true
    )]
    think_scale: String,
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
    /// The flags given on the command line ([`args::Given`], set by [`super::run`]).
    #[arg(skip)]
    given: args::Given,
}

impl SimArgs {
    /// Records the flags of a plain `sim` run given on the command line (`m`: sim's
    /// matches; [`args::Given`]).
    pub(super) fn note_given(&mut self, m: &clap::ArgMatches) {
        if m.subcommand().is_none() {
            self.run.given = args::Given::of(m);
        }
    }
}

pub(super) fn run(a: SimArgs) -> Result<(), CliError> {
    match a.sub {
        Some(SimSub::Calibrate(c)) => super::sim_calibrate::run(c),
        Some(SimSub::Validate(v)) => super::sim_validate::run(v),
        Some(SimSub::Profile(p)) => run_profile(p),
        None => run_sim(a.run),
    }
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
        Some(s) => Ok(Kernel::parse_list(s)?.into_iter().map(Some).collect()),
    }
}

/// Smallest `--bucket-bytes`: a lock word, its padding and a one-pointer list head on a
/// 64-bit kernel (4 + 4 + 8); every `struct futex_hash_bucket` so far has been 24 bytes
/// or more (3.12: `spinlock_t` 4 + padding 4 + `plist_head` 16; 3.13 on: `atomic_t
/// waiters` in the padding; larger with lock debugging).
const MIN_BUCKET_BYTES: u64 = 16;
/// Largest `--bucket-bytes`: a page.
const MAX_BUCKET_BYTES: u64 = 4096;

/// `--bucket-bytes N`: the size of a `struct futex_hash_bucket`, so a multiple of 8 (it
/// holds pointers, 8-byte aligned on the 64-bit machines the profiles describe) from
/// [`MIN_BUCKET_BYTES`] to [`MAX_BUCKET_BYTES`]; anything else is no bucket a kernel
/// could have.
fn bucket_bytes(b: u64) -> Result<u32, CliError> {
    if (MIN_BUCKET_BYTES..=MAX_BUCKET_BYTES).contains(&b) && b % 8 == 0 {
        return Ok(b as u32);
    }
    Err(CliError::Usage(format!(
        "--bucket-bytes '{b}' is no futex_hash_bucket size: a multiple of 8 from \
         {MIN_BUCKET_BYTES} (a lock and a list head on 64-bit) to {MAX_BUCKET_BYTES} \
         (a page), e.g. 24 (3.12's packed bucket) or 64 (one cache line)"
    )))
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
        design.bucket_bytes = bucket_bytes(b)?;
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
    crate::sim::check_design(profile, &design)?;
    Ok(design)
}

/// `--global-buckets N`: a power of two up to [`MAX_SIM_BUCKETS`].
fn check_global_buckets(g: u64) -> Result<(), CliError> {
    if g.is_power_of_two() && g <= MAX_SIM_BUCKETS {
        return Ok(());
    }
    Err(CliError::Usage(format!(
        "--global-buckets {g} must be a power of two up to {MAX_SIM_BUCKETS} (2^24)"
    )))
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
        check_global_buckets(g)?;
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
        if let Some(s) = slots.iter().find(|s| !s.is_global()) {
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
        return run_trace(&a, &profile, Path::new(file));
    }
    let workload =
        <SimWorkload as clap::ValueEnum>::from_str(&a.workload, false).map_err(CliError::Usage)?;
    if a.given.has("think_scale") {
        return Err(CliError::Usage(format!(
            "--think-scale '{}' only applies to --workload trace:FILE",
            a.think_scale
        )));
    }
    let op = match workload {
        SimWorkload::Hash => SimOp::WaitFail,
        SimWorkload::Wake => SimOp::WakeNone,
        SimWorkload::Lock => return run_lock(&a, &profile),
    };
    if a.same_node {
        return Err(CliError::Usage(
            "--same-node only applies to --workload lock".into(),
        ));
    }
    let req = sim_request(&a, &profile, op)?;
    if let Some(path) = &a.plot {
        check_plot_has_slots(path, &req)?;
    }
    // Refused before the note below and before any hash is timed.
    req.check()?;
    if let Some((t, cpus_used)) = req.time_sliced() {
        eprintln!(
            "futexhash: note: {t} threads on {cpus_used} CPUs: threads sharing a CPU are time-sliced \
             ({:.0} µs slices, modelled); the figures measure the scheduler as much as the table",
            profile.timeslice_ns / 1000.0
        );
    }
    // Only a private table takes the reference (`Refcount::on_table`).
    let has_private_table = |o: &SimOptions| match &o.slots {
        None => req.sweep.buckets.iter().any(|&b| b > 0),
        Some(slots) => slots.iter().any(|s| !s.is_global()),
    };
    if req
        .configs
        .iter()
        .any(|o| o.design.refcount == Refcount::Shared && has_private_table(o))
    {
        // A design axis an exam scored and found wanting: the intervals it had then (model
        // error of an unseen machine) held 1 of the 6 published cells run with it.
        eprintln!(
            "futexhash: note: the shared reference count (--refcount shared, 6.16-rc) failed \
             its out-of-sample exam: its effect off by up to 4.3x, the rate under it by up to \
             2.8x (docs/sim.md, \"A second exam\"); on a private table its intervals carry \
             the error that exam measured (sd {:.3} in ln, not {:.3})",
            crate::sim::uncertainty::SHARED_REFERENCE_SD,
            crate::sim::uncertainty::quoted_error().model_sd
        );
    }
    // SIGINT/SIGTERM: no further configuration starts and those in progress stop within
    // milliseconds; those that finished are printed and written, and the exit status is
    // 130 (as `bench`). A run stuck in a hasher is abandoned ([`super::interrupt`]).
    super::interrupt::watch(super::interrupt::Keeps::Finished);
    let pb = super::progress::counter("sim", req.runs() as u64, "configurations");
    let records = req.run_until(|| pb.inc(1), crate::bench::interrupt::requested);
    super::interrupt::claim_output();
    pb.finish_and_clear();
    let records = records?;
    let interrupted = crate::bench::interrupt::requested();
    if records.is_empty() && interrupted {
        // No table of headers without rows, no empty file.
        eprintln!(
            "{}",
            super::interrupted_with("no configuration had finished; nothing written")
        );
        return Err(CliError::InterruptedReported);
    }
    // The plot is made before anything is written: a run whose finished records have
    // nothing for its axis writes nothing. Refused before the run when the flags alone
    // say so ([`check_plot_has_slots`]), this is reached only when a signal stopped the
    // run before any private-table configuration finished: the interruption is what
    // happened, so it is what the run reports (exit 130), not a refusal of the flags.
    let plot = match &a.plot {
        None => None,
        Some(path) => match super::sim_plot::plot_of(path, &records, &profile.name) {
            Ok(plot) => Some((path, plot)),
            Err(_) if interrupted => {
                eprintln!(
                    "{}",
                    super::interrupted_with(
                        "no configuration with a private table had finished, so there was nothing to plot; nothing written"
                    )
                );
                return Err(CliError::InterruptedReported);
            }
            Err(e) => return Err(e),
        },
    };
    for (algo, ns) in timed_hash_costs(&records) {
        eprintln!(
            "futexhash: note: profile '{}' has no hash cost for {algo}: timed here, {ns:.2} ns",
            profile.name
        );
    }
    let benches: Vec<BenchRecord> = records.iter().map(|r| r.bench.clone()).collect();
    let text = sim_text(a.out.format, &req, &records, &benches)?;
    a.out.emit(&text)?;
    if let Some((path, plot)) = &plot {
        super::sim_plot::write_plot(path, &records, plot)?;
    }
    if crate::bench::interrupt::requested() {
        return Err(CliError::Interrupted);
    }
    Ok(())
}

/// `--workload trace:FILE`: the replay ([`super::sim_trace`]) with the flags it uses. The
/// flags it has no use for are refused before the trace is read, rather than ignored.
fn run_trace(a: &SimRunArgs, profile: &MachineProfile, file: &Path) -> Result<(), CliError> {
    // The replay draws no plot: `--plot` draws a sweep's records over its table sizes,
    // with their thread counts and presets, which a replay does not have.
    if let Some(p) = &a.plot {
        return Err(CliError::Usage(format!(
            "--plot '{}' is not available with --workload trace:FILE: the plot draws a sim \
             sweep (hash or wake), and the replay's rates per table size are in its table, \
             CSV and JSON; drop --plot",
            p.display()
        )));
    }
    // The trace's own threads, keys and calls are replayed: nothing of the perf loop's.
    // Refused when given, whatever the value (`--ops 1500`, the default, too).
    let unused = [
        ("same_node", "--same-node"),
        ("ops", "--ops"),
        ("warmup", "--warmup"),
        ("futexes", "--futexes"),
        ("seed", "--seed"),
    ];
    if let Some((_, flag)) = unused.iter().find(|(id, _)| a.given.has(id)) {
        return Err(CliError::Usage(format!(
            "--workload trace:FILE has no use for {flag}: the trace's own threads, keys and \
             calls are replayed, each call once; drop {flag}"
        )));
    }
    // Checked here, before the trace is read (the replay would refuse it only then).
    if let Some(g) = a.global_buckets {
        check_global_buckets(g)?;
    }
    super::sim_trace::run(
        profile,
        file,
        &super::sim_trace::TraceSimArgs {
            threads_given: a.threads.is_some(),
            buckets: a.buckets.as_deref().unwrap_or("2..131072"),
            algo: &a.algo,
            think_scale: &a.think_scale,
            think_scale_given: a.given.has("think_scale"),
            out: &a.out,
            kernel_given: a.kernel.is_some(),
            node_given: a.node.is_some(),
            design: design_axes(a, profile, Design::default())?,
            global_buckets: a.global_buckets,
        },
    )
}

/// The sweep the flags ask for, under every `--kernel` preset's configuration.
fn sim_request<'a>(
    a: &SimRunArgs,
    profile: &'a MachineProfile,
    op: SimOp,
) -> Result<SimRequest<'a>, CliError> {
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
    let configs: Vec<SimOptions> = kernel_list(a)?
        .into_iter()
        .map(|k| design_of(a, profile, k))
        .collect::<Result<_, _>>()?;
    let sweep = SimSweep {
        threads,
        futexes: futexes_per_thread(a.futexes)?,
        buckets: Vec::new(),
        hashers: args::algo_list(&a.algo, HashKey::DEFAULT)?,
        op,
        node,
        len: a.len.length()?,
        seed: a.seed,
    };
    Ok(SimRequest {
        profile,
        sweep,
        configs,
    })
}

/// The records in `format`: with several kernel presets the table is the A/B comparison.
fn sim_text(
    format: Format,
    req: &SimRequest,
    records: &[SimRecord],
    benches: &[BenchRecord],
) -> Result<String, CliError> {
    let profile = req.profile;
    let opts = &req.configs[0];
    Ok(match format {
        Format::Table if req.configs.len() > 1 => super::sim_ab::ab_table(
            &format!(
                "{}; intervals: run to run, {}, model error",
                profile.name,
                crate::sim::uncertainty::spread_source(profile)
            ),
            records,
            super::sim_ab::record_interval,
        ),
        Format::Table => {
            let global = opts
                .global_buckets
                .unwrap_or_else(|| global_hash_size(profile.cpus));
            let d = opts.design;
            let mut head = wrap_comment(
                &format!("# simulated on profile: {}", profile.name),
                MAIL_WIDTH,
            );
            if !opts.kernel.is_empty() {
                head.push_str(&format!("# kernel preset: {}\n", opts.kernel));
            }
            head.push_str(&wrap_comment(
                &format!(
                    "# design: {} buckets ({} B), {} lock, refcount {}; buckets 0 = global hash of {global} buckets",
                    crate::sim::sweep::layout_name(d.bucket_bytes),
                    d.bucket_bytes,
                    crate::sim::sweep::lock_name(d.lock),
                    crate::sim::sweep::refcount_name(d.refcount),
                ),
                MAIL_WIDTH,
            ));
            format!(
                "{head}# mean per-thread ops/sec\n{}{}",
                sweep_table(benches),
                interval_tables(records, profile)
            )
        }
        Format::Csv => sim_csv(records)?,
        Format::Json => output::to_json(records).map_err(|e| CliError::Runtime(e.to_string()))?,
    })
}

/// The table output's interval sections: each rate's 80 % interval, and with several
/// hashers each one's ratio to the first at the same threads and size, its 80 % interval
/// from the common-random-number replications, and whether the two are told apart.
fn interval_tables(records: &[SimRecord], profile: &MachineProfile) -> String {
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
        "\n{}{}",
        wrap_comment(
            &format!(
                "# 80 % prediction interval of each rate (run to run; {}; model error as measured by sim validate --cv, with the shared reference on a private table as its exam measured)",
                crate::sim::uncertainty::spread_source(profile)
            ),
            MAIL_WIDTH
        ),
        t.render_within(MAIL_WIDTH, 2)
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
            "\n{}{}",
            wrap_comment(
                &format!(
                    "# ratio to {} at the same threads and size, with its 80 % interval from the replications (common random numbers; the model error is taken to cancel): \"not told apart\" when it holds 1",
                    algos[0]
                ),
                MAIL_WIDTH
            ),
            t.render_within(MAIL_WIDTH, 2)
        ));
    }
    s
}

/// CSV of a lock record: the bench columns, then the simulator's own as sweep records
/// have them (the csv crate cannot flatten a struct).
fn lock_csv(rec: &LockTestRecord) -> Result<String, CliError> {
    let rt = |e: csv::Error| CliError::Runtime(e.to_string());
    let base = output::to_csv(std::slice::from_ref(&rec.bench)).map_err(rt)?;
    let mut rd = csv::Reader::from_reader(base.as_bytes());
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = rd.headers().map_err(rt)?.iter().map(String::from).collect();
    header.extend(
        [
            "hash_ns",
            "hash_ns_source",
            "profile",
            "kernel",
            "ops_per_sec_lo",
            "ops_per_sec_hi",
        ]
        .map(String::from),
    );
    w.write_record(&header).map_err(rt)?;
    for row in rd.records() {
        let mut cells: Vec<String> = row.map_err(rt)?.iter().map(String::from).collect();
        cells.extend([
            rec.hash_ns.to_string(),
            rec.hash_ns_source.to_string(),
            rec.profile.clone(),
            rec.kernel.clone(),
            rec.ops_per_sec_lo.to_string(),
            rec.ops_per_sec_hi.to_string(),
        ]);
        w.write_record(&cells).map_err(rt)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| CliError::Runtime(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| CliError::Runtime(e.to_string()))
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
            "global_buckets",
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
            r.global_buckets.to_string(),
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
    // jhash2; a design flag would be silently ignored. A flag it cannot use is refused when
    // given, whatever its value; `--algo jhash2` is the test's own hasher, so honoured.
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
        ("--futexes", a.given.has("futexes")),
        ("--seed", a.given.has("seed")),
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
                return Err(CliError::Usage(format!(
                    "-t '{t}' is a list: --workload lock takes one contender count per node \
                     (1..=16384), e.g. -t 10"
                )));
            }
        },
        None => 10,
    };
    // One record from every run together: an interruption keeps nothing.
    super::interrupt::watch(super::interrupt::Keeps::Nothing);
    let rec = crate::sim::sweep::run_lock_test_interval(
        profile,
        contenders,
        a.same_node,
        a.len.length()?,
    )?;
    if rec.hash_ns_source == "measured" {
        eprintln!(
            "futexhash: note: profile '{}' has no hash cost for jhash2: timed here, {:.2} ns",
            profile.name, rec.hash_ns
        );
    }
    let (lo, hi) = (rec.ops_per_sec_lo, rec.ops_per_sec_hi);
    let per_node = |v: f64| (v * contenders as f64).round() as u64;
    let text = match a.out.format {
        Format::Table => {
            let mut s = wrap_comment(
                &format!("# simulated futex_numa on profile: {}", profile.name),
                MAIL_WIDTH,
            );
            s.push_str(&wrap_comment(
                &format!(
                    "# {} node(s) x {contenders} contenders, every node squashed to one bucket{}",
                    profile.nodes,
                    if a.same_node {
                        "; all futexes forced to node 0"
                    } else {
                        ""
                    }
                ),
                MAIL_WIDTH,
            ));
            s.push_str(&wrap_comment(
                &format!(
                    "# 80 % interval: run to run, {}, model error as measured by sim validate --cv",
                    crate::sim::uncertainty::spread_source(profile)
                ),
                MAIL_WIDTH,
            ));
            // The nodes are symmetric in the model, so every node's line is the same.
            for node in 0..profile.nodes {
                s.push_str(&format!(
                    "node {node}: contenders: {} loops/sec (80 % interval {}–{})\n",
                    per_node(rec.bench.ops_per_sec),
                    per_node(lo),
                    per_node(hi)
                ));
            }
            s
        }
        Format::Csv => lock_csv(&rec)?,
        Format::Json => output::to_json(&[rec]).map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    super::interrupt::claim_output();
    a.out.emit(&text)
}

/// `--plot`'s axis is the private table's slots: refused before any work when every `-b`
/// of every configuration resolves to the global hash at every thread count (`-b 0`, or
/// `auto` and the default `-b` under kernels without a private hash), resolved as the run
/// resolves them ([`Slots::resolve`]).
fn check_plot_has_slots(path: &Path, req: &SimRequest) -> Result<(), CliError> {
    let cpus = req.profile.cpus;
    let private = req.configs.iter().any(|o| {
        let global = o.global_buckets.unwrap_or_else(|| global_hash_size(cpus));
        o.slots.iter().flatten().any(|s| {
            req.sweep
                .threads
                .iter()
                .any(|&t| s.resolve(t, cpus, global) > 0)
        })
    });
    if private {
        return Ok(());
    }
    let slots: Vec<String> = req.configs[0]
        .slots
        .iter()
        .flatten()
        .map(|s| s.label())
        .collect();
    let kernels: Vec<&str> = req
        .configs
        .iter()
        .map(|o| o.kernel.as_str())
        .filter(|k| !k.is_empty())
        .collect();
    let (said, fix) = if kernels.is_empty() {
        (String::new(), "give -b a private size (e.g. -b 16..4096)")
    } else {
        (
            format!(" on kernel {}", kernels.join(", ")),
            "add a kernel with a private hash (6.16-rc, 6.17+)",
        )
    };
    Err(CliError::Usage(format!(
        "--plot '{}': -b {}{said} is the global hash only, and the plot's axis is the private table's slots; {fix}, or drop --plot",
        path.display(),
        slots.join(","),
    )))
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
    let hashers = args::algo_list("seed", HashKey::DEFAULT)?;
    let refs: Vec<&dyn crate::hashers::KeyHasher> = hashers.iter().map(|h| h.as_ref()).collect();
    super::interrupt::watch(super::interrupt::Keeps::Nothing);
    let (prof, topo) =
        crate::sim::request::this_machine_template(Path::new("/sys/devices/system"), &refs)?;
    super::interrupt::claim_output();
    crate::render::write_atomic(Some(&p.out), prof.to_toml().as_bytes())
        .map_err(|e| CliError::Usage(format!("cannot write profile '{}': {e}", p.out.display())))?;
    eprintln!(
        "futexhash: wrote {}: {} CPUs, {} threads per core, {} node(s); hash costs of the seed hashers timed here",
        p.out.display(),
        topo.cpus,
        topo.threads_per_core,
        topo.nodes
    );
    Ok(())
}

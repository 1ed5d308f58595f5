//! `futexhash sim`: predict `perf bench futex hash` on a machine profile;
//! `futexhash sim calibrate`: fit a profile to measured rows;
//! `futexhash sim validate`: the README's validation against the published tables.

use super::{CliError, OutputArgs, args};
use crate::hashers::HashKey;
use crate::render::plot::line_plot_svg;
use crate::render::{Format, TextTable, fmt_grouped, output};
use crate::sim::calibrate::{Observation, Scenario, calibrate, global_hash_size};
use crate::sim::profile::MachineProfile;
use crate::sim::sweep::{SimSweep, run_sweep};
use crate::sim::validate::{
    MAX_SIM_BUCKETS, ValidationRow, calibrate_seed_box, hasher_for_column, perf_keys_per_thread,
    predict_published, read_published, rms_log_error, seed_box_template,
};
use crate::sim::{SimLength, SimOp};
use crate::throughput::record::{BenchRecord, sweep_table};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
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
    /// Calibrate on two rows of the published 240-thread table and predict all three
    /// published tables (the README's validation).
    Validate(ValidateArgs),
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
    /// Private hash slots, list or range; 0 = the global hash.
    #[arg(short = 'b', long, value_name = "LIST", default_value = "2..131072")]
    buckets: String,
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
    /// The two data rows (0-based) to fit, e.g. 0,2.
    #[arg(long, value_name = "I,J")]
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
    /// Profile whose fixed costs are kept [default: the built-in two-socket template].
    #[arg(long, value_name = "PROFILE")]
    template: Option<String>,
    #[command(flatten)]
    len: LengthArgs,
    #[command(flatten)]
    out: OutputArgs,
}

pub(super) fn run(a: SimArgs) -> Result<(), CliError> {
    match a.sub {
        Some(SimSub::Calibrate(c)) => run_calibrate(c),
        Some(SimSub::Validate(v)) => run_validate(v),
        None => run_sim(a.run),
    }
}

/// A profile argument: an existing file, else `data/machines/NAME.toml` under the current
/// directory, else the profile of that name built into the binary ([`crate::assets`]).
fn resolve_profile(arg: &str) -> Result<MachineProfile, CliError> {
    let direct = PathBuf::from(arg);
    if direct.is_file() {
        return MachineProfile::load(&direct).map_err(CliError::Usage);
    }
    match crate::assets::profile_path(arg) {
        Some(p) => MachineProfile::load(&p.map_err(|e| CliError::Runtime(e.to_string()))?)
            .map_err(CliError::Usage),
        None => Err(CliError::Usage(format!(
            "profile '{arg}' is neither a file nor a built-in profile ({})",
            crate::assets::profile_names().join(", ")
        ))),
    }
}

fn published_dir(arg: Option<PathBuf>) -> Result<PathBuf, CliError> {
    match arg {
        Some(d) => Ok(d),
        None => crate::assets::published_dir().map_err(|e| CliError::Runtime(e.to_string())),
    }
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
                buckets: &a.buckets,
                algo: &a.algo,
                think_scale: a.think_scale,
                out: &a.out,
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
    let sweep = SimSweep {
        threads,
        futexes: check_futexes(a.futexes)?,
        buckets: sim_buckets(&a.buckets)?,
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
    let cpus_used = node.map_or(profile.cpus, |n| profile.node_cpus(n).len() as u32);
    if sweep.threads.iter().any(|&t| t > cpus_used as usize) {
        eprintln!(
            "futexhash: warning: more threads than the {cpus_used} CPUs they run on: threads \
             sharing a CPU are serialised on it (no scheduler is modelled)"
        );
    }
    let pb = progress(sweep.configurations());
    let records = run_sweep(&profile, &sweep, || pb.inc(1)).map_err(CliError::Usage)?;
    pb.finish_and_clear();
    if let Some(path) = &a.plot {
        plot_records(path, &records, &profile.name)?;
    }
    let text = match a.out.format {
        Format::Table => {
            let global = global_hash_size(profile.cpus);
            format!(
                "# simulated on profile: {}\n# mean per-thread ops/sec; buckets 0 = global hash of {global} buckets\n{}",
                profile.name,
                sweep_table(&records)
            )
        }
        Format::Csv => output::to_csv(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    a.out.emit(&text)
}

/// `--workload lock`: one simulated futex_numa run, printed as futex_numa's
/// "contenders:" line per node plus the record.
fn run_lock(a: &SimRunArgs, profile: &MachineProfile) -> Result<(), CliError> {
    // futex_numa squashes every node to one bucket: a bucket count has nothing to set.
    if a.buckets != "2..131072" {
        return Err(CliError::Usage(format!(
            "-b '{}' does not apply to --workload lock (futex_numa squashes every node to one \
             bucket); drop -b",
            a.buckets
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
    let rows = two_rows(&c.rows)?;
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
    let hasher =
        crate::hashers::Builtin::by_name(&algo, HashKey::DEFAULT).map_err(CliError::usage)?;
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
    template.cpus = c.cpus as u32;
    template.nodes = c.nodes as u32;
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
        })
    };
    let scenario = Scenario {
        keys_per_thread: perf_keys_per_thread(threads[0], check_futexes(c.futexes)?, 1)
            .map_err(CliError::Usage)?,
        cpus,
        global_buckets: global_hash_size(template.cpus),
        op: SimOp::WaitFail,
    };
    let obs = [pick(rows[0])?, pick(rows[1])?];
    let mut fitted =
        calibrate(&template, &scenario, &hasher, obs, c.len.length()?).map_err(CliError::Usage)?;
    fitted.name = format!(
        "{} CPUs, {} node(s): calibrated on rows {} and {} ({} threads, {}) of {}",
        c.cpus,
        c.nodes,
        rows[0],
        rows[1],
        threads[0],
        algo,
        c.from.file_name().map_or_else(
            || c.from.display().to_string(),
            |f| f.to_string_lossy().into_owned()
        )
    );
    crate::render::write_atomic(Some(&c.out), fitted.to_toml().as_bytes())
        .map_err(|e| CliError::Usage(format!("cannot write profile '{}': {e}", c.out.display())))?;
    eprintln!(
        "futexhash: fitted outside_ns = {:.1}, handoff_local_ns = {:.1}, handoff_remote_ns = {:.1}; wrote {}",
        fitted.outside_ns,
        fitted.handoff_local_ns,
        fitted.handoff_remote_ns,
        c.out.display()
    );
    Ok(())
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
    let profile = calibrate_seed_box(&data, &template, rows, len).map_err(CliError::Usage)?;
    let results = predict_published(&data, &profile, rows, len).map_err(CliError::Usage)?;
    let text = match v.out.format {
        Format::Json => output::to_json(&results).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Csv => output::to_csv(&results).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Table => validation_tables(&profile, &results),
    };
    v.out.emit(&text)
}

/// One table per published file: rows = buckets, per column `published / predicted /
/// ratio`; then the RMS log error per table.
fn validation_tables(profile: &MachineProfile, rows: &[ValidationRow]) -> String {
    let mut s = format!(
        "# profile: {}\n# fitted: outside_ns = {:.1}, hold_ns = {:.1}, handoff_local_ns = {:.1}, handoff_remote_ns = {:.1}, line_miss_ns = {:.1}\n",
        profile.name,
        profile.outside_ns,
        profile.hold_ns,
        profile.handoff_local_ns,
        profile.handoff_remote_ns,
        profile.line_miss_ns
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
            if !algos.contains(&r.algo.as_str()) {
                algos.push(&r.algo);
            }
            if !buckets.contains(&r.buckets) {
                buckets.push(r.buckets);
            }
        }
        s.push_str(&format!(
            "\n{table}: predicted/published (RMS log error {:.3}; * = calibration row)\n",
            rms_log_error(these.iter().copied())
        ));
        let single = algos.len() == 1;
        let mut headers = vec!["buckets".to_string()];
        if single {
            headers.extend(["published".into(), "predicted".into(), "ratio".into()]);
        } else {
            headers.extend(algos.iter().map(|a| a.to_string()));
        }
        let mut t = TextTable::new(headers);
        for b in buckets {
            let mut row = vec![b.to_string()];
            for a in &algos {
                let Some(r) = these.iter().find(|r| r.buckets == b && r.algo == *a) else {
                    row.push("-".into());
                    continue;
                };
                let ratio = format!("{:.2}{}", r.ratio, if r.calibration_row { "*" } else { "" });
                if single {
                    row.push(fmt_grouped(r.published, 1));
                    row.push(fmt_grouped(r.predicted, 1));
                }
                row.push(ratio);
            }
            t.push(row);
        }
        s.push_str(&t.render());
    }
    s
}

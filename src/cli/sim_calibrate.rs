//! `futexhash sim calibrate`: fit a profile's free costs to measured rows of a CSV
//! ([`crate::sim::request::CalibrationRequest`]) and write it.

use super::sim_args::{LengthArgs, parse_threads, resolve_profile};
use super::{CliError, args};
use crate::hashers::HashKey;
use crate::sim::calibrate::Fitted;
use crate::sim::request::{CalibrationRequest, MeasuredTable};
use crate::sim::validate::seed_box_template;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub(super) struct CalibrateArgs {
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
    #[arg(long, value_name = "NAME", conflicts_with = "runs")]
    column: Option<String>,
    /// Rate columns that are repeated runs of the same measurement (names, or `all`):
    /// the profile is fitted on their mean and refitted on each run alone, and its
    /// intervals carry the spread of those refits instead of the seed box's.
    #[arg(long, value_name = "NAME,NAME,...|all")]
    runs: Option<String>,
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

/// Refuses `--out` naming an input of the calibration: `--from`, or the `--template` file
/// (a name as [`resolve_profile`] finds it). The profile is written over what `--out` leads
/// to, so the input would be lost. Compared by device and inode with links followed, so
/// `./x`, `../d/x`, a symbolic link and a hard link to the input are all caught; an `--out`
/// that does not exist yet or is written in place (a device, a FIFO) replaces nothing.
fn check_out_is_no_input(c: &CalibrateArgs) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt;
    let Ok(out) = std::fs::metadata(&c.out) else {
        return Ok(());
    };
    if !out.is_file() {
        return Ok(());
    }
    let template = c.template.as_deref().and_then(|t| {
        let direct = PathBuf::from(t);
        if direct.is_file() {
            Some(direct)
        } else {
            crate::assets::profile_path(t).and_then(Result::ok)
        }
    });
    let inputs = [("--from", Some(c.from.clone())), ("--template", template)];
    for (flag, path) in inputs {
        let Some(path) = path else { continue };
        if let Ok(m) = std::fs::metadata(&path)
            && (m.dev(), m.ino()) == (out.dev(), out.ino())
        {
            return Err(CliError::Usage(format!(
                "--out '{}' is the same file as {flag} '{}': the fitted profile would replace its own input; write it to another file",
                c.out.display(),
                path.display()
            )));
        }
    }
    Ok(())
}

pub(super) fn run(c: CalibrateArgs) -> Result<(), CliError> {
    args::check_output_path(&c.out, "profile")?;
    check_out_is_no_input(&c)?;
    let rows = row_list(&c.rows)?;
    let measured = MeasuredTable::read(&c.from, c.column.as_deref())?;
    let runs = match &c.runs {
        None => Vec::new(),
        Some(list) => measured.run_columns(&list.split(',').map(str::trim).collect::<Vec<_>>())?,
    };
    let algo = c
        .algo
        .clone()
        .unwrap_or_else(|| measured.hasher_name().to_string());
    let hasher = args::one_algo(&algo, HashKey::DEFAULT)?;
    if c.cpus == 0 || c.nodes == 0 || c.cpus % c.nodes != 0 || c.cpus > 65536 {
        return Err(CliError::Usage(format!(
            "--cpus {} must be a positive multiple of --nodes {} (at most 65536)",
            c.cpus, c.nodes
        )));
    }
    let threads = parse_threads(&c.threads.to_string())?[0];
    let template = match &c.template {
        Some(t) => resolve_profile(t)?,
        None => seed_box_template(),
    };
    // The profile is written when the fit is done: an interruption keeps nothing.
    super::interrupt::watch(super::interrupt::Keeps::Nothing);
    let bar = super::progress::steps("sim calibrate");
    let done = CalibrationRequest {
        measured,
        rows,
        threads,
        cpus: c.cpus as u32,
        nodes: c.nodes as u32,
        node: c.node,
        futexes: c.futexes,
        template,
        hasher: &hasher,
        algo: &algo,
        len: c.len.length()?,
        runs,
    }
    .run_with(&mut |step| bar.set_message(step.to_string()));
    super::interrupt::claim_output();
    bar.finish_and_clear();
    let done = done?;
    crate::render::write_atomic(Some(&c.out), done.profile.to_toml().as_bytes())
        .map_err(|e| CliError::Usage(format!("cannot write profile '{}': {e}", c.out.display())))?;
    // One decimal, but never a determined cost or its sigma shown as 0.0: a value below
    // 0.05 ns keeps three.
    let ns = |v: f64| {
        if v.abs() >= 0.05 {
            format!("{v:.1}")
        } else {
            format!("{v:.3}")
        }
    };
    let say = |what: &str, f: &Fitted| {
        if f.determined {
            format!("{what} = {} ± {} ns", ns(f.value), ns(f.sigma))
        } else {
            format!(
                "{what} not determined by these rows (halving or doubling it moves them by less than their noise); kept the template's {:.1} ns",
                f.value
            )
        }
    };
    let spread = match &done.profile.calibration_runs {
        Some(r) => format!(
            "; over {} runs: standard error {:.1}% of outside_ns, {:.1}% of the hand-off (these go into its intervals)",
            r.runs,
            r.outside_se_ln.exp_m1() * 100.0,
            r.handoff_se_ln.exp_m1() * 100.0
        ),
        None => done
            .runs_not_used
            .as_ref()
            .map_or(String::new(), |why| format!("; {why}")),
    };
    eprintln!(
        "futexhash: fitted {}; {}; handoff_remote_ns = {:.1}; RMS residual {:.2}% over {} rows{spread}; hash cost {:.2} ns ({}); wrote {} (no hash costs: they are timed where the profile is used)",
        say("outside_ns", &done.fit.outside),
        say("handoff_local_ns", &done.fit.handoff),
        done.profile.handoff_remote_ns,
        done.fit.rms_residual * 100.0,
        done.rows,
        done.hash.ns,
        done.hash.source.as_str(),
        c.out.display()
    );
    Ok(())
}

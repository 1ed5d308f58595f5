//! `futexhash report [--quick] [--out DIR] [--algo LIST] [--profile P] [--repeat N]`: the
//! main job a new user runs. The sections live in [`crate::report`]; this file checks the
//! arguments and the output directory before any work, shows progress on a TTY, and
//! writes the directory whole ([`StagedDir`]).

use super::{CliError, args};
use crate::hashers::HashKey;
use crate::report::context::{Context, Depth, PUBLISHED_TABLES};
use crate::report::evaluation;
use crate::report::staging::StagedDir;
use crate::sim::profile::MachineProfile;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub(super) struct ReportArgs {
    /// Shorter runs and fewer configurations (the report's first line says how long the
    /// run took; 37–65 s measured on a 2-vCPU KVM guest busy with other builds).
    #[arg(long)]
    quick: bool,
    /// Directory for report.md, report.json and the SVG plots (created if missing, but its
    /// parent directory must exist; an existing report there is replaced whole when the new
    /// one is complete).
    #[arg(long, value_name = "DIR", default_value = "report-out")]
    out: PathBuf,
    /// Directory of the published seed tables used by the simulation.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Hashers to add to every section, besides the seed's eight: built-in names, `all`,
    /// `so:PATH[:SYMBOL]`, `c:FILE.c[:SYMBOL]`, with an optional `LABEL=` prefix.
    #[arg(long, value_name = "LIST")]
    algo: Option<String>,
    /// Your machine profile (a TOML file, or a built-in profile name such as seed-256cpu),
    /// answered next to the seed's 256-CPU box.
    #[arg(long, value_name = "PROFILE")]
    profile: Option<String>,
    /// Runs of every measured throughput figure (medians and ranges; the answers use at least
    /// 3). Hash costs are timed in their own interleaved rounds either way (41 with --quick,
    /// 121 without), which this does not change.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=50))]
    repeat: u32,
}

/// A profile argument ([`args::machine_profile`]: a file, else a built-in profile), checked
/// before any work.
fn resolve_profile(arg: &str) -> Result<MachineProfile, CliError> {
    let mut profile = args::machine_profile(arg)?;
    profile
        .validate()
        .map_err(|e| CliError::Usage(format!("--profile '{arg}': {e}")))?;
    // The report names a profile by what precedes the first ':' or ',' of its name: lead
    // with the name the user typed.
    profile.name = format!("profile {arg}: {}", profile.name);
    Ok(profile)
}

pub(super) fn run(a: ReportArgs) -> Result<(), CliError> {
    // Only --out itself is created, never the directories above it (as `--output` of every
    // command needs its file's directory).
    if let Some(parent) = crate::report::staging::missing_parent(&a.out) {
        return Err(CliError::Usage(format!(
            "cannot create report directory '{}': directory '{}' does not exist (--out \
             creates only its last component)",
            a.out.display(),
            parent.display()
        )));
    }
    if let Some(list) = &a.algo {
        super::args::checked_algo_list(list, HashKey::DEFAULT)?;
    }
    let data = match a.data.clone() {
        Some(d) => d,
        None => crate::assets::published_dir().map_err(|e| CliError::Runtime(e.to_string()))?,
    };
    super::args::check_output_dir(&a.out, "report directory")?;
    // Every input is read before anything is written, so bad input leaves nothing.
    for table in PUBLISHED_TABLES {
        crate::sim::validate::read_published(&data.join(table)).map_err(|e| {
            CliError::Usage(format!(
                "published tables in '{}' (--data): {e}",
                data.display()
            ))
        })?;
    }
    let extra = match &a.algo {
        Some(list) => super::args::algo_list(list, HashKey::DEFAULT)?,
        None => Vec::new(),
    };
    let profile = a.profile.as_deref().map(resolve_profile).transpose()?;
    // From here a signal only sets the flag (no death by its default action while the
    // staging directory is created); the watcher below acts on it.
    crate::bench::interrupt::install();
    let staged = StagedDir::create(&a.out).map_err(|e| {
        CliError::Usage(format!(
            "--out '{}' cannot be written: {e}",
            a.out.display()
        ))
    })?;
    // SIGINT/SIGTERM (also one that came while the directory was created): the work in
    // progress cannot be stopped early, so the shared watcher exits 130 at once, saying
    // nothing was written, unless the report is being committed already
    // ([`super::interrupt`]). The exit does not run `Drop`: the watcher removes the
    // staging directory itself, and an earlier report in --out stays as it was.
    let abandon = staged.abandon_handle();
    super::interrupt::watch_then(super::interrupt::Keeps::Nothing, move || {
        // Never committed here: the commit comes after `claim_output`, which the watcher
        // won.
        abandon.abandon();
    });
    let depth = if a.quick { Depth::Quick } else { Depth::Full };
    let bar = if std::io::stderr().is_terminal() {
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_style(
            indicatif::ProgressStyle::with_template("report {spinner} {msg} ({elapsed})")
                .expect("static template"),
        );
        pb.enable_steady_tick(std::time::Duration::from_millis(200));
        // So that the signal watcher clears it before its line.
        super::progress::register(&pb);
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };
    let start = Instant::now();
    bar.set_message("hash cost and simulator calibration");
    let given = crate::report::context::Given {
        algo: a.algo.clone(),
        profile: a.profile.clone(),
    };
    let ctx = Context::build(depth, a.repeat as usize, extra, profile, given, &data)?;
    let report = evaluation::run(&ctx, staged.path(), &mut |name| {
        bar.set_message(name.to_string())
    })?;
    bar.finish_and_clear();
    let command = format!(
        "futexhash report{}{}{}{}",
        if a.quick { " --quick" } else { "" },
        a.algo
            .as_deref()
            .map_or(String::new(), |l| format!(" --algo {l}")),
        a.profile
            .as_deref()
            .map_or(String::new(), |p| format!(" --profile {p}")),
        if a.repeat > 1 {
            format!(" --repeat {}", a.repeat)
        } else {
            String::new()
        }
    );
    let secs = start.elapsed().as_secs_f64();
    let note = evaluation::title_note(&command, secs, &ctx.machine.one_line(), &ctx.machine.date);
    let md = report.markdown(&note);
    let config = serde_json::json!({
        "command": command, "quick": a.quick, "repeat": a.repeat, "seconds": secs,
        "hashers": ctx.hashers.iter().map(|h| h.name().to_string()).collect::<Vec<_>>(),
        "extra_hashers": ctx.extra, "profiles": ctx.profiles().iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
    });
    let json = serde_json::to_string_pretty(&report.json(&ctx, config))
        .map_err(|e| CliError::Runtime(format!("cannot encode report.json: {e}")))?;
    for (file, body) in [("report.md", md), ("report.json", json + "\n")] {
        let path = staged.path().join(file);
        crate::render::write_atomic(Some(&path), body.as_bytes())
            .map_err(|e| CliError::Runtime(format!("cannot write '{}': {e}", path.display())))?;
    }
    let target = staged.target().to_path_buf();
    // From here the report is committed whole even if a signal comes (then exit 130,
    // saying so).
    super::interrupt::claim_output();
    let dir = staged.commit().map_err(|e| {
        CliError::Runtime(format!(
            "cannot move the report into '{}': {e}",
            target.display()
        ))
    })?;
    println!("wrote {}", dir.join("report.md").display());
    Ok(())
}

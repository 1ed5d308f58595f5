//! `futexhash capture`: flags and exit statuses for [`crate::capture`] (user docs in
//! `docs/capture.md`). Every check that can fail on the user's input (the output path, the
//! target, bpftrace, permissions, kernel features) runs before the target is started and
//! exits 2 with one line; a failure while capturing exits 1.

use super::{CliError, args};
use crate::capture::run::{self, CaptureError, CaptureOptions, Target};
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["pid", "command"])))]
pub(super) struct CaptureArgs {
    /// Write the capture here (atomically: temporary file, then rename) [default: stdout,
    /// at the end].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Stop after N seconds (fractions allowed); a started command is then terminated.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    seconds: Option<String>,
    /// Stop after N event lines; the file holds at most N.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    max_events: Option<String>,
    /// Stop after N bytes of event lines; the file holds at most N bytes of them (plus its
    /// header and trailer lines).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    max_bytes: Option<String>,
    /// Trace this running process and its descendants.
    #[arg(short = 'p', long, value_name = "PID", value_parser = args::number, conflicts_with = "command")]
    pid: Option<u64>,
    /// Only the syscall tracepoints, even where kernel-key probes would work.
    #[arg(long)]
    no_kernel_key: bool,
    /// Print the bpftrace program (with the kernel-key probes unless --no-kernel-key; a
    /// command's root pid as 0) and exit, without running anything.
    #[arg(long)]
    print_script: bool,
    /// The command to start and trace (after `--`), with its whole process tree.
    #[arg(last = true, value_name = "CMD", num_args = 1..)]
    command: Vec<OsString>,
}

fn map_err(e: CaptureError) -> CliError {
    match e {
        CaptureError::Runtime(s) => CliError::Runtime(s),
        CaptureError::Interrupted(s) => {
            // An interrupted program exits 128 + SIGINT, whether or not probes were up.
            eprintln!("futexhash: {s}");
            CliError::InterruptedReported
        }
        other => CliError::Usage(other.to_string()),
    }
}

fn seconds(s: &str) -> Result<f64, CliError> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.001 && *v <= 1e6)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--seconds '{s}' must be a number of seconds between 0.001 and 1000000"
            ))
        })
}

/// Largest `--max-events` / `--max-bytes` (2^40): far above what a capture holds in memory,
/// and a bound that keeps the value meaningful.
const MAX_LIMIT: u64 = 1 << 40;

fn limit(flag: &str, s: &str) -> Result<u64, CliError> {
    crate::key::parse_number(s)
        .filter(|v| (1..=MAX_LIMIT).contains(v))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "{flag} '{s}' must be a whole number from 1 to {MAX_LIMIT}"
            ))
        })
}

pub(super) fn run(a: CaptureArgs) -> Result<(), CliError> {
    if let Some(p) = &a.output {
        args::check_output_path(p, "capture")?;
    }
    let seconds = a.seconds.as_deref().map(seconds).transpose()?;
    let max_events = a
        .max_events
        .as_deref()
        .map(|s| limit("--max-events", s))
        .transpose()?;
    let max_bytes = a
        .max_bytes
        .as_deref()
        .map(|s| limit("--max-bytes", s))
        .transpose()?;
    let target = match a.pid {
        Some(p) => Target::Pid(u32::try_from(p).map_err(|_| {
            CliError::Usage(format!("pid '{p}' is out of range (at most 4194304)"))
        })?),
        None => Target::Command(a.command),
    };
    run::check_target(&target).map_err(map_err)?;
    if a.print_script {
        let syscalls = crate::capture::script::detect_features()
            .map(|f| f.syscalls)
            .unwrap_or_else(|_| crate::capture::Syscall::ALL.to_vec());
        let root = match target {
            Target::Pid(p) => p,
            Target::Command(_) => 0,
        };
        let path = if a.no_kernel_key {
            crate::capture::ProbePath::Tracepoint
        } else {
            crate::capture::ProbePath::Kprobe
        };
        let text = crate::capture::script::generate(&syscalls, &[root], path);
        return crate::render::write_atomic(a.output.as_deref(), text.as_bytes())
            .map_err(|e| CliError::Usage(format!("cannot write the script: {e}")));
    }
    let opts = CaptureOptions {
        target,
        seconds,
        max_events,
        max_bytes,
        output: a.output.clone(),
        kernel_key: !a.no_kernel_key,
    };
    let stop = run::stop_on_signals();
    let s = run::capture(&opts, stop, |n| eprintln!("futexhash: {n}")).map_err(map_err)?;
    eprintln!(
        "futexhash: captured {} events ({} lost) from pid {}, probe={}, ended: {}{}{}",
        s.events,
        s.lost,
        s.root,
        s.probe.as_str(),
        s.reason.name(),
        s.exit_code
            .map_or(String::new(), |c| format!(", command exit status {c}")),
        a.output
            .as_ref()
            .map_or(String::new(), |p| format!("; wrote {}", p.display()))
    );
    if s.reason == crate::capture::EndReason::Interrupted {
        // Interrupted: what was captured is written; exit as an interrupted program does
        // (128 + SIGINT), like the other subcommands' interrupt handling. The summary line
        // above has said so.
        return Err(CliError::InterruptedReported);
    }
    Ok(())
}

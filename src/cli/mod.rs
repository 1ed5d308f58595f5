//! The command-line front end. Each subcommand has its own file with
//! its clap arguments and a `run` that turns them into library calls and formatted output;
//! the work itself is done by the library modules.
//!
//! Errors: bad input is a [`CliError::Usage`] (one line on stderr, exit status 2; clap's own
//! parse errors also exit 2); a failure while running is a [`CliError::Runtime`] (exit 1).

pub mod args;
mod attack;
mod bench;
mod capture;
mod check;
mod dist;
mod hash;
mod interrupt;
mod keys;
mod list;
mod progress;
mod report;
mod sim;
mod sim_ab;
mod sim_args;
mod sim_calibrate;
mod sim_plot;
mod sim_trace;
mod sim_validate;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;
use std::fmt;
use std::process::ExitCode;

pub use args::OutputArgs;

/// futexhash: evaluate hash functions and bucket-table designs for Linux futex keys.
#[derive(Debug, Parser)]
#[command(name = "futexhash", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every hasher: name, algorithm, scope, keyed, source.
    List(list::ListArgs),
    /// Hash futex keys (private:MM:UADDR, anon:MM:UADDR, inode:ISEQ:PGOFF:OFFSET).
    Hash(hash::HashArgs),
    /// Is a hasher fit for futex_hash()? Vectors, properties, distribution, speed.
    Check(check::CheckArgs),
    /// The distinct keys of a workload (CSV kind,w0,w1,offset or JSON), for hashing
    /// elsewhere and judging with `dist --hashes`.
    Keys(keys::KeysArgs),
    /// End-to-end throughput, as `perf bench futex hash` (model table or real kernel).
    Bench(bench::BenchArgs),
    /// Distribution quality of hashers on a workload's keys, every table size.
    Dist(dist::DistArgs),
    /// Predict perf bench futex hash on a machine profile (discrete-event simulation);
    /// `sim calibrate` fits a profile, `sim validate` checks it against published tables.
    Sim(Box<sim::SimArgs>),
    /// The whole evaluation: distribution, model and kernel throughput, simulation,
    /// written as DIR/report.md with SVG plots.
    Report(report::ReportArgs),
    /// Record every futex system call of a command or process tree (bpftrace), with the
    /// real mm: input for `--workload trace:FILE`.
    Capture(capture::CaptureArgs),
    /// Security: leak the attacker's mm from bucket collisions, measure the timing channel,
    /// flood a victim's buckets (docs/security.md).
    Attack(attack::AttackArgs),
}

impl Command {
    /// Tells the subcommands that refuse the flags a run has no use for which flags the
    /// user gave ([`args::Given`], from clap's matches `m` of the whole command line):
    /// given, not merely different from the default.
    fn note_given(&mut self, m: &clap::ArgMatches) {
        let Some((_, sm)) = m.subcommand() else {
            return;
        };
        match self {
            Command::Dist(a) => a.given = args::Given::of(sm),
            Command::Sim(a) => a.note_given(sm),
            _ => {}
        }
    }
}

/// Why a subcommand failed.
#[derive(Debug)]
pub enum CliError {
    /// The user's input was bad: exit 2.
    Usage(String),
    /// Something failed while running: exit 1.
    Runtime(String),
    /// SIGINT/SIGTERM stopped the work after what finished had been printed or written:
    /// one line saying so on stderr ([`interrupted_line`]), exit 130 (128 + SIGINT), as a
    /// shell reports an interrupted command.
    Interrupted,
    /// As [`CliError::Interrupted`], when the subcommand has already said on stderr what the
    /// interruption kept (bench's [`interrupted_with`] "n of m configurations measured",
    /// capture's summary).
    InterruptedReported,
}

/// The line an interrupted subcommand prints when the results that finished were written,
/// naming the signal the handlers recorded. (A run that keeps nothing says so through the
/// signal watcher, [`interrupt`].)
pub(crate) fn interrupted_line() -> String {
    interrupted_with("stopped early; the results that finished are written")
}

/// `futexhash: interrupted (SIGNAL): what`, the one form of every interrupted
/// subcommand's line, naming the signal the handlers recorded.
pub(crate) fn interrupted_with(what: &str) -> String {
    let sig = match crate::bench::interrupt::signal() {
        Some(libc::SIGINT) => "SIGINT",
        Some(libc::SIGTERM) => "SIGTERM",
        _ => "SIGINT or SIGTERM",
    };
    format!("futexhash: interrupted ({sig}): {what}")
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(s) | CliError::Runtime(s) => f.write_str(s),
            CliError::Interrupted | CliError::InterruptedReported => f.write_str("interrupted"),
        }
    }
}

/// The simulator's input errors (the request, its tables and profiles) are the user's to
/// fix: exit 2; this machine failing to be read or timed: exit 1.
impl From<crate::sim::SimError> for CliError {
    fn from(e: crate::sim::SimError) -> Self {
        match &e {
            crate::sim::SimError::Clock(c) => return CliError::Usage(sim_args::clock_message(c)),
            crate::sim::SimError::Work(w) => return CliError::Usage(sim_args::work_message(w)),
            _ => {}
        }
        if e.is_input() {
            CliError::Usage(e.to_string())
        } else {
            CliError::Runtime(e.to_string())
        }
    }
}

/// The report's input is checked before it starts: whatever stops it is a failure while
/// running (exit 1).
impl From<crate::report::ReportError> for CliError {
    fn from(e: crate::report::ReportError) -> Self {
        CliError::Runtime(e.to_string())
    }
}

impl CliError {
    /// A usage error from anything printable.
    pub fn usage(msg: impl fmt::Display) -> Self {
        CliError::Usage(msg.to_string())
    }
}

/// The clap command with every subcommand (and theirs) accepting values that start with
/// `-`, so `--buckets -4` reaches the value's own check ("'-4' is not ...") instead of
/// reading as an unknown flag.
fn command() -> clap::Command {
    fn negatives(c: clap::Command) -> clap::Command {
        c.allow_negative_numbers(true).mut_subcommands(negatives)
    }
    negatives(Cli::command())
}

/// clap's error as one line: its first paragraph (the message, the names of missing
/// arguments, the possible values), without the usage and tip paragraphs.
fn one_line(rendered: &str) -> String {
    let mut parts = Vec::new();
    for l in rendered.lines() {
        let t = l.trim();
        if t.is_empty() && !parts.is_empty() {
            break;
        }
        if t.starts_with("Usage:") || t.starts_with("tip:") || t.starts_with("For more") {
            break;
        }
        if !t.is_empty() {
            parts.push(t.strip_prefix("error: ").unwrap_or(t).to_string());
        }
    }
    if parts.is_empty() {
        "invalid arguments".into()
    } else {
        parts.join(" ")
    }
}

/// `--output` and `--plot` naming one file ([`args::check_distinct_outputs`]), for every
/// (sub)subcommand that takes both (`dist`, `bench`, `sim`), before any work. Checked here
/// on clap's matches, by the flags' ids, so that a subcommand that gains a `--plot` is
/// covered without a call of its own.
fn check_output_and_plot(m: &clap::ArgMatches) -> Result<(), CliError> {
    let mut sub = m.subcommand();
    while let Some((_, sm)) = sub {
        // `try_`: a subcommand without the flag answers with an error, not a panic.
        let get = |id: &str| sm.try_get_one::<std::path::PathBuf>(id).ok().flatten();
        if let (Some(output), Some(plot)) = (get("output"), get("plot")) {
            args::check_distinct_outputs(output, plot)?;
        }
        sub = sm.subcommand();
    }
    Ok(())
}

/// Runs the command line `args` (the first item is the program name).
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let parsed = command().try_get_matches_from(&args).and_then(|m| {
        let mut cli = Cli::from_arg_matches(&m)?;
        cli.command.note_given(&m);
        Ok((cli, m))
    });
    let cli = match parsed {
        Ok((cli, m)) => {
            if let Err(e) = check_output_and_plot(&m) {
                eprintln!("futexhash: error: {e}");
                return ExitCode::from(2);
            }
            cli
        }
        Err(e) => {
            // Help and version go to stdout with status 0; a real parse error is one line
            // on stderr and exit 2.
            if !e.use_stderr() {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // A missing subcommand (bare `futexhash` or `futexhash attack`): clap's
            // help with the subcommand list is the answer, not its first line.
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return ExitCode::from(2);
            }
            // clap's "invalid UTF-8 was detected" names neither the value nor the flag.
            let line = (e.kind() == clap::error::ErrorKind::InvalidUtf8)
                .then(|| args::non_utf8_message(command(), &args))
                .flatten()
                .unwrap_or_else(|| one_line(&e.render().to_string()));
            eprintln!("futexhash: error: {line} (see --help)");
            return ExitCode::from(2);
        }
    };
    // `check`: the verdict table says which check failed; the status says that one did
    // (unless a signal came meanwhile: then 130, as for every other subcommand).
    let mut check_failed = false;
    let result = match cli.command {
        Command::Check(a) => check::run(a).map(|failed| check_failed = failed),
        Command::Keys(a) => keys::run(a),
        Command::List(a) => list::run(a),
        Command::Hash(a) => hash::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Dist(a) => dist::run(a),
        Command::Sim(a) => sim::run(*a),
        Command::Report(a) => report::run(a),
        Command::Capture(a) => capture::run(a),
        Command::Attack(a) => attack::run(a),
    };
    // The last line is the main thread's: a signal watcher that abandoned the run is
    // exiting, and one that did not stays silent from here on.
    interrupt::claim_output();
    match result {
        Ok(()) if interrupt::interrupted_after_output() => {
            eprintln!(
                "{}",
                interrupted_with("the run had finished; its output is written whole")
            );
            ExitCode::from(130)
        }
        Ok(()) if check_failed => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(msg)) => {
            eprintln!("futexhash: error: {msg}");
            ExitCode::from(2)
        }
        Err(CliError::Runtime(msg)) => {
            eprintln!("futexhash: error: {msg}");
            ExitCode::from(1)
        }
        Err(CliError::Interrupted) => {
            eprintln!("{}", interrupted_line());
            ExitCode::from(130)
        }
        Err(CliError::InterruptedReported) => ExitCode::from(130),
    }
}

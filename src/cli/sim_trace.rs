//! `futexhash sim --workload trace:FILE`: replays a captured program's per-thread futex
//! operations on a machine profile ([`crate::sim::trace_replay`]), one record per table
//! size and hasher.

use super::{CliError, OutputArgs, args};
use crate::hashers::HashKey;
use crate::render::output::wrap_comment;
use crate::render::{Format, TextTable, fmt_grouped, output};
use crate::sim::Design;
use crate::sim::profile::MachineProfile;
use crate::sim::trace_replay::{ReplayDesign, ReplayRecord};
use crate::sim::trace_replay::{has_think_time, replay_with_interval, think_scale_beyond_clock};
use std::path::Path;

/// The `sim` flags the replay uses.
pub(super) struct TraceSimArgs<'a> {
    pub threads_given: bool,
    pub buckets: &'a str,
    pub algo: &'a str,
    /// `--think-scale` as typed (`1` when not given).
    pub think_scale: &'a str,
    /// `--think-scale` was given (refused for a trace without think time).
    pub think_scale_given: bool,
    pub out: &'a OutputArgs,
    /// `--kernel` was given (refused: a preset also sets per-node global tables).
    pub kernel_given: bool,
    /// `--node` was given (refused: the trace's threads are pinned round-robin).
    pub node_given: bool,
    /// Layout, lock and refcount from the flags.
    pub design: Design,
    /// `--global-buckets`.
    pub global_buckets: Option<u64>,
}

/// A contended share this close to all same-futex says that no hash or table size helps.
const SAME_KEY_VERDICT_SHARE: f64 = 0.95;
/// Waits needed before the replay says anything about their cause.
const SAME_KEY_VERDICT_MIN_WAITS: u64 = 20;

/// clap value parser of `sim --workload`: `hash`, `wake`, `lock` or `trace:FILE`.
pub(super) fn workload_arg(s: &str) -> Result<String, String> {
    match s {
        "hash" | "wake" | "lock" => Ok(s.to_string()),
        _ if s.strip_prefix("trace:").is_some_and(|f| !f.is_empty()) => Ok(s.to_string()),
        _ => Err(format!(
            "'{s}' is not a sim workload; valid: hash, wake, lock, trace:FILE"
        )),
    }
}

/// Largest `--think-scale`.
const MAX_THINK_SCALE: f64 = 1e6;

/// `--think-scale X`: a number from 0 to [`MAX_THINK_SCALE`], named as typed when it is not.
fn think_scale_arg(s: &str) -> Result<f64, CliError> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| (0.0..=MAX_THINK_SCALE).contains(x))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--think-scale '{s}' must be a number between 0 and {MAX_THINK_SCALE}"
            ))
        })
}

pub(super) fn run(profile: &MachineProfile, file: &Path, a: &TraceSimArgs) -> Result<(), CliError> {
    if a.threads_given {
        return Err(CliError::Usage(
            "-t does not apply to --workload trace:FILE: the trace's own threads are replayed"
                .into(),
        ));
    }
    for (flag, given, why) in [
        (
            "--kernel",
            a.kernel_given,
            "a preset's per-node global tables are not replayed; give --layout, --lock, \
             --refcount, --global-buckets instead",
        ),
        (
            "--node",
            a.node_given,
            "the trace's threads are pinned round-robin over all CPUs",
        ),
    ] {
        if given {
            return Err(CliError::Usage(format!(
                "{flag} does not apply to --workload trace:FILE: {why}"
            )));
        }
    }
    let think_scale = think_scale_arg(a.think_scale)?;
    let buckets = args::pow2_list(a.buckets, "buckets", true)?;
    if let Some(b) = buckets.iter().find(|&&b| b > 1 << 24) {
        return Err(CliError::Usage(format!(
            "bucket count '{b}' is too large; at most 16777216 (2^24)"
        )));
    }
    let hashers = args::algo_list(a.algo, HashKey::DEFAULT)?;
    let rec = crate::workload::read_trace(file).map_err(CliError::usage)?;
    // Only the trace says whether it has times to scale: a positive scale is refused right
    // after reading it, before its note and any replay, rather than accepted and ignored.
    // 0 asks for the calls back to back, which is what such a trace gets (and, on a
    // capture whose calls share one time, for time-sliced CPUs): honoured, so accepted.
    if a.think_scale_given && think_scale > 0.0 && !has_think_time(&rec) {
        let why = if rec.ops.iter().any(|o| o.t_ns.is_none()) {
            "it has no call times (strace output)"
        } else {
            "its calls were all captured at the same time (captured over 0 s)"
        };
        return Err(CliError::Usage(format!(
            "--think-scale '{}' does not apply to trace '{}': {why}, so its calls are replayed \
             back to back; drop --think-scale, or give 0",
            a.think_scale,
            file.display()
        )));
    }
    // Also before the note: the one line of a refusal is the refusal.
    if let Some(why) = think_scale_beyond_clock(&rec, think_scale) {
        return Err(CliError::Usage(format!(
            "--think-scale '{}' {why}",
            a.think_scale
        )));
    }
    eprintln!("futexhash: {}", rec.note);
    let name = format!("trace:{}", file.display());
    // The replays are written together when all are done: an interruption keeps nothing.
    super::interrupt::watch(super::interrupt::Keeps::Nothing);
    let mut records = Vec::new();
    for &b in &buckets {
        for h in &hashers {
            let rd = ReplayDesign {
                design: a.design,
                global_buckets: a.global_buckets,
                ..ReplayDesign::default()
            };
            let mut r = replay_with_interval(profile, &rec, &name, h, b, think_scale, &rd)?;
            r.warning = crate::stats::warning::tables_warning(
                &**h,
                &rec.keys,
                b,
                r.global_buckets,
                "trace",
            );
            records.push(r);
        }
    }
    let text = match a.out.format {
        Format::Json => output::to_json(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Csv => output::to_csv(&records).map_err(|e| CliError::Runtime(e.to_string()))?,
        Format::Table => {
            let first = &records[0];
            let think = if first.think == "none" {
                "none (the trace has no call times: calls replayed back to back)".to_string()
            } else if think_scale == 1.0 {
                "as captured (each thread's start and the gaps between its call entries)"
                    .to_string()
            } else {
                format!("captured starts and gaps x {}", a.think_scale)
            };
            // Within 100 columns: the comments wrap, the table's columns split into
            // tables that repeat the row labels (buckets, algo).
            let mut head = wrap_comment(
                &format!("# replay of {name} on profile: {}", profile.name),
                100,
            );
            head.push_str(&wrap_comment(
                &format!(
                    "# {} threads, {} operations, captured over {:.6} s; think time: {think}",
                    first.threads, first.ops, first.captured_secs,
                ),
                100,
            ));
            head.push_str(&wrap_comment(
                &format!(
                    "# design: {} buckets, {} lock, refcount {}",
                    first.layout, first.lock, first.refcount
                ),
                100,
            ));
            head.push_str(&wrap_comment(
                &format!(
                    "# 80 % interval: {} (a replay has no start order to vary), model error as measured by sim validate --cv (with the shared reference on a private table: as its exam measured)",
                    crate::sim::uncertainty::spread_source(profile)
                ),
                100,
            ));
            format!("{head}{}", table_text(&records))
        }
    };
    super::interrupt::claim_output();
    a.out.emit(&text)
}

/// The table of `records`, the legend of its contention columns and, per record, the
/// buckets with the most waits and, when the data shows it, that no hash can help.
fn table_text(records: &[ReplayRecord]) -> String {
    let mut t = TextTable::new([
        "buckets",
        "algo",
        "ops/s/thread",
        "80 % interval",
        "cont %",
        "same %",
        "bucket %",
        "wait ns",
        "p99 ns",
    ]);
    for r in records {
        t.push(vec![
            bucket_label(r),
            r.algo.clone(),
            fmt_grouped(r.ops_per_sec, 0),
            format!(
                "{} … {}",
                fmt_grouped(r.ops_per_sec_lo, 0),
                fmt_grouped(r.ops_per_sec_hi, 0)
            ),
            format!(
                "{:.2}{}",
                r.contended_pct,
                if r.warning.is_empty() { "" } else { " !" }
            ),
            format!("{:.2}", r.contended_same_key_pct),
            format!("{:.2}", r.contended_shared_bucket_pct),
            format!("{:.1}", r.lock_wait_ns_mean),
            r.latency_ns_p99.to_string(),
        ]);
    }
    let mut out = t.render_within(100, 2);
    for r in records.iter().filter(|r| !r.warning.is_empty()) {
        if !out.contains("# ! =") {
            out.push_str("# ! = the hasher fails a distribution test on the trace's keys there:\n");
        }
        out.push_str(&wrap_comment(
            &format!("# ! {} at {}: {}", r.algo, bucket_label(r), r.warning),
            100,
        ));
    }
    out.push_str(
        "# cont % = acquisitions that found the bucket lock held = same % (held for the same\n\
         #   futex: no hash or table size can help) + bucket % (held for another futex of the\n\
         #   bucket: the hash and the table size can help). JSON/CSV have every field.\n",
    );
    for r in records.iter().filter(|r| r.contended > 0) {
        out.push_str(&format!(
            "# {} {}: {} of {} acquisitions waited; hottest buckets:\n",
            bucket_label(r),
            r.algo,
            r.contended,
            r.acquisitions
        ));
        for h in &r.hot_buckets {
            out.push_str(&format!(
                "#   {}: {} waits ({} same futex), {} key(s):\n",
                h.bucket,
                h.waits,
                h.same_key_waits,
                h.keys.len(),
            ));
            for k in h.keys.iter().take(3) {
                out.push_str(&format!("#     {k}\n"));
            }
            if h.keys.len() > 3 {
                out.push_str(&format!("#     (+{} more)\n", h.keys.len() - 3));
            }
        }
        let same_share = r.contended_same_key_pct / r.contended_pct;
        if r.contended >= SAME_KEY_VERDICT_MIN_WAITS && same_share >= SAME_KEY_VERDICT_SHARE {
            out.push_str(&format!(
                "#   {:.1} % of these waits were for the same futex: no hash or table size can help\n",
                100.0 * same_share
            ));
        }
    }
    out
}

/// `65536 global` or `N/process`.
fn bucket_label(r: &ReplayRecord) -> String {
    if r.buckets == 0 {
        format!("{} global", r.global_buckets)
    } else {
        format!("{}/process", r.buckets)
    }
}

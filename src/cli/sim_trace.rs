//! `futexhash sim --workload trace:FILE`: replays a captured program's per-thread futex
//! operations on a machine profile ([`crate::sim::trace_replay`]), one record per table
//! size and hasher.

use super::{CliError, OutputArgs, args};
use crate::hashers::HashKey;
use crate::render::output::wrap_comment;
use crate::render::{Format, TextTable, fmt_grouped, output};
use crate::sim::profile::MachineProfile;
use crate::sim::uncertainty::replay_with_interval;
use std::path::Path;

/// The `sim` flags the replay uses.
pub(super) struct TraceSimArgs<'a> {
    pub threads_given: bool,
    pub buckets: &'a str,
    pub algo: &'a str,
    pub think_scale: f64,
    pub out: &'a OutputArgs,
}

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

pub(super) fn run(profile: &MachineProfile, file: &Path, a: &TraceSimArgs) -> Result<(), CliError> {
    if a.threads_given {
        return Err(CliError::Usage(
            "-t does not apply to --workload trace:FILE: the trace's own threads are replayed"
                .into(),
        ));
    }
    if !(a.think_scale >= 0.0 && a.think_scale.is_finite() && a.think_scale <= 1e6) {
        return Err(CliError::Usage(format!(
            "--think-scale '{}' must be a number between 0 and 1000000",
            a.think_scale
        )));
    }
    let buckets = args::pow2_list(a.buckets, "buckets", true)?;
    if let Some(b) = buckets.iter().find(|&&b| b > 1 << 24) {
        return Err(CliError::Usage(format!(
            "bucket count '{b}' is too large; at most 16777216 (2^24)"
        )));
    }
    let hashers = args::algo_list(a.algo, HashKey::DEFAULT)?;
    let rec = crate::workload::read_trace(file).map_err(CliError::usage)?;
    eprintln!("futexhash: {}", rec.note);
    let name = format!("trace:{}", file.display());
    let mut records = Vec::new();
    for &b in &buckets {
        for h in &hashers {
            let mut r = replay_with_interval(profile, &rec, &name, h, b, a.think_scale)
                .map_err(CliError::Usage)?;
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
            } else if a.think_scale == 1.0 {
                "as captured (gaps between a thread's call entries)".to_string()
            } else {
                format!("captured gaps x {}", a.think_scale)
            };
            let mut t = TextTable::new([
                "table",
                "buckets",
                "algo",
                "ops/s per thread",
                "ops/s total",
                "contended %",
                "lock wait ns",
                "p50 ns",
                "p99 ns",
                "simulated s",
            ]);
            for r in &records {
                t.push(vec![
                    r.table.to_string(),
                    if r.buckets == 0 {
                        format!("{} (global)", r.global_buckets)
                    } else {
                        format!("{} per process", r.buckets)
                    },
                    r.algo.clone(),
                    fmt_grouped(r.ops_per_sec, 0),
                    fmt_grouped(r.ops_per_sec_total, 0),
                    format!(
                        "{:.2}{}",
                        r.contended_pct,
                        if r.warning.is_empty() { "" } else { " !" }
                    ),
                    format!("{:.1}", r.lock_wait_ns_mean),
                    r.latency_ns_p50.to_string(),
                    r.latency_ns_p99.to_string(),
                    format!("{:.6}", r.simulated_secs),
                ]);
            }
            // Within 100 columns: the comments wrap, the table's columns split into
            // tables that repeat the row labels (table, buckets, algo).
            let mut head = wrap_comment(&format!("# replay of {name}"), 100);
            head.push_str(&wrap_comment(&format!("# profile: {}", profile.name), 100));
            head.push_str(&wrap_comment(
                &format!(
                    "# {} threads, {} operations, captured over {:.6} s; think time: {think}",
                    first.threads, first.ops, first.captured_secs,
                ),
                100,
            ));
            let mut notes = String::new();
            for r in records.iter().filter(|r| !r.warning.is_empty()) {
                if notes.is_empty() {
                    notes.push_str(
                        "! = the hasher fails a distribution test on the trace's keys there:\n",
                    );
                }
                notes.push_str(&wrap_comment(
                    &format!("# ! {} at -b {}: {}", r.algo, r.buckets, r.warning),
                    100,
                ));
            }
            format!("{head}{}{notes}", t.render_within(100, 3))
        }
    };
    a.out.emit(&text)
}

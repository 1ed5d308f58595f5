//! Runs the contention workloads ([`super::lock`], [`super::noisy`]) as records: the
//! `lock` workload once per backend (and model hasher) — model tables in this process,
//! the kernel in a child process ([`super::child`]) — and the text table of `lock` and
//! `noisy` records.

use super::child::{self, ChildConfig};
use super::kernel;
use super::lock::{ModelLockFutex, lock_run};
use super::options::{
    BackendChoice, BenchError, ContendResult, ContendSpec, LockShape, model_spec,
};
use super::runner::{RunConfig, allowed_cpus};
use crate::hashers::KeyHasher;
use crate::render::{MAIL_WIDTH, TextTable, fmt_grouped};
use crate::table::{ModelTable, TableKind};
use crate::throughput::record::{BenchRecord, RecordMeta};
use crate::throughput::{Layout as RecLayout, TableKind as RecTable};
use crate::throughput::{RunOutcome, Workload};

pub use super::noisy::run_noisy;

fn rt(message: String) -> BenchError {
    BenchError::runtime(message)
}

/// The oversubscription warning of a lock run: every thread that runs counts, holders as
/// well as contenders (a record's `threads` counts contenders only).
fn busy_warning(shape: LockShape, cpus: usize) -> Option<String> {
    let contenders = shape.groups * shape.contenders;
    let holders = shape.groups * shape.holders;
    let all = contenders + holders;
    (all > cpus).then(|| {
        format!(
            "{all} threads ({contenders} contenders, {holders} holders) on {cpus} CPUs: \
             oversubscribed, so waits also measure the scheduler"
        )
    })
}

/// The `lock` workload on every backend (and model hasher) of `spec`.
pub fn run_lock(spec: &ContendSpec) -> Result<ContendResult, BenchError> {
    let shape = LockShape {
        groups: spec.groups.max(1),
        holders: spec.holders,
        contenders: spec.threads,
    };
    let mut res = ContendResult::default();
    for &b in &spec.backends {
        let runs: Vec<(String, RecTable, u64, RunOutcome, RunOutcome, u32)> = match b {
            BackendChoice::Model => {
                let mut v = Vec::new();
                for algo in &spec.model.algos {
                    let ms = model_spec(&spec.model, algo.clone(), spec.buckets);
                    let kind = ms.kind;
                    let table = ModelTable::build(ms)
                        .map_err(|e| BenchError::usage(format!("model table: {e}")))?;
                    let size = table.size() as u64;
                    let f = ModelLockFutex {
                        numa: kind == TableKind::Numa,
                        table,
                    };
                    let (c, h) = lock_run(&f, shape, spec.runtime).map_err(rt)?;
                    v.push((
                        algo.name().to_string(),
                        kind.into(),
                        spec.buckets.unwrap_or(size),
                        c,
                        h,
                        std::process::id(),
                    ));
                }
                v
            }
            BackendChoice::Kernel => {
                let cfg = ChildConfig {
                    run: RunConfig::new(1, 1, spec.runtime, Workload::Hash),
                    slots: spec.buckets.filter(|_| kernel::private_hash_supported()),
                    shared: false,
                    mlockall: false,
                    lock: Some(shape),
                };
                let mut fwd = |s: &str| eprint!("{s}");
                let exe = child::resolve_exe(spec.exe.as_deref())?;
                let r = child::run_in_child(&exe, &cfg, &mut fwd)?;
                let h = r
                    .lock_outcome
                    .ok_or_else(|| rt("the child did not run the lock test".into()))?;
                let buckets = spec.buckets.or(r.slots_applied).unwrap_or(0);
                vec![(
                    "kernel".into(),
                    if buckets == 0 {
                        RecTable::Global
                    } else {
                        RecTable::Private
                    },
                    buckets,
                    r.outcome,
                    h,
                    r.pid,
                )]
            }
        };
        for (algo, table, buckets, c, h, pid) in runs {
            let layout = match b {
                BackendChoice::Model => spec.model.layout.into(),
                BackendChoice::Kernel => RecLayout::Kernel,
            };
            let mut r = BenchRecord::new(
                RecordMeta {
                    backend: b.record(),
                    algo,
                    table,
                    layout,
                    buckets,
                    futexes: 1,
                    workload: Workload::Hash,
                    shared: false,
                    slots_applied: None,
                    pid,
                },
                &c,
            );
            r.workload = "lock";
            r.lock_ops_per_sec =
                Some(crate::throughput::stats::ThroughputStats::from_rates(&h.rates()).mean);
            r.unexpected += h.threads.iter().map(|t| t.unexpected).sum::<u64>();
            if r.unexpected > 0 {
                res.warnings.push(format!(
                    "lock test ({} {}): {} unexpected results (critical-section violations or \
                     contender waits that did not fail)",
                    r.backend, r.algo, r.unexpected
                ));
            }
            res.records.push(r);
        }
    }
    res.warnings
        .extend(busy_warning(shape, allowed_cpus().len()));
    Ok(res)
}
/// A table of `lock` / `noisy` records.
pub fn render(records: &[BenchRecord]) -> String {
    let noisy = records.iter().any(|r| r.workload == "noisy");
    let mut headers: Vec<String> = ["backend", "algo", "table", "buckets"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if noisy {
        headers.extend(
            [
                "victim ops/s",
                "p50 ns",
                "p99 ns",
                "p99.9 ns",
                "shared buckets",
                "noisy ops/s",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
    } else {
        headers.extend(
            ["contenders", "contender loops/s", "lock loops/s"]
                .iter()
                .map(|s| s.to_string()),
        );
    }
    let mut t = TextTable::new(headers);
    let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    for r in records {
        let mut row = vec![
            r.backend.to_string(),
            r.algo.clone(),
            r.table.to_string(),
            r.buckets.to_string(),
        ];
        if noisy {
            row.push(fmt_grouped(r.ops_per_sec, 0));
            row.push(opt(r.victim_latency_ns_p50));
            row.push(opt(r.victim_latency_ns_p99));
            row.push(opt(r.victim_latency_ns_p999));
            row.push(match (r.shared_buckets, r.victim_buckets) {
                (Some(s), Some(v)) => format!("{s} of {v}"),
                _ => "-".into(),
            });
            row.push(fmt_grouped(r.noisy_ops_per_sec.unwrap_or(0.0), 0));
        } else {
            // A lock record's `threads` counts its contenders (holders run besides).
            row.push(r.threads.to_string());
            row.push(fmt_grouped(r.ops_per_sec, 0));
            row.push(fmt_grouped(r.lock_ops_per_sec.unwrap_or(0.0), 0));
        }
        t.push(row);
    }
    let mut s = t.render_within(MAIL_WIDTH, 4);
    s.push_str(if noisy {
        "victim: mean ops/sec per thread and latency of every operation; shared buckets: the \
         victim's buckets that the noisy process's futexes also hash to (model only)\n"
    } else {
        "per-thread loops/sec: contenders (failing waits on the lock's bucket, the seed's \
         \"contenders:\" count) and lock holders (lock + critical section + unlock)\n"
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-t 4` with the default 2 groups and 2 holders runs 2 × (4 + 2) = 12 threads: the
    /// warning counts them all, not the 8 contenders a record's `threads` counts.
    #[test]
    fn the_busy_warning_counts_holders_too() {
        let shape = LockShape {
            groups: 2,
            holders: 2,
            contenders: 4,
        };
        let w = busy_warning(shape, 2).unwrap();
        assert!(
            w.starts_with("12 threads (8 contenders, 4 holders) on 2 CPUs"),
            "{w}"
        );
        // 12 threads on 10 CPUs are too many although the 8 contenders would fit.
        assert!(busy_warning(shape, 10).is_some());
        assert!(busy_warning(shape, 12).is_none());
    }
}

//! The `noisy` workload: the noisy neighbour that motivated the private hash (seed 000,
//! the 2025 private futex hash series): a victim process (few threads, few futexes,
//! *every* operation timed) runs perf's failing wait next to a noisy process doing the same
//! on many futexes, once with both in the global table and once with a private table each.
//! Reported: the victim's p50/p99/p99.9 latency, its rate, the noisy rate, and (model) how
//! many of the victim's buckets the noisy process's futexes also hash to.
//!
//! Model runs are in this process: two synthetic processes (two `mm` values, each a
//! [`Process`]) over one global table, both driven by [`TableBackend`]. Kernel runs are two
//! concurrent child processes ([`super::child`]), victim and noisy.

use super::backend::{Keys, SYNTHETIC_MM, SYNTHETIC_MM_2, TableBackend, make_key};
use super::child::{self, ChildConfig};
use super::kernel;
use super::options::{BackendChoice, BenchError, ContendResult, ContendSpec, ModelOptions};
use super::runner::{self, RunConfig, allowed_cpus};
use crate::hashers::{KeyHasher, SharedHasher};
use crate::table::{
    Aligned, BucketId, BucketLayout, GlobalTable, Packed, Process, SlotPolicy,
    kernel_per_node_size, merged_default_slots, possible_cpus,
};
use crate::throughput::record::{BenchRecord, RecordMeta};
use crate::throughput::{Layout as RecLayout, TableKind as RecTable};
use crate::throughput::{RunOutcome, Workload};
use std::collections::HashSet;
use std::sync::Arc;

fn rt(message: String) -> BenchError {
    BenchError::runtime(message)
}

/// A process of the noisy-neighbour model: its own `mm`, sharing the global table.
type ProcBackend<L> = TableBackend<Process<SharedHasher, L>>;

/// The `mm` a backend's keys belong to.
fn mm_of<T>(b: &TableBackend<T>) -> u64 {
    match b.keys {
        Keys::ByAddress { mm, .. } => mm,
        Keys::PerThread(_) => SYNTHETIC_MM,
    }
}

/// What one noisy-neighbour run measured.
struct NoisyRun {
    victim: RunOutcome,
    noisy: RunOutcome,
    victim_buckets: Option<u64>,
    shared_buckets: Option<u64>,
    slots: u64,
    pid: u32,
}

/// Buckets (global or private table, index) the keys of the words `first..=last` map to.
fn buckets_of<L: BucketLayout>(
    p: &Process<SharedHasher, L>,
    mm: u64,
    out: &RunOutcome,
) -> HashSet<BucketId> {
    let mut set = HashSet::new();
    for t in &out.threads {
        let mut a = t.first_addr;
        while a <= t.last_addr {
            set.insert(p.route(&make_key(mm, a, false)));
            a += 4;
        }
    }
    set
}

fn noisy_model<L: BucketLayout>(
    algo: SharedHasher,
    opts: &ModelOptions,
    spec: &ContendSpec,
    private: bool,
) -> Result<NoisyRun, BenchError> {
    let cpus = possible_cpus();
    let g = GlobalTable::<SharedHasher, L>::new(
        algo.clone(),
        crate::table::Geometry {
            nodes: 1,
            per_node: kernel_per_node_size(cpus, 1),
            reduce: crate::table::Reduce::Mask,
            squash: false,
        },
    )
    .map_err(|e| rt(e.to_string()))?;
    let g = Arc::new(g);
    let slots = if private {
        let threads = spec.threads.max(spec.victim_threads);
        spec.buckets
            .filter(|&b| b != 0)
            .unwrap_or(merged_default_slots(threads, cpus, g.per_node_size()) as u64)
    } else {
        0
    };
    let mk = |mm: u64| -> Result<ProcBackend<L>, BenchError> {
        let p = Process::new(
            mm,
            g.clone(),
            algo.clone(),
            SlotPolicy::Manual,
            crate::table::Reduce::Mask,
            cpus,
        );
        p.set_slots(slots)
            .map_err(|e| BenchError::usage(format!("private slots {slots}: {e}")))?;
        Ok(TableBackend {
            table: p,
            keys: Keys::ByAddress { mm, shared: false },
        })
    };
    let _ = opts;
    let (v, n) = (mk(SYNTHETIC_MM)?, mk(SYNTHETIC_MM_2)?);
    let vcfg = RunConfig {
        sample_period: 1,
        ..RunConfig::new(
            spec.victim_threads,
            spec.victim_futexes,
            spec.runtime,
            Workload::Hash,
        )
    };
    let ncfg = RunConfig {
        first_cpu: spec.victim_threads,
        ..RunConfig::new(spec.threads, spec.futexes, spec.runtime, Workload::Hash)
    };
    let (vo, no) = std::thread::scope(|s| {
        let nh = s.spawn(|| runner::run(&n, &ncfg));
        let vo = runner::run(&v, &vcfg);
        (vo, nh.join())
    });
    let vo = vo.map_err(|e| rt(e.0))?;
    let no = no
        .map_err(|_| rt("noisy runner panicked".into()))?
        .map_err(|e| rt(e.0))?;
    let vb = buckets_of(&v.table, mm_of(&v), &vo);
    let nb = buckets_of(&n.table, mm_of(&n), &no);
    // Private-table buckets of different processes are different buckets.
    let shared = vb
        .iter()
        .filter(|b| !b.is_private() && nb.contains(b))
        .count();
    Ok(NoisyRun {
        victim: vo,
        noisy: no,
        victim_buckets: Some(vb.len() as u64),
        shared_buckets: Some(shared as u64),
        slots,
        pid: std::process::id(),
    })
}

fn noisy_kernel(spec: &ContendSpec, private: bool) -> Result<NoisyRun, BenchError> {
    let exe = child::resolve_exe(spec.exe.as_deref())?;
    let slots = if private {
        spec.buckets.filter(|&b| b != 0)
    } else {
        Some(0)
    };
    let vcfg = ChildConfig {
        run: RunConfig {
            sample_period: 1,
            ..RunConfig::new(
                spec.victim_threads,
                spec.victim_futexes,
                spec.runtime,
                Workload::Hash,
            )
        },
        slots,
        shared: false,
        mlockall: false,
        lock: None,
    };
    let ncfg = ChildConfig {
        run: RunConfig {
            first_cpu: spec.victim_threads,
            ..RunConfig::new(spec.threads, spec.futexes, spec.runtime, Workload::Hash)
        },
        slots,
        shared: false,
        mlockall: false,
        lock: None,
    };
    let (v, n) = std::thread::scope(|s| {
        let e2 = exe.clone();
        let nh = s.spawn(move || child::run_in_child(&e2, &ncfg, &mut |l| eprint!("{l}")));
        let v = child::run_in_child(&exe, &vcfg, &mut |l| eprint!("{l}"));
        (v, nh.join())
    });
    let v = v?;
    let n = n.map_err(|_| rt("noisy child thread panicked".into()))??;
    Ok(NoisyRun {
        slots: v.slots_applied.unwrap_or(0),
        victim: v.outcome,
        noisy: n.outcome,
        victim_buckets: None,
        shared_buckets: None,
        pid: v.pid,
    })
}

/// The `noisy` workload: for each backend (and model hasher), a run with both processes in
/// the global table, then one with a private table each.
pub fn run_noisy(spec: &ContendSpec) -> Result<ContendResult, BenchError> {
    let mut res = ContendResult::default();
    let private_ok = kernel::private_hash_supported();
    for &b in &spec.backends {
        let algos: Vec<Option<SharedHasher>> = match b {
            BackendChoice::Model => spec.model.algos.iter().map(|a| Some(a.clone())).collect(),
            BackendChoice::Kernel => vec![None],
        };
        for algo in algos {
            for private in [false, true] {
                if b == BackendChoice::Kernel && private && !private_ok {
                    res.warnings.push(
                        "this kernel has no private futex hash (PR_FUTEX_HASH): the noisy \
                         neighbour runs with the global hash only"
                            .into(),
                    );
                    continue;
                }
                if super::interrupt::requested() {
                    // SIGINT/SIGTERM: keep the runs that finished, start no other.
                    return Ok(res);
                }
                let run = match (b, algo.clone()) {
                    (BackendChoice::Model, Some(a)) => match spec.model.layout {
                        crate::table::Layout::Aligned => {
                            noisy_model::<Aligned>(a, &spec.model, spec, private)
                        }
                        crate::table::Layout::Packed => {
                            noisy_model::<Packed>(a, &spec.model, spec, private)
                        }
                    },
                    _ => noisy_kernel(spec, private),
                };
                let run = match run {
                    Ok(r) => r,
                    // A child stopped by the interrupt has no report: the runs before it stand.
                    Err(_) if super::interrupt::requested() => return Ok(res),
                    Err(e) => return Err(e),
                };
                let mut r = BenchRecord::new(
                    RecordMeta {
                        backend: b.record(),
                        algo: algo.as_ref().map_or("kernel".into(), |a| a.name().into()),
                        table: if private {
                            RecTable::Private
                        } else {
                            RecTable::Global
                        },
                        layout: match b {
                            BackendChoice::Model => spec.model.layout.into(),
                            BackendChoice::Kernel => RecLayout::Kernel,
                        },
                        buckets: run.slots,
                        futexes: spec.victim_futexes,
                        workload: Workload::Hash,
                        shared: false,
                        slots_applied: None,
                        pid: run.pid,
                    },
                    &run.victim,
                );
                r.workload = "noisy";
                r.victim_latency_ns_p50 = Some(run.victim.latency_ns_p50);
                r.victim_latency_ns_p99 = Some(run.victim.latency_ns_p99);
                r.victim_latency_ns_p999 = Some(run.victim.latency_ns_p999);
                r.victim_buckets = run.victim_buckets;
                r.shared_buckets = run.shared_buckets;
                r.noisy_ops_per_sec = Some(
                    crate::throughput::stats::ThroughputStats::from_rates(&run.noisy.rates()).mean,
                );
                res.records.push(r);
            }
        }
    }
    let cpus = allowed_cpus().len();
    if spec.threads + spec.victim_threads > cpus {
        res.warnings.push(format!(
            "victim ({}) + noisy ({}) threads exceed the {cpus} CPUs: the victim's latency then \
             includes waiting for a CPU",
            spec.victim_threads, spec.threads
        ));
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::contend::render;
    use std::time::Duration;

    fn noisy_spec() -> ContendSpec {
        ContendSpec {
            backends: vec![BackendChoice::Model],
            model: ModelOptions::default(),
            threads: 1,
            buckets: Some(16),
            futexes: 1024,
            runtime: Duration::from_millis(20),
            holders: 2,
            groups: 1,
            victim_threads: 1,
            victim_futexes: 4,
            exe: None,
        }
    }

    #[test]
    fn noisy_model_shares_buckets_only_in_the_global_table() {
        let r = run_noisy(&noisy_spec()).unwrap();
        assert_eq!(r.records.len(), 2);
        let (g, p) = (&r.records[0], &r.records[1]);
        assert_eq!((g.table, p.table), (RecTable::Global, RecTable::Private));
        assert_eq!(p.buckets, 16);
        // The victim's 4 keys land in at most 4 buckets.
        let vb = g.victim_buckets.unwrap();
        assert!((1..=4).contains(&vb));
        // Private tables never share. In the global table (G = 256 × CPUs buckets) each of
        // the victim's buckets escapes all 1024 noisy futexes with probability
        // (1 − 1/G)^1024, e^-2 ≈ 0.14 for this 2-CPU machine's G = 512 and at most 0.61 for
        // G = 2048; so "no bucket shared" has probability ≤ 0.14^vb here (3·10^-4 for the
        // usual vb = 4) unless the table wrongly keeps the processes apart.
        assert_eq!(p.shared_buckets, Some(0));
        let shared = g.shared_buckets.unwrap();
        assert!((1..=vb).contains(&shared), "{shared} of {vb}");
        for rec in [g, p] {
            let (a, b, c) = (
                rec.victim_latency_ns_p50.unwrap(),
                rec.victim_latency_ns_p99.unwrap(),
                rec.victim_latency_ns_p999.unwrap(),
            );
            assert!(a > 0 && a <= b && b <= c, "{rec:?}");
            assert!(rec.noisy_ops_per_sec.unwrap() > 0.0);
            assert_eq!(rec.workload, "noisy");
        }
        assert!(render(&r.records).contains("of"));
    }
}

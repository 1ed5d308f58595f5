//! Programmatic sweeps: every (backend, hasher, threads, buckets) configuration of a
//! `futexhash bench` invocation, measured one after the other, as [`BenchRecord`]s. The CLI
//! (`futexhash bench`) and `futexhash report` both call [`sweep`].
//!
//! Model configurations run in this process (a fresh [`ModelTable`] for each); kernel
//! configurations each run in a child process of the `futexhash` binary (see
//! [`super::kernel`]), because a private-hash slot setting sticks to a process.

use super::backend::TableBackend;
use super::child::{self, ChildConfig};
use super::kernel;
use super::limits;
use super::runner::{self, RunConfig, allowed_cpus};
use crate::hashers::{KeyHasher, SharedHasher};
use crate::table::{ModelTable, TableKind, kernel_per_node_size, possible_cpus};
use crate::throughput::record::{self, BenchRecord, RecordMeta};
use crate::throughput::{Backend, Layout as RecLayout, TableKind as RecTable};
use crate::throughput::{RunOutcome, Workload};
use std::path::PathBuf;
use std::time::Duration;

pub use super::options::{BackendChoice, BenchError, ModelOptions, model_spec};

/// A whole sweep.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// Backends, in column order (e.g. `[Model, Kernel]` for side by side).
    pub backends: Vec<BackendChoice>,
    /// Model options (ignored for kernel configurations).
    pub model: ModelOptions,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Bucket counts; `None`: the kernel's automatic sizing (kernel) / the kernel's size
    /// (model).
    pub buckets: Option<Vec<u64>>,
    /// Futex words per thread.
    pub futexes: usize,
    /// Run time of each configuration.
    pub runtime: Duration,
    /// The loop.
    pub workload: Workload,
    /// Shared futexes (`-S`).
    pub shared: bool,
    /// `mlockall` in the kernel children.
    pub mlockall: bool,
    /// The `futexhash` binary for kernel children; `None` = this process's executable
    /// (right when the caller *is* `futexhash`).
    pub exe: Option<PathBuf>,
}

impl SweepSpec {
    /// A quick sweep: `backends`, the default model options, 1 thread per CPU, perf's 1024
    /// futexes, `runtime`, the hash workload, buckets `buckets`.
    pub fn new(backends: Vec<BackendChoice>, buckets: Option<Vec<u64>>, runtime: Duration) -> Self {
        SweepSpec {
            backends,
            model: ModelOptions::default(),
            threads: vec![allowed_cpus().len()],
            buckets,
            futexes: 1024,
            runtime,
            workload: Workload::Hash,
            shared: false,
            mlockall: false,
            exe: None,
        }
    }
}

/// One configuration of a sweep.
#[derive(Clone, Debug)]
pub struct Config {
    /// Backend.
    pub backend: BackendChoice,
    /// Hasher (model only).
    pub algo: Option<SharedHasher>,
    /// Threads.
    pub threads: usize,
    /// Buckets (None: kernel default).
    pub buckets: Option<u64>,
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{} t={} b={}",
            self.backend.as_str(),
            self.algo
                .as_ref()
                .map_or(String::new(), |a| format!("/{}", a.name())),
            self.threads,
            self.buckets.map_or("auto".into(), |b| b.to_string())
        )
    }
}

/// One measured configuration: its record, the raw outcome (perf's per-thread lines) and
/// perf's "Futex hashing: ..." line.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The record (CSV/JSON row).
    pub record: BenchRecord,
    /// Per-thread results.
    pub outcome: RunOutcome,
    /// perf's last line.
    pub hash_line: String,
}

/// What a sweep produced.
#[derive(Clone, Debug, Default)]
pub struct SweepResult {
    /// One per configuration run, in [`configs`] order (kernel bucket counts the kernel
    /// cannot run are skipped).
    pub measured: Vec<Measured>,
    /// Warnings for the user (one line each, no prefix).
    pub warnings: Vec<String>,
    /// SIGINT/SIGTERM stopped the sweep ([`super::interrupt`]): `measured` holds what ran,
    /// the last configuration for the time it ran. Saying so, with the signal, is the
    /// caller's (the CLI's line names the signal as every interrupted subcommand's does).
    pub interrupted: bool,
    /// The configurations the sweep was to run (kernel sizes the kernel cannot run left
    /// out), of which `measured` ran.
    pub total: usize,
}

impl SweepResult {
    /// The records alone.
    pub fn records(&self) -> Vec<BenchRecord> {
        self.measured.iter().map(|m| m.record.clone()).collect()
    }
}

fn usage(message: String) -> BenchError {
    BenchError::usage(message)
}

/// Checks the request before anything runs (the same checks the CLI reports as usage
/// errors).
pub fn validate(spec: &SweepSpec) -> Result<(), BenchError> {
    if spec.backends.is_empty() {
        return Err(usage("no backend chosen".into()));
    }
    if spec.threads.is_empty() || spec.threads.contains(&0) {
        return Err(usage("thread counts must be at least 1".into()));
    }
    if spec.futexes == 0 {
        return Err(usage("futexes per thread must be at least 1".into()));
    }
    if let Some(b) = &spec.buckets {
        if let Some(bad) = b.iter().find(|&&b| b != 0 && !b.is_power_of_two()) {
            return Err(usage(format!(
                "bucket count '{bad}' is not a power of two (or 0 = global hash)"
            )));
        }
        if b.contains(&1) && spec.backends.contains(&BackendChoice::Kernel) {
            return Err(usage(
                "bucket count '1' is refused by the kernel; use 0 (global hash) or a power of two >= 2"
                    .into(),
            ));
        }
        if b.contains(&1) && spec.model.table == TableKind::Private {
            return Err(usage(
                "bucket count '1' is not a private table size (the kernel refuses it); use 0 \
                 (global hash) or a power of two >= 2"
                    .into(),
            ));
        }
    }
    check_resources(spec)?;
    if spec.backends.contains(&BackendChoice::Model) {
        if spec.model.algos.is_empty() {
            return Err(usage("no model hasher chosen".into()));
        }
        if spec.model.squash && spec.model.table == TableKind::Private {
            return Err(usage(
                "--squash applies to the global and numa model tables".into(),
            ));
        }
        if spec.model.nodes == 0 || (spec.model.nodes > 1 && spec.model.table != TableKind::Numa) {
            return Err(usage(format!(
                "{} nodes: only the numa model table has several nodes (and at least 1)",
                spec.model.nodes
            )));
        }
        // Build each distinct table once to surface errors before measuring.
        let bl: Vec<Option<u64>> = match &spec.buckets {
            Some(v) => v.iter().map(|&b| Some(b)).collect(),
            None => vec![None],
        };
        for b in bl {
            ModelTable::build(model_spec(&spec.model, spec.model.algos[0].clone(), b))
                .map_err(|e| usage(format!("model table: {e}")))?;
        }
    }
    Ok(())
}

/// Bytes of the model table of `opts` with `buckets` (see [`model_spec`]): nodes × buckets
/// per node × bucket size, plus, for a private table, the process's global table.
pub fn model_table_bytes(opts: &ModelOptions, buckets: Option<u64>) -> u64 {
    let kind = match (opts.table, buckets) {
        (TableKind::Private, Some(0)) => TableKind::Global,
        (k, _) => k,
    };
    let nodes = if kind == TableKind::Numa {
        opts.nodes
    } else {
        1
    } as u64;
    let kernel_size = |n: u64| kernel_per_node_size(possible_cpus(), n as usize) as u64;
    let per_node = match buckets {
        None | Some(0) => kernel_size(nodes),
        Some(b) => b,
    };
    let buckets = match kind {
        TableKind::Private => per_node.saturating_add(kernel_size(1)),
        _ => per_node.saturating_mul(nodes),
    };
    buckets.saturating_mul(limits::bucket_bytes(opts.layout))
}

/// Refuses a sweep whose largest configuration would exceed this machine's limits
/// ([`limits`]) before anything is allocated.
fn check_resources(spec: &SweepSpec) -> Result<(), BenchError> {
    let model = spec.backends.contains(&BackendChoice::Model);
    let table_bytes = if model {
        match &spec.buckets {
            Some(v) => v
                .iter()
                .map(|&b| model_table_bytes(&spec.model, Some(b)))
                .max()
                .unwrap_or(0),
            None => model_table_bytes(&spec.model, None),
        }
    } else {
        0
    };
    let threads = spec.threads.iter().copied().max().unwrap_or(1) as u64;
    limits::check(&limits::Needs {
        threads,
        futexes: spec.futexes as u64,
        keys: model,
        table_bytes,
    })
}

/// Every configuration of `spec` in run order: threads, then buckets, then backend (and
/// hasher), so that each row of the sweep table is measured close together in time.
pub fn configs(spec: &SweepSpec) -> Vec<Config> {
    let buckets: Vec<Option<u64>> = match &spec.buckets {
        Some(v) => v.iter().map(|&b| Some(b)).collect(),
        None => vec![None],
    };
    let mut out = Vec::new();
    for &threads in &spec.threads {
        for &b in &buckets {
            for &backend in &spec.backends {
                match backend {
                    BackendChoice::Model => {
                        for a in &spec.model.algos {
                            out.push(Config {
                                backend,
                                algo: Some(a.clone()),
                                threads,
                                buckets: b,
                            });
                        }
                    }
                    BackendChoice::Kernel => out.push(Config {
                        backend,
                        algo: None,
                        threads,
                        buckets: b,
                    }),
                }
            }
        }
    }
    out
}

/// Runs one model configuration in this process.
pub fn run_model(spec: &SweepSpec, c: &Config) -> Result<Measured, BenchError> {
    let algo = c
        .algo
        .clone()
        .unwrap_or_else(|| spec.model.algos[0].clone());
    let ms = model_spec(&spec.model, algo.clone(), c.buckets);
    let table = ModelTable::build(ms).map_err(|e| usage(format!("model table: {e}")))?;
    let kind = table.spec().kind;
    let (reduce, squash) = (table.spec().reduce, table.spec().squash);
    let describe = table.describe();
    // Shared keys always go to the global table, as in the kernel: with a private table
    // kind they use the process's global table of the kernel's size for this machine.
    let (table_name, size) = match kind {
        TableKind::Private if spec.shared => {
            (RecTable::Global, kernel_per_node_size(possible_cpus(), 1))
        }
        k => (RecTable::from(k), table.size()),
    };
    let backend = TableBackend::by_address(table, spec.shared);
    let cfg = RunConfig::new(c.threads, spec.futexes, spec.runtime, spec.workload);
    let outcome = runner::run(&backend, &cfg).map_err(|e| BenchError::runtime(e.0))?;
    let warning = if squash {
        // FUTEX_SQUASH puts every key in one bucket on purpose: nothing to judge.
        String::new()
    } else {
        // The keys the run used, as the backend keyed each thread's words.
        let backend = &backend;
        let keys: Vec<crate::key::FutexKey> = outcome
            .threads
            .iter()
            .enumerate()
            .flat_map(|(t, th)| {
                (th.first_addr..=th.last_addr)
                    .step_by(4)
                    .map(move |a| backend.key_for(t, a))
            })
            .collect();
        let mut hashes = vec![0u32; keys.len()];
        algo.hash_many(&keys, &mut hashes);
        crate::stats::warning::distribution_warning(&hashes, size as u64, reduce, "bench")
    };
    let mut record = BenchRecord::new(
        RecordMeta {
            backend: Backend::Model,
            algo: algo.name().into(),
            table: table_name,
            layout: spec.model.layout.into(),
            buckets: match (c.buckets, spec.shared) {
                (Some(b), false) => b,
                _ => size as u64,
            },
            futexes: spec.futexes,
            workload: spec.workload,
            shared: spec.shared,
            slots_applied: None,
            pid: std::process::id(),
        },
        &outcome,
    );
    record.warning = warning;
    let hash_line = if table_name == RecTable::Global && kind == TableKind::Private {
        format!(
            "Futex hashing: global hash, {size} buckets (shared futexes always use it; the \
             model's private table is unused)"
        )
    } else if kind == TableKind::Private {
        format!("Futex hashing: {size} hash buckets (model: {describe})")
    } else {
        format!("Futex hashing: global hash (model: {describe})")
    };
    Ok(Measured {
        record,
        outcome,
        hash_line,
    })
}

/// Runs one kernel configuration in a child process of `exe`.
pub fn run_kernel(
    spec: &SweepSpec,
    c: &Config,
    exe: &std::path::Path,
    forward_stderr: &mut dyn FnMut(&str),
) -> Result<Measured, BenchError> {
    let cfg = ChildConfig {
        run: RunConfig::new(c.threads, spec.futexes, spec.runtime, spec.workload),
        slots: c.buckets,
        shared: spec.shared,
        mlockall: spec.mlockall,
        lock: None,
    };
    let report = child::run_in_child(exe, &cfg, forward_stderr).map_err(|e| BenchError {
        usage: e.usage,
        message: format!("{c}: {}", e.message),
    })?;
    let slots = c.buckets.or(report.slots_applied).unwrap_or(0);
    // Shared futexes always hash into the global table, whatever the slots: record that
    // table and its size (per node), not the private setting.
    let global_size = kernel_per_node_size(possible_cpus(), kernel::possible_nodes()) as u64;
    let (table, buckets, hash_line) = if spec.shared {
        (
            RecTable::Global,
            global_size,
            format!(
                "Futex hashing: global hash, {global_size} buckets per node (shared futexes \
                 always use it)"
            ),
        )
    } else if slots == 0 {
        (
            RecTable::Global,
            0,
            record::kernel_hash_line(report.slots_requested, report.slots_applied),
        )
    } else {
        (
            RecTable::Private,
            slots,
            record::kernel_hash_line(report.slots_requested, report.slots_applied),
        )
    };
    let record = BenchRecord::new(
        RecordMeta {
            backend: Backend::Kernel,
            algo: "kernel".into(),
            table,
            layout: RecLayout::Kernel,
            buckets,
            futexes: spec.futexes,
            workload: spec.workload,
            shared: spec.shared,
            slots_applied: report.slots_applied,
            pid: report.pid,
        },
        &report.outcome,
    );
    Ok(Measured {
        hash_line,
        record,
        outcome: report.outcome,
    })
}

/// Progress of a sweep, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// About to run configuration `index` of `total`.
    Start {
        /// 0-based.
        index: usize,
        /// Configurations in the sweep.
        total: usize,
        /// Which.
        config: &'a Config,
    },
    /// A line the kernel child printed on stderr.
    Message(&'a str),
}

/// Runs every configuration of `spec` and returns the records. Kernel bucket counts the
/// kernel cannot run (no `PR_FUTEX_HASH`) are skipped with a warning; model configurations
/// run in this process, kernel ones in child processes of `spec.exe`. Blocks for about
/// (number of configurations) × runtime.
///
/// ```no_run
/// use futexhash::bench::sweep::{BackendChoice, SweepSpec, sweep};
/// use std::time::Duration;
/// let spec = SweepSpec::new(
///     vec![BackendChoice::Model, BackendChoice::Kernel],
///     Some(vec![2, 16, 1024, 0]),
///     Duration::from_millis(500),
/// );
/// let result = sweep(&spec, &mut |_| {}).unwrap();
/// for r in result.records() {
///     println!("{} {} {} {}", r.backend, r.algo, r.buckets, r.ops_per_sec);
/// }
/// ```
pub fn sweep(
    spec: &SweepSpec,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<SweepResult, BenchError> {
    validate(spec)?;
    let mut result = SweepResult::default();
    let mut cfgs = configs(spec);
    if spec.backends.contains(&BackendChoice::Kernel) && !kernel::private_hash_supported() {
        global_hash_only(spec, &mut cfgs, &mut result.warnings);
    }
    result.warnings.extend(request_warnings(spec, &cfgs));
    let exe = if spec.backends.contains(&BackendChoice::Kernel) {
        child::resolve_exe(spec.exe.as_deref())?
    } else {
        PathBuf::new()
    };
    let total = cfgs.len();
    for (index, c) in cfgs.iter().enumerate() {
        if super::interrupt::requested() {
            break;
        }
        progress(Progress::Start {
            index,
            total,
            config: c,
        });
        let m = match c.backend {
            BackendChoice::Model => run_model(spec, c)?,
            BackendChoice::Kernel => {
                let mut fwd = |s: &str| {
                    for l in s.lines().filter(|l| !l.trim().is_empty()) {
                        progress(Progress::Message(l));
                    }
                };
                run_kernel(spec, c, &exe, &mut fwd)?
            }
        };
        if m.record.unexpected > 0 {
            result.warnings.push(format!(
                "{}: {} of the futex calls did not return as expected (perf: \"Non-expected \
                 futex return call\")",
                c, m.record.unexpected
            ));
        }
        result.measured.push(m);
    }
    result.total = total;
    result.interrupted = super::interrupt::requested();
    result
        .warnings
        .extend(busy_machine_warning(&result.measured));
    Ok(result)
}

/// On a kernel without `PR_FUTEX_HASH`: drops the kernel configurations with private
/// slots (with a warning) and keeps one global-hash configuration per thread count.
fn global_hash_only(spec: &SweepSpec, cfgs: &mut Vec<Config>, warnings: &mut Vec<String>) {
    let mut skipped: Vec<String> = cfgs
        .iter()
        .filter(|c| c.backend == BackendChoice::Kernel)
        .filter_map(|c| c.buckets.filter(|&b| b != 0).map(|b| b.to_string()))
        .collect();
    skipped.dedup();
    if !skipped.is_empty() {
        warnings.push(format!(
            "this kernel has no private futex hash (prctl PR_FUTEX_HASH, Linux 6.16+, \
             CONFIG_FUTEX_PRIVATE_HASH): skipping bucket counts {}; running the global hash \
             only",
            skipped.join(",")
        ));
    }
    cfgs.retain(|c| c.backend != BackendChoice::Kernel || c.buckets.is_none_or(|b| b == 0));
    if !cfgs.iter().any(|c| c.backend == BackendChoice::Kernel) {
        for &t in &spec.threads {
            cfgs.push(Config {
                backend: BackendChoice::Kernel,
                algo: None,
                threads: t,
                buckets: Some(0),
            });
        }
    }
}

/// Warnings that follow from the request alone: `-S` with private slots, and more threads
/// than CPUs.
fn request_warnings(spec: &SweepSpec, cfgs: &[Config]) -> Vec<String> {
    let mut w = Vec::new();
    if spec.shared
        && cfgs
            .iter()
            .any(|c| c.backend == BackendChoice::Kernel && c.buckets.is_some_and(|b| b > 0))
    {
        w.push(
            "shared futexes (-S) always hash into the kernel's global table; the private \
             slot setting does not affect them"
                .into(),
        );
    }
    if spec.shared
        && spec.backends.contains(&BackendChoice::Model)
        && spec.model.table == TableKind::Private
    {
        w.push(
            "shared futexes (-S) always hash into the model's global table (as in the kernel); \
             the private table is not used"
                .into(),
        );
    }
    let cpus = allowed_cpus().len();
    if let Some(&t) = spec.threads.iter().find(|&&t| t > cpus) {
        w.push(format!(
            "{t} threads on {cpus} CPUs: oversubscribed: measures the scheduler, not the hash"
        ));
    }
    w
}

/// A warning when some worker thread got less than 90 % of its wall-clock time on a CPU.
fn busy_machine_warning(measured: &[Measured]) -> Option<String> {
    let worst = measured
        .iter()
        .map(|m| m.record.cpu_share)
        .min_by(f64::total_cmp)?;
    (worst < 0.9).then(|| {
        format!(
            "busy machine: the worker threads got as little as {:.0}% of their wall-clock \
             time on a CPU, so ops/sec understates; ops_per_cpu_sec (CSV/JSON) does not",
            worst * 100.0
        )
    })
}

/// [`sweep`] without progress reports, returning the records only.
pub fn sweep_records(spec: &SweepSpec) -> Result<Vec<BenchRecord>, BenchError> {
    Ok(sweep(spec, &mut |_| {})?.records())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Builtin, HashKey};
    use crate::table::Layout;

    fn spec() -> SweepSpec {
        let mut s = SweepSpec::new(
            vec![BackendChoice::Model],
            Some(vec![2, 16, 0]),
            Duration::from_millis(10),
        );
        s.threads = vec![1, 2];
        s.futexes = 32;
        s.model.algos = vec![
            Builtin::by_name("jhash2", HashKey::DEFAULT)
                .unwrap()
                .shared(),
            Builtin::by_name("jhash2-addr", HashKey::DEFAULT)
                .unwrap()
                .shared(),
        ];
        s
    }

    #[test]
    fn configs_are_rows_then_columns() {
        let mut s = spec();
        s.backends = vec![BackendChoice::Model, BackendChoice::Kernel];
        let c = configs(&s);
        assert_eq!(c.len(), 2 * 3 * 3);
        assert_eq!(c[0].to_string(), "model/jhash2 t=1 b=2");
        assert_eq!(c[1].to_string(), "model/jhash2-addr t=1 b=2");
        assert_eq!(c[2].to_string(), "kernel t=1 b=2");
        assert_eq!(c[3].to_string(), "model/jhash2 t=1 b=16");
    }

    #[test]
    fn model_sweep_gives_complete_records() {
        let s = spec();
        let r = sweep(&s, &mut |_| {}).unwrap();
        let recs = r.records();
        assert_eq!(recs.len(), 12);
        for (rec, c) in recs.iter().zip(configs(&s)) {
            assert_eq!(rec.backend, Backend::Model);
            assert_eq!(rec.algo, c.algo.unwrap().name());
            assert_eq!(rec.buckets, c.buckets.unwrap());
            assert_eq!(rec.threads, c.threads);
            assert_eq!(
                rec.table,
                if rec.buckets == 0 {
                    RecTable::Global
                } else {
                    RecTable::Private
                }
            );
            assert_eq!(rec.layout, RecLayout::Aligned);
            assert!(rec.ops_per_sec > 0.0);
            assert_eq!(rec.unexpected, 0);
        }
    }

    #[test]
    fn model_global_table_sizes() {
        let mut s = spec();
        s.model.table = TableKind::Global;
        s.model.layout = Layout::Packed;
        s.buckets = Some(vec![1, 0]);
        s.threads = vec![1];
        s.model.algos.truncate(1);
        let recs = sweep_records(&s).unwrap();
        assert_eq!(recs[0].buckets, 1);
        assert_eq!(recs[1].buckets, 0, "0 = the kernel's size, recorded as 0");
        assert!(
            recs.iter()
                .all(|r| r.table == RecTable::Global && r.layout == RecLayout::Packed)
        );
    }

    #[test]
    fn bad_requests_are_usage_errors() {
        let mut s = spec();
        s.buckets = Some(vec![3]);
        assert!(sweep(&s, &mut |_| {}).unwrap_err().usage);
        let mut s = spec();
        s.model.squash = true;
        assert!(validate(&s).unwrap_err().usage);
        let mut s = spec();
        s.buckets = Some(vec![1]);
        assert!(validate(&s).unwrap_err().usage);
        let mut s = spec();
        s.model.nodes = 2;
        assert!(validate(&s).unwrap_err().usage);
        s.model.table = TableKind::Numa;
        assert!(validate(&s).is_ok());
    }
}

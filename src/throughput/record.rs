//! Results of `futexhash bench` as records (the fields of docs/cli.md), and their
//! renderings: perf's own lines for a single configuration, the seed thread's table for a
//! sweep (rows = buckets, columns = algorithms or backends), and plot series.

use super::outcome::{RunOutcome, Workload};
use super::stats::ThroughputStats;
use crate::render::output::wrap_words;
use crate::render::{MAIL_WIDTH, TextTable, fmt_grouped};
use serde::Serialize;

/// Which implementation produced a record (the `backend` field of docs/cli.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The running kernel's futex hash, driven through `futex(2)`.
    Kernel,
    /// The in-process model table ([`crate::table`]) built at run time.
    Model,
    /// The analytic simulator: a predicted figure for a profile, not a measurement.
    Sim,
}

/// Which futex hash table a record used (the `table` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TableKind {
    /// The one global hash shared by every process (pre-v6.16 kernels; `-b 0`).
    Global,
    /// A process's private hash (v6.16+ `PR_FUTEX_HASH` slots) for its private futexes.
    Private,
    /// Per-node global tables (v6.16+ NUMA-aware global hash).
    Numa,
}

/// How hash buckets sit in memory (the `layout` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One bucket per 64-byte cache line (`____cacheline_aligned_in_smp`).
    Aligned,
    /// 32-byte buckets without padding, two to a cache line.
    Packed,
    /// Whatever the running kernel uses: its layout cannot be chosen or observed.
    Kernel,
    /// A simulated bucket of this many bytes other than 64 or 32 (`sim --bucket-bytes`),
    /// named `{n}B`.
    Bytes(u32),
}

impl Layout {
    /// The name docs/cli.md gives this value (`{n}B` for [`Layout::Bytes`]).
    pub fn name(self) -> std::borrow::Cow<'static, str> {
        match self {
            Layout::Aligned => "aligned".into(),
            Layout::Packed => "packed".into(),
            Layout::Kernel => "kernel".into(),
            Layout::Bytes(n) => format!("{n}B").into(),
        }
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&self.name())
    }
}

// A string, as the field was before it was typed, so JSON stays byte-identical.
impl Serialize for Layout {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// `as_str` and `Display` for a field enum: the exact strings of docs/cli.md, which CSV
/// and table output print and JSON (through serde's `rename_all`) writes.
macro_rules! field_names {
    ($t:ident { $($v:ident => $s:literal),+ $(,)? }) => {
        impl $t {
            /// The name docs/cli.md gives this value.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($t::$v => $s),+
                }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

field_names!(Backend { Kernel => "kernel", Model => "model", Sim => "sim" });
field_names!(TableKind { Global => "global", Private => "private", Numa => "numa" });

/// One measured configuration. The first fields are the stable ones of the spec; the rest
/// are extras.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchRecord {
    /// `kernel`, `model` or `sim`.
    pub backend: Backend,
    /// Hasher name; `kernel` for the kernel's own jhash2.
    pub algo: String,
    /// `global`, `private` or `numa`.
    pub table: TableKind,
    /// `aligned`, `packed`, or `kernel`.
    pub layout: Layout,
    /// Hash buckets (private slots); 0 = the global hash.
    pub buckets: u64,
    /// Worker threads.
    pub threads: usize,
    /// Futex words per thread.
    pub futexes: usize,
    /// Measured wall-clock run time, seconds.
    pub runtime_s: f64,
    /// Mean per-thread operations/sec (perf's "Averaged").
    pub ops_per_sec: f64,
    /// Sum over threads.
    pub ops_per_sec_total: f64,
    /// Standard error of the mean, percent of the mean (perf's "+-").
    pub stderr_pct: f64,
    /// Sampled per-operation latency, median, ns.
    pub latency_ns_p50: u64,
    /// Sampled per-operation latency, 99th percentile, ns.
    pub latency_ns_p99: u64,
    /// Sampled per-operation latency, 99.9th percentile, ns.
    pub latency_ns_p999: u64,
    /// Mean per-thread operations per second of *CPU time* (`CLOCK_THREAD_CPUTIME_ID`):
    /// the cost of an operation, unaffected by other processes competing for the CPUs.
    pub ops_per_cpu_sec: f64,
    /// CPU time the worker threads got, as a fraction of their wall-clock time (1 = never
    /// preempted; well below 1 means the machine was busy and `ops_per_sec` is low for it).
    pub cpu_share: f64,
    /// `hash` (wait that fails) or `wake` (wake with no waiters).
    pub workload: &'static str,
    /// Shared (not `FUTEX_PRIVATE_FLAG`) futexes.
    pub shared: bool,
    /// Kernel only: private hash slots read back with `PR_FUTEX_HASH_GET_SLOTS` after the
    /// run (null: not a kernel run, or the kernel lacks `PR_FUTEX_HASH`).
    pub slots_applied: Option<u64>,
    /// Process that ran the configuration.
    pub pid: u32,
    /// Operations that did not fail/return as the workload expects.
    pub unexpected: u64,
    /// `lock` workload: lock/unlock loops per second per holder thread (`ops_per_sec` is
    /// then the contenders' failing waits per second per contender, the seed's
    /// "contenders:" count); null otherwise.
    pub lock_ops_per_sec: Option<f64>,
    /// `noisy` workload: the victim's per-operation latency (every operation timed), ns,
    /// median; null otherwise. `ops_per_sec` is then the victim's mean per-thread rate.
    pub victim_latency_ns_p50: Option<u64>,
    /// `noisy`: the victim's 99th percentile, ns.
    pub victim_latency_ns_p99: Option<u64>,
    /// `noisy`: the victim's 99.9th percentile, ns.
    pub victim_latency_ns_p999: Option<u64>,
    /// `noisy`: distinct buckets the victim's futexes hash to (model only).
    pub victim_buckets: Option<u64>,
    /// `noisy`: how many of those the noisy process's futexes also hash to (model only;
    /// the kernel's bucket choice cannot be observed).
    pub shared_buckets: Option<u64>,
    /// `noisy`: the noisy process's mean per-thread ops/sec.
    pub noisy_ops_per_sec: Option<f64>,
    /// The machine the figure was measured on ([`crate::machine::MachineInfo::record_field`]:
    /// CPU model; cores / threads; kernel, without commas); for a simulated record, the
    /// profile it simulates.
    pub machine: String,
    /// Simulated and model records: non-empty (naming the test, the keys and the size,
    /// e.g. `fails max load on perf keys at 256 buckets (…)`) when the hasher fails a
    /// distribution test on the keys being run at this table size
    /// ([`crate::stats::warning`]); the throughput is then the key layout's, not the
    /// hash's. `""` otherwise and for kernel records.
    pub warning: String,
}

/// The parts of a record that do not come from the measurement.
#[derive(Clone, Debug)]
pub struct RecordMeta {
    /// `kernel`, `model` or `sim`.
    pub backend: Backend,
    /// Hasher name.
    pub algo: String,
    /// Table kind.
    pub table: TableKind,
    /// Bucket layout.
    pub layout: Layout,
    /// Buckets actually used (0 = global).
    pub buckets: u64,
    /// Futex words per thread.
    pub futexes: usize,
    /// Workload.
    pub workload: Workload,
    /// Shared futexes.
    pub shared: bool,
    /// Slots read back from the kernel.
    pub slots_applied: Option<u64>,
    /// Process id.
    pub pid: u32,
}

impl BenchRecord {
    /// Combines the description of a run with what it measured.
    pub fn new(meta: RecordMeta, outcome: &RunOutcome) -> Self {
        let stats = ThroughputStats::from_rates(&outcome.rates());
        BenchRecord {
            backend: meta.backend,
            algo: meta.algo,
            table: meta.table,
            layout: meta.layout,
            buckets: meta.buckets,
            threads: outcome.threads.len(),
            futexes: meta.futexes,
            runtime_s: outcome.runtime_s,
            ops_per_sec: stats.mean,
            ops_per_sec_total: stats.total,
            stderr_pct: stats.stderr_pct(),
            latency_ns_p50: outcome.latency_ns_p50,
            latency_ns_p99: outcome.latency_ns_p99,
            latency_ns_p999: outcome.latency_ns_p999,
            ops_per_cpu_sec: ThroughputStats::from_rates(
                &outcome
                    .threads
                    .iter()
                    .map(|t| t.rate_per_cpu_sec())
                    .collect::<Vec<_>>(),
            )
            .mean,
            cpu_share: {
                let wall: f64 = outcome.threads.iter().map(|t| t.secs).sum();
                let cpu: f64 = outcome.threads.iter().map(|t| t.cpu_secs).sum();
                if wall > 0.0 { cpu / wall } else { 0.0 }
            },
            workload: meta.workload.as_str(),
            shared: meta.shared,
            slots_applied: meta.slots_applied,
            pid: meta.pid,
            unexpected: outcome.threads.iter().map(|t| t.unexpected).sum(),
            lock_ops_per_sec: None,
            victim_latency_ns_p50: None,
            victim_latency_ns_p99: None,
            victim_latency_ns_p999: None,
            victim_buckets: None,
            shared_buckets: None,
            noisy_ops_per_sec: None,
            machine: crate::machine::this_machine_line().to_string(),
            warning: String::new(),
        }
    }

    /// The column a sweep table puts this record in: `kernel`, or the model's hasher.
    pub fn column_label(&self) -> String {
        if self.backend == Backend::Kernel {
            "kernel".to_string()
        } else {
            self.algo.clone()
        }
    }
}

/// A runtime as the user gave it: whole seconds as an integer (as perf prints them),
/// fractions with up to 3 decimals.
pub fn fmt_secs(secs: f64) -> String {
    if secs.fract() == 0.0 {
        format!("{}", secs as u64)
    } else {
        let s = format!("{secs:.3}");
        s.trim_end_matches('0').to_string()
    }
}

/// perf's output for one configuration (`tools/perf/bench/futex-hash.c` and `futex.c`,
/// Linux 6.16+): the header, "Run summary", per-thread lines unless `silent`, "Averaged",
/// and `hash_line` ("Futex hashing: ...").
pub fn perf_lines(
    record: &BenchRecord,
    outcome: &RunOutcome,
    requested_secs: f64,
    silent: bool,
    hash_line: &str,
) -> String {
    let mut s = String::new();
    s.push_str("# Running 'futex/hash' benchmark:\n");
    if record.workload != "hash" {
        s.push_str("# (workload: wake on futexes without waiters)\n");
    }
    s.push_str(&format!(
        "Run summary [PID {}]: {} threads, each operating on {} [{}] futexes for {} secs.\n\n",
        record.pid,
        record.threads,
        record.futexes,
        if record.shared { "shared" } else { "private" },
        fmt_secs(requested_secs),
    ));
    if !silent {
        for (i, t) in outcome.threads.iter().enumerate() {
            let rate = t.rate() as u64;
            if record.futexes == 1 {
                s.push_str(&format!(
                    "[thread {i:2}] futex: {:#x} [ {rate} ops/sec ]\n",
                    t.first_addr
                ));
            } else {
                s.push_str(&format!(
                    "[thread {i:2}] futexes: {:#x} ... {:#x} [ {rate} ops/sec ]\n",
                    t.first_addr, t.last_addr
                ));
            }
        }
    }
    // perf: "%sAveraged %ld operations/sec (+- %.2f%%), total secs = %d\n"; the total is
    // whole seconds for whole-second runs, as perf, and shows fractions otherwise.
    let total = if requested_secs.fract() == 0.0 {
        format!("{}", record.runtime_s as u64)
    } else {
        format!("{:.2}", record.runtime_s)
    };
    s.push_str(&format!(
        "{}Averaged {} operations/sec (+- {:.2}%), total secs = {}\n",
        if silent { "" } else { "\n" },
        record.ops_per_sec as u64,
        record.stderr_pct,
        total
    ));
    s.push_str(hash_line);
    s.push('\n');
    s
}

/// perf's "Futex hashing: ..." line for a kernel run (`futex_print_nbuckets()`).
pub fn kernel_hash_line(requested: Option<u64>, applied: Option<u64>) -> String {
    match (requested, applied) {
        (Some(0), _) | (_, None) | (None, Some(0)) => "Futex hashing: global hash".to_string(),
        (Some(n), _) => format!("Futex hashing: {n} hash buckets"),
        (None, Some(n)) => format!("Futex hashing: auto resized to {n} buckets"),
    }
}

/// The seed thread's table: one row per (threads, buckets), one column per
/// [`BenchRecord::column_label`], cells = mean per-thread ops/sec with thousands
/// separators. The threads column appears only when more than one thread count was run.
pub fn sweep_table(records: &[BenchRecord]) -> String {
    let mut columns: Vec<String> = Vec::new();
    let mut rows: Vec<(usize, u64)> = Vec::new();
    for r in records {
        let c = r.column_label();
        if !columns.contains(&c) {
            columns.push(c);
        }
        if !rows.contains(&(r.threads, r.buckets)) {
            rows.push((r.threads, r.buckets));
        }
    }
    let many_threads = rows.iter().any(|r| r.0 != rows[0].0);
    let mut headers: Vec<String> = Vec::new();
    if many_threads {
        headers.push("threads".into());
    }
    headers.push("buckets".into());
    headers.extend(columns.iter().cloned());
    let mut t = TextTable::new(headers);
    for &(threads, buckets) in &rows {
        let mut row = Vec::new();
        if many_threads {
            row.push(threads.to_string());
        }
        row.push(buckets.to_string());
        for c in &columns {
            let cell = records
                .iter()
                .find(|r| r.threads == threads && r.buckets == buckets && &r.column_label() == c)
                .map_or_else(
                    || "-".to_string(),
                    |r| {
                        let mark = if r.warning.is_empty() { "" } else { " !" };
                        format!("{}{mark}", fmt_grouped(r.ops_per_sec, 0))
                    },
                );
            row.push(cell);
        }
        t.push(row);
    }
    let mut out = t.render_within(MAIL_WIDTH, if many_threads { 2 } else { 1 });
    // The marked cells: the figure reflects the key layout, not the hash. One line per
    // column and warning, naming its cells by the table's rows (threads, buckets), so a
    // warning that holds for several rows is listed once with all of them.
    // (column, warning, cells)
    type Note<'a> = (String, &'a str, Vec<(usize, u64)>);
    let mut notes: Vec<Note> = Vec::new();
    for r in records.iter().filter(|r| !r.warning.is_empty()) {
        let (column, cell) = (r.column_label(), (r.threads, r.buckets));
        match notes.iter_mut().find(|n| n.0 == column && n.1 == r.warning) {
            Some(n) if n.2.contains(&cell) => {}
            Some(n) => n.2.push(cell),
            None => notes.push((column, &r.warning, vec![cell])),
        }
    }
    if !notes.is_empty() {
        out.push_str("! = the hasher fails a distribution test on the keys run at that size:\n");
    }
    for (column, warning, cells) in notes {
        // Within a mail's 100 columns: a long note continues on lines indented two spaces.
        let note = format!("! {column} at {}: {warning}", cells_phrase(&cells));
        for (i, l) in wrap_words(&note, MAIL_WIDTH - 2).iter().enumerate() {
            out.push_str(if i == 0 { "" } else { "  " });
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The cells `(threads, buckets)` a footnote is about, in the table's terms, grouped by
/// buckets in order of appearance: "threads 30, buckets 0", "threads 60 and 120, buckets
/// 0", "threads 240, buckets 16; threads 240, buckets 256".
fn cells_phrase(cells: &[(usize, u64)]) -> String {
    let mut by_buckets: Vec<(u64, Vec<String>)> = Vec::new();
    for &(threads, buckets) in cells {
        match by_buckets.iter_mut().find(|g| g.0 == buckets) {
            Some(g) => g.1.push(threads.to_string()),
            None => by_buckets.push((buckets, vec![threads.to_string()])),
        }
    }
    by_buckets
        .iter()
        .map(|(buckets, threads)| {
            let t = match threads.as_slice() {
                [init @ .., last] if !init.is_empty() => format!("{} and {last}", init.join(", ")),
                _ => threads.join(""),
            };
            format!("threads {t}, buckets {buckets}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Plot series for [`crate::render::plot`]: one per (column label, thread count), points
/// (buckets, mean ops/sec per thread) on the log2 x axis. The global hash (buckets 0) has
/// no place on a log axis, so each column's global figure becomes its own flat series
/// `"<label> global"` spanning the x range of the sized points.
pub fn plot_series(records: &[BenchRecord]) -> Vec<crate::render::plot::Series> {
    let mut sized: Vec<crate::render::plot::Series> = Vec::new();
    let mut global: Vec<(String, f64)> = Vec::new();
    for r in records {
        let label = format!("{} t={}", r.column_label(), r.threads);
        if r.buckets == 0 {
            global.push((format!("{label} global"), r.ops_per_sec));
            continue;
        }
        match sized.iter_mut().find(|s| s.0 == label) {
            Some(s) => s.1.push((r.buckets as f64, r.ops_per_sec)),
            None => sized.push((label, vec![(r.buckets as f64, r.ops_per_sec)])),
        }
    }
    for s in &mut sized {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let xs = sized.iter().flat_map(|s| s.1.iter().map(|p| p.0));
    let (lo, hi) = xs.fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(x), h.max(x)));
    let (lo, hi) = if lo > hi {
        (1.0, 2.0)
    } else {
        (lo, hi.max(lo * 2.0))
    };
    sized.extend(
        global
            .into_iter()
            .map(|(label, v)| (label, vec![(lo, v), (hi, v)])),
    );
    sized
}

/// Draws ops/sec against buckets (log2 x axis) with [`crate::render::plot::line_plot_svg`]
/// and writes it atomically to `path`.
pub fn write_plot(
    path: &std::path::Path,
    title: &str,
    records: &[BenchRecord],
) -> std::io::Result<()> {
    crate::render::plot::line_plot_svg(
        path,
        title,
        "hash buckets (log2); global hash = flat line",
        "mean ops/sec per thread",
        &plot_series(records),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::throughput::ThreadOutcome;

    fn outcome(rates: &[u64]) -> RunOutcome {
        RunOutcome {
            runtime_s: 1.0004,
            threads: rates
                .iter()
                .map(|&r| ThreadOutcome {
                    cpu: Some(0),
                    ops: r,
                    secs: 1.0,
                    cpu_secs: 0.5,
                    unexpected: 0,
                    first_addr: 0x1000,
                    last_addr: 0x1ffc,
                })
                .collect(),
            latency_ns_p50: 300,
            latency_ns_p99: 900,
            latency_ns_p999: 2000,
            latency_samples: 10,
        }
    }

    fn record(buckets: u64, threads: usize, ops: f64, backend: Backend, algo: &str) -> BenchRecord {
        let mut r = BenchRecord::new(
            RecordMeta {
                backend,
                algo: algo.into(),
                table: TableKind::Private,
                layout: Layout::Kernel,
                buckets,
                futexes: 1024,
                workload: Workload::Hash,
                shared: false,
                slots_applied: Some(buckets),
                pid: 42,
            },
            &outcome(&[1, 1]),
        );
        r.threads = threads;
        r.ops_per_sec = ops;
        r
    }

    #[test]
    fn record_uses_perf_statistics() {
        let r = BenchRecord::new(
            RecordMeta {
                backend: Backend::Kernel,
                algo: "kernel".into(),
                table: TableKind::Private,
                layout: Layout::Kernel,
                buckets: 16,
                futexes: 1024,
                workload: Workload::Hash,
                shared: false,
                slots_applied: Some(16),
                pid: 7,
            },
            &outcome(&[100, 300]),
        );
        assert_eq!((r.ops_per_sec, r.ops_per_sec_total), (200.0, 400.0));
        assert!((r.stderr_pct - 50.0).abs() < 1e-9);
        // Half a CPU-second each: 200 and 600 ops per CPU-second, mean 400; share 0.5.
        assert!((r.ops_per_cpu_sec - 400.0).abs() < 1e-9);
        assert!((r.cpu_share - 0.5).abs() < 1e-12);
        assert_eq!(r.threads, 2);
    }

    #[test]
    fn perf_lines_read_like_perf() {
        let o = outcome(&[100, 300]);
        let r = record(16, 2, 200.0, Backend::Kernel, "kernel");
        let text = perf_lines(&r, &o, 1.0, false, &kernel_hash_line(Some(16), Some(16)));
        let want = "# Running 'futex/hash' benchmark:\n\
            Run summary [PID 42]: 2 threads, each operating on 1024 [private] futexes for 1 secs.\n\
            \n\
            [thread  0] futexes: 0x1000 ... 0x1ffc [ 100 ops/sec ]\n\
            [thread  1] futexes: 0x1000 ... 0x1ffc [ 300 ops/sec ]\n\
            \n\
            Averaged 200 operations/sec (+- 0.00%), total secs = 1\n\
            Futex hashing: 16 hash buckets\n";
        // stderr_pct of the doctored record is that of rates [1, 1]: 0.
        assert_eq!(text, want);
        let silent = perf_lines(&r, &o, 0.5, true, "Futex hashing: global hash");
        assert!(silent.contains("futexes for 0.5 secs.\n\nAveraged 200"));
        assert!(silent.contains("total secs = 1.00\n"));
        assert!(!silent.contains("[thread"));
    }

    #[test]
    fn hash_lines() {
        assert_eq!(
            kernel_hash_line(Some(0), Some(0)),
            "Futex hashing: global hash"
        );
        assert_eq!(
            kernel_hash_line(Some(8), Some(8)),
            "Futex hashing: 8 hash buckets"
        );
        assert_eq!(
            kernel_hash_line(None, Some(32)),
            "Futex hashing: auto resized to 32 buckets"
        );
        assert_eq!(
            kernel_hash_line(None, Some(0)),
            "Futex hashing: global hash"
        );
        assert_eq!(kernel_hash_line(None, None), "Futex hashing: global hash");
    }

    #[test]
    fn table_rows_are_buckets_columns_are_labels() {
        let recs = vec![
            record(2, 2, 9172.4, Backend::Model, "jhash2"),
            record(2, 2, 9175.8, Backend::Model, "xxhash"),
            record(16, 2, 84567.2, Backend::Model, "jhash2"),
        ];
        let t = sweep_table(&recs);
        let lines: Vec<&str> = t.lines().collect();
        // Whole operations per second, as perf prints them (9172.4 rounds to 9,172).
        assert_eq!(lines[1], "| buckets | jhash2 | xxhash |");
        assert_eq!(lines[3], "|       2 |  9,172 | 9,176  |");
        assert_eq!(lines[4], "|      16 | 84,567 | -      |");
        let two = sweep_table(&[
            record(0, 1, 1.0, Backend::Kernel, "kernel"),
            record(0, 2, 2.0, Backend::Kernel, "kernel"),
        ]);
        assert!(two.contains("| threads | buckets | kernel |"), "{two}");
    }

    #[test]
    fn each_footnote_names_its_cells() {
        // `sim --profile seed-256cpu -t 30,60,120,240 --algo seed -b 0` listed hash_long's
        // warnings four times with nothing to tell which row each belonged to.
        let warned = |threads, algo: &str, w: &str| {
            let mut r = record(0, threads, 1.0, Backend::Sim, algo);
            r.warning = w.into();
            r
        };
        let w30 = "fails collisions (22584 vs 6195 expected) on perf keys at 65536 buckets";
        let w60 = "fails collisions (52161 vs 21568 expected) on perf keys at 65536 buckets";
        let same = "fails collisions (28688 vs 21568 expected) on perf keys at 65536 buckets";
        let recs = vec![
            warned(30, "hash_long", w30),
            warned(60, "hash_long", w60),
            warned(60, "crc32c", same),
            warned(120, "crc32c", same),
            warned(240, "crc32c", ""),
        ];
        let t = sweep_table(&recs);
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
        // Each note read whole: its continuation lines (indented two spaces) rejoined.
        let whole = t.replace("\n  ", " ");
        let notes: Vec<&str> = whole
            .lines()
            .filter(|l| l.starts_with("! ") && !l.starts_with("! ="))
            .collect();
        assert_eq!(
            notes,
            [
                "! hash_long at threads 30, buckets 0: fails collisions (22584 vs 6195 expected) on perf keys at 65536 buckets",
                "! hash_long at threads 60, buckets 0: fails collisions (52161 vs 21568 expected) on perf keys at 65536 buckets",
                "! crc32c at threads 60 and 120, buckets 0: fails collisions (28688 vs 21568 expected) on perf keys at 65536 buckets",
            ],
            "{t}"
        );
        assert_eq!(
            cells_phrase(&[(240, 16), (240, 256), (30, 16), (60, 16)]),
            "threads 240, 30 and 60, buckets 16; threads 240, buckets 256"
        );
    }

    #[test]
    fn plot_series_put_the_global_hash_on_a_flat_line() {
        let recs = vec![
            record(16, 1, 5.0, Backend::Model, "jhash2"),
            record(2, 1, 3.0, Backend::Model, "jhash2"),
            record(0, 1, 7.0, Backend::Model, "jhash2"),
            record(1024, 1, 9.0, Backend::Kernel, "kernel"),
        ];
        let s = plot_series(&recs);
        let names: Vec<&str> = s.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(names, ["jhash2 t=1", "kernel t=1", "jhash2 t=1 global"]);
        assert_eq!(s[0].1, [(2.0, 3.0), (16.0, 5.0)], "sorted by buckets");
        assert_eq!(
            s[2].1,
            [(2.0, 7.0), (1024.0, 7.0)],
            "spans the sized x range"
        );
        let svg = crate::render::plot::line_plot_svg_string("t", "x", "y", &s, true).unwrap();
        assert!(svg.contains("jhash2 t=1 global"));
    }

    #[test]
    fn secs_formatting() {
        assert_eq!(fmt_secs(10.0), "10");
        assert_eq!(fmt_secs(0.5), "0.5");
        assert_eq!(fmt_secs(0.05), "0.05");
    }

    /// docs/cli.md names the values of `backend` (`kernel`, `model`; `sim` for simulated
    /// records), `table` (`--table global|private|numa`) and `layout` (`--layout
    /// aligned|packed`, `kernel` for kernel records); JSON, CSV and tables must print them
    /// exactly so.
    #[test]
    fn field_enums_print_the_cli_contract_names() {
        let cases: &[(String, String, &str)] = &[
            (json(Backend::Kernel), Backend::Kernel.to_string(), "kernel"),
            (json(Backend::Model), Backend::Model.to_string(), "model"),
            (json(Backend::Sim), Backend::Sim.to_string(), "sim"),
            (
                json(TableKind::Global),
                TableKind::Global.to_string(),
                "global",
            ),
            (
                json(TableKind::Private),
                TableKind::Private.to_string(),
                "private",
            ),
            (json(TableKind::Numa), TableKind::Numa.to_string(), "numa"),
            (
                json(Layout::Aligned),
                Layout::Aligned.to_string(),
                "aligned",
            ),
            (json(Layout::Packed), Layout::Packed.to_string(), "packed"),
            (json(Layout::Kernel), Layout::Kernel.to_string(), "kernel"),
            (
                json(Layout::Bytes(128)),
                Layout::Bytes(128).to_string(),
                "128B",
            ),
        ];
        for (j, shown, want) in cases {
            assert_eq!(j, &format!("\"{want}\""));
            assert_eq!(shown, want);
        }
        assert_eq!(Backend::Model.as_str(), "model");
        assert_eq!(TableKind::Numa.as_str(), "numa");
        // Padding is honoured, as it was for the strings (table columns).
        assert_eq!(
            format!("{:>8}|{:<7}|", TableKind::Global, Layout::Packed),
            "  global|packed |"
        );
    }

    fn json<T: Serialize>(v: T) -> String {
        serde_json::to_string(&v).unwrap()
    }
}

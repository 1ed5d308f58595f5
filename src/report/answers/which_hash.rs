//! Question 3: which hash — cost × distribution × attack resistance, against the seed's
//! eight-algorithm table (seed 000's 256-CPU figures).

use super::shared::*;
use super::*;
use crate::check::{CheckOptions, CheckRow, CheckVerdict};
use crate::hashers::{KeyHasher, SharedHasher};
use crate::render::plot::{Line, Plot};
use crate::render::{TextTable, fmt_grouped};
use crate::report::ReportError;
use crate::report::context::Context;
use crate::report::spread::Spread;
use crate::stats::{DistRecord, Verdict};
use serde::Serialize;
use serde_json::json;
use std::fmt::Write as _;
use std::path::Path;

/// The statistic that flagged a distribution record: the test with the smallest p-value.
pub fn failed_statistic(r: &DistRecord) -> &'static str {
    let p = r.min_p();
    if p == r.p_max_load {
        "max-load"
    } else if p == r.p_collisions {
        "collisions"
    } else {
        "chi2"
    }
}

/// `workload@buckets:statistic` of every failed distribution record of hasher `name`.
pub fn dist_failures(dist: &[DistRun], name: &str) -> Vec<String> {
    dist.iter()
        .flat_map(|d| {
            d.records
                .iter()
                .filter(|r| r.algo == name && r.verdict == Verdict::Fail)
                .map(move |r| format!("{}@{}:{}", d.workload, r.buckets, failed_statistic(r)))
        })
        .collect()
}

/// The distribution figures the report computed, per workload.
#[derive(Clone, Debug)]
pub struct DistRun {
    /// Workload name.
    pub workload: String,
    /// Distinct keys.
    pub keys: usize,
    /// Every record, verdicts assigned.
    pub records: Vec<DistRecord>,
}

/// One hasher's row of the "which hash" table.
#[derive(Clone, Debug, Serialize)]
pub struct HashVerdict {
    /// Name.
    pub name: String,
    /// `full` (hashes `mm` too: fit for the global table) or `addr` (the address only:
    /// the private table only).
    pub scope: &'static str,
    /// ns/hash.
    pub cost_ns: Spread,
    /// Largest collisions ratio over every workload and size.
    pub worst_ratio: f64,
    /// Where it was (`workload@buckets`).
    pub worst_at: String,
    /// `workload@buckets:statistic` of every failed record.
    pub failures: Vec<String>,
    /// Predicted throughput on this machine's futex path relative to jhash2.
    pub predicted_vs_jhash2: Option<f64>,
    /// Published 256-CPU mean throughput at ≥ 1024 slots relative to jhash2.
    pub published_vs_jhash2: Option<f64>,
    /// [`attack_resistance`] (None when not evaluated).
    pub attack: Option<AttackScore>,
    /// What `futexhash check` says the hasher is fit for ([`check_fitness`]).
    pub check: Fitness,
    /// Where its definition comes from, as `futexhash list` shows it (a kernel source
    /// file for the kernel's hashers, a path for a user's).
    pub source: String,
}

/// What `futexhash check` ([`crate::check::check`]) says a hasher is fit for: its
/// `tables` verdict and the checks that failed. The report recommends a hasher for a table
/// only when this says it is fit for it: the report's own distribution tests hash one
/// process's keys, while `check` also requires, for the global table, that the hash read
/// `w0` (the `mm`, or a file's inode sequence) and spread every process's and every file's
/// futexes (the `inode` and `fork` workloads); the 2020 hash that never read `w0` passes
/// the report's tests and fails those.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fitness {
    /// Fit for the global table (`__futex_hash()`).
    pub global: bool,
    /// Fit for a process's private table.
    pub private: bool,
    /// The `tables` row as `futexhash check` prints it ("fit for: …").
    pub detail: String,
    /// The checks that failed (`property:w0-bits`, `dist:inode:mask`, …), in check order.
    pub failed: Vec<String>,
}

impl Fitness {
    /// From `check`'s rows: the `tables` row's verdict ("fit for: global and private
    /// tables", "fit for: private table only (…)", "fit for: neither table (…)"; anything
    /// else, or no such row, is read as fit for neither) and every failed row but it.
    pub fn of_rows(rows: &[CheckRow]) -> Fitness {
        let detail = rows
            .iter()
            .find(|r| r.check == "tables")
            .map_or_else(|| "no tables verdict".to_string(), |r| r.detail.clone());
        let (global, private) = if detail.starts_with("fit for: global and private tables") {
            (true, true)
        } else if detail.starts_with("fit for: private table only") {
            (false, true)
        } else {
            (false, false)
        };
        Fitness {
            global,
            private,
            detail,
            failed: rows
                .iter()
                .filter(|r| r.verdict == CheckVerdict::Fail && r.check != "tables")
                .map(|r| r.check.clone())
                .collect(),
        }
    }

    /// Fit for both tables, nothing failed: what the synthetic verdicts of the tests use.
    pub fn both() -> Fitness {
        Fitness {
            global: true,
            private: true,
            detail: "fit for: global and private tables".into(),
            failed: Vec::new(),
        }
    }

    /// Whether `check` finds it fit for table `t`.
    pub fn fit_for(&self, t: TableScope) -> bool {
        match t {
            TableScope::Global => self.global,
            TableScope::Private => self.private,
        }
    }

    /// The which-hash table's cell: `both`, `private` or `neither`.
    pub fn cell(&self) -> &'static str {
        match (self.global, self.private) {
            (true, _) => "both",
            (false, true) => "private",
            (false, false) => "neither",
        }
    }
}

/// [`Fitness`] of `h` by `futexhash check --algo H` with its defaults (every workload at
/// its own key count, seed 1, the speed against jhash2): the same verdict the reproduce
/// command prints.
pub fn check_fitness(h: &dyn KeyHasher) -> Fitness {
    check_fitness_with(h, &CheckOptions::default())
}

/// [`check_fitness`] of every hasher, in order, the checks spread over this machine's CPUs
/// (every check is deterministic except the speed row, which fails only a hasher more
/// than 16× slower than jhash2 timed side by side, so sharing the CPUs does not move it).
pub fn check_fitness_all(hashers: &[SharedHasher]) -> Vec<Fitness> {
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .clamp(1, hashers.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(vec![None; hashers.len()]);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(h) = hashers.get(i) else { break };
                    let f = check_fitness(h.as_ref());
                    out.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(f);
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|f| f.expect("every hasher checked"))
        .collect()
}

/// [`check_fitness`] with other options (the unit tests use fewer keys).
pub fn check_fitness_with(h: &dyn KeyHasher, opts: &CheckOptions) -> Fitness {
    Fitness::of_rows(&crate::check::check(h, opts))
}

/// The verdict rows from costs, distribution records, (with `attack`) each hasher's
/// attack score and (with `fitness`) what `futexhash check` finds it fit for.
pub fn hash_verdicts(
    hashers: &[SharedHasher],
    ctx_cost: impl Fn(&str) -> Option<Spread>,
    dist: &[DistRun],
    kernel_op_ns: Option<f64>,
    published: &[(String, f64)],
    attack: impl Fn(&dyn KeyHasher) -> Option<AttackScore>,
    fitness: impl Fn(&dyn KeyHasher) -> Fitness,
) -> Vec<HashVerdict> {
    let jcost = ctx_cost("jhash2").map(|s| s.median);
    let jpub = published
        .iter()
        .find(|(n, _)| n == "jhash2")
        .map(|(_, v)| *v);
    hashers
        .iter()
        .map(|h| {
            use crate::hashers::KeyHasher as _;
            let name = h.name().to_string();
            let mine = dist.iter().flat_map(|d| {
                d.records
                    .iter()
                    .filter(|r| r.algo == name)
                    .map(move |r| (d.workload.as_str(), r))
            });
            let (mut worst_ratio, mut worst_at) = (0.0f64, String::from("-"));
            for (w, r) in mine {
                let ratio = r.collisions_ratio();
                if ratio > worst_ratio {
                    worst_ratio = ratio;
                    worst_at = format!("{w}@{}", r.buckets);
                }
            }
            let failures = dist_failures(dist, &name);
            let cost = ctx_cost(&name).unwrap_or(Spread::single(f64::NAN));
            let predicted = match (kernel_op_ns, jcost) {
                (Some(k), Some(j)) if cost.median.is_finite() => Some(k / (k - j + cost.median)),
                _ => None,
            };
            let published_vs_jhash2 = match jpub {
                Some(j) => published
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v / j),
                None => None,
            };
            HashVerdict {
                name,
                scope: h.scope().as_str(),
                cost_ns: cost,
                worst_ratio,
                worst_at,
                failures,
                predicted_vs_jhash2: predicted,
                published_vs_jhash2,
                attack: attack(h.as_ref()),
                check: fitness(h.as_ref()),
                source: h.source().to_string(),
            }
        })
        .collect()
}

/// The table a hasher is recommended for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableScope {
    /// The kernel's global hash: every process's futexes in one table.
    Global,
    /// A process's private hash (one `mm`).
    Private,
}

impl HashVerdict {
    /// No distribution test of the report fails, `futexhash check` finds it fit for table
    /// `t` ([`Fitness`]) and, for the global table, the hasher hashes `mm` too: an
    /// address-only hasher in the global table puts every process forked from one parent
    /// (same layout, own `mm`) on the same buckets.
    pub fn fit_for(&self, t: TableScope) -> bool {
        self.failures.is_empty()
            && self.check.fit_for(t)
            && (t == TableScope::Private || self.scope == "full")
    }

    /// Why it is not fit for table `t` (`None` when it is): the failed distribution tests,
    /// `futexhash check`'s verdict, or the address-only scope.
    pub fn unfit_reason(&self, t: TableScope) -> Option<String> {
        if self.fit_for(t) {
            return None;
        }
        let mut why = Vec::new();
        if !self.failures.is_empty() {
            why.push(failed_list(&self.failures, "distribution test"));
        }
        if !self.check.fit_for(t) {
            why.push(format!("`futexhash check`: {}", self.check.detail));
        } else if t == TableScope::Global && self.scope != "full" {
            why.push("address-only: it leaves out the mm".to_string());
        }
        Some(why.join("; "))
    }

    /// No test of the report and no check of `futexhash check` fails.
    pub fn passes_all(&self) -> bool {
        self.failures.is_empty() && self.check.failed.is_empty()
    }

    /// The first failure, to name it in a list: a distribution record of the report, else
    /// a check (`check:property:w0-bits`).
    pub fn first_failure(&self) -> Option<String> {
        self.failures
            .first()
            .cloned()
            .or_else(|| self.check.failed.first().map(|c| format!("check:{c}")))
    }

    /// Whether the kernel has this hasher ([`in_kernel`] of its source).
    pub fn in_kernel(&self) -> bool {
        in_kernel(&self.source)
    }

    /// The warning shown next to a hasher wherever it is ranked: the failed tests of the
    /// report and the failed checks of `futexhash check`.
    pub fn warning(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.failures.is_empty() {
            parts.push(failed_list(&self.failures, "distribution test"));
        }
        if !self.check.failed.is_empty() {
            parts.push(format!(
                "`futexhash check` {} ({})",
                failed_list(&self.check.failed, "check"),
                self.check.detail
            ));
        }
        (!parts.is_empty()).then(|| format!("{}: not recommended", parts.join(" and ")))
    }
}

/// Whether a hasher whose registry source is `source` is in the kernel. The registry has
/// no field for it, so it is read from the source text: in the kernel when it names a file
/// of the kernel tree (a word starting `include/linux/`, `lib/` or `kernel/`, relative to
/// the tree's root) and does not say "not in the kernel" (xxh3 cites xxHash itself). A
/// user's hasher has its own path (absolute, or relative to the user's directory) or
/// `user`, and is not.
pub fn in_kernel(source: &str) -> bool {
    !source.contains("not in the kernel")
        && source
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | ',' | '(' | ')'))
            .any(|w| {
                ["include/linux/", "lib/", "kernel/"]
                    .iter()
                    .any(|p| w.starts_with(p))
            })
}

/// "fails 6 distribution tests (perf@16384:chi2, …): not recommended".
pub fn dist_warning(failures: &[String]) -> String {
    format!(
        "{}: not recommended",
        failed_list(failures, "distribution test")
    )
}

/// "fails 6 distribution tests (perf@16384:chi2, perf@32768:collisions, …)".
fn failed_list(failures: &[String], what: &str) -> String {
    let shown: Vec<&str> = failures.iter().take(2).map(String::as_str).collect();
    format!(
        "fails {} {what}{} ({}{})",
        failures.len(),
        if failures.len() == 1 { "" } else { "s" },
        shown.join(", "),
        if failures.len() > 2 { ", …" } else { "" }
    )
}

/// Why a hasher that fails a distribution test can still look fast in perf's loop.
pub const PERF_LOCALITY: &str = "perf's loop gives each thread its own futexes on pages of \
    its own, so a hash that keeps a page's futexes in few buckets never moves a bucket's \
    cache line between CPUs and is rewarded for it: an artefact of the benchmark, not a \
    property a program whose threads share futexes would see";

/// The cheapest hasher fit for table `t` (measured cost), and the next cheapest.
pub fn recommend(v: &[HashVerdict], t: TableScope) -> (Option<&HashVerdict>, Option<&HashVerdict>) {
    let mut fit: Vec<&HashVerdict> = v
        .iter()
        .filter(|h| h.fit_for(t) && h.cost_ns.median.is_finite())
        .collect();
    fit.sort_by(|a, b| a.cost_ns.median.total_cmp(&b.cost_ns.median));
    (fit.first().copied(), fit.get(1).copied())
}

/// The cheapest hasher fit for table `t` and every other fit hasher whose cost interval
/// overlaps its ([`Spread::told_apart`]): the hashers this run's timing does not tell
/// apart from the cheapest, cheapest first. Empty when none is fit.
pub fn cheapest_tied(v: &[HashVerdict], t: TableScope) -> Vec<&HashVerdict> {
    cheapest_group(v, |h| h.fit_for(t))
}

/// The cheapest (median cost) of the verdicts `accept` takes, and every other one it takes
/// whose cost interval overlaps the cheapest's ([`Spread::told_apart`]) and is not
/// clearly above another member's: the ones that could be the cheapest, cheapest first.
/// (Overlap is not transitive: under a wide cheapest interval, two members can be told
/// apart from each other, and the dearer of them cannot be the cheapest.) Empty when it
/// takes none with a cost. A single one is the cheapest only when its interval is clear
/// of the others'.
pub fn cheapest_group(
    v: &[HashVerdict],
    accept: impl Fn(&HashVerdict) -> bool,
) -> Vec<&HashVerdict> {
    let mut ok: Vec<&HashVerdict> = v
        .iter()
        .filter(|h| accept(h) && h.cost_ns.median.is_finite())
        .collect();
    ok.sort_by(|a, b| a.cost_ns.median.total_cmp(&b.cost_ns.median));
    let Some(first) = ok.first().copied() else {
        return Vec::new();
    };
    let overlapping: Vec<&HashVerdict> = ok
        .into_iter()
        .filter(|h| std::ptr::eq(*h, first) || !h.cost_ns.told_apart(&first.cost_ns))
        .collect();
    overlapping
        .iter()
        .copied()
        .filter(|h| {
            !overlapping
                .iter()
                .any(|g| g.cost_ns.median < h.cost_ns.median && g.cost_ns.told_apart(&h.cost_ns))
        })
        .collect()
}

/// "jhash2 (4.17 (4.15–5.10) ns/hash)".
fn with_cost(h: &HashVerdict) -> String {
    format!("{} ({} ns/hash)", h.name, h.cost_ns.fmt_interval(2))
}

/// One table's clause: the cheapest fit hasher, or the cheapest few whose costs are not
/// told apart (then the measurement does not choose between them, and the clause says so).
fn table_clause(tied: &[&HashVerdict], what: &str) -> String {
    match tied {
        [] => String::new(),
        [h] => format!("{} is the cheapest {what}", with_cost(h)),
        [h, rest @ ..] => format!(
            "{} is the cheapest {what} by its median, but its cost is not told apart from \
             {}'s (the central 80 % of their timing rounds overlap), so this run does not \
             choose between them",
            with_cost(h),
            and_list(
                &rest
                    .iter()
                    .map(|r| with_cost(r))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
            )
        ),
    }
}

/// How much hasher `c`'s cost instead of jhash2's (`j`) would change the throughput of a
/// futex operation of `k` ns, `k / (k − j + c)`, as `|change|`: at the medians, and its
/// least and largest over the three intervals (the change is monotone in each, so the
/// corners bound it; 0 when the two costs' intervals overlap, so the sign is not known).
pub fn throughput_change(c: &Spread, j: &Spread, k: &Spread) -> (f64, f64, f64) {
    let d = |c: f64, j: f64, k: f64| (k / (k - j + c) - 1.0).abs();
    let mut lo = f64::INFINITY;
    let mut hi = 0.0f64;
    for c in [c.min, c.max] {
        for j in [j.min, j.max] {
            for k in [k.min, k.max] {
                let x = d(c, j, k);
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
    }
    if !c.told_apart(j) {
        lo = 0.0;
    }
    (d(c.median, j.median, k.median), lo, hi)
}

/// The sentence for question 3: the cheapest hasher fit for the global table (full-scope
/// hashers only) and for the private table, or the cheapest few when their costs are not
/// told apart, and whether the seed's "all equal in throughput" holds against this
/// machine's run-to-run range: it holds when even the largest change the cost intervals
/// allow stays inside the futex operation's range, fails when some hasher's least change
/// lies beyond it, and is otherwise not told apart.
pub fn which_hash_sentence(v: &[HashVerdict], kernel_op: Option<Spread>) -> String {
    let mut s = String::new();
    let clean = v.iter().filter(|h| h.passes_all()).count();
    let g = cheapest_tied(v, TableScope::Global);
    let p = cheapest_tied(v, TableScope::Private);
    let names = |t: &[&HashVerdict]| t.iter().map(|h| h.name.clone()).collect::<Vec<_>>();
    if g.is_empty() {
        s.push_str(
            "Global table: no full-scope hasher passes the distribution tests and `futexhash check` for that table, so none is recommended",
        );
    } else {
        let _ = write!(
            s,
            "Global table: {}",
            table_clause(
                &g,
                "full-scope hasher that passes the distribution tests and `futexhash check` for that table"
            )
        );
    }
    if p.is_empty() {
        s.push_str(
            "; private table: no hasher passes the distribution tests and `futexhash check` for that table",
        );
    } else if names(&p) == names(&g) {
        s.push_str("; private table: the same");
    } else {
        let _ = write!(
            s,
            "; private table: {}",
            table_clause(&p, "hasher fit for it")
        );
        if p[0].scope == "addr" {
            s.push_str(
                " (an address-only hasher: fit for the private table only, since in the \
                 global table processes forked from one parent (same addresses, own mm) \
                 would share every bucket)",
            );
        }
    }
    let _ = write!(s, "; {clean} of {} hashers pass every test", v.len());
    let failed: Vec<String> = v
        .iter()
        .filter_map(|h| h.first_failure().map(|f| format!("{} ({f})", h.name)))
        .collect();
    if !failed.is_empty() {
        let _ = write!(s, "; not recommended, failing: {}", failed.join(", "));
    }
    let jcost = v.iter().find(|h| h.name == "jhash2").map(|h| h.cost_ns);
    if let (Some(k), Some(j)) = (kernel_op, jcost) {
        let changes: Vec<(&str, (f64, f64, f64))> = v
            .iter()
            .filter(|h| h.name != "jhash2" && h.cost_ns.median.is_finite())
            .map(|h| (h.name.as_str(), throughput_change(&h.cost_ns, &j, &k)))
            .collect();
        let noise = k.rel_half_range();
        let largest = changes.iter().max_by(|a, b| a.1.0.total_cmp(&b.1.0));
        let surest = changes.iter().max_by(|a, b| a.1.1.total_cmp(&b.1.1));
        // Neither: the hasher whose largest change passes the range, which it may or may
        // not reach.
        let widest = changes.iter().max_by(|a, b| a.1.2.total_cmp(&b.1.2));
        let op = format!(
            "on this machine's futex operation ({} ns of CPU time, ±{} over {} timings spread \
             over the run)",
            fmt_grouped(k.median, 0),
            pct(noise),
            k.runs
        );
        match (largest, surest, widest) {
            (Some((worst, (d, _, hi))), _, _) if changes.iter().all(|c| c.1.2 <= noise) => {
                let _ = write!(
                    s,
                    ". The seed's finding that they are equal in throughput is predicted to hold here: {op} the largest hash-cost difference ({worst}) would change throughput by {} (at most {} within the intervals of the costs and of the operation), inside its ±{} run-to-run range",
                    pct(*d),
                    pct(*hi),
                    pct(noise)
                );
            }
            (_, Some((name, (d, lo, _))), _) if *lo > noise => {
                let _ = write!(
                    s,
                    ". The seed's finding that they are equal in throughput is predicted not to hold here: {op} {name}'s cost would change throughput by {} (at least {} within the intervals), beyond its ±{} run-to-run range",
                    pct(*d),
                    pct(*lo),
                    pct(noise)
                );
            }
            (_, _, Some((name, (d, lo, hi)))) => {
                let _ = write!(
                    s,
                    ". Whether the seed's finding that they are equal in throughput holds here is not told apart: {op} {name}'s cost would change throughput by {} (between {} and {} within the intervals of the costs and of the operation), and its ±{} run-to-run range lies inside that",
                    pct(*d),
                    pct(*lo),
                    pct(*hi),
                    pct(noise)
                );
            }
            _ => {}
        }
    }
    if let Some(a) = attack_sentence(v) {
        let _ = write!(s, ". {a}");
    }
    s.push('.');
    s
}

/// Question 3.
pub fn which_hash(
    ctx: &Context,
    dist: &[DistRun],
    kernel_op_ns: Option<Spread>,
    dir: &Path,
) -> Result<(Answer, Vec<HashVerdict>), ReportError> {
    let published = published_algo_means(&ctx.data_dir)?;
    let fitness = check_fitness_all(&ctx.hashers);
    let v = hash_verdicts(
        &ctx.hashers,
        |n| ctx.cost(n),
        dist,
        kernel_op_ns.map(|k| k.median),
        &published,
        |h| attack_resistance(h, ctx.attack_buckets()),
        |h| {
            ctx.hashers
                .iter()
                .position(|k| k.name() == h.name())
                .map_or_else(|| check_fitness(h), |i| fitness[i].clone())
        },
    );
    let mut a = Answer {
        question: "Which hash: cost × distribution × attack resistance".into(),
        answer: which_hash_sentence(&v, kernel_op_ns),
        ..Answer::default()
    };
    let any_attack = v.iter().any(|h| h.attack.is_some());
    let mut headers = vec![
        "hasher",
        "scope",
        "ns/hash",
        "worst coll.",
        "at",
        "fails",
        "check",
        "pred. vs jhash2",
        "pub. vs jhash2",
    ];
    if any_attack {
        headers.push("mm leak");
    }
    let mut t = TextTable::new(headers);
    let rel = |x: Option<f64>| x.map_or("-".into(), |x| format!("{:+.1}%", (x - 1.0) * 100.0));
    for h in &v {
        let mut row = vec![
            h.name.clone(),
            h.scope.to_string(),
            h.cost_ns.fmt_interval(2),
            format!("{:.2}", h.worst_ratio),
            h.worst_at.clone(),
            h.failures.len().to_string(),
            h.check.cell().to_string(),
            rel(h.predicted_vs_jhash2),
            rel(h.published_vs_jhash2),
        ];
        if any_attack {
            row.push(
                h.attack
                    .as_ref()
                    .map_or_else(|| "-".into(), AttackScore::cell),
            );
        }
        t.push(row);
    }
    let spread_pub = published
        .iter()
        .map(|p| p.1)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    let _ = write!(
        a.evidence,
        "ns/hash: median (10th–90th percentile) of {} timing rounds that interleave the \
         hashers over about {} s, one core (the Hash cost section). worst coll.: the largest \
         collisions ÷ random expectation over the distribution section's workloads and sizes. \
         fails: failed distribution records (listed below with the statistic). check: the \
         tables `futexhash check --algo H` finds the hasher fit for (both, private or \
         neither; a hasher is recommended for a table only when it is fit for it). pred.: \
         throughput on this machine's measured futex path ({} ns of CPU time per operation, \
         range of its timings; global hash = jhash2) with this hasher's cost instead. pub.: the \
         published 256-CPU table's mean over ≥ 1024 slots{}.\n\n{}",
        crate::report::context::cost_rounds(ctx.depth),
        crate::report::context::cost_seconds(ctx.depth),
        kernel_op_ns.map_or("-".into(), |k| k.fmt_interval(0)),
        if spread_pub.1 > 0.0 {
            format!(
                " (its algorithms differ by at most {})",
                pct(spread_pub.1 / spread_pub.0 - 1.0)
            )
        } else {
            String::new()
        },
        code(&t.render_within(MAX_WIDTH, 1))
    );
    for h in v.iter().filter(|h| !h.failures.is_empty()) {
        let _ = writeln!(a.evidence, "- {} fails {}", h.name, h.failures.join(", "));
    }
    for h in v.iter().filter(|h| !h.check.failed.is_empty()) {
        let _ = writeln!(
            a.evidence,
            "- {}: `futexhash check` fails {}; {}",
            h.name,
            h.check.failed.join(", "),
            h.check.detail
        );
    }
    if v.iter().any(|h| !h.passes_all()) {
        let _ = writeln!(
            a.evidence,
            "\nA hasher that fails is never recommended, for either table, however fast it \
             looks in a perf-loop figure (the published column, the simulation): {PERF_LOCALITY}."
        );
    }
    if any_attack {
        let probes = attack_probe_budget(ctx.attack_buckets());
        let _ = writeln!(
            a.evidence,
            "\nmm leak: what an unprivileged process learns about its own mm pointer by timing \
             FUTEX_WAKE on its own futexes (KernelSnitch, NDSS 2025) when a {}-bucket global \
             hash (one node of roundup_pow_of_two(256 × CPUs) for this machine) uses this \
             hasher: \"mm in N probes\" = recovered exactly (checked against the secret), \
             else bits leaked of the {}-bit candidate space; \"keyed: untestable\" = the \
             attacker does not have the key and cannot test a candidate. At most {} probes \
             each (\"(budget)\": ran out, a lower bound). This is the leak only: a hasher \
             whose collisions do not depend on mm (address-only forms, CRC-32's linearity) \
             leaks nothing of it but lets collisions be computed offline (flooding).",
            fmt_grouped(ctx.attack_buckets() as f64, 0),
            ATTACK_SPACE_BITS,
            fmt_grouped(probes as f64, 0)
        );
    } else {
        a.evidence
            .push_str("\nAttack resistance: not evaluated (no hasher could be scored).\n");
    }
    hashers_plot(&v, dir, &mut a)?;
    // The distribution section's sweeps (2..131072 buckets, mask, seed 1: dist's
    // defaults), the cost benchmark, and the leak experiment with this answer's settings.
    a.commands = crate::report::context::dist_workloads(ctx.depth)
        .iter()
        .map(|(w, n)| {
            format!(
                "futexhash dist --workload {w} --algo {}{} --stat collisions-ratio",
                ctx.algo_arg(),
                n.map_or(String::new(), |n| format!(" --keys {n}"))
            )
        })
        .collect();
    // Each hasher's fitness: `check` takes one hasher.
    a.commands.extend(
        ctx.hasher_args()
            .iter()
            .map(|h| format!("futexhash check --algo {h}")),
    );
    // The report's own timing has no command of its own; each `check` above prints the
    // hasher's ns/hash against jhash2 timed side by side (its speed row), and criterion's
    // careful figures need the source tree.
    a.commands.push(
        "cargo bench --bench hashers   # criterion's figures: needs the source tree; from \
         the binary, the speed row of each `futexhash check` above"
            .into(),
    );
    a.commands.push(format!(
        "futexhash attack leak --algo {} --table global --space-bits {ATTACK_SPACE_BITS} \
         --buckets {} --max-probes {} --seed {ATTACK_SEED}",
        ctx.algo_arg(),
        ctx.attack_buckets(),
        attack_probe_budget(ctx.attack_buckets())
    ));
    a.caveat = format!(
        "Costs are this machine's, one core, hot cache; the throughput prediction assumes the \
         hash is the only thing that changes on the futex path and is not claimed where it is \
         inside the kernel measurement's run-to-run range{}. The published table has no \
         repeats, so its differences carry no error bar.",
        kernel_op_ns.map_or(String::new(), |k| format!(
            " (±{})",
            pct(k.rel_half_range())
        ))
    );
    a.figures = json!({ "hashers": v, "kernel_op_ns": kernel_op_ns, "published_means": published });
    Ok((a, v))
}

/// answer-hashers.svg: each hasher's cost (with the central 80 % of its timing rounds)
/// against its worst collisions ratio.
fn hashers_plot(v: &[HashVerdict], dir: &Path, a: &mut Answer) -> Result<(), ReportError> {
    let plot = Plot {
        title: "hash cost against distribution quality (lower left is better)".into(),
        x_label: hashers_x_label(v),
        y_label: "worst collisions ÷ random expectation".into(),
        lines: v
            .iter()
            .filter(|h| h.cost_ns.median.is_finite())
            .map(|h| Line {
                x_spread: vec![(h.cost_ns.min, h.cost_ns.max)],
                name: format!("{}{}", h.name, plot_flags(h)),
                points: vec![(h.cost_ns.median, h.worst_ratio)],
                spread: Vec::new(),
                markers_only: true,
            })
            .collect(),
        y_scale: crate::render::plot::YScale::Linear,
        reference: Some((1.0, "random = 1".into())),
        ..Plot::default()
    };
    write_plot(dir, "answer-hashers.svg", &plot, a)
}

/// The x label of answer-hashers.svg: what its bars are ([`Spread::central`] of the
/// timing rounds, `measure_costs`) with the number of rounds this run timed.
fn hashers_x_label(v: &[HashVerdict]) -> String {
    let mut rounds: Vec<usize> = v
        .iter()
        .filter(|h| h.cost_ns.median.is_finite())
        .map(|h| h.cost_ns.runs)
        .collect();
    rounds.sort_unstable();
    rounds.dedup();
    let n = match rounds[..] {
        [] => return "ns per hash (this machine, one core)".into(),
        [n] => n.to_string(),
        [lo, .., hi] => format!("{lo}–{hi}"),
    };
    format!(
        "ns per hash (this machine, one core; dot: median, bars: 10th–90th percentile of \
         {n} timing rounds)"
    )
}

/// Mean throughput over rows ≥ 1024 slots per column of the published eight-algorithm
/// table, by hasher name.
pub fn published_algo_means(data_dir: &Path) -> Result<Vec<(String, f64)>, ReportError> {
    let t = crate::sim::validate::read_published(
        &data_dir.join(crate::report::context::PUBLISHED_TABLES[1]),
    )?;
    let mut out = Vec::new();
    for (c, header) in t.columns.iter().enumerate() {
        let Some(name) = crate::sim::validate::hasher_for_column(header) else {
            continue;
        };
        let v: Vec<f64> = t
            .rows
            .iter()
            .filter(|(b, _)| *b >= 1024)
            .map(|(_, r)| r[c])
            .collect();
        if !v.is_empty() {
            out.push((name.to_string(), v.iter().sum::<f64>() / v.len() as f64));
        }
    }
    Ok(out)
}

/// What the hashers plot's legend adds to a name: failed distribution tests, and the mm
/// leak of the "mm leak" column (recovered, or part of the bits).
pub(crate) fn plot_flags(h: &HashVerdict) -> String {
    let mut flags = Vec::new();
    if !h.failures.is_empty() {
        flags.push("fails".to_string());
    }
    match &h.attack {
        Some(a) if a.mm_recovered => flags.push("leaks mm".into()),
        Some(a) if a.bits_leaked >= 1.0 => {
            flags.push(format!("leaks {:.1} bits of mm", a.bits_leaked))
        }
        _ => {}
    }
    if flags.is_empty() {
        String::new()
    } else {
        format!(" ({})", flags.join(", "))
    }
}

/// Points of the report run at which the kernel futex operation is timed
/// ([`kernel_op_sample`]): its samples are spread over the run, since one moment of a
/// shared machine says little of the next (three back-to-back runs gave 401 ns ±0.03 % in
/// one report and 301 ns in the next).
pub const KERNEL_OP_POINTS: usize = 5;

/// CPU time of one kernel futex operation (perf's failing `FUTEX_WAIT`, one thread, global
/// hash) in ns, `runs` times in a row: one of the report's [`KERNEL_OP_POINTS`].
pub fn kernel_op_sample(ctx: &Context, runs: usize) -> Vec<f64> {
    use crate::bench::sweep::{BackendChoice, SweepSpec, sweep};
    let runtime =
        std::time::Duration::from_millis(if ctx.depth == crate::report::context::Depth::Quick {
            150
        } else {
            500
        });
    let mut ns = Vec::new();
    for _ in 0..runs {
        let mut spec = SweepSpec::new(vec![BackendChoice::Kernel], Some(vec![0]), runtime);
        spec.threads = vec![1];
        let Ok(res) = sweep(&spec, &mut |_| {}) else {
            continue;
        };
        // CPU time per operation: on a machine busy with other work, wall-clock rates
        // include the time the thread waited for a CPU.
        if let Some(r) = res.records().first() {
            let rate = if r.ops_per_cpu_sec > 0.0 {
                r.ops_per_cpu_sec
            } else {
                r.ops_per_sec
            };
            if rate > 0.0 {
                ns.push(1e9 / rate);
            }
        }
    }
    ns
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::attack::leak::Stop;

    fn verdict(name: &str, cost: f64, fails: &[&str], pred: f64) -> HashVerdict {
        HashVerdict {
            name: name.into(),
            scope: if name.ends_with("-addr") {
                "addr"
            } else {
                "full"
            },
            cost_ns: Spread::single(cost),
            worst_ratio: 1.0,
            worst_at: "perf@16".into(),
            failures: fails.iter().map(|s| s.to_string()).collect(),
            predicted_vs_jhash2: Some(pred),
            published_vs_jhash2: None,
            attack: None,
            check: fit_as_scope(name),
            source: "include/linux/jhash.h".into(),
        }
    }

    /// What `check` says of a sound hasher of `name`'s scope: an `-addr` one is fit for
    /// the private table only.
    pub(crate) fn fit_as_scope(name: &str) -> Fitness {
        if name.ends_with("-addr") {
            Fitness {
                global: false,
                private: true,
                detail: "fit for: private table only (global: scope addr leaves out the mm)".into(),
                failed: Vec::new(),
            }
        } else {
            Fitness::both()
        }
    }

    #[test]
    fn the_hashers_plot_says_its_bars_are_the_central_80_percent_of_the_rounds() {
        // 41 rounds, as `report --quick` times them (context::cost_rounds).
        let rounds: Vec<f64> = (0..41).map(|i| 5.0 + i as f64 * 0.01).collect();
        let v: Vec<HashVerdict> = ["jhash2", "siphash"]
            .iter()
            .map(|n| HashVerdict {
                cost_ns: Spread::central(&rounds).unwrap(),
                ..verdict(n, 5.0, &[], 1.0)
            })
            .collect();
        let dir = std::env::temp_dir().join(format!("futexhash-hashers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        hashers_plot(&v, &dir, &mut Answer::default()).unwrap();
        let svg = std::fs::read_to_string(dir.join("answer-hashers.svg")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let texts: Vec<String> = crate::render::plot::tests::svg_texts(&svg)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert!(
            texts
                .iter()
                .any(|t| t.contains("bars: 10th–90th percentile of 41 timing rounds")),
            "{texts:?}"
        );
        assert!(!svg.contains("range of the runs"), "{texts:?}");
    }

    #[test]
    fn a_hasher_is_in_the_kernel_when_its_source_is_a_kernel_file() {
        // The forms of `futexhash list`'s source column, written out by hand.
        for s in [
            "include/linux/jhash.h; kernel/futex/core.c __futex_hash()",
            "lib/crc32.c crc32_le()",
            "xxHash XXH32 (lib/xxhash.c xxh32)",
            "include/linux/hash.h before v4.7",
        ] {
            assert!(in_kernel(s), "{s}");
        }
        for s in [
            "xxHash XXH3_64bits_withSeed (not in the kernel)",
            "user",
            "examples/hashers/jhash2.c",
            "/usr/lib/libmyhash.so",
            "/home/me/kernel/myhash.c",
        ] {
            assert!(!in_kernel(s), "{s}");
        }
    }

    #[test]
    fn attack_sentence_names_each_group_only_when_it_has_members() {
        let score = |rec: bool, bits: f64, probes: u64, stop: Stop| AttackScore {
            bits_leaked: bits,
            space_bits: 20,
            probes,
            mm_recovered: rec,
            stop,
            keyed: stop == Stop::CannotTest,
            buckets: 512,
        };
        let with = |n: &str, a: Option<AttackScore>| HashVerdict {
            attack: a,
            ..verdict(n, 1.0, &[], 1.0)
        };
        assert_eq!(attack_sentence(&[with("a", None)]), None);
        let v = [
            with("jhash2", Some(score(true, 20.0, 900, Stop::Recovered))),
            with("xxhash", Some(score(true, 20.0, 1500, Stop::Recovered))),
            with("siphash", Some(score(false, 0.0, 100, Stop::CannotTest))),
        ];
        let s = attack_sentence(&v).unwrap();
        assert!(
            s.contains("with jhash2 and xxhash an unprivileged process recovers"),
            "{s}"
        );
        assert!(s.contains("at most 1,500 timing probes"), "{s}");
        assert!(s.contains("siphash is keyed"), "{s}");
        assert!(
            !s.contains("part of it") && !s.contains("leaks nothing") && !s.contains("budget"),
            "{s}"
        );
        assert!(s.contains("20-bit mm space, 512-bucket"), "{s}");
        let rest = [
            with("crc32", Some(score(false, 0.0, 4000, Stop::NoProgress))),
            with("crc32c", Some(score(false, 0.0, 4000, Stop::NoProgress))),
            with("hash_long", Some(score(false, 9.0, 2000, Stop::NoProgress))),
            with("big", Some(score(false, 3.0, 65536, Stop::Budget))),
        ];
        let s = attack_sentence(&rest).unwrap();
        assert!(
            s.contains("hash_long leaks part of it") && !s.contains("recovers"),
            "{s}"
        );
        assert!(
            s.contains("crc32 and crc32c leak nothing of mm — their collisions"),
            "{s}"
        );
        assert!(s.contains("big ran out of probes"), "{s}");
        // The plot's legend flags the same findings.
        assert_eq!(plot_flags(&v[0]), " (leaks mm)");
        assert_eq!(plot_flags(&v[2]), "");
        assert_eq!(plot_flags(&rest[0]), "");
        assert_eq!(plot_flags(&rest[2]), " (leaks 9.0 bits of mm)");
        let failing = HashVerdict {
            attack: Some(score(true, 20.0, 900, Stop::Recovered)),
            ..verdict("x", 1.0, &["perf@64:max-load"], 1.0)
        };
        assert_eq!(plot_flags(&failing), " (fails, leaks mm)");
        assert!(!s.contains("keyed"), "{s}");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
        assert_eq!(score(false, 9.0, 1, Stop::NoProgress).cell(), "9.0/20 bits");
        assert_eq!(
            score(false, 3.0, 1, Stop::Budget).cell(),
            "≥ 3.0/20 bits (budget)"
        );
        assert_eq!(
            score(true, 20.0, 1234, Stop::Recovered).cell(),
            "mm in 1,234 probes"
        );
    }

    #[test]
    fn which_hash_picks_the_cheapest_clean_hasher_and_tests_the_seed_claim() {
        let v = vec![
            verdict("fast_bad", 0.5, &["perf@16384:max-load"], 1.02),
            verdict("jhash2", 5.0, &[], 1.0),
            verdict("slow", 15.0, &[], 0.97),
        ];
        let k = Spread::of(&[380.0, 400.0, 420.0]).unwrap(); // ±5 %
        let s = which_hash_sentence(&v, Some(k));
        assert!(
            s.starts_with(
                "Global table: jhash2 (5.00 ns/hash) is the cheapest full-scope hasher that passes the distribution tests and `futexhash check` for that table; private table: the same; 2 of 3"
            ),
            "{s}"
        );
        assert!(
            s.contains("not recommended, failing: fast_bad (perf@16384:max-load)"),
            "{s}"
        );
        assert!(s.contains("is predicted to hold"), "{s}");
        // 400 / (400 − 5 + 15) = 0.9756: 2.4 %; at the range's low end 380 / 390: 2.6 %.
        assert!(
            s.contains("(slow) would change throughput by 2.4 % (at most 2.6 %"),
            "{s}"
        );
        // A 2.4 % effect (at least 404 / 414: 2.4 %) against a ±1 % range is a refutation.
        let tight = Spread::of(&[396.0, 400.0, 404.0]).unwrap();
        let s = which_hash_sentence(&v, Some(tight));
        assert!(
            s.contains("predicted not to hold here")
                && s.contains("slow's cost would change throughput by 2.4 % (at least 2.4 %"),
            "{s}"
        );
        // The same medians, but slow's timing rounds spread from 5.5 to 20 ns and
        // jhash2's from 4.9 to 5.1: the change lies between 404 / 404.4 (0.1 %) and
        // 396 / 411.1 (3.7 %), on both sides of ±1 %: not told apart, no side taken.
        // (fast_bad left out: 0.5 ns against 4.9 would change it by at least 1.1 %).
        let mut wide = v[1..].to_vec();
        wide[0].cost_ns = Spread::of(&[4.9, 5.0, 5.1]).unwrap();
        wide[1].cost_ns = Spread::of(&[5.5, 15.0, 20.0]).unwrap();
        let s = which_hash_sentence(&wide, Some(tight));
        assert!(
            s.contains("Whether the seed's finding that they are equal in throughput holds here is not told apart")
                && s.contains("slow's cost would change throughput by 2.4 % (between 0.1 % and 3.7 %")
                && !s.contains("predicted to hold")
                && !s.contains("predicted not to hold"),
            "{s}"
        );
        let all_bad = vec![verdict("a", 1.0, &["x"], 1.0)];
        let s = which_hash_sentence(&all_bad, None);
        assert!(
            s.starts_with(
                "Global table: no full-scope hasher passes the distribution tests and \
                 `futexhash check` for that table"
            ),
            "{s}"
        );
        assert!(s.contains("private table: no hasher passes"), "{s}");
    }

    #[test]
    fn an_address_only_hasher_is_recommended_for_the_private_table_only() {
        let v = vec![
            verdict("jhash2", 5.0, &[], 1.0),
            verdict("jhash2-addr", 3.0, &[], 1.0),
            // Cheapest of all but fails: every futex of a page in one bucket.
            verdict("offsetless", 1.0, &["perf@1024:max-load"], 1.1),
        ];
        let (g, g2) = recommend(&v, TableScope::Global);
        assert_eq!(g.map(|h| h.name.as_str()), Some("jhash2"));
        assert!(g2.is_none(), "the failing one is no runner-up");
        let (p, p2) = recommend(&v, TableScope::Private);
        assert_eq!(p.map(|h| h.name.as_str()), Some("jhash2-addr"));
        assert_eq!(p2.map(|h| h.name.as_str()), Some("jhash2"));
        let s = which_hash_sentence(&v, None);
        assert!(
            s.contains("Global table: jhash2 (5.00 ns/hash) is the cheapest"),
            "{s}"
        );
        assert!(
            s.contains("private table: jhash2-addr (3.00 ns/hash) is the cheapest hasher fit for it (an address-only hasher: fit for the private table only"),
            "{s}"
        );
        assert!(
            s.contains("failing: offsetless (perf@1024:max-load)"),
            "{s}"
        );
        assert_eq!(
            v[2].warning().as_deref(),
            Some("fails 1 distribution test (perf@1024:max-load): not recommended")
        );
        assert_eq!(v[0].warning(), None);
    }

    #[test]
    fn hash_verdict_prediction_is_the_futex_path_with_another_cost() {
        // 400 ns per op with jhash2 at 5 ns: a 15 ns hasher makes it 410 ns → 400/410.
        let h = vec![jhash2()];
        let cost = |n: &str| (n == "jhash2").then_some(Spread::single(15.0));
        let v = hash_verdicts(
            &h,
            cost,
            &[],
            Some(400.0),
            &[("jhash2".into(), 2.0)],
            |_| None,
            |_| Fitness::both(),
        );
        assert_eq!(v[0].predicted_vs_jhash2, Some(1.0));
        assert_eq!(v[0].published_vs_jhash2, Some(1.0));
        let k = 400.0f64;
        let (j, c) = (5.0f64, 15.0f64);
        assert!((k / (k - j + c) - 400.0 / 410.0).abs() < 1e-12);
    }

    #[test]
    fn the_failed_statistic_is_named() {
        let mut r = DistRecord {
            algo: "a".into(),
            workload: "perf".into(),
            keys: 100,
            buckets: 4,
            reduce: crate::stats::Reduce::Mask,
            chi2: 0.0,
            p_value: 0.5,
            empty: 0,
            empty_expected: 0.0,
            collisions: 0,
            collisions_expected: 0.0,
            max_load: 0,
            max_load_expected: 0.0,
            verdict: Verdict::Fail,
            p_value_even: 0.5,
            p_collisions: 0.4,
            p_max_load: 1e-9,
            log2_p: 30.0,
            weight: "keys",
        };
        assert_eq!(failed_statistic(&r), "max-load");
        r.p_collisions = 1e-12;
        assert_eq!(failed_statistic(&r), "collisions");
        r.p_value = 1e-15;
        assert_eq!(failed_statistic(&r), "chi2");
    }

    #[test]
    fn a_throughput_change_is_bounded_by_the_intervals() {
        let one = Spread::single;
        // 400 / (400 − 5 + 15) − 1 = −2.44 %; c from 10 to 20: 400/405 and 400/415.
        let (d, lo, hi) = throughput_change(
            &Spread::of(&[10.0, 15.0, 20.0]).unwrap(),
            &one(5.0),
            &one(400.0),
        );
        assert!((d - (1.0 - 400.0 / 410.0)).abs() < 1e-12, "{d}");
        assert!((lo - (1.0 - 400.0 / 405.0)).abs() < 1e-12, "{lo}");
        assert!((hi - (1.0 - 400.0 / 415.0)).abs() < 1e-12, "{hi}");
        // Overlapping costs: the sign is not known, the least change is none.
        let (_, lo, _) = throughput_change(
            &Spread::of(&[4.0, 5.5, 6.0]).unwrap(),
            &one(5.0),
            &one(400.0),
        );
        assert_eq!(lo, 0.0);
    }

    #[test]
    fn costs_not_told_apart_are_named_together() {
        let mut a = verdict("jhash2", 5.0, &[], 1.0);
        a.cost_ns = Spread::of(&[4.8, 5.0, 6.0]).unwrap();
        let mut b = verdict("mine", 5.5, &[], 1.0);
        b.cost_ns = Spread::of(&[5.2, 5.5, 7.0]).unwrap();
        let mut c = verdict("siphash", 15.0, &[], 1.0);
        c.cost_ns = Spread::of(&[14.0, 15.0, 16.0]).unwrap();
        let v = vec![c, b, a];
        let tied: Vec<&str> = cheapest_tied(&v, TableScope::Global)
            .iter()
            .map(|h| h.name.as_str())
            .collect();
        assert_eq!(tied, ["jhash2", "mine"]);
        let s = which_hash_sentence(&v, None);
        assert!(
            s.contains("but its cost is not told apart from mine (5.50 (5.20–7.00) ns/hash)'s")
                && s.contains("so this run does not choose between them"),
            "{s}"
        );
    }

    /// The 2020 "futex: Unbreak futex hashing" bug, as examples/hashers/unbreak_bug.c
    /// writes it: jhash2 of the address words only, `w0` (the mm, or a file's inode
    /// sequence) never read. Its keys of one process spread well; `check` fails it.
    struct SkipsW0;
    impl KeyHasher for SkipsW0 {
        fn name(&self) -> &str {
            "futex_hash"
        }
        fn scope(&self) -> crate::hashers::Scope {
            crate::hashers::Scope::Full
        }
        fn hash(&self, key: &crate::key::FutexKey) -> u32 {
            crate::hashers::jhash2(&key.addr_words(), key.offset())
        }
    }

    fn small_check() -> CheckOptions {
        CheckOptions {
            keys: Some(1 << 14),
            skip_speed: true,
            ..CheckOptions::default()
        }
    }

    #[test]
    fn fitness_is_what_check_says_of_each_table() {
        let opts = small_check();
        let j = crate::hashers::Builtin::by_name("jhash2", crate::HashKey::DEFAULT).unwrap();
        let f = check_fitness_with(&j, &opts);
        assert_eq!(
            (f.global, f.private, f.cell()),
            (true, true, "both"),
            "{f:?}"
        );
        assert!(f.failed.is_empty(), "{f:?}");
        let a = crate::hashers::Builtin::by_name("jhash2-addr", crate::HashKey::DEFAULT).unwrap();
        let f = check_fitness_with(&a, &opts);
        assert_eq!(
            (f.global, f.private, f.cell()),
            (false, true, "private"),
            "{f:?}"
        );
        // The w0 bug: a property and the inode workload fail (docs/hashers.md), so it is
        // fit for neither table.
        let f = check_fitness_with(&SkipsW0, &opts);
        assert_eq!(
            (f.global, f.private, f.cell()),
            (false, false, "neither"),
            "{f:?}"
        );
        assert!(
            f.failed.iter().any(|c| c == "property:w0-bits")
                && f.failed.iter().any(|c| c.starts_with("dist:inode:")),
            "{f:?}"
        );
        // A tables row that says something else is read as fit for nothing.
        let odd = Fitness::of_rows(&[CheckRow {
            algo: "x".into(),
            check: "tables".into(),
            verdict: CheckVerdict::Pass,
            detail: "fit for: everything".into(),
        }]);
        assert_eq!(odd.cell(), "neither");
        assert_eq!(Fitness::of_rows(&[]).cell(), "neither");
    }

    #[test]
    fn a_hasher_check_finds_unfit_is_never_recommended_however_cheap() {
        // The report's case: the w0 bug passes the report's distribution tests (one
        // process's keys) and is the cheapest full-scope hasher.
        let mut bug = verdict("futex_hash", 3.1, &[], 1.003);
        bug.check = check_fitness_with(&SkipsW0, &small_check());
        let v = vec![
            verdict("jhash2", 4.2, &[], 1.0),
            verdict("jhash2-addr", 2.3, &[], 1.005),
            bug.clone(),
        ];
        let (g, _) = recommend(&v, TableScope::Global);
        assert_eq!(g.map(|h| h.name.as_str()), Some("jhash2"));
        let (p, p2) = recommend(&v, TableScope::Private);
        assert_eq!(p.map(|h| h.name.as_str()), Some("jhash2-addr"));
        assert_eq!(p2.map(|h| h.name.as_str()), Some("jhash2"), "not the bug");
        let s = which_hash_sentence(&v, None);
        assert!(
            s.starts_with("Global table: jhash2 (4.20 ns/hash) is the cheapest"),
            "{s}"
        );
        assert!(s.contains("2 of 3 hashers pass every test"), "{s}");
        assert!(
            s.contains("not recommended, failing: futex_hash (check:property:w0-bits)"),
            "{s}"
        );
        let w = bug.warning().unwrap();
        assert!(
            w.contains("`futexhash check` fails")
                && w.contains("fit for: neither table")
                && w.ends_with(": not recommended"),
            "{w}"
        );
        let g = crate::report::answers::hash_decision(&v, TableScope::Global);
        assert_eq!(g.value, "jhash2");
        assert!(
            g.evidence.contains("unfit for this table, so not ranked: ")
                && g.evidence
                    .contains("futex_hash (`futexhash check`: fit for: neither table"),
            "{}",
            g.evidence
        );
        // Nothing fit for the global table: it says so, naming why.
        let only = vec![v[1].clone(), bug];
        let g = crate::report::answers::hash_decision(&only, TableScope::Global);
        assert_eq!(g.value, "none");
        assert!(
            g.evidence
                .contains("futex_hash (`futexhash check`: fit for: neither"),
            "{}",
            g.evidence
        );
        let s = which_hash_sentence(&only, None);
        assert!(s.contains("so none is recommended"), "{s}");
    }
}

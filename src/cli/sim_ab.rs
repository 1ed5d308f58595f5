//! `futexhash sim --kernel A,B[,C…] --format table`: the records of several kernel presets
//! side by side in the layout of the kernel test robot's (LKP) performance reports — the
//! base kernel's value, then for each other kernel `%change` against the base and its
//! value, one row per configuration with the configuration's name last:
//!
//! ```text
//! ec81deb6b769dc1b 6e553c6bcb7746abad29ce63e0c
//! ---------------- ---------------------------
//!          %stddev     %change         %stddev
//!              \          |                \
//!   13467005            +94.7%   26223847        will-it-scale.104.processes
//! ```
//!
//! (a will-it-scale report of Nov 2023, quoted on linux-mm). Here each value is a
//! simulated per-thread rate with its interval's half-width in % of the rate where the
//! records carry one (`ops_per_sec_lo`/`ops_per_sec_hi`), and a change whose interval
//! holds 0 is marked "not told apart".

use crate::render::MAIL_WIDTH;
use crate::render::output::{wrap_comment, wrap_words};
use crate::sim::sweep::SimRecord;

/// A rate's interval `(lo, hi)` from a record's `ops_per_sec_lo`/`ops_per_sec_hi`, if
/// they are finite and ordered.
pub(super) fn record_interval(r: &SimRecord) -> Option<(f64, f64)> {
    let (lo, hi) = (r.ops_per_sec_lo, r.ops_per_sec_hi);
    (lo.is_finite() && hi.is_finite() && lo <= hi).then_some((lo, hi))
}

/// One configuration's identity: everything but the kernel.
fn config_of(r: &SimRecord) -> (usize, String, String, &'static str, usize) {
    (
        r.bench.threads,
        r.slots.clone(),
        r.bench.algo.clone(),
        r.bench.workload,
        r.bench.futexes,
    )
}

/// `±  2%`: the interval's half-width in % of `rate`, or blanks without one.
fn spread(rate: f64, iv: Option<(f64, f64)>) -> String {
    match iv {
        Some((lo, hi)) if rate > 0.0 => format!("±{:>3.0}%", 50.0 * (hi - lo) / rate),
        _ => " ".repeat(5),
    }
}

/// A kernel's column name: its preset, `(none)` without one.
fn label(k: &str) -> String {
    if k.is_empty() {
        "(none)".to_string()
    } else {
        k.to_string()
    }
}

/// The three heading lines: kernels, rules, and the value columns under each.
fn column_heads(kernels: &[&str]) -> String {
    let mut s = format!(
        "{:>16}",
        label(kernels.first().copied().unwrap_or_default())
    );
    for k in kernels.iter().skip(1) {
        s.push_str(&format!(" {:>27}", label(k)));
    }
    s.push('\n');
    s.push_str(&"-".repeat(16));
    for _ in kernels.iter().skip(1) {
        s.push(' ');
        s.push_str(&"-".repeat(27));
    }
    s.push('\n');
    s.push_str(&format!("{:>16}", "ops/s   ±int"));
    for _ in kernels.iter().skip(1) {
        s.push_str(&format!(" {:>9} {:>16}", "%change", "ops/s   ±int"));
    }
    s.push('\n');
    s
}

/// `KERNEL: WARNING` when the record's hasher fails a distribution test on its keys.
fn warning_note(r: &SimRecord, kernel: &str) -> Option<String> {
    (!r.bench.warning.is_empty()).then(|| format!("{kernel}: {}", r.bench.warning))
}

/// The change of `b` against `a` and whether its interval holds 0 (`None` without
/// both intervals). The interval is the widest ratio the two rates' intervals allow.
fn change(a: f64, ia: Option<(f64, f64)>, b: f64, ib: Option<(f64, f64)>) -> (f64, Option<bool>) {
    let c = 100.0 * (b / a - 1.0);
    let held = match (ia, ib) {
        (Some((alo, ahi)), Some((blo, bhi))) if alo > 0.0 => {
            let lo = blo / ahi - 1.0;
            let hi = bhi / alo - 1.0;
            Some(lo <= 0.0 && 0.0 <= hi)
        }
        _ => None,
    };
    (c, held)
}

/// The A/B table of `records` (several kernels' sweeps of the same configurations, the
/// first kernel the base), with `interval` giving each record's rate interval.
pub(super) fn ab_table(
    profile: &str,
    records: &[SimRecord],
    interval: impl Fn(&SimRecord) -> Option<(f64, f64)>,
) -> String {
    let mut kernels: Vec<&str> = Vec::new();
    let mut configs = Vec::new();
    for r in records {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
        let c = config_of(r);
        if !configs.contains(&c) {
            configs.push(c);
        }
    }
    let find = |k: &str, c: &(usize, String, String, &'static str, usize)| {
        records.iter().find(|r| r.kernel == k && config_of(r) == *c)
    };
    let mut s = wrap_comment(
        &format!(
            "# A/B on profile: {profile}; simulated per-thread ops/sec; base {}",
            kernels.first().copied().unwrap_or_default()
        ),
        MAIL_WIDTH,
    );
    s.push_str(&wrap_comment(
        "# ± = interval half-width, % of the rate; a change whose interval holds 0 is not told apart",
        MAIL_WIDTH,
    ));
    s.push_str(&column_heads(&kernels));
    let mut any_interval = false;
    let mut warnings: Vec<String> = Vec::new();
    for c in &configs {
        let base = kernels.first().and_then(|k| find(k, c));
        let mut notes: Vec<String> = Vec::new();
        let mut warned: Vec<String> = Vec::new();
        let mut line = String::new();
        let (ba, ia) = match base {
            Some(r) => {
                let iv = interval(r);
                any_interval |= iv.is_some();
                line.push_str(&format!(
                    "{:>10} {}",
                    r.bench.ops_per_sec.round() as u64,
                    spread(r.bench.ops_per_sec, iv)
                ));
                warned.extend(warning_note(r, &label(&r.kernel)));
                (Some(r.bench.ops_per_sec), iv)
            }
            None => {
                line.push_str(&format!("{:>10} {}", "-", " ".repeat(5)));
                (None, None)
            }
        };
        let mut buckets: Vec<u64> = base.map(|r| r.bench.buckets).into_iter().collect();
        for k in kernels.iter().skip(1) {
            match (find(k, c), ba) {
                (Some(r), Some(a)) if a > 0.0 => {
                    let ib = interval(r);
                    any_interval |= ib.is_some();
                    let (chg, held) = change(a, ia, r.bench.ops_per_sec, ib);
                    if held == Some(true) {
                        notes.push(format!("{}: not told apart", label(k)));
                    }
                    line.push_str(&format!(
                        " {:>+8.1}% {:>10} {}",
                        chg,
                        r.bench.ops_per_sec.round() as u64,
                        spread(r.bench.ops_per_sec, ib)
                    ));
                    warned.extend(warning_note(r, &label(k)));
                    buckets.push(r.bench.buckets);
                }
                (Some(r), _) => {
                    line.push_str(&format!(
                        " {:>9} {:>10} {}",
                        "-",
                        r.bench.ops_per_sec.round() as u64,
                        spread(r.bench.ops_per_sec, interval(r))
                    ));
                    warned.extend(warning_note(r, &label(k)));
                    buckets.push(r.bench.buckets);
                }
                (None, _) => line.push_str(&format!(" {:>9} {:>10} {}", "-", "-", " ".repeat(5))),
            }
        }
        let (threads, slots, algo, workload, futexes) = c;
        let mut name = format!("perf-bench-futex-{workload}.ops/s t={threads} b={slots}");
        if futexes != &1024 {
            name.push_str(&format!(" f={futexes}"));
        }
        name.push_str(&format!(" {algo}"));
        if buckets.windows(2).any(|w| w[0] != w[1]) {
            let b: Vec<String> = buckets
                .iter()
                .map(|&b| {
                    if b == 0 {
                        "global".into()
                    } else {
                        b.to_string()
                    }
                })
                .collect();
            name.push_str(&format!(" [{}]", b.join("/")));
        }
        if !notes.is_empty() {
            name.push_str(&format!(" ({})", notes.join("; ")));
        }
        if !warned.is_empty() {
            for w in warned {
                warnings.push(format!("! {name}: {w}"));
            }
            name.push_str(" !");
        }
        // The configuration's name goes last, as in LKP's reports; when the row would pass
        // a mail's 100 columns (three kernels or more, or notes), it stands on its own line
        // above its numbers instead.
        if line.chars().count() + 2 + name.chars().count() <= MAIL_WIDTH {
            s.push_str(&format!("{line}  {name}\n"));
        } else {
            for l in wrap_words(&name, MAIL_WIDTH - 2) {
                s.push_str(&format!("  {l}\n"));
            }
            s.push_str(&format!("{}\n", line.trim_end()));
        }
    }
    if !warnings.is_empty() {
        s.push_str(
            "! = the hasher fails a distribution test on the keys run in that configuration\n  \
             (the rate reflects the key layout, not the hash):\n",
        );
        for w in warnings {
            for (i, l) in wrap_words(&w, MAIL_WIDTH - 2).iter().enumerate() {
                s.push_str(if i == 0 { "" } else { "  " });
                s.push_str(l);
                s.push('\n');
            }
        }
    }
    if !any_interval {
        s.push_str("# these records carry no interval: no %change is tested against 0\n");
    }
    s
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::throughput::record::{Backend, BenchRecord, Layout, TableKind};

    /// A simulated jhash2 record of `kernel` (no interval), shared with the plot's tests.
    pub(in crate::cli) fn rec(
        kernel: &str,
        threads: usize,
        slots: &str,
        buckets: u64,
        rate: f64,
    ) -> SimRecord {
        SimRecord {
            bench: BenchRecord {
                backend: Backend::Sim,
                algo: "jhash2".into(),
                table: if buckets == 0 {
                    TableKind::Global
                } else {
                    TableKind::Private
                },
                layout: Layout::Aligned,
                buckets,
                threads,
                futexes: 1024,
                runtime_s: 0.0,
                ops_per_sec: rate,
                ops_per_sec_total: rate * threads as f64,
                stderr_pct: 0.0,
                latency_ns_p50: 0,
                latency_ns_p99: 0,
                latency_ns_p999: 0,
                ops_per_cpu_sec: rate,
                cpu_share: 1.0,
                workload: "hash",
                shared: false,
                slots_applied: None,
                pid: 0,
                unexpected: 0,
                lock_ops_per_sec: None,
                victim_latency_ns_p50: None,
                victim_latency_ns_p99: None,
                victim_latency_ns_p999: None,
                victim_buckets: None,
                shared_buckets: None,
                noisy_ops_per_sec: None,
                machine: String::new(),
                warning: String::new(),
            },
            hash_ns: 6.6,
            hash_ns_source: "profile",
            profile: "p".into(),
            kernel: kernel.into(),
            lock: "queued",
            refcount: "percpu",
            bucket_bytes: 64,
            slots: slots.into(),
            threads_per_cpu: 1.0,
            ops_per_sec_lo: f64::NAN,
            ops_per_sec_hi: f64::NAN,
            global_buckets: 65536,
            replications: vec![rate],
        }
    }

    #[test]
    fn a_failing_hasher_is_marked_and_its_warning_printed() {
        let mut bad = rec("7.2", 240, "65536", 65536, 1000.0);
        bad.bench.warning = "fails collisions (9 vs 5 expected)".into();
        let recs = [
            rec("6.18", 240, "65536", 65536, 1000.0),
            bad,
            rec("6.18", 240, "0", 0, 900.0),
            rec("7.2", 240, "0", 0, 950.0),
        ];
        let t = ab_table("p", &recs, |_| None);
        let marked: Vec<&str> = t.lines().filter(|l| l.contains("b=65536")).collect();
        assert!(marked[0].ends_with(" jhash2 !"), "{t}");
        assert!(!t.lines().any(|l| l.contains("b=0 jhash2 !")), "{t}");
        assert!(
            t.contains("! perf-bench-futex-hash.ops/s t=240 b=65536 jhash2: 7.2: fails collisions (9 vs 5 expected)"),
            "{t}"
        );
    }

    #[test]
    fn two_kernels_print_the_robots_columns() {
        let recs = [
            rec("6.18", 112, "0", 0, 1000.0),
            rec("6.18", 112, "auto", 512, 2000.0),
            rec("7.2", 112, "0", 0, 1100.0),
            rec("7.2", 112, "auto", 512, 1990.0),
        ];
        // Intervals by hand: 6.18 ± 2 % and 7.2 ± 1 % at b=0, so the change (+10 %) has
        // the interval [1089/1020 − 1, 1111/980 − 1] = [+6.8 %, +13.4 %]: told apart.
        // At b=auto, 2000 ± 1 % against 1990 ± 1 %: [1970.1/2020 − 1, 2009.9/1980 − 1]
        // holds 0.
        let iv = |r: &SimRecord| {
            let w = match (r.kernel.as_str(), r.slots.as_str()) {
                ("6.18", "0") => 0.02,
                _ => 0.01,
            };
            Some((
                r.bench.ops_per_sec * (1.0 - w),
                r.bench.ops_per_sec * (1.0 + w),
            ))
        };
        let got = ab_table("p", &recs, iv);
        let expect = "\
# A/B on profile: p; simulated per-thread ops/sec; base 6.18
# ± = interval half-width, % of the rate; a change whose interval holds 0 is not told apart
            6.18                         7.2
---------------- ---------------------------
    ops/s   ±int   %change     ops/s   ±int
      1000 ±  2%    +10.0%       1100 ±  1%  perf-bench-futex-hash.ops/s t=112 b=0 jhash2
  perf-bench-futex-hash.ops/s t=112 b=auto jhash2 (7.2: not told apart)
      2000 ±  1%     -0.5%       1990 ±  1%
";
        assert_eq!(got, expect, "\n{got}");
    }

    #[test]
    fn without_intervals_the_layout_stays_and_says_nothing_was_tested() {
        let recs = [
            rec("6.16", 240, "auto", 0, 1000.0),
            rec("6.17", 240, "auto", 1024, 250.0),
            rec("6.18", 240, "auto", 1024, 260.0),
        ];
        let got = ab_table("p", &recs, |_| None);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(
            lines[2],
            "            6.16                        6.17                        6.18"
        );
        // Three kernels and a name: past 100 columns, so the name stands above the numbers.
        assert_eq!(
            lines[5],
            "  perf-bench-futex-hash.ops/s t=240 b=auto jhash2 [global/1024/1024]"
        );
        assert_eq!(
            lines[6],
            "      1000          -75.0%        250          -74.0%        260"
        );
        assert!(got.ends_with("no %change is tested against 0\n"), "{got}");
        assert!(!got.contains("not told apart)"));
    }

    #[test]
    fn the_interval_is_read_from_the_records_fields_when_they_exist() {
        // This branch's records have no ops_per_sec_lo/hi: no interval.
        assert_eq!(record_interval(&rec("7.2", 1, "0", 0, 5.0)), None);
    }
}

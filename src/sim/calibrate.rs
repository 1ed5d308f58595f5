//! Fitting a machine profile to measured `perf bench futex hash` rows, and the bridge from
//! keys + hasher + table size to the simulator's per-thread bucket sequences.
//!
//! Two free parameters: `outside_ns` (what an operation nobody contends for costs) and the
//! lock hand-off (`handoff_local_ns`, with `handoff_remote_ns` kept at the template's
//! remote/local ratio). They are fitted to any number of rows (at least two) by weighted
//! least squares on `ln(rate)`: Levenberg–Marquardt on the logarithms of the parameters
//! (so both stay positive), Jacobian by finite differences of the deterministic
//! simulation. Each row's weight is its measurement noise (`stderr_pct` when the CSV has
//! it, else [`DEFAULT_NOISE`]). The uncertainty of each parameter is the square root of
//! the diagonal of `(JᵀWJ)⁻¹`, scaled by the reduced χ² when there are more rows than
//! parameters (Press et al., *Numerical Recipes*, 3rd ed., §15.5–15.6).
//!
//! A parameter whose one-sigma uncertainty is larger than its value is not determined by
//! the rows — its effect on them lies within their noise (a hand-off fitted on rows where
//! nobody contends, say). It is not fitted: the template's value is kept and the result
//! says so. If no parameter is determined, calibration refuses. `hold_ns`, the remote/local
//! ratio and the line-migration cost are taken from the template. Hash costs are not copied
//! from the template: the fitted profile carries none, so the simulator times each hasher
//! on the machine it runs on (see [`super::hashcost`]).

use super::profile::MachineProfile;
use super::{
    Design, GLOBAL_INTERLEAVE_BYTES, LineHomes, SimLength, SimOp, SimWorkload, round_robin_cpus,
    simulate,
};
use crate::hashers::KeyHasher;
use crate::key::{FutexKey, PAGE_SIZE};
use crate::sim::SimError;

/// Relative noise assumed for a row that does not state its own: perf printed ±0.3–0.9 %
/// for the seed runs; 1 % also covers run-to-run drift.
pub const DEFAULT_NOISE: f64 = 0.01;

/// One measured row: table size (0 = the global hash) and perf's mean per-thread rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// Private hash slots, or 0 for the global hash.
    pub buckets: u64,
    /// Mean per-thread operations per second.
    pub ops_per_sec: f64,
    /// Relative standard error of the rate (0.01 = 1 %).
    pub noise: f64,
}

/// What is simulated: whose keys, hashed how, on which CPUs, in which table design.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Each thread's futex keys, visited in order as perf's loop does.
    pub keys_per_thread: Vec<Vec<FutexKey>>,
    /// CPUs the threads are pinned to, round-robin.
    pub cpus: Vec<u32>,
    /// Size of the global hash (used for `buckets = 0`).
    pub global_buckets: u64,
    /// The loop the threads run.
    pub op: SimOp,
    /// The table design.
    pub design: Design,
    /// Node tables of the global hash (1 = one table; see [`GlobalHash`]).
    pub global_nodes: u32,
    /// The model's refinements (all on by default; the validation switches one off to
    /// measure it).
    pub mechanisms: super::Mechanisms,
}

impl Scenario {
    /// The simulator input for `hasher` at table size `buckets` (0 = global), `mask`
    /// reduction as the kernel does.
    pub fn workload<H: KeyHasher + ?Sized>(&self, hasher: &H, buckets: u64) -> SimWorkload {
        self.workload_from(&self.hashes(hasher), buckets)
    }

    /// The 32-bit hash of every key, per thread: what [`Scenario::workload_from`] reduces
    /// to buckets. A sweep over table sizes hashes once per hasher.
    pub fn hashes<H: KeyHasher + ?Sized>(&self, hasher: &H) -> Vec<Vec<u32>> {
        self.keys_per_thread
            .iter()
            .map(|keys| {
                let mut out = vec![0u32; keys.len()];
                hasher.hash_many(keys, &mut out);
                out
            })
            .collect()
    }

    /// [`Scenario::workload`] from the keys' hashes (as [`Scenario::hashes`] gives them).
    pub fn workload_from(&self, hashes: &[Vec<u32>], buckets: u64) -> SimWorkload {
        let size = if buckets == 0 {
            self.global_buckets
        } else {
            buckets
        };
        debug_assert!(size.is_power_of_two());
        // 6.16's per-node global hash: node = (hash >> shift) % nodes, then the node's
        // table of size / nodes buckets (kernel/futex/core.c, `__futex_hash()`).
        let nodes = if buckets == 0 {
            u64::from(self.global_nodes.max(1))
        } else {
            1
        };
        let per_node = (size / nodes).max(1).next_power_of_two();
        let shift = per_node.trailing_zeros();
        let mask = per_node - 1;
        let buckets_per_thread = hashes
            .iter()
            .map(|hs| {
                hs.iter()
                    .map(|&h| {
                        let node = if nodes > 1 {
                            (u64::from(h) >> shift) % nodes
                        } else {
                            0
                        };
                        (node * per_node + (u64::from(h) & mask)) as u32
                    })
                    .collect()
            })
            .collect();
        // A private hash is allocated by perf's main thread, on the run's first CPU; the
        // global hash per node (6.16+) or interleaved at boot, in huge pages if it is
        // large enough for them.
        let bucket_bytes = u64::from(self.design.bucket_bytes.max(1));
        let homes = if buckets > 0 {
            LineHomes::NodeOfCpu(self.cpus.first().copied().unwrap_or(0))
        } else if nodes > 1 {
            LineHomes::Blocks(per_node * bucket_bytes)
        } else if size * bucket_bytes >= GLOBAL_INTERLEAVE_BYTES {
            LineHomes::Blocks(GLOBAL_INTERLEAVE_BYTES)
        } else {
            LineHomes::Blocks(PAGE_SIZE)
        };
        let design = Design {
            refcount: self.design.refcount.on_table(buckets),
            ..self.design
        };
        SimWorkload {
            op: self.op,
            buckets_per_thread,
            cpu_of_thread: round_robin_cpus(self.keys_per_thread.len(), &self.cpus),
            locks: (per_node * nodes) as usize,
            design,
            start_order: 0,
            homes,
            mechanisms: self.mechanisms,
        }
    }
}

/// `roundup_pow_of_two(256 × cpus)`: the kernel's global hash size (`futex_init()`).
pub fn global_hash_size(cpus: u32) -> u64 {
    (256 * u64::from(cpus.max(1))).next_power_of_two()
}

/// A fitted parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fitted {
    /// The value, ns.
    pub value: f64,
    /// One-sigma uncertainty, ns.
    pub sigma: f64,
    /// False when the rows do not determine it (sigma > value): the template's value was
    /// kept.
    pub determined: bool,
}

/// The result of a calibration.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// The fitted profile.
    pub profile: MachineProfile,
    /// `outside_ns`.
    pub outside: Fitted,
    /// `handoff_local_ns`.
    pub handoff: Fitted,
    /// Per row: `ln(simulated / measured)` with the fitted profile.
    pub residuals: Vec<f64>,
    /// Root mean square of the residuals.
    pub rms_residual: f64,
}

fn with_params(p: &MachineProfile, outside: f64, handoff: f64) -> MachineProfile {
    let ratio = p.remote_ratio();
    let mut q = p.clone();
    q.outside_ns = outside;
    q.handoff_local_ns = handoff;
    q.handoff_remote_ns = handoff * ratio;
    q
}

/// Solves the 2×2 system `a·x = b`; `None` when singular.
fn solve2(a: [[f64; 2]; 2], b: [f64; 2]) -> Option<[f64; 2]> {
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    if det.abs() < 1e-300 || !det.is_finite() {
        return None;
    }
    Some([
        (b[0] * a[1][1] - b[1] * a[0][1]) / det,
        (a[0][0] * b[1] - a[1][0] * b[0]) / det,
    ])
}

/// Smallest value a fitted cost may take, ns (the fit works on logarithms).
const FLOOR_NS: f64 = 0.01;

/// What [`calibrate`] refuses before it simulates anything: a bad template, fewer than two
/// rows, a row without a positive rate, rows of one table size, and rows no fit can reach
/// ([`check_reachable`]).
pub fn check_calibration(
    template: &MachineProfile,
    scenario: &Scenario,
    rows: &[Observation],
) -> Result<(), SimError> {
    template.validate()?;
    if rows.len() < 2 {
        return Err(SimError::BadRequest(format!(
            "calibration needs at least two rows, got {}",
            rows.len()
        )));
    }
    for o in rows {
        if !(o.ops_per_sec.is_finite() && o.ops_per_sec > 0.0) {
            return Err(SimError::BadRequest(format!(
                "row with {} buckets has no positive rate",
                o.buckets
            )));
        }
    }
    let size = |o: &Observation| {
        if o.buckets == 0 {
            scenario.global_buckets
        } else {
            o.buckets
        }
    };
    if rows.iter().all(|o| size(o) == size(&rows[0])) {
        return Err(SimError::BadRequest(
            "the calibration rows must have at least two different table sizes".into(),
        ));
    }
    rows.iter()
        .try_for_each(|o| check_reachable(template, scenario, o))
}

/// The most operations per second a thread of `scenario` can average at table size
/// `buckets` (0 = the global hash), whatever costs a fit gives: `min(1, C / T, N / T) ·
/// 1e9 / hold_ns` for `T` threads on `C` CPUs and a table of `N` buckets.
///
/// A CPU runs one thread at a time (the rest wait for their time slices), a bucket's lock
/// is held by one operation at a time, and every operation holds its bucket lock for at
/// least the template's `hold_ns`, which the fit does not change: so at most `min(T, C,
/// N)` operations are in their critical sections at once, each for `hold_ns`.
pub fn reachable_rate(template: &MachineProfile, scenario: &Scenario, buckets: u64) -> f64 {
    let threads = scenario.keys_per_thread.len().max(1) as f64;
    let cpus = scenario.cpus.len().max(1) as f64;
    let slots = if buckets == 0 {
        scenario.global_buckets
    } else {
        buckets
    } as f64;
    (cpus.min(slots) / threads).min(1.0) * 1e9 / template.hold_ns
}

/// Refuses a row above [`reachable_rate`]: such a row (a 240-thread measurement given as
/// 5000 threads on 2 CPUs, or a 4-slot rate no 4 locks can serve) would drive the fit to
/// its floor and end as "not determined", or as a misfit, only after the whole search.
/// The message says which limit binds: the table's slots or the CPUs.
pub fn check_reachable(
    template: &MachineProfile,
    scenario: &Scenario,
    o: &Observation,
) -> Result<(), SimError> {
    let bound = reachable_rate(template, scenario, o.buckets);
    // A rate that is not a number is [`check_calibration`]'s to refuse.
    if o.ops_per_sec.is_nan() || o.ops_per_sec <= bound {
        return Ok(());
    }
    let threads = scenario.keys_per_thread.len().max(1) as f64;
    let cpus = scenario.cpus.len().max(1) as f64;
    if o.buckets > 0 && (o.buckets as f64) < cpus.min(threads) {
        let n = o.buckets;
        return Err(SimError::BadRequest(format!(
            "{threads} threads on {n} private slots cannot reach the row with {n} buckets ({:.0} ops/sec per thread): at most {n} bucket locks are held at a time, each for at least the template's hold_ns of {} ns, so a thread averages at most {bound:.0} ops/sec ({n} / {threads} x 1e9 / hold_ns)",
            o.ops_per_sec, template.hold_ns
        )));
    }
    // Largest thread count at which the row is reachable (0: not even one per CPU).
    let most = if o.ops_per_sec * template.hold_ns > 1e9 {
        0.0
    } else {
        (cpus * 1e9 / (o.ops_per_sec * template.hold_ns)).floor()
    };
    Err(SimError::BadRequest(format!(
        "{threads} threads on {cpus} CPUs cannot reach the row with {} buckets ({:.0} ops/sec per thread): each CPU would finish an operation every {:.3} ns, less than the template's hold_ns of {} ns alone; {}",
        o.buckets,
        o.ops_per_sec,
        1e9 / (o.ops_per_sec * threads.max(cpus) / cpus),
        template.hold_ns,
        if most >= 1.0 {
            format!("with {cpus} CPUs at most {most} threads can")
        } else {
            "not even one thread per CPU can".to_string()
        }
    )))
}

/// Step of the Jacobian's finite differences, on the logarithms of the parameters.
const JACOBIAN_STEP: f64 = 0.02;

/// Rounds of coordinate descent before Levenberg–Marquardt (each one golden-section
/// search per parameter).
const DESCENT_ROUNDS: u64 = 3;
/// Narrowing steps of one golden-section search (each one evaluation, after two to start).
const GOLDEN_STEPS: u64 = 32;
/// Most Levenberg–Marquardt iterations.
const LM_ITERATIONS: u64 = 30;
/// Most damped steps tried in one Levenberg–Marquardt iteration.
const LM_TRIES: u64 = 8;

/// Most times one fit ([`calibrate`]) simulates each of its rows, counted from its
/// searches: the coordinate descent (two parameters, [`GOLDEN_STEPS`] + 2 evaluations a
/// search), Levenberg–Marquardt (one evaluation to start, then per iteration two for the
/// Jacobian and up to [`LM_TRIES`] steps), [`Fit::fitted`] (two for the Jacobian, one at
/// the optimum, up to two per parameter halved and doubled), the refit of a lone
/// determined parameter (one search) and the final residuals: 547. Fits usually stop far
/// sooner (some 200); the bound is what a limit on the work can rely on.
pub const FIT_SIMULATIONS_PER_ROW: u64 = DESCENT_ROUNDS * 2 * (GOLDEN_STEPS + 2)
    + (1 + LM_ITERATIONS * (2 + LM_TRIES))
    + (2 + 1 + 2 * 2)
    + (GOLDEN_STEPS + 2)
    + 1;

/// The largest cost, ns, a fit of `rows` may try for `outside_ns` or the hand-off: eight
/// times the period of the slowest row (a cost that alone makes every row eight times
/// slower than measured is past any fit).
pub fn fit_cost_cap(rows: &[Observation]) -> f64 {
    let slowest = rows
        .iter()
        .map(|o| o.ops_per_sec)
        .fold(f64::INFINITY, f64::min);
    1e9 / slowest * 8.0
}

/// `template` with the largest costs a fit of `rows` may try ([`fit_cost_cap`]): the
/// profile a bound on the fit's simulated time charges.
pub fn largest_trial(template: &MachineProfile, rows: &[Observation]) -> MachineProfile {
    let cap = fit_cost_cap(rows);
    with_params(template, cap, cap)
}

/// The sum of squares of `r`.
fn sq(r: &[f64]) -> f64 {
    r.iter().map(|x| x * x).sum::<f64>()
}

/// `JᵀJ` of a Jacobian `j` of two columns.
fn normal(j: &[[f64; 2]]) -> [[f64; 2]; 2] {
    let mut a = [[0.0; 2]; 2];
    for row in j {
        for x in 0..2 {
            for y in 0..2 {
                a[x][y] += row[x] * row[y];
            }
        }
    }
    a
}

/// The variance of parameter `k` (a logarithm) from `JᵀJ` `a`, scaled by `scale` (the
/// reduced χ², at least 1).
fn variance(a: [[f64; 2]; 2], scale: f64, k: usize) -> f64 {
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    if det.abs() <= 1e-12 * (a[0][0] * a[1][1]).abs() || det.abs() < 1e-300 {
        // The rows cannot tell the two parameters apart (typically: no row has enough
        // contention for the hand-off to matter). Each parameter's uncertainty is then
        // the one it has with the other held fixed; a parameter the rows do not move at
        // all (a zero diagonal) stays undetermined.
        if a[k][k] > 0.0 {
            scale / a[k][k]
        } else {
            f64::INFINITY
        }
    } else {
        let inv = if k == 0 { a[1][1] / det } else { a[0][0] / det };
        (inv * scale).max(0.0)
    }
}

/// The least-squares problem [`calibrate`] solves: the rows' workloads and noise, on the
/// logarithms `th` of (`outside_ns`, hand-off), each searched between `floor` and `cap`.
struct Fit<'a> {
    template: &'a MachineProfile,
    rows: &'a [Observation],
    work: Vec<SimWorkload>,
    noise: Vec<f64>,
    hash_ns: f64,
    len: SimLength,
    floor: f64,
    cap: f64,
}

impl<'a> Fit<'a> {
    /// The problem of fitting `template` to `rows` of `scenario` with `hasher`.
    fn new<H: KeyHasher + ?Sized>(
        template: &'a MachineProfile,
        scenario: &Scenario,
        hasher: &H,
        hash_ns: f64,
        rows: &'a [Observation],
        len: SimLength,
    ) -> Fit<'a> {
        Fit {
            template,
            rows,
            work: rows
                .iter()
                .map(|o| scenario.workload(hasher, o.buckets))
                .collect(),
            noise: rows.iter().map(|o| o.noise.max(1e-4)).collect(),
            hash_ns,
            len,
            floor: FLOOR_NS.ln(),
            cap: fit_cost_cap(rows).ln(),
        }
    }

    /// Weighted residuals at (ln outside, ln handoff).
    fn residuals(&self, th: [f64; 2]) -> Vec<f64> {
        let p = with_params(self.template, th[0].exp(), th[1].exp());
        let (hash_ns, len) = (self.hash_ns, self.len);
        let per_row = self.work.iter().zip(self.rows).zip(&self.noise);
        per_row
            .map(|((w, o), s)| (simulate(&p, w, hash_ns, len).ops_per_sec / o.ops_per_sec).ln() / s)
            .collect()
    }

    /// Golden-section search on logarithm `k` with the other held at `th`'s.
    fn golden(&self, th: [f64; 2], k: usize) -> f64 {
        let f = |x: f64| {
            let mut t = th;
            t[k] = x;
            sq(&self.residuals(t))
        };
        let (mut lo, mut hi) = (self.floor, self.cap);
        let g = 0.618_033_988_749_895;
        let (mut a1, mut b1) = (hi - g * (hi - lo), lo + g * (hi - lo));
        let (mut fa, mut fb) = (f(a1), f(b1));
        for _ in 0..GOLDEN_STEPS {
            if fa < fb {
                hi = b1;
                b1 = a1;
                fb = fa;
                a1 = hi - g * (hi - lo);
                fa = f(a1);
            } else {
                lo = a1;
                a1 = b1;
                fa = fb;
                b1 = lo + g * (hi - lo);
                fb = f(b1);
            }
        }
        0.5 * (lo + hi)
    }

    /// The Jacobian of the residuals at `th`, whose residuals are `r`.
    fn jacobian(&self, th: [f64; 2], r: &[f64]) -> Vec<[f64; 2]> {
        let mut j = vec![[0.0; 2]; r.len()];
        for k in 0..2 {
            let mut t = th;
            t[k] += JACOBIAN_STEP;
            let rk = self.residuals(t);
            for i in 0..r.len() {
                j[i][k] = (rk[i] - r[i]) / JACOBIAN_STEP;
            }
        }
        j
    }

    /// Levenberg–Marquardt from `th`: the optimum and its residuals.
    fn levenberg_marquardt(&self, mut th: [f64; 2]) -> ([f64; 2], Vec<f64>) {
        let (floor, cap) = (self.floor, self.cap);
        let mut r = self.residuals(th);
        let mut lambda = 1e-2;
        for _ in 0..LM_ITERATIONS {
            let j = self.jacobian(th, &r);
            let a = normal(&j);
            let mut g = [0.0; 2];
            for (row, ri) in j.iter().zip(&r) {
                g[0] += row[0] * ri;
                g[1] += row[1] * ri;
            }
            let mut improved = false;
            for _ in 0..LM_TRIES {
                let mut damped = a;
                damped[0][0] += lambda * (a[0][0] + 1e-9);
                damped[1][1] += lambda * (a[1][1] + 1e-9);
                let Some(d) = solve2(damped, [-g[0], -g[1]]) else {
                    lambda *= 10.0;
                    continue;
                };
                let cand = [
                    (th[0] + d[0]).clamp(floor, cap),
                    (th[1] + d[1]).clamp(floor, cap),
                ];
                let rc = self.residuals(cand);
                if sq(&rc) < sq(&r) {
                    th = cand;
                    r = rc;
                    lambda = (lambda / 3.0).max(1e-6);
                    improved = true;
                    break;
                }
                lambda *= 10.0;
            }
            if !improved || sq(&r) < 1e-8 {
                break;
            }
        }
        (th, r)
    }

    /// Both parameters at the optimum `th` (residuals `r`), with their uncertainties
    /// from the Jacobian there, in ns (d value = value · d ln value); an undetermined one
    /// takes the template's value.
    fn fitted(&self, th: [f64; 2], r: &[f64]) -> [Fitted; 2] {
        let a = normal(&self.jacobian(th, r));
        let dof = self.rows.len().saturating_sub(2);
        let scale = if dof > 0 {
            (sq(r) / dof as f64).max(1.0)
        } else {
            1.0
        };
        // The sigma above is a local slope, and the simulated rate is not smooth in the
        // hand-off: two threads on two CPUs settle into a pattern that never collides for
        // most hand-offs and convoys for a narrow band of them, so a fit can land next to a
        // step where the slope is steep though the rows do not pin the value at all (the
        // 2-CPU VM's stored sweep "fitted" 274.9 ± 4.8 ns that way, with the same rates from
        // 0 to 150 ns and at 400 ns). A parameter counts as determined only if halving it and
        // doubling it each worsen the weighted squared error by at least 1 (one sigma).
        let chi2 = sq(&self.residuals(th));
        let bounded = |k: usize| {
            [-std::f64::consts::LN_2, std::f64::consts::LN_2]
                .iter()
                .all(|d| {
                    let mut t = th;
                    t[k] += d;
                    sq(&self.residuals(t)) - chi2 >= 1.0
                })
        };
        let fitted = |k: usize, fallback: f64| {
            let value = th[k].exp();
            let sigma = value * variance(a, scale, k).sqrt();
            let determined =
                sigma.is_finite() && sigma < value && value > 2.0 * FLOOR_NS && bounded(k);
            Fitted {
                value: if determined { value } else { fallback },
                sigma,
                determined,
            }
        };
        [
            fitted(0, self.template.outside_ns),
            fitted(1, self.template.handoff_local_ns),
        ]
    }
}

/// The parameters [`calibrate`] fits, as messages name them.
const PARAMS: [&str; 2] = ["outside_ns", "handoff_local_ns"];

/// How far, in its own noise, a calibrated profile may miss a row and still count as
/// reproducing it.
const MISS_SIGMAS: f64 = 3.0;

/// Whether a fitted cost lies at the floor of the search (within the factor of two that
/// [`Fit::fitted`] asks of a determined one).
fn at_floor(value: f64) -> bool {
    value <= 2.0 * FLOOR_NS
}

/// The row the residuals `ln_res` (`ln(simulated / measured)`) miss most in units of its
/// noise: its index and that miss.
fn worst_row(ln_res: &[f64], rows: &[Observation]) -> (usize, f64) {
    ln_res
        .iter()
        .zip(rows)
        .map(|(x, o)| x.abs() / o.noise.max(1e-4))
        .enumerate()
        .fold(
            (0, 0.0),
            |best, (i, m)| if m > best.1 { (i, m) } else { best },
        )
}

/// The refusal of a fit that drives parameter `k` to its floor, with the row the fit misses
/// most under residuals `ln_res`.
fn stuck_at_floor(
    k: usize,
    template: &MachineProfile,
    hash_ns: f64,
    rows: &[Observation],
    ln_res: &[f64],
) -> SimError {
    let (i, miss) = worst_row(ln_res, rows);
    let missed = if miss > MISS_SIGMAS {
        format!(
            "; the profile so fitted comes out {:.0} % {} the row with {} buckets",
            ln_res[i].exp_m1().abs() * 100.0,
            if ln_res[i] < 0.0 { "below" } else { "above" },
            rows[i].buckets
        )
    } else {
        String::new()
    };
    SimError::BadRequest(format!(
        "the rows drive {} to the fit's floor of {FLOOR_NS} ns, so it is no measured cost: they leave no time beyond the template's fixed costs (hold_ns {} ns, a {hash_ns:.2} ns hash per operation){missed}; check the threads, CPUs and nodes the rows were measured with, and the template",
        PARAMS[k], template.hold_ns
    ))
}

/// Fits `outside_ns` and the hand-off of `template` so that the simulation of `scenario`
/// with `hasher` (costing `hash_ns`) reproduces `rows` in the least-squares sense.
pub fn calibrate<H: KeyHasher + ?Sized>(
    template: &MachineProfile,
    scenario: &Scenario,
    hasher: &H,
    hash_ns: f64,
    rows: &[Observation],
    len: SimLength,
) -> Result<Calibration, SimError> {
    check_calibration(template, scenario, rows)?;
    let fit = Fit::new(template, scenario, hasher, hash_ns, rows, len);
    // Start: the outside cost that gives the fastest row's rate with nobody waiting, and
    // the template's hand-off.
    let fastest = rows.iter().map(|o| o.ops_per_sec).fold(0.0, f64::max);
    let start_outside = (1e9 / fastest - template.hold_ns - hash_ns).max(1.0);
    let mut th = [start_outside.ln(), template.handoff_local_ns.max(1.0).ln()];
    // Coordinate descent first (golden-section search on each logarithm in turn): the
    // hand-off's gradient vanishes where nobody waits, so Levenberg–Marquardt alone can
    // stall at a bad start; it then polishes the joint optimum.
    for _ in 0..DESCENT_ROUNDS {
        th[1] = fit.golden(th, 1);
        th[0] = fit.golden(th, 0);
    }
    let (th, r) = fit.levenberg_marquardt(th);
    let [outside, handoff] = fit.fitted(th, &r);
    let floored = th.map(|x| at_floor(x.exp()));
    if !outside.determined && !handoff.determined {
        let ln_res: Vec<f64> = r.iter().zip(&fit.noise).map(|(x, s)| x * s).collect();
        if let Some(k) = (0..2).find(|&k| floored[k])
            && worst_row(&ln_res, rows).1 > MISS_SIGMAS
        {
            return Err(stuck_at_floor(k, template, hash_ns, rows, &ln_res));
        }
        return Err(SimError::BadRequest(format!(
            "the rows do not determine outside_ns ({:.1} ± {:.1} ns) nor the hand-off ({:.1} ± {:.1} ns): their differences lie within the measurement noise",
            th[0].exp(),
            outside.sigma,
            th[1].exp(),
            handoff.sigma
        )));
    }
    let mut profile = with_params(template, outside.value, handoff.value);
    // If only one parameter is determined, refit it alone with the other fixed.
    if outside.determined != handoff.determined {
        let k = usize::from(handoff.determined);
        let mut t = [
            outside.value.max(FLOOR_NS).ln(),
            handoff.value.max(FLOOR_NS).ln(),
        ];
        t[k] = fit.golden(t, k);
        profile = if k == 0 {
            with_params(template, t[0].exp(), handoff.value)
        } else {
            with_params(template, outside.value, t[1].exp())
        };
    }
    let fin: Vec<f64> = fit
        .work
        .iter()
        .zip(rows)
        .map(|(w, o)| (simulate(&profile, w, hash_ns, len).ops_per_sec / o.ops_per_sec).ln())
        .collect();
    let rms = (fin.iter().map(|x| x * x).sum::<f64>() / fin.len() as f64).sqrt();
    // A parameter at the floor of the search is no measured cost: refused when it is the
    // value fitted (it would be printed as 0.0 ns), and when the template's value kept in
    // its place leaves the rows missed beyond their noise (the rows are faster than the
    // template allows; keeping it would write a profile that does not reproduce them).
    for (k, f, value) in [
        (0, &outside, profile.outside_ns),
        (1, &handoff, profile.handoff_local_ns),
    ] {
        let stuck = if f.determined {
            at_floor(value)
        } else {
            floored[k] && worst_row(&fin, rows).1 > MISS_SIGMAS
        };
        if stuck {
            return Err(stuck_at_floor(k, template, hash_ns, rows, &fin));
        }
    }
    let outside = Fitted {
        value: profile.outside_ns,
        ..outside
    };
    let handoff = Fitted {
        value: profile.handoff_local_ns,
        ..handoff
    };
    profile.hash_ns.clear();
    profile.calibration_rms_ln = Some(rms);
    Ok(Calibration {
        profile,
        outside,
        handoff,
        residuals: fin,
        rms_residual: rms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::Builtin;
    use crate::hashers::HashKey;
    use crate::sim::Refcount;

    fn scenario(threads: usize, cpus: u32) -> Scenario {
        let keys = (0..threads)
            .map(|t| {
                (0..64)
                    .map(|i| {
                        FutexKey::private(
                            0xffff_8880_0000_0000,
                            0x5555_0000_0000 + (t as u64 * 4112) + 4 * i,
                        )
                        .unwrap()
                    })
                    .collect()
            })
            .collect();
        Scenario {
            keys_per_thread: keys,
            cpus: (0..cpus).collect(),
            global_buckets: global_hash_size(cpus),
            op: SimOp::WaitFail,
            design: Design::default(),
            global_nodes: 1,
            mechanisms: Default::default(),
        }
    }

    #[test]
    fn tables_are_homed_where_the_kernel_allocates_them() {
        let mut sc = scenario(4, 256);
        sc.cpus = (64..128).collect();
        // A private hash: on the node of the thread that sized it (the run's first CPU).
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        assert_eq!(sc.workload(&h, 1024).homes, LineHomes::NodeOfCpu(64));
        // One global table of 65536 64-byte buckets (4 MiB), interleaved in 2 MiB huge
        // pages.
        assert_eq!(sc.workload(&h, 0).homes, LineHomes::Blocks(2 << 20));
        // 65536 24-byte buckets: 1.5 MiB, too small for huge pages: 4 KiB pages.
        sc.design.bucket_bytes = 24;
        assert_eq!(sc.workload(&h, 0).homes, LineHomes::Blocks(4096));
        // 6.16's table per node: node n's table (32768 buckets of 64 bytes) on node n.
        sc.design.bucket_bytes = 64;
        sc.global_nodes = 2;
        assert_eq!(sc.workload(&h, 0).homes, LineHomes::Blocks(32768 * 64));
        sc.global_buckets = 1024;
        assert_eq!(sc.workload(&h, 0).homes, LineHomes::Blocks(512 * 64));
    }

    #[test]
    fn only_the_private_hash_takes_a_reference() {
        // futex_private_hash_get() is called for the private hash; the global hash's
        // operations take no reference in any kernel.
        let mut sc = scenario(4, 8);
        sc.design.refcount = Refcount::Shared;
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
        assert_eq!(sc.workload(&h, 16).design.refcount, Refcount::Shared);
        assert_eq!(sc.workload(&h, 0).design.refcount, Refcount::None);
        sc.design.refcount = Refcount::PerCpu;
        assert_eq!(sc.workload(&h, 0).design.refcount, Refcount::None);
    }

    #[test]
    fn global_size_is_roundup_of_256_per_cpu() {
        assert_eq!(global_hash_size(2), 512);
        assert_eq!(global_hash_size(256), 65536);
        assert_eq!(global_hash_size(80), 32768);
    }

    #[test]
    fn rows_no_fit_can_reach_are_refused_before_simulating() {
        let t = MachineProfile {
            hold_ns: 100.0,
            ..MachineProfile::minimal("t", 2, 1)
        };
        let obs = |rate: f64| {
            vec![
                Observation {
                    buckets: 0,
                    ops_per_sec: rate,
                    noise: DEFAULT_NOISE,
                },
                Observation {
                    buckets: 2,
                    ops_per_sec: 1000.0,
                    noise: DEFAULT_NOISE,
                },
            ]
        };
        // 5000 threads on 2 CPUs, 100 ns held per operation: at most 2 / 5000 x 1e9 / 100
        // = 4000 ops/sec per thread.
        let sc = scenario(5000, 2);
        assert!(check_calibration(&t, &sc, &obs(3999.0)).is_ok());
        let e = check_calibration(&t, &sc, &obs(4001.0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("5000 threads on 2 CPUs") && e.contains("4001"),
            "{e}"
        );
        // The seed's 1,868,129 ops/sec: 2e9 / (1868129 x 100) = 10.7, so at most 10 threads.
        let e = check_calibration(&t, &sc, &obs(1_868_129.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 10 threads"), "{e}");
        // Above 1e9 / hold_ns = 1e7 per thread no thread count reaches it.
        let e = check_calibration(&t, &scenario(1, 2), &obs(2e7))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not even one thread per CPU"), "{e}");
        assert!(check_calibration(&t, &scenario(1, 2), &obs(0.99e7)).is_ok());
        // 2 slots serve at most 2 of 8 threads on 8 CPUs at a time: 2 / 8 x 1e9 / 100 =
        // 2.5e6 ops/sec per thread at the 2-slot row, whatever the CPUs.
        let at_2 = |rate: f64| {
            vec![
                Observation {
                    buckets: 0,
                    ops_per_sec: 1000.0,
                    noise: DEFAULT_NOISE,
                },
                Observation {
                    buckets: 2,
                    ops_per_sec: rate,
                    noise: DEFAULT_NOISE,
                },
            ]
        };
        let t8 = MachineProfile {
            hold_ns: 100.0,
            ..MachineProfile::minimal("t", 8, 1)
        };
        assert!(check_calibration(&t8, &scenario(8, 8), &at_2(2.49e6)).is_ok());
        let e = check_calibration(&t8, &scenario(8, 8), &at_2(2.51e6))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("8 threads on 2 private slots") && e.contains("at most 2500000"),
            "{e}"
        );
    }

    #[test]
    fn calibration_recovers_the_parameters_it_was_generated_with() {
        let truth = MachineProfile {
            name: "truth".into(),
            cpus: 32,
            nodes: 2,
            outside_ns: 350.0,
            hold_ns: 60.0,
            handoff_local_ns: 250.0,
            handoff_remote_ns: 500.0,
            line_miss_ns: 40.0,
            line_miss_remote_ns: None,
            ..MachineProfile::minimal("truth", 32, 2)
        };
        let sc = scenario(32, 32);
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT)
            .unwrap()
            .shared();
        let len = SimLength {
            warmup_ops: 50,
            measured_ops: 400,
        };
        let obs = |b| Observation {
            buckets: b,
            ops_per_sec: simulate(&truth, &sc.workload(&h, b), 0.0, len).ops_per_sec,
            noise: DEFAULT_NOISE,
        };
        let mut template = truth.clone();
        template.outside_ns = 1.0;
        template.handoff_local_ns = 1.0;
        template.handoff_remote_ns = 2.0;
        let fit = calibrate(&template, &sc, &h, 0.0, &[obs(0), obs(2)], len).unwrap();
        let p = &fit.profile;
        assert!((p.outside_ns / 350.0 - 1.0).abs() < 0.02, "{fit:?}");
        assert!((p.handoff_local_ns / 250.0 - 1.0).abs() < 0.05, "{fit:?}");
        assert!(fit.outside.determined && fit.handoff.determined, "{fit:?}");
        assert!(p.hash_ns.is_empty());
        // Four rows, least squares: the same truth, a small residual.
        let four = calibrate(
            &template,
            &sc,
            &h,
            0.0,
            &[obs(0), obs(2), obs(8), obs(64)],
            len,
        )
        .unwrap();
        assert!(
            (four.profile.handoff_local_ns / 250.0 - 1.0).abs() < 0.05,
            "{four:?}"
        );
        assert!(four.rms_residual < 0.01, "{four:?}");
        let same = calibrate(&template, &sc, &h, 0.0, &[obs(4), obs(4)], len);
        assert!(same.is_err());
        // Two uncontended rows (global hash, 4096 slots) cannot tell the hand-off: it is
        // kept from the template, not fitted out of noise.
        let flat = calibrate(&template, &sc, &h, 0.0, &[obs(0), obs(4096)], len).unwrap();
        assert!(!flat.handoff.determined, "{flat:?}");
        assert_eq!(flat.profile.handoff_local_ns, template.handoff_local_ns);
        assert!(
            (flat.profile.outside_ns / 350.0 - 1.0).abs() < 0.03,
            "{flat:?}"
        );
    }
}

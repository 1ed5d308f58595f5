//! Hash flooding: an attacker parks waiters in a victim's buckets; how much slower do the
//! victim's futex operations get? Measured with real threads on the model table
//! ([`crate::table`]).
//!
//! Why it hurts (kernel/futex/waitwake.c `futex_wake()`, v6.16+): a wake on a bucket with
//! waiters takes the bucket lock and walks the whole chain (`plist_for_each_entry_safe`),
//! comparing every entry's key with its own; an attacker's waiters queued there lengthen that
//! walk for every victim wake, and a bucket that is never empty defeats the lockless empty
//! check (`futex_hb_waiters_pending()`) the victim's wakes otherwise take. This is the
//! "different applications may share a hash bucket" concern of the private-hash series and
//! the hash-flooding argument behind the kernel's use of SipHash for other tables (2016).
//!
//! Two processes share one model: the victim (`mm` [`FloodConfig::victim_mm`]) and the
//! attacker. In the `global` design both hash into one global table (kernels before 6.16,
//! single-threaded processes, or `PR_FUTEX_HASH_SET_SLOTS 0`); in the `private` design each
//! has its own private table ([`Process`], as every multi-threaded process on 6.16+), with
//! the global table behind them.
//!
//! Placements (how the attacker chooses its futex addresses):
//! - [`Placement::Computed`]: with its model of the hash (for keyed hashers, the key it
//!   guesses) and both `mm` values *assumed known*, it computes addresses of its own that
//!   land in the victim's buckets. Needs the victim's `mm`, which the collision leak does
//!   not give (it leaks the attacker's own).
//! - [`Placement::Discovered`]: it probes its own addresses while the victim waits and keeps
//!   those whose bucket is occupied — the timing channel of [`super::channel`] aimed at the
//!   victim's waiter. Needs no `mm` and no key, only a shared table; the probes it costs are
//!   counted. Modelled with the table's true routing as the channel's (noise-free) answer.
//! - [`Placement::Blind`]: consecutive addresses, no knowledge: waiters spread evenly.
//! - [`Placement::Control`]: as many waiters, at addresses whose buckets (by the table's
//!   true routing) are none of the victim's: everything an attack does except sharing a
//!   bucket (the parked threads, their real futexes, the scheduler).
//!
//! Judging a row against the control ([`run_set`], [`verdict`]): every repetition runs the
//! victim alone, with the control's waiters parked, and with each placement's waiters
//! parked, back to back, so that the machine's drift hits them alike. A placement's effect
//! is the mean over the repetitions of `ln(control rate / attacked rate)` (the victim's
//! rate with keys that share no bucket against keys placed by the attacker); the null
//! spread is the sample standard deviation over the repetitions of `ln(alone rate /
//! control rate)`, the run-to-run variation between two runs that share no bucket (at
//! least [`MIN_NULL_SD`]). A row is separable when its effect exceeds [`SEPARATION_SD`]
//! null standard deviations (the `attack channel` rule, [`super::channel`]); otherwise no
//! slowdown is claimed for it. One repetition has no spread: never separable.
//!
//! Victim workloads ([`VictimWorkload`]): `pingpong`, two threads handing a turn back and
//! forth with wait/wake on two futex words (every wake finds its waiter behind the
//! attacker's); `wake`, two threads calling wake on words nobody waits on (the lockless
//! fast path, which a flooded bucket loses).

use crate::hashers::KeyHasher;
use crate::key::FutexKey;
use crate::table::{
    Aligned, Geometry, GlobalTable, Process, Reduce, SlotPolicy, TableError, WaitError, WaitOutcome,
};
use hdrhistogram::Histogram;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::oracle::AttackTable;

/// The victim's two futex words.
pub const VICTIM_WORDS: [u64; 2] = [0x55d0_1234_5000, 0x55d0_1234_5100];
/// The attacker's futex words: `ATTACKER_BASE + 4 i`.
pub const ATTACKER_BASE: u64 = 0x7f3a_5c00_0000;
/// One victim operation in this many is timed (the clock read costs about as much as a
/// fast-path wake).
pub const SAMPLE_EVERY: u64 = 16;

/// How the attacker chooses its addresses (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Computed with the attacker's hash model and both `mm` values assumed known.
    Computed,
    /// Found by probing against the victim's parked waiters (no `mm`, no key needed).
    Discovered,
    /// Consecutive addresses, no knowledge.
    Blind,
    /// Addresses that share no bucket with the victim's words (the control).
    Control,
}

impl Placement {
    /// `computed`, `discovered` or `blind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::Computed => "computed",
            Placement::Discovered => "discovered",
            Placement::Blind => "blind",
            Placement::Control => "control",
        }
    }
    /// Parses the name.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "computed" => Some(Placement::Computed),
            "discovered" => Some(Placement::Discovered),
            "blind" => Some(Placement::Blind),
            "control" => Some(Placement::Control),
            _ => None,
        }
    }
}

/// What the victim does (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VictimWorkload {
    /// Two threads hand a turn back and forth with wait/wake.
    PingPong,
    /// Two threads wake words nobody waits on.
    Wake,
}

impl VictimWorkload {
    /// `pingpong` or `wake`.
    pub fn as_str(self) -> &'static str {
        match self {
            VictimWorkload::PingPong => "pingpong",
            VictimWorkload::Wake => "wake",
        }
    }
    /// Parses the name.
    pub fn by_name(s: &str) -> Option<Self> {
        match s {
            "pingpong" => Some(VictimWorkload::PingPong),
            "wake" => Some(VictimWorkload::Wake),
            _ => None,
        }
    }
}

/// One flood experiment.
#[derive(Clone, Copy, Debug)]
pub struct FloodConfig {
    /// Which design.
    pub table: AttackTable,
    /// Global table buckets (power of two).
    pub buckets: usize,
    /// Private table slots (power of two ≥ 2; `private` design).
    pub slots: usize,
    /// Waiters the attacker parks (one thread each).
    pub attacker_keys: usize,
    /// How it picks their addresses.
    pub placement: Placement,
    /// What the victim does.
    pub workload: VictimWorkload,
    /// Length of one measured run.
    pub duration: Duration,
    /// Alone/attacked run pairs (the median of each is reported).
    pub reps: usize,
    /// The victim's `mm`.
    pub victim_mm: u64,
    /// The attacker's `mm`.
    pub attacker_mm: u64,
}

/// The measured result.
#[derive(Clone, Debug)]
pub struct FloodResult {
    /// Victim operations per second while the attacker's waiters are parked (median run).
    pub victim_ops_per_sec: f64,
    /// The same without the attacker.
    pub victim_ops_per_sec_alone: f64,
    /// `alone / attacked` throughput, the median over the run pairs (1.0 = no effect, 2.0 =
    /// half the throughput).
    pub victim_slowdown: f64,
    /// The same per CPU second of the victim threads: what the operations themselves cost,
    /// without the share of the CPUs other load on the machine took.
    pub victim_slowdown_cpu: f64,
    /// 99th percentile of the victim's wake latency, attacked, ns (median run).
    pub victim_wake_ns_p99: f64,
    /// The same, alone.
    pub victim_wake_ns_p99_alone: f64,
    /// Attacker waiters that really sit in a bucket of the victim (by the table's routing).
    pub keys_in_victim_buckets: usize,
    /// Probes spent on [`Placement::Discovered`] (0 otherwise).
    pub placement_probes: u64,
    /// Threads running during a victim run (the victim's; the attacker's are parked).
    pub running_threads: usize,
}

/// One process's view of the table: the global table itself, or its [`Process`].
pub(super) enum Side<'a, H: KeyHasher> {
    Global(&'a GlobalTable<H, Aligned>),
    Process(&'a Process<H, Aligned>),
}

impl<H: KeyHasher> Side<'_, H> {
    pub(super) fn wait(
        &self,
        key: &FutexKey,
        word: &AtomicU32,
        expected: u32,
        timeout: Duration,
    ) -> Result<WaitOutcome, WaitError> {
        match self {
            Side::Global(t) => t.wait(key, word, expected, Some(timeout)),
            Side::Process(p) => p.wait(key, word, expected, Some(timeout)),
        }
    }

    #[inline]
    pub(super) fn wake(&self, key: &FutexKey) -> usize {
        match self {
            Side::Global(t) => t.wake(key, 1),
            Side::Process(p) => p.wake(key, 1),
        }
    }

    /// The identity of `key`'s bucket: (table, index); the global table is table 0, a
    /// process's private table is named by the process's address.
    pub(super) fn bucket_id(&self, key: &FutexKey) -> (usize, usize) {
        match self {
            Side::Global(t) => (0, t.index_of(key)),
            Side::Process(p) => match p.route(key) {
                crate::table::BucketId::Private(i) => {
                    (*p as *const Process<H, Aligned> as usize, i)
                }
                crate::table::BucketId::Global(i) => (0, i),
            },
        }
    }

    /// Waiters queued on every chain this side reaches.
    pub(super) fn queued(&self) -> usize {
        let global = |t: &GlobalTable<H, Aligned>| t.buckets().iter().map(|b| b.queued()).sum();
        match self {
            Side::Global(t) => global(t),
            Side::Process(p) => p.private_queued() + global(p.global()),
        }
    }
}

/// The two designs with their victim and attacker processes.
pub(super) struct World<H: KeyHasher> {
    global: Arc<GlobalTable<H, Aligned>>,
    procs: Option<(Process<H, Aligned>, Process<H, Aligned>)>,
}

impl<H: KeyHasher + Clone> World<H> {
    /// `global`: one global table of `buckets`; `private`: the same plus a private table of
    /// `slots` for each of the two processes (`victim_mm`, `attacker_mm`).
    pub(super) fn new(
        kernel: &H,
        table: AttackTable,
        buckets: usize,
        slots: usize,
        victim_mm: u64,
        attacker_mm: u64,
    ) -> Result<Self, TableError> {
        let g = Geometry {
            nodes: 1,
            per_node: buckets,
            reduce: Reduce::Mask,
            squash: false,
        };
        let global = Arc::new(GlobalTable::<H, Aligned>::new(kernel.clone(), g)?);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let procs = match table {
            AttackTable::Global => None,
            AttackTable::Private => {
                let mk = |mm| -> Result<Process<H, Aligned>, TableError> {
                    let p = Process::new(
                        mm,
                        global.clone(),
                        kernel.clone(),
                        SlotPolicy::Manual,
                        Reduce::Mask,
                        cpus,
                    );
                    p.set_slots(slots as u64)?;
                    Ok(p)
                };
                Some((mk(victim_mm)?, mk(attacker_mm)?))
            }
        };
        Ok(World { global, procs })
    }

    /// (victim, attacker).
    pub(super) fn sides(&self) -> (Side<'_, H>, Side<'_, H>) {
        match &self.procs {
            None => (Side::Global(&self.global), Side::Global(&self.global)),
            Some((v, a)) => (Side::Process(v), Side::Process(a)),
        }
    }
}

pub(super) fn key(mm: u64, uaddr: u64) -> FutexKey {
    FutexKey::private(mm, uaddr & !3).expect("4-byte aligned address")
}

/// The attacker's addresses for `placement`, and the probes discovery spent.
fn place<H: KeyHasher, M: KeyHasher + ?Sized>(
    cfg: &FloodConfig,
    model: &M,
    victim: &Side<'_, H>,
    attacker: &Side<'_, H>,
) -> (Vec<u64>, u64) {
    let n = cfg.attacker_keys;
    let vkeys: Vec<FutexKey> = VICTIM_WORDS
        .iter()
        .map(|&a| key(cfg.victim_mm, a))
        .collect();
    let budget = (n as u64 * cfg.buckets.max(cfg.slots) as u64 * 4).max(1 << 16);
    let attacker_bucket = |a: u64| attacker.bucket_id(&key(cfg.attacker_mm, a));
    // The victim's buckets by the table's true routing.
    let victim_buckets: Vec<(usize, usize)> = vkeys.iter().map(|k| victim.bucket_id(k)).collect();
    let (mut out, probes) = match cfg.placement {
        Placement::Blind => ((0..n as u64).map(|i| ATTACKER_BASE + 4 * i).collect(), 0),
        Placement::Control => {
            // Consecutive addresses, skipping any whose bucket (the table's true routing)
            // is one of the victim's.
            let (out, _) = first_matching(n, budget, |a, _| {
                !victim_buckets.contains(&attacker_bucket(a))
            });
            (out, 0)
        }
        Placement::Computed => {
            // The attacker's prediction: the global-table bucket under its model. Targets
            // alternate between the victim's two words.
            let mask = cfg.buckets as u32 - 1;
            let b = |mm: u64, a: u64| model.hash(&key(mm, a)) & mask;
            let targets: Vec<u32> = VICTIM_WORDS.iter().map(|&a| b(cfg.victim_mm, a)).collect();
            let (out, _) = first_matching(n, budget, |a, placed| {
                b(cfg.attacker_mm, a) == targets[placed % targets.len()]
            });
            (out, 0)
        }
        Placement::Discovered => {
            // The channel's answer, one decision per probe: does this address's bucket hold
            // the victim's waiter (on either word)?
            first_matching(n, budget, |a, _| {
                victim_buckets.contains(&attacker_bucket(a))
            })
        }
    };
    // Whatever could not be placed is parked at the next consecutive addresses.
    let mut j = 1u64 << 30;
    while out.len() < n {
        out.push(ATTACKER_BASE + 4 * j);
        j += 1;
    }
    (out, probes)
}

/// The first `n` of the consecutive attacker addresses `ATTACKER_BASE + 4 i` that `keep`
/// accepts (given the address and how many are kept so far), trying at most `budget`; and
/// how many were tried.
fn first_matching(
    n: usize,
    budget: u64,
    mut keep: impl FnMut(u64, usize) -> bool,
) -> (Vec<u64>, u64) {
    let mut out = Vec::with_capacity(n);
    let mut i = 0u64;
    while out.len() < n && i < budget {
        let a = ATTACKER_BASE + 4 * i;
        i += 1;
        if keep(a, out.len()) {
            out.push(a);
        }
    }
    (out, i)
}

/// CPU time of the calling thread, seconds.
fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call; the clock id
    // is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// One victim run.
struct Run {
    /// Victim operations per wall-clock second.
    ops_per_sec: f64,
    /// Victim operations per second of the victim threads' CPU time (insensitive to the
    /// threads being descheduled by other load on the machine).
    ops_per_cpu_sec: f64,
    wake_ns: Histogram<u64>,
}

/// One victim run.
fn victim_run<H: KeyHasher>(side: &Side<'_, H>, cfg: &FloodConfig) -> Run {
    let keys: Vec<FutexKey> = VICTIM_WORDS
        .iter()
        .map(|&a| key(cfg.victim_mm, a))
        .collect();
    let words = [AtomicU32::new(1), AtomicU32::new(0)];
    // Set once by the main thread after the run time; the workers poll it. Relaxed: it
    // publishes no data, and each worker's results reach the main thread through `join`.
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let results: Vec<(u64, f64, Histogram<u64>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|me| {
                let (keys, words, stop) = (&keys, &words, &stop);
                s.spawn(move || {
                    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 2)
                        .expect("valid bounds");
                    let mut ops = 0u64;
                    let cpu0 = thread_cpu_secs();
                    match cfg.workload {
                        VictimWorkload::Wake => {
                            while !stop.load(Ordering::Relaxed) {
                                if ops % SAMPLE_EVERY == 0 {
                                    let t = Instant::now();
                                    side.wake(&keys[me]);
                                    h.saturating_record(t.elapsed().as_nanos() as u64);
                                } else {
                                    side.wake(&keys[me]);
                                }
                                ops += 1;
                            }
                        }
                        VictimWorkload::PingPong => {
                            let other = 1 - me;
                            'run: loop {
                                // Wait for our turn: word == 1. Acquire pairs with the
                                // other thread's Release store of the turn.
                                while words[me].load(Ordering::Acquire) == 0 {
                                    if stop.load(Ordering::Relaxed) {
                                        break 'run;
                                    }
                                    let _ = side.wait(
                                        &keys[me],
                                        &words[me],
                                        0,
                                        Duration::from_millis(20),
                                    );
                                }
                                words[me].store(0, Ordering::Relaxed);
                                ops += 1;
                                // Hand the turn over; the table's wake/wait protocol (a
                                // SeqCst fence on each side) makes sure the other thread
                                // either sees the store or is woken.
                                words[other].store(1, Ordering::Release);
                                let t = Instant::now();
                                side.wake(&keys[other]);
                                h.saturating_record(t.elapsed().as_nanos() as u64);
                                if stop.load(Ordering::Relaxed) {
                                    break;
                                }
                            }
                            // Leave the other thread runnable so that it sees `stop`.
                            words[other].store(1, Ordering::Release);
                            side.wake(&keys[other]);
                        }
                    }
                    (ops, thread_cpu_secs() - cpu0, h)
                })
            })
            .collect();
        std::thread::sleep(cfg.duration);
        stop.store(true, Ordering::Relaxed);
        workers
            .into_iter()
            .map(|w| w.join().expect("victim thread"))
            .collect()
    });
    let secs = t0.elapsed().as_secs_f64();
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 2).expect("valid bounds");
    let (mut ops, mut cpu) = (0, 0.0);
    for (o, c, h) in results {
        ops += o;
        cpu += c;
        hist.add(h).expect("same bounds");
    }
    Run {
        ops_per_sec: ops as f64 / secs,
        // Two threads: CPU seconds summed over both, so divide by the mean per thread.
        ops_per_cpu_sec: ops as f64 / (cpu / 2.0),
        wake_ns: hist,
    }
}

/// Parks one real thread per address of `addrs` (keys of `mm`) on `side`, runs `f` once
/// they are all queued, then releases them.
pub(super) fn with_parked<H: KeyHasher, R>(
    side: &Side<'_, H>,
    mm: u64,
    addrs: &[u64],
    f: impl FnOnce() -> R,
) -> R {
    let keys: Vec<FutexKey> = addrs.iter().map(|&a| key(mm, a)).collect();
    let words: Vec<AtomicU32> = addrs.iter().map(|_| AtomicU32::new(0)).collect();
    let base = side.queued();
    std::thread::scope(|s| {
        for (k, w) in keys.iter().zip(&words) {
            std::thread::Builder::new()
                .stack_size(64 << 10)
                .spawn_scoped(s, move || {
                    // Park until released (word != 0). Acquire pairs with the release
                    // store below; the timeout only bounds a run that goes wrong.
                    while w.load(Ordering::Acquire) == 0 {
                        let _ = side.wait(k, w, 0, Duration::from_secs(60));
                    }
                })
                .expect("spawn a parked thread");
        }
        // Wait until every waiter is queued.
        let t = Instant::now();
        while side.queued() < base + keys.len() && t.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let r = f();
        for (k, w) in keys.iter().zip(&words) {
            w.store(1, Ordering::Release);
            side.wake(k);
        }
        r
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// How many null standard deviations a placement's effect must exceed (module docs; the
/// same 4 as `attack channel`).
pub const SEPARATION_SD: f64 = 4.0;
/// The smallest null spread used (natural log of the rate ratio, i.e. about 1 %): a few
/// repetitions can agree by chance more closely than the machine's real variation.
pub const MIN_NULL_SD: f64 = 0.01;

/// A placement's rows judged against the control (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    /// `exp(mean ln(control rate / attacked rate))`: the slowdown beyond the control's.
    pub slowdown_vs_control: f64,
    /// The sample standard deviation of `ln(alone / control)` over the repetitions (at
    /// least [`MIN_NULL_SD`]; NaN with fewer than two repetitions).
    pub null_sd: f64,
    /// `ln(slowdown_vs_control) > SEPARATION_SD * null_sd`.
    pub separable: bool,
}

/// Judges one placement from the victim's rates of each repetition: `alone`, with the
/// control's waiters parked (`control`), with the placement's (`attacked`), paired by index.
pub fn verdict(alone: &[f64], control: &[f64], attacked: &[f64]) -> Verdict {
    let n = alone.len().min(control.len()).min(attacked.len());
    let effect = (0..n).map(|i| (control[i] / attacked[i]).ln()).sum::<f64>() / n as f64;
    let null: Vec<f64> = (0..n).map(|i| (alone[i] / control[i]).ln()).collect();
    let null_sd = if n < 2 {
        f64::NAN
    } else {
        let m = null.iter().sum::<f64>() / n as f64;
        let var = null.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
        var.sqrt().max(MIN_NULL_SD)
    };
    Verdict {
        slowdown_vs_control: effect.exp(),
        null_sd,
        separable: n >= 2 && effect > SEPARATION_SD * null_sd,
    }
}

/// One placement's result in a [`run_set`], with its verdict against the control.
#[derive(Clone, Debug)]
pub struct JudgedResult {
    /// Which placement.
    pub placement: Placement,
    /// What was measured (`victim_slowdown` is alone / attacked).
    pub result: FloodResult,
    /// The control's `alone / control` slowdown, the median over the repetitions.
    pub control_slowdown: f64,
    /// The verdict against the control (for the control itself: not separable).
    pub verdict: Verdict,
}

/// Runs the experiment for the control and each of `placements` (the control first, then
/// the placements in order; `cfg.placement` is ignored): each repetition runs the victim
/// alone, then with each set of waiters parked. The table hashes with `kernel`; the
/// attacker computes placements with `model` (its belief about the hash).
pub fn run_set<H: KeyHasher + Clone, M: KeyHasher + ?Sized>(
    kernel: &H,
    model: &M,
    cfg: &FloodConfig,
    placements: &[Placement],
) -> Result<Vec<JudgedResult>, TableError> {
    let world = World::new(
        kernel,
        cfg.table,
        cfg.buckets,
        cfg.slots,
        cfg.victim_mm,
        cfg.attacker_mm,
    )?;
    let (victim, attacker) = world.sides();
    let vbuckets: Vec<(usize, usize)> = VICTIM_WORDS
        .iter()
        .map(|&a| victim.bucket_id(&key(cfg.victim_mm, a)))
        .collect();
    let mut all = vec![Placement::Control];
    all.extend(placements.iter().filter(|&&p| p != Placement::Control));
    let placed: Vec<(Vec<u64>, u64)> = all
        .iter()
        .map(|&p| {
            let c = FloodConfig {
                placement: p,
                ..*cfg
            };
            place(&c, model, &victim, &attacker)
        })
        .collect();
    let reps = cfg.reps.max(1);
    let mut alone: Vec<Run> = Vec::with_capacity(reps);
    let mut parked: Vec<Vec<Run>> = all.iter().map(|_| Vec::with_capacity(reps)).collect();
    for _ in 0..reps {
        // Back to back, so slow drift of the machine's load hits every set alike.
        alone.push(victim_run(&victim, cfg));
        for (runs, (addrs, _)) in parked.iter_mut().zip(&placed) {
            runs.push(with_parked(&attacker, cfg.attacker_mm, addrs, || {
                victim_run(&victim, cfg)
            }));
        }
    }
    let rate = |rs: &[Run]| rs.iter().map(|r| r.ops_per_sec).collect::<Vec<f64>>();
    let alone_rate = rate(&alone);
    let control_rate = rate(&parked[0]);
    let control_slowdown = median(
        alone_rate
            .iter()
            .zip(&control_rate)
            .map(|(a, c)| a / c)
            .collect(),
    );
    let mut out = Vec::with_capacity(all.len());
    for ((&p, (addrs, placement_probes)), runs) in all.iter().zip(&placed).zip(&parked) {
        let keys_in_victim_buckets = addrs
            .iter()
            .filter(|&&a| vbuckets.contains(&attacker.bucket_id(&key(cfg.attacker_mm, a))))
            .count();
        let p99 = |rs: &[Run]| {
            median(
                rs.iter()
                    .map(|r| r.wake_ns.value_at_quantile(0.99) as f64)
                    .collect(),
            )
        };
        let ratio =
            |f: fn(&Run) -> f64| median(alone.iter().zip(runs).map(|(a, b)| f(a) / f(b)).collect());
        let attacked_rate = rate(runs);
        let mut v = verdict(&alone_rate, &control_rate, &attacked_rate);
        if p == Placement::Control {
            v.separable = false;
        }
        out.push(JudgedResult {
            placement: p,
            result: FloodResult {
                victim_ops_per_sec: median(attacked_rate),
                victim_ops_per_sec_alone: median(alone_rate.clone()),
                victim_slowdown: ratio(|r| r.ops_per_sec),
                victim_slowdown_cpu: ratio(|r| r.ops_per_cpu_sec),
                victim_wake_ns_p99: p99(runs),
                victim_wake_ns_p99_alone: p99(&alone),
                keys_in_victim_buckets,
                placement_probes: *placement_probes,
                running_threads: 2,
            },
            control_slowdown,
            verdict: v,
        });
    }
    Ok(out)
}

/// Runs the experiment for `cfg.placement` alone (its control is run too, and dropped):
/// see [`run_set`].
pub fn run<H: KeyHasher + Clone, M: KeyHasher + ?Sized>(
    kernel: &H,
    model: &M,
    cfg: &FloodConfig,
) -> Result<FloodResult, TableError> {
    let mut set = run_set(kernel, model, cfg, &[cfg.placement])?;
    Ok(set.pop().expect("the placement's result").result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{HashKey, Jhash2, Scope, SipHash24, jhash2};

    fn cfg(table: AttackTable, placement: Placement) -> FloodConfig {
        FloodConfig {
            table,
            buckets: 64,
            slots: 16,
            attacker_keys: 32,
            placement,
            workload: VictimWorkload::Wake,
            duration: Duration::from_millis(30),
            reps: 1,
            victim_mm: 0xffff_8881_0000_0000,
            attacker_mm: 0xffff_8882_0000_0040,
        }
    }

    /// The global table of [`cfg`]: 64 buckets on one node.
    fn global_64(h: Jhash2) -> GlobalTable<Jhash2, Aligned> {
        GlobalTable::new(
            h,
            Geometry {
                nodes: 1,
                per_node: 64,
                reduce: Reduce::Mask,
                squash: false,
            },
        )
        .unwrap()
    }

    fn spec_bucket(mm: u64, a: u64, buckets: u32) -> u32 {
        let page = a & !0xfff;
        jhash2(
            &[
                mm as u32,
                (mm >> 32) as u32,
                page as u32,
                (page >> 32) as u32,
            ],
            (a & 0xfff) as u32,
        ) & (buckets - 1)
    }

    #[test]
    fn computed_placement_lands_in_the_victim_buckets_of_the_global_table_only() {
        let h = Jhash2 { scope: Scope::Full };
        let c = cfg(AttackTable::Global, Placement::Computed);
        let r = run(&h, &h, &c).unwrap();
        assert_eq!(r.keys_in_victim_buckets, 32);
        // The private design: the same attacker reaches none of the victim's buckets.
        let r = run(&h, &h, &cfg(AttackTable::Private, Placement::Computed)).unwrap();
        assert_eq!(r.keys_in_victim_buckets, 0);
        let r = run(&h, &h, &cfg(AttackTable::Private, Placement::Discovered)).unwrap();
        assert_eq!(r.keys_in_victim_buckets, 0);
    }

    #[test]
    fn placements_checked_against_the_spec_hash() {
        let h = Jhash2 { scope: Scope::Full };
        let c = cfg(AttackTable::Global, Placement::Computed);
        let g = global_64(h);
        let side = Side::Global(&g);
        let (addrs, probes) = place(&c, &h, &side, &side);
        assert_eq!(probes, 0);
        let targets: Vec<u32> = VICTIM_WORDS
            .iter()
            .map(|&a| spec_bucket(c.victim_mm, a, 64))
            .collect();
        for (i, &a) in addrs.iter().enumerate() {
            assert_eq!(spec_bucket(c.attacker_mm, a, 64), targets[i % 2]);
        }
        // Discovery finds addresses in either victim bucket, about 64/2 probes each.
        let c = cfg(AttackTable::Global, Placement::Discovered);
        let (addrs, probes) = place(&c, &h, &side, &side);
        assert!(
            addrs
                .iter()
                .all(|&a| targets.contains(&spec_bucket(c.attacker_mm, a, 64)))
        );
        assert!((32 * 8..32 * 128).contains(&probes), "{probes} probes");
    }

    #[test]
    fn a_wrong_key_computes_useless_placements_discovery_does_not_care() {
        let kernel = SipHash24 {
            scope: Scope::Full,
            key: HashKey { k0: 1, k1: 2 },
        };
        let guess = SipHash24 {
            scope: Scope::Full,
            key: HashKey::DEFAULT,
        };
        let mut c = cfg(AttackTable::Global, Placement::Computed);
        c.attacker_keys = 64;
        let r = run(&kernel, &guess, &c).unwrap();
        // Random landing: expected 64 x 2/64 = 2 of 64.
        assert!(
            r.keys_in_victim_buckets <= 12,
            "{}",
            r.keys_in_victim_buckets
        );
        c.placement = Placement::Discovered;
        let r = run(&kernel, &guess, &c).unwrap();
        assert_eq!(r.keys_in_victim_buckets, 64);
    }

    #[test]
    fn the_verdict_is_the_effect_against_the_null_spread() {
        // Hand-computed: ln(alone/control) = 0, ln(100/110) = -0.095310, ln(100/90) =
        // 0.105361; mean 0.003350, sample sd sqrt(0.020151 / 2) = 0.100376.
        let alone = [100.0, 100.0, 100.0];
        let control = [100.0, 110.0, 90.0];
        let v = verdict(&alone, &control, &[50.0, 55.0, 45.0]);
        assert!((v.null_sd - 0.100376).abs() < 1e-5, "{v:?}");
        // ln 2 = 0.6931 > 4 x 0.1004 = 0.4015.
        assert!(
            (v.slowdown_vs_control - 2.0).abs() < 1e-12 && v.separable,
            "{v:?}"
        );
        // ln 1.25 = 0.2231 < 0.4015: a 25 % slowdown this noise explains.
        let v = verdict(&alone, &control, &[80.0, 88.0, 72.0]);
        assert!(
            (v.slowdown_vs_control - 1.25).abs() < 1e-12 && !v.separable,
            "{v:?}"
        );
        // A slowdown that the control shows as well is no finding: alone 3x faster than
        // both (the pingpong rows of the issue), attacked = control.
        let v = verdict(
            &[300.0, 310.0, 290.0],
            &[100.0, 100.0, 100.0],
            &[100.0, 100.0, 100.0],
        );
        assert!(
            !v.separable && (v.slowdown_vs_control - 1.0).abs() < 1e-12,
            "{v:?}"
        );
        // No spread at all: the floor of 1 % applies: ln 1.05 = 0.0488 > 0.04, ln 1.03 =
        // 0.0296 < 0.04.
        let same = [100.0, 100.0];
        assert_eq!(
            verdict(&same, &same, &[100.0 / 1.05; 2]).null_sd,
            MIN_NULL_SD
        );
        assert!(verdict(&same, &same, &[100.0 / 1.05; 2]).separable);
        assert!(!verdict(&same, &same, &[100.0 / 1.03; 2]).separable);
        // One repetition: no spread, never separable, however large the effect.
        let v = verdict(&[100.0], &[100.0], &[1.0]);
        assert!(v.null_sd.is_nan() && !v.separable && (v.slowdown_vs_control - 100.0).abs() < 1e-9);
    }

    #[test]
    fn the_control_shares_no_bucket_with_the_victim() {
        let h = Jhash2 { scope: Scope::Full };
        let c = cfg(AttackTable::Global, Placement::Control);
        let g = global_64(h);
        let side = Side::Global(&g);
        let (addrs, _) = place(&c, &h, &side, &side);
        assert_eq!(addrs.len(), 32);
        let targets: Vec<u32> = VICTIM_WORDS
            .iter()
            .map(|&a| spec_bucket(c.victim_mm, a, 64))
            .collect();
        assert!(
            addrs
                .iter()
                .all(|&a| !targets.contains(&spec_bucket(c.attacker_mm, a, 64)))
        );
        let set = run_set(&h, &h, &c, &[Placement::Computed]).unwrap();
        assert_eq!(set.len(), 2);
        assert_eq!(set[0].placement, Placement::Control);
        assert_eq!(set[0].result.keys_in_victim_buckets, 0);
        assert!(!set[0].verdict.separable);
        assert_eq!(set[1].placement, Placement::Computed);
        assert_eq!(set[1].result.keys_in_victim_buckets, 32);
    }

    #[test]
    fn pingpong_runs_and_stops() {
        let h = Jhash2 { scope: Scope::Full };
        let mut c = cfg(AttackTable::Global, Placement::Computed);
        c.workload = VictimWorkload::PingPong;
        let r = run(&h, &h, &c).unwrap();
        assert!(r.victim_ops_per_sec > 0.0 && r.victim_ops_per_sec_alone > 0.0);
    }
}

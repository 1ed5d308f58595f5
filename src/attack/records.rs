//! The three attack experiments run over every configuration asked for — each hasher, table
//! design and victim, scenario or waiter count — one serialisable record per run, as
//! `futexhash attack leak|flood|channel` prints them: [`leak_records`], [`flood_records`],
//! [`channel_records`]. The experiments themselves are [`super::leak`], [`super::flood`]
//! and [`super::channel`]; this module draws the secrets from the seed, loops, and rounds
//! the figures for the records.
//!
//! `flood` runs real threads whose parked waiters also sit in this process's real futex
//! hash; [`switch_this_process_to_private_futex_hash`] is the (explicit, process-wide) step
//! that keeps them out of the victim's real chains.

use super::channel::{self, ChannelConfig, Scenario};
use super::flood::{self, FloodConfig, Placement, VictimWorkload};
use super::leak::{self, LeakConfig, Stop};
use super::oracle::{AttackTable, BucketMap, CandidateSpace, DEFAULT_SPACE_BITS};
use crate::hashers::{Builtin, HashKey, KeyHasher, Scope, SharedHasher};
use crate::rng::SplitMix64;
use crate::table::TableError;
use serde::Serialize;
use std::time::Duration;

/// The table designs attacked and their sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSizes {
    /// Which designs, in order.
    pub kinds: Vec<AttackTable>,
    /// Buckets of the global table.
    pub buckets: usize,
    /// Slots of the private table.
    pub slots: usize,
    /// The CPU count the default sizes are the kernel's for.
    pub cpus: usize,
}

impl TableSizes {
    /// Buckets of the table `t` hashes into.
    pub fn size(&self, t: AttackTable) -> usize {
        match t {
            AttackTable::Global => self.buckets,
            AttackTable::Private => self.slots,
        }
    }
}

/// The kernel's secret key drawn from the seed (a different stream from the `mm` draws).
pub fn drawn_key(seed: u64) -> HashKey {
    let mut r = SplitMix64::new(seed ^ 0x6b65_795f_6b65_795f);
    HashKey {
        k0: r.next_u64(),
        k1: r.next_u64(),
    }
}

/// CPUs this process may run on (1 if unknown).
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Private futex hash slots `flood` asks the running kernel for.
pub const REAL_SLOTS: u64 = 8192;

/// Switches this whole process's *real* futex hash (the running kernel's, not the model's)
/// to a private table of `slots` buckets with `prctl(PR_FUTEX_HASH_SET_SLOTS)` (Linux
/// 6.16+), so that real threads parked by [`flood_records`] (std's park is a `futex(2)`
/// wait) keep short real chains away from the victim's real park/unpark. Best effort: the
/// slots the kernel then reports, or `None` if it refused or has no private hash.
pub fn switch_this_process_to_private_futex_hash(slots: u64) -> Option<u64> {
    match crate::bench::kernel::set_slots(slots) {
        Ok(()) => crate::bench::kernel::get_slots().ok(),
        Err(_) => None,
    }
}

fn round(x: f64, d: f64) -> f64 {
    (x * d).round() / d
}

/// `attack leak`: the secret `mm` and the key state are drawn and scored per run.
#[derive(Debug)]
pub struct LeakRequest<'a> {
    /// The kernel's hashers (keyed ones with `kernel_key`).
    pub kernel: &'a [SharedHasher],
    /// The same hashers as the attacker models them (keyed ones with its key, or the
    /// default key when it has none).
    pub attacker: &'a [SharedHasher],
    /// The kernel's key.
    pub kernel_key: HashKey,
    /// The key the attacker assumes, if it has one.
    pub attacker_key: Option<HashKey>,
    /// Tables and sizes.
    pub tables: &'a TableSizes,
    /// Candidates for `mm`.
    pub space: CandidateSpace,
    /// Draws the secret `mm`.
    pub seed: u64,
    /// Most probes per attack.
    pub max_probes: u64,
}

/// One leak run.
#[derive(Clone, Debug, Serialize)]
pub struct LeakRecord {
    /// The hasher asked for.
    pub algo: String,
    /// `global` or `private`.
    pub table: &'static str,
    /// The hasher the table used (the private table: the `-addr` form when there is one).
    pub table_hasher: String,
    /// Buckets of that table.
    pub buckets: usize,
    /// log2 of the candidates for `mm`.
    pub candidate_space_bits: u32,
    /// Timing decisions spent.
    pub probes: u64,
    /// Collisions the attacker saw.
    pub collisions_observed: usize,
    /// Candidates consistent with what it saw.
    pub candidates_left: u64,
    /// What it really learned about `mm`, bits (2 decimals).
    pub bits_leaked: f64,
    /// Its one remaining candidate is the secret.
    pub mm_recovered: bool,
    /// The hasher takes a key.
    pub keyed: bool,
    /// Keyed hashers: `none` (the attacker has no key and cannot test candidates), `other`
    /// (it tests with a wrong key), `same` (it has the kernel's key); unkeyed: `n/a`.
    pub attacker_key: &'static str,
    /// Why the attack stopped.
    pub stop: Stop,
    /// Full scans of the candidate space.
    pub scans: u32,
    /// The secret `mm`.
    pub mm: String,
    /// The attacker's candidate when it has one, else empty.
    pub mm_guess: String,
    /// Wall time of the attack (3 decimals).
    pub seconds: f64,
    /// The seed the secret was drawn with.
    pub seed: u64,
}

/// The kernel's private table hashes the address word only (`jhash2-addr`): the hasher's
/// `-addr` form of the registry for the kernel and for the attacker, when there is one;
/// otherwise the key is hashed with mm = 0 ([`BucketMap`]), which leaves mm out all the
/// same.
fn addr_forms(
    t: AttackTable,
    kh: &SharedHasher,
    kernel_key: HashKey,
    attacker_key: HashKey,
) -> Option<(SharedHasher, SharedHasher)> {
    if t != AttackTable::Private || kh.scope() != Scope::Full {
        return None;
    }
    let name = format!("{}-addr", kh.name());
    match (
        Builtin::by_name(&name, kernel_key),
        Builtin::by_name(&name, attacker_key),
    ) {
        (Ok(k), Ok(a)) => Some((k.shared(), a.shared())),
        _ => None,
    }
}

/// Every hasher × table of `req`, one leak each.
pub fn leak_records(req: &LeakRequest) -> Vec<LeakRecord> {
    let base_cfg = LeakConfig {
        max_probes: req.max_probes,
        ..Default::default()
    };
    let attacker_key = req.attacker_key.unwrap_or(HashKey::DEFAULT);
    let mut records = Vec::new();
    for (kh, ah) in req.kernel.iter().zip(req.attacker) {
        let cfg = LeakConfig {
            can_test: !kh.keyed() || req.attacker_key.is_some(),
            ..base_cfg
        };
        let key_state = match (kh.keyed(), req.attacker_key) {
            (false, _) => "n/a",
            (true, None) => "none",
            (true, Some(k)) if k == req.kernel_key => "same",
            (true, Some(_)) => "other",
        };
        for &t in &req.tables.kinds {
            let addr_pair = addr_forms(t, kh, req.kernel_key, attacker_key);
            let (tk, ta) = match &addr_pair {
                Some((k, a)) => (k, a),
                None => (kh, ah),
            };
            let size = req.tables.size(t);
            let table = BucketMap::new(tk, t, size).expect("checked size");
            let model = BucketMap::new(ta, t, size).expect("checked size");
            let r = leak::run(table, &model, &req.space, req.seed, &cfg);
            records.push(LeakRecord {
                algo: kh.name().to_string(),
                table: t.as_str(),
                table_hasher: tk.name().to_string(),
                buckets: size,
                candidate_space_bits: req.space.bits,
                probes: r.outcome.probes,
                collisions_observed: r.outcome.observations.collided.len(),
                candidates_left: r.outcome.candidates_left,
                bits_leaked: round(r.bits_leaked, 100.0),
                mm_recovered: r.mm_recovered,
                keyed: kh.keyed(),
                attacker_key: key_state,
                stop: r.outcome.stop,
                scans: r.outcome.scans,
                mm: format!("{:#x}", r.secret),
                mm_guess: r.outcome.guess.map_or(String::new(), |g| format!("{g:#x}")),
                seconds: round(r.seconds, 1000.0),
                seed: req.seed,
            });
        }
    }
    records
}

/// The victim's and the attacker's `mm` for `flood`, drawn from `seed`, never equal.
pub fn flood_mms(seed: u64) -> (u64, u64) {
    let space = CandidateSpace::direct_map(DEFAULT_SPACE_BITS).expect("the default space");
    let mut rng = SplitMix64::new(seed);
    let victim_mm = space.draw(&mut rng);
    let mut attacker_mm = space.draw(&mut rng);
    while attacker_mm == victim_mm {
        attacker_mm = space.draw(&mut rng);
    }
    (victim_mm, attacker_mm)
}

/// `attack flood`.
#[derive(Debug)]
pub struct FloodRequest<'a> {
    /// The kernel's hashers.
    pub kernel: &'a [SharedHasher],
    /// The same as the attacker computes placements with.
    pub attacker: &'a [SharedHasher],
    /// Whether the attacker's key is the kernel's (for the records).
    pub same_key: bool,
    /// Tables and sizes.
    pub tables: &'a TableSizes,
    /// Placements (the control is always run too, first).
    pub placements: &'a [Placement],
    /// Victim workloads.
    pub workloads: &'a [VictimWorkload],
    /// Waiters the attacker parks.
    pub attacker_keys: usize,
    /// One measured run.
    pub duration: Duration,
    /// Repetitions.
    pub reps: usize,
    /// From [`flood_mms`].
    pub victim_mm: u64,
    /// From [`flood_mms`].
    pub attacker_mm: u64,
}

/// One flood row: a placement (or the control) judged against the control.
#[derive(Clone, Debug, Serialize)]
pub struct FloodRecord {
    /// The kernel's hasher.
    pub algo: String,
    /// `global` or `private`.
    pub table: &'static str,
    /// Buckets of that table.
    pub buckets: usize,
    /// Waiters the attacker parks.
    pub attacker_keys: usize,
    /// How it placed them (or `control`).
    pub placement: &'static str,
    /// `wake` or `pingpong`.
    pub victim_workload: &'static str,
    /// Victim rate with the waiters parked (median run).
    pub victim_ops_per_sec: f64,
    /// Victim rate alone (median run).
    pub victim_ops_per_sec_alone: f64,
    /// `alone / attacked`, the median over the repetitions.
    pub victim_slowdown: f64,
    /// The control's `alone / control` slowdown (its waiters share no victim bucket).
    pub control_slowdown: f64,
    /// `exp(mean ln(control rate / attacked rate))`: the slowdown beyond the control's.
    pub slowdown_vs_control: f64,
    /// Sample sd of `ln(alone / control)` over the repetitions (none with one repetition).
    pub null_sd: Option<f64>,
    /// Whether `ln(slowdown_vs_control)` exceeds 4 null sd.
    pub separable: bool,
    /// `separable`, `not separable`, or `control` (the control row itself).
    pub verdict: &'static str,
    /// The same per CPU second of the victim threads.
    pub victim_slowdown_cpu: f64,
    /// 99th percentile of the victim's wake latency, attacked, ns.
    pub victim_wake_ns_p99: f64,
    /// The same, alone.
    pub victim_wake_ns_p99_alone: f64,
    /// Attacker waiters that really share a victim bucket.
    pub keys_in_victim_buckets: usize,
    /// Probes discovery spent.
    pub placement_probes: u64,
    /// The hasher takes a key.
    pub keyed: bool,
    /// Keyed hashers: whether the attacker's assumed key is the kernel's (`same`/`other`).
    pub attacker_key: &'static str,
    /// Threads running during a victim run.
    pub running_threads: usize,
    /// Threads parked (one per waiter).
    pub parked_threads: usize,
    /// CPUs this process may run on.
    pub cpus: usize,
}

/// Every hasher × table × victim workload of `req` ([`FloodRequest::configurations`] of
/// them), each a [`flood::run_set`] of the control and the placements; `done` is called as
/// each finishes. Once `stop` says so no further configuration starts, and the records of
/// those that finished are returned.
pub fn flood_records(
    req: &FloodRequest,
    done: impl Fn(),
    stop: impl Fn() -> bool,
) -> Result<Vec<FloodRecord>, TableError> {
    let cpus = available_cpus();
    let mut records = Vec::new();
    'all: for (kh, ah) in req.kernel.iter().zip(req.attacker) {
        for &t in &req.tables.kinds {
            for &workload in req.workloads {
                if stop() {
                    break 'all;
                }
                let cfg = FloodConfig {
                    table: t,
                    buckets: req.tables.buckets,
                    slots: req.tables.slots,
                    attacker_keys: req.attacker_keys,
                    placement: req.placements[0],
                    workload,
                    duration: req.duration,
                    reps: req.reps,
                    victim_mm: req.victim_mm,
                    attacker_mm: req.attacker_mm,
                };
                for j in flood::run_set(kh, ah, &cfg, req.placements)? {
                    records.push(flood_record(req, kh, &cfg, &j, req.tables.size(t), cpus));
                }
                done();
            }
        }
    }
    Ok(records)
}

impl FloodRequest<'_> {
    /// The configurations [`flood_records`] runs: hashers × tables × victim workloads.
    pub fn configurations(&self) -> usize {
        self.kernel.len() * self.tables.kinds.len() * self.workloads.len()
    }
}

fn flood_record(
    req: &FloodRequest,
    kh: &SharedHasher,
    cfg: &FloodConfig,
    j: &flood::JudgedResult,
    buckets: usize,
    cpus: usize,
) -> FloodRecord {
    let r = &j.result;
    FloodRecord {
        algo: kh.name().to_string(),
        table: cfg.table.as_str(),
        buckets,
        attacker_keys: cfg.attacker_keys,
        placement: j.placement.as_str(),
        victim_workload: cfg.workload.as_str(),
        victim_ops_per_sec: r.victim_ops_per_sec.round(),
        victim_ops_per_sec_alone: r.victim_ops_per_sec_alone.round(),
        victim_slowdown: round(r.victim_slowdown, 1000.0),
        control_slowdown: round(j.control_slowdown, 1000.0),
        slowdown_vs_control: round(j.verdict.slowdown_vs_control, 1000.0),
        null_sd: Some(j.verdict.null_sd)
            .filter(|x| x.is_finite())
            .map(|x| round(x, 10000.0)),
        separable: j.verdict.separable,
        verdict: match (j.placement, j.verdict.separable) {
            (Placement::Control, _) => "control",
            (_, true) => "separable",
            (_, false) => "not separable",
        },
        victim_slowdown_cpu: round(r.victim_slowdown_cpu, 1000.0),
        victim_wake_ns_p99: r.victim_wake_ns_p99,
        victim_wake_ns_p99_alone: r.victim_wake_ns_p99_alone,
        keys_in_victim_buckets: r.keys_in_victim_buckets,
        placement_probes: r.placement_probes,
        keyed: kh.keyed(),
        attacker_key: match (kh.keyed(), req.same_key) {
            (false, _) => "n/a",
            (true, true) => "same",
            (true, false) => "other",
        },
        running_threads: r.running_threads,
        parked_threads: cfg.attacker_keys,
        cpus,
    }
}

/// `attack channel`.
#[derive(Debug)]
pub struct ChannelRequest<'a> {
    /// The hashers.
    pub hashers: &'a [SharedHasher],
    /// Tables and sizes.
    pub tables: &'a TableSizes,
    /// Whose waiters.
    pub scenarios: &'a [Scenario],
    /// Threads parked in the probed bucket.
    pub waiters: &'a [usize],
    /// Timed wakes per class.
    pub samples: usize,
    /// Draws both `mm` values.
    pub seed: u64,
}

/// One channel measurement.
#[derive(Clone, Debug, Serialize)]
pub struct ChannelRecord {
    /// `model`: the model table with real threads.
    pub backend: &'static str,
    /// The hasher.
    pub algo: String,
    /// `global` or `private`.
    pub table: &'static str,
    /// Buckets of that table.
    pub buckets: usize,
    /// `cross` or `self`.
    pub scenario: &'static str,
    /// Threads parked in the probed bucket.
    pub waiters: usize,
    /// Timed wakes per class.
    pub samples: usize,
    /// The hit probes really share the waiters' bucket.
    pub same_bucket: bool,
    /// Median wake time on the hit probe, ns.
    pub hit_ns_median: f64,
    /// Median wake time on the miss probe, ns.
    pub miss_ns_median: f64,
    /// ROC AUC of hit against miss (4 decimals).
    pub auc: f64,
    /// The same probes' AUC with nobody parked.
    pub auc_control: f64,
    /// Blocks the samples were taken in, each with its own control (module docs of
    /// `channel`).
    pub blocks: usize,
    /// Mean over the blocks of (AUC − control AUC), 4 decimals.
    pub auc_excess: f64,
    /// Its standard error, 4 decimals.
    pub auc_excess_se: f64,
    /// The channel separates (module docs of `channel`).
    pub separable: bool,
    /// Held-out single-sample accuracy.
    pub accuracy: f64,
    /// Samples per decision for 99 % by majority vote (none if not separable).
    pub probes_per_decision_99: Option<u64>,
}

/// Every hasher × table × scenario × waiter count of `req`, one [`channel::run`] each.
pub fn channel_records(req: &ChannelRequest) -> Result<Vec<ChannelRecord>, TableError> {
    let space = CandidateSpace::direct_map(DEFAULT_SPACE_BITS).expect("the default space");
    let mut rng = SplitMix64::new(req.seed);
    let victim_mm = space.draw(&mut rng);
    let attacker_mm = space.draw(&mut rng);
    let mut records = Vec::new();
    for h in req.hashers {
        for &t in &req.tables.kinds {
            for &scenario in req.scenarios {
                for &k in req.waiters {
                    let cfg = ChannelConfig {
                        table: t,
                        buckets: req.tables.buckets,
                        slots: req.tables.slots,
                        waiters: k,
                        samples: req.samples,
                        scenario,
                        victim_mm,
                        attacker_mm,
                    };
                    let r = channel::run(h, &cfg)?;
                    records.push(ChannelRecord {
                        backend: "model",
                        algo: h.name().to_string(),
                        table: t.as_str(),
                        buckets: req.tables.size(t),
                        scenario: scenario.as_str(),
                        waiters: k,
                        samples: cfg.samples,
                        same_bucket: r.same_bucket,
                        hit_ns_median: r.hit_ns_median,
                        miss_ns_median: r.miss_ns_median,
                        auc: round(r.sep.auc, 10000.0),
                        auc_control: round(r.auc_control, 10000.0),
                        blocks: r.blocks,
                        auc_excess: round(r.auc_excess, 10000.0),
                        auc_excess_se: round(r.auc_excess_se, 10000.0),
                        separable: r.sep.separable,
                        accuracy: round(r.sep.accuracy, 10000.0),
                        probes_per_decision_99: r.sep.probes_per_decision_99,
                    });
                }
            }
        }
    }
    Ok(records)
}

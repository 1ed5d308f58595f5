//! What every section of a report shares, computed once before the sections run: the
//! hashers (the seed threads' eight plus the user's `--algo`), the machine, each hasher's
//! cost measured in this run, the simulator's 256-CPU profile calibrated on the published
//! table and its validation error, and the user's own `--profile`.
//!
//! The simulator is reached only through [`calibrated_seed_box`] and
//! [`with_measured_costs`] here and the `sim_*` functions of [`super::answers`], so an
//! API change there stays in a few functions.

use super::spread::Spread;
use crate::hashers::{Builtin, HashKey, KeyHasher, SEED_EIGHT, SharedHasher};
use crate::machine::MachineInfo;
use crate::report::ReportError;
use crate::sim::SimLength;
use crate::sim::profile::MachineProfile;
use crate::sim::validate::{
    ValidationRow, calibrate_seed_box, predict_published, rms_log_error, seed_box_template,
};
use crate::workload::KeyWorkload;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How much work the report does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Shorter runs and fewer configurations (the report's own note says how long it
    /// took).
    Quick,
    /// The full evaluation (longer runs, more keys, more configurations).
    Full,
}

/// One hasher's cost measured in this run.
#[derive(Clone, Debug)]
pub struct HashCost {
    /// Hasher name.
    pub name: String,
    /// ns per hash: the median of the timing rounds, `min`–`max` their central 80 %
    /// ([`measure_costs`]).
    pub ns: Spread,
}

/// The published tables the simulator is validated against (file names in `--data`).
pub const PUBLISHED_TABLES: [&str; 3] = [
    "buckets-240threads-256cpu.csv",
    "algos-240threads-256cpu.csv",
    "buckets-110threads-node1-256cpu.csv",
];

/// The rows of the published 240-thread table the 256-CPU profile is fitted to.
pub const CALIBRATION_ROWS: [usize; 2] = [0, 2];

/// The report's own arguments, as typed, that its "Reproduce" commands repeat (a user's
/// hasher is named by its spec there, a user's profile by the file or name given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Given {
    /// `--algo`.
    pub algo: Option<String>,
    /// `--profile`.
    pub profile: Option<String>,
}

/// [`Context::algo_arg`] for the user's `--algo` `given`.
fn reproduce_algo(given: Option<&str>) -> String {
    let Some(a) = given else {
        return "seed".into();
    };
    let extra: Vec<&str> = a
        .split(',')
        .map(str::trim)
        .filter(|i| *i != "seed" && !crate::hashers::SEED_EIGHT.contains(i))
        .collect();
    let head = (!extra.contains(&"all")).then_some("seed");
    head.into_iter().chain(extra).collect::<Vec<_>>().join(",")
}

/// Everything the sections share.
#[derive(Clone, Debug)]
pub struct Context {
    /// Quick or full.
    pub depth: Depth,
    /// `--repeat`: runs of every measured figure (the answers use at least 3).
    pub repeat: usize,
    /// The seed's eight, then the user's `--algo` hashers (names unique).
    pub hashers: Vec<SharedHasher>,
    /// Names of the user's hashers (a subset of `hashers`).
    pub extra: Vec<String>,
    /// The machine this run measures.
    pub machine: MachineInfo,
    /// Cost per hasher, in `hashers` order.
    pub costs: Vec<HashCost>,
    /// The seed thread's 256-CPU box, calibrated; hashers it has no figure for carry this
    /// run's measured cost.
    pub seed_box: MachineProfile,
    /// The user's `--profile` (with measured costs filled in the same way).
    pub user_profile: Option<MachineProfile>,
    /// The simulator against every published row.
    pub validation: Vec<ValidationRow>,
    /// Simulated run length.
    pub sim_len: SimLength,
    /// Directory of the published tables.
    pub data_dir: PathBuf,
    /// The arguments the reproduce commands repeat.
    pub given: Given,
}

impl Context {
    /// Measures the costs, calibrates and validates the 256-CPU profile.
    pub fn build(
        depth: Depth,
        repeat: usize,
        extra: Vec<SharedHasher>,
        user_profile: Option<MachineProfile>,
        given: Given,
        data_dir: &Path,
    ) -> Result<Context, ReportError> {
        let mut hashers = seed_hashers();
        let mut extra_names = Vec::new();
        for h in extra {
            if !hashers.iter().any(|k| k.name() == h.name()) {
                extra_names.push(h.name().to_string());
                hashers.push(h);
            }
        }
        let repeat = repeat.max(1);
        let costs = measure_costs(&hashers, depth)?;
        let sim_len = if depth == Depth::Quick {
            SimLength {
                warmup_ops: 100,
                measured_ops: 500,
            }
        } else {
            SimLength::default()
        };
        let seed_box = with_measured_costs(calibrated_seed_box(data_dir, sim_len)?, &costs);
        let validation = predict_published(data_dir, &seed_box, CALIBRATION_ROWS, sim_len)?;
        let user_profile = user_profile.map(|p| with_measured_costs(p, &costs));
        Ok(Context {
            depth,
            repeat,
            hashers,
            extra: extra_names,
            machine: MachineInfo::this_machine(),
            costs,
            seed_box,
            user_profile,
            validation,
            sim_len,
            data_dir: data_dir.to_path_buf(),
            given,
        })
    }

    /// Buckets of this machine's global futex hash (`roundup_pow_of_two(256 × CPUs)`, one
    /// node): the table the report's leak experiment attacks.
    pub fn attack_buckets(&self) -> usize {
        crate::table::kernel_per_node_size(crate::table::possible_cpus(), 1)
    }

    /// Runs of each measured figure in the answers: `--repeat`, at least 3, so that a
    /// range exists to compare differences against.
    pub fn answer_runs(&self) -> usize {
        self.repeat.max(3)
    }

    /// The cost of hasher `name` measured in this run.
    pub fn cost(&self, name: &str) -> Option<Spread> {
        self.costs.iter().find(|c| c.name == name).map(|c| c.ns)
    }

    /// The one error figure the whole report quotes for the simulator
    /// ([`SimError`]): every mention goes through here, so no two sentences quote two
    /// figures.
    pub fn sim_error(&self) -> SimError {
        SimError::of(&self.validation)
    }

    /// How a reproduce command names each of [`Context::profiles`]: the built-in profile
    /// of the seed box's calibration (`seed-256cpu`, the same two rows), then the user's
    /// `--profile` as typed.
    pub fn profile_args(&self) -> Vec<String> {
        std::iter::once("seed-256cpu".to_string())
            .chain(self.user_profile.as_ref().map(|_| {
                self.given
                    .profile
                    .clone()
                    .unwrap_or_else(|| "PROFILE".into())
            }))
            .collect()
    }

    /// The hashers as a reproduce command's `--algo`: `seed` (the seed's eight), then the
    /// user's `--algo` items that `seed` does not already name; `all` alone when the user
    /// gave it (it holds the eight). Every command refuses a hasher listed twice, so a
    /// printed `seed,jhash2` would not run.
    pub fn algo_arg(&self) -> String {
        reproduce_algo(self.given.algo.as_deref())
    }

    /// Each hasher of [`Context::hashers`] as one command's `--algo` (`check` takes one
    /// hasher): a built-in by its name, a user's as `LABEL=c:FILE:SYMBOL` (or `so:`) with
    /// the name the report gave it, so the command prints the same name.
    pub fn hasher_args(&self) -> Vec<String> {
        match crate::hashers::parse_list(&self.algo_arg(), HashKey::DEFAULT) {
            Ok(specs) => specs.iter().map(hasher_arg).collect(),
            // The list was parsed before the run began; a test's hand-made context has
            // its hashers by name.
            Err(_) => self.hashers.iter().map(|h| h.name().to_string()).collect(),
        }
    }

    /// The simulated run length as `sim`'s flags (`--quick` simulates fewer operations).
    pub fn sim_len_args(&self) -> String {
        format!(
            "--ops {} --warmup {}",
            self.sim_len.measured_ops, self.sim_len.warmup_ops
        )
    }

    /// The profiles the answers evaluate: the seed box, then the user's.
    pub fn profiles(&self) -> Vec<&MachineProfile> {
        std::iter::once(&self.seed_box)
            .chain(self.user_profile.as_ref())
            .collect()
    }
}

/// One hasher as a command's `--algo`: its name, or `LABEL=c:FILE:SYMBOL`.
fn hasher_arg(spec: &crate::hashers::HasherSpec) -> String {
    match spec {
        crate::hashers::HasherSpec::Builtin(b) => b.static_name().to_string(),
        crate::hashers::HasherSpec::External {
            label,
            path,
            symbol,
            compile,
            ..
        } => format!(
            "{label}={}:{}:{symbol}",
            if *compile { "c" } else { "so" },
            path.display()
        ),
    }
}

/// The simulator's error `value` (0.202 = 20.2 %) as every sentence of the report quotes
/// it, captions and decisions alike: in percent with one decimal, "20.2 %". One function,
/// so that no two sentences round the same figure differently.
pub fn error_pct(value: f64) -> String {
    format!("{:.1} %", value * 100.0)
}

/// The simulator's quoted error and where it comes from: the out-of-sample figures of
/// leave-one-table-out cross-validation (`sim validate --cv`, stored as
/// [`crate::sim::uncertainty::QUOTED`] and recomputed by the test suite), not the fit to
/// the rows the model was built with. `value` is `exp(σ) − 1` for σ the model error of an
/// unseen machine (each held-out machine's RMS residual, every machine once), the sd
/// every interval carries; the in-sample fit error over the 2024 rows is kept beside it
/// (`in_sample`) so that the gap between the two is visible, but no sentence uses it as a
/// tolerance.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SimError {
    /// The relative error (0.20 = 20 %): `exp(σ) − 1` of the model error of an unseen
    /// machine.
    pub value: f64,
    /// Median |ln(pred/pub)| of every CV cell.
    pub median_log: f64,
    /// 90th percentile |ln(pred/pub)| of every CV cell.
    pub p90_log: f64,
    /// Share of CV cells whose published figure lies inside its 80 % interval.
    pub coverage: f64,
    /// Published cells behind it.
    pub rows: usize,
    /// Median |ln(pred/pub)| on the boxes the model was not built on.
    pub new_box_median_log: f64,
    /// Their 90th percentile.
    pub new_box_p90_log: f64,
    /// Share of their cells inside the 80 % interval.
    pub new_box_coverage: f64,
    /// Their cells.
    pub new_box_rows: usize,
    /// `out-of-sample error`.
    pub kind: &'static str,
    /// `exp(RMS log error) − 1` over the published 2024 rows the 256-CPU profile was not
    /// calibrated on, in sample (a fit statistic: the model was built with them in view).
    pub in_sample: f64,
}

impl SimError {
    /// The quoted CV figure, with the in-sample fit of `rows` (the calibration rows left
    /// out) beside it.
    pub fn of(rows: &[ValidationRow]) -> SimError {
        let used: Vec<&ValidationRow> = rows.iter().filter(|r| !r.fitted).collect();
        let q = crate::sim::uncertainty::quoted_error();
        SimError {
            value: q.model_sd.exp_m1(),
            median_log: q.all.median,
            p90_log: q.all.p90,
            coverage: q.all.coverage,
            rows: q.all.n_cells,
            new_box_median_log: q.new_boxes.median,
            new_box_p90_log: q.new_boxes.p90,
            new_box_coverage: q.new_boxes.coverage,
            new_box_rows: q.new_boxes.n_cells,
            kind: "out-of-sample error",
            in_sample: rms_log_error(used.iter().copied()).exp_m1(),
        }
    }

    /// "20.2 %" ([`error_pct`]).
    pub fn pct(&self) -> String {
        error_pct(self.value)
    }

    /// The figure with its provenance, for captions.
    pub fn provenance(&self) -> String {
        format!(
            "the simulator's {} of {} (exp of the model error on a machine it has not seen: \
             each held-out machine's RMS of ln(predicted/published), every machine once, \
             each table predicted by the model calibrated without it, `sim validate --cv`; \
             over all {} \
             such cells the median |ln| is {:.3}, the 90th percentile {:.3}, and {:.0} % lie \
             inside their 80 % interval; on the {} cells of the four boxes the model was not \
             built on, calibrated on two rows each as a user would, {:.3}, {:.3} and {:.0} %; \
             the fit to the rows the model was built with is {:.1} %, a fit statistic)",
            self.kind,
            self.pct(),
            self.rows,
            self.median_log,
            self.p90_log,
            self.coverage * 100.0,
            self.new_box_rows,
            self.new_box_median_log,
            self.new_box_p90_log,
            self.new_box_coverage * 100.0,
            self.in_sample * 100.0
        )
    }
}

/// The distribution section's workloads and key counts (`None`: the workload's own), seed
/// 1: one list, so the which-hash answer's `dist` commands repeat what the section ran.
pub fn dist_workloads(depth: Depth) -> [(&'static str, Option<usize>); 3] {
    [
        ("perf", None),
        (
            "aslr",
            Some(if depth == Depth::Quick {
                1 << 16
            } else {
                1 << 18
            }),
        ),
        ("pages", Some(1 << 16)),
    ]
}

/// perf's futexes per thread in the report's `bench --compare` run.
pub const COMPARE_FUTEXES: usize = 1024;

/// The time of each `bench --compare` measurement (shorter with `--quick`).
pub fn compare_runtime(ctx: &Context) -> std::time::Duration {
    std::time::Duration::from_millis(if ctx.depth == Depth::Quick { 250 } else { 1000 })
}

/// The eight seed hashers.
pub fn seed_hashers() -> Vec<SharedHasher> {
    SEED_EIGHT
        .iter()
        .map(|n| {
            Builtin::by_name(n, HashKey::DEFAULT)
                .expect("seed hasher")
                .shared()
        })
        .collect()
}

/// Keys hashed in one timing of one hasher (`perf` keys): about 50–250 µs each.
pub const COST_KEYS: usize = 1 << 14;

/// Timing rounds of the hash costs: each round times every hasher once, the rounds spread
/// over about a second (`--quick`) or three.
pub fn cost_rounds(depth: Depth) -> usize {
    if depth == Depth::Quick { 41 } else { 121 }
}

/// About how long the timing rounds last, in whole seconds (the pauses; the hashing
/// itself adds a few milliseconds a round): for the sentences that say so.
pub fn cost_seconds(depth: Depth) -> u64 {
    ((cost_rounds(depth) as f64 * COST_PAUSE.as_secs_f64()).round() as u64).max(1)
}

/// The pause between two timing rounds, so that the rounds sample the machine over a
/// second or more rather than one moment of it.
pub const COST_PAUSE: std::time::Duration = std::time::Duration::from_millis(20);

/// Cost of one hash per hasher: [`cost_rounds`] rounds, each timing one batch of
/// [`COST_KEYS`] `perf` keys per hasher on one core, the hashers in a rotated order (each
/// round starts one later, after an untimed warm-up batch), [`COST_PAUSE`] between rounds.
/// Each hasher's figure is the median of its rounds with their central 80 %
/// ([`Spread::central`]): on a shared machine the speed of a core changes from one second
/// to the next, so the half-range of a few back-to-back runs (the report's figure before)
/// was ±0.1 % where five reports gave 4.89 and 8.24 ns for one hasher. Criterion's careful
/// figures: `cargo bench --bench hashers` in the source tree.
pub fn measure_costs(hashers: &[SharedHasher], depth: Depth) -> Result<Vec<HashCost>, ReportError> {
    let keys = KeyWorkload::Perf.generate(Some(COST_KEYS), 7)?.keys;
    let mut out = vec![0u32; keys.len()];
    let mut rounds: Vec<Vec<f64>> = vec![Vec::new(); hashers.len()];
    let n = hashers.len();
    for r in 0..cost_rounds(depth) {
        if r > 0 {
            std::thread::sleep(COST_PAUSE);
        }
        if let Some(h) = hashers.get(r % n.max(1)) {
            h.hash_many(std::hint::black_box(&keys), &mut out);
        }
        for j in 0..n {
            let i = (r + j) % n;
            let t = Instant::now();
            hashers[i].hash_many(std::hint::black_box(&keys), &mut out);
            std::hint::black_box(&out);
            rounds[i].push(t.elapsed().as_secs_f64() * 1e9 / keys.len() as f64);
        }
    }
    Ok(hashers
        .iter()
        .zip(rounds)
        .map(|(h, v)| HashCost {
            name: h.name().to_string(),
            ns: Spread::central(&v).unwrap_or(Spread::single(f64::NAN)),
        })
        .collect())
}

/// The seed thread's 256-CPU box fitted to two rows of the published 240-thread table.
pub fn calibrated_seed_box(data_dir: &Path, len: SimLength) -> Result<MachineProfile, ReportError> {
    Ok(calibrate_seed_box(
        data_dir,
        &seed_box_template(),
        CALIBRATION_ROWS,
        len,
    )?)
}

/// `profile` with this run's measured cost for every hasher it has no figure of its own
/// for, so no hasher is simulated as free.
pub fn with_measured_costs(mut profile: MachineProfile, costs: &[HashCost]) -> MachineProfile {
    for c in costs {
        if !profile.hash_ns.contains_key(&c.name) && c.ns.median.is_finite() {
            profile.hash_ns.insert(c.name.clone(), c.ns.median);
        }
    }
    profile
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reproduce_list_names_each_hasher_once() {
        // Every command refuses a hasher listed twice: the seed's own names and `seed`
        // go, `all` (which holds the eight) replaces `seed`.
        let cases = [
            (None, "seed"),
            (Some("jhash2"), "seed"),
            (Some("seed"), "seed"),
            (Some(" jhash2 , xxh3"), "seed,xxh3"),
            (Some("xxh3,c:/x/h.c"), "seed,xxh3,c:/x/h.c"),
            (Some("all"), "all"),
            (Some("seed,all,c:/x/h.c"), "all,c:/x/h.c"),
        ];
        for (given, want) in cases {
            assert_eq!(reproduce_algo(given), want, "{given:?}");
        }
    }

    #[test]
    fn measured_costs_fill_only_missing_hashers() {
        let mut p = seed_box_template();
        // The profile's own figure for jhash2 (none for xxhash) must win over the measured.
        let jhash = 4.0;
        p.hash_ns.insert("jhash2".into(), jhash);
        p.hash_ns.remove("xxhash");
        let costs = vec![
            HashCost {
                name: "jhash2".into(),
                ns: Spread::single(99.0),
            },
            HashCost {
                name: "xxhash".into(),
                ns: Spread::single(7.5),
            },
            HashCost {
                name: "mine".into(),
                ns: Spread::single(3.25),
            },
        ];
        let p = with_measured_costs(p, &costs);
        assert_eq!(p.hash_ns["jhash2"], jhash, "the profile's own figure wins");
        assert_eq!(p.hash_ns["xxhash"], 7.5);
        assert_eq!(p.hash_cost("mine"), Some(3.25));
    }
}

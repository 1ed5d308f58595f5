//! The 256-CPU 2-node box of seed 000: calibrated on two cells of its 240-thread table as
//! `sim calibrate` fits a user's box ([`crate::sim::calibrate`]), then its three slots
//! tables, its pinning figures and seed 002's pair (on seed 002's box, with these costs)
//! predicted; and the refit on each published run behind the calibration cells, which
//! sizes the spread of the calibrated costs.

use super::ValidationRow;
use super::plain_role;
use super::published::{
    FUTEX_NUMA_FORCED, FUTEX_NUMA_SEPARATED, PINNING_110, TABLE_110, TABLE_240, TABLE_240_RUNS,
    TABLE_ALGOS, TABLE_NUMA, TABLE_PINNING, hasher_for_column, read_published, read_runs,
};
use super::templates::{IVB_EP_REMOTE_RATIO, seed002_box};
use crate::hashers::{Builtin, HashKey, SharedHasher};
use crate::sim::SimError;
use crate::sim::calibrate::{DEFAULT_NOISE, Observation, Scenario, calibrate, global_hash_size};
use crate::sim::hashcost::hash_cost;
use crate::sim::profile::MachineProfile;
use crate::sim::sweep::parallel_map;
use crate::sim::uncertainty::{CalibrationSpread, refit_spread, spread_of_refits};
use crate::sim::{Design, Mechanisms, SimLength, SimOp, simulate};
use crate::workload::{PERF_FUTEXES, perf_keys_per_thread};
use std::path::Path;

/// Calibrates the 256-CPU profile on rows `rows` of `buckets-240threads-256cpu.csv`.
pub fn calibrate_seed_box(
    data_dir: &Path,
    template: &MachineProfile,
    rows: [usize; 2],
    len: SimLength,
) -> Result<MachineProfile, SimError> {
    calibrate_seed_box_mech(data_dir, template, rows, len, Mechanisms::default())
}

/// [`calibrate_seed_box`] with some of the model's refinements switched off.
pub(super) fn calibrate_seed_box_mech(
    data_dir: &Path,
    template: &MachineProfile,
    rows: [usize; 2],
    len: SimLength,
    mech: Mechanisms,
) -> Result<MachineProfile, SimError> {
    let t = read_published(&data_dir.join(TABLE_240))?;
    let pick = |i: usize| -> Result<(u64, f64), SimError> {
        let (b, r) = t.rows.get(i).ok_or_else(|| {
            SimError::BadRequest(format!(
                "row {i} does not exist (the table has {})",
                t.rows.len()
            ))
        })?;
        Ok((*b, r[0]))
    };
    let mut p = calibrate_seed_box_on(template, [pick(rows[0])?, pick(rows[1])?], len, mech)?;
    p.name = format!(
        "seed thread 256-CPU 2-node box, calibrated on rows {} and {} of {TABLE_240}",
        rows[0], rows[1]
    );
    Ok(p)
}

/// [`calibrate_seed_box`] on two `(buckets, ops/sec)` observations of 240 threads.
fn calibrate_seed_box_on(
    template: &MachineProfile,
    obs: [(u64, f64); 2],
    len: SimLength,
    mech: Mechanisms,
) -> Result<MachineProfile, SimError> {
    let sc = scenario(
        240,
        (0..template.cpus).collect(),
        template.cpus,
        Design::default(),
        mech,
    )?;
    let h = Builtin::by_name("jhash2", HashKey::DEFAULT)
        .expect("registry")
        .shared();
    let hash_ns = hash_cost(template, &h)?.ns;
    let rows = obs.map(|(buckets, ops_per_sec)| Observation {
        buckets,
        ops_per_sec,
        noise: DEFAULT_NOISE,
    });
    let fit = calibrate(template, &sc, &h, hash_ns, &rows, len)?;
    let mut p = fit.profile;
    // A fitted profile carries no hash costs of its own (`sim calibrate` must not copy
    // this machine's figures into another's); for the predictions here, the template's
    // stated costs, if any, still hold — else every prediction times them again.
    p.hash_ns = template.hash_ns.clone();
    Ok(p)
}

fn scenario(
    threads: usize,
    cpus: Vec<u32>,
    all_cpus: u32,
    design: Design,
    mech: Mechanisms,
) -> Result<Scenario, SimError> {
    scenario_with_keys(threads, cpus, all_cpus, design, 1, mech)
}

/// [`scenario`] with perf's heap layout drawn from `key_set`.
pub(super) fn scenario_with_keys(
    threads: usize,
    cpus: Vec<u32>,
    all_cpus: u32,
    design: Design,
    key_set: u64,
    mech: Mechanisms,
) -> Result<Scenario, SimError> {
    Ok(Scenario {
        keys_per_thread: perf_keys_per_thread(threads, PERF_FUTEXES, key_set)
            .map_err(SimError::BadRequest)?,
        cpus,
        global_buckets: global_hash_size(all_cpus),
        op: SimOp::WaitFail,
        design,
        global_nodes: 1,
        mechanisms: mech,
    })
}

/// Predicts the three 2024 tables with `profile`; `calibration` names the rows of the
/// 240-thread buckets table that were used to fit it.
pub fn predict_published(
    data_dir: &Path,
    profile: &MachineProfile,
    calibration: [usize; 2],
    len: SimLength,
) -> Result<Vec<ValidationRow>, SimError> {
    Ok(predict_published_reps(
        data_dir,
        std::slice::from_ref(profile),
        calibration,
        len,
        None,
        Mechanisms::default(),
    )?
    .into_iter()
    .map(|(r, _)| r)
    .collect())
}

/// [`predict_published`] replicated: replication `r` runs `profiles[r]` with start order
/// `r` (the row's `predicted` is replication 0); `only` restricts it to one table.
pub fn predict_published_reps(
    data_dir: &Path,
    profiles: &[MachineProfile],
    calibration: [usize; 2],
    len: SimLength,
    only: Option<&str>,
    mech: Mechanisms,
) -> Result<Vec<(ValidationRow, Vec<f64>)>, SimError> {
    let profile = &profiles[0];
    let node1: Vec<u32> = profile.node_cpus(profile.nodes.saturating_sub(1));
    let all: Vec<u32> = (0..profile.cpus).collect();
    let cases = [
        (TABLE_240, 240, all.clone()),
        (TABLE_ALGOS, 240, all),
        (TABLE_110, 110, node1),
    ];
    // Every cell as a job: (file, threads, cpus, column header, row index, buckets, rate).
    let mut jobs = Vec::new();
    let mut scenarios = Vec::new();
    for (ci, (file, threads, cpus)) in cases.iter().enumerate() {
        let table = read_published(&data_dir.join(file))?;
        scenarios.push(scenario(
            *threads,
            cpus.clone(),
            profile.cpus,
            Design::default(),
            mech,
        )?);
        if only.is_some_and(|o| o != *file) {
            continue;
        }
        for (c, header) in table.columns.iter().enumerate() {
            let name = hasher_for_column(header)
                .ok_or_else(|| SimError::Data(format!("{file}: unknown column '{header}'")))?;
            for (i, (buckets, rates)) in table.rows.iter().enumerate() {
                jobs.push((ci, *file, name, i, *buckets, rates[c]));
            }
        }
    }
    let hashers: Vec<(&str, SharedHasher, f64)> = {
        let mut v: Vec<(&str, SharedHasher, f64)> = Vec::new();
        for j in &jobs {
            if !v.iter().any(|(n, _, _)| *n == j.2) {
                let h = Builtin::by_name(j.2, HashKey::DEFAULT)
                    .expect("registry")
                    .shared();
                let ns = hash_cost(profile, &h)?.ns;
                v.push((j.2, h, ns));
            }
        }
        v
    };
    let reps = profiles.len();
    let rates = parallel_map(jobs.len() * reps, |k| {
        let (ci, _, name, _, buckets, _) = jobs[k / reps];
        let (_, h, ns) = hashers.iter().find(|(n, _, _)| *n == name).expect("listed");
        let mut w = scenarios[ci].workload(h, buckets);
        w.start_order = (k % reps) as u64;
        simulate(&profiles[k % reps], &w, *ns, len).ops_per_sec
    });
    Ok(jobs
        .iter()
        .enumerate()
        .map(|(j, &(_, file, name, i, buckets, published))| {
            let v = rates[j * reps..(j + 1) * reps].to_vec();
            let predicted = v[0];
            let fitted = file == TABLE_240 && calibration.contains(&i);
            (
                ValidationRow::slots(file, name, name, buckets, published, predicted, fitted),
                v,
            )
        })
        .collect())
}

/// Predicts seed 002's separated / forced ratio: one row, published 3.0.
pub fn validate_futex_numa(
    profile: &MachineProfile,
    len: SimLength,
) -> Result<ValidationRow, SimError> {
    Ok(futex_numa_reps(
        std::slice::from_ref(profile),
        Some(IVB_EP_REMOTE_RATIO),
        len,
        Mechanisms::default(),
    )?
    .0)
}

/// [`validate_futex_numa`] for each of `profiles` (its box built from each); `ratio`: the
/// box's remote/local ratio (`None`: the profile's own).
pub(super) fn futex_numa_reps(
    profiles: &[MachineProfile],
    ratio: Option<f64>,
    len: SimLength,
    mech: Mechanisms,
) -> Result<(ValidationRow, Vec<f64>), SimError> {
    let published =
        FUTEX_NUMA_SEPARATED.iter().sum::<f64>() / FUTEX_NUMA_FORCED.iter().sum::<f64>();
    let mut v = Vec::new();
    for p in profiles {
        let mut m = seed002_box(p);
        if ratio.is_none() {
            m.handoff_remote_ns = m.handoff_local_ns * p.remote_ratio();
        }
        let forced = crate::sim::sweep::run_lock_test_with(&m, 10, true, len, mech)?;
        let split = crate::sim::sweep::run_lock_test_with(&m, 10, false, len, mech)?;
        v.push(split.ops_per_sec / forced.ops_per_sec);
    }
    Ok((
        ValidationRow::jhash2_design(TABLE_NUMA, "separated/forced", 10, published, v[0], false),
        v,
    ))
}

/// Predicts seed 000's 110-thread pinning figures ([`PINNING_110`]) with `profile`.
pub fn validate_pinning(
    profile: &MachineProfile,
    len: SimLength,
) -> Result<Vec<ValidationRow>, SimError> {
    Ok(predict_pinning_reps(
        std::slice::from_ref(profile),
        len,
        true,
        Mechanisms::default(),
    )?
    .into_iter()
    .map(|(r, _)| r)
    .collect())
}

/// [`validate_pinning`] replicated as [`predict_published_reps`] does; `smt_fitted`: the
/// profile's SMT slowdown was derived from two of these cells (they are then `fit`).
pub fn predict_pinning_reps(
    profiles: &[MachineProfile],
    len: SimLength,
    smt_fitted: bool,
    mech: Mechanisms,
) -> Result<Vec<(ValidationRow, Vec<f64>)>, SimError> {
    let profile = &profiles[0];
    let jhash = Builtin::by_name("jhash2", HashKey::DEFAULT)?.shared();
    let ns = hash_cost(profile, &jhash)?.ns;
    let cpus_of = |mask: u64| -> Vec<u32> {
        match mask {
            1 => profile.node_cpus(0),
            2 => profile.node_cpus(1.min(profile.nodes.saturating_sub(1))),
            _ => (0..profile.cpus).collect(),
        }
    };
    let mut jobs = Vec::new();
    for &(mask, global, private) in &PINNING_110 {
        jobs.push((mask, "global", 0, global));
        jobs.push((mask, "private", 65536, private));
    }
    let scenarios = PINNING_110
        .iter()
        .map(|&(mask, _, _)| scenario(110, cpus_of(mask), profile.cpus, Design::default(), mech))
        .collect::<Result<Vec<_>, SimError>>()?;
    let reps = profiles.len();
    let rates = parallel_map(jobs.len() * reps, |k| {
        let (j, r) = (k / reps, k % reps);
        let mut w = scenarios[j / 2].workload(&jhash, jobs[j].2);
        w.start_order = r as u64;
        simulate(&profiles[r], &w, ns, len).ops_per_sec
    });
    Ok(jobs
        .iter()
        .enumerate()
        .map(|(j, &(mask, config, buckets, published))| {
            let v = rates[j * reps..(j + 1) * reps].to_vec();
            let predicted = v[0];
            // The two figures the SMT slowdown is derived from.
            let fitted = smt_fitted && config == "private" && mask >= 2;
            (
                ValidationRow {
                    table: TABLE_PINNING.into(),
                    config: config.into(),
                    x: mask,
                    published,
                    predicted,
                    fitted,
                    algo: "jhash2".into(),
                    buckets,
                    ratio: predicted / published,
                    role: plain_role(fitted),
                    lo: None,
                    hi: None,
                },
                v,
            )
        })
        .collect())
}

/// Refits the 256-CPU box on `rows` of [`TABLE_240`] once per published run
/// ([`TABLE_240_RUNS`]: each run's figures at those rows alone) and returns the spread
/// of the fitted parameters as the standard error of the fit on their mean (sample sd of
/// the logs over the runs, divided by √runs), with the refitted profiles.
pub fn refit_on_runs(
    data_dir: &Path,
    template: &MachineProfile,
    rows: [usize; 2],
    len: SimLength,
) -> Result<(CalibrationSpread, Vec<MachineProfile>), SimError> {
    let runs = read_runs(data_dir)?
        .ok_or_else(|| SimError::Data(format!("no {TABLE_240_RUNS} in the data")))?;
    let table = read_published(&data_dir.join(TABLE_240))?;
    let mut fits = Vec::new();
    for k in 0..runs.columns.len() {
        let obs = rows.map(|i| {
            let b = table.rows[i].0;
            let run = runs
                .rows
                .iter()
                .find(|(rb, _)| *rb == b)
                .expect("checked by read_runs");
            (b, run.1[k])
        });
        fits.push(calibrate_seed_box_on(
            template,
            obs,
            len,
            Mechanisms::default(),
        )?);
    }
    let spread = refit_spread(&fits)
        .ok_or_else(|| SimError::Data(format!("{TABLE_240_RUNS} must hold at least two runs")))?;
    Ok((spread_of_refits(&spread), fits))
}

//! Leave one table out (`sim validate --cv`), by the protocol of the [module
//! doc](super): per held-out table, the box calibrated and its line transfers chosen
//! without it, its cells predicted in three replications, and each cell's 80 % interval
//! sized by the CV error of the other tables.

use super::ValidationRow;
use super::metrics::abs_log_error_quantile;
use super::new_boxes::{NEW_BOXES, TABLE_A734, predict_new_box_reps};
use super::published::{
    TABLE_110, TABLE_240, TABLE_2013, TABLE_ALGOS, TABLE_NUMA, TABLE_PINNING, read_threads_table,
};
use super::sas2024::{
    SAS2024_BOXES, SAS2024_TABLES, calibrate_unseen_box, predict_unseen_table_reps, sas2024_box_of,
    sas2024_present,
};
use super::seed_box::{
    calibrate_seed_box_mech, futex_numa_reps, predict_pinning_reps, predict_published_reps,
};
use super::seed003::{predict_seed003_reps, seed003_mech};
use super::templates::{
    GENERIC_SMT_SLOWDOWN, LINE_CHOICES, seed003_box_template, with_line_choice,
};
use crate::hashers::{Builtin, HashKey};
use crate::sim::SimError;
use crate::sim::hashcost::hash_cost;
use crate::sim::profile::MachineProfile;
use crate::sim::uncertainty::{interval, log_sd, replication_profiles};
use crate::sim::{Mechanisms, SimLength};
use std::path::Path;

/// The held-out units of `sim validate --cv`, in output order: the seed tables, then the
/// boxes the model was not built on ([`NEW_BOXES`], then the tables of [`SAS2024_BOXES`]).
pub const CV_TABLES: [&str; 14] = [
    TABLE_240,
    TABLE_ALGOS,
    TABLE_110,
    TABLE_2013,
    TABLE_NUMA,
    TABLE_PINNING,
    NEW_BOXES[0].0,
    NEW_BOXES[1].0,
    SAS2024_TABLES[0],
    SAS2024_TABLES[1],
    SAS2024_TABLES[2],
    SAS2024_TABLES[3],
    SAS2024_TABLES[4],
    SAS2024_TABLES[5],
];

/// Whether `table` is of a box the model was not built on (the a734d9fca84e boxes and
/// the 2024-11-01 machines): its cells are reported, never used to choose.
pub fn is_unseen_box(table: &str) -> bool {
    NEW_BOXES.iter().any(|(u, _)| *u == table) || sas2024_box_of(table).is_some()
}

/// The 256-CPU box's tables: the cells a fold's line-transfer choice is scored on.
const BOX_256_TABLES: [&str; 4] = [TABLE_240, TABLE_ALGOS, TABLE_110, TABLE_PINNING];

/// The result of `sim validate --cv`.
#[derive(Clone, Debug)]
pub struct CrossValidation {
    /// Every cell, `role` `cv` or (the calibration cells of the held-out table itself)
    /// `fit`, with `lo` and `hi`.
    pub rows: Vec<ValidationRow>,
    /// Per held-out table of the 256-CPU box: the line-transfer option its fold chose.
    pub line_choice: Vec<(&'static str, &'static str)>,
    /// Whether the a734d9fca84e boxes were scored (their file is in the data directory).
    pub new_boxes_scored: bool,
    /// The machines of [`SAS2024_BOXES`] scored (all three tables in the data directory).
    pub sas2024_scored: Vec<&'static str>,
}

/// Median |ln(pred/pub)| over the non-`fit` cells of the 256-CPU box's tables other than
/// `held_out`: a fold's score of a line-transfer option.
fn fold_score(rows: &[ValidationRow], held_out: &str) -> f64 {
    abs_log_error_quantile(
        rows.iter()
            .filter(|r| r.table != held_out && BOX_256_TABLES.contains(&r.table.as_str()))
            .filter(|r| !r.fitted),
        0.5,
    )
}

/// The machine a held-out table was measured on: seed 000's four tables share one box.
pub fn machine_of(table: &str) -> &str {
    match table {
        TABLE_240 | TABLE_ALGOS | TABLE_110 | TABLE_PINNING => "seed000-256cpu",
        TABLE_2013 => "seed003-80core",
        TABLE_NUMA => "seed002-ivbep",
        other => sas2024_box_of(other).map_or(other, |b| b.machine),
    }
}

/// The model error a prediction for an unseen machine carries: the root mean square,
/// over the machines of the held-out tables other than `except`'s, of each machine's own
/// RMS CV residual (its `cv` cells pooled), so that every machine counts once however
/// many cells and tables it has. A user's box is one more machine: a pool of cells would
/// let the 174 cells of the seed box, predicted from two rows of that same box, size the
/// error of every other machine.
pub fn machine_model_sd(rows: &[ValidationRow], except: Option<&str>) -> f64 {
    let except = except.map(machine_of);
    let mut machines: Vec<&str> = Vec::new();
    for t in CV_TABLES {
        let m = machine_of(t);
        if Some(m) != except && !machines.contains(&m) {
            machines.push(m);
        }
    }
    let per_machine: Vec<f64> = machines
        .iter()
        .filter_map(|m| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.role == "cv" && machine_of(&r.table) == *m)
                .map(|r| r.ratio.ln().powi(2))
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
        .collect();
    (per_machine.iter().sum::<f64>() / per_machine.len().max(1) as f64).sqrt()
}

/// Leave one table out (the protocol of the module doc): every published cell predicted
/// by a model calibrated without its table and without the template figures derived from
/// it, with its 80 % interval. `template` is the 256-CPU box's template (its line
/// transfers and SMT slowdown are replaced per fold; its hash costs, if stated, are used
/// for every prediction, seed 003's box included).
pub fn validate_cv(
    data_dir: &Path,
    template: &MachineProfile,
    len: SimLength,
    mech: Mechanisms,
) -> Result<CrossValidation, SimError> {
    validate_cv_with(data_dir, template, len, mech, &mut |_| {})
}

/// [`validate_cv`], saying before each step what it starts (`calibration 3 of 8`, then
/// `fold 2 of 8: TABLE held out`), for a front end's progress line.
pub fn validate_cv_with(
    data_dir: &Path,
    template: &MachineProfile,
    len: SimLength,
    mech: Mechanisms,
    step: &mut dyn FnMut(&str),
) -> Result<CrossValidation, SimError> {
    let rows = [0usize, 2];
    // A directory of the user's own tables may lack the new boxes' file: they are then
    // not scored, and the output says so, rather than failing after every calibration.
    let new_boxes_present = data_dir.join(TABLE_A734).is_file();
    // Every (SMT source, line option) the folds may need: calibrated as a user would, and
    // the box's four tables predicted once (start order 0).
    let mut variants: Vec<(bool, usize, MachineProfile, Vec<ValidationRow>)> = Vec::new();
    let calibrations = 2 * LINE_CHOICES.len();
    for smt_from_pinning in [true, false] {
        for (li, &choice) in LINE_CHOICES.iter().enumerate() {
            step(&format!(
                "calibration {} of {calibrations}",
                variants.len() + 1
            ));
            let smt = (!smt_from_pinning).then_some(GENERIC_SMT_SLOWDOWN);
            let t = with_line_choice(template, choice, smt);
            let p = calibrate_seed_box_mech(data_dir, &t, rows, len, mech)?;
            let mut cells: Vec<ValidationRow> =
                predict_published_reps(data_dir, std::slice::from_ref(&p), rows, len, None, mech)?
                    .into_iter()
                    .map(|(r, _)| r)
                    .collect();
            cells.extend(
                predict_pinning_reps(std::slice::from_ref(&p), len, smt_from_pinning, mech)?
                    .into_iter()
                    .map(|(r, _)| r),
            );
            variants.push((smt_from_pinning, li, p, cells));
        }
    }
    let spread = crate::sim::uncertainty::SEED_BOX_CALIBRATION;
    // Each 2024-11-01 machine is calibrated once, for all three of its tables.
    let mut unseen_profiles: Vec<(&'static str, MachineProfile)> = Vec::new();
    let mut out: Vec<(ValidationRow, Vec<f64>)> = Vec::new();
    let mut line_choice = Vec::new();
    for (fold, held) in CV_TABLES.into_iter().enumerate() {
        step(&format!(
            "fold {} of {}: {held} held out",
            fold + 1,
            CV_TABLES.len()
        ));
        if held == TABLE_2013 {
            let old_box = MachineProfile {
                hash_ns: template.hash_ns.clone(),
                ..seed003_box_template()
            };
            let (p, _) = seed003_mech(data_dir, &old_box, len, mech)?;
            let table = read_threads_table(&data_dir.join(TABLE_2013))?;
            let h = Builtin::by_name("jhash2", HashKey::DEFAULT)
                .expect("registry")
                .shared();
            let ns = hash_cost(&p, &h)?.ns;
            let profiles = replication_profiles(&p, &spread);
            out.extend(predict_seed003_reps(&table, &profiles, ns, len, mech));
            continue;
        }
        if NEW_BOXES.iter().any(|(u, _)| *u == held) {
            if !new_boxes_present {
                continue;
            }
            // A box of its own, calibrated on two of its rows as a user calibrates theirs;
            // a user profile's replications move its costs by the seed box's spread.
            out.extend(predict_new_box_reps(
                data_dir, template, held, &spread, len, mech,
            )?);
            continue;
        }
        if let Some(b) = sas2024_box_of(held) {
            if !sas2024_present(data_dir, b) {
                continue;
            }
            if !unseen_profiles.iter().any(|(m, _)| *m == b.machine) {
                let p = calibrate_unseen_box(data_dir, template, b, len, mech)?;
                unseen_profiles.push((b.machine, p));
            }
            let (_, p) = unseen_profiles
                .iter()
                .find(|(m, _)| *m == b.machine)
                .expect("calibrated above");
            out.extend(predict_unseen_table_reps(
                data_dir, held, p, &spread, len, mech,
            )?);
            continue;
        }
        let smt_from_pinning = held != TABLE_PINNING;
        // The fold's line option: the best on the box's other tables (first on a tie).
        let (_, li, p, _) = variants
            .iter()
            .filter(|v| v.0 == smt_from_pinning)
            .min_by(|a, b| {
                fold_score(&a.3, held)
                    .total_cmp(&fold_score(&b.3, held))
                    .then(a.1.cmp(&b.1))
            })
            .expect("four options");
        line_choice.push((held, LINE_CHOICES[*li].0));
        let profiles = replication_profiles(p, &spread);
        let cells = match held {
            TABLE_PINNING => predict_pinning_reps(&profiles, len, false, mech)?,
            TABLE_NUMA => vec![futex_numa_reps(&profiles, None, len, mech)?],
            _ => predict_published_reps(data_dir, &profiles, rows, len, Some(held), mech)?,
        };
        out.extend(cells);
    }
    for (r, _) in out.iter_mut() {
        r.role = if r.fitted { "fit" } else { "cv" };
    }
    // Each cell's model error: the error of a machine it was not measured on, each other
    // machine weighted equally (see [`machine_model_sd`]).
    let cells: Vec<ValidationRow> = out.iter().map(|(r, _)| r.clone()).collect();
    let sds: Vec<f64> = out
        .iter()
        .map(|(r, _)| machine_model_sd(&cells, Some(&r.table)))
        .collect();
    let rows = out
        .into_iter()
        .zip(sds)
        .map(|((mut r, reps), sd)| {
            let (lo, hi) = interval(r.predicted, log_sd(&reps), sd);
            r.lo = Some(lo);
            r.hi = Some(hi);
            r
        })
        .collect();
    Ok(CrossValidation {
        rows,
        line_choice,
        new_boxes_scored: new_boxes_present,
        sas2024_scored: SAS2024_BOXES
            .iter()
            .filter(|b| sas2024_present(data_dir, b))
            .map(|b| b.machine)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(table: &str, ln_ratio: f64, role: &'static str) -> ValidationRow {
        let published = 1000.0;
        let predicted = published * ln_ratio.exp();
        ValidationRow {
            table: table.into(),
            config: "jhash2".into(),
            x: 0,
            published,
            predicted,
            fitted: role == "fit",
            algo: "jhash2".into(),
            buckets: 0,
            ratio: predicted / published,
            role,
            lo: None,
            hi: None,
        }
    }

    #[test]
    fn every_machine_counts_once_and_a_cell_is_sized_by_the_others() {
        // Seed 000's box: 3 cells of 0.1 over two of its tables and a fit cell (ignored);
        // seed 003's box: one cell of 0.3; a new box: two cells of 0.2 and -0.2.
        let rows = vec![
            cell(TABLE_240, 0.1, "cv"),
            cell(TABLE_ALGOS, -0.1, "cv"),
            cell(TABLE_ALGOS, 0.1, "cv"),
            cell(TABLE_240, 5.0, "fit"),
            cell(TABLE_2013, 0.3, "cv"),
            cell(NEW_BOXES[0].0, 0.2, "cv"),
            cell(NEW_BOXES[0].0, -0.2, "cv"),
        ];
        // Mean squares per machine 0.01, 0.09, 0.04: sqrt(0.14 / 3).
        let all = machine_model_sd(&rows, None);
        assert!((all - (0.14f64 / 3.0).sqrt()).abs() < 1e-12, "{all}");
        // A cell of seed 000's algorithm table is sized by the other two machines only,
        // whichever of the box's tables it belongs to: sqrt((0.09 + 0.04) / 2).
        let expect = (0.13f64 / 2.0).sqrt();
        for t in [TABLE_ALGOS, TABLE_110, TABLE_PINNING] {
            let sd = machine_model_sd(&rows, Some(t));
            assert!((sd - expect).abs() < 1e-12, "{t}: {sd}");
        }
        assert_eq!(machine_of(TABLE_NUMA), "seed002-ivbep");
        assert_eq!(machine_of(NEW_BOXES[1].0), NEW_BOXES[1].0);
    }
}

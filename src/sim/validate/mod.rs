//! Validation of the simulator against every published table of the seed threads
//! (`data/published/`, transcribed from the mailing-list posts), and the protocol that
//! says which of its figures are fit statistics and which are out-of-sample errors.
//!
//! # The tables (the held-out units)
//!
//! - seed 000 (2024, private futex hash RFC, a 256-CPU 2-node box): the 240-thread slots
//!   table `buckets-240threads-256cpu.csv` ([`TABLE_240`]), the algorithm table
//!   `algos-240threads-256cpu.csv` ([`TABLE_ALGOS`]), the node-pinned
//!   `buckets-110threads-node1-256cpu.csv` ([`TABLE_110`]) and the six 110-thread pinning
//!   figures ([`PINNING_110`], [`TABLE_PINNING`]): global hash against a 65536-slot
//!   private hash on node 0, on node 1 and over both nodes;
//! - seed 003 (2013, "80 core, 1Tb NUMA"): the four designs (packed 256 buckets, aligned,
//!   large table, both) at 32–512 threads ([`TABLE_2013`]), on its own box;
//! - seed 002 (2023, FUTEX2_NUMA on a 2-node IVB-EP): the `futex_numa` ratio of separated
//!   to forced-together nodes ([`TABLE_NUMA`]), predicted with the 256-CPU box's costs;
//! - two boxes the model was not built on ([`NEW_BOXES`], `--cv` only): the baseline runs
//!   of a734d9fca84e's published A/B table ([`TABLE_A734`]) on a dual-socket Skylake at
//!   112 threads and a dual-socket Zen3 at 256 threads;
//! - two more machines the model was not built on ([`SAS2024_BOXES`], `--cv` only): a
//!   4-socket Xeon E7-8890 v3 at 140 threads and a 2-socket Xeon E5-2650 at 28 threads,
//!   each with a slots sweep, a node-bound sweep and a hasher table ([`SAS2024_TABLES`]).
//!
//! # Validation protocol (written before any cross-validated figure was computed;
//! amended twice on 2026-12-03 and once on 2026-12-07, below)
//!
//! Roles of a cell (the `role` field of every `sim validate` record):
//!
//! - `fit`: the cell calibrated the model. Rows 0 and 2 of [`TABLE_240`] (global hash and
//!   4 slots: `outside_ns` and the hand-off), the two cells [`SEED003_FIT`] of seed 003's
//!   box, and the two pinning figures the 256-CPU template's SMT slowdown is derived from
//!   (the private hash on node 1 and on both nodes).
//! - `dev`: every other cell of plain `sim validate`. All six tables were used while the
//!   model was built: each mechanism and each template figure was kept or rejected by
//!   what it did to these same cells, so their error is a fit statistic, not an error a
//!   user can expect, however the cells were labelled before.
//! - `cv`: a cell predicted by `sim validate --cv`, by a model calibrated without the
//!   table the cell belongs to, and without any template figure derived from that table.
//!
//! Leave one table out (`--cv`), per held-out table H:
//!
//! - The 256-CPU box (H is [`TABLE_240`], [`TABLE_ALGOS`], [`TABLE_110`], the pinning
//!   figures or seed 002's pair) is calibrated as a user calibrates their box: on rows 0
//!   and 2 of [`TABLE_240`]. When H is [`TABLE_240`] itself those two cells keep the role
//!   `fit` and are not scored; its other 16 cells are `cv`. (Every other table of the
//!   box is then predicted from two cells of a different table; the algorithm table's
//!   jhash2 column repeats the 240-thread table's configurations in other runs.)
//! - The SMT slowdown comes from the pinning figures, except when H is the pinning
//!   figures: then the box gets the generic figure used for every box without a
//!   measurement (Intel's Hyper-Threading figure, 2/1.3), and all six pinning cells are
//!   `cv`.
//! - The line transfers (which of the three published 2-socket 64-core matrices, or
//!   their means, [`LINE_CHOICES`]) were chosen knowing the node-pinned table's result.
//!   In every fold the choice is made again by one fixed rule that cannot see H: the
//!   option with the smallest median |ln(pred/pub)| over the non-`fit` cells of the
//!   256-CPU box's other tables (ties: the earlier option in [`LINE_CHOICES`]).
//! - Seed 002's IVB-EP remote/local ratio ([`IVB_EP_REMOTE_RATIO`]) was adopted after
//!   its cell had been seen to miss; when H is seed 002's pair, its box takes the
//!   256-CPU box's own ratio instead.
//! - Seed 003's box cannot be calibrated from the other tables (a different machine,
//!   kernel and lock); when H is [`TABLE_2013`] it is calibrated on its own two
//!   [`SEED003_FIT`] cells (`fit`, not scored) and its other 22 cells are `cv`. Its CV
//!   figure is not clean: the box's topology (160 CPUs rather than 80) was decided from
//!   this table's totals, and the key-set mean ([`SEED003_KEY_SETS`]) from its
//!   sensitivity; both are stated, not removed.
//! - Each new box is calibrated as a user calibrates theirs (`sim calibrate --rows 0,1`):
//!   on its own global-hash and 256-slot rows (`fit`) with the built-in template on its
//!   topology and its microarchitecture's line transfers (third amendment); its other
//!   `-b` rows are `cv` ([`predict_new_box_reps`]).
//! - Each machine of [`SAS2024_BOXES`] is calibrated as the 256-CPU box is, on rows 0
//!   and 2 of its own all-node sweep (`fit`), with the built-in template on its
//!   topology and its microarchitecture's line transfers (third amendment); every other
//!   cell of its three tables is `cv`, the node-bound ones
//!   predicted from the all-node profile ([`predict_unseen_table_reps`]).
//! - The mechanisms of the model (pending bit, home snooping, start order, …) were all
//!   chosen knowing every seed table (not the new boxes) and are not re-chosen per fold;
//!   what each one does to the CV error is measured by switching it off (`sim validate
//!   --cv --ablate`).
//!
//! The quoted accuracy is the CV figure: median and 90th percentile of |ln(pred/pub)|
//! over every `cv` cell of all tables pooled (seed 002's one cell is a ratio of rates)
//! and over the new boxes' cells, with the mean signed error, and the interval coverage:
//! the share of `cv` cells whose published figure lies inside their 80 % interval
//! `[lo, hi]`, and the median width ln(hi/lo). Nothing is tuned to it; a change to the
//! model is judged by the CV figure of a run made after the change, and the figure is
//! reported as it comes out.
//!
//! Intervals (`lo`, `hi`: see [`super::uncertainty`]): on the log scale, the spread of
//! three replications with common random numbers (start orders 0, 1, 2; the second and
//! third with the calibrated costs moved by plus and minus one standard error of a refit
//! over the published runs behind the calibration rows), combined with the model error of
//! an unseen machine ([`machine_model_sd`]): the root mean square over the *other*
//! machines of each one's RMS CV residual, every machine counted once, so that no cell's
//! interval is sized by its own machine's error.
//!
//! Amendment of 2026-12-03: the new boxes became held-out units after their figures had
//! been read once (to score the blind 7.2 prediction), with no model choice made on them;
//! a change to the model is judged by the seed tables' cells only. The model error
//! changed from the RMS of all CV cells pooled to the per-machine figure after the new
//! boxes' residuals were seen (the pool let the seed box's 174 cells, predicted from two
//! rows of that same box, size the error of every other machine). It changes interval
//! widths, no prediction.
//!
//! Second amendment of 2026-12-03, committed before any of their cells was predicted:
//! the six tables of [`SAS2024_BOXES`] became held-out units, scored with the model frozen
//! (commit 32866d7) by the rule above; the model error keeps its rule (every held-out
//! machine once) and so counts their two machines too.
//!
//! Third amendment of 2026-12-07 (commit 1b8f23f), committed before any prediction with
//! it: every held-out box other than the seed box takes its microarchitecture's
//! published core-to-core transfers instead of the seed template's
//! ([`BoxTransfers`]: hand-offs three transfers each, home snooping on AMD
//! only). Not blind (the unseen boxes' residuals had been seen), and adopted whatever it
//! gave: it lowered the E5's error and raised the E7's, the Skylake's and the unseen
//! boxes' median (docs/sim.md).

mod cv;
mod metrics;
mod new_boxes;
mod published;
mod sas2024;
mod seed003;
mod seed_box;
mod templates;

pub use crate::workload::perf_keys_per_thread;
pub use cv::{
    CV_TABLES, CrossValidation, is_unseen_box, machine_model_sd, machine_of, validate_cv,
    validate_cv_with,
};
pub use metrics::{
    ColumnOrder, CvStats, HasherRatioStats, RATIO_SIGN_THRESHOLD, RunSpread,
    abs_log_error_quantile, column_order, cv_stats, hasher_ratio_stats, rms_log_error, run_spread,
};
pub use new_boxes::{AbRow, NEW_BOXES, TABLE_A734, predict_new_box_reps, read_ab_table};
pub use published::{
    FUTEX_NUMA_FORCED, FUTEX_NUMA_SEPARATED, MAX_PUBLISHED_RATE, MAX_SIM_BUCKETS, MAX_TABLE_BYTES,
    MIN_PUBLISHED_RATE, PINNING_110, PublishedTable, TABLE_110, TABLE_240, TABLE_240_RUNS,
    TABLE_2013, TABLE_ALGOS, TABLE_NUMA, TABLE_PINNING, hasher_for_column, parse_published,
    read_published, read_runs, read_table_text, read_threads_table,
};
pub use sas2024::{
    SAS2024_BOXES, SAS2024_CALIBRATION_ROWS, SAS2024_TABLES, UnseenBox, calibrate_unseen_box,
    predict_unseen_table_reps, sas2024_box_of, sas2024_present,
};
pub use seed_box::{
    calibrate_seed_box, predict_pinning_reps, predict_published, predict_published_reps,
    refit_on_runs, validate_futex_numa, validate_pinning,
};
pub use seed003::{SEED003_FIT, SEED003_KEY_SETS, validate_seed003, validate_seed003_with};
pub use templates::{
    BoxTransfers, EPYC_2S64_LOCAL_NS, EPYC_2S64_MATRICES, EPYC_2S64_REMOTE_NS,
    GENERIC_SMT_SLOWDOWN, HSX_4S_TRANSFERS, IVB_EP_REMOTE_RATIO, LINE_CHOICES, SKL_2S_TRANSFERS,
    SNB_2S_TRANSFERS, ZEN3_2S_TRANSFERS, seed_box_template, seed002_box, seed003_box_template,
    smt_from_pinning, with_line_choice,
};

use super::SimLength;
use super::profile::MachineProfile;
use crate::sim::SimError;
use serde::Serialize;
use std::path::Path;

/// One predicted cell of a published table.
#[derive(Clone, Debug, Serialize)]
pub struct ValidationRow {
    /// Which published table (a file name of `data/published/`, or a seed-named table).
    pub table: String,
    /// The column: hasher or design.
    pub config: String,
    /// The row: table size (slots; 0 = global hash) or thread count.
    pub x: u64,
    /// The published figure.
    pub published: f64,
    /// The simulator's prediction.
    pub predicted: f64,
    /// Whether this cell was used to fit the profile.
    pub fitted: bool,
    /// Hasher of the column.
    pub algo: String,
    /// Private slots, 0 = global hash (2024 tables; 0 otherwise).
    pub buckets: u64,
    /// predicted / published.
    pub ratio: f64,
    /// `fit` (the cell calibrated the model), `dev` (scored while the model was built) or
    /// `cv` (predicted without its table: `sim validate --cv`).
    pub role: &'static str,
    /// Lower end of the 80 % interval of `predicted` (`--cv` records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lo: Option<f64>,
    /// Upper end of the 80 % interval of `predicted` (`--cv` records).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hi: Option<f64>,
}

/// The role of a cell of plain `sim validate`: every cell not fitted was scored while the
/// model was built (see the module doc).
pub fn plain_role(fitted: bool) -> &'static str {
    if fitted { "fit" } else { "dev" }
}

impl ValidationRow {
    /// A cell of a slots table (`x` is the table size, 0 = the global hash), with the
    /// role of plain `sim validate`; a held-out unit sets its own (`fit` or `cv`).
    pub(crate) fn slots(
        table: &str,
        config: &str,
        algo: &str,
        buckets: u64,
        published: f64,
        predicted: f64,
        fitted: bool,
    ) -> Self {
        ValidationRow {
            table: table.into(),
            config: config.into(),
            x: buckets,
            published,
            predicted,
            fitted,
            algo: algo.into(),
            buckets,
            ratio: predicted / published,
            role: plain_role(fitted),
            lo: None,
            hi: None,
        }
    }

    /// [`ValidationRow::slots`] of a held-out unit of `--cv`: role `fit` or `cv`.
    pub(crate) fn held_out_slots(
        table: &str,
        config: &str,
        algo: &str,
        buckets: u64,
        published: f64,
        predicted: f64,
        fitted: bool,
    ) -> Self {
        ValidationRow {
            role: if fitted { "fit" } else { "cv" },
            ..Self::slots(table, config, algo, buckets, published, predicted, fitted)
        }
    }

    /// A cell of a table whose columns are designs, all run with jhash2 on the global
    /// hash (seed 003's table, seed 002's pair).
    fn jhash2_design(
        table: &str,
        config: &str,
        x: u64,
        published: f64,
        predicted: f64,
        fitted: bool,
    ) -> Self {
        ValidationRow {
            table: table.into(),
            config: config.into(),
            x,
            published,
            predicted,
            fitted,
            algo: "jhash2".into(),
            buckets: 0,
            ratio: predicted / published,
            role: plain_role(fitted),
            lo: None,
            hi: None,
        }
    }
}

/// Everything `sim validate` checks: the 2024 tables (fitted on `rows` of the 240-thread
/// table), seed 003's table, seed 002's pair and seed 000's pinning figures.
/// Returns the fitted 256-CPU profile, seed 003's fitted profile and the cells.
pub fn validate_all(
    data_dir: &Path,
    template: &MachineProfile,
    rows: [usize; 2],
    len: SimLength,
) -> Result<(MachineProfile, MachineProfile, Vec<ValidationRow>), SimError> {
    validate_all_with(data_dir, template, rows, len, &mut |_| {})
}

/// [`validate_all`], saying before each of its five steps what it starts (`step 2 of 5:
/// the 2024 tables`), for a front end's progress line.
pub fn validate_all_with(
    data_dir: &Path,
    template: &MachineProfile,
    rows: [usize; 2],
    len: SimLength,
    step: &mut dyn FnMut(&str),
) -> Result<(MachineProfile, MachineProfile, Vec<ValidationRow>), SimError> {
    step("step 1 of 5: calibrating the 256-CPU box");
    let profile = calibrate_seed_box(data_dir, template, rows, len)?;
    step("step 2 of 5: the 2024 tables");
    let mut out = predict_published(data_dir, &profile, rows, len)?;
    // The template's hash costs, when it states them, hold for seed 003's box too: both
    // stand for "timed here", and stating them makes the whole validation reproducible.
    let old_box = MachineProfile {
        hash_ns: template.hash_ns.clone(),
        ..seed003_box_template()
    };
    step("step 3 of 5: seed 003's 2013 table");
    let (old, cells) = validate_seed003_with(data_dir, &old_box, len)?;
    out.extend(cells);
    step("step 4 of 5: seed 002's futex_numa pair");
    out.push(validate_futex_numa(&profile, len)?);
    step("step 5 of 5: seed 000's pinning figures");
    out.extend(validate_pinning(&profile, len)?);
    Ok((profile, old, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_keys_are_per_thread_arrays() {
        let k = perf_keys_per_thread(3, 16, 1).unwrap();
        assert_eq!(k.len(), 3);
        assert!(k.iter().all(|t| t.len() == 16));
        assert_eq!(k[0][1].address() - k[0][0].address(), 4);
        assert_eq!(
            k[1][0].address() - k[0][0].address(),
            crate::workload::PERF_CHUNK
        );
        assert!(perf_keys_per_thread(3, 2000, 1).is_err());
    }
}

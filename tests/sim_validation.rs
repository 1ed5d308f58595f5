//! The simulator against every published seed table. Expected values are the published
//! figures and the goals of issue 11 (median |ln(predicted/published)| per table), not the
//! simulator's own output; where a goal is missed (docs/sim.md says which and why), the
//! bound asserted is the documented accuracy, and the shape assertions are the
//! published tables' own.

use futexhash::sim::SimLength;
use futexhash::sim::profile::MachineProfile;
use futexhash::sim::validate::*;
use std::path::Path;

fn data() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/published")
}

const LEN: SimLength = SimLength {
    warmup_ops: 100,
    measured_ops: 400,
};

#[test]
fn calibrated_on_two_rows_predicts_the_2024_tables() {
    // The full default length, as `sim validate` runs: shorter runs visit fewer than
    // perf's 1024 futexes per thread after warm-up and are biased.
    let len = SimLength::default();
    // The shipped template states the hash costs, so the figures below do not move with
    // this machine's load: timed here under a parallel test run, they moved the 2024
    // median from 0.038 to 0.052 (docs/sim.md).
    let template = MachineProfile::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines/seed-256cpu-template.toml"),
    )
    .unwrap();
    let profile = calibrate_seed_box(&data(), &template, [0, 2], len).unwrap();
    let rows = predict_published(&data(), &profile, [0, 2], len).unwrap();
    let b240: Vec<&ValidationRow> = rows.iter().filter(|r| r.table == TABLE_240).collect();
    assert_eq!(b240.len(), 18);
    for r in b240.iter().filter(|r| r.fitted) {
        assert!((r.ratio - 1.0).abs() < 0.02, "calibration row {r:?}");
    }
    // Published: per-thread throughput grows with the table from 4 to 1024 slots.
    let growing: Vec<f64> = b240
        .iter()
        .filter(|r| (4..=1024).contains(&r.buckets))
        .map(|r| r.predicted)
        .collect();
    assert!(growing.windows(2).all(|w| w[1] > w[0]), "{growing:?}");
    let free = || rows.iter().filter(|r| !r.fitted);
    // Issue 11's goal: a median of 0.05 over the 2024 tables' unfitted cells (its p90
    // goal, 0.12, is missed: docs/sim.md says where and why).
    let median = abs_log_error_quantile(free(), 0.5);
    assert!(median <= 0.05, "median {median}");
    // A regression bound on the shipped template at issue 11's figure for node-pinned
    // runs predicted from an all-node calibration (median 0.05). It holds with the
    // template's cross-node transfer (266.9 ns) and fails outside about 238-296 ns: the
    // table mostly measures that one figure (docs/sim.md), so passing is not the goal met
    // for a box whose figure is unknown.
    let pinned = abs_log_error_quantile(free().filter(|r| r.table == TABLE_110), 0.5);
    assert!(pinned <= 0.05, "node-pinned median {pinned}");
    assert_eq!(
        rows.iter().filter(|r| r.table == TABLE_ALGOS).count(),
        8 * 17
    );
    assert!(rows.iter().all(|r| r.ratio > 0.6 && r.ratio < 1.6));
    // The runs behind the 240-thread means, as posted: widest at 4 slots (16,911 against
    // 24,145) and 32 slots (163,342 against 127,630).
    let runs = read_runs(&data()).unwrap().expect("runs file shipped");
    let spread = run_spread(&runs, &rows).unwrap();
    assert_eq!(spread.runs, 3);
    assert_eq!(spread.spread[0].0, 4);
    assert!((spread.spread[0].1 - (24145.0f64 / 16911.0).ln()).abs() < 1e-9);
    assert_eq!(spread.spread[1].0, 32);
    assert!((spread.spread[1].1 - (163342.0f64 / 127630.0).ln()).abs() < 1e-9);
    assert_eq!(spread.inside.1, 16);
}

#[test]
fn seed_003_from_two_cells() {
    let (_, rows) = validate_seed003(&data(), LEN).unwrap();
    assert_eq!(rows.len(), 24);
    assert_eq!(rows.iter().filter(|r| r.fitted).count(), 2);
    assert!(rows.iter().all(|r| r.table.contains("2013")));
    // Issue 11's goal: median ≤ 0.15 over the unfitted cells.
    let median = abs_log_error_quantile(rows.iter().filter(|r| !r.fitted), 0.5);
    assert!(median <= 0.15, "median {median}");
    // Published order, part the model holds at every thread count: the large table beats
    // both 256-bucket columns, and large+aligned beats large up to 256 threads. At 512
    // threads (3.2 per CPU, 8 keys per bucket) every line's previous owner is another CPU
    // whatever the layout, so the model has packed and aligned large tables equal (within
    // 1 %), where the seed measured +15 % (the coherence mechanism docs/sim.md names).
    for t in [32, 64, 80, 128, 256, 512] {
        let p = |c: &str| {
            rows.iter()
                .find(|r| r.x == t && r.config == c)
                .unwrap()
                .predicted
        };
        assert!(p("large table") > p("aligned-only"), "{t}");
        assert!(p("large table") > p("baseline"), "{t}");
        if t <= 256 {
            assert!(p("large table+aligned") > p("large table"), "{t}");
        } else {
            assert!(p("large table+aligned") > 0.99 * p("large table"), "{t}");
        }
    }
}

#[test]
fn futex_numa_separating_the_nodes_wins() {
    let profile = calibrate_seed_box(&data(), &seed_box_template(), [0, 2], LEN).unwrap();
    let r = validate_futex_numa(&profile, LEN).unwrap();
    assert!(r.table.contains("futex_numa"));
    // Published: 48.6 M / 16.2 M loops = 3.0.
    assert!((r.published - 3.006).abs() < 0.01, "{r:?}");
    assert!(r.predicted > 2.0, "{r:?}");
}

/// `sim::uncertainty::SEED_BOX_CALIBRATION` and the shipped seed profile's
/// `[calibration_runs]` are what a fresh refit of rows 0 and 2 on each published run gives
/// (the refit's standard error is recomputed here from the three fitted profiles).
#[test]
fn the_seed_box_calibration_spread_is_a_fresh_refit_over_its_runs() {
    use futexhash::sim::uncertainty::SEED_BOX_CALIBRATION;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let template =
        MachineProfile::load(&root.join("data/machines/seed-256cpu-template.toml")).unwrap();
    let (_, fits) = refit_on_runs(&data(), &template, [0, 2], SimLength::default()).unwrap();
    assert_eq!(fits.len(), 3);
    let se = |v: Vec<f64>| {
        let m = v.iter().sum::<f64>() / 3.0;
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt() / 3f64.sqrt()
    };
    let outside = se(fits.iter().map(|p| p.outside_ns.ln()).collect());
    let handoff = se(fits.iter().map(|p| p.handoff_local_ns.ln()).collect());
    assert!(
        (outside - SEED_BOX_CALIBRATION.outside_ln).abs() < 1e-6,
        "{outside}"
    );
    assert!(
        (handoff - SEED_BOX_CALIBRATION.handoff_ln).abs() < 1e-6,
        "{handoff}"
    );
    let shipped = MachineProfile::load(&root.join("data/machines/seed-256cpu.toml")).unwrap();
    let runs = shipped
        .calibration_runs
        .expect("the seed profile carries its runs");
    assert_eq!(runs.runs, 3);
    assert!((runs.outside_se_ln - outside).abs() < 1e-6);
    assert!((runs.handoff_se_ln - handoff).abs() < 1e-6);
    // The first run's 4-slot cell is 30 % below the other two: its fit has the longer
    // hand-off and the shorter outside time, so the two move in opposite directions.
    assert_eq!(runs.opposite, SEED_BOX_CALIBRATION.sign < 0.0);
    assert!(runs.opposite);
}

//! Prints the seed box's calibration spread (`sim::uncertainty::SEED_BOX_CALIBRATION`):
//! rows 0 and 2 of the 240-thread table refitted on each published run alone, with the
//! shipped template (stated hash costs, so the output is the same on every machine).
//!
//! `cargo run --release --example sim_refit`

use futexhash::sim::SimLength;
use futexhash::sim::profile::MachineProfile;
use futexhash::sim::validate::refit_on_runs;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let template =
        MachineProfile::load(&root.join("data/machines/seed-256cpu-template.toml")).unwrap();
    let (spread, fits) = refit_on_runs(
        &root.join("data/published"),
        &template,
        [0, 2],
        SimLength::default(),
    )
    .unwrap();
    for (k, p) in fits.iter().enumerate() {
        println!(
            "run {}: outside_ns = {:.3}, handoff_local_ns = {:.3}",
            k + 1,
            p.outside_ns,
            p.handoff_local_ns
        );
    }
    println!("{spread:?}");
}

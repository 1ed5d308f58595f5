//! Two more machines the model was not built on, scored by a protocol committed before
//! any prediction of them was made (docs/sim.md, "The second amendment").
//!
//! The figures are Sebastian Andrzej Siewior's `perf bench futex hash` runs of a 4-socket
//! Xeon E7-8890 v3 (144 CPUs, 4 nodes) at 140 threads and a 2-socket Xeon E5-2650 (32
//! CPUs, 2 nodes) at 28 threads (LKML, 2024-11-01, Message-ID
//! `20241101110810.R3AnEqdu@linutronix.de`, in the RFC v2 thread of the process-private
//! hash that the 256-CPU box's tables come from: the same kernel series and the same
//! patched `perf`), transcribed in `data/published/sas2024-*.csv`. Each machine has three
//! tables: a slots sweep on every node, the same sweep with the threads bound to each node
//! in turn, and an eight-hasher table.
//!
//! Each machine is calibrated as a user calibrates theirs and as the 256-CPU box is: on
//! rows 0 and 2 of its all-node sweep (the global hash and 4 slots, `fit`), with the
//! built-in template on the machine's topology and its microarchitecture's published line
//! transfers (third amendment, [`BoxTransfers`]); every other cell of its three tables is
//! predicted (`cv`): the node-bound cells from the all-node profile with the threads on
//! that node's CPUs. The hash cost is the template's stated one, as for the other new
//! boxes ([`super::new_boxes`]), so that the validation is reproducible.
//!
//! The model was frozen (commit 32866d7) before these tables were scored: none of its
//! choices was made on them, and none may be.

use super::ValidationRow;
use super::published::{hasher_for_column, read_published};
use super::templates::{BoxTransfers, HSX_4S_TRANSFERS, SNB_2S_TRANSFERS};
use crate::hashers::{Builtin, HashKey, SharedHasher};
use crate::sim::SimError;
use crate::sim::calibrate::{DEFAULT_NOISE, Observation, Scenario, calibrate, global_hash_size};
use crate::sim::hashcost::hash_cost;
use crate::sim::profile::MachineProfile;
use crate::sim::sweep::parallel_map;
use crate::sim::uncertainty::{CalibrationSpread, replication_profiles};
use crate::sim::{Design, Mechanisms, SimLength, SimOp, simulate};
use crate::workload::{PERF_FUTEXES, perf_keys_per_thread};
use std::path::Path;

/// One machine of the 2024-11-01 message and its three tables.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnseenBox {
    /// The machine's name in the validation's output (its tables' common prefix).
    pub machine: &'static str,
    /// The all-node slots sweep (`buckets,ops/sec`; bucket 0 = the global hash).
    pub sweep: &'static str,
    /// The same sweep with the threads bound to one node (`buckets,node0,node1,...`).
    pub node_bound: &'static str,
    /// Slots × hasher (`buckets,jhash2 (regular),...`).
    pub hashers: &'static str,
    /// Threads of the sweep and the hasher table.
    pub threads: u32,
    /// Threads of each node-bound run.
    pub node_threads: u32,
    /// CPUs of the machine.
    pub cpus: u32,
    /// NUMA nodes of the machine.
    pub nodes: u32,
    /// Its microarchitecture's published line transfers (docs/sim.md, "A third
    /// amendment"), in place of the seed template's.
    pub transfers: BoxTransfers,
}

/// The two machines, as the message states them ("Intel(R) Xeon(R) CPU E7-8890 v3, 144
/// CPUs, 4 nodes", "Xeon(R) CPU E5-2650 0, 32CPUs in total", whose node-bound table has
/// nodes 0 and 1).
pub const SAS2024_BOXES: [UnseenBox; 2] = [
    UnseenBox {
        machine: "sas2024-e7-8890v3",
        sweep: "sas2024-e7-8890v3-140threads.csv",
        node_bound: "sas2024-e7-8890v3-34threads-per-node.csv",
        hashers: "sas2024-e7-8890v3-algos-140threads.csv",
        threads: 140,
        node_threads: 34,
        cpus: 144,
        nodes: 4,
        transfers: HSX_4S_TRANSFERS,
    },
    UnseenBox {
        machine: "sas2024-e5-2650",
        sweep: "sas2024-e5-2650-28threads.csv",
        node_bound: "sas2024-e5-2650-14threads-per-node.csv",
        hashers: "sas2024-e5-2650-algos-28threads.csv",
        threads: 28,
        node_threads: 14,
        cpus: 32,
        nodes: 2,
        transfers: SNB_2S_TRANSFERS,
    },
];

/// Every table of [`SAS2024_BOXES`], in output order: each is a held-out unit of its own.
pub const SAS2024_TABLES: [&str; 6] = [
    SAS2024_BOXES[0].sweep,
    SAS2024_BOXES[0].node_bound,
    SAS2024_BOXES[0].hashers,
    SAS2024_BOXES[1].sweep,
    SAS2024_BOXES[1].node_bound,
    SAS2024_BOXES[1].hashers,
];

/// The sweep rows the calibration fits, as `sim calibrate --rows 0,2` (the global hash
/// and 4 slots), as the 256-CPU box's.
pub const SAS2024_CALIBRATION_ROWS: [usize; 2] = [0, 2];

/// The machine a table of [`SAS2024_TABLES`] was measured on.
pub fn sas2024_box_of(table: &str) -> Option<&'static UnseenBox> {
    SAS2024_BOXES
        .iter()
        .find(|b| [b.sweep, b.node_bound, b.hashers].contains(&table))
}

/// Whether all three tables of `b` are in `data_dir` (a directory of a user's own tables
/// may lack them: they are then not scored).
pub fn sas2024_present(data_dir: &Path, b: &UnseenBox) -> bool {
    [b.sweep, b.node_bound, b.hashers]
        .iter()
        .all(|f| data_dir.join(f).is_file())
}

fn scenario(
    threads: u32,
    cpus: Vec<u32>,
    all_cpus: u32,
    mech: Mechanisms,
) -> Result<Scenario, SimError> {
    Ok(Scenario {
        keys_per_thread: perf_keys_per_thread(threads as usize, PERF_FUTEXES, 1)
            .map_err(SimError::BadRequest)?,
        cpus,
        global_buckets: global_hash_size(all_cpus),
        op: SimOp::WaitFail,
        design: Design::default(),
        global_nodes: 1,
        mechanisms: mech,
    })
}

fn jhash2() -> SharedHasher {
    Builtin::by_name("jhash2", HashKey::DEFAULT)
        .expect("registry")
        .shared()
}

/// Calibrates `b` as a user calibrates theirs (`sim calibrate --rows 0,2 --threads T
/// --cpus C --nodes N` on its sweep, `template` on its topology with `b.transfers`); the
/// profile keeps the template's stated hash costs for the predictions.
pub fn calibrate_unseen_box(
    data_dir: &Path,
    template: &MachineProfile,
    b: &UnseenBox,
    len: SimLength,
    mech: Mechanisms,
) -> Result<MachineProfile, SimError> {
    let box_template = b.transfers.apply(&template.on_topology(b.cpus, b.nodes)?);
    let sweep = read_published(&data_dir.join(b.sweep))?;
    let obs = SAS2024_CALIBRATION_ROWS
        .iter()
        .map(|&i| {
            let (buckets, rates) = sweep.rows.get(i).ok_or_else(|| {
                SimError::Data(format!("{}: no row {i} to calibrate on", b.sweep))
            })?;
            Ok(Observation {
                buckets: *buckets,
                ops_per_sec: rates[0],
                noise: DEFAULT_NOISE,
            })
        })
        .collect::<Result<Vec<_>, SimError>>()?;
    let sc = scenario(b.threads, (0..b.cpus).collect(), b.cpus, mech)?;
    let h = jhash2();
    let ns = hash_cost(&box_template, &h)?.ns;
    let mut fitted = calibrate(&box_template, &sc, &h, ns, &obs, len)?.profile;
    fitted.hash_ns = box_template.hash_ns.clone();
    fitted.name = format!("{}, calibrated on rows 0 and 2 of {}", b.machine, b.sweep);
    Ok(fitted)
}

/// The cells of `table` (one of [`SAS2024_TABLES`]) predicted with `fitted` (the profile
/// of [`calibrate_unseen_box`]) in three replications: replication `r` with start order
/// `r` and the calibrated costs moved by `spread`, as every user profile's. The sweep's
/// calibration rows are `fit`, every other cell `cv`.
pub fn predict_unseen_table_reps(
    data_dir: &Path,
    table: &str,
    fitted: &MachineProfile,
    spread: &CalibrationSpread,
    len: SimLength,
    mech: Mechanisms,
) -> Result<Vec<(ValidationRow, Vec<f64>)>, SimError> {
    let b = sas2024_box_of(table)
        .ok_or_else(|| SimError::BadRequest(format!("'{table}' is not a sas2024 table")))?;
    let published = read_published(&data_dir.join(table))?;
    // Per column: (its label, hasher, scenario index); the node-bound table's columns are
    // nodes, every other column a hasher on all nodes.
    let mut scenarios = Vec::new();
    let mut columns: Vec<(String, &'static str, usize)> = Vec::new();
    if table == b.node_bound {
        for header in &published.columns {
            let node: u32 = header
                .strip_prefix("node")
                .and_then(|n| n.parse().ok())
                .filter(|&n| n < b.nodes)
                .ok_or_else(|| {
                    SimError::Data(format!(
                        "{table}: column '{header}' is not a node of the box"
                    ))
                })?;
            scenarios.push(scenario(
                b.node_threads,
                fitted.node_cpus(node),
                b.cpus,
                mech,
            )?);
            columns.push((header.clone(), "jhash2", scenarios.len() - 1));
        }
    } else {
        scenarios.push(scenario(b.threads, (0..b.cpus).collect(), b.cpus, mech)?);
        for header in &published.columns {
            let name = hasher_for_column(header)
                .ok_or_else(|| SimError::Data(format!("{table}: unknown column '{header}'")))?;
            columns.push((name.to_string(), name, 0));
        }
    }
    let mut hashers: Vec<(&'static str, SharedHasher, f64)> = Vec::new();
    for &(_, name, _) in &columns {
        if !hashers.iter().any(|(n, _, _)| *n == name) {
            let h = Builtin::by_name(name, HashKey::DEFAULT)
                .expect("registry")
                .shared();
            let ns = hash_cost(fitted, &h)?.ns;
            hashers.push((name, h, ns));
        }
    }
    // Every cell as a job: (column, row index).
    let jobs: Vec<(usize, usize)> = (0..columns.len())
        .flat_map(|c| (0..published.rows.len()).map(move |i| (c, i)))
        .collect();
    let profiles = replication_profiles(fitted, spread);
    let reps = profiles.len();
    let rates = parallel_map(jobs.len() * reps, |k| {
        let (c, i) = jobs[k / reps];
        let (_, name, si) = &columns[c];
        let (_, h, ns) = hashers.iter().find(|(n, _, _)| n == name).expect("listed");
        let mut w = scenarios[*si].workload(h, published.rows[i].0);
        w.start_order = (k % reps) as u64;
        simulate(&profiles[k % reps], &w, *ns, len).ops_per_sec
    });
    Ok(jobs
        .iter()
        .enumerate()
        .map(|(j, &(c, i))| {
            let v = rates[j * reps..(j + 1) * reps].to_vec();
            let (buckets, row) = &published.rows[i];
            let pub_rate = row[c];
            let fit = table == b.sweep && SAS2024_CALIBRATION_ROWS.contains(&i);
            let (label, name, _) = &columns[c];
            (
                ValidationRow::held_out_slots(table, label, name, *buckets, pub_rate, v[0], fit),
                v,
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/published")
    }

    #[test]
    fn the_shipped_tables_hold_the_message_s_figures() {
        // Figures of the LKML message of 2024-11-01 (20241101110810.R3AnEqdu@linutronix.de),
        // typed from it: E7 "0 2,644,742.8", "131072 2,733,504.2"; node 3 at 4 slots
        // "361,830.2"; E5 hsiphash at 16384 "2,350,706.0"; E5 node 1 at 0 "2,765,630.0".
        let dir = shipped();
        let e7 = read_published(&dir.join(SAS2024_BOXES[0].sweep)).unwrap();
        assert_eq!(e7.rows.len(), 18);
        assert_eq!(e7.rows[0], (0, vec![2_644_742.8]));
        assert_eq!(e7.rows[17], (131072, vec![2_733_504.2]));
        let nodes = read_published(&dir.join(SAS2024_BOXES[0].node_bound)).unwrap();
        assert_eq!(nodes.columns, ["node0", "node1", "node2", "node3"]);
        assert_eq!(nodes.rows[2].0, 4);
        assert_eq!(nodes.rows[2].1[3], 361_830.2);
        let e5h = read_published(&dir.join(SAS2024_BOXES[1].hashers)).unwrap();
        assert_eq!(e5h.columns.len(), 8);
        assert_eq!(e5h.rows.last().unwrap().0, 16384);
        assert_eq!(e5h.rows.last().unwrap().1[7], 2_350_706.0);
        let e5n = read_published(&dir.join(SAS2024_BOXES[1].node_bound)).unwrap();
        assert_eq!(e5n.rows[0], (0, vec![2_761_709.8, 2_765_630.0]));
        for b in &SAS2024_BOXES {
            assert!(sas2024_present(&dir, b), "{}", b.machine);
            // 34 threads fit on one of four nodes of 144 CPUs, 14 on one of two of 32.
            assert!(b.node_threads <= b.cpus / b.nodes && b.threads <= b.cpus);
        }
    }

    /// The seed template as `sim validate --cv --template` reads it (stated hash costs).
    fn seed_template_file() -> MachineProfile {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines");
        MachineProfile::load(&dir.join("seed-256cpu-template.toml")).unwrap()
    }

    /// `data/machines/{name}-template.toml` is the box's template as the validation builds
    /// it, and `data/machines/{name}.toml` (written by `sim calibrate` on that template)
    /// holds the validation's own calibration of the box: the profiles the second exam
    /// predicts with (docs/sim.md) are the cross-validation's, not refits.
    fn check_shipped_profile(b: &UnseenBox, name: &str) {
        let machines = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/machines");
        let template = seed_template_file();
        let box_template = b
            .transfers
            .apply(&template.on_topology(b.cpus, b.nodes).unwrap());
        let shipped_template =
            MachineProfile::load(&machines.join(format!("{name}-template.toml"))).unwrap();
        assert_eq!(
            MachineProfile {
                name: box_template.name.clone(),
                ..shipped_template
            },
            box_template
        );
        let len = SimLength::default();
        let fitted =
            calibrate_unseen_box(&shipped(), &template, b, len, Mechanisms::default()).unwrap();
        let shipped_profile = MachineProfile::load(&machines.join(format!("{name}.toml"))).unwrap();
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
        assert!(close(shipped_profile.outside_ns, fitted.outside_ns));
        assert!(close(
            shipped_profile.handoff_local_ns,
            fitted.handoff_local_ns
        ));
        assert!(close(
            shipped_profile.handoff_remote_ns,
            fitted.handoff_remote_ns
        ));
        assert!(shipped_profile.calibration_rms_ln.is_some());
        // Every other field exactly (the name says how it was made, in `sim calibrate`'s
        // words; the fitted figures to the digits TOML keeps, above).
        assert_eq!(
            MachineProfile {
                name: fitted.name.clone(),
                outside_ns: fitted.outside_ns,
                handoff_local_ns: fitted.handoff_local_ns,
                handoff_remote_ns: fitted.handoff_remote_ns,
                calibration_rms_ln: fitted.calibration_rms_ln,
                ..shipped_profile.clone()
            },
            fitted
        );
        assert_eq!(
            (
                shipped_profile.line_miss_ns,
                shipped_profile.line_miss_remote_ns
            ),
            (b.transfers.local_ns, Some(b.transfers.remote_ns))
        );
        assert_eq!(shipped_profile.hash_ns, template.hash_ns);
    }

    #[test]
    fn the_shipped_e5_profile_is_the_cross_validation_s_calibration() {
        check_shipped_profile(&SAS2024_BOXES[1], "e5-2650-2s");
    }

    #[test]
    fn the_e5_box_refits_its_two_rows_and_predicts_every_other_cell() {
        // The validation's own run length (28 threads: cheap; shorter runs missed the
        // 4-slot row, 7 threads a lock, by 2-3 %): the fit is checked against the
        // published figures of its own two rows (the calibration solves for them), and
        // the roles against the protocol (docs/sim.md, "The second amendment"): rows 0
        // and 2 of the sweep `fit`, every other cell of the three tables `cv`.
        let dir = shipped();
        let b = &SAS2024_BOXES[1];
        let len = SimLength::default();
        let template = super::super::templates::seed_box_template();
        let p = calibrate_unseen_box(&dir, &template, b, len, Mechanisms::default()).unwrap();
        assert_eq!((p.cpus, p.nodes), (32, 2));
        let spread = crate::sim::uncertainty::SEED_BOX_CALIBRATION;
        let sweep =
            predict_unseen_table_reps(&dir, b.sweep, &p, &spread, len, Mechanisms::default())
                .unwrap();
        assert_eq!(sweep.len(), 15);
        for (r, reps) in &sweep {
            assert_eq!(reps.len(), 3);
            let fit = r.x == 0 || r.x == 4;
            assert_eq!((r.fitted, r.role), (fit, if fit { "fit" } else { "cv" }));
            if fit {
                // 2,344,905.8 and 168,243.0 in the message.
                assert!((r.ratio - 1.0).abs() < 0.02, "{} slots: {}", r.x, r.ratio);
            }
        }
        let nodes =
            predict_unseen_table_reps(&dir, b.node_bound, &p, &spread, len, Mechanisms::default())
                .unwrap();
        assert_eq!(nodes.len(), 2 * 15);
        assert!(nodes.iter().all(|(r, _)| r.role == "cv" && !r.fitted));
        assert_eq!(nodes[15].0.config, "node1");
        assert_eq!(nodes[15].0.published, 2_765_630.0);
    }

    #[test]
    fn every_table_belongs_to_its_machine() {
        for t in SAS2024_TABLES {
            let b = sas2024_box_of(t).unwrap();
            assert!(t.starts_with(b.machine), "{t}");
        }
        assert!(sas2024_box_of("buckets-240threads-256cpu.csv").is_none());
    }
}

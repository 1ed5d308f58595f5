//! Simulated sweeps (threads × table sizes × hashers) with results as [`BenchRecord`]s
//! (`backend = "sim"`), so a simulated table lines up field by field with a measured one.

use super::calibrate::{Scenario, global_hash_size};
use super::profile::MachineProfile;
use super::validate::perf_keys_per_thread;
use super::{SimLength, SimOp, SimResult, SimWorkload, simulate};
use crate::hashers::{KeyHasher, SharedHasher};
use crate::throughput::record::BenchRecord;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimSweep {
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Futex words per thread.
    pub futexes: usize,
    /// Private hash slots; 0 = the global hash of `roundup_pow_of_two(256 × CPUs)`.
    pub buckets: Vec<u64>,
    /// Hashers.
    pub hashers: Vec<SharedHasher>,
    /// The loop.
    pub op: SimOp,
    /// Pin the threads to the CPUs of this node only (as `numactl -N`).
    pub node: Option<u32>,
    /// Run length.
    pub len: SimLength,
    /// Key-set seed.
    pub seed: u64,
}

impl SimSweep {
    /// Number of simulated configurations.
    pub fn configurations(&self) -> usize {
        self.threads.len() * self.buckets.len() * self.hashers.len()
    }
}

/// Runs every configuration of `sweep` on `profile`; `tick` is called after each.
pub fn run_sweep(
    profile: &MachineProfile,
    sweep: &SimSweep,
    mut tick: impl FnMut(),
) -> Result<Vec<BenchRecord>, String> {
    profile.validate()?;
    let cpus: Vec<u32> = match sweep.node {
        Some(n) if n >= profile.nodes => {
            return Err(format!(
                "node {n} does not exist: the profile has {} node(s)",
                profile.nodes
            ));
        }
        Some(n) => profile.node_cpus(n),
        None => (0..profile.cpus).collect(),
    };
    let mut out = Vec::with_capacity(sweep.configurations());
    for &threads in &sweep.threads {
        let scenario = Scenario {
            keys_per_thread: perf_keys_per_thread(threads, sweep.futexes, sweep.seed)?,
            cpus: cpus.clone(),
            global_buckets: global_hash_size(profile.cpus),
            op: sweep.op,
        };
        for &buckets in &sweep.buckets {
            for h in &sweep.hashers {
                let r = simulate(
                    profile,
                    &scenario.workload(h, buckets),
                    profile.hash_cost(h.name()),
                    sweep.len,
                );
                out.push(sim_record(
                    &r,
                    h.name(),
                    if buckets == 0 { "global" } else { "private" },
                    buckets,
                    threads,
                    sweep.futexes,
                    match sweep.op {
                        SimOp::WaitFail => "hash",
                        SimOp::WakeNone => "wake",
                    },
                ));
                tick();
            }
        }
    }
    Ok(out)
}

/// A simulated run as a bench record (`backend = "sim"`, no process, full CPU share).
fn sim_record(
    r: &SimResult,
    algo: &str,
    table: &str,
    buckets: u64,
    threads: usize,
    futexes: usize,
    workload: &'static str,
) -> BenchRecord {
    BenchRecord {
        backend: "sim".into(),
        algo: algo.into(),
        table: table.into(),
        layout: "aligned".into(),
        buckets,
        threads,
        futexes,
        runtime_s: r.simulated_secs,
        ops_per_sec: r.ops_per_sec,
        ops_per_sec_total: r.ops_per_sec_total,
        stderr_pct: r.stderr_pct,
        latency_ns_p50: r.latency_ns_p50.round() as u64,
        latency_ns_p99: r.latency_ns_p99.round() as u64,
        latency_ns_p999: r.latency_ns_p999.round() as u64,
        ops_per_cpu_sec: r.ops_per_sec,
        cpu_share: 1.0,
        workload,
        shared: false,
        slots_applied: None,
        pid: 0,
        unexpected: 0,
        lock_ops_per_sec: None,
        victim_latency_ns_p50: None,
        victim_latency_ns_p99: None,
        victim_latency_ns_p999: None,
        victim_buckets: None,
        shared_buckets: None,
        noisy_ops_per_sec: None,
    }
}

/// The seed's `futex_numa` contention test (seed thread 002: `numactl -N n ./futex_numa
/// -c10 -t2 -n0 -N…` with `FUTEX_SQUASH`, every node reduced to one bucket): in each node,
/// `contenders_per_node` threads pinned to that node's CPUs loop on failing waits on their
/// node's lock futex. With `same_node`, every node's futex is forced to hash to node 0
/// (`-N0` on both), so all contenders share one bucket; otherwise each node has its own.
/// The record's `ops_per_sec` is loops per contender per second, `buckets` the number of
/// distinct buckets used.
pub fn run_lock_test(
    profile: &MachineProfile,
    contenders_per_node: usize,
    same_node: bool,
    len: SimLength,
) -> Result<BenchRecord, String> {
    profile.validate()?;
    if contenders_per_node == 0 {
        return Err("contenders per node must be at least 1".into());
    }
    let mut buckets_per_thread = Vec::new();
    let mut cpu_of_thread = Vec::new();
    for node in 0..profile.nodes {
        let cpus = profile.node_cpus(node);
        for i in 0..contenders_per_node {
            buckets_per_thread.push(vec![if same_node { 0 } else { node }]);
            cpu_of_thread.push(cpus[i % cpus.len()]);
        }
    }
    let locks = if same_node { 1 } else { profile.nodes as usize };
    let w = SimWorkload {
        op: SimOp::WaitFail,
        buckets_per_thread,
        cpu_of_thread,
        locks,
    };
    let r = simulate(profile, &w, profile.hash_cost("jhash2"), len);
    Ok(sim_record(
        &r,
        "jhash2",
        "numa",
        locks as u64,
        contenders_per_node * profile.nodes as usize,
        1,
        "lock",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::Builtin;
    use crate::hashers::HashKey;

    #[test]
    fn sweep_produces_one_record_per_configuration() {
        let p = super::super::validate::seed_box_template();
        let s = SimSweep {
            threads: vec![8, 16],
            futexes: 64,
            buckets: vec![0, 2, 1024],
            hashers: vec![
                Builtin::by_name("jhash2", HashKey::DEFAULT)
                    .unwrap()
                    .shared(),
                Builtin::by_name("crc32", HashKey::DEFAULT)
                    .unwrap()
                    .shared(),
            ],
            op: SimOp::WaitFail,
            node: Some(1),
            len: SimLength {
                warmup_ops: 10,
                measured_ops: 100,
            },
            seed: 1,
        };
        let mut ticks = 0;
        let recs = run_sweep(&p, &s, || ticks += 1).unwrap();
        assert_eq!(recs.len(), 12);
        assert_eq!(ticks, 12);
        assert!(
            recs.iter()
                .all(|r| r.backend == "sim" && r.ops_per_sec > 0.0)
        );
        let two = recs
            .iter()
            .find(|r| r.buckets == 2 && r.threads == 16)
            .unwrap();
        let big = recs
            .iter()
            .find(|r| r.buckets == 1024 && r.threads == 16)
            .unwrap();
        assert!(big.ops_per_sec > two.ops_per_sec);
        let bad = SimSweep {
            node: Some(5),
            ..s.clone()
        };
        assert!(run_sweep(&p, &bad, || {}).unwrap_err().contains("node 5"));
    }

    #[test]
    fn separating_the_nodes_beats_one_shared_bucket() {
        // Seed 002 measured 3.0x on a 2-node IVB-EP; the model must at least show the
        // direction and that the shared case is bounded by one lock's throughput.
        let p = super::super::validate::seed_box_template();
        let len = SimLength {
            warmup_ops: 50,
            measured_ops: 400,
        };
        let shared = run_lock_test(&p, 10, true, len).unwrap();
        let split = run_lock_test(&p, 10, false, len).unwrap();
        assert_eq!((shared.buckets, split.buckets, shared.threads), (1, 2, 20));
        assert!(
            split.ops_per_sec > 2.0 * shared.ops_per_sec,
            "{split:?} {shared:?}"
        );
        let one_lock = 1e9 / (p.hold_ns + p.handoff_local_ns);
        assert!(shared.ops_per_sec_total <= one_lock * 1.01);
        assert!(run_lock_test(&p, 0, true, len).is_err());
    }
}

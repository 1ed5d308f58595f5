//! Fitting a machine profile to measured `perf bench futex hash` rows, and the bridge from
//! keys + hasher + table size to the simulator's per-thread bucket sequences.
//!
//! Two free parameters are fitted, one per calibration row: `outside_ns` (the cost of an
//! operation nobody contends for) to the row with the most buckets, and the lock hand-off
//! (`handoff_local_ns`, with `handoff_remote_ns` kept at the profile's remote/local ratio)
//! to the row with the fewest. Each is found by bisection on the simulated rate, which is
//! monotone in both, alternating until both rows are matched to 0.1 %. `hold_ns`, the
//! remote/local ratio and the hash costs are taken from the template profile.

use super::profile::MachineProfile;
use super::{SimLength, SimOp, SimWorkload, round_robin_cpus, simulate};
use crate::hashers::KeyHasher;
use crate::key::FutexKey;

/// One measured row: table size (0 = the global hash) and perf's mean per-thread rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// Private hash slots, or 0 for the global hash.
    pub buckets: u64,
    /// Mean per-thread operations per second.
    pub ops_per_sec: f64,
}

/// What is simulated: whose keys, hashed how, on which CPUs.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Each thread's futex keys, visited in order as perf's loop does.
    pub keys_per_thread: Vec<Vec<FutexKey>>,
    /// CPUs the threads are pinned to, round-robin.
    pub cpus: Vec<u32>,
    /// Size of the global hash (used for `buckets = 0`).
    pub global_buckets: u64,
    /// The loop the threads run.
    pub op: SimOp,
}

impl Scenario {
    /// The simulator input for `hasher` at table size `buckets` (0 = global), `mask`
    /// reduction as the kernel does.
    pub fn workload(&self, hasher: &dyn KeyHasher, buckets: u64) -> SimWorkload {
        let size = if buckets == 0 {
            self.global_buckets
        } else {
            buckets
        };
        debug_assert!(size.is_power_of_two());
        let mask = (size - 1) as u32;
        let buckets_per_thread = self
            .keys_per_thread
            .iter()
            .map(|keys| {
                let mut out = vec![0u32; keys.len()];
                hasher.hash_many(keys, &mut out);
                out.iter_mut().for_each(|h| *h &= mask);
                out
            })
            .collect();
        SimWorkload {
            op: self.op,
            buckets_per_thread,
            cpu_of_thread: round_robin_cpus(self.keys_per_thread.len(), &self.cpus),
            locks: size as usize,
        }
    }
}

/// `roundup_pow_of_two(256 × cpus)`: the kernel's global hash size (`futex_init()`).
pub fn global_hash_size(cpus: u32) -> u64 {
    (256 * u64::from(cpus.max(1))).next_power_of_two()
}

/// Bisection for the `x` in `[lo, hi]` where the decreasing function `f` crosses `target`.
fn solve_decreasing(mut lo: f64, mut hi: f64, target: f64, f: impl Fn(f64) -> f64) -> f64 {
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-3 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Fits `outside_ns` and the hand-off costs of `template` so that the simulation of
/// `scenario` with `hasher` reproduces the two observations.
pub fn calibrate(
    template: &MachineProfile,
    scenario: &Scenario,
    hasher: &dyn KeyHasher,
    rows: [Observation; 2],
    len: SimLength,
) -> Result<MachineProfile, String> {
    template.validate()?;
    let size = |o: &Observation| {
        if o.buckets == 0 {
            scenario.global_buckets
        } else {
            o.buckets
        }
    };
    let (wide, narrow) = if size(&rows[0]) >= size(&rows[1]) {
        (rows[0], rows[1])
    } else {
        (rows[1], rows[0])
    };
    if size(&wide) == size(&narrow) {
        return Err("the two calibration rows must have different table sizes".into());
    }
    for o in rows {
        if !(o.ops_per_sec.is_finite() && o.ops_per_sec > 0.0) {
            return Err(format!(
                "row with {} buckets has no positive rate",
                o.buckets
            ));
        }
    }
    let ratio = template.remote_ratio();
    let hash_ns = template.hash_cost(hasher.name());
    let w_wide = scenario.workload(hasher, wide.buckets);
    let w_narrow = scenario.workload(hasher, narrow.buckets);
    let mut p = template.clone();
    let rate = |p: &MachineProfile, w: &SimWorkload| simulate(p, w, hash_ns, len).ops_per_sec;
    for _ in 0..12 {
        let cap = 1e9 / wide.ops_per_sec * 4.0;
        p.outside_ns = solve_decreasing(0.0, cap, wide.ops_per_sec, |x| {
            let mut q = p.clone();
            q.outside_ns = x;
            rate(&q, &w_wide)
        });
        let cap = 1e9 / narrow.ops_per_sec * 4.0;
        let local = solve_decreasing(0.0, cap, narrow.ops_per_sec, |y| {
            let mut q = p.clone();
            q.handoff_local_ns = y;
            q.handoff_remote_ns = y * ratio;
            rate(&q, &w_narrow)
        });
        p.handoff_local_ns = local;
        p.handoff_remote_ns = local * ratio;
        let e1 = rate(&p, &w_wide) / wide.ops_per_sec - 1.0;
        let e2 = rate(&p, &w_narrow) / narrow.ops_per_sec - 1.0;
        if e1.abs() < 1e-3 && e2.abs() < 1e-3 {
            return Ok(p);
        }
    }
    let e1 = rate(&p, &w_wide) / wide.ops_per_sec - 1.0;
    let e2 = rate(&p, &w_narrow) / narrow.ops_per_sec - 1.0;
    if e1.abs() < 0.02 && e2.abs() < 0.02 {
        Ok(p)
    } else {
        Err(format!(
            "could not fit both rows (residual errors {:+.1}% and {:+.1}%): the rows may be \
             inconsistent with this topology, hold time or thread count, or the simulated run too short (raise --ops)",
            e1 * 100.0,
            e2 * 100.0
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::Builtin;
    use crate::hashers::HashKey;

    fn scenario(threads: usize, cpus: u32) -> Scenario {
        let keys = (0..threads)
            .map(|t| {
                (0..64)
                    .map(|i| {
                        FutexKey::private(
                            0xffff_8880_0000_0000,
                            0x5555_0000_0000 + (t as u64 * 4112) + 4 * i,
                        )
                        .unwrap()
                    })
                    .collect()
            })
            .collect();
        Scenario {
            keys_per_thread: keys,
            cpus: (0..cpus).collect(),
            global_buckets: global_hash_size(cpus),
            op: SimOp::WaitFail,
        }
    }

    #[test]
    fn global_size_is_roundup_of_256_per_cpu() {
        assert_eq!(global_hash_size(2), 512);
        assert_eq!(global_hash_size(256), 65536);
        assert_eq!(global_hash_size(80), 32768);
    }

    #[test]
    fn calibration_recovers_the_parameters_it_was_generated_with() {
        let truth = MachineProfile {
            name: "truth".into(),
            cpus: 32,
            nodes: 2,
            outside_ns: 350.0,
            hold_ns: 60.0,
            handoff_local_ns: 250.0,
            handoff_remote_ns: 500.0,
            line_miss_ns: 40.0,
            hash_ns: Default::default(),
        };
        let sc = scenario(32, 32);
        let h = Builtin::by_name("jhash2", HashKey::DEFAULT)
            .unwrap()
            .shared();
        let len = SimLength {
            warmup_ops: 50,
            measured_ops: 400,
        };
        let obs = |b| Observation {
            buckets: b,
            ops_per_sec: simulate(&truth, &sc.workload(&h, b), 0.0, len).ops_per_sec,
        };
        let mut template = truth.clone();
        template.outside_ns = 1.0;
        template.handoff_local_ns = 1.0;
        template.handoff_remote_ns = 2.0;
        let fit = calibrate(&template, &sc, &h, [obs(0), obs(2)], len).unwrap();
        assert!((fit.outside_ns / 350.0 - 1.0).abs() < 0.02, "{fit:?}");
        assert!((fit.handoff_local_ns / 250.0 - 1.0).abs() < 0.05, "{fit:?}");
        let same = calibrate(&template, &sc, &h, [obs(4), obs(4)], len);
        assert!(same.is_err());
    }
}

//! Kernel-version presets of the simulated design, each named by the first release with
//! that design, with the commits that made it and the structures it implies; and the
//! private hash's sizing rules.
//!
//! Sources (Linux `kernel/futex.c`, from 5.17 `kernel/futex/core.c`, `futex.h`,
//! `waitwake.c`). "Read" means the code or the commit was read for this module (where:
//! below); "issue text" means only the project's issue 24 gives it.
//! - 3.12: `futex_queues[1 << FUTEX_HASHBITS]`, `FUTEX_HASHBITS` = 8 (256 buckets), the
//!   24-byte `struct futex_hash_bucket` (spinlock, padding, `plist_head`) packed; x86
//!   ticket spinlocks. Read: `kernel/futex.c` of 3.0.8 (`FUTEX_HASHBITS (CONFIG_BASE_SMALL
//!   ? 4 : 8)`, the static `futex_queues` array).
//! - 3.13 (Davidlohr Bueso's series of Nov 2013 – Jan 2014, seed 003): the table is sized
//!   `roundup_pow_of_two(256 × num_possible_cpus())`, each bucket is
//!   `____cacheline_aligned_in_smp`, and the bucket gains `atomic_t waiters` ahead of the
//!   lock, so that `futex_wake()` can return without the lock when nobody waits
//!   (`hb_waiters_pending()`). The layout `waiters, lock, chain` is read in
//!   `kernel/futex/futex.h` of torvalds/linux before 6.16.
//! - 6.15 (4.2 to 6.15): as 3.13, with x86 queued spinlocks (qspinlock, 4.2).
//! - 6.16-rc (6.16-rc1 … rc4): the private hash, 7c4f75a21f63 "futex: Allow automatic
//!   allocation of process wide futex hash" and its series from 80367ad01d93 "futex: Add
//!   basic infrastructure for local task local hash" (read: ids and subjects in the
//!   kernel's shortlog and the kernel test robot's reports on it). The bucket
//!   gains `struct futex_private_hash *priv` after the chain (read: the series' diff of
//!   `kernel/futex/futex.h`, `+ struct futex_private_hash *priv;`, and
//!   `futex_hash_bucket_init(&futex_queues[i], NULL)` for the global buckets); every
//!   operation takes and drops one shared `rcuref` (`fph->users`, read: the series' diff
//!   `return rcuref_get(&fph->users)`); the global hash is split per node
//!   (`__futex_data.queues[MAX_NUMNODES]`, node `(hash >> futex_hashshift) % nr_node_ids`;
//!   read in 6.17's `core.c`).
//! - 6.16 (as released): 9a57c3773152 "futex: Temporary disable FUTEX_PRIVATE_HASH"
//!   (Sebastian Andrzej Siewior, in tip locking/urgent, merged for 6.16-rc5; read: the
//!   tip-bot2 mail and the rc5 merge log) makes `FUTEX_PRIVATE_HASH` depend on `BROKEN`:
//!   no private hash, `futex_hash()` is `__futex_hash()` and `futex_hash_put()` an empty
//!   inline, so nothing loads `priv`; the per-node global hash stays.
//! - 6.17: 56180dd20c19 "futex: Use RCU-based per-CPU reference counting instead of
//!   rcuref_t" (read: tip-bot2 mail, locking/futex, July 2025), the reference becomes
//!   per-CPU (`futex_ref_get()`:
//!   `this_cpu_inc(*mm->futex_ref)` while `fph->state == FR_PERCPU`; read in 6.17's
//!   `core.c`); the private hash is live again: first release with it.
//! - 6.18 (to 7.1): 4cb5ac2626b5 "futex: Optimize per-cpu reference counting" (Peter
//!   Zijlstra, tip locking/urgent Nov 2025, also in 6.17-stable; read: the stable review
//!   mail with its diff): `guard(rcu)` → `guard(preempt)`, `this_cpu_inc` →
//!   `__this_cpu_inc`, `smp_load_acquire` → `READ_ONCE`. Its message says it matters for
//!   PowerPC (generic `this_cpu_*()` disables interrupts) and that the x86 `this_cpu_*()`
//!   is already one instruction: on x86 the model prices 6.18 as 6.17.
//! - 7.2: a734d9fca84e "futex: Optimize futex hash bucket access patterns" (read: its id
//!   and title in the tip and peterz/queue `locking/core` push logs of June 2026; its
//!   diff was not found in the stored sources). Issue text: the bucket holds waiters,
//!   lock and chain only, and the private table is found through the mm, so no operation
//!   loads `priv` from the bucket line ([`super::bucket_line`]).
//! - 7.3: 45ac711e2f14 "futex: Use runtime constants for __futex_hash() hot path" (with
//!   the `runtime_const_mask_32()` commits of each architecture; the issue names
//!   b78b0b658252 too, not found in the stored logs) and c94a32912389 "futex: Optimise
//!   the size check get_futex_key()" (read: ids and titles in the tip `locking/core` push
//!   log). Issue text: the second turns `address % size` (read in 6.17's
//!   `get_futex_key()`) into a mask. Both shorten the work outside the lock by a few loads
//!   of read-mostly lines and one division; profiles have no per-instruction costs, so the
//!   model prices 7.3 as 7.2 and says so.
//!
//! The RFC v2 of the private hash (Sebastian Andrzej Siewior, 2024, seed 000) allocated a
//! default of 4 slots (`futex_hash_allocate(0)`: 0 → 4, clamped to 2..=16).

use super::bucket_line::{self, Layout};
use super::calibrate::global_hash_size;
use super::{CACHE_LINE, Design, LockKind, PACKED_BUCKET_BYTES, Refcount};
use crate::sim::SimError;

/// A kernel version whose futex hash design the simulator knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Linux 3.12.
    V3_12,
    /// Linux 3.13 (to 4.1).
    V3_13,
    /// Linux 6.15 (4.2 to 6.15: queued spinlocks).
    V6_15,
    /// Linux 6.16-rc1 … rc4: private hash with one shared `rcuref`.
    V6_16Rc,
    /// Linux 6.16 as released: private hash disabled, per-node global hash.
    V6_16,
    /// Linux 6.17: per-CPU reference.
    V6_17,
    /// Linux 6.18 to 7.1: the per-CPU reference's preemption fix.
    V6_18,
    /// Linux 7.2: no `priv` on the bucket line.
    V7_2,
    /// Linux 7.3: runtime-constant hash path, `&` alignment check.
    V7_3,
}

/// Every preset, oldest first.
pub const ALL: [Kernel; 9] = [
    Kernel::V3_12,
    Kernel::V3_13,
    Kernel::V6_15,
    Kernel::V6_16Rc,
    Kernel::V6_16,
    Kernel::V6_17,
    Kernel::V6_18,
    Kernel::V7_2,
    Kernel::V7_3,
];

/// A commit a preset rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Commit {
    /// Abbreviated id (12 hex digits), or a description where no single commit applies.
    pub id: &'static str,
    /// Its subject line, or what it did.
    pub title: &'static str,
    /// `read` (id and title found in public sources, see the module docs) or `issue`
    /// (from the project's issue text only).
    pub verified: &'static str,
}

impl Kernel {
    /// The name `--kernel` takes and records carry.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::V3_12 => "3.12",
            Kernel::V3_13 => "3.13",
            Kernel::V6_15 => "6.15",
            Kernel::V6_16Rc => "6.16-rc",
            Kernel::V6_16 => "6.16",
            Kernel::V6_17 => "6.17",
            Kernel::V6_18 => "6.18",
            Kernel::V7_2 => "7.2",
            Kernel::V7_3 => "7.3",
        }
    }

    /// Parses one `--kernel` name.
    pub fn parse(s: &str) -> Result<Kernel, SimError> {
        ALL.iter().copied().find(|k| k.name() == s).ok_or_else(|| {
            SimError::BadRequest(format!(
                "unknown kernel preset '{s}'; known: {}",
                ALL.map(Kernel::name).join(", ")
            ))
        })
    }

    /// Parses a `--kernel` comma list (no repeats).
    pub fn parse_list(s: &str) -> Result<Vec<Kernel>, SimError> {
        let mut v: Vec<Kernel> = Vec::new();
        for part in s.split(',') {
            let k = Kernel::parse(part.trim())?;
            if v.contains(&k) {
                return Err(SimError::BadRequest(format!(
                    "kernel preset '{}' is listed twice in '{s}'",
                    k.name()
                )));
            }
            v.push(k);
        }
        Ok(v)
    }

    /// The commits the preset rests on (see the module docs for where each was read).
    pub fn commits(self) -> &'static [Commit] {
        const R: &str = "read";
        const I: &str = "issue";
        match self {
            Kernel::V3_12 => &[Commit {
                id: "v3.12",
                title: "256 packed buckets (FUTEX_HASHBITS 8), ticket spinlocks",
                verified: R,
            }],
            Kernel::V3_13 => &[Commit {
                id: "v3.13",
                title: "futexes: Increase hash table size for better performance; buckets ____cacheline_aligned_in_smp; hb->waiters",
                verified: R,
            }],
            Kernel::V6_15 => &[Commit {
                id: "v4.2",
                title: "x86 queued spinlocks (qspinlock)",
                verified: R,
            }],
            Kernel::V6_16Rc => &[Commit {
                id: "7c4f75a21f63",
                title: "futex: Allow automatic allocation of process wide futex hash",
                verified: R,
            }],
            Kernel::V6_16 => &[Commit {
                id: "9a57c3773152",
                title: "futex: Temporary disable FUTEX_PRIVATE_HASH",
                verified: R,
            }],
            Kernel::V6_17 => &[Commit {
                id: "56180dd20c19",
                title: "futex: Use RCU-based per-CPU reference counting instead of rcuref_t",
                verified: R,
            }],
            Kernel::V6_18 => &[Commit {
                id: "4cb5ac2626b5",
                title: "futex: Optimize per-cpu reference counting",
                verified: R,
            }],
            Kernel::V7_2 => &[Commit {
                id: "a734d9fca84e",
                title: "futex: Optimize futex hash bucket access patterns",
                verified: R,
            }],
            Kernel::V7_3 => &[
                Commit {
                    id: "45ac711e2f14",
                    title: "futex: Use runtime constants for __futex_hash() hot path",
                    verified: R,
                },
                Commit {
                    id: "b78b0b658252",
                    title: "runtime-constant hash path (second commit)",
                    verified: I,
                },
                Commit {
                    id: "c94a32912389",
                    title: "futex: Optimise the size check get_futex_key()",
                    verified: R,
                },
            ],
        }
    }

    /// The bucket's fields as this kernel lays them out ([`bucket_line`]).
    pub fn layout(self) -> Layout {
        match self {
            Kernel::V3_12 => Layout::LockChain,
            Kernel::V3_13 | Kernel::V6_15 | Kernel::V6_16 => Layout::WaitersLockChain,
            Kernel::V6_16Rc | Kernel::V6_17 | Kernel::V6_18 => Layout::WaitersLockChainPriv,
            Kernel::V7_2 | Kernel::V7_3 => Layout::WaitersLockChain,
        }
    }

    /// Whether `futex_hash()` / `futex_hash_put()` load `hb->priv` on every operation:
    /// with `CONFIG_FUTEX_PRIVATE_HASH` from 6.16-rc1 to 7.1 (6.16 as released has the
    /// option off).
    pub fn loads_priv(self) -> bool {
        matches!(self, Kernel::V6_16Rc | Kernel::V6_17 | Kernel::V6_18)
    }

    /// The bucket design.
    pub fn design(self) -> Design {
        Design {
            lock: match self {
                Kernel::V3_12 | Kernel::V3_13 => LockKind::Ticket,
                _ => LockKind::Queued,
            },
            refcount: match self {
                Kernel::V6_16Rc => Refcount::Shared,
                Kernel::V6_17 | Kernel::V6_18 | Kernel::V7_2 | Kernel::V7_3 => Refcount::PerCpu,
                _ => Refcount::None,
            },
            bucket_bytes: if self == Kernel::V3_12 {
                PACKED_BUCKET_BYTES
            } else {
                CACHE_LINE
            },
            extra_prelock_transfers: bucket_line::extra_prelock_transfers(
                self.layout(),
                self.loads_priv(),
            ),
        }
    }

    /// The global hash: total buckets and node tables, for a machine of `cpus` CPUs on
    /// `nodes` nodes.
    pub fn global_hash(self, cpus: u32, nodes: u32) -> (u64, u32) {
        match self {
            Kernel::V3_12 => (256, 1),
            Kernel::V3_13 | Kernel::V6_15 => (global_hash_size(cpus), 1),
            _ => {
                let nodes = nodes.max(1);
                let per = (256 * u64::from(cpus) / u64::from(nodes))
                    .max(4)
                    .next_power_of_two();
                (per * u64::from(nodes), nodes)
            }
        }
    }

    /// Whether the kernel has a per-process private hash.
    pub fn has_private_hash(self) -> bool {
        matches!(
            self,
            Kernel::V6_16Rc | Kernel::V6_17 | Kernel::V6_18 | Kernel::V7_2 | Kernel::V7_3
        )
    }
}

/// `futex_hash_allocate_default()` of the merged kernel: `threads` is the process's thread
/// count (perf's workers plus its main thread).
pub fn auto_slots(threads: u64, online_cpus: u32, global_buckets: u64) -> u64 {
    let t = threads.min(u64::from(online_cpus)).max(1);
    (4 * t)
        .next_power_of_two()
        .clamp(16, global_buckets.max(16))
}

/// The RFC v2 default: 4 slots.
pub const AUTO_RFC_SLOTS: u64 = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_the_kernel_history() {
        // Values from the kernel sources cited in the module docs, by hand.
        assert_eq!(Kernel::V3_12.global_hash(80, 8), (256, 1));
        assert_eq!(Kernel::V3_13.global_hash(80, 8), (32768, 1));
        assert_eq!(Kernel::V6_16.global_hash(256, 2), (2 * 32768, 2));
        assert_eq!(Kernel::V6_16Rc.global_hash(256, 2), (2 * 32768, 2));
        assert_eq!(Kernel::V7_3.global_hash(112, 2), (2 * 16384, 2));
        assert_eq!(Kernel::V6_16.global_hash(2, 1), (512, 1));
        assert_eq!(Kernel::V3_12.design().bucket_bytes, 24);
        assert_eq!(Kernel::V3_13.design().lock, LockKind::Ticket);
        assert_eq!(Kernel::V6_15.design().lock, LockKind::Queued);
        assert_eq!(Kernel::V6_16Rc.design().refcount, Refcount::Shared);
        // 6.16 as released: the private hash depends on BROKEN, no reference at all.
        assert_eq!(Kernel::V6_16.design().refcount, Refcount::None);
        assert!(!Kernel::V6_16.has_private_hash());
        assert!(!Kernel::V6_16.loads_priv());
        assert_eq!(Kernel::V6_17.design().refcount, Refcount::PerCpu);
        assert_eq!(Kernel::V6_18.design(), Kernel::V6_17.design());
        assert!(Kernel::V6_18.loads_priv() && !Kernel::V7_2.loads_priv());
        assert_eq!(Kernel::V7_3.design(), Kernel::V7_2.design());
        assert!(
            Kernel::parse("5.0")
                .unwrap_err()
                .to_string()
                .contains("6.16-rc")
        );
        assert!(!Kernel::V6_15.has_private_hash());
        assert!(Kernel::V6_17.has_private_hash() && Kernel::V7_3.has_private_hash());
    }

    #[test]
    fn every_preset_cites_a_commit_and_names_parse_back() {
        for k in ALL {
            assert_eq!(Kernel::parse(k.name()).unwrap(), k);
            assert!(!k.commits().is_empty(), "{k:?}");
            for c in k.commits() {
                assert!(c.verified == "read" || c.verified == "issue", "{c:?}");
            }
        }
        assert_eq!(Kernel::V6_16.commits()[0].id, "9a57c3773152");
        assert_eq!(
            Kernel::parse_list("6.18, 7.2").unwrap(),
            vec![Kernel::V6_18, Kernel::V7_2]
        );
        assert!(
            Kernel::parse_list("6.18,6.18")
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        assert!(Kernel::parse_list("6.18,").is_err());
    }

    #[test]
    fn auto_sizing_is_four_per_thread_clamped() {
        // 241 threads (240 + perf's main) on 256 CPUs: roundup(964) = 1024.
        assert_eq!(auto_slots(241, 256, 65536), 1024);
        // Capped by the CPU count: 4 × 2 = 8, raised to the minimum of 16.
        assert_eq!(auto_slots(241, 2, 512), 16);
        assert_eq!(auto_slots(100_000, 65536, 1 << 20), 1 << 18);
        assert_eq!(auto_slots(1000, 1000, 1024), 1024);
    }
}

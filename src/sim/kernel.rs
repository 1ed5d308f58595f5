//! Kernel-version presets of the simulated design, and the private hash's sizing rules.
//!
//! Sources (Linux `kernel/futex.c`, later `kernel/futex/core.c`):
//! - 3.12: `futex_queues[1 << FUTEX_HASHBITS]`, `FUTEX_HASHBITS` = 8 (256 buckets), the
//!   24-byte `struct futex_hash_bucket` (spinlock + `plist_head`) packed; x86 ticket
//!   spinlocks.
//! - 3.13 (the date the CLI contract gives; the patches were Davidlohr Bueso's series of
//!   Nov 2013 – Jan 2014, seed 003): the table is sized `roundup_pow_of_two(256 ×
//!   num_possible_cpus())` ("futexes: Increase hash table size for better performance")
//!   and each bucket is `____cacheline_aligned_in_smp` — exactly the "large table" and
//!   "aligned" columns of seed 003's table.
//! - 4.2: x86 moves to queued spinlocks (qspinlock, MCS-based).
//! - 6.16: the global hash is split per node (`hashsize = roundup_pow_of_two(max(4,
//!   256 × CPUs / nodes))` per node), and a process gets a private hash when it creates
//!   its first thread (commit 7c4f75a21f63), sized by `futex_hash_allocate_default()`:
//!   `roundup_pow_of_two(4 × min(threads, online CPUs))` clamped to `[16, global size]`;
//!   every operation takes and drops a reference on one shared `rcuref`.
//! - 6.17: the reference becomes per-CPU (commit 56180dd20c19).
//!
//! The RFC v2 of the private hash (Sebastian Andrzej Siewior, 2024, seed 000) allocated a
//! default of 4 slots (`futex_hash_allocate(0)`: 0 → 4, clamped to 2..=16).

use super::calibrate::global_hash_size;
use super::{CACHE_LINE, Design, LockKind, PACKED_BUCKET_BYTES, Refcount};

/// A kernel version whose futex hash design the simulator knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Linux 3.12.
    V3_12,
    /// Linux 3.13 (to 4.1).
    V3_13,
    /// Linux 6.15 (4.2 to 6.15: queued spinlocks).
    V6_15,
    /// Linux 6.16.
    V6_16,
    /// Linux 6.17 and later.
    V6_17,
}

/// The names `--kernel` accepts.
pub const KERNEL_NAMES: [&str; 5] = ["3.12", "3.13", "6.15", "6.16", "6.17"];

impl Kernel {
    /// Parses a `--kernel` value.
    pub fn parse(s: &str) -> Result<Kernel, String> {
        Ok(match s {
            "3.12" => Kernel::V3_12,
            "3.13" => Kernel::V3_13,
            "6.15" => Kernel::V6_15,
            "6.16" => Kernel::V6_16,
            "6.17" => Kernel::V6_17,
            _ => {
                return Err(format!(
                    "unknown kernel preset '{s}'; known: {}",
                    KERNEL_NAMES.join(", ")
                ));
            }
        })
    }

    /// The bucket design.
    pub fn design(self) -> Design {
        Design {
            lock: match self {
                Kernel::V3_12 | Kernel::V3_13 => LockKind::Ticket,
                _ => LockKind::Queued,
            },
            refcount: match self {
                Kernel::V6_16 => Refcount::Shared,
                Kernel::V6_17 => Refcount::PerCpu,
                _ => Refcount::None,
            },
            bucket_bytes: if self == Kernel::V3_12 {
                PACKED_BUCKET_BYTES
            } else {
                CACHE_LINE
            },
        }
    }

    /// The global hash: total buckets and node tables, for a machine of `cpus` CPUs on
    /// `nodes` nodes.
    pub fn global_hash(self, cpus: u32, nodes: u32) -> (u64, u32) {
        match self {
            Kernel::V3_12 => (256, 1),
            Kernel::V3_13 | Kernel::V6_15 => (global_hash_size(cpus), 1),
            Kernel::V6_16 | Kernel::V6_17 => {
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
        matches!(self, Kernel::V6_16 | Kernel::V6_17)
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
        assert_eq!(Kernel::V6_16.global_hash(2, 1), (512, 1));
        assert_eq!(Kernel::V3_12.design().bucket_bytes, 24);
        assert_eq!(Kernel::V3_13.design().lock, LockKind::Ticket);
        assert_eq!(Kernel::V6_15.design().lock, LockKind::Queued);
        assert_eq!(Kernel::V6_16.design().refcount, Refcount::Shared);
        assert_eq!(Kernel::V6_17.design().refcount, Refcount::PerCpu);
        assert!(Kernel::parse("5.0").unwrap_err().contains("3.12"));
        assert!(!Kernel::V6_15.has_private_hash());
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

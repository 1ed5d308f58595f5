//! The futex bucket's cache line as fields: which fields share it at each kernel version,
//! which operation reads or writes each of them and in which order relative to taking
//! the bucket lock, and the line transfers that order costs under contention.
//!
//! Sources (x86-64, no lock debugging): `struct futex_hash_bucket` in
//! `kernel/futex/futex.h` — `atomic_t waiters; spinlock_t lock; struct plist_head chain;`
//! from 3.13 to 6.15 and again from 7.2, with `struct futex_private_hash *priv` after the
//! chain from 6.16-rc1 to 7.1 (read in torvalds/linux before 6.16, in the private-hash
//! series' diff and in the 6.18.38 header); 3.12 has `spinlock_t lock; struct plist_head
//! chain;` packed (24 bytes with padding). A `spinlock_t` is a 4-byte qspinlock (or ticket
//! lock), an `atomic_t` 4 bytes, a `plist_head` one `list_head` (two pointers, 16 bytes).
//!
//! Accesses of `perf bench futex hash` (FUTEX_WAIT with a wrong value, `EAGAIN`), from
//! `futex_wait_setup()` (`kernel/futex/waitwake.c`) and `core.c` of 6.17:
//! 1. `futex_hash()`: `hb = __futex_hash(key, NULL); fph = hb->priv;` — a read of the
//!    bucket line before anything else touches it (6.16-rc … 7.1, for global buckets too,
//!    whose `priv` is NULL);
//! 2. `futex_q_lock()`: `futex_hb_waiters_inc(hb)` (a locked RMW, "before taking the lock
//!    so that a potential waker won't miss a to-be-slept task"), then `spin_lock()`;
//! 3. the futex word is compared (not on this line); `futex_q_unlock()`:
//!    `futex_hb_waiters_dec(hb)` then `spin_unlock()`;
//! 4. leaving the `CLASS(hb, …)` scope: `futex_hash_put()` reads `hb->priv` again.
//!
//! `FUTEX_WAKE` with no waiter: `futex_hash()` (the `priv` read), the lockless
//! `futex_hb_waiters_pending()` read of `waiters`, return, `futex_hash_put()` (the second
//! `priv` read): reads only, so a line nobody writes stays shared and costs nothing.
//! (3.12's wake takes the lock; the simulator's wake loop does not model that kernel.)
//!
//! Transfers: a walk over one operation's accesses with the line starting modified in
//! another CPU's cache (the steady state of a bucket used by many threads, and always so
//! under contention, where the holder and the waiters write it): the first access moves
//! the line (a read leaves it shared, a write takes it exclusive); a write to a line this
//! CPU only shares is an upgrade that must invalidate the other copy, a second round trip
//! to the owner or directory; accesses to a line held exclusive cost nothing. Reading
//! `priv` before `waiters_inc` therefore costs two transfers where `waiters_inc` first
//! costs one. The read after the unlock follows this CPU's own `spin_unlock()` store by a
//! few instructions and is counted as a hit. Every transfer costs the profile's
//! `line_miss_ns` (across nodes `line_miss_remote_ns`): a core-to-core latency matrix's
//! figure for moving one line, from the hardware, not fitted to any futex measurement.
//!
//! What the engine takes from here is the difference to the layout the profiles' fitted
//! costs already contain (`waiters` first: one transfer before the lock): the extra
//! transfers before the lock ([`extra_prelock_transfers`]), charged from the line's last
//! writer on the operating thread's path.

use super::SimOp;

/// Bytes of a cache line.
pub const LINE: u32 = 64;

/// A field of `struct futex_hash_bucket`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// `atomic_t waiters` (3.13+).
    Waiters,
    /// `spinlock_t lock`.
    Lock,
    /// `struct plist_head chain`.
    Chain,
    /// `struct futex_private_hash *priv` (6.16-rc1 … 7.1).
    Priv,
}

/// A bucket layout of some kernel versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// 3.12: lock, chain; packed.
    LockChain,
    /// 3.13 … 6.15, 6.16 as released, 7.2+: waiters, lock, chain; one bucket a line.
    WaitersLockChain,
    /// 6.16-rc, 6.17 … 7.1: waiters, lock, chain, priv; one bucket a line.
    WaitersLockChainPriv,
}

/// One field's place in the bucket: `(field, offset, size)` in bytes.
pub type Slot = (Field, u32, u32);

/// The fields of `layout` with their offsets and sizes (x86-64).
pub fn fields(layout: Layout) -> &'static [Slot] {
    match layout {
        // spinlock_t (4) + 4 bytes of padding before the 8-aligned plist_head.
        Layout::LockChain => &[(Field::Lock, 0, 4), (Field::Chain, 8, 16)],
        Layout::WaitersLockChain => &[
            (Field::Waiters, 0, 4),
            (Field::Lock, 4, 4),
            (Field::Chain, 8, 16),
        ],
        Layout::WaitersLockChainPriv => &[
            (Field::Waiters, 0, 4),
            (Field::Lock, 4, 4),
            (Field::Chain, 8, 16),
            (Field::Priv, 24, 8),
        ],
    }
}

/// Bytes of the bucket's fields (before alignment).
pub fn struct_bytes(layout: Layout) -> u32 {
    fields(layout)
        .iter()
        .map(|&(_, off, size)| off + size)
        .max()
        .unwrap_or(0)
}

/// The 64-byte line (from the bucket's start) each field of `layout` is on: one bucket
/// per line from 3.13, so every field shares the lock's line.
pub fn line_of(layout: Layout, field: Field) -> Option<u32> {
    fields(layout)
        .iter()
        .find(|s| s.0 == field)
        .map(|&(_, off, _)| off / LINE)
}

/// Where an access falls relative to the bucket lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before `spin_lock()`.
    BeforeLock,
    /// The lock's acquisition itself.
    Acquire,
    /// Inside the locked section.
    Locked,
    /// The release (`spin_unlock()`).
    Release,
    /// After the unlock.
    AfterUnlock,
}

/// What an access does to its field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A plain load.
    Read,
    /// A locked read-modify-write (or the lock's acquisition).
    Rmw,
    /// A plain store.
    Write,
}

/// One access of an operation to the bucket line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// Relative to the lock.
    pub phase: Phase,
    /// Which field.
    pub field: Field,
    /// Load, RMW or store.
    pub kind: Kind,
    /// The kernel function that makes it.
    pub by: &'static str,
}

const fn acc(phase: Phase, field: Field, kind: Kind, by: &'static str) -> Access {
    Access {
        phase,
        field,
        kind,
        by,
    }
}

/// The accesses of one operation `op` to the bucket line, in program order, on a kernel
/// with `layout` that loads `priv` (`loads_priv`: 6.16-rc … 7.1 with the private hash
/// configured).
pub fn accesses(layout: Layout, loads_priv: bool, op: SimOp) -> Vec<Access> {
    use Field::*;
    use Kind::*;
    use Phase::*;
    let has_waiters = layout != Layout::LockChain;
    let priv_read = loads_priv && layout == Layout::WaitersLockChainPriv;
    let mut v = Vec::new();
    if priv_read {
        v.push(acc(BeforeLock, Priv, Read, "futex_hash"));
    }
    match op {
        SimOp::WaitFail => {
            if has_waiters {
                v.push(acc(BeforeLock, Waiters, Rmw, "futex_hb_waiters_inc"));
            }
            v.push(acc(Acquire, Lock, Rmw, "spin_lock"));
            if has_waiters {
                v.push(acc(Locked, Waiters, Rmw, "futex_hb_waiters_dec"));
            }
            v.push(acc(Release, Lock, Write, "spin_unlock"));
        }
        SimOp::WakeNone => {
            if has_waiters {
                v.push(acc(BeforeLock, Waiters, Read, "futex_hb_waiters_pending"));
            }
        }
    }
    if priv_read {
        v.push(acc(AfterUnlock, Priv, Read, "futex_hash_put"));
    }
    v
}

/// Line transfers of a sequence of accesses by one CPU to a line that starts modified in
/// another CPU's cache, with no other CPU touching it in between: the first access moves
/// the line, a write to a line held shared is one more (the upgrade), the rest are hits.
pub fn transfers(kinds: &[Kind]) -> u32 {
    #[derive(PartialEq)]
    enum Mine {
        Invalid,
        Shared,
        Exclusive,
    }
    let mut state = Mine::Invalid;
    let mut n = 0;
    for &k in kinds {
        match (&state, k) {
            (Mine::Invalid, Kind::Read) => {
                n += 1;
                state = Mine::Shared;
            }
            (Mine::Invalid, _) | (Mine::Shared, Kind::Rmw | Kind::Write) => {
                n += 1;
                state = Mine::Exclusive;
            }
            _ => {}
        }
    }
    n
}

/// Transfers of the accesses up to and including the lock's acquisition, the line last
/// written by another CPU: what an operation pays to reach the lock.
pub fn prelock_transfers(layout: Layout, loads_priv: bool) -> u32 {
    let kinds: Vec<Kind> = accesses(layout, loads_priv, SimOp::WaitFail)
        .iter()
        .filter(|a| matches!(a.phase, Phase::BeforeLock | Phase::Acquire))
        .map(|a| a.kind)
        .collect();
    transfers(&kinds)
}

/// The transfers before the lock beyond the one the profiles' costs contain (their
/// `line_miss` and hand-offs were measured or fitted on `waiters`-first buckets and on
/// 3.12's lock-first ones, both one transfer): 1 on 6.16-rc … 7.1 (`priv` read, then the
/// `waiters` upgrade), else 0.
pub fn extra_prelock_transfers(layout: Layout, loads_priv: bool) -> u32 {
    prelock_transfers(layout, loads_priv).saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_kernel_structs() {
        // By hand from futex.h: 4 + 4 + 16 = 24 bytes; + an 8-byte pointer = 32; 3.12's
        // 4-byte lock is padded to 8 before the pointer-aligned plist_head: 24.
        assert_eq!(struct_bytes(Layout::WaitersLockChain), 24);
        assert_eq!(struct_bytes(Layout::WaitersLockChainPriv), 32);
        assert_eq!(struct_bytes(Layout::LockChain), 24);
        // Every field is on the lock's line.
        for l in [Layout::WaitersLockChain, Layout::WaitersLockChainPriv] {
            for &(f, _, _) in fields(l) {
                assert_eq!(line_of(l, f), Some(0), "{l:?} {f:?}");
            }
        }
        assert_eq!(line_of(Layout::WaitersLockChain, Field::Priv), None);
        assert_eq!(line_of(Layout::WaitersLockChainPriv, Field::Priv), Some(0));
    }

    #[test]
    fn the_coherence_walk_counts_moves_and_upgrades() {
        use Kind::*;
        assert_eq!(transfers(&[]), 0);
        assert_eq!(transfers(&[Rmw, Rmw, Write]), 1);
        assert_eq!(transfers(&[Read, Read]), 1);
        assert_eq!(transfers(&[Read, Rmw, Rmw]), 2);
        assert_eq!(transfers(&[Write, Read]), 1);
    }

    #[test]
    fn the_priv_load_costs_one_transfer_before_the_lock() {
        // 6.17/6.18: read priv (line moves, shared), waiters_inc (upgrade), spin_lock
        // (hit): 2. 6.15 and 7.2: waiters_inc (moves), spin_lock (hit): 1. 3.12: 1.
        assert_eq!(prelock_transfers(Layout::WaitersLockChainPriv, true), 2);
        assert_eq!(prelock_transfers(Layout::WaitersLockChain, false), 1);
        assert_eq!(prelock_transfers(Layout::LockChain, false), 1);
        assert_eq!(
            extra_prelock_transfers(Layout::WaitersLockChainPriv, true),
            1
        );
        assert_eq!(extra_prelock_transfers(Layout::WaitersLockChain, false), 0);
        // A kernel with the field but without CONFIG_FUTEX_PRIVATE_HASH never loads it.
        assert_eq!(
            extra_prelock_transfers(Layout::WaitersLockChainPriv, false),
            0
        );
    }

    #[test]
    fn the_access_lists_follow_futex_wait_setup_and_futex_wake() {
        let w = accesses(Layout::WaitersLockChainPriv, true, SimOp::WaitFail);
        let by: Vec<&str> = w.iter().map(|a| a.by).collect();
        assert_eq!(
            by,
            [
                "futex_hash",
                "futex_hb_waiters_inc",
                "spin_lock",
                "futex_hb_waiters_dec",
                "spin_unlock",
                "futex_hash_put"
            ]
        );
        assert_eq!(w[0].phase, Phase::BeforeLock);
        assert_eq!(w[3].phase, Phase::Locked);
        assert_eq!(w[5].phase, Phase::AfterUnlock);
        // Wake with no waiter: reads only, so no transfers on a line nobody writes.
        let wake = accesses(Layout::WaitersLockChainPriv, true, SimOp::WakeNone);
        assert!(wake.iter().all(|a| a.kind == Kind::Read));
        assert_eq!(wake.len(), 3);
        let wake72 = accesses(Layout::WaitersLockChain, false, SimOp::WakeNone);
        assert_eq!(wake72.len(), 1);
        assert_eq!(wake72[0].field, Field::Waiters);
    }
}

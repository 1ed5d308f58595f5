//! The `model` backend: the workload of `perf bench futex hash` sent to this crate's
//! user-space futex bucket table ([`crate::table::ModelTable`], which rebuilds
//! `kernel/futex/core.c` of Linux 6.16 – 6.18) instead of the `futex(2)` system call.
//!
//! Each worker thread owns F real `AtomicU32` futex words at real addresses, as in the
//! kernel backend. Their keys are built the way the kernel's `get_futex_key()` builds them
//! for those addresses: private keys `(mm, address & PAGE_MASK, offset in page)` of one
//! synthetic `mm` (or, with `-S`, anonymous shared keys with the "mm shared" offset bit), so
//! the `--algo` hashers see keys with a realistic structure (addresses of one heap, 4-byte
//! steps, a kernel-pointer-like `mm`). The keys are computed once per worker, as the
//! kernel's key lookup is not what the benchmark measures (the kernel's is a few loads from
//! the task's `mm`; ours would be a constructor call).
//!
//! A model operation is: hash the key, pick the bucket, count the waiter, lock the bucket,
//! compare the word, unlock (`wait` failing with EAGAIN); or hash, pick the bucket and see
//! no waiters (`wake`). No system call, no memory barrier beyond the table's own.

use super::runner::{Backend, Worker};
use crate::key::FutexKey;
use crate::table::ModelTable;
use std::sync::atomic::AtomicU32;

/// The `mm` of the synthetic process whose futexes the model hashes: a kernel
/// direct-map-like pointer (`struct mm_struct` lives in the slab, 64-byte aligned).
pub const SYNTHETIC_MM: u64 = 0xffff_8881_0c5a_9a40;

/// A second synthetic `mm` (the noisy neighbour's process).
pub const SYNTHETIC_MM_2: u64 = 0xffff_8881_3e71_2c80;

/// The value a failing wait expects (the words hold 0), as perf's 1234.
const WAIT_EXPECTED: u32 = 1234;

/// A model table plus how keys are made for it.
#[derive(Debug)]
pub struct ModelBackend {
    /// The table every operation goes to.
    pub table: ModelTable,
    /// The synthetic process the keys belong to.
    pub mm: u64,
    /// Shared (anonymous, "mm shared") keys instead of private ones (`-S`).
    pub shared: bool,
}

impl ModelBackend {
    /// A backend over `table` for the synthetic process [`SYNTHETIC_MM`].
    pub fn new(table: ModelTable, shared: bool) -> Self {
        ModelBackend {
            table,
            mm: SYNTHETIC_MM,
            shared,
        }
    }

    /// The key the kernel would build for a futex word at `addr` in this backend's process.
    pub fn key_for(&self, addr: usize) -> FutexKey {
        make_key(self.mm, addr, self.shared)
    }
}

/// The key of the 4-byte aligned word at `addr` in process `mm`: private, or anonymous
/// shared.
pub fn make_key(mm: u64, addr: usize, shared: bool) -> FutexKey {
    let k = if shared {
        FutexKey::anon(mm, addr as u64)
    } else {
        FutexKey::private(mm, addr as u64)
    };
    // An AtomicU32 is always 4-byte aligned, the only requirement of the constructors.
    k.expect("AtomicU32 addresses are 4-byte aligned")
}

/// A thread's words and their keys.
#[derive(Debug)]
pub struct ModelWorker<'a> {
    table: &'a ModelTable,
    words: Box<[AtomicU32]>,
    keys: Box<[FutexKey]>,
}

impl Worker for ModelWorker<'_> {
    #[inline]
    fn wait_fail(&mut self, idx: usize) -> bool {
        self.table
            .wait(&self.keys[idx], &self.words[idx], WAIT_EXPECTED, None)
            .is_err()
    }

    #[inline]
    fn wake(&mut self, idx: usize) -> bool {
        self.table.wake(&self.keys[idx], 1) == 0
    }

    fn word_addr(&self, idx: usize) -> usize {
        self.words[idx].as_ptr() as usize
    }
}

impl Backend for ModelBackend {
    type Worker<'a> = ModelWorker<'a>;

    fn worker(&self, _thread: usize, futexes: usize) -> ModelWorker<'_> {
        let words: Box<[AtomicU32]> = (0..futexes).map(|_| AtomicU32::new(0)).collect();
        let keys = words
            .iter()
            .map(|w| self.key_for(w.as_ptr() as usize))
            .collect();
        ModelWorker {
            table: &self.table,
            words,
            keys,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashers::{Builtin, HashKey};
    use crate::key::KeyKind;
    use crate::table::{ModelSpec, TableKind};

    fn table(kind: TableKind, buckets: Option<usize>) -> ModelTable {
        let mut s = ModelSpec::new(
            Builtin::by_name("jhash2", HashKey::DEFAULT)
                .unwrap()
                .shared(),
            kind,
        );
        s.buckets = buckets;
        ModelTable::build(s).unwrap()
    }

    #[test]
    fn keys_follow_the_word_addresses() {
        let b = ModelBackend::new(table(TableKind::Private, Some(16)), false);
        let w = b.worker(0, 3);
        for i in 0..3 {
            let k = w.keys[i];
            assert_eq!(k.kind(), KeyKind::Private);
            assert_eq!(k.w0(), SYNTHETIC_MM);
            assert_eq!(k.address(), w.word_addr(i) as u64);
        }
        let s = ModelBackend::new(table(TableKind::Global, Some(16)), true);
        assert_eq!(s.key_for(0x1000).kind(), KeyKind::SharedAnon);
    }

    #[test]
    fn private_keys_use_the_private_table_shared_ones_the_global() {
        let b = ModelBackend::new(table(TableKind::Private, Some(16)), false);
        let w = b.worker(0, 8);
        assert!(w.keys.iter().all(|k| b.table.bucket_of(k).is_private()));
        let s = ModelBackend {
            shared: true,
            ..ModelBackend::new(table(TableKind::Private, Some(16)), true)
        };
        assert!(!s.table.bucket_of(&s.key_for(0x7f00_0000_1000)).is_private());
    }

    #[test]
    fn wait_fails_and_wake_finds_nobody_and_leaves_no_waiter() {
        for kind in [TableKind::Global, TableKind::Private, TableKind::Numa] {
            let b = ModelBackend::new(table(kind, Some(4)), false);
            let mut w = b.worker(0, 5);
            for i in 0..5 {
                assert!(w.wait_fail(i));
                assert!(w.wake(i));
            }
            assert_eq!(b.table.waiters(), 0);
            // A word that holds the expected value would block: make sure the check is
            // really against the word (a real waiter, woken by another thread).
            // SeqCst, as any futex word write a waiter must observe (single-threaded here).
            w.words[0].store(WAIT_EXPECTED, std::sync::atomic::Ordering::SeqCst);
            assert!(!w.wait_fail_timeout_probe(0));
        }
    }

    impl ModelWorker<'_> {
        /// Test helper: a wait with a short timeout on word `idx` (true = EAGAIN).
        fn wait_fail_timeout_probe(&self, idx: usize) -> bool {
            self.table
                .wait(
                    &self.keys[idx],
                    &self.words[idx],
                    WAIT_EXPECTED,
                    Some(std::time::Duration::from_millis(1)),
                )
                .is_err()
        }
    }
}

//! The one model backend: perf's workload (`tools/perf/bench/futex-hash.c`) sent to any of
//! this crate's user-space tables ([`crate::table`], which rebuilds `kernel/futex/core.c`
//! of Linux 6.16 – 6.18) instead of the `futex(2)` system call.
//!
//! [`TableBackend`] pairs a table — anything that is a [`FutexTable`]: [`ModelTable`] (the
//! run-time choice of kind and layout), a [`Process`] (the noisy neighbour's processes over
//! one global table) or a bare [`GlobalTable`] (the false-sharing figure of `--compare`) —
//! with a [`Keys`] rule saying which key each futex word gets:
//!
//! * [`Keys::ByAddress`] builds the key the kernel's `get_futex_key()` builds for the word's
//!   real address: private `(mm, address & PAGE_MASK, offset in page)` of one synthetic `mm`
//!   or, with `-S`, anonymous shared keys with the "mm shared" offset bit. The keys are
//!   computed once per worker, as the kernel's key lookup is not what the benchmark
//!   measures.
//! * [`Keys::PerThread`] gives thread t the fixed key `keys[t % len]` for every word (two
//!   threads on two chosen buckets).
//!
//! A model operation is: hash the key, pick the bucket, count the waiter, lock the bucket,
//! compare the word, unlock (`wait` failing with EAGAIN); or hash, pick the bucket and see
//! no waiters (`wake`). No system call, no memory barrier beyond the table's own.

use super::runner::{Backend, Worker};
use crate::key::FutexKey;
use crate::table::FutexTable;
#[cfg(doc)]
use crate::table::{GlobalTable, ModelTable, Process};
use std::sync::atomic::AtomicU32;

/// The `mm` of the synthetic process whose futexes the model hashes: a kernel
/// direct-map-like pointer (`struct mm_struct` lives in the slab, 64-byte aligned).
pub const SYNTHETIC_MM: u64 = 0xffff_8881_0c5a_9a40;

/// A second synthetic `mm` (the noisy neighbour's process).
pub const SYNTHETIC_MM_2: u64 = 0xffff_8881_3e71_2c80;

/// The value a failing wait expects (the words hold 0), as perf's 1234.
pub const WAIT_EXPECTED: u32 = 1234;

/// Which key a worker's futex word gets.
#[derive(Clone, Debug)]
pub enum Keys {
    /// The kernel's key for the word's address in process `mm`: private, or anonymous
    /// shared (`-S`).
    ByAddress {
        /// The synthetic process.
        mm: u64,
        /// Shared keys.
        shared: bool,
    },
    /// Thread t uses `keys[t % keys.len()]` for all its words.
    PerThread(Vec<FutexKey>),
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

/// A table plus how keys are made for it.
#[derive(Debug)]
pub struct TableBackend<T> {
    /// The table every operation goes to.
    pub table: T,
    /// The key of each word.
    pub keys: Keys,
}

impl<T: FutexTable> TableBackend<T> {
    /// Private (or, `shared`, anonymous shared) keys of [`SYNTHETIC_MM`] by address.
    pub fn by_address(table: T, shared: bool) -> Self {
        TableBackend {
            table,
            keys: Keys::ByAddress {
                mm: SYNTHETIC_MM,
                shared,
            },
        }
    }

    /// The key of thread `thread`'s word at `addr`.
    pub fn key_for(&self, thread: usize, addr: usize) -> FutexKey {
        match &self.keys {
            Keys::ByAddress { mm, shared } => make_key(*mm, addr, *shared),
            Keys::PerThread(k) => k[thread % k.len()],
        }
    }
}

/// A thread's words and their keys.
#[derive(Debug)]
pub struct TableWorker<'a, T> {
    table: &'a T,
    words: &'a [AtomicU32],
    keys: Box<[FutexKey]>,
}

impl<T: FutexTable> Worker for TableWorker<'_, T> {
    #[inline]
    fn wait_fail(&mut self, idx: usize) -> bool {
        // The words hold 0, so a wait expecting WAIT_EXPECTED must fail at once (EAGAIN).
        self.table
            .wait(&self.keys[idx], &self.words[idx], WAIT_EXPECTED, None)
            .is_err()
    }

    #[inline]
    fn wake(&mut self, idx: usize) -> bool {
        self.table.wake(&self.keys[idx], 1) == 0
    }
}

impl<T: FutexTable> Backend for TableBackend<T> {
    type Worker<'a>
        = TableWorker<'a, T>
    where
        T: 'a;

    fn worker<'a>(&'a self, thread: usize, words: &'a [AtomicU32]) -> TableWorker<'a, T> {
        let keys = words
            .iter()
            .map(|w| self.key_for(thread, w.as_ptr() as usize))
            .collect();
        TableWorker {
            table: &self.table,
            words,
            keys,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::runner::allocate_words;
    use crate::hashers::{Builtin, HashKey};
    use crate::key::KeyKind;
    use crate::table::{ModelSpec, ModelTable, TableKind};

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
        let b = TableBackend::by_address(table(TableKind::Private, Some(16)), false);
        let words = allocate_words(1, 3);
        let w = b.worker(0, &words[0]);
        for (k, word) in w.keys.iter().zip(words[0].iter()) {
            assert_eq!(k.kind(), KeyKind::Private);
            assert_eq!(k.w0(), SYNTHETIC_MM);
            assert_eq!(k.address(), word.as_ptr() as u64);
        }
        let s = TableBackend::by_address(table(TableKind::Global, Some(16)), true);
        assert_eq!(s.key_for(0, 0x1000).kind(), KeyKind::SharedAnon);
    }

    #[test]
    fn private_keys_use_the_private_table_shared_ones_the_global() {
        let b = TableBackend::by_address(table(TableKind::Private, Some(16)), false);
        let words = allocate_words(1, 8);
        let w = b.worker(0, &words[0]);
        assert!(w.keys.iter().all(|k| b.table.bucket_of(k).is_private()));
        let s = TableBackend::by_address(table(TableKind::Private, Some(16)), true);
        assert!(
            !s.table
                .bucket_of(&s.key_for(0, 0x7f00_0000_1000))
                .is_private()
        );
    }

    #[test]
    fn per_thread_keys_alternate() {
        let k0 = make_key(SYNTHETIC_MM, 0x1000, false);
        let k1 = make_key(SYNTHETIC_MM, 0x2000, false);
        let b = TableBackend {
            table: table(TableKind::Global, Some(16)),
            keys: Keys::PerThread(vec![k0, k1]),
        };
        assert_eq!(b.key_for(0, 0x5000), k0);
        assert_eq!(b.key_for(1, 0x5000), k1);
        assert_eq!(b.key_for(2, 0x5000), k0);
    }

    #[test]
    fn wait_fails_and_wake_finds_nobody_and_leaves_no_waiter() {
        for kind in [TableKind::Global, TableKind::Private, TableKind::Numa] {
            let b = TableBackend::by_address(table(kind, Some(4)), false);
            let words = allocate_words(1, 5);
            let mut w = b.worker(0, &words[0]);
            for i in 0..5 {
                assert!(w.wait_fail(i));
                assert!(w.wake(i));
            }
            assert_eq!(b.table.waiters(), 0);
            // A word that holds the expected value blocks (here: until the 1 ms timeout),
            // so the check really is against the word.
            // SeqCst, as any futex word write a waiter must observe (single-threaded here).
            words[0][0].store(WAIT_EXPECTED, std::sync::atomic::Ordering::SeqCst);
            let blocked = b
                .table
                .wait(
                    &w.keys[0],
                    &words[0][0],
                    WAIT_EXPECTED,
                    Some(std::time::Duration::from_millis(1)),
                )
                .is_ok();
            assert!(blocked);
        }
    }
}

//! The bucket table through the library's public API at the edges of its geometry
//! (issue 26): a global table of one bucket is a valid table (Geometry::validate accepts a
//! per-node size of 1 = 2^0) and every operation on it must work, including the merged
//! kernel's automatic private sizing, which clamps to the global table's size.

use futexhash::hashers::{Builtin, HashKey};
use futexhash::key::FutexKey;
use futexhash::table::{
    Aligned, FutexTable, Geometry, GlobalTable, Process, Reduce, SlotPolicy, WaitError,
};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

fn one_bucket(nodes: usize, reduce: Reduce) -> Arc<GlobalTable<Builtin, Aligned>> {
    let jhash2 = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
    let g = Geometry {
        nodes,
        per_node: 1,
        reduce,
        squash: false,
    };
    Arc::new(GlobalTable::new(jhash2, g).unwrap())
}

#[test]
fn a_process_on_a_one_bucket_global_table_grows_threads_and_keeps_working() {
    for reduce in [Reduce::Mask, Reduce::High] {
        for nodes in [1, 2] {
            let global = one_bucket(nodes, reduce);
            let addr = Builtin::by_name("jhash2-addr", HashKey::DEFAULT).unwrap();
            let mm = 0xffff_8880_1234_5600;
            let p = Process::new(mm, global.clone(), addr, SlotPolicy::Merged, reduce, 4);
            // The merged kernel sizes the private table at each new thread:
            // clamp(roundup_pow_of_two(4 × threads), 16, 1) = 1, which is no valid size.
            for _ in 0..8 {
                p.thread_created();
            }
            assert_eq!(p.threads(), 9);
            let key = FutexKey::private(mm, 0x7f00_0000_1010).unwrap();
            // Every key of the process hashes to the one bucket of its node.
            let b = p.route(&key);
            assert!(!b.is_private(), "no private table of one slot");
            assert!(b.index() < nodes);
            let word = AtomicU32::new(1);
            assert!(matches!(
                p.wait(&key, &word, 0, None),
                Err(WaitError::WouldBlock)
            ));
            assert_eq!(p.wake(&key, 1), 0);
            let anon = FutexKey::anon(mm, 0x7f00_0000_2000).unwrap();
            assert_eq!(global.wake(&anon, 1), 0);
            assert_eq!(global.buckets().len(), nodes);
            assert_eq!(global.waiters(), 0);
            // A waiter that times out leaves the bucket empty again.
            let outcome = p.wait(&key, &word, 1, Some(std::time::Duration::from_millis(1)));
            assert!(outcome.is_ok());
            assert_eq!(global.waiters(), 0);
            // An explicit request for one slot is refused as the kernel does (EINVAL).
            assert!(p.set_slots(1).is_err());
        }
    }
}

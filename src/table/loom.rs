//! Loom check of the wait/wake protocol with the lockless empty check (see `bucket.rs`).
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --release --lib table::loom`.
//!
//! Loom cannot drive `bucket.rs` itself (it needs loom's atomics and threads), so this is a
//! line-by-line transcription of `bucket::enqueue`, `bucket::block` and `bucket::wake` with
//! the same orderings: `fetch_add` + `fence(SeqCst)` before reading the word under the lock,
//! `fence(SeqCst)` before the waker's `Relaxed` count load, `woken` flag set under the lock
//! with `Release`, read with `Acquire`. Loom models `fence(SeqCst)` exactly (it weakens only
//! `SeqCst` *accesses*, which the protocol does not rely on). Instead of parking (a deadlock
//! aborts loom's process), the waiter returns its `woken` flag after queueing; once both
//! threads have finished, a queued waiter whose flag is still clear is a lost wake-up. The
//! variant without the fences must be caught, which shows the check can fail.

use loom::sync::atomic::{AtomicBool, AtomicU32, Ordering, fence};
use loom::sync::{Arc, Mutex};
use loom::thread;

struct Bucket {
    waiters: AtomicU32,
    chain: Mutex<Vec<Arc<AtomicBool>>>,
}

/// Returns the `woken` flag if the waiter queued (then it would park until the flag is set).
fn wait(b: &Bucket, word: &AtomicU32, expected: u32, fences: bool) -> Option<Arc<AtomicBool>> {
    b.waiters.fetch_add(1, Ordering::SeqCst);
    if fences {
        fence(Ordering::SeqCst); // (A)
    }
    let mut chain = b.chain.lock().unwrap();
    if word.load(Ordering::Acquire) != expected {
        drop(chain);
        b.waiters.fetch_sub(1, Ordering::Release);
        return None;
    }
    let flag = Arc::new(AtomicBool::new(false));
    chain.push(flag.clone());
    drop(chain);
    Some(flag)
}

fn wake(b: &Bucket, fences: bool) {
    if fences {
        fence(Ordering::SeqCst); // (B)
    }
    if b.waiters.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut chain = b.chain.lock().unwrap();
    for flag in chain.drain(..) {
        b.waiters.fetch_sub(1, Ordering::Release);
        flag.store(true, Ordering::Release);
    }
}

fn protocol(waiters: usize, fences: bool) {
    loom::model(move || {
        let b = Arc::new(Bucket {
            waiters: AtomicU32::new(0),
            chain: Mutex::new(Vec::new()),
        });
        let word = Arc::new(AtomicU32::new(0));
        let hs: Vec<_> = (0..waiters)
            .map(|_| {
                let (b2, w2) = (b.clone(), word.clone());
                thread::spawn(move || wait(&b2, &w2, 0, fences))
            })
            .collect();
        word.store(1, Ordering::Relaxed);
        wake(&b, fences);
        for h in hs {
            if let Some(flag) = h.join().unwrap() {
                assert!(
                    flag.load(Ordering::Acquire),
                    "lost wake-up: queued waiter never woken"
                );
            }
        }
        assert_eq!(b.waiters.load(Ordering::Relaxed), 0);
    });
}

#[test]
fn wait_wake_no_lost_wakeup() {
    protocol(1, true);
}

#[test]
fn two_waiters_no_lost_wakeup() {
    protocol(2, true);
}

#[test]
#[should_panic]
fn without_fences_a_wakeup_is_lost() {
    protocol(1, false);
}

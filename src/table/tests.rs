//! Tests of the table: protocol (exhaustive), stress (no lost wake-ups), model-based
//! (against a `Mutex<HashMap>` oracle), private-table semantics and routing.
//!
//! Every wait in these tests is bounded (timeouts that count as failures: 10 s, 30 s in
//! the stress tests), so a lost wake-up fails a test instead of hanging CI; none is short
//! enough for a busy machine to reach. A waiter that must time out only after the test's
//! steps gets growing timeouts ([`with_growing_timeouts`]), so a slow machine is never a
//! failure.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;
use crate::hashers::{Builtin, ConstantHasher, HashKey, KeyHasher};
use crate::key::FutexKey;

const LONG: Duration = Duration::from_secs(10);

fn jhash2() -> Builtin {
    Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap()
}

fn pkey(i: u64) -> FutexKey {
    FutexKey::private(0xffff_8880_1234_5600, 0x7f00_0000_1000 + 4 * i).unwrap()
}

fn geom(per_node: usize) -> Geometry {
    Geometry {
        nodes: 1,
        per_node,
        reduce: Reduce::Mask,
        squash: false,
    }
}

/// Spins (yielding) until `f()` or the deadline; returns whether `f()` became true.
fn wait_for(mut f: impl FnMut() -> bool, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::yield_now();
    }
    f()
}

/// The timeouts, in turn, of a waiter a test needs to time out but only after steps that
/// need it still queued: the first keeps the test short, the last outlasts any stall.
const GROWING: [Duration; 3] = [
    Duration::from_millis(300),
    Duration::from_secs(3),
    Duration::from_secs(30),
];

/// Runs `attempt` with each of [`GROWING`] until one is conclusive. An attempt returns
/// false when its steps took the timeout or longer, measured from before it started the
/// waiter (whose deadline is therefore later): the waiter may have timed out before a
/// step that needed it queued, so nothing was shown either way. Otherwise it asserts and
/// returns true. A slow machine thus gets a longer timeout, never a failure; a real bug
/// fails every attempt's assertions, and a waiter that never returns hangs the test as
/// before.
fn with_growing_timeouts(name: &str, mut attempt: impl FnMut(Duration) -> bool) {
    for timeout in GROWING {
        if attempt(timeout) {
            return;
        }
    }
    panic!("{name}: the steps took longer than every timeout up to 30 s");
}

// ---------------------------------------------------------------- exhaustive protocol check

/// One step of the protocol state machine under sequential consistency. The two `fence`s of
/// the real code make the relevant accesses behave sequentially consistently; a variant
/// without the waker's fence lets its count read move before its word write (store
/// buffering), and a variant where the waiter reads the word before counting itself.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Variant {
    Correct,
    WakerReordered,
    WaiterReadsFirst,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct St {
    word: u32,
    count: u32,
    lock: Option<usize>, // holder: waiter index, or usize::MAX for the waker
    queued: Vec<usize>,
    pc: Vec<u8>,    // waiter program counters
    seen: Vec<u32>, // value a waiter read (WaiterReadsFirst variant)
    woken: Vec<bool>,
    waker_pc: u8,
    waker_count: u32,
}

const WAKER: usize = usize::MAX;

/// Successor states of `s` (each enabled step of each thread).
fn steps(s: &St, v: Variant) -> Vec<St> {
    let mut out: Vec<St> = (0..s.pc.len())
        .filter_map(|i| waiter_step(s, i, v))
        .collect();
    out.extend(waker_step(s, v));
    out
}

/// The next step of waiter `i`, if it can take one.
/// Correct / WakerReordered waiter: 0 inc, 1 lock, 2 read+decide, 3 done (queued or EAGAIN);
/// WaiterReadsFirst: 0 read, 10 inc, then 1, 2, 3 as the others.
fn waiter_step(s: &St, i: usize, v: Variant) -> Option<St> {
    let mut t = s.clone();
    match (v, s.pc[i]) {
        (Variant::WaiterReadsFirst, 0) => {
            t.seen[i] = t.word;
            t.pc[i] = 10;
        }
        (Variant::WaiterReadsFirst, 10) | (_, 0) => {
            t.count += 1;
            t.pc[i] = 1;
        }
        (_, 1) if s.lock.is_none() => {
            t.lock = Some(i);
            t.pc[i] = 2;
        }
        (_, 2) => {
            let val = if v == Variant::WaiterReadsFirst {
                t.seen[i]
            } else {
                t.word
            };
            if val == 0 {
                t.queued.push(i);
            } else {
                t.count -= 1;
            }
            t.lock = None;
            t.pc[i] = 3;
        }
        _ => return None,
    }
    Some(t)
}

/// The waker's next step, if it can take one.
/// Waker: 0 write word, 1 read count, 2 lock (if count > 0), 3 dequeue all + unlock, 4 done.
/// WakerReordered: 0 read count, 1 write word, then as above.
fn waker_step(s: &St, v: Variant) -> Option<St> {
    let mut t = s.clone();
    match (v, s.waker_pc) {
        (Variant::WakerReordered, 0) | (Variant::Correct | Variant::WaiterReadsFirst, 1) => {
            t.waker_count = t.count;
            t.waker_pc = s.waker_pc + 1;
        }
        (Variant::WakerReordered, 1) | (Variant::Correct | Variant::WaiterReadsFirst, 0) => {
            t.word = 1;
            t.waker_pc = s.waker_pc + 1;
        }
        (_, 2) if t.waker_count == 0 => t.waker_pc = 4,
        (_, 2) if s.lock.is_none() => {
            t.lock = Some(WAKER);
            t.waker_pc = 3;
        }
        (_, 3) => {
            for w in std::mem::take(&mut t.queued) {
                t.woken[w] = true;
                t.count -= 1;
            }
            t.lock = None;
            t.waker_pc = 4;
        }
        _ => return None,
    }
    Some(t)
}

/// Explores every interleaving; returns the number of final states with a lost wake-up.
fn explore(waiters: usize, v: Variant) -> (usize, usize) {
    let init = St {
        word: 0,
        count: 0,
        lock: None,
        queued: Vec::new(),
        pc: vec![0; waiters],
        seen: vec![0; waiters],
        woken: vec![false; waiters],
        waker_pc: 0,
        waker_count: 0,
    };
    let mut seen = HashSet::new();
    let mut stack = vec![init];
    let (mut finals, mut lost) = (0, 0);
    while let Some(s) = stack.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        let next = steps(&s, v);
        if next.is_empty() {
            finals += 1;
            assert!(
                s.pc.iter().all(|&p| p == 3) && s.waker_pc == 4,
                "stuck: {s:?}"
            );
            // Lost wake-up: a waiter stays queued after the waker finished.
            if !s.queued.is_empty() {
                lost += 1;
            } else {
                assert_eq!(s.count, 0, "count leak: {s:?}");
            }
        }
        stack.extend(next);
    }
    (finals, lost)
}

#[test]
fn protocol_exhaustive_no_lost_wakeup() {
    for waiters in 1..=3 {
        let (finals, lost) = explore(waiters, Variant::Correct);
        assert!(finals > 1);
        assert_eq!(lost, 0, "{waiters} waiters");
    }
}

#[test]
fn protocol_checker_catches_missing_fences() {
    // Without the waker's fence or with the waiter reading first, some interleaving loses
    // a wake-up: the checker must see it.
    assert!(explore(1, Variant::WakerReordered).1 > 0);
    assert!(explore(1, Variant::WaiterReadsFirst).1 > 0);
}

// ---------------------------------------------------------------- basic semantics

#[test]
fn would_block_when_value_differs() {
    for layout in [Layout::Aligned, Layout::Packed] {
        let mut spec = ModelSpec::new(jhash2().shared(), TableKind::Global);
        spec.layout = layout;
        spec.buckets = Some(16);
        let t = ModelTable::build(spec).unwrap();
        let w = AtomicU32::new(5);
        assert_eq!(t.wait(&pkey(1), &w, 4, None), Err(WaitError::WouldBlock));
        assert_eq!(t.waiters(), 0);
        assert_eq!(t.wake(&pkey(1), 1), 0);
    }
}

#[test]
fn timeout_returns_and_leaves_no_waiter() {
    let t = GlobalTable::<_, Aligned>::new(ConstantHasher(7), geom(4)).unwrap();
    let w = AtomicU32::new(0);
    let r = t.wait(&pkey(1), &w, 0, Some(Duration::from_millis(20)));
    assert_eq!(r, Ok(WaitOutcome::TimedOut));
    assert!(
        t.buckets()
            .iter()
            .all(|b| b.waiter_count() == 0 && b.queued() == 0)
    );
}

#[test]
fn wake_wakes_only_matching_key_in_shared_bucket() {
    // Constant hasher: both keys in one bucket; waking key A must not wake key B.
    let t = Arc::new(GlobalTable::<_, Packed>::new(ConstantHasher(0), geom(8)).unwrap());
    let w = Arc::new(AtomicU32::new(0));
    let hs: Vec<_> = [pkey(1), pkey(2)]
        .into_iter()
        .map(|k| {
            let (t, w) = (t.clone(), w.clone());
            std::thread::spawn(move || t.wait(&k, &w, 0, Some(LONG)))
        })
        .collect();
    assert!(wait_for(|| t.buckets()[0].queued() == 2, LONG));
    assert_eq!(t.wake(&pkey(1), usize::MAX), 1);
    assert_eq!(t.buckets()[0].queued(), 1);
    assert_eq!(t.wake(&pkey(2), 1), 1);
    for h in hs {
        assert_eq!(h.join().unwrap(), Ok(WaitOutcome::Woken));
    }
    assert_eq!(t.buckets()[0].waiter_count(), 0);
}

#[test]
fn requeue_moves_then_wakes() {
    let t = Arc::new(GlobalTable::<_, Aligned>::new(jhash2(), geom(4)).unwrap());
    let w = Arc::new(AtomicU32::new(0));
    let (k1, k2) = (pkey(10), pkey(11));
    let hs: Vec<_> = (0..3)
        .map(|_| {
            let (t, w) = (t.clone(), w.clone());
            std::thread::spawn(move || t.wait(&k1, &w, 0, Some(LONG)))
        })
        .collect();
    let queued = |t: &GlobalTable<Builtin, Aligned>| -> usize {
        t.buckets().iter().map(|b| b.queued()).sum()
    };
    assert!(wait_for(|| queued(&t) == 3, LONG));
    // Compare fails: nothing happens.
    let other = AtomicU32::new(9);
    assert_eq!(
        t.requeue(&k1, &k2, 1, 10, Some((&other, 0))),
        Err(WaitError::WouldBlock)
    );
    // Wake one, move two.
    let r = t.requeue(&k1, &k2, 1, 10, Some((&w, 0))).unwrap();
    assert_eq!(r, Requeued { woken: 1, moved: 2 });
    assert_eq!(t.wake(&k1, 10), 0);
    assert_eq!(t.wake(&k2, 10), 2);
    for h in hs {
        assert_eq!(h.join().unwrap(), Ok(WaitOutcome::Woken));
    }
    assert!(t.buckets().iter().all(|b| b.waiter_count() == 0));
}

#[test]
fn requeued_waiter_times_out_cleanly() {
    with_growing_timeouts("requeued waiter", |timeout| {
        let t = Arc::new(GlobalTable::<_, Packed>::new(jhash2(), geom(64)).unwrap());
        let w = Arc::new(AtomicU32::new(0));
        let (k1, k2) = (pkey(20), pkey(777));
        assert_ne!(t.index_of(&k1), t.index_of(&k2), "test needs two buckets");
        let t0 = Instant::now();
        let h = {
            let (t, w) = (t.clone(), w.clone());
            std::thread::spawn(move || t.wait(&k1, &w, 0, Some(timeout)))
        };
        let queued = wait_for(
            || t.bucket(&k1).queued() == 1 || t0.elapsed() >= timeout,
            timeout + LONG,
        );
        let moved = t.requeue(&k1, &k2, 0, 1, None).unwrap().moved;
        let in_time = t0.elapsed() < timeout;
        let outcome = h.join().unwrap();
        if !in_time {
            return false;
        }
        assert!(queued);
        assert_eq!(moved, 1);
        assert_eq!(outcome, Ok(WaitOutcome::TimedOut));
        assert_eq!(t.bucket(&k2).queued(), 0);
        assert_eq!(t.bucket(&k2).waiter_count(), 0);
        assert_eq!(t.bucket(&k1).waiter_count(), 0);
        true
    });
}

// ---------------------------------------------------------------- stress: no lost wake-ups

/// How long a stress waiter waits before it counts as lost (if its wake was issued) and how
/// long the master waits for a round's acknowledgements. A wait that legitimately lasts
/// this long needs the waking thread to be off the CPU for that long; at 5 s (the old
/// value) a stalled busy machine could come near. A lost wake-up still fails, after 30 s.
const STRESS_WAIT: Duration = Duration::from_secs(30);
/// Longer than [`STRESS_WAIT`], so that a lost wake-up is reported as one, not as a round
/// that was never acknowledged.
const STRESS_ROUND: Duration = Duration::from_secs(120);

type WaitFn<T> =
    fn(&T, &FutexKey, &AtomicU32, u32, Option<Duration>) -> Result<WaitOutcome, WaitError>;

/// Each worker `i` waits on its own key for its word to reach each round number; the master
/// bumps the word and wakes that key with `n = 1`. A worker that is woken while its word did
/// not change (a wrong-key wake) or times out after its wake was issued (a lost wake-up)
/// records a failure.
fn stress_per_key<T: Send + Sync + 'static>(
    threads: usize,
    rounds: u32,
    table: Arc<T>,
    wait: WaitFn<T>,
    wake: fn(&T, &FutexKey, usize) -> usize,
) {
    let words: Arc<Vec<AtomicU32>> = Arc::new((0..threads).map(|_| AtomicU32::new(0)).collect());
    let wakes_done: Arc<Vec<AtomicU32>> =
        Arc::new((0..threads).map(|_| AtomicU32::new(0)).collect());
    let acked = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (table, words, wakes_done, acked, failed) = (
                table.clone(),
                words.clone(),
                wakes_done.clone(),
                acked.clone(),
                failed.clone(),
            );
            std::thread::spawn(move || {
                let key = pkey(i as u64);
                for r in 1..=rounds {
                    loop {
                        let v = words[i].load(Ordering::SeqCst);
                        if v >= r || failed.load(Ordering::Relaxed) {
                            break;
                        }
                        // A wake of round `v` may still be in flight and legitimately wake
                        // a waiter that already waits for round `v + 1`; once that wake has
                        // completed, only a wake for a changed word may wake us.
                        let done_before = wakes_done[i].load(Ordering::SeqCst);
                        match wait(&table, &key, &words[i], v, Some(STRESS_WAIT)) {
                            Err(WaitError::WouldBlock) => {}
                            Ok(WaitOutcome::Woken) => {
                                if words[i].load(Ordering::SeqCst) == v && done_before >= v {
                                    failed.store(true, Ordering::Relaxed); // spurious/wrong key
                                }
                            }
                            Ok(WaitOutcome::TimedOut) => {
                                if wakes_done[i].load(Ordering::SeqCst) > v {
                                    failed.store(true, Ordering::Relaxed); // lost wake-up
                                }
                            }
                        }
                    }
                    acked.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let mut woken = 0;
    for r in 1..=rounds {
        let target = threads * (r as usize - 1);
        assert!(
            wait_for(
                || acked.load(Ordering::SeqCst) >= target || failed.load(Ordering::Relaxed),
                STRESS_ROUND
            ),
            "round {r}: workers did not acknowledge"
        );
        if failed.load(Ordering::Relaxed) {
            break;
        }
        for i in 0..threads {
            words[i].store(r, Ordering::SeqCst);
            let n = wake(&table, &pkey(i as u64), 1);
            assert!(n <= 1);
            woken += n;
            wakes_done[i].store(r, Ordering::SeqCst);
        }
    }
    for h in hs {
        h.join().unwrap();
    }
    assert!(!failed.load(Ordering::Relaxed), "lost or wrong wake-up");
    assert_eq!(acked.load(Ordering::SeqCst), threads * rounds as usize);
    assert!(woken <= threads * rounds as usize);
}

/// All workers wait on one key for a generation counter; the master bumps it and wakes all.
fn stress_broadcast<T: Send + Sync + 'static>(
    threads: usize,
    rounds: u32,
    table: Arc<T>,
    wait: WaitFn<T>,
    wake: fn(&T, &FutexKey, usize) -> usize,
) {
    let gen_ = Arc::new(AtomicU32::new(0));
    let wakes_done = Arc::new(AtomicU32::new(0));
    let acked = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let key = pkey(4242);
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let (table, gen_, wakes_done, acked, failed) = (
                table.clone(),
                gen_.clone(),
                wakes_done.clone(),
                acked.clone(),
                failed.clone(),
            );
            std::thread::spawn(move || {
                for r in 1..=rounds {
                    loop {
                        let v = gen_.load(Ordering::SeqCst);
                        if v >= r || failed.load(Ordering::Relaxed) {
                            break;
                        }
                        let done_before = wakes_done.load(Ordering::SeqCst);
                        match wait(&table, &key, &gen_, v, Some(STRESS_WAIT)) {
                            Ok(WaitOutcome::TimedOut) if wakes_done.load(Ordering::SeqCst) > v => {
                                failed.store(true, Ordering::Relaxed)
                            }
                            Ok(WaitOutcome::Woken)
                                if gen_.load(Ordering::SeqCst) == v && done_before >= v =>
                            {
                                failed.store(true, Ordering::Relaxed)
                            }
                            _ => {}
                        }
                    }
                    acked.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for r in 1..=rounds {
        let target = threads * (r as usize - 1);
        assert!(
            wait_for(
                || acked.load(Ordering::SeqCst) >= target || failed.load(Ordering::Relaxed),
                STRESS_ROUND
            ),
            "round {r}: workers did not acknowledge"
        );
        if failed.load(Ordering::Relaxed) {
            break;
        }
        gen_.store(r, Ordering::SeqCst);
        let n = wake(&table, &key, usize::MAX);
        assert!(n <= threads);
        wakes_done.store(r, Ordering::SeqCst);
    }
    for h in hs {
        h.join().unwrap();
    }
    assert!(!failed.load(Ordering::Relaxed), "lost or wrong wake-up");
}

fn g_wait<H: KeyHasher, L: BucketLayout>(
    t: &GlobalTable<H, L>,
    k: &FutexKey,
    w: &AtomicU32,
    e: u32,
    to: Option<Duration>,
) -> Result<WaitOutcome, WaitError> {
    t.wait(k, w, e, to)
}
fn g_wake<H: KeyHasher, L: BucketLayout>(t: &GlobalTable<H, L>, k: &FutexKey, n: usize) -> usize {
    t.wake(k, n)
}
fn m_wait(
    t: &ModelTable,
    k: &FutexKey,
    w: &AtomicU32,
    e: u32,
    to: Option<Duration>,
) -> Result<WaitOutcome, WaitError> {
    t.wait(k, w, e, to)
}
fn m_wake(t: &ModelTable, k: &FutexKey, n: usize) -> usize {
    t.wake(k, n)
}

#[test]
fn stress_constant_hasher_one_bucket() {
    for (threads, rounds) in [(2, 2000), (8, 500), (64, 100)] {
        let t = Arc::new(GlobalTable::<_, Packed>::new(ConstantHasher(3), geom(16)).unwrap());
        stress_per_key(threads, rounds, t.clone(), g_wait, g_wake);
        assert!(t.buckets().iter().all(|b| b.waiter_count() == 0));
        let t = Arc::new(GlobalTable::<_, Aligned>::new(ConstantHasher(3), geom(16)).unwrap());
        stress_broadcast(threads, rounds, t, g_wait, g_wake);
    }
}

#[test]
fn stress_jhash2_tables() {
    for kind in [TableKind::Global, TableKind::Numa, TableKind::Private] {
        for (threads, rounds) in [(3, 500), (32, 50)] {
            let mut spec = ModelSpec::new(jhash2().shared(), kind);
            spec.buckets = Some(4);
            spec.cpus = Some(2);
            if kind == TableKind::Numa {
                spec.nodes = 2;
            }
            spec.layout = if threads == 3 {
                Layout::Packed
            } else {
                Layout::Aligned
            };
            let t = Arc::new(ModelTable::build(spec).unwrap());
            stress_per_key(threads, rounds, t.clone(), m_wait, m_wake);
            stress_broadcast(threads, rounds, t.clone(), m_wait, m_wake);
            assert_eq!(t.waiters(), 0);
        }
    }
}

/// A futex-based mutex (Drepper, "Futexes are tricky", mutex2) on the table: 0 free,
/// 1 locked, 2 locked with waiters. Many threads, every mutex in one bucket.
#[test]
fn stress_futex_mutex_constant_hasher() {
    let t = Arc::new(GlobalTable::<_, Packed>::new(ConstantHasher(0), geom(1)).unwrap());
    let mutexes: Arc<Vec<AtomicU32>> = Arc::new((0..4).map(|_| AtomicU32::new(0)).collect());
    let counters: Arc<Vec<AtomicU32>> = Arc::new((0..4).map(|_| AtomicU32::new(0)).collect());
    let timeouts = Arc::new(AtomicUsize::new(0));
    let threads = 16;
    let iters = 400;
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (t, m, c, to) = (
                t.clone(),
                mutexes.clone(),
                counters.clone(),
                timeouts.clone(),
            );
            std::thread::spawn(move || {
                for j in 0..iters {
                    let which = (i + j) % 4;
                    let (word, key) = (&m[which], pkey(100 + which as u64));
                    // lock
                    if let Err(mut c0) =
                        word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                    {
                        if c0 != 2 {
                            c0 = word.swap(2, Ordering::Acquire);
                        }
                        while c0 != 0 {
                            if t.wait(&key, word, 2, Some(STRESS_WAIT)) == Ok(WaitOutcome::TimedOut)
                            {
                                to.fetch_add(1, Ordering::Relaxed);
                            }
                            c0 = word.swap(2, Ordering::Acquire);
                        }
                    }
                    // critical section: non-atomic-style increment
                    let v = c[which].load(Ordering::Relaxed);
                    c[which].store(v + 1, Ordering::Relaxed);
                    // unlock
                    if word.fetch_sub(1, Ordering::Release) != 1 {
                        word.store(0, Ordering::Release);
                        t.wake(&key, 1);
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let total: u32 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
    assert_eq!(total, (threads * iters) as u32);
    assert_eq!(
        timeouts.load(Ordering::Relaxed),
        0,
        "a waiter slept {STRESS_WAIT:?}: lost wake-up"
    );
    assert_eq!(t.buckets()[0].waiter_count(), 0);
}

// ---------------------------------------------------------------- geometry and routing

#[test]
fn kernel_sizes() {
    assert_eq!(kernel_per_node_size(2, 1), 512);
    assert_eq!(kernel_per_node_size(256, 1), 65536);
    assert_eq!(kernel_per_node_size(256, 2), 32768);
    assert_eq!(kernel_per_node_size(3, 1), 1024); // 768 rounded up
    assert_eq!(kernel_per_node_size(1, 128), 4); // max(4, ·)
    assert_eq!(kernel_per_node_size(6, 4), 512); // 384 → 512
}

#[test]
fn per_node_locate_matches_kernel_formula() {
    let g = Geometry {
        nodes: 3,
        per_node: 256,
        reduce: Reduce::Mask,
        squash: false,
    };
    for h in [0u32, 0x1234_5678, 0xffff_ffff, 0x0000_0100, 0x0000_02ff] {
        assert_eq!(
            g.locate(h, -1),
            (((h >> 8) % 3) as usize, (h & 0xff) as usize)
        );
        assert_eq!(g.locate(h, 2), (2, (h & 0xff) as usize));
    }
    let sq = Geometry { squash: true, ..g };
    assert_eq!(
        sq.locate(0x1234_5678, -1),
        (((0x1234_5678u32 >> 8) % 3) as usize, 0)
    );
    let hi = Geometry {
        reduce: Reduce::High,
        nodes: 1,
        ..g
    };
    assert_eq!(hi.locate(0xab00_0001, -1), (0, 0xab));
    assert_eq!(Reduce::High.index(0xffff_ffff, 0), 0);
    assert_eq!(Reduce::Mask.index(0xffff_ffff, 0), 0);
}

#[test]
fn bad_geometry_and_nodes_are_typed_errors() {
    // 2^56 - 1 nodes of 4 buckets: a byte size that wraps when rounded up to huge pages
    // (found by review); refused as a node count before any allocation.
    let g = Geometry {
        nodes: (1 << 56) - 1,
        ..geom(4)
    };
    assert_eq!(
        GlobalTable::<_, Aligned>::new(jhash2(), g).err(),
        Some(TableError::InvalidNodes((1 << 56) - 1))
    );
    let g = Geometry {
        nodes: MAX_NODES + 1,
        ..geom(4)
    };
    assert!(GlobalTable::<_, Aligned>::new(jhash2(), g).is_err());
    assert_eq!(
        GlobalTable::<_, Aligned>::new(jhash2(), geom(12)).err(),
        Some(TableError::InvalidSize(12))
    );
    assert_eq!(
        GlobalTable::<_, Aligned>::new(jhash2(), geom(0)).err(),
        Some(TableError::InvalidSize(0))
    );
    let g = Geometry {
        nodes: 0,
        ..geom(4)
    };
    assert_eq!(
        GlobalTable::<_, Aligned>::new(jhash2(), g).err(),
        Some(TableError::InvalidNodes(0))
    );
    let t = GlobalTable::<_, Aligned>::per_node_kernel(jhash2(), 4, 2);
    assert!(t.check_key(&pkey(1).with_node(1)).is_ok());
    assert_eq!(
        t.check_key(&pkey(1).with_node(2)),
        Err(TableError::InvalidNode(2))
    );
    let mut spec = ModelSpec::new(jhash2().shared(), TableKind::Global);
    spec.nodes = 2;
    assert_eq!(
        ModelTable::build(spec).err(),
        Some(TableError::NodesNeedNuma {
            kind: TableKind::Global,
            nodes: 2
        })
    );
    let mut spec = ModelSpec::new(jhash2().shared(), TableKind::Private);
    spec.squash = true;
    assert_eq!(
        ModelTable::build(spec).err(),
        Some(TableError::SquashNeedsGlobal)
    );
    let mut spec = ModelSpec::new(jhash2().shared(), TableKind::Private);
    spec.buckets = Some(1);
    assert_eq!(
        ModelTable::build(spec).err(),
        Some(TableError::Slots(SlotError::Invalid(1)))
    );
}

fn process(policy: SlotPolicy, cpus: usize) -> Process<Builtin, Aligned> {
    let global = Arc::new(GlobalTable::per_node_kernel(jhash2(), cpus, 1));
    let addr = Builtin::by_name("jhash2-addr", HashKey::DEFAULT).unwrap();
    Process::new(
        0xffff_8880_1234_5600,
        global,
        addr,
        policy,
        Reduce::Mask,
        cpus,
    )
}

#[test]
fn routing_follows_futex_hash() {
    let p = process(SlotPolicy::Merged, 2);
    let mm = p.mm().unwrap();
    let private = FutexKey::private(mm, 0x7f00_0000_1010).unwrap();
    let other_mm = FutexKey::private(mm + 0x1000, 0x7f00_0000_1010).unwrap();
    let anon = FutexKey::anon(mm, 0x7f00_0000_1010).unwrap();
    let inode = FutexKey::inode(1, 0, 0x10).unwrap();
    // No private table yet: everything global.
    assert!(!p.route(&private).is_private());
    p.set_slots(16).unwrap();
    assert_eq!(p.get_slots(), 16);
    let h = Builtin::by_name("jhash2-addr", HashKey::DEFAULT)
        .unwrap()
        .hash(&private);
    assert_eq!(p.route(&private), BucketId::Private((h & 15) as usize));
    assert!(!p.route(&other_mm).is_private());
    assert!(!p.route(&anon).is_private());
    assert!(!p.route(&inode).is_private());
    assert!(!p.route(&private.with_node(0)).is_private()); // explicit node: global
    let g = p.global().index_of(&anon);
    assert_eq!(p.route(&anon), BucketId::Global(g));
    // Usage counters count private lookups only.
    let w = AtomicU32::new(1);
    for _ in 0..5 {
        assert_eq!(p.wait(&private, &w, 0, None), Err(WaitError::WouldBlock));
        p.wake(&anon, 1);
    }
    p.wake(&private, 1);
    assert_eq!(p.usage().last().unwrap().lookups, 6);
}

// ---------------------------------------------------------------- PR_FUTEX_HASH

#[test]
fn slot_requests_typed_errors() {
    let p = process(SlotPolicy::Merged, 2);
    for bad in [1u64, 3, 6, 12, 1000, (1 << 31) + 2, 1 << 32] {
        let e = p.set_slots(bad).unwrap_err();
        assert_eq!(e, SlotError::Invalid(bad));
        assert_eq!(e.errno(), libc::EINVAL);
    }
    assert_eq!(p.get_slots(), 0);
    p.set_slots(2).unwrap();
    assert_eq!(p.get_slots(), 2);
    p.set_slots(8).unwrap();
    assert_eq!(p.get_slots(), 8);
    p.set_slots(4).unwrap(); // user may shrink
    assert_eq!(p.get_slots(), 4);
    p.set_slots(0).unwrap(); // switch to global
    assert!(p.is_global());
    assert_eq!(p.get_slots(), 0);
    for again in [0u64, 2, 16] {
        let e = p.set_slots(again).unwrap_err();
        assert_eq!(e, SlotError::Busy);
        assert_eq!(e.errno(), libc::EBUSY);
    }
    // EINVAL is checked before EBUSY, as in futex_hash_allocate().
    assert_eq!(p.set_slots(3), Err(SlotError::Invalid(3)));
    // Auto-allocation does nothing after the switch.
    p.thread_created();
    assert_eq!(p.get_slots(), 0);
}

#[test]
fn merged_auto_policy() {
    assert_eq!(merged_default_slots(1, 2, 512), 16);
    assert_eq!(merged_default_slots(5, 64, 16384), 32);
    assert_eq!(merged_default_slots(100, 64, 16384), 256);
    assert_eq!(merged_default_slots(100, 256, 512), 512); // capped by global size
    assert_eq!(merged_default_slots(1, 1, 4), 4); // clamp(·, 16, 4) = 4 (kernel min/max)
    // A 64-CPU machine: grows as threads are created, never shrinks.
    let p = process(SlotPolicy::Merged, 64);
    assert_eq!(p.get_slots(), 0);
    p.thread_created(); // 1 thread before the clone → 16
    assert_eq!(p.get_slots(), 16);
    let mut last = 16;
    for _ in 0..100 {
        p.thread_created();
        let s = p.get_slots();
        assert!(s >= last);
        last = s;
    }
    assert_eq!(p.threads(), 102);
    assert_eq!(last, 256); // 4 × min(101, 64) = 256
    // A 2-CPU machine stays at 16.
    let p = process(SlotPolicy::Merged, 2);
    for _ in 0..10 {
        p.thread_created();
    }
    assert_eq!(p.get_slots(), 16);
    // A user-set size disables the automatic one.
    let p = process(SlotPolicy::Merged, 64);
    p.set_slots(4).unwrap();
    for _ in 0..50 {
        p.thread_created();
    }
    assert_eq!(p.get_slots(), 4);
}

#[test]
fn rfc_v2_policy() {
    assert_eq!(rfc_v2_slots(0), 4);
    assert_eq!(rfc_v2_slots(1), 2);
    assert_eq!(rfc_v2_slots(3), 2);
    assert_eq!(rfc_v2_slots(5), 4);
    assert_eq!(rfc_v2_slots(16), 16);
    assert_eq!(rfc_v2_slots(17), 16);
    assert_eq!(rfc_v2_slots(1 << 40), 16);
    let p = process(SlotPolicy::RfcV2, 64);
    p.thread_created();
    assert_eq!(p.get_slots(), 4);
    for _ in 0..20 {
        p.thread_created();
    }
    assert_eq!(p.get_slots(), 4); // allocated once
    let e = p.set_slots(8).unwrap_err();
    assert_eq!(e, SlotError::AlreadyAllocated);
    assert_eq!(e.errno(), libc::EALREADY);
    let p = process(SlotPolicy::RfcV2, 64);
    p.set_slots(100).unwrap(); // clamped, not an error
    assert_eq!(p.get_slots(), 16);
    assert_eq!(SlotPolicy::by_name("rfc-v2"), Some(SlotPolicy::RfcV2));
    assert_eq!(SlotPolicy::by_name("x"), None);
}

#[test]
fn resize_rehashes_queued_waiters() {
    // Waiters queued in a 2-slot table; growing to 64 and then switching to the global hash
    // must carry them along: all are woken afterwards, one times out cleanly after moving.
    with_growing_timeouts("resize", |short| {
        // The others are woken by the test; their timeout only ends a lost wake-up.
        let long = LONG + 10 * short;
        let p = Arc::new(process(SlotPolicy::Manual, 2));
        p.set_slots(2).unwrap();
        let mm = p.mm().unwrap();
        let keys: Vec<FutexKey> = (0..6)
            .map(|i| FutexKey::private(mm, 0x7f00_0000_0000 + 64 * i).unwrap())
            .collect();
        let w = Arc::new(AtomicU32::new(0));
        let t0 = Instant::now();
        let hs: Vec<_> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                let (p, w) = (p.clone(), w.clone());
                let to = if i == 0 { short } else { long };
                std::thread::spawn(move || p.wait(&k, &w, 0, Some(to)))
            })
            .collect();
        let queued = wait_for(
            || p.private_waiters() == 6 || t0.elapsed() >= short,
            short + LONG,
        );
        p.set_slots(64).unwrap();
        let after_growing = p.private_waiters();
        p.set_slots(0).unwrap();
        let after_switching = p.private_waiters();
        let global_waiters = || -> u64 {
            p.global()
                .buckets()
                .iter()
                .map(|b| b.waiter_count() as u64)
                .sum()
        };
        let in_global = global_waiters();
        let short_in_time = t0.elapsed() < short;
        let mut it = hs.into_iter();
        let first = it.next().unwrap().join().unwrap(); // the short one times out
        let woken: Vec<usize> = keys[1..].iter().map(|k| p.wake(k, 1)).collect();
        let long_in_time = t0.elapsed() < long;
        let mut outcomes = vec![first];
        outcomes.extend(it.map(|h| h.join().unwrap()));
        if !(short_in_time && long_in_time) {
            return false;
        }
        assert!(queued);
        assert_eq!(after_growing, 6);
        assert_eq!(after_switching, 0);
        assert_eq!(in_global, 6);
        assert_eq!(woken, [1; 5]);
        assert_eq!(outcomes[0], Ok(WaitOutcome::TimedOut));
        assert!(outcomes[1..].iter().all(|o| *o == Ok(WaitOutcome::Woken)));
        assert_eq!(global_waiters(), 0);
        assert_eq!(p.usage().len(), 2); // the 2- and 64-slot tables, both retired now
        true
    });
}

// ---------------------------------------------------------------- model-based test

#[derive(Clone, Debug)]
enum Op {
    /// Start a thread that waits on key `k` (its word matches).
    Wait(u8),
    /// Wait with a stale value: must return WouldBlock.
    Stale(u8),
    Wake(u8, u8),
    Requeue(u8, u8, u8, u8),
}

fn op_strategy() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0u8..4).prop_map(Op::Wait),
        1 => (0u8..4).prop_map(Op::Stale),
        2 => (0u8..4, 0u8..4).prop_map(|(k, n)| Op::Wake(k, n)),
        1 => (0u8..4, 0u8..4, 0u8..3, 0u8..4).prop_map(|(a, b, w, r)| Op::Requeue(a, b, w, r)),
    ]
}

fn run_model(spec: ModelSpec, ops: &[Op]) {
    let t = Arc::new(ModelTable::build(spec).unwrap());
    let word = Arc::new(AtomicU32::new(0)); // never changes: every real wait queues
    let oracle: Mutex<HashMap<u8, usize>> = Mutex::new(HashMap::new());
    let queued_total = |t: &ModelTable| t.waiters() as usize;
    let mut handles = Vec::new();
    for op in ops {
        match *op {
            Op::Wait(k) => {
                let (t2, w2) = (t.clone(), word.clone());
                handles.push(std::thread::spawn(move || {
                    t2.wait(&pkey(k as u64), &w2, 0, Some(LONG))
                }));
                *oracle.lock().unwrap().entry(k).or_default() += 1;
                let expect: usize = oracle.lock().unwrap().values().sum();
                // Wait until the waiter is on a chain (waiter count covers queued + arriving;
                // the chain length check below makes sure it is queued).
                assert!(
                    wait_for(|| t.queued() == expect, LONG),
                    "waiter never queued"
                );
            }
            Op::Stale(k) => {
                let stale = AtomicU32::new(1);
                assert_eq!(
                    t.wait(&pkey(k as u64), &stale, 0, Some(LONG)),
                    Err(WaitError::WouldBlock)
                );
            }
            Op::Wake(k, n) => {
                let mut o = oracle.lock().unwrap();
                let c = o.entry(k).or_default();
                let expect = (*c).min(n as usize);
                *c -= expect;
                assert_eq!(t.wake(&pkey(k as u64), n as usize), expect);
            }
            Op::Requeue(a, b, nw, nr) => {
                let mut o = oracle.lock().unwrap();
                let ca = *o.get(&a).unwrap_or(&0);
                let woken = ca.min(nw as usize);
                let moved = (ca - woken).min(nr as usize);
                let r = t
                    .requeue(
                        &pkey(a as u64),
                        &pkey(b as u64),
                        nw as usize,
                        nr as usize,
                        Some((&word, 0)),
                    )
                    .unwrap();
                assert_eq!(r, Requeued { woken, moved });
                *o.entry(a).or_default() -= woken + moved;
                *o.entry(b).or_default() += moved;
            }
        }
        let expect: usize = oracle.lock().unwrap().values().sum();
        assert_eq!(t.queued(), expect);
    }
    // Drain: wake everything left, every thread must report Woken.
    let left: Vec<(u8, usize)> = oracle
        .lock()
        .unwrap()
        .iter()
        .map(|(k, c)| (*k, *c))
        .collect();
    for (k, c) in left {
        assert_eq!(t.wake(&pkey(k as u64), usize::MAX), c);
    }
    for h in handles {
        assert_eq!(h.join().unwrap(), Ok(WaitOutcome::Woken));
    }
    assert!(wait_for(|| queued_total(&t) == 0, LONG));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]
    #[test]
    fn model_matches_oracle(
        ops in proptest::collection::vec(op_strategy(), 1..14),
        kind in 0usize..3,
        packed in proptest::bool::ANY,
        buckets in proptest::sample::select(vec![2usize, 4, 64]),
        high in proptest::bool::ANY,
        squash in proptest::bool::ANY,
    ) {
        let kind = [TableKind::Global, TableKind::Numa, TableKind::Private][kind];
        let mut spec = ModelSpec::new(jhash2().shared(), kind);
        spec.buckets = Some(buckets);
        spec.cpus = Some(2);
        spec.layout = if packed { Layout::Packed } else { Layout::Aligned };
        if kind == TableKind::Numa {
            spec.nodes = 2;
        }
        if high {
            spec.reduce = Reduce::High;
        }
        spec.squash = squash && kind != TableKind::Private;
        run_model(spec, &ops);
    }
}

#[test]
fn model_spec_describe_and_parse() {
    let mut spec = ModelSpec::new(jhash2().shared(), TableKind::Numa);
    spec.nodes = 2;
    spec.buckets = Some(512);
    spec.squash = true;
    let t = ModelTable::build(spec).unwrap();
    assert_eq!(t.describe(), "numa jhash2 2x512 aligned mask squash");
    assert_eq!(TableKind::by_name("private"), Some(TableKind::Private));
    assert_eq!(Layout::by_name("packed"), Some(Layout::Packed));
    assert_eq!(Reduce::by_name("high"), Some(Reduce::High));
    assert_eq!(Layout::by_name("nope"), None);
    // Squash: every key of a node in that node's bucket 0.
    for i in 0..50 {
        let idx = t.bucket_of(&pkey(i)).index();
        assert_eq!(idx % 512, 0);
    }
}

#[test]
fn first_private_table_takes_over_waiters_queued_on_the_global_table() {
    // The lost wake-up the table_ops fuzz target found: private-key waiters queued on the
    // global table before the process had a private table must move when the first one is
    // installed (by set_slots or by automatic sizing), or the wake routed to the new table
    // finds nobody.
    for install in ["set_slots", "thread_created"] {
        let policy = if install == "set_slots" {
            SlotPolicy::Manual
        } else {
            SlotPolicy::Merged
        };
        let p = Arc::new(process(policy, 2));
        assert_eq!(p.get_slots(), 0);
        let k = FutexKey::private(p.mm().unwrap(), 0x7f00_0000_1000).unwrap();
        let w = Arc::new(AtomicU32::new(0));
        let h = {
            let (p, w) = (p.clone(), w.clone());
            std::thread::spawn(move || p.wait(&k, &w, 0, Some(LONG)))
        };
        let global_waiters = || -> u64 {
            p.global()
                .buckets()
                .iter()
                .map(|b| b.waiter_count() as u64)
                .sum()
        };
        assert!(wait_for(|| global_waiters() == 1, LONG), "{install}");
        if install == "set_slots" {
            p.set_slots(16).unwrap();
        } else {
            p.thread_created();
        }
        assert!(p.get_slots() >= 2, "{install}: no private table installed");
        assert_eq!(
            global_waiters(),
            0,
            "{install}: waiter left on the global table"
        );
        assert_eq!(p.private_waiters(), 1, "{install}");
        assert_eq!(p.wake(&k, 1), 1, "{install}: the wake found nobody");
        assert_eq!(h.join().unwrap(), Ok(WaitOutcome::Woken), "{install}");
    }
}

#[test]
fn waiter_moved_into_another_process_private_table_outlives_that_process() {
    // Process B's private table can receive process A's waiters (B's first table takes over
    // the global waiters of the private keys B owns; B's requeue moves a waiter of any key).
    // A's waiter blocks through A, which keeps only the shared global table alive, so B's
    // tables must outlive B or the waiter's timeout path locks freed memory.
    for how in ["first table", "requeue"] {
        with_growing_timeouts(how, |timeout| moved_waiter_outlives(how, timeout));
    }
}

/// One case of [`waiter_moved_into_another_process_private_table_outlives_that_process`],
/// with the waiter's timeout; false if the steps took that long (see
/// [`with_growing_timeouts`]).
fn moved_waiter_outlives(how: &str, timeout: Duration) -> bool {
    let a = Arc::new(process(SlotPolicy::Manual, 2));
    let mm = a.mm().unwrap();
    let b = Process::new(
        mm,
        a.global().clone(),
        Builtin::by_name("jhash2-addr", HashKey::DEFAULT).unwrap(),
        SlotPolicy::Manual,
        Reduce::Mask,
        2,
    );
    let private_of_b = FutexKey::private(mm, 0x7f00_0000_2000).unwrap();
    let waited = if how == "first table" {
        FutexKey::private(mm, 0x7f00_0000_1000).unwrap()
    } else {
        b.set_slots(16).unwrap();
        FutexKey::inode(1, 0, 0x40).unwrap()
    };
    let word = Arc::new(AtomicU32::new(0));
    let t0 = Instant::now();
    let h = {
        let (a, word) = (a.clone(), word.clone());
        std::thread::spawn(move || a.wait(&waited, &word, 0, Some(timeout)))
    };
    let queued = wait_for(
        || a.global().bucket(&waited).queued() == 1 || t0.elapsed() >= timeout,
        timeout + LONG,
    );
    let requeued = if how == "first table" {
        b.set_slots(16).unwrap();
        None
    } else {
        Some(b.requeue(&waited, &private_of_b, 0, 1, None).unwrap())
    };
    let left_in_global = a.global().bucket(&waited).queued();
    let in_b = b.private_waiters();
    drop(b);
    let adopted = a.global().adopted_tables();
    let in_time = t0.elapsed() < timeout;
    let outcome = h.join().unwrap();
    if !in_time {
        return false;
    }
    assert!(queued, "{how}");
    if let Some(r) = requeued {
        assert_eq!(r, Requeued { woken: 0, moved: 1 }, "{how}");
    }
    assert_eq!(left_in_global, 0, "{how}: not moved");
    assert_eq!(in_b, 1, "{how}: not in B's private table");
    assert_eq!(adopted, 1, "{how}: B's table was freed");
    assert_eq!(outcome, Ok(WaitOutcome::TimedOut), "{how}");
    true
}

/// The `FutexTable` contract, driven through the trait only.
fn futex_table_contract<T: FutexTable + ?Sized>(t: &T, name: &str) {
    let (k1, k2) = (pkey(1), pkey(2));
    let word = AtomicU32::new(0);
    assert_eq!(
        t.wait(&k1, &word, 1, None),
        Err(WaitError::WouldBlock),
        "{name}"
    );
    assert_eq!(t.wake(&k1, 1), 0, "{name}");
    let short = Some(Duration::from_millis(1));
    assert_eq!(
        t.wait(&k1, &word, 0, short),
        Ok(WaitOutcome::TimedOut),
        "{name}"
    );
    assert_eq!(
        (t.queued(), t.waiters()),
        (0, 0),
        "{name}: timeout left a waiter"
    );
    assert_eq!(
        t.requeue(&k1, &k2, 1, 1, Some((&word, 5))),
        Err(WaitError::WouldBlock),
        "{name}: stale cmp"
    );
    assert!(t.check_key(&k1).is_ok(), "{name}");
    std::thread::scope(|s| {
        let h = s.spawn(|| t.wait(&k1, &word, 0, Some(LONG)));
        assert!(wait_for(|| t.queued() == 1, LONG), "{name}: never queued");
        assert_eq!(t.waiters(), 1, "{name}");
        let moved = t.requeue(&k1, &k2, 0, 1, Some((&word, 0)));
        assert_eq!(moved, Ok(Requeued { woken: 0, moved: 1 }), "{name}");
        assert_eq!(t.wake(&k1, 1), 0, "{name}: waiter still on key 1");
        assert_eq!(t.wake(&k2, 1), 1, "{name}: waiter not on key 2");
        assert_eq!(h.join().unwrap(), Ok(WaitOutcome::Woken), "{name}");
    });
    assert_eq!((t.queued(), t.waiters()), (0, 0), "{name}");
}

#[test]
fn every_table_meets_the_futex_table_contract() {
    let global = GlobalTable::<_, Packed>::new(jhash2(), geom(64)).unwrap();
    futex_table_contract(&global, "global");
    assert_eq!(
        FutexTable::bucket_of(&global, &pkey(1)),
        BucketId::Global(global.index_of(&pkey(1)))
    );
    let p = process(SlotPolicy::Manual, 2);
    p.set_slots(16).unwrap();
    futex_table_contract(&p, "process");
    assert!(FutexTable::bucket_of(&p, &pkey(1)).is_private());
    let mut spec = ModelSpec::new(jhash2().shared(), TableKind::Private);
    spec.buckets = Some(16);
    let model: Arc<dyn FutexTable> = Arc::new(ModelTable::build(spec).unwrap());
    futex_table_contract(&model, "Arc<dyn FutexTable> of a private model table");
}

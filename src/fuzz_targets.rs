//! Bodies of the cargo-fuzz targets in `fuzz/`, kept in the library so that `cargo test`
//! replays the committed seed corpus (`fuzz/seeds/<target>/`) through exactly the code the
//! fuzzer runs (`tests/fuzz_seeds.rs`). Each function panics on a violated property, which
//! is what the fuzzer reports as a crash.

use crate::hashers::{Builtin, HashKey, KeyHasher, all_builtins};
use crate::key::FutexKey;
use crate::table::{
    BucketLayout, FutexTable, Geometry, GlobalTable, Process, Reduce, Requeued, SlotError,
    SlotPolicy, TableError, WaitError, WaitOutcome,
};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

/// Names of the targets, as directories under `fuzz/seeds/` and binaries in `fuzz/`.
pub const TARGETS: &[&str] = &[
    "key_bytes",
    "key_text",
    "hashers",
    "trace_line",
    "table_ops",
];

/// Runs the target `name` on `data`; `false` if no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "key_bytes" => key_bytes(data),
        "key_text" => key_text(data),
        "hashers" => hashers(data),
        "trace_line" => trace_line(data),
        "table_ops" => table_ops(data),
        _ => return false,
    }
    true
}

/// 24-byte decoding: a decoded key re-encodes to the same bytes, survives the text form,
/// and never panics on any input.
pub fn key_bytes(data: &[u8]) {
    let Ok(key) = FutexKey::from_bytes(data) else {
        return;
    };
    assert_eq!(&key.to_bytes()[..], data, "decode/encode round trip");
    let text = key.to_string();
    let back: FutexKey = text.parse().expect("display output must parse");
    assert_eq!(back, key, "text round trip of {text}");
}

/// Text parsing: never panics; a parsed key displays to a canonical form that parses to
/// the same key and is a fixed point.
pub fn key_text(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(key) = s.parse::<FutexKey>() else {
        return;
    };
    let canon = key.to_string();
    let again: FutexKey = canon.parse().expect("canonical form must parse");
    assert_eq!(again, key);
    assert_eq!(again.to_string(), canon, "canonical form is a fixed point");
    assert_eq!(FutexKey::from_bytes(&key.to_bytes()), Ok(key));
}

/// Every hasher on an arbitrary key (and an arbitrary hash key): no panic, deterministic,
/// `hash_many` agrees with `hash`, and the addr scope ignores `w0`.
pub fn hashers(data: &[u8]) {
    if data.len() < 40 {
        return;
    }
    let Ok(key) = FutexKey::from_bytes(&data[..24]) else {
        return;
    };
    let hk = HashKey::from_bytes(data[24..40].try_into().expect("16 bytes"));
    let mut other_w0 = key.to_bytes();
    other_w0[..8].iter_mut().for_each(|b| *b = !*b);
    let other = FutexKey::from_bytes(&other_w0).expect("w0 does not affect validity");
    for h in all_builtins(hk) {
        let v = h.hash(&key);
        assert_eq!(v, h.hash(&key), "{} deterministic", h.name());
        let mut out = [0u32; 1];
        h.hash_many(&[key], &mut out);
        assert_eq!(out[0], v, "{} hash_many", h.name());
        if h.scope() == crate::Scope::Addr {
            assert_eq!(h.hash(&other), v, "{} must ignore w0", h.name());
        }
        let again = Builtin::by_name(h.name(), hk).expect("registry name");
        assert_eq!(again.hash(&key), v);
    }
}

/// The strace line parser and the whole-trace key extraction: never panic on any text; a
/// parsed futex call on an aligned address gives a key, and a trace is deterministic.
pub fn trace_line(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        if let Ok(Some(ev)) = crate::workload::parse_strace_line(line) {
            if let crate::workload::TraceAction::Futex { uaddr, private, .. } = ev.action {
                let key = if private {
                    FutexKey::private(1, uaddr)
                } else {
                    FutexKey::anon(1, uaddr)
                };
                assert_eq!(key.is_ok(), uaddr % 4 == 0, "uaddr {uaddr:#x}");
            }
        }
    }
    let a = crate::workload::trace::keys_from_strace(&text);
    let b = crate::workload::trace::keys_from_strace(&text);
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "trace import is deterministic"
    );
}

/// Keys the `table_ops` target works on: four private keys of the process (`mm` 1), a
/// private key of another process, a shared anon key, an inode key, and a private key with an
/// explicit node 0 (FUTEX2_NUMA). Private keys of `mm` 1 route to the private table when the
/// process has one; the rest always go to the global table.
fn table_key(i: u8) -> FutexKey {
    let k = match i % 8 {
        n @ 0..=3 => FutexKey::private(1, 0x7f00_0000_1000 + 4 * n as u64),
        4 => FutexKey::private(2, 0x7f00_0000_1000),
        5 => FutexKey::anon(1, 0x7f00_0000_2000),
        6 => FutexKey::inode(7, 3, 8),
        _ => FutexKey::private(1, 0x7f00_0000_3000).map(|k| k.with_node(0)),
    };
    k.expect("valid fixed key")
}

/// Slot counts the `table_ops` target requests: valid, invalid (1, 3, 5, not a power of two,
/// above 2^31) and 0 (switch to the global hash).
const SLOT_REQUESTS: [u64; 8] = [0, 1, 2, 3, 16, 64, 5, 1 << 32];

/// Upper bound on waiter threads per input, so one input stays fast.
const MAX_WAITERS: usize = 6;

/// Bound on every blocking wait in `table_ops`: a lost wake-up shows up as a `TimedOut`
/// (an assertion failure), never as a hang.
const TABLE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The oracle's private-hash state of the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotState {
    None,
    Global,
    Table { slots: u64, custom: bool },
}

/// A table-operation sequence on a [`Process`](crate::table::Process) (private table +
/// global table) checked against a simple oracle: per-key waiter counts and the
/// `PR_FUTEX_HASH` state.
///
/// Byte 0 picks the configuration (layout, reduction, slot policy, global size, nodes,
/// hasher), byte 1 the private hasher; then each op is one byte (`op % 8`) plus arguments:
/// - wait: a helper thread queues on a key (word matches), bounded by [`TABLE_WAIT`];
/// - stale wait: word differs → must be `Err(WouldBlock)` at once, nothing queued;
/// - timed wait: word matches, zero/1 µs timeout, nobody wakes → must be `Ok(TimedOut)`
///   and leave nothing queued;
/// - wake: returns `min(n, waiters of the key)`;
/// - requeue (compare ok or not): `woken = min(nr_wake, c)`, `moved = min(nr_requeue, c -
///   woken)`, or `Err(WouldBlock)` with no change;
/// - set_slots: the typed `SlotError`s (EINVAL before EBUSY, EALREADY for RFC v2), then
///   `get_slots`/`is_global` must match; queued waiters survive the rehash;
/// - thread_created: the automatic sizing policy;
/// - check_key on a key with node 0..3: `InvalidNode` iff the node does not exist.
///
/// After every op the queued total must equal the oracle's; at the end every key is woken
/// with the oracle's count and every helper thread must report `Woken`.
pub fn table_ops(data: &[u8]) {
    use crate::table::{Aligned, Packed};
    if data.len() < 2 {
        return;
    }
    if data[0] & 1 == 0 {
        table_ops_on::<Aligned>(data);
    } else {
        table_ops_on::<Packed>(data);
    }
}

fn table_ops_on<L: BucketLayout>(data: &[u8]) {
    let mut run = TableOpsRun::<L>::new(data[0], data[1]);
    let mut input = Cursor(&data[2..]);
    for _ in 0..MAX_OPS {
        let Some(op) = input.op() else { break };
        match op % 8 {
            0 => run.wait(input.arg() % 8),
            1 => run.stale_wait(input.arg() % 8, input.arg()),
            2 => run.timed_wait(input.arg() % 8, input.arg()),
            3 => run.wake(input.arg() % 8, input.arg() % 8),
            4 => run.requeue(input.arg() % 8, input.arg() % 8, input.arg()),
            5 => run.set_slots(SLOT_REQUESTS[(input.arg() % 8) as usize]),
            6 => run.thread_created(),
            _ => run.check_key((input.arg() % 4) as i32),
        }
        run.check_state(op);
    }
    run.drain();
}

/// One `table_ops` input being run: the process under test and the oracle's view of it.
struct TableOpsRun<L: BucketLayout> {
    p: Arc<Process<Builtin, L>>,
    policy: SlotPolicy,
    cpus: usize,
    /// Buckets per node of the global table (the merged policy's upper clamp).
    per_node: usize,
    nodes: usize,
    /// The futex word of every matching wait; never changes, so every such wait queues.
    word: Arc<AtomicU32>,
    /// Oracle: waiters queued per key (index as in [`table_key`]).
    count: [usize; 8],
    /// Oracle: the `PR_FUTEX_HASH` state.
    state: SlotState,
    /// Oracle: threads of the process.
    threads: usize,
    handles: Vec<std::thread::JoinHandle<Result<WaitOutcome, WaitError>>>,
}

impl<L: BucketLayout> TableOpsRun<L> {
    /// Byte `cfg` picks layout (bit 0, by the caller), reduction, slot policy, global size,
    /// nodes and squash; `hashers` the global (bits 2..4) and private (bits 0..2) hashers.
    fn new(cfg: u8, hashers: u8) -> Self {
        const HASHERS: [&str; 4] = ["jhash2", "jhash2-addr", "xxhash", "crc32"];
        let hasher = |b: u8| {
            Builtin::by_name(HASHERS[(b & 3) as usize], HashKey::DEFAULT).expect("known hasher")
        };
        let reduce = if cfg & 2 == 0 {
            Reduce::Mask
        } else {
            Reduce::High
        };
        let policy = [
            SlotPolicy::Merged,
            SlotPolicy::RfcV2,
            SlotPolicy::Manual,
            SlotPolicy::Merged,
        ][(cfg >> 2 & 3) as usize];
        // Global tables of 4 (smaller than the merged policy's floor of 16) to 64 buckets.
        let per_node = [4usize, 16, 64, 8][(cfg >> 4 & 3) as usize];
        let nodes = 1 + (cfg >> 6 & 1) as usize;
        let geometry = Geometry {
            nodes,
            per_node,
            reduce,
            squash: cfg & 0x80 != 0, // FUTEX_SQUASH: every global key in one bucket per node
        };
        let global: Arc<GlobalTable<Builtin, L>> =
            Arc::new(GlobalTable::new(hasher(hashers >> 2), geometry).expect("valid geometry"));
        let cpus = 2;
        let p = Process::new(1, global, hasher(hashers), policy, reduce, cpus);
        TableOpsRun {
            p: Arc::new(p),
            policy,
            cpus,
            per_node,
            nodes,
            word: Arc::new(AtomicU32::new(0)),
            count: [0; 8],
            state: SlotState::None,
            threads: 1,
            handles: Vec::new(),
        }
    }

    fn expected_queued(&self) -> usize {
        self.count.iter().sum()
    }

    /// Waits (yielding) until `want` waiters are queued or [`TABLE_WAIT`] passes.
    fn settle(&self, want: usize) -> usize {
        let end = Instant::now() + TABLE_WAIT;
        while self.p.queued() != want && Instant::now() < end {
            std::thread::yield_now();
        }
        self.p.queued()
    }

    /// A helper thread queues on key `k` (bounded by [`TABLE_WAIT`]).
    fn wait(&mut self, k: u8) {
        if self.handles.len() >= MAX_WAITERS {
            return;
        }
        let (p, word) = (self.p.clone(), self.word.clone());
        self.handles.push(std::thread::spawn(move || {
            p.wait(&table_key(k), &word, 0, Some(TABLE_WAIT))
        }));
        self.count[k as usize] += 1;
        let want = self.expected_queued();
        assert_eq!(self.settle(want), want, "waiter on key {k} never queued");
    }

    /// The word differs: `WouldBlock` at once, nothing queued.
    fn stale_wait(&self, k: u8, v: u8) {
        let stale = AtomicU32::new(v as u32 | 1);
        assert_eq!(
            self.p.wait(&table_key(k), &stale, 0, Some(TABLE_WAIT)),
            Err(WaitError::WouldBlock),
            "stale wait on key {k}"
        );
    }

    /// The word matches, a 0 or 1 µs timeout, nobody wakes: `TimedOut`.
    fn timed_wait(&self, k: u8, t: u8) {
        let t = Duration::from_micros((t & 1) as u64);
        assert_eq!(
            self.p.wait(&table_key(k), &self.word, 0, Some(t)),
            Ok(WaitOutcome::TimedOut),
            "timed wait on key {k}"
        );
    }

    /// Wakes `min(n, waiters of k)`.
    fn wake(&mut self, k: u8, n: u8) {
        let want = self.count[k as usize].min(n as usize);
        assert_eq!(
            self.p.wake(&table_key(k), n as usize),
            want,
            "wake {n} on key {k}"
        );
        self.count[k as usize] -= want;
    }

    /// `args`: bits 0..2 nr_wake, 2..5 nr_requeue, bit 5 a stale compare word.
    fn requeue(&mut self, a: u8, b: u8, args: u8) {
        let (nw, nr, ok) = (args & 3, args >> 2 & 7, args & 0x20 == 0);
        let cmp_word = AtomicU32::new(if ok { 0 } else { 1 });
        let r = self.p.requeue(
            &table_key(a),
            &table_key(b),
            nw as usize,
            nr as usize,
            Some((&cmp_word, 0)),
        );
        if ok {
            let c = self.count[a as usize];
            let woken = c.min(nw as usize);
            let moved = (c - woken).min(nr as usize);
            assert_eq!(r, Ok(Requeued { woken, moved }), "requeue {a}->{b}");
            self.count[a as usize] -= woken + moved;
            self.count[b as usize] += moved;
        } else {
            assert_eq!(r, Err(WaitError::WouldBlock), "requeue with stale cmp");
        }
    }

    /// `PR_FUTEX_HASH` set: the oracle's result, and the kernel's errno for each error.
    fn set_slots(&mut self, req: u64) {
        let want = match self.policy {
            SlotPolicy::RfcV2 => {
                if matches!(self.state, SlotState::Table { .. }) {
                    Err(SlotError::AlreadyAllocated)
                } else {
                    // Seed 000: 0 means 4; clamp to 2..=16; round down to a power of 2.
                    let s = if req == 0 { 4 } else { req.clamp(2, 16) };
                    self.state.allocate(1 << s.ilog2(), true)
                }
            }
            _ => self.state.allocate(req, true),
        };
        assert_eq!(
            self.p.set_slots(req),
            want,
            "set_slots({req}) under {:?}",
            self.policy
        );
        if let Err(e) = want {
            let errno = match e {
                SlotError::Invalid(_) => libc::EINVAL,
                SlotError::Busy => libc::EBUSY,
                SlotError::AlreadyAllocated => libc::EALREADY,
                SlotError::NoMemory(_) => libc::ENOMEM,
            };
            assert_eq!(e.errno(), errno);
        }
    }

    /// A new thread: the automatic sizing of the policy, computed from its definition.
    fn thread_created(&mut self) {
        match self.policy {
            SlotPolicy::Merged => {
                if let SlotState::None | SlotState::Table { custom: false, .. } = self.state {
                    let current = match self.state {
                        SlotState::Table { slots, .. } => slots,
                        _ => 0,
                    };
                    let t = self.threads.min(self.cpus);
                    let want = ((4 * t).next_power_of_two() as u64)
                        .max(16)
                        .min(self.per_node as u64);
                    if current < want {
                        self.state.allocate(want, false).expect("valid default");
                    }
                }
            }
            SlotPolicy::RfcV2 => {
                if self.threads == 1 && self.state == SlotState::None {
                    self.state.allocate(4, false).expect("valid default");
                }
            }
            SlotPolicy::Manual => {}
        }
        self.p.thread_created();
        self.threads += 1;
        assert_eq!(self.p.threads(), self.threads);
    }

    /// A key with node `n`: `InvalidNode` iff the node does not exist.
    fn check_key(&self, n: i32) {
        let key = table_key(0).with_node(n);
        let want = if (n as usize) < self.nodes {
            Ok(())
        } else {
            Err(TableError::InvalidNode(n))
        };
        assert_eq!(self.p.check_key(&key), want);
    }

    /// After every op: slots, global switch and queued total as the oracle says.
    fn check_state(&self, op: u8) {
        let slots = match self.state {
            SlotState::Table { slots, .. } => slots as usize,
            _ => 0,
        };
        assert_eq!(self.p.get_slots(), slots, "get_slots after op {op}");
        assert_eq!(self.p.is_global(), self.state == SlotState::Global);
        assert_eq!(
            self.p.queued(),
            self.expected_queued(),
            "queued after op {op}"
        );
    }

    /// Wakes every key's waiters; every helper must report `Woken`.
    fn drain(self) {
        for (k, c) in self.count.iter().enumerate() {
            assert_eq!(
                self.p.wake(&table_key(k as u8), usize::MAX),
                *c,
                "drain key {k}"
            );
        }
        for h in self.handles {
            let r = h.join().expect("waiter thread");
            assert_eq!(r, Ok(WaitOutcome::Woken), "a waiter was not woken");
        }
        assert_eq!(self.p.queued(), 0);
    }
}

impl SlotState {
    /// The oracle's slot request, merged semantics: EINVAL first, then EBUSY.
    fn allocate(&mut self, slots: u64, custom: bool) -> Result<(), SlotError> {
        if slots != 0 && (slots == 1 || !slots.is_power_of_two() || slots > 1 << 31) {
            return Err(SlotError::Invalid(slots));
        }
        if *self == SlotState::Global {
            return if custom { Err(SlotError::Busy) } else { Ok(()) };
        }
        *self = if slots == 0 {
            SlotState::Global
        } else {
            SlotState::Table { slots, custom }
        };
        Ok(())
    }
}

/// Upper bound on ops per input.
const MAX_OPS: usize = 64;

/// Reads op bytes; arguments past the end read as 0.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn op(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn arg(&mut self) -> u8 {
        self.op().unwrap_or(0)
    }
}

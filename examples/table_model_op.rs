//! Cost of one model futex operation against the real syscall, measured side by side.
//!
//! The operation is the EAGAIN path of FUTEX_WAIT that `perf bench futex hash` measures:
//! hash the key, lock the bucket, compare the futex word (it differs), unlock. For the kernel
//! it is `futex(FUTEX_WAIT_PRIVATE)` with a wrong expected value; for the model it is
//! `ModelTable::wait` with a wrong expected value. Also FUTEX_WAKE with no waiters (the
//! lockless empty check). Each thread cycles over 1024 futex words, as perf bench does.
//!
//! Run: `cargo run --release --example table_model_op -- [threads] [ops-per-thread] [runs]`
//! Prints the median over `runs` of ns per operation per thread for each variant.

use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use futexhash::hashers::{Builtin, HashKey};
use futexhash::key::FutexKey;
use futexhash::table::{Layout, ModelSpec, ModelTable, TableKind};

const FUTEXES: usize = 1024;

#[derive(Clone, Copy)]
enum Op {
    Wait,
    Wake,
}

fn kernel_op(words: &[AtomicU32], op: Op, ops: usize) {
    for i in 0..ops {
        let w = &words[i % FUTEXES];
        // SAFETY: `w` is a valid, aligned u32 that outlives the call; FUTEX_WAIT with a value
        // that differs returns EAGAIN at once, FUTEX_WAKE with no waiters returns 0.
        unsafe {
            match op {
                Op::Wait => libc::syscall(
                    libc::SYS_futex,
                    w.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    1u32,
                    std::ptr::null::<libc::timespec>(),
                ),
                Op::Wake => libc::syscall(
                    libc::SYS_futex,
                    w.as_ptr(),
                    libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                    1u32,
                ),
            };
        }
    }
}

fn model_op(t: &ModelTable, keys: &[FutexKey], words: &[AtomicU32], op: Op, ops: usize) {
    for i in 0..ops {
        let j = i % FUTEXES;
        match op {
            Op::Wait => {
                let _ = std::hint::black_box(t.wait(&keys[j], &words[j], 1, None));
            }
            Op::Wake => {
                std::hint::black_box(t.wake(&keys[j], 1));
            }
        }
    }
}

/// Runs `f(thread)` on `threads` threads at once; returns ns per op per thread.
fn timed(threads: usize, ops: usize, f: Arc<dyn Fn(usize) + Send + Sync>) -> f64 {
    let barrier = Arc::new(Barrier::new(threads + 1));
    let hs: Vec<_> = (0..threads)
        .map(|i| {
            let (b, f) = (barrier.clone(), f.clone());
            std::thread::spawn(move || {
                b.wait();
                let t0 = Instant::now();
                f(i);
                t0.elapsed().as_nanos() as f64
            })
        })
        .collect();
    barrier.wait();
    let total: f64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    total / threads as f64 / ops as f64
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("usage: [threads] [ops-per-thread] [runs]"))
        .collect();
    let threads = args.first().copied().unwrap_or(1).max(1);
    let ops = args.get(1).copied().unwrap_or(1_000_000).max(1);
    let runs = args.get(2).copied().unwrap_or(7).max(1);

    let jhash2 = Builtin::by_name("jhash2", HashKey::DEFAULT).unwrap();
    let jhash2_addr = Builtin::by_name("jhash2-addr", HashKey::DEFAULT).unwrap();
    let mut configs: Vec<(String, Option<Arc<ModelTable>>)> = vec![("kernel".into(), None)];
    for (kind, layout) in [
        (TableKind::Global, Layout::Aligned),
        (TableKind::Global, Layout::Packed),
        (TableKind::Numa, Layout::Aligned),
        (TableKind::Private, Layout::Aligned),
    ] {
        let mut spec = ModelSpec::new(jhash2.shared(), kind);
        spec.layout = layout;
        if kind == TableKind::Numa {
            spec.nodes = 2;
        }
        if kind == TableKind::Private {
            spec.private_hasher = Some(jhash2_addr.shared());
        }
        let t = ModelTable::build(spec).expect("valid spec");
        configs.push((t.describe(), Some(Arc::new(t))));
    }

    // Per thread: its own 1024 words and keys (one process, distinct addresses).
    let words: Arc<Vec<Vec<AtomicU32>>> = Arc::new(
        (0..threads)
            .map(|_| (0..FUTEXES).map(|_| AtomicU32::new(0)).collect())
            .collect(),
    );
    let mm = 0xffff_8880_1234_5600u64;
    let keys: Arc<Vec<Vec<FutexKey>>> = Arc::new(
        (0..threads)
            .map(|t| {
                (0..FUTEXES)
                    .map(|i| {
                        let addr = words[t][i].as_ptr() as u64;
                        FutexKey::private(mm, addr).unwrap()
                    })
                    .collect()
            })
            .collect(),
    );

    println!("threads={threads} ops/thread={ops} runs={runs} (median ns/op/thread)");
    println!(
        "{:<44} {:>10} {:>10}",
        "backend", "wait-EAGAIN", "wake-empty"
    );
    for (name, table) in &configs {
        let mut cols = Vec::new();
        for op in [Op::Wait, Op::Wake] {
            let mut samples = Vec::new();
            for _ in 0..runs {
                let (w, k, t) = (words.clone(), keys.clone(), table.clone());
                let f: Arc<dyn Fn(usize) + Send + Sync> = Arc::new(move |i| match &t {
                    None => kernel_op(&w[i], op, ops),
                    Some(t) => model_op(t, &k[i], &w[i], op, ops),
                });
                samples.push(timed(threads, ops, f));
            }
            cols.push(median(samples));
        }
        println!("{:<44} {:>10.1} {:>10.1}", name, cols[0], cols[1]);
    }
}

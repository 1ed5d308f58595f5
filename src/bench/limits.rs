//! What a run needs, computed before it starts, against what this machine allows — so an
//! accepted request never dies half-way with an abort ("failed to allocate an alternative
//! stack", an allocation of a terabyte) but is refused up front with one line naming the
//! product and the limit.
//!
//! Per worker thread: its stack ([`super::runner::WORKER_STACK`] of address space), four
//! memory mappings (glibc's stack and its guard page, the Rust runtime's signal stack and
//! its guard page: `library/std/src/sys/pal/unix/stack_overflow.rs`), the latency
//! histogram, and F futex words plus (model) their F keys. Per model table: buckets ×
//! nodes × the bucket size of the layout (64 bytes aligned, 32 packed). The limits read
//! are `vm.max_map_count`, `kernel.threads-max`, the cgroup's `pids.max` and
//! `memory.max`, `MemAvailable`, and `RLIMIT_AS` / `RLIMIT_NPROC`; reading them is
//! [`crate::limits`], which `dist` and `keys` use too.

use super::options::BenchError;
use super::runner::WORKER_STACK;
use crate::key::FutexKey;
pub use crate::limits::{Limits, human};
use crate::table::{Aligned, Layout, Packed};

/// Memory mappings each worker thread adds (see the module doc).
pub const MAPS_PER_THREAD: u64 = 4;
/// Mappings left for everything else (libraries, heap, the progress bar...).
const MAPS_RESERVE: u64 = 2048;
/// Bytes of one thread's latency histogram (`runner::new_hist`: 1 ns .. 60 s at two
/// significant digits is about 3,600 `u64` counters), rounded up.
const HIST_BYTES: u64 = 32 * 1024;
/// Stack bytes a worker really touches, rounded up generously.
const STACK_TOUCHED: u64 = 64 * 1024;

/// Bytes of one bucket of `layout`.
pub fn bucket_bytes(layout: Layout) -> u64 {
    match layout {
        Layout::Aligned => std::mem::size_of::<Aligned>() as u64,
        Layout::Packed => std::mem::size_of::<Packed>() as u64,
    }
}

/// The resources of one run: `threads` workers with `futexes` words each (`keys`: the
/// model backend also keeps a key per word), plus `table_bytes` of model buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Worker threads.
    pub threads: u64,
    /// Futex words per thread.
    pub futexes: u64,
    /// One key per word is kept (model backend).
    pub keys: bool,
    /// Bytes of model buckets.
    pub table_bytes: u64,
}

impl Needs {
    /// Resident bytes the run needs (saturating).
    pub fn bytes(&self) -> u64 {
        let per_word = 4 + if self.keys {
            std::mem::size_of::<FutexKey>() as u64
        } else {
            0
        };
        let per_thread = self
            .futexes
            .saturating_mul(per_word)
            .saturating_add(HIST_BYTES + STACK_TOUCHED);
        self.threads
            .saturating_mul(per_thread)
            .saturating_add(self.table_bytes)
    }

    /// Address space the run reserves (stacks at full size).
    pub fn address_space(&self) -> u64 {
        self.bytes()
            .saturating_add(self.threads.saturating_mul(WORKER_STACK as u64))
    }
}

impl Limits {
    /// Refuses `needs` if it exceeds a limit: one line naming the product and the limit.
    pub fn check(&self, needs: &Needs) -> Result<(), BenchError> {
        let t = needs.threads;
        if let Some(free) = self.free_maps {
            let maps = t.saturating_mul(MAPS_PER_THREAD);
            if maps.saturating_add(MAPS_RESERVE) > free {
                let most = free.saturating_sub(MAPS_RESERVE) / MAPS_PER_THREAD;
                return Err(BenchError::usage(format!(
                    "{t} threads need {t} x {MAPS_PER_THREAD} = {maps} memory mappings (stack, \
                     guard page, signal stack and its guard each) but only {free} are left \
                     under vm.max_map_count: use at most {most} threads"
                )));
            }
        }
        if let Some((max, what)) = self.threads {
            if t > max {
                return Err(BenchError::usage(format!(
                    "{t} threads exceed {what} ({max} more threads allowed)"
                )));
            }
        }
        let bytes = needs.bytes();
        if let Some((max, what)) = self.memory {
            if bytes > max {
                return Err(BenchError::usage(format!(
                    "the run needs about {} ({t} threads x {} futexes x {} bytes + {} of \
                     buckets + stacks and histograms) but {what} allows {}",
                    human(bytes),
                    needs.futexes,
                    if needs.keys {
                        4 + std::mem::size_of::<FutexKey>()
                    } else {
                        4
                    },
                    human(needs.table_bytes),
                    human(max)
                )));
            }
        }
        if let Some(max) = self.address_space {
            let need = needs.address_space();
            if need > max {
                return Err(BenchError::usage(format!(
                    "the run reserves about {} of address space ({t} threads x {} KiB stacks \
                     + {} of data) but RLIMIT_AS (ulimit -v) is {}",
                    human(need),
                    WORKER_STACK / 1024,
                    human(bytes),
                    human(max)
                )));
            }
        }
        Ok(())
    }
}

/// [`Limits::current`]`.check(needs)`.
pub fn check(needs: &Needs) -> Result<(), BenchError> {
    Limits::current().check(needs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(threads: u64, futexes: u64, table_bytes: u64) -> Needs {
        Needs {
            threads,
            futexes,
            keys: true,
            table_bytes,
        }
    }

    #[test]
    fn each_limit_refuses_with_the_product_and_the_limit() {
        let maps = Limits {
            free_maps: Some(65_530),
            ..Limits::default()
        };
        let e = maps.check(&needs(16_384, 1, 0)).unwrap_err();
        assert!(e.usage && e.message.contains("16384 x 4 = 65536"), "{e}");
        assert!(maps.check(&needs(15_000, 1, 0)).is_ok());

        let mem = Limits {
            memory: Some((1 << 30, "MemAvailable")),
            ..Limits::default()
        };
        // 1024 nodes x 16777216 buckets x 64 bytes = 1 TiB.
        let e = mem
            .check(&needs(2, 1024, 1024 * (1 << 24) * 64))
            .unwrap_err();
        assert!(
            e.message.contains("1.0 TiB") && e.message.contains("MemAvailable"),
            "{e}"
        );
        let e = mem.check(&needs(256, 1 << 24, 0)).unwrap_err();
        assert!(e.message.contains("256 threads x 16777216 futexes"), "{e}");

        let th = Limits {
            threads: Some((100, "kernel.threads-max")),
            ..Limits::default()
        };
        assert!(
            th.check(&needs(101, 1, 0))
                .unwrap_err()
                .message
                .contains("threads-max")
        );
        let asp = Limits {
            address_space: Some(1 << 30),
            ..Limits::default()
        };
        assert!(
            asp.check(&needs(8192, 1, 0))
                .unwrap_err()
                .message
                .contains("RLIMIT_AS")
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(bucket_bytes(Layout::Aligned), 64);
        assert_eq!(human(3 << 20), "3.0 MiB");
        // 256 threads x 2^24 words x (4 + key) bytes is more than 16 GiB whatever the key.
        assert!(needs(256, 1 << 24, 0).bytes() > 16 << 30);
    }
}
